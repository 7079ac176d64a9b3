"""What a plan-aware autotuner saves: the cost of pruning a configuration by its plan against
the cost of compiling it.

    python bench/autotune_prune.py [--repeat 3]

For configurations of the GEMM tutorial's autotuning space (tutorials/hopper_gemm.py), on the
CPU and for sm_90a: the seconds ``tlx.PlanPruner.verdict`` takes (Triton's front end traces
the kernel, the planner plans its spec, ``tlx.kernel_budget`` adds up its regions) and the
seconds ``triton.compile`` takes to make its cubin, with Triton's cache off. A tuner that
compiles a configuration to learn whether it fits pays the second; ``tlx.autotune`` pays the
first, and compiles only what fits. Medians of ``--repeat`` runs.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tutorials"))
import hopper_gemm as gemm  # noqa: E402
import tlx  # noqa: E402

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
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    tensor = torch.empty(16, 16, dtype=torch.float16)
    layout = gemm._tile_layout(16)
    shapes = gemm._block_shapes(gemm.default_config())
    descriptors = {
        name: TensorDescriptor(tensor, [4096, 4096], [4096, 1], list(shape), layout)
        for name, shape in zip(("desc_a", "desc_b", "desc_c"), shapes, strict=True)
    }
    return {**descriptors, "M": 4096, "N": 4096, "K": 4096}


def seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = parser.parse_args()
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
            gemm.config_arguments(config), pre_hook=gemm._set_block_shapes
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
