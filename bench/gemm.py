"""Matrix multiplication on one Hopper GPU: the tutorial kernel vs. torch.matmul (cuBLAS).

    python bench/gemm.py [--runs 100]
    python bench/gemm.py --grid [--rows all|square|layers|cubes|quick|MxNxK,...]
                                [--dtype fp16|bf16|both] [--runs 100]
    python bench/gemm.py --launch
    python bench/gemm.py --k-cost [--runs 100]
    python bench/gemm.py --prefetch [--runs 100]
    python bench/gemm.py --stagger [--runs 100]
    python bench/gemm.py --ceiling [--rows MxNxK,...] [--dtype fp16|bf16|both] [--runs 100]
    python bench/gemm.py --spread [--runs 100]
    python bench/gemm.py --splits [--rows quick|MxNxK,...] [--runs 100]

For every shape (M, N, K) in fp16 and bf16, in one process on one GPU: the tutorial kernel with
SMEM aliasing (its default configuration: 128 x 256 x 64 tiles, four stages, C over the ring),
the best configuration of the same kernel that fits without aliasing (three stages), and
torch.matmul. TFLOP/s = 2*M*N*K / median time of `--runs` timed calls after warm-up, each call
timed with CUDA events; the contenders of a row are timed round-robin, one call each in turn.
Each timed call is queued behind a GPU sleep, so the events time the GPU's work, not the
host's launch overhead (bench/gpu_timing.py).

`--grid` times the autotuned kernel (``autotuned_matmul``: tlx.autotune keyed on the shape,
one tuner per dtype) against cuBLAS on fresh random inputs per row: GPU time as above, the
time as a user calls it (`triton.testing.do_bench`, launch included), and the host's
microseconds per call; each row prints the seconds of its first call (the tuning) and the
configuration chosen, the last line the range and geomean of the ratios as called. Its rows
(`--rows`, default all; `--dtype`, default both): "square", M = N = K in {1024, 2048, 4096,
8192} and (16384, 1024, 1024), (1024, 16384, 1024), (8192, 8192, 512); "layers", M in {128,
512, 2048, 8192} tokens x the (N, K) of real projections (4096, 4096), (14336, 4096), (4096,
14336), (1024, 4096), (6144, 4096), (28672, 8192), (8192, 28672); "cubes", M = N = K in
{1536, 3072, 6144}; "quick", the five rows issue 49 found below cuBLAS (1536 cubed, 2048 x 512
x 8192, 128 x 4096 x 4096, 6144 x 3072 x 5120, 4096 x 14336 x 4096); or shapes MxNxK.

`--launch` says where a tuned call's host time goes at 1024 cubed, and how much of it
`triton.testing.do_bench` hides: the host's microseconds of ``autotuned_matmul``, of each of
its steps (the tuned key's lookup and the operands' checks, C's allocation, the launch from
the arguments kept from the last call of the same tensors and Triton's C launch function in
it; for new tensors, the descriptors and arguments and Triton's launcher, which encodes the
descriptors) and of ``torch.matmul``; then each one's ``do_bench`` time
when the host first spins for 0 to 120 us more before every call, beside the GPU time of
``do_bench``'s clearing of the L2 between calls. ``do_bench`` hides a launch while the host
issues a call faster than the GPU clears the L2 and runs it.

`--k-cost` says where the short square rows of the grid (1024 and 2048 cubed) lose to cuBLAS:
at M = N fixed, a call's GPU time is close to a line in K, t(K) = fixed + slope x K, whose
intercept is what a CTA pays whatever its K loop (the launch, filling the ring, the
epilogue) and whose slope is what each step of the loop costs. The configuration the tuner
chooses for the cube is timed against cuBLAS at K = 256 to 4096 (fp16), and both lines are
fitted by least squares, with the residuals printed.

`--prefetch` says what the prefetch of the TMA descriptors at a kernel's entry buys
(docs/api.md): the configuration the tuner chooses for 1024, 2048 and 4096 cubed, compiled
with the prefetch and without it (``TLX_DESCRIPTOR_PREFETCH=0``), both launched directly and
timed round-robin against cuBLAS in GPU time, fp16 and bf16.

`--stagger` says what staggered consumers buy (the tutorial's doc): the persistent kernel of
128 x 256 x 64 tiles with C beside a ring of three stages, its second consumer leaving 0, 2
or 3 of its last K steps until the first has finished the tile, against cuBLAS, in GPU time,
at 2048 cubed (one tile a CTA), 4096 cubed and two skinny shapes of the grid (several); the
four contenders are timed round-robin in each of their four rotations, fp16 and bf16.

`--ceiling` says what sets the time of the grid's rows whose one or last wave of tiles leaves
SMs idle (2048 and 4096 cubed, the skinny shapes, 8192 x 8192 x 512): each is timed with the
configuration the tuner takes there beside the same product grown, along M or N, by the tiles
that fill that wave (``filled_wave_shape``; 2048 cubed has no such growth), ours and cuBLAS
round-robin in GPU time, fp16 and bf16 (or `--rows` and `--dtype`, as for `--grid`). Were
the idle SMs' share of the last wave what the row pays, the grown shape would cost no more;
were the GPU's throughput all, it would cost its extra work. Then each contender runs back
to back at the row's shape while nvidia-smi samples the SM clock, the board's power and
whether the power cap holds the clocks down (gpu_timing.under_load), and its TFLOP/s back to
back are given as a share of the tensor cores' dense peak at the clock sampled
(``share_of_peak``): how close to what the clock allows each kernel runs.

`--spread` says how far a row's ratio to cuBLAS moves from one timing to the next, where the
grid finds the two level (1024, 2048 and 4096 cubed): the tuned kernel and cuBLAS timed
round-robin in GPU time, in both orders, on fresh random inputs five times over, fp16 and
bf16; each row gives the range of either's median and the least, mean and greatest ratio.

`--splits` says what split-K buys where the tiles are few (default rows: 128 x 1024 x 4096,
128 x 4096 x 4096, 2048 x 512 x 8192; `--rows` as for `--grid`): split-K's tiles
(``gemm.SPLIT_K_TILES``) split 1 (the 128 x 64 tiles also without warp specialization), 2, 4,
8 and 16 ways where each split keeps 4 K steps, against cuBLAS, round-robin in GPU time, fp16;
each row gives the CTAs launched (splits x tiles) and the error against an fp32 product.
"""

