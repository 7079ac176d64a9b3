"""A second opinion on the GPU: the Hopper tutorials and the Hopper seeded races under
``compute-sanitizer --tool racecheck`` and ``--tool synccheck``, next to ``tlx check``.

    PYTHONPATH=language python test/gpu/sanitize_hazards.py [--tools racecheck,synccheck] \\
        [--only NAME] [--classes] [--batch] [--jobs 8] [--sanitizer PATH] [--timeout 300]

For every case (a tutorial kernel at a tiny shape, or a seeded race of test/hazards: a
tutorial whose TTGIR loses one ordering as Triton compiles it, a small kernel of
test/hazards/kernels.py without its wait, or a racy kernel of issue 47's classes and its
twin, which ``--classes`` runs alone, or of its user's batch, which ``--batch`` runs alone)
the script runs the case once per tool in a child
process under compute-sanitizer (``--jobs`` children at once), reads the tool's summary,
checks the kernel's result (a tutorial's against torch, a small kernel's against its twin's
on the same inputs), and prints one table: what ``tlx check`` (on the CPU) and each tool
find. Needs a Hopper GPU and compute-sanitizer (PATH, $CUDA_HOME/bin, /usr/local/cuda*/bin
or --sanitizer); without them it says so and exits with 0. It is a script, not a test:
pytest does not collect it.

``--run NAME`` (what the children run) launches one case without the sanitizer.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def _hazards_module(name):
    """test/hazards/``name``.py (the corpus or its small kernels): a folder of modules beside
    the tests, not a package, loaded by its path once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REPOSITORY / "test" / "hazards" / f"{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# Tiny shapes, those the corpus checks: the sanitizers slow a kernel down by orders of
# magnitude.
SEQ_LEN = 512  # attention: one head
GEMM_SHAPE = (256, 512, 512)  # M, N, K
MLP_SHAPE = (256, 512, 512)  # tokens, d_model, hidden


def _cases():
    """{name: (what tlx check is given, how the GPU runs it)}; Hopper only."""
    corpus = _hazards_module("corpus")
    kernels = _hazards_module("kernels")

    cases = {}
    for key in corpus.TUTORIAL_KERNELS:
        if key.startswith("hopper"):
            cases[key] = {"kernel": key, "seed": None}
    for seed in corpus.SEEDS:
        if seed.kernel.startswith("hopper") and seed.runs_on_gpu:
            cases[f"seed: {seed.name}"] = {"kernel": seed.kernel, "seed": seed}
    for name, source_of, target, _ in kernels.seeds():
        if target.arch == 90:
            cases[f"seed: {name}"] = {"small": source_of, "target": target, "racy": True}
    # The corpus of issue 47's classes and the user's batch, each racy kernel and its twin
    # (Hopper ones: the tcgen05 and TMEM kernels need a Blackwell GPU).
    for module in CLASS_MODULES + BATCH_MODULES:
        loaded = _hazards_module(module)
        values = getattr(loaded, "VALUES", {})
        for name, source_of, target, _ in loaded.seeds():
            if target.arch == 90:
                for racy in (True, False):
                    label = f"{module} {'race' if racy else 'twin'}: {name}"
                    cases[label] = {
                        "small": source_of,
                        "target": target,
                        "racy": racy,
                        "values": values,
                    }
    return cases


# test/hazards' modules of issue 47's classes of races (--classes runs them alone), and of its
# batch of a demanding user's kernels (--batch runs those alone).
CLASS_MODULES = ("chunked_writes", "barrier_reinit", "partition_order", "parity_and_count")
BATCH_MODULES = ("sm90_pairs", "sm90_loops")


