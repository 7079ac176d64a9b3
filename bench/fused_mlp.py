"""A fused MLP block on one Hopper GPU: the tutorial kernel in its three SMEM layouts (shared
phases, separate rings, rings laid over each other by phases) and torch; with ``--gated``, the
gated (SwiGLU) MLP against torch.

    python bench/fused_mlp.py [--runs 50] [--full | --small] [--activation gelu|relu]
                              [--no-split-hidden] [--dtype fp16|bf16] [--tokens N ...]
    python bench/fused_mlp.py --gated [--full] [--d-model 4096|2048] [--runs 50]

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
/ max |reference| over the three fused layouts; chosen: each layout's tuned configuration.
The tuners' spaces hold the splits of each tile's hidden dimension among several CTAs
(``autotuned_fused_mlp``'s default, timed where the row blocks leave SMs idle; chosen shows
``hidden_splits=S``); ``--no-split-hidden`` leaves them out (``split_hidden=False``).

Default rows (fp16): tokens x d_model = 4096 x 1024, 16384 x 2048, 8192 x 4096; ``--full``: tokens
4096, 8192, 16384 x d_model 1024, 2048, 4096, fp16 and bf16; ``--small``: where fusion pays,
d_model 128 and 256 (a row block of Y is one tile: H computed once per row block, never in
global memory) x tokens 4096, 16384, 65536, 262144, fp16 and bf16. ``--dtype`` and ``--tokens``
keep the rows of one dtype and of the token counts given.

``--gated``: Y = (silu(X W_gate) * (X W_up)) W_down at LLM shapes, tokens 512 to 8192 x (d_model,
hidden) = (4096, 14336) and (2048, 8192) (``--d-model`` keeps one), fp16 (``--full``: and bf16),
three contenders for the whole MLP and the same three for its first half, H = silu(X W_gate) *
(X W_up), in one process:

* ours: ``tlx_kernels.hopper.gated_mlp.autotuned_gated_up`` (one kernel: each X tile loaded
  once for the gate's and the up projection's products, the activation and the product in its
  epilogue), then the tuned GEMM (``tlx_kernels.matmul``) for the down projection;
* torch: ``x @ w_gate`` and ``x @ w_up`` (two cuBLAS GEMMs), silu, the product, ``@ w_down``;
* concat: one cuBLAS GEMM on the concatenated ``[w_gate | w_up]`` (made once, outside the
  timing), silu of its first half times its second, ``@ w_down``.

Each is timed as GPU time and as called (ms); ``torch/`` and ``cat/`` are torch's and concat's
time over ours (above 1: ours is faster). The error is max |out - fp32 reference| / max
|reference| of ours, for the whole MLP and for H; chosen: the gated kernel's configuration and
the down GEMM's.
"""

import argparse
import functools
import sys

import torch
from gpu_timing import called_ms, host_us, median_ms, print_header
from tlx_kernels.hopper import fused_mlp as mlp
from tlx_kernels.hopper import gated_mlp, gemm

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
# The gated MLP at LLM shapes: (d_model, hidden) of a Llama-3-8B-like and a smaller layer.
GATED_LAYERS = ((4096, 14336), (2048, 8192))
GATED_TOKENS = (512, 1024, 2048, 4096, 8192)


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
    parser.add_argument(
        "--dtype", choices=sorted(DTYPES), help="only the rows of this dtype (default: all)"
    )
    parser.add_argument(
        "--tokens", type=int, nargs="+", help="only the rows of these token counts (default: all)"
    )
    parser.add_argument("--activation", choices=mlp.ACTIVATIONS, default="gelu")
    parser.add_argument(
        "--no-split-hidden",
        action="store_true",
        help="leave the splits of the hidden dimension out of the tuners' spaces",
    )
    parser.add_argument(
        "--gated", action="store_true", help="the gated (SwiGLU) MLP at LLM shapes against torch"
    )
    parser.add_argument(
        "--d-model",
        type=int,
        choices=[d_model for d_model, _ in GATED_LAYERS],
        help="with --gated: only the layer of this d_model",
    )
    args = parser.parse_args()
    if args.runs < 20:
        parser.error("--runs must be at least 20")
    if args.gated and args.small:
        parser.error("--small is a shape set of the ungated kernel: not with --gated")
    if args.d_model is not None and not args.gated:
        parser.error("--d-model selects a layer of --gated")
    if args.gated and (args.dtype or args.tokens):
        parser.error("--dtype and --tokens select rows of the ungated kernel: not with --gated")
    if args.gated and args.no_split_hidden:
        parser.error("--no-split-hidden is a space of the ungated kernel: not with --gated")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        sys.exit(
            "bench/fused_mlp.py needs a Hopper GPU (compute capability 9.x) and found none: the "
            "kernel is compiled for sm_90a. python tutorials/hopper_fused_mlp.py shows its SMEM "
            "plans without a GPU."
        )
    if args.gated:
        run_gated(args)
    else:
        run_layouts(args)