import argparse
import functools
import os
import statistics
import sys
import time

import torch
import triton
from gpu_timing import (
    called_ms,
    host_us,
    l2_clearer,
    line_costs,
    line_costs_header,
    median_ms,
    print_header,
    rotated_median_ms,
    under_load,
)
from tlx_kernels.hopper import gemm

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 4096, 4096)]
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
GRID_SHAPES = [
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 1024, 1024),
    (1024, 16384, 1024),
    (8192, 8192, 512),
]
# (N, K) of real layers' projections (an LLM's attention and MLP at d_model 4096 and 8192), at
# token counts M.
PROJECTIONS = (
    (4096, 4096),
    (14336, 4096),
    (4096, 14336),
    (1024, 4096),
    (6144, 4096),
    (28672, 8192),
    (8192, 28672),
)
LAYER_SHAPES = [(M, N, K) for M in (128, 512, 2048, 8192) for N, K in PROJECTIONS]
CUBE_SHAPES = [(size, size, size) for size in (1536, 3072, 6144)]
ALL_GRID_SHAPES = list(dict.fromkeys((*GRID_SHAPES, *LAYER_SHAPES, *CUBE_SHAPES)))
# The rows issue 49 measured below cuBLAS: too few tiles for the SMs, or a ragged last wave.
QUICK_SHAPES = [
    (1536, 1536, 1536),
    (2048, 512, 8192),
    (128, 4096, 4096),
    (6144, 3072, 5120),
    (4096, 14336, 4096),
]


def tflops(shape, ms):
    M, N, K = shape
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def relative_error(out, expected):
    return ((out.float() - expected).abs().max() / expected.abs().max()).item()


def grid_rows(spec):
    """The (M, N, K) rows ``--rows`` names: a comma-separated list of groups ("square": the
    original grid's rows, "layers": the projections' rows, "cubes", "quick": the rows the
    issue found below cuBLAS, "all") and shapes written MxNxK, in that order, each once."""
    groups = {
        "square": GRID_SHAPES,
        "layers": LAYER_SHAPES,
        "cubes": CUBE_SHAPES,
        "quick": QUICK_SHAPES,
        "all": ALL_GRID_SHAPES,
    }
    rows = []
    for item in spec.split(","):
        item = item.strip()
        if item in groups:
            shapes = groups[item]
        else:
            try:
                shapes = [tuple(int(size) for size in item.lower().split("x"))]
            except ValueError:
                shapes = [()]
            if len(shapes[0]) != 3:
                raise ValueError(f"--rows: {item!r} is neither {sorted(groups)} nor MxNxK")
        rows += [shape for shape in shapes if shape not in rows]
    return rows


