"""Flash Attention forward on one Hopper GPU: the tutorial kernel vs. torch SDPA.

    python bench/flash_attention.py [--sweep] [--head-dim 64|128] [--runs 100]
    python bench/flash_attention.py --grid [--dtype fp16|bf16] [--head-dim 64|128]
        [--mask causal|none] [--seq-len N ...] [--tokens 32768] [--runs 100]
    python bench/flash_attention.py --tile-cost [--runs 100]
    python bench/flash_attention.py --tunings [--runs 100]

For every shape (B, H, N, D) in fp16, causal and non-causal, in one process on one GPU:
the tutorial kernel with SMEM aliasing (its default configuration), the best configuration of
the same kernel that fits without aliasing, torch SDPA with the flash backend and with the cuDNN
backend. TFLOP/s = 4*B*H*N*N*D (halved when causal) / median time of `--runs` timed calls after
warm-up, each call timed with CUDA events; the contenders of a row are timed round-robin, one
call each in turn. Each timed call is queued behind a GPU sleep, so the events time the GPU's
work, not the host's launch overhead (bench/gpu_timing.py). `--sweep` also times every
configuration the kernel offers, to choose the defaults.

`--grid` times the autotuned kernel (``autotuned_attention``: tlx.autotune, keyed on the
shape and mask, one tuner per dtype and head dim) against cuDNN over N in 512 ... 16384 at
B x N = 32768 tokens, H = 16, D in {64, 128}, causal and not, fp16 and bf16, on fresh random
inputs per row: GPU time as above, and the time as a user calls it (`triton.testing.do_bench`,
launch included); each row prints the configuration the tuner chose. `--seq-len` keeps the
rows of the N given, and `--tokens` sets B x N (B = tokens // N): at B = 66 and N = 512 the
grid's 128-row tiles (16 heads x 4 a head x B) are 32 for each of an H100's or H200's 132 SMs,
where the grid's B = 64 leaves 4 over 31 rounds.

`--tile-cost` says why the short rows of the grid trail cuDNN: at a fixed number of tokens
(B x N = 32768, H = 16, no mask, fp16) the work of a row is a fixed number of Q tiles, each
visiting N / BLOCK_N key blocks, so its GPU time is close to a line in N, t(N) = fixed +
slope x N. The intercept is what every tile pays whatever its length (loading Q, the
epilogue, moving to the next tile), the slope what each key costs. Fitted by least squares
over the short rows (N = 512 to 2048, where the grid's rows trail; at longer N cuDNN's cost
per key grows) for our kernel (its default configuration) and for cuDNN, with the
residuals printed.

`--tunings` says how often the tuner chooses what the GPU-time column finds fastest: each of
the short rows' keys (TUNING_KEYS, fp16) is tuned TUNINGS times from scratch with
tlx.autotune's retiming of the three fastest (the tutorial's tuner) and TUNINGS times with
Triton's choice alone (retime_top=1); then every configuration chosen is timed against
cuDNN in GPU time, and each line counts how many tunings of either kind chose it.
"""

import argparse
import functools

import torch
from gpu_timing import called_ms, line_costs, line_costs_header, median_ms, print_header
from tlx_kernels.hopper import attention as fa
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(4, 32, 4096, 128), (2, 32, 8192, 128), (4, 32, 4096, 64)]
GRID_TOKENS = 32768
GRID_HEADS = 16
GRID_SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
# --tile-cost fits its line over the grid's rows up to this sequence length.
TILE_COST_MAX_SEQ = 2048
GRID_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# --tunings: (head dim, causal, N) of the keys tuned, and how many times with each tuner.
TUNING_KEYS = ((128, False, 512), (128, False, 1024), (128, True, 512), (64, False, 1024))
TUNINGS = 3


def tflops(shape, causal, ms):
    batch, heads, seq_len, head_dim = shape
    flops = 4.0 * batch * heads * seq_len * seq_len * head_dim
    if causal:
        flops /= 2
    return flops / (ms * 1e-3) / 1e12


def sdpa(backend):
    def run(q, k, v, causal):
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return run


def ours_with(config):
    def run(q, k, v, causal):
        return fa.attention(q, k, v, causal, config=config)

    return run


def measure(runs_by_name, inputs, runs):
    """TFLOP/s of each `run(*inputs)` (inputs = (q, k, v, causal)), timed together."""
    q, _, _, causal = inputs
    calls = [functools.partial(run, *inputs) for run in runs_by_name.values()]
    times = median_ms(calls, runs)
    return {
        name: tflops(tuple(q.shape), causal, ms)
        for name, ms in zip(runs_by_name, times, strict=True)
    }


def max_error(out, expected):
    return (out.float() - expected.float()).abs().max().item()