def run_layouts(args):
    """The three layouts of the ungated kernel and torch, a row per shape."""
    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {mlp.triton.__version__}, activation {args.activation}, median of {args.runs} "
        "runs; TFLOP/s of 4 * tokens * d_model * hidden"
        + ("; the spaces without splits of the hidden dimension" if args.no_split_hidden else "")
    )
    names = f"{'shared':>6} {'separ.':>6} {'phases':>6} {'torch':>6}"
    header = (
        f"{'dtype':>5} {'tokens':>6} {'d_model':>7} | GPU: {names} {'sh/sep':>6} {'ph/sep':>6} | "
        f"called: {names} | host us: {names} | {'rel err':>7} | chosen"
    )
    print_header(header)
    activation = args.activation
    rows = [
        (dtype, tokens, d_model)
        for dtype, tokens, d_model in (
            SMALL_ROWS if args.small else FULL_ROWS if args.full else DEFAULT_ROWS
        )
        if args.dtype in (None, dtype) and (args.tokens is None or tokens in args.tokens)
    ]
    for dtype_name, tokens, d_model in rows:
        dtype = DTYPES[dtype_name]
        hidden = 4 * d_model
        x, w1, w2 = mlp.random_inputs(tokens, d_model, hidden, dtype)
        calls = [
            functools.partial(
                mlp.autotuned_fused_mlp, x, w1, w2, layout, activation, not args.no_split_hidden
            )
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


def gated_rows(full, d_model=None):
    """(dtype, tokens, d_model, hidden) of the ``--gated`` rows."""
    return [
        (dtype, tokens, layer_d_model, hidden)
        for dtype in (DTYPES if full else ["fp16"])
        for layer_d_model, hidden in GATED_LAYERS
        if d_model in (None, layer_d_model)
        for tokens in GATED_TOKENS
    ]


def gated_contenders(x, w_gate, w_up, w_down):
    """(whole MLP: ours, torch, concat; first half: ours, torch, concat), each a call."""
    w_gate_up = gated_mlp.concatenated_weights(w_gate, w_up)
    silu = torch.nn.functional.silu

    def torch_half():
        return silu(x @ w_gate) * (x @ w_up)

    def concat_half():
        gate, up = (x @ w_gate_up).chunk(2, dim=1)
        return silu(gate) * up

    return (
        functools.partial(gated_mlp.autotuned_gated_mlp, x, w_gate, w_up, w_down),
        functools.partial(gated_mlp.torch_gated_mlp, x, w_gate, w_up, w_down),
        functools.partial(gated_mlp.torch_concatenated_gated_mlp, x, w_gate_up, w_down),
        functools.partial(gated_mlp.autotuned_gated_up, x, w_gate, w_up),
        torch_half,
        concat_half,
    )


def _times(ms):
    """Three contenders' milliseconds, then torch's and concat's over ours."""
    ours, torch_ms, concat = ms
    return (
        " ".join(f"{value:7.3f}" for value in ms) + f" {torch_ms / ours:6.3f} {concat / ours:6.3f}"
    )


def run_gated(args):
    """The gated MLP and its first half, ours against torch and concat, a row per shape."""
    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {mlp.triton.__version__}, median of {args.runs} runs; ms, and torch's and "
        "concat's time over ours"
    )
    names = f"{'ours':>7} {'torch':>7} {'concat':>7} {'torch/':>6} {'cat/':>6}"
    print_header(
        f"{'dtype':>5} {'tokens':>6} {'d_model':>7} {'hidden':>6} | MLP GPU: {names} | "
        f"MLP called: {names} | H GPU: {names} | H called: {names} | {'err Y':>7} {'err H':>7} "
        "| chosen: gated; down"
    )
    for dtype_name, tokens, d_model, hidden in gated_rows(args.full, args.d_model):
        dtype = DTYPES[dtype_name]
        x, w_gate, w_up, w_down = gated_mlp.random_inputs(tokens, d_model, hidden, dtype)
        calls = gated_contenders(x, w_gate, w_up, w_down)
        # The first calls tune the gated kernel and the down GEMM for the shape.
        expected = gated_mlp.reference_gated_mlp(x, w_gate, w_up, w_down)
        error_y = relative_error(calls[0](), expected)
        expected = gated_mlp.reference_gated_up(x, w_gate, w_up)
        error_h = relative_error(calls[3](), expected)
        del expected
        gpu = median_ms(calls, args.runs)
        called = [called_ms(call) for call in calls]
        chosen = f"{gated_mlp.chosen_config(dtype)}; {gemm.chosen_config(dtype)}"
        print(
            f"{dtype_name:>5} {tokens:>6} {d_model:>7} {hidden:>6} | MLP GPU: {_times(gpu[:3])} | "
            f"MLP called: {_times(called[:3])} | H GPU: {_times(gpu[3:])} | "
            f"H called: {_times(called[3:])} | {error_y:7.1e} {error_h:7.1e} | {chosen}",
            flush=True,
        )
    print(
        "ours = the gated kernel (X loaded once for both products, silu * up in its epilogue) "
        "then the tuned GEMM; torch = two cuBLAS GEMMs, silu, mul, the down GEMM; concat = one "
        "cuBLAS GEMM on [w_gate | w_up], silu * up, the down GEMM; H = the first half alone."
    )


if __name__ == "__main__":
    main()