def first_call_s(fn):
    """Seconds of ``fn``'s first call, the GPU's work included (a first tuned call of a
    shape times its configurations)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start, out


def grid(runs, shapes, dtypes):
    """The autotuned kernel against cuBLAS over the shape grid (see the module's doc)."""
    header = (
        f"{'M':>5} {'N':>5} {'K':>5} {'dtype':>5} | tune s | GPU: {'ours':>6} {'cuBLAS':>6} "
        f"{'ratio':>5} | called: {'ours':>6} {'cuBLAS':>6} {'ratio':>5} | host us: {'ours':>5} "
        f"{'cuBLAS':>6} | {'rel err':>7} | chosen"
    )
    print_header(header)
    below = 0
    ratios = []
    for dtype_name in dtypes:
        dtype = DTYPES[dtype_name]
        for shape in shapes:
            M, N, K = shape
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            tune_s, out = first_call_s(functools.partial(gemm.autotuned_matmul, a, b))
            error = relative_error(out, a.float() @ b.float())
            del out
            calls = [
                functools.partial(gemm.autotuned_matmul, a, b),
                functools.partial(torch.matmul, a, b),
            ]
            gpu = [tflops(shape, ms) for ms in median_ms(calls, runs)]
            called = [tflops(shape, called_ms(call)) for call in calls]
            host = [host_us(call) for call in calls]
            below += gpu[0] < gpu[1]
            ratios.append(called[0] / called[1])
            print(
                f"{M:>5} {N:>5} {K:>5} {dtype_name:>5} | {tune_s:6.1f} | GPU: {gpu[0]:6.1f} "
                f"{gpu[1]:6.1f} {gpu[0] / gpu[1]:5.2f} | called: {called[0]:6.1f} "
                f"{called[1]:6.1f} {called[0] / called[1]:5.2f} | host us: {host[0]:5.1f} "
                f"{host[1]:6.1f} | {error:7.1e} | {gemm.chosen_config(dtype)}",
                flush=True,
            )
    geomean = statistics.geometric_mean(ratios)
    print(
        f"TFLOP/s; {below} rows below cuBLAS in GPU time; as called {min(ratios):.3f}-"
        f"{max(ratios):.3f}x cuBLAS, geomean {geomean:.3f}x; tune s: the first call's seconds "
        "(compiling the configurations not yet in Triton's cache, and timing them)."
    )


LAUNCH_SHAPE = (1024, 1024, 1024)
# --k-cost: M = N of the rows whose time is fitted as a line in K, and the depths K.
K_COST_SIZES = (1024, 2048)
K_COST_DEPTHS = (256, 512, 1024, 2048, 4096)
# Host microseconds spun before each call (--launch).
EXTRA_HOST_US = (0, 20, 40, 60, 80, 120)
# --prefetch: the cubes, and the variable that turns the prefetch off (docs/api.md).
PREFETCH_SIZES = (1024, 2048, 4096)
PREFETCH_VARIABLE = "TLX_DESCRIPTOR_PREFETCH"
# --stagger: the shapes, and the second consumer's deferred K steps compared.
STAGGER_SHAPES = ((2048, 2048, 2048), (4096, 4096, 4096), (1024, 16384, 1024), (8192, 8192, 512))
STAGGERS = (0, 2, 3)
# --ceiling: the rows whose one or last wave leaves SMs idle.
CEILING_SHAPES = (
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (16384, 1024, 1024),
    (1024, 16384, 1024),
    (8192, 8192, 512),
)
# Dense fp16/bf16 tensor-core FLOPs an sm_90 SM completes a clock: an H100 SXM's 989.4 TFLOP/s
# over its 132 SMs at 1830 MHz (the H200 has the same SMs).
HOPPER_DENSE_FLOPS_PER_SM_CLOCK = 4096
# --spread: the rows the grid finds level with cuBLAS, and the fresh inputs each is timed on.
SPREAD_SHAPES = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096))
SPREAD_REPEATS = 5