def autotuned(q, k, v, causal):
    return fa.autotuned_attention(q, k, v, causal)


def grid(runs, dtype_names, head_dims, masks, seq_lens=GRID_SEQ_LENS, tokens=GRID_TOKENS):
    """The autotuned kernel against cuDNN over the shape grid (see the module's doc), for the
    dtypes, head dims, masks (causal or not) and sequence lengths asked for, B x N = tokens."""
    header = (
        f"{'dtype':>5} {'B':>3} {'N':>5} {'D':>4} {'causal':>6} | GPU: {'ours':>6} {'cuDNN':>6} "
        f"{'ratio':>5} | called: {'ours':>6} {'cuDNN':>6} {'ratio':>5} | {'max err':>7} | chosen"
    )
    print_header(header)
    cudnn = sdpa(SDPBackend.CUDNN_ATTENTION)
    below = 0
    for dtype_name in dtype_names:
        dtype = GRID_DTYPES[dtype_name]
        for head_dim in head_dims:
            for causal in masks:
                for seq_len in seq_lens:
                    shape = (tokens // seq_len, GRID_HEADS, seq_len, head_dim)
                    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
                    inputs = (q, k, v, causal)
                    err = max_error(autotuned(*inputs), cudnn(*inputs))
                    gpu = measure({"ours": autotuned, "cuDNN": cudnn}, inputs, runs)
                    called = {
                        name: tflops(shape, causal, called_ms(functools.partial(run, *inputs)))
                        for name, run in (("ours", autotuned), ("cuDNN", cudnn))
                    }
                    ratio, called_ratio = (t["ours"] / t["cuDNN"] for t in (gpu, called))
                    below += ratio < 1.0
                    print(
                        f"{dtype_name:>5} {shape[0]:>3} {seq_len:>5} {head_dim:>4} "
                        f"{str(causal):>6} | GPU: {gpu['ours']:6.1f} {gpu['cuDNN']:6.1f} "
                        f"{ratio:5.2f} | called: {called['ours']:6.1f} {called['cuDNN']:6.1f} "
                        f"{called_ratio:5.2f} | {err:7.1e} | {fa.chosen_config(dtype, head_dim)}",
                        flush=True,
                    )
    print(f"TFLOP/s; {below} rows below cuDNN in GPU time.")


def tile_cost(runs):
    """The per-tile and per-key GPU time of our kernel and cuDNN (see the module's doc)."""
    cudnn = sdpa(SDPBackend.CUDNN_ATTENTION)
    names = ("ours", "cuDNN")
    line_costs_header("N", names)
    short = [seq_len for seq_len in GRID_SEQ_LENS if seq_len <= TILE_COST_MAX_SEQ]
    for head_dim in fa.HEAD_DIMS:
        ours = ours_with(fa.default_config(head_dim))

        def calls_at(seq_len, head_dim=head_dim, ours=ours):
            shape = (GRID_TOKENS // seq_len, GRID_HEADS, seq_len, head_dim)
            q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
            return [functools.partial(run, q, k, v, False) for run in (ours, cudnn)]

        line_costs(f"D={head_dim}", GRID_SEQ_LENS, calls_at, names, runs, short, per="keys")
    print(
        f"GPU time of one call, B x N = {GRID_TOKENS}, H = {GRID_HEADS}, no mask, fp16; the "
        f"lines are fitted over N <= {TILE_COST_MAX_SEQ}; ratio = cuDNN / ours."
    )


def tunings(runs):
    """How often each tuner chooses the configuration GPU time finds fastest (see the module's
    doc)."""
    cudnn = sdpa(SDPBackend.CUDNN_ATTENTION)
    tuners = {"retimed": 3, "Triton's": 1}  # retime_top
    for head_dim, causal, seq_len in TUNING_KEYS:
        shape = (GRID_TOKENS // seq_len, GRID_HEADS, seq_len, head_dim)
        chosen = {}  # configuration -> {tuner: times chosen}
        for name, retime_top in tuners.items():
            for _ in range(TUNINGS):
                tuner = fa.autotuned_kernel.__wrapped__(torch.float16, head_dim, retime_top)
                q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
                fa.run_tuner(tuner, q, k, v, causal)
                counts = chosen.setdefault(fa.config_of(tuner.best_config), {})
                counts[name] = counts.get(name, 0) + 1
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        inputs = (q, k, v, causal)
        runs_by_name = {"cuDNN": cudnn, **{str(c): ours_with(c) for c in chosen}}
        result = measure(runs_by_name, inputs, runs)
        print(f"D={head_dim} N={seq_len} causal={causal}: cuDNN {result['cuDNN']:.1f} TFLOP/s")
        for config in sorted(chosen, key=lambda c: -result[str(c)]):
            counts = ", ".join(f"{name} {chosen[config].get(name, 0)}/{TUNINGS}" for name in tuners)
            print(f"  {result[str(config)] / result['cuDNN']:5.3f}x cuDNN | {counts} | {config}")


def print_device(runs, dtype=""):
    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {fa.triton.__version__}, {dtype}median of {runs} runs"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="timed runs per measurement")
    parser.add_argument("--sweep", action="store_true", help="time every kernel configuration")
    parser.add_argument("--grid", action="store_true", help="the autotuned kernel, shape grid")
    parser.add_argument(
        "--tile-cost", action="store_true", help="per-tile and per-key time, ours and cuDNN"
    )
    parser.add_argument(
        "--tunings", action="store_true", help="how often each tuner chooses the fastest"
    )
    parser.add_argument(
        "--head-dim", type=int, choices=fa.HEAD_DIMS, help="only the shapes of this head dim"
    )
    parser.add_argument(
        "--dtype", choices=tuple(GRID_DTYPES), help="--grid: only the rows of this dtype"
    )
    parser.add_argument(
        "--mask", choices=("causal", "none"), help="--grid: only the rows with this mask"
    )
    parser.add_argument(
        "--seq-len", type=int, nargs="+", metavar="N", help="--grid: only the rows of these N"
    )
    parser.add_argument(
        "--tokens",
        type=int,
        default=GRID_TOKENS,
        help="--grid: B x N of every row (B = tokens // N)",
    )
    args = parser.parse_args()
    if args.runs < 50:
        parser.error("--runs must be at least 50")
    seq_lens = args.seq_len or GRID_SEQ_LENS
    if min(seq_lens) < 1 or args.tokens < max(seq_lens):
        parser.error(
            f"--seq-len must be at least 1 and at most --tokens ({args.tokens}), got {seq_lens}"
        )
    # The default table is fp16 only; the other modes print each row's dtype or use fp16.
    print_device(args.runs, "" if args.grid or args.tile_cost or args.tunings else "fp16, ")
    if args.grid:
        grid(
            args.runs,
            [args.dtype] if args.dtype else list(GRID_DTYPES),
            [args.head_dim] if args.head_dim else list(fa.HEAD_DIMS),
            [args.mask == "causal"] if args.mask else [False, True],
            seq_lens,
            args.tokens,
        )
        return
    if args.tile_cost:
        tile_cost(args.runs)
        return
    if args.tunings:
        tunings(args.runs)
        return

    header = (
        f"{'B':>2} {'H':>3} {'N':>5} {'D':>4} {'causal':>6} | {'ours':>6} {'no-alias':>8} "
        f"{'flash':>6} {'cuDNN':>6} | {'/flash':>6} {'/cuDNN':>6} | {'max err':>7}"
    )
    print_header(header)
    for shape in SHAPES:
        head_dim = shape[3]
        if args.head_dim is not None and head_dim != args.head_dim:
            continue
        aliased, unaliased = fa.benchmark_configs(head_dim)
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
            expected = sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)
            err = max_error(fa.attention(q, k, v, causal, config=aliased), expected)
            err = max(err, max_error(fa.attention(q, k, v, causal, config=unaliased), expected))

            inputs = (q, k, v, causal)
            result = measure(
                {
                    "ours": ours_with(aliased),
                    "no-alias": ours_with(unaliased),
                    "flash": sdpa(SDPBackend.FLASH_ATTENTION),
                    "cuDNN": sdpa(SDPBackend.CUDNN_ATTENTION),
                },
                inputs,
                args.runs,
            )
            ours, flash, cudnn = result["ours"], result["flash"], result["cuDNN"]
            print(
                f"{shape[0]:>2} {shape[1]:>3} {shape[2]:>5} {head_dim:>4} {str(causal):>6} | "
                f"{ours:6.1f} {result['no-alias']:8.1f} {flash:6.1f} {cudnn:6.1f} | "
                f"{ours / flash:6.2f} {ours / cudnn:6.2f} | {err:7.1e}",
                flush=True,
            )
            if args.sweep:
                configs = {repr(config): config for config in fa.all_configs(head_dim)}
                errors = {
                    name: max_error(fa.attention(q, k, v, causal, config=config), expected)
                    for name, config in configs.items()
                }
                runs = {name: ours_with(config) for name, config in configs.items()}
                for name, value in measure(runs, inputs, args.runs).items():
                    print(
                        f"    sweep {name}: {value:6.1f} TFLOP/s, max err {errors[name]:.1e}",
                        flush=True,
                    )
    print(
        "ours = tutorial kernel with SMEM aliasing (default configuration); no-alias = the best "
        "configuration of the same kernel that fits in SMEM without aliasing; TFLOP/s."
    )


if __name__ == "__main__":
    main()