def _small_arguments(source, torch, values):
    """Arguments of a small corpus kernel, from its signature: a TMA descriptor over eight
    random tiles, random operands, a zeroed output, the integers ``values`` gives."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    kernels = _hazards_module("kernels")
    tile = kernels.TILE
    dtypes = {"*fp16": torch.float16, "*fp32": torch.float32}
    arguments = {}
    for name, kind in source.signature.items():
        if kind == "constexpr":
            # ASTSource keys its constants by (argument index,)
            arguments[name] = source.constants[(source.fn.arg_names.index(name),)]
        elif kind.startswith("i"):
            arguments[name] = values[name]
        elif kind.startswith("tensordesc"):
            rows = torch.randn(8 * tile, tile, device="cuda", dtype=torch.float16)
            arguments[name] = TensorDescriptor.from_tensor(
                rows, [tile, tile], kernels.TILE_LAYOUT.value
            )
        elif name == "out_ptr":
            arguments[name] = torch.zeros(16 * 128 * tile, device="cuda", dtype=dtypes[kind])
        else:
            arguments[name] = torch.randn(128 * tile, device="cuda", dtype=dtypes[kind])
    return arguments


def _run_small(case, torch) -> bool:
    """Runs a small kernel and its twin on the same inputs: whether the outputs match."""
    outputs = []
    for ordered in (True, False) if case["racy"] else (True, True):
        torch.manual_seed(0)
        source = case["small"](ordered)
        arguments = _small_arguments(source, torch, case.get("values", {}))
        source.fn[(1,)](**arguments, num_warps=4)
        torch.cuda.synchronize()
        outputs.append(arguments.get("out_ptr"))
    if outputs[0] is None:
        return True
    return torch.equal(outputs[0], outputs[1])


# --- One case on the GPU ---------------------------------------------------------------------


def _install_mutation(seed) -> None:
    """Makes Triton compile the seed's TTGIR: a stage hook mutates the TTGIR stage's output."""
    corpus = _hazards_module("corpus")
    from triton import knobs
    from triton._C.libtriton import ir

    folder = Path(tempfile.mkdtemp(prefix="tlx_seed_"))
    os.environ["TRITON_CACHE_DIR"] = str(folder / "cache")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"

    def hook(*arguments):
        if not arguments:  # Triton 3.9 asks for the hook's cache key first
            return "tlx_seed", seed.name
        stages = arguments[1]
        original = stages["ttgir"]

        def mutated(source, metadata):
            module = original(source, metadata)
            path = folder / "mutated.ttgir"
            path.write_text(corpus.mutate(module.str(), seed))
            replaced = ir.parse_mlir_module(str(path), module.context)
            replaced.context = module.context  # as triton.compile's own IR source does
            return replaced

        stages["ttgir"] = mutated

    knobs.runtime.add_stages_inspection_hook = hook


def run_case(name: str) -> int:
    """Runs case ``name`` once on the GPU; prints whether its output matches torch."""
    corpus = _hazards_module("corpus")
    import torch

    case = _cases()[name]
    torch.manual_seed(0)
    if "small" in case:
        matches = _run_small(case, torch)
    else:
        if case["seed"] is not None:
            _install_mutation(case["seed"])
        key = case["kernel"]
        if key.startswith("hopper_attention"):
            from tlx_kernels.hopper import attention

            head_dim, config = corpus.attention_config(key)
            q, k, v = (
                torch.randn(1, 1, SEQ_LEN, head_dim, device="cuda", dtype=torch.float16)
                for _ in range(3)
            )
            o = attention.attention(q, k, v, True, config=config)
            expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            matches = torch.allclose(o, expected, atol=2e-2, rtol=0)
        elif key.startswith("hopper_fused_mlp"):
            from tlx_kernels.hopper import fused_mlp as mlp

            config = corpus.fused_mlp_config(key)
            x, w1, w2 = mlp.random_inputs(*MLP_SHAPE, torch.float16)
            y = mlp.fused_mlp(x, w1, w2, config)
            matches = torch.allclose(y.float(), mlp.torch_mlp(x, w1, w2).float(), atol=5e-2)
        else:
            from tlx_kernels.hopper import gemm

            config = corpus.gemm_config(key)
            M, N, K = GEMM_SHAPE
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = torch.randn(K, N, device="cuda", dtype=torch.float16)
            c = gemm.matmul(a, b, config)
            matches = torch.allclose(c.float(), a.float() @ b.float(), atol=1e-1, rtol=1e-2)
    torch.cuda.synchronize()
    print(f"TLX-CASE-RESULT {'matches' if matches else 'differs'}")
    return 0


# --- The table ---------------------------------------------------------------------------------


def find_sanitizer(given: str | None) -> str | None:
    if given:
        return given if Path(given).is_file() else None
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    homes += sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    for home in homes:
        for candidate in (Path(home) / "bin" / "compute-sanitizer",):
            if home and candidate.is_file():
                return str(candidate)
    return None


def tlx_verdict(case) -> str:
    """What ``tlx check`` reports for the case, on the CPU pipeline."""
    corpus = _hazards_module("corpus")
    import tlx
    from tlx.hazards import check as _hazards

    if "small" in case:
        report = tlx.check_hazards(
            case["small"](not case["racy"]),
            case["target"],
            {"num_warps": 4},
            values=case.get("values", {}),
        )
    else:
        source, target, options, values = corpus.kernel(case["kernel"])
        text, plans = _hazards.kernel_ttgir(source, target, options)
        if case["seed"] is not None:
            text = corpus.mutate(text, case["seed"])
        report = _hazards.check_ttgir(text, plans, values=values)
    lines = sorted(
        {
            "/".join(str(line) for _, line in sorted(corpus.access_lines(hazard)))
            for hazard in report.hazards
        }
    )
    found = f" ({len(report.hazards)}: lines {', '.join(lines[:3])})" if report.hazards else ""
    return report.result + found


def sanitize(sanitizer: str, tool: str, name: str, timeout: int) -> tuple[str, str]:
    """(the tool's summary, the kernel's result) of case ``name`` under ``tool``."""
    command = [sanitizer, "--tool", tool, "--target-processes", "all"]
    if tool == "racecheck":
        command += ["--racecheck-report", "all"]
    command += [sys.executable, str(Path(__file__).resolve()), "--run", name]
    environment = dict(os.environ, TRITON_DEFAULT_FP_FUSION="1")
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(REPOSITORY / "language"), environment.get("PYTHONPATH", "")]
    )
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=environment
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s", "?"
    output = done.stdout + done.stderr
    result = re.search(r"TLX-CASE-RESULT (\w+)", output)
    summary = re.search(r"RACECHECK SUMMARY: (.*)", output) or re.search(
        r"ERROR SUMMARY: (.*)", output
    )
    text = summary.group(1).strip() if summary else f"no summary (exit {done.returncode})"
    if done.returncode not in (0,) and not result:
        tail = output.strip().splitlines()[-1:] or [""]
        text += f"; the case failed: {tail[0][:80]}"
    return text, result.group(1) if result else "?"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument("--tools", default="racecheck,synccheck")
    parser.add_argument(
        "--only",
        metavar="NAME",
        action="append",
        help="the cases whose name contains NAME (repeatable: any of them)",
    )
    parser.add_argument("--sanitizer", metavar="PATH", help="the compute-sanitizer to use")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per case and tool")
    parser.add_argument(
        "--classes", action="store_true", help="only the corpus of issue 47's classes"
    )
    parser.add_argument("--batch", action="store_true", help="only the user's batch of issue 47")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (one GPU)")
    arguments = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    if arguments.run:
        return run_case(arguments.run)

    cases = {
        name: case
        for name, case in _cases().items()
        if (not arguments.only or any(part in name for part in arguments.only))
        and (not arguments.classes or name.startswith(CLASS_MODULES))
        and (not arguments.batch or name.startswith(BATCH_MODULES))
    }
    tools = [tool.strip() for tool in arguments.tools.split(",") if tool.strip()]
    sanitizer = find_sanitizer(arguments.sanitizer)
    problem = None
    try:
        import torch

        if not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9):
            problem = "no Hopper (sm_90) GPU: only tlx check's column is filled"
    except ImportError:
        problem = "torch is not installed: only tlx check's column is filled"
    if sanitizer is None and problem is None:
        problem = "compute-sanitizer was not found (PATH, $CUDA_HOME/bin, /usr/local/cuda*/bin)"
    if problem:
        print(f"note: {problem}")
    else:
        print(f"compute-sanitizer: {sanitizer}")

    header = f"{'case':60} | {'tlx check':44}"
    for tool in tools:
        header += f" | {tool:40}"
    header += " | output"
    print(header)
    print("-" * len(header))

    # tlx check in this process, one case after another (Triton's front end is not made to
    # run in threads); then the sanitizer's children.
    verdicts = {name: tlx_verdict(case) for name, case in cases.items()}

    def row(item) -> str:
        name, case = item
        text = f"{name[:60]:60} | {verdicts[name][:44]:44}"
        result = "-"
        for tool in tools:
            if problem:
                summary = "not run"
            else:
                summary, result = sanitize(sanitizer, tool, name, arguments.timeout)
            text += f" | {summary[:40]:40}"
        return text + f" | {result}"

    # Each case is a child process under the sanitizer: several share the GPU at once.
    with concurrent.futures.ThreadPoolExecutor(max(1, arguments.jobs)) as pool:
        for text in pool.map(row, cases.items()):
            print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