def after_spinning(fn, microseconds):
    """``fn``, called once the host has spun for ``microseconds``: a slower launch."""

    def call():
        end = time.perf_counter() + microseconds * 1e-6
        while time.perf_counter() < end:
            pass
        return fn()

    return call


def clear_cache_us(samples=20):
    """GPU microseconds of do_bench's clearing of the L2 (a write of its whole buffer)."""
    clear = l2_clearer()
    cache = clear.args[0]
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        start.record()
        clear()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times), cache.numel() * cache.element_size()


def launch_cost():
    """The host's time of a tuned call, step by step, and what do_bench hides of it (see the
    module's doc)."""
    M, N, K = LAUNCH_SHAPE
    clear_us, clear_bytes = clear_cache_us()
    print(
        f"do_bench clears the L2 by writing {clear_bytes >> 20} MB: {clear_us:.1f} us of GPU time"
    )
    for dtype_name, dtype in DTYPES.items():
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        gemm.autotuned_matmul(a, b)  # tunes the key
        launch = gemm.direct_launch(a, b)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        arguments = launch.arguments((a, b, c), (M, N, K))
        launch((a, b, c), (M, N, K))  # keeps the call's expanded arguments
        expanded = launch.expanded_launch.expand(arguments)
        stream = torch.cuda.current_stream().cuda_stream
        ours = functools.partial(gemm.autotuned_matmul, a, b)
        cublas = functools.partial(torch.matmul, a, b)
        steps = {
            "  tuned key's lookup, operands' checks": functools.partial(gemm.direct_launch, a, b),
            "  C's allocation": functools.partial(torch.empty, (M, N), device="cuda", dtype=dtype),
            "  the launch, arguments kept": functools.partial(launch, (a, b, c), (M, N, K)),
            "    of which Triton's C launch function": functools.partial(
                launch.expanded_launch.launch, launch.grid, stream, expanded
            ),
            "  new tensors: descriptors and arguments": functools.partial(
                launch.arguments, (a, b, c), (M, N, K)
            ),
            "    and Triton's launcher, which encodes them": functools.partial(
                launch.run, a.device.index, arguments
            ),
        }
        print(f"{M} x {N} x {K} {dtype_name}, {gemm.chosen_config(dtype)}: host us per call")
        if not launch.expanded_launch.usable:
            print("  (this Triton's launcher is not entered past its wrapper: every call encodes)")
        print(f"  autotuned_matmul {host_us(ours):6.1f}")
        for name, step in steps.items():
            print(f"  {name:40s} {host_us(step):6.1f}")
        print(f"  torch.matmul {host_us(cublas):6.1f}")
        print(f"  {'host us added':>13} | do_bench us: {'ours':>6} {'cuBLAS':>6}")
        for extra in EXTRA_HOST_US:
            times = [called_ms(after_spinning(fn, extra)) * 1e3 for fn in (ours, cublas)]
            print(f"  {extra:13d} | {'':12s} {times[0]:6.1f} {times[1]:6.1f}", flush=True)


def k_cost(runs):
    """The fixed and per-K GPU time of the tuned kernel and of cuBLAS (see the module's doc)."""
    names = ("ours", "cuBLAS")
    line_costs_header("K", names)
    for size in K_COST_SIZES:
        cube = [torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2)]
        gemm.autotuned_matmul(*cube)  # tunes the cube's key
        config = gemm.chosen_config(torch.float16)

        def calls_at(K, size=size, config=config):
            a = torch.randn(size, K, device="cuda", dtype=torch.float16)
            b = torch.randn(K, size, device="cuda", dtype=torch.float16)
            return [
                functools.partial(gemm.matmul, a, b, config),
                functools.partial(torch.matmul, a, b),
            ]

        line_costs(f"M = N = {size}", K_COST_DEPTHS, calls_at, names, runs, per="of K")
        print(f"{'':>12} ours: {config}, the tuner's choice at {size} cubed")
    print("GPU time of one call, fp16; ratio = cuBLAS / ours.")


def compiled_with_prefetch(config, dtype_name, prefetch):
    """``config``'s kernel compiled with the descriptor prefetch on or off."""
    saved = os.environ.get(PREFETCH_VARIABLE)
    os.environ[PREFETCH_VARIABLE] = "1" if prefetch else "0"
    try:
        return gemm.compile_for_hopper(config, dtype_name)
    finally:
        if saved is None:
            del os.environ[PREFETCH_VARIABLE]
        else:
            os.environ[PREFETCH_VARIABLE] = saved


