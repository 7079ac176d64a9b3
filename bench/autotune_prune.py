"""What a plan-aware autotuner saves: the cost of pruning a configuration by its plan against
the cost of compiling it.

    python bench/autotune_prune.py [--repeat 3]

For configurations of the GEMM tutorial's autotuning space (tutorials/hopper_gemm.py), on the
CPU and for sm_90a: the seconds ``tlx.PlanPruner.verdict`` takes (Triton's front end traces
the kernel, the planner plans its spec, ``tlx.kernel_budget`` adds up its regions) and the
seconds ``triton.compile`` takes to make its cubin, with Triton's cache off. A tuner that
compiles a configuration to learn whether it fits pays the second; ``tlx.autotune`` pays the
first, and compiles only what fits. Medians of ``--repeat`` runs.

    python bench/autotune_prune.py --first-call [--size 2048]     (needs a Hopper GPU)

What a user waits for on the first call of a key: ``autotuned_matmul``'s tuner at size cubed
in fp16, every configuration the plans keep compiled and timed, then retimed (tlx.autotune's
survey and finalists). Three ways: each configuration compiled when the autotuner first times
it (``compile_workers=1``, as ``triton.autotune`` does) and timed by ``do_bench``; compiled
ahead on one thread per CPU (``tlx.autotune``'s default) and timed by ``do_bench``; compiled
ahead and screened (``retime.screen``, tlx.autotune's default). Each is a fresh process with
an empty Triton cache (cold), then another with the cache it left (compiled).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import tlx
import torch
import triton
from tlx_kernels.hopper import gemm

# A fitting configuration of each kind, and two the planner prunes.
CONFIGS = [
    gemm.Config(128, 256, 64, 4, alias_c=True),
    gemm.Config(128, 128, 64, 6, alias_c=False),
    gemm.Config(128, 256, 64, 3, alias_c=False, persistent=True),
    gemm.Config(128, 256, 64, 4, alias_c=False),
    gemm.Config(128, 256, 64, 6, alias_c=True),
]


def arguments():
    """The tutorial's kernel arguments for a 4096 cubed fp16 product (descriptors of a small
    host tensor: only their types matter to the front end)."""
    return gemm.placeholder_arguments("fp16")


def seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# How the autotuner times each configuration before the retiming: ``do_bench`` (Triton's
# default) or tlx.autotune's screening.
TIMINGS = {
    "do_bench": {
        "do_bench": lambda call, quantiles: triton.testing.do_bench(call, quantiles=quantiles)
    },
    "screen": {},
}


def first_call(size, workers, timing):
    """The first tuned call of a size-cubed fp16 product with ``compile_workers=workers``,
    each configuration timed as ``timing`` (a key of ``TIMINGS``) says: (seconds in all,
    seconds compiling ahead, configurations timed, the one chosen)."""
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    tuner = tlx.autotune(
        configs=gemm.autotune_configs(),
        key=["M", "N", "K"],
        prune_configs_by={"early_config_prune": gemm.prune_by_shape},
        compile_workers=workers,
        **TIMINGS[timing],
    )(gemm.gemm_kernel)
    _, arguments = gemm.tuner_arguments(a, b)
    start = time.perf_counter()
    tuner[gemm.tuner_grid](*arguments)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    timed = len(tuner.configs) - sum(len(pruned) for pruned in tuner.pruned.values())
    ahead = sum(tuner.compile_seconds.values())
    return elapsed, ahead, timed, repr(gemm.config_of(tuner.best_config))


def print_first_calls(size):
    print(f"triton {triton.__version__}, {torch.cuda.get_device_name()}, {size}^3 fp16")
    columns = ("compile_workers", "timing", "cache", "first call s", "compiling ahead s", "timed")
    header = " ".join(f"{name:>{len(name)}}" for name in columns) + "  chosen"
    print(header)
    print("-" * len(header))
    for workers, timing in (
        (1, "do_bench"),
        (os.cpu_count() or 1, "do_bench"),
        (os.cpu_count() or 1, "screen"),
    ):
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "compiled"):
                run = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--first-call-worker",
                        str(workers),
                        timing,
                        "--size",
                        str(size),
                    ],
                    env={**os.environ, "TRITON_CACHE_DIR": cache},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                elapsed, ahead, timed, chosen = json.loads(run.stdout.splitlines()[-1])
                print(
                    f"{workers:>15} {timing:>8} {state:>8} {elapsed:12.1f} {ahead:17.1f} "
                    f"{timed:>5}  {chosen}",
                    flush=True,
                )
    print(
        "first call s: tuning one key (compile, time and retime every configuration the plans "
        "keep); compiling ahead s: of which tlx.autotune's compilation on several threads."
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument(
        "--first-call", action="store_true", help="first tuned call, compiled ahead or not (GPU)"
    )
    parser.add_argument("--first-call-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=2048, help="--first-call: M = N = K")
    args = parser.parse_args()
    if args.first_call_worker is not None:
        workers, timing = args.first_call_worker
        print(json.dumps(first_call(args.size, int(workers), timing)))
        return
    if args.first_call:
        print_first_calls(args.size)
        return
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    print(f"triton {triton.__version__}, sm_90a, median of {args.repeat} runs")
    width = max(len(repr(config)) for config in CONFIGS)
    header = (
        f"{'configuration':<{width}} {'verdict':>7} {'prune s':>8} {'compile s':>9} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for config in CONFIGS:
        triton_config = triton.Config(
            config.kernel_arguments(), pre_hook=gemm.HOST.set_block_shapes
        )

        def verdict(triton_config=triton_config):
            # A fresh pruner each time: its verdicts are cached.
            return tlx.PlanPruner(gemm.gemm_kernel, target=gemm.SM90A).verdict(
                triton_config, arguments()
            )

        fits = verdict().fits
        prune = seconds(verdict, args.repeat)
        if fits:
            compile_seconds = seconds(lambda config=config: gemm.compile_for_hopper(config), 1)
            outcome = "fits"
        else:
            # Compiling it stops where tracing does, with the planner's error.
            compile_seconds = seconds(lambda config=config: _compile_error(config), args.repeat)
            outcome = "pruned"
        print(
            f"{config!r:<{width}} {outcome:>7} {prune:8.3f} {compile_seconds:9.2f} "
            f"{compile_seconds / prune:6.0f}",
            flush=True,
        )
    print(
        "prune s: tlx.PlanPruner.verdict (front end + planner + budget); compile s: "
        "triton.compile to cubin (for a pruned configuration, until its error)."
    )


def _compile_error(config):
    try:
        gemm.compile_for_hopper(config)
    except triton.compiler.errors.CompilationError:
        return
    raise AssertionError(f"{config} compiled although the planner prunes it")


if __name__ == "__main__":
    main()
