"""A fused MLP block on one Hopper GPU: the tutorial kernel in its three SMEM layouts (shared
phases, separate rings, rings laid over each other by phases) and torch.

    python bench/fused_mlp.py [--runs 50] [--full | --small] [--activation gelu|relu]

Y = act(X @ W1) @ W2 with X [tokens, d_model], hidden = 4 x d_model, on fresh random inputs per
row (N(0, 1) activations, weights scaled by 1 / sqrt(fan-in)), four contenders in one process:

* shared: tutorials/hopper_fused_mlp.py with the phase-1 and phase-2 steps in one ring of stages
  (``layout="shared"``), autotuned (tlx.autotune) over its space;
* separate: the same kernel, each phase with a ring of its own (``layout="separate"``),
  autotuned over its space, whose configurations are the most stages that fit without sharing;
* phases: the same two rings planned one per phase (``layout="phases"``, ``tlx.reuse_phases``):
  the W2 ring lies over the X/W1 ring's bytes and the loader drains the ring at each change of
  phase, so the X/W1 ring is deeper than separate's; autotuned over its space;
* torch: ``x @ w1``, the activation, ``@ w2`` (two cuBLAS GEMMs and an elementwise kernel).

TFLOP/s count the useful 4 * tokens * d_model * hidden FLOPs (the fused kernel computes more:
the hidden block again for each tile of Y's columns, see the tutorial's doc). GPU: the median of
``--runs`` calls timed with CUDA events behind a GPU sleep, the contenders round-robin
(bench/gpu_timing.py); called: as a user calls it (``triton.testing.do_bench``, launch
included); host us: the host's microseconds per call. The error is max |out - fp32 reference|
/ max |reference| over the three fused layouts.

Default rows (fp16): tokens x d_model = 4096 x 1024, 16384 x 2048, 8192 x 4096; ``--full``: tokens
4096, 8192, 16384 x d_model 1024, 2048, 4096, fp16 and bf16; ``--small``: where fusion pays,
d_model 128 and 256 (a row block of Y is one tile: H computed once per row block, never in
global memory) x tokens 4096, 16384, 65536, 262144, fp16 and bf16.
"""

import argparse
import functools
import sys

import torch
from gpu_timing import called_ms, host_us, median_ms, print_header
from tlx_kernels.hopper import fused_mlp as mlp

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
DEFAULT_ROWS = [("fp16", 4096, 1024), ("fp16", 16384, 2048), ("fp16", 8192, 4096)]
FULL_ROWS = [
    (dtype, tokens, d_model)
    for dtype in DTYPES
    for tokens in (4096, 8192, 16384)
    for d_model in (1024, 2048, 4096)
]
# Where fusion pays: a row block of Y is one tile (d_model <= BLOCK_N = 256), so each CTA
# computes its block of H once and H never leaves the chip.
SMALL_ROWS = [
    (dtype, tokens, d_model)
    for dtype in DTYPES
    for d_model in (128, 256)
    for tokens in (4096, 16384, 65536, 262144)
]
# Host time per call: few calls, a large row runs for tens of milliseconds a call.
HOST_CALLS = 20


def tflops(tokens, d_model, hidden, ms):
    return 4.0 * tokens * d_model * hidden / (ms * 1e-3) / 1e12


def relative_error(out, expected):
    return ((out.float() - expected).abs().max() / expected.abs().max()).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="timed runs per measurement")
    parser.add_argument("--full", action="store_true", help="every shape, fp16 and bf16")
    parser.add_argument(
        "--small", action="store_true", help="d_model 128 and 256, tokens 4k to 256k (no recompute)"
    )
    parser.add_argument("--activation", choices=mlp.ACTIVATIONS, default="gelu")
    args = parser.parse_args()
    if args.runs < 20:
        parser.error("--runs must be at least 20")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        sys.exit(
            "bench/fused_mlp.py needs a Hopper GPU (compute capability 9.x) and found none: the "
            "kernel is compiled for sm_90a. python tutorials/hopper_fused_mlp.py shows its SMEM "
            "plans without a GPU."
        )

    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {mlp.triton.__version__}, activation {args.activation}, median of {args.runs} "
        "runs; TFLOP/s of 4 * tokens * d_model * hidden"
    )
    names = f"{'shared':>6} {'separ.':>6} {'phases':>6} {'torch':>6}"
    header = (
        f"{'dtype':>5} {'tokens':>6} {'d_model':>7} | GPU: {names} {'sh/sep':>6} {'ph/sep':>6} | "
        f"called: {names} | host us: {names} | {'rel err':>7} | chosen"
    )
    print_header(header)
    activation = args.activation
    rows = SMALL_ROWS if args.small else FULL_ROWS if args.full else DEFAULT_ROWS
    for dtype_name, tokens, d_model in rows:
        dtype = DTYPES[dtype_name]
        hidden = 4 * d_model
        x, w1, w2 = mlp.random_inputs(tokens, d_model, hidden, dtype)
        calls = [
            functools.partial(mlp.autotuned_fused_mlp, x, w1, w2, layout, activation)
            for layout in mlp.LAYOUTS
        ]
        calls.append(functools.partial(mlp.torch_mlp, x, w1, w2, activation))
        # The first call of each layout tunes it for the shape.
        expected = mlp.reference_mlp(x, w1, w2, activation)
        error = max(relative_error(call(), expected) for call in calls[: len(mlp.LAYOUTS)])
        del expected
        gpu = [tflops(tokens, d_model, hidden, ms) for ms in median_ms(calls, args.runs)]
        called = [tflops(tokens, d_model, hidden, called_ms(call)) for call in calls]
        host = [host_us(call, HOST_CALLS) for call in calls]
        chosen = "; ".join(str(mlp.chosen_config(dtype, layout)) for layout in mlp.LAYOUTS)
        shared, separate, phases = gpu[:3]
        print(
            f"{dtype_name:>5} {tokens:>6} {d_model:>7} | GPU: "
            + " ".join(f"{value:6.1f}" for value in gpu)
            + f" {shared / separate:6.2f} {phases / separate:6.2f} | called: "
            + " ".join(f"{value:6.1f}" for value in called)
            + " | host us: "
            + " ".join(f"{value:6.1f}" for value in host)
            + f" | {error:7.1e} | {chosen}",
            flush=True,
        )
    print(
        "shared = one ring for both phases' steps (tlx overlap tree, tutorials/"
        "hopper_fused_mlp.py); separate = a ring per phase, the most stages that fit; "
        "phases = the two rings laid over each other (tlx.reuse_phases), drained at each change "
        "of phase; sh/sep, ph/sep = shared, phases / separate in GPU time."
    )


if __name__ == "__main__":
    main()