def prefetch_gain(runs):
    """The tuned kernels with and without the descriptor prefetch (see the module's doc)."""
    header = (
        f"{'M=N=K':>6} {'dtype':>5} | GPU us: {'prefetch':>8} {'without':>8} {'cuBLAS':>6} | "
        f"{'gain':>6} {'ours/cuBLAS':>11} | rel err | chosen"
    )
    print_header(header)
    for dtype_name, dtype in DTYPES.items():
        for size in PREFETCH_SIZES:
            torch.manual_seed(size)
            a = torch.randn(size, size, device="cuda", dtype=dtype)
            b = torch.randn(size, size, device="cuda", dtype=dtype)
            gemm.autotuned_matmul(a, b)  # tunes the cube's key
            config = gemm.chosen_config(dtype)
            c = torch.empty(size, size, device="cuda", dtype=dtype)
            calls = []
            for prefetch in (True, False):
                kernel = compiled_with_prefetch(config, dtype_name, prefetch)
                launch = gemm.compiled_launch(kernel, a, b, config)
                calls.append(functools.partial(launch, (a, b, c), (size, size, size)))
            expected = a.float() @ b.float()
            error = 0.0
            for call in calls:
                c.zero_()
                call()
                error = max(error, relative_error(c, expected))
            del expected
            times = median_ms([*calls, functools.partial(torch.matmul, a, b)], runs)
            with_prefetch, without, cublas = (ms * 1e3 for ms in times)
            print(
                f"{size:>6} {dtype_name:>5} | GPU us: {with_prefetch:8.2f} {without:8.2f} "
                f"{cublas:6.2f} | {without / with_prefetch:6.3f} {cublas / with_prefetch:11.3f} "
                f"| {error:7.1e} | {config}",
                flush=True,
            )
    print("gain = without / prefetch; ours/cuBLAS with the prefetch; L2 warm (gpu_timing.py).")


def stagger_gain(runs):
    """The persistent kernel with staggered consumers and without (see the module's doc)."""
    names = [f"stagger={stagger}" for stagger in STAGGERS] + ["cuBLAS"]
    header = (
        f"{'M':>5} {'N':>5} {'K':>5} {'dtype':>5} {'order':>5} | GPU us: "
        + " ".join(f"{name:>9}" for name in names)
        + f" | {'0/3':>5} {'cuBLAS/3':>8} | rel err"
    )
    print_header(header)
    for dtype_name, dtype in DTYPES.items():
        for shape in STAGGER_SHAPES:
            M, N, K = shape
            torch.manual_seed(M + N + K)
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            expected = a.float() @ b.float()
            calls, error = [], 0.0
            for stagger in STAGGERS:
                config = gemm.Config(
                    128, 256, 64, 3, alias_c=False, group_m=4, persistent=True, stagger=stagger
                )
                error = max(error, relative_error(gemm.matmul(a, b, config), expected))
                calls.append(functools.partial(gemm.matmul, a, b, config))
            del expected
            calls.append(functools.partial(torch.matmul, a, b))
            for rotation in range(len(calls)):
                us = [ms * 1e3 for ms in rotated_median_ms(calls, runs, rotation)]
                print(
                    f"{M:>5} {N:>5} {K:>5} {dtype_name:>5} {rotation:>5} | GPU us: "
                    + " ".join(f"{us[i]:9.2f}" for i in range(len(calls)))
                    + f" | {us[0] / us[len(STAGGERS) - 1]:5.3f} "
                    f"{us[len(calls) - 1] / us[len(STAGGERS) - 1]:8.3f} | {error:7.1e}",
                    flush=True,
                )
    print(
        "order: the rotation of the round-robin (0: in the columns' order); 0/3 = stagger=0's "
        "time over stagger=3's; L2 warm (gpu_timing.py)."
    )


SPLIT_SHAPES = ((128, 1024, 4096), (128, 4096, 4096), (2048, 512, 8192))
SPLIT_COUNTS = (1, 2, 4, 8, 16)


