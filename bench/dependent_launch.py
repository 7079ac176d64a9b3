"""What programmatic dependent launch buys the Hopper GEMM: the configuration the tuner chooses
for each shape, launched with it (Triton's ``launch_pdl``: the kernel may start while the grid
before it in the stream still runs, and waits for that grid's writes before it reads A or B,
tlx_kernels.hopper.gemm_kernel) and without it, against cuBLAS (torch.matmul), in one run.

    PYTHONPATH=language python bench/dependent_launch.py [--rows MxNxK,...]
        [--dtype fp16|bf16 ...] [--runs 100]

A call meets the grid before it three ways, each timed round-robin over the three contenders
on fresh random inputs:

* GPU: one call queued behind a GPU sleep, between CUDA events (bench/gpu_timing.py): the
  grid before it is the sleep;
* called: as a user calls it (``triton.testing.do_bench``): the grid before it clears the L2;
* chain: CHAIN_CALLS calls back to back between two events, a call's share: the grid before
  each is the call before, as in a model's layers, where a dependent launch lets a call's
  start overlap the last one's end.

Each row gives microseconds a call, the gain of the dependent launch (without / with) in each
way, the error of both launches against an fp32 product, and the configuration chosen.
"""

import argparse
import functools

import torch
import triton
from gpu_timing import called_ms, median_ms, print_header
from tlx_kernels.hopper import gemm

# The rows of issue 49 where the GEMM's fixed cost weighs most (few tiles, short K loops),
# and one where it weighs least.
SHAPES = [
    (1536, 1536, 1536),
    (128, 4096, 4096),
    (512, 1024, 4096),
    (2048, 512, 8192),
    (1024, 1024, 1024),
    (4096, 4096, 4096),
]
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# Calls a chain times back to back.
CHAIN_CALLS = 20


def shape_of(text):
    """(M, N, K) of "MxNxK"."""
    sizes = tuple(int(size) for size in text.lower().split("x"))
    if len(sizes) != 3 or min(sizes) < 1:
        raise ValueError(f"{text!r}: a shape is MxNxK, three positive sizes")
    return sizes


def relative_error(out, expected):
    """max |out - expected| / max |expected|."""
    return ((out.float() - expected).abs().max() / expected.abs().max()).item()


def launches(config, dtype_name, a, b):
    """(the launch of ``config``'s kernel with programmatic dependent launch, without it),
    each a function of (a, b, c) and (M, N, K)."""
    source = gemm.kernel_source(config, dtype_name)
    return [
        gemm.compiled_launch(
            triton.compile(
                source, target=gemm.SM90A, options={**config.compile_options, "launch_pdl": pdl}
            ),
            a,
            b,
            config,
        )
        for pdl in (True, False)
    ]


def chained(call):
    """``call`` CHAIN_CALLS times back to back."""
    for _ in range(CHAIN_CALLS):
        call()


def row(shape, dtype_name, runs):
    """Times the dependent launch, the plain one and cuBLAS at one shape (module's doc)."""
    M, N, K = shape
    dtype = DTYPES[dtype_name]
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    gemm.autotuned_matmul(a, b)  # tunes the shape's key
    config = gemm.chosen_config(dtype)
    outputs = [torch.full((M, N), float("nan"), device="cuda", dtype=dtype) for _ in range(2)]
    calls = [
        functools.partial(launch, (a, b, c), (M, N, K))
        for launch, c in zip(launches(config, dtype_name, a, b), outputs, strict=True)
    ]
    calls.append(
        functools.partial(torch.matmul, a, b, out=torch.empty(M, N, device="cuda", dtype=dtype))
    )
    for call in calls[:2]:
        chained(call)
    expected = a.float() @ b.float()
    error = max(relative_error(c, expected) for c in outputs)
    del expected
    gpu = median_ms(calls, runs)
    called = [called_ms(call) for call in calls]
    chain = [
        ms / CHAIN_CALLS for ms in median_ms([functools.partial(chained, c) for c in calls], runs)
    ]
    columns = []
    for times in (gpu, called, chain):
        pdl, plain, cublas = (ms * 1e3 for ms in times)
        columns.append(f"{pdl:7.2f} {plain:7.2f} {cublas:7.2f} {plain / pdl:5.3f}")
    print(
        f"{M:>5} {N:>5} {K:>5} {dtype_name:>5} | "
        + " | ".join(columns)
        + f" | {error:7.1e} | {config}",
        flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=None, help="shapes MxNxK, comma-separated")
    parser.add_argument("--dtype", nargs="+", default=["fp16"], choices=list(DTYPES))
    parser.add_argument("--runs", type=int, default=100, help="timed runs per measurement")
    args = parser.parse_args()
    try:
        shapes = [shape_of(text) for text in args.rows.split(",")] if args.rows else SHAPES
    except ValueError as error:
        parser.error(str(error))
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        raise SystemExit("bench/dependent_launch.py needs a Hopper GPU (compute capability 9.x)")
    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {triton.__version__}, median of {args.runs} runs"
    )
    ways = " | ".join(
        f"{way}: {'pdl':>7} {'plain':>7} {'cuBLAS':>7} {'gain':>5}"
        for way in ("GPU us", "called us", "chain us")
    )
    print_header(f"{'M':>5} {'N':>5} {'K':>5} {'dtype':>5} | {ways} | rel err | chosen")
    for dtype_name in args.dtype:
        for shape in shapes:
            row(shape, dtype_name, args.runs)
    print(
        "us a call; pdl: launched with programmatic dependent launch, plain: without; gain = "
        f"plain / pdl; chain: {CHAIN_CALLS} calls back to back, a call's share."
    )


if __name__ == "__main__":
    main()
