"""Every configuration the GEMM's tuner times at a shape, with the L2 warm and cold, against
cuBLAS.

    python bench/gemm_configs.py [--rows 2048x512x8192,...] [--dtype fp16|bf16|both]
                                 [--runs 50] [--best 12]

Why a row of the grid loses as a user calls it where it holds in GPU time (bench/gemm.py
``--grid``): ``do_bench`` clears the L2 before each call, so a call reads its operands from
DRAM, and the tuner, which times the same way (tlx.tuning.retime), picks from its space the
configuration fastest cold. Here each configuration ``gemm.shape_configs`` keeps at the row's
shape, and the probes (``PROBES``: configurations outside the tuner's space, the planner and
the Config's checks deciding which build), is timed round-robin with cuBLAS in GPU time
(bench/gpu_timing.py), once with the L2 warm and once cleared before every call as
``do_bench`` clears it (``gpu_timing.l2_clearer``). Rows (``--rows``, default 2048 x 512 x
8192) as for bench/gemm.py ``--grid``. Each row first prints the tuner's choice and the
seconds of its first call, and the kernels cuBLAS runs (torch's profiler); then the ``--best``
configurations fastest cold, each with its warm and cold microseconds, their ratios to
cuBLAS's (cuBLAS's time over ours: above 1 is faster than cuBLAS) and its error against an
fp32 product.
"""

import argparse
import functools
import statistics
import sys
import time

import torch
from gemm import DTYPES, grid_rows, relative_error
from gpu_timing import kernel_us, l2_clearer, median_ms, print_header
from tlx_kernels._host import sm_count
from tlx_kernels.hopper import gemm

Config = gemm.Config
# Configurations outside the tuner's space that a product of few tiles might want cold: K
# steps of 128 (half the barrier waits a byte, as the 64-row tiles' deep rings,
# docs/performance.md "Deep rings for a cold L2") for the split-K and 128 x 64 tiles, and the
# 64 x 64 tiles of one warpgroup where the tuner leaves them out (``gemm.SKINNY_TILES``).
PROBES = (
    Config(128, 128, 128, 3, alias_c=True, split_k=2),
    Config(128, 128, 128, 3, alias_c=True, split_k=4),
    Config(128, 256, 128, 2, alias_c=True, split_k=4),
    Config(128, 64, 128, 4, alias_c=True),
    Config(128, 64, 128, 3, alias_c=False, persistent=True),
    Config(64, 64, 128, 7, alias_c=True, warp_specialize=False),
    Config(64, 64, 128, 7, alias_c=True, warp_specialize=False, split_k=2),
)


def probes_at(M, N, K, sms, kept):
    """The ``PROBES`` not among ``kept`` whose splits each keep ``gemm.SPLIT_K_MIN_STEPS`` K
    steps."""
    return [
        config
        for config in PROBES
        if config not in kept and -(-K // config.block_k) >= gemm.SPLIT_K_MIN_STEPS * config.split_k
    ]


def row(M, N, K, dtype_name, runs, best):
    """One shape's table (see the module's doc)."""
    dtype = DTYPES[dtype_name]
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    expected = a.float() @ b.float()
    start = time.perf_counter()
    gemm.autotuned_matmul(a, b)
    torch.cuda.synchronize()
    tune_s = time.perf_counter() - start
    chosen = gemm.chosen_config(dtype)
    sms = sm_count(a.device)
    kept = gemm.shape_configs(M, N, K, sms)
    configs, refused = [], []
    for config in kept + probes_at(M, N, K, sms, kept):
        try:
            error = relative_error(gemm.matmul(a, b, config), expected)
        except Exception as failure:  # a probe the planner or Triton refuses: say why
            refused.append((config, str(failure).strip().splitlines()[-1][:200]))
            continue
        configs.append((config, error))
    cublas = functools.partial(torch.matmul, a, b)
    calls = [functools.partial(gemm.matmul, a, b, config) for config, _ in configs] + [cublas]
    warm = [ms * 1e3 for ms in median_ms(calls, runs)]
    cold = [ms * 1e3 for ms in median_ms(calls, runs, before=l2_clearer())]
    kernels = ", ".join(f"{name} {us:.1f} us" for name, us in kernel_us(cublas, 20).items())
    print(
        f"\n{M} x {N} x {K} {dtype_name}: tuned in {tune_s:.1f} s to {chosen}; cuBLAS "
        f"{warm[-1]:.2f} us warm, {cold[-1]:.2f} cold ({kernels})"
    )
    header = (
        f"{'us: warm':>8} {'cold':>7} | cuBLAS/ours: {'warm':>5} {'cold':>5} | {'rel err':>7} | "
        "configuration"
    )
    print_header(header)
    order = sorted(range(len(configs)), key=lambda i: cold[i])
    for i in order[:best]:
        config, error = configs[i]
        marks = (" (tuned)" if config == chosen else "") + (
            " (probe)" if config not in kept else ""
        )
        print(
            f"{warm[i]:8.2f} {cold[i]:7.2f} | {'':12} {warm[-1] / warm[i]:5.3f} "
            f"{cold[-1] / cold[i]:5.3f} | {error:7.1e} | {config}{marks}",
            flush=True,
        )
    ours = [cold[i] for i in range(len(configs))]
    print(
        f"{len(configs)} configurations timed ({len(kept)} the tuner's); cold: median "
        f"{statistics.median(ours):.2f} us, best {min(ours):.2f}"
    )
    if refused:
        print(f"{len(refused)} not built, e.g. {refused[0][0]}: {refused[0][1]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="2048x512x8192", help="as bench/gemm.py --grid's")
    parser.add_argument("--dtype", choices=("fp16", "bf16", "both"), default="both")
    parser.add_argument("--runs", type=int, default=50, help="timed runs per measurement")
    parser.add_argument("--best", type=int, default=12, help="configurations printed a row")
    args = parser.parse_args()
    try:
        rows = grid_rows(args.rows)
    except ValueError as error:
        parser.error(str(error))
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        sys.exit("bench/gemm_configs.py needs a Hopper GPU (compute capability 9.x)")
    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {gemm.triton.__version__}, median of {args.runs} runs; us of GPU time"
    )
    dtypes = list(DTYPES) if args.dtype == "both" else [args.dtype]
    for dtype_name in dtypes:
        for M, N, K in rows:
            torch.manual_seed(0)
            row(M, N, K, dtype_name, args.runs, args.best)


if __name__ == "__main__":
    main()