def split_gain(runs, shapes):
    """Split-K's tiles split 1 to 16 ways against cuBLAS (see the module's doc)."""
    print_header(
        f"{'M':>5} {'N':>5} {'K':>5} {'tile':>9} {'splits':>6} {'CTAs':>5} | GPU us | rel err"
    )
    for M, N, K in shapes:
        torch.manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        expected = a.float() @ b.float()
        rows, calls = [], []
        for block_m, block_n, stages in gemm.SPLIT_K_TILES:
            tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
            configs = [
                gemm.Config(block_m, block_n, 64, stages, alias_c=True, split_k=splits)
                for splits in SPLIT_COUNTS
                if triton.cdiv(K, 64) >= gemm.SPLIT_K_MIN_STEPS * splits
            ]
            if block_n == 64:
                configs.insert(0, gemm.Config(128, 64, 64, stages, True, warp_specialize=False))
            for config in configs:
                error = relative_error(gemm.matmul(a, b, config), expected)
                rows.append((f"{block_m}x{block_n}", config, tiles * config.split_k, error))
                calls.append(functools.partial(gemm.matmul, a, b, config))
        calls.append(functools.partial(torch.matmul, a, b))
        us = [ms * 1e3 for ms in median_ms(calls, runs)]
        for (tile, config, ctas, error), time_us in zip(rows, us, strict=False):
            pipelined = " pipelined" if not config.warp_specialize else ""
            print(
                f"{M:>5} {N:>5} {K:>5} {tile:>9} {config.split_k:>6} {ctas:>5} | {time_us:6.1f} | "
                f"{error:7.1e}{pipelined}",
                flush=True,
            )
        print(f"{M:>5} {N:>5} {K:>5} {'cuBLAS':>9} {'':>6} {'':>5} | {us[-1]:6.1f} |", flush=True)
    print("GPU us: median of --runs round-robin calls, L2 warm (gpu_timing.py).")


def filled_wave_shape(shape, block_m, block_n, sms):
    """``shape`` (M, N, K) grown by whole rows (M) or else columns (N) of block_m x block_n
    tiles until its tiles fill every wave of ``sms`` CTAs, or None where neither adds exactly
    the missing tiles (or none is missing)."""
    M, N, K = shape
    tiles_m, tiles_n = triton.cdiv(M, block_m), triton.cdiv(N, block_n)
    missing = -(tiles_m * tiles_n) % sms
    if missing == 0:
        return None
    if missing % tiles_n == 0:
        return (M + missing // tiles_n * block_m, N, K)
    if missing % tiles_m == 0:
        return (M, N + missing // tiles_m * block_n, K)
    return None


def share_of_peak(shape, ms, mhz, sms):
    """The share of the tensor cores' dense fp16/bf16 peak at an SM clock of ``mhz`` that a
    product of ``shape`` (M, N, K) reaches in ``ms`` on ``sms`` SMs."""
    M, N, K = shape
    peak = sms * HOPPER_DENSE_FLOPS_PER_SM_CLOCK * mhz * 1e6
    return 2.0 * M * N * K / (ms * 1e-3) / peak


def ceiling(runs, shapes, dtypes):
    """The grid's rows that leave SMs idle (or ``shapes``), against the shapes that fill their
    last wave, and the GPU's clock and power under each contender (see the module's doc)."""
    sms = _sm_count()
    header = (
        f"{'M':>5} {'N':>5} {'K':>5} {'dtype':>5} {'waves':>5} | {'grown to':>17} {'work':>5} | "
        f"GPU us: {'ours':>7} {'grown':>7} {'x':>5} | {'cuBLAS':>7} {'grown':>7} {'x':>5} | "
        f"{'MHz':>9} {'W (limit)':>13} {'capped':>9} | {'of peak':>11}"
    )
    print_header(header)
    chosen = set()
    for dtype_name in dtypes:
        dtype = DTYPES[dtype_name]
        for shape in shapes:
            M, N, K = shape
            torch.manual_seed(M + N + K)
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            gemm.autotuned_matmul(a, b)  # tunes the row's key
            config = gemm.chosen_config(dtype)
            chosen.add(config)
            grown = filled_wave_shape(shape, config.block_m, config.block_n, sms)
            operands = {shape: (a, b)}
            if grown is not None:
                operands[grown] = (
                    torch.randn(grown[0], K, device="cuda", dtype=dtype),
                    torch.randn(K, grown[1], device="cuda", dtype=dtype),
                )
            calls = [
                functools.partial(call, *operands[size], *arguments)
                for call, arguments in ((gemm.matmul, (config,)), (torch.matmul, ()))
                for size in operands
            ]
            times = [ms * 1e3 for ms in median_ms(calls, runs)]
            ours, cublas = times[0], times[len(operands)]
            # Back to back, ours is launched as users call it: through the tuner's direct
            # launch, whose host time (--launch) is shorter than the row's GPU time.
            loads = [
                under_load(functools.partial(gemm.autotuned_matmul, a, b)),
                under_load(calls[len(operands)]),
            ]
            tiles = triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n)
            if grown is None:
                growth = f"{'-':>17} {'-':>5} | GPU us: {ours:7.2f} {'-':>7} {'-':>5} | "
                growth += f"{cublas:7.2f} {'-':>7} {'-':>5}"
            else:
                ours_grown, cublas_grown = times[1], times[3]
                growth = (
                    f"{'x'.join(map(str, grown)):>17} {grown[0] * grown[1] / (M * N):5.3f} | "
                    f"GPU us: {ours:7.2f} {ours_grown:7.2f} {ours_grown / ours:5.3f} | "
                    f"{cublas:7.2f} {cublas_grown:7.2f} {cublas_grown / cublas:5.3f}"
                )
            summaries = [summary for summary, _ in loads]
            shares = [share_of_peak(shape, ms, summary[0], sms) for summary, ms in loads]
            print(
                f"{M:>5} {N:>5} {K:>5} {dtype_name:>5} {tiles / sms:5.2f} | {growth} | "
                + " ".join(f"{summary[0]:4.0f}" for summary in summaries)
                + " "
                + " ".join(f"{summary[1]:3.0f}" for summary in summaries)
                + f" ({summaries[0][2]:3.0f}) "
                + " ".join(f"{summary[3]:4.0%}" for summary in summaries)
                + " | "
                + " ".join(f"{share:5.1%}" for share in shares),
                flush=True,
            )
    print(
        "ours: the configuration the tuner takes at the row ("
        + "; ".join(sorted(map(repr, chosen)))
        + f"); waves = its tiles / {sms} SMs; work = the grown shape's over the row's; x = "
        "grown time / row time; MHz, W, capped (the share of samples the power cap held the "
        "clocks down), of peak (TFLOP/s over the tensor cores' dense peak at that clock): ours "
        "then cuBLAS, running back to back at the row's shape, and the board's power limit."
    )


def spread(runs):
    """The level rows' ratio to cuBLAS timed again and again (see the module's doc)."""
    header = (
        f"{'M':>5} {'N':>5} {'K':>5} {'dtype':>5} | GPU us: {'ours':>13} {'cuBLAS':>13} | "
        f"cuBLAS/ours: {'least':>6} {'mean':>6} {'most':>6} | chosen"
    )
    print_header(header)
    for dtype_name, dtype in DTYPES.items():
        for shape in SPREAD_SHAPES:
            M, N, K = shape
            ours, cublas = [], []
            for _ in range(SPREAD_REPEATS):
                a = torch.randn(M, K, device="cuda", dtype=dtype)
                b = torch.randn(K, N, device="cuda", dtype=dtype)
                gemm.autotuned_matmul(a, b)  # tunes the key the first time
                calls = [
                    functools.partial(gemm.autotuned_matmul, a, b),
                    functools.partial(torch.matmul, a, b),
                ]
                for rotation in range(len(calls)):
                    times = rotated_median_ms(calls, runs, rotation)
                    ours.append(times[0] * 1e3)
                    cublas.append(times[1] * 1e3)
            ratios = [theirs / mine for mine, theirs in zip(ours, cublas, strict=True)]
            print(
                f"{M:>5} {N:>5} {K:>5} {dtype_name:>5} | GPU us: "
                f"{min(ours):6.2f}-{max(ours):6.2f} {min(cublas):6.2f}-{max(cublas):6.2f} | "
                f"cuBLAS/ours: {min(ratios):6.4f} {statistics.mean(ratios):6.4f} "
                f"{max(ratios):6.4f} | {gemm.chosen_config(dtype)}",
                flush=True,
            )
    print(
        f"{SPREAD_REPEATS} inputs x 2 orders a row; GPU us: the least and greatest median; "
        "L2 warm (gpu_timing.py)."
    )


def _sm_count():
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="timed runs per measurement")
    parser.add_argument("--grid", action="store_true", help="the autotuned kernel, shape grid")
    parser.add_argument(
        "--rows",
        default=None,
        help="--grid's (default all), --splits' or --ceiling's rows: groups square, layers, "
        "cubes, quick, all, or MxNxK, comma-separated",
    )
    parser.add_argument(
        "--dtype",
        choices=("fp16", "bf16", "both"),
        default="both",
        help="--grid's and --ceiling's dtypes",
    )
    parser.add_argument(
        "--launch", action="store_true", help="a tuned call's host time and what do_bench hides"
    )
    parser.add_argument(
        "--k-cost", action="store_true", help="fixed and per-K time, ours and cuBLAS"
    )
    parser.add_argument(
        "--prefetch", action="store_true", help="the tuned kernels with and without the prefetch"
    )
    parser.add_argument(
        "--stagger", action="store_true", help="the persistent kernel with staggered consumers"
    )
    parser.add_argument(
        "--ceiling", action="store_true", help="a partial last wave against the GPU's throughput"
    )
    parser.add_argument(
        "--spread", action="store_true", help="the level rows' ratio, timed again and again"
    )
    parser.add_argument(
        "--splits", action="store_true", help="split-K's tiles split 1 to 16 ways, few tiles"
    )
    args = parser.parse_args()
    if args.runs < 50:
        parser.error("--runs must be at least 50")
    try:
        rows = grid_rows(args.rows or "all")
    except ValueError as error:
        parser.error(str(error))
    dtypes = list(DTYPES) if args.dtype == "both" else [args.dtype]
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        sys.exit(
            "bench/gemm.py needs a Hopper GPU (compute capability 9.x) and found none: the "
            "kernel is compiled for sm_90a. python tutorials/hopper_gemm.py shows its SMEM plan "
            "without a GPU."
        )

    print(
        f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {gemm.triton.__version__}, median of {args.runs} runs"
    )
    if args.grid:
        grid(args.runs, rows, dtypes)
        return
    if args.launch:
        launch_cost()
        return
    if args.k_cost:
        k_cost(args.runs)
        return
    if args.prefetch:
        prefetch_gain(args.runs)
        return
    if args.stagger:
        stagger_gain(args.runs)
        return
    if args.ceiling:
        ceiling(args.runs, rows if args.rows else CEILING_SHAPES, dtypes)
        return
    if args.spread:
        spread(args.runs)
        return
    if args.splits:
        split_gain(args.runs, rows if args.rows else SPLIT_SHAPES)
        return
    header = (
        f"{'M':>6} {'N':>6} {'K':>6} {'dtype':>5} | {'ours':>6} {'no-alias':>8} {'cuBLAS':>6} | "
        f"{'ours/cuBLAS':>11} {'no-alias/cuBLAS':>15} | {'max rel err':>11}"
    )
    print_header(header)
    for dtype_name, dtype in DTYPES.items():
        aliased, unaliased = gemm.benchmark_configs(dtype)
        for shape in SHAPES:
            M, N, K = shape
            torch.manual_seed(0)
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            expected = a.float() @ b.float()
            error = max(
                relative_error(gemm.matmul(a, b, aliased), expected),
                relative_error(gemm.matmul(a, b, unaliased), expected),
            )
            del expected
            times = median_ms(
                [
                    functools.partial(gemm.matmul, a, b, aliased),
                    functools.partial(gemm.matmul, a, b, unaliased),
                    functools.partial(torch.matmul, a, b),
                ],
                args.runs,
            )
            ours, no_alias, cublas = (tflops(shape, ms) for ms in times)
            print(
                f"{M:>6} {N:>6} {K:>6} {dtype_name:>5} | {ours:6.1f} {no_alias:8.1f} "
                f"{cublas:6.1f} | {ours / cublas:11.2f} {no_alias / cublas:15.2f} | "
                f"{error:11.1e}",
                flush=True,
            )
    print(
        f"ours = tutorial kernel with SMEM aliasing ({aliased}); no-alias = the best "
        f"configuration of the same kernel that fits in SMEM without aliasing ({unaliased}); "
        "cuBLAS = torch.matmul; TFLOP/s. max rel err = max |out - fp32 reference| / "
        "max |reference| over ours and no-alias."
    )


if __name__ == "__main__":
    main()
