"""Matrix multiplication C = A @ B for Hopper (sm_90a): Gluon + tlx storage aliasing.

    python tutorials/hopper_gemm.py [--plans]   (PYTHONPATH=language, or the package installed)

The kernel is ``tlx_kernels.hopper.gemm_kernel``, its host code ``tlx_kernels.hopper.gemm``;
a model calls the tuned one as ``from tlx_kernels import matmul``.

A is [M, K], B is [K, N] (both row-major, as ``torch.matmul`` takes them), C is [M, N]; the
inputs are float16 or bfloat16, the products are accumulated in float32 and C has the inputs'
dtype. Any M, N and K work (``matmul`` first copies an operand whose rows the TMA cannot
address, a row whose length is not a multiple of 16 bytes, into padded rows).

The kernel
----------
One CTA computes one BLOCK_M x BLOCK_N tile of C (128 x 256 by default). The tiles are visited
in groups of GROUP_M tile rows, so that CTAs running at the same time read the same few rows of
A and columns of B and find them in L2. Three warp-specialized partitions share the CTA:

* a loader warp walks K in steps of BLOCK_K (64) and issues the TMA copies of the A tile
  [BLOCK_M, BLOCK_K] and the B tile [BLOCK_K, BLOCK_N] of each step into a ring of NUM_STAGES
  (4) stages. Per stage two mbarriers: ``ready`` (the loader's expected bytes have landed) and
  ``empty`` (both consumers are done reading the stage, so the loader may refill it). Reads past
  the edges of A and B come back as zeros, so the last, partial K step adds nothing and the
  loop simply runs ceil(K / BLOCK_K) times;
* two consumer warpgroups (4 warps each), each owning BLOCK_M / 2 = 64 rows of the tile, so
  that its float32 accumulator (64 x 256) fits in registers. Per K step a consumer waits for the
  stage, issues an asynchronous ``warpgroup_mma`` and waits until only that product is in
  flight: the previous one has finished reading its stage, which the consumer then releases.

The epilogue converts each consumer's accumulator to the output dtype, writes it to shared
memory and stores it with TMA, which clips the rows and columns past the edges of C.

Where aliasing buys room
------------------------
The ring holds 4 x 16 KiB of A and 4 x 32 KiB of B: 192 KiB. The epilogue's C tile (128 x 256
in 16 bits) is another 64 KiB: 256 KiB together, more than the 227 KiB of shared memory an
sm_90a CTA may use. But the ring and C are never alive at the same time: C is written only after
the last matrix product of the tile has finished and every copy into the ring has landed. So
all of them live in one ``tlx.storage_alias_spec`` whose tree says exactly that::

    shared(c_tile, reuse_group(distinct(a_ring, b_ring), group_size=NUM_STAGES))

``distinct(a_ring, b_ring)`` with ``group_size=NUM_STAGES`` makes the whole ring one buffer
group (no A or B buffer overlaps another), and ``shared`` lays the one C buffer over the start
of that group. The planner places a0 a1 a2 a3 b0 b1 b2 b3 one after the other and C at byte 0:
196608 bytes, the ideal, and four stages fit. Without aliasing the best that fits is three
stages (144 KiB of ring + 64 KiB of C; on Triton 3.8, whose views must cover the region in whole
buffers, those 208 KiB are rounded up to a multiple of C's 64 KiB and only two stages fit).

The sharing is a promise the kernel keeps with its synchronization: C overlaps A stages that
the other consumer may still be reading, so each consumer, after its own last product, waits
at an mbarrier (``mma_done``) until both consumers' products are complete before it writes
its half of C. By then every TMA copy has landed too: each consumer waited for every stage's
``ready`` barrier, and the loader issues no copy the consumers do not wait for (with C over
the ring a CTA computes one tile, so no load of a next tile can be in flight).

Persistent, C beside the ring
-----------------------------
``persistent=True`` makes each CTA take every num_programs-th tile, the ring running on from
one tile to the next, and the loader fills the next tile's stages while the consumers store
this one's C. C then cannot lie over the ring: the tree is ``distinct(c_tile, ring)`` and the
kernel refuses ``ALIAS_C`` with ``PERSISTENT``. Each consumer waits for its previous TMA store
only before it rewrites its half of C. On short K loops and skinny shapes, where a tile's
epilogue and the ring's fill are a large share of its time, the autotuner picks it
(``bench/gemm.py --grid``).

``last_wave_split=S`` evens a ragged last wave: where the tiles make whole waves and then
fewer tiles than CTAs (6144 x 3072 at 128 x 256: 576 tiles on 132 SMs, 48 in the last), the
CTAs run the whole waves' tiles, then share S units a last-wave tile, each a balanced share
of its K steps (``gemm_state.split_unit``), in the same launch; each unit adds its fp32
partial from registers into the tile's sum in a workspace (the L2 does the adds), and the last
of a tile's units to arrive reads the sum and stores C, as split-K does
(``split_reduction.py``). The ring runs on from the tiles into the
units, and nothing of it is added to SMEM.

128 x 192 and 128 x 160 tiles, two column parts
-----------------------------------------------
At 1536 cubed, 3072 cubed and 512 x 6144 every power-of-two tile width makes a ragged wave on
132 SMs (1536 cubed at 128 x 128: 144 tiles, 1.09 waves), where 128 x 192 tiles make 96, 384
and 128 tiles (0.73, 2.91 and 0.97 waves) and 128 x 160 tiles make 120 at 1536 cubed (0.91
wave). Gluon's buffers and tensors have power-of-two shapes, so ``block_n=192`` builds the
tile of a 128- and a 64-column part, ``block_n=160`` of a 128- and a 32-column part
(``gemm_state.column_parts``): each stage holds A and B's two parts, each consumer keeps two
accumulators and issues two products a K step on the same A rows (``common.ring_matmul_pair``,
which the gated MLP's gate and up products share), and C is stored a part at a time. B and C
are copied the narrower part's width at a time, in a layout swizzled over that width's rows
(``common.tile_layout``: 64 bytes for 32 columns). The tree names the parts::

    stage = distinct(b_ring, a_ring, b_tail)
    distinct(distinct(c_tile, c_tail), reuse_group(stage, group_size=NUM_STAGES))

persistent (C beside the ring), or ``shared(...)`` with C over the ring for one tile a CTA.
The tuner tries the tiles of the width whose waves keep the SMs busiest, and only where they
keep them busier than both 128 x 128 and 128 x 256 tiles (``gemm.split_columns_width``): 160
at 1536 cubed, 192 at the other two shapes (``bench/gemm.py --grid``; docs/performance.md).
A 16-column part (144 columns, 132 tiles at 1536 cubed) ran slower than either: its products
of N = 16 read A from SMEM as often as the 128-column part's.

Staggered consumers
-------------------
When every CTA computes one tile, as at 2048 cubed (128 tiles of 128 x 256 on an H200's 132
SMs), all of them store C at the same moment, after their last product: 8 MB written while
the tensor cores idle. ``stagger=S`` (C beside the ring, S <= NUM_STAGES) has the second
consumer leave its last S K steps until the first has finished the tile (``mma_done``, one
arrival a tile, its phase turning from tile to tile): the first consumer has the tensor cores
to itself for those steps, then stores its half of C while the second computes its own. The
ring's last S stages stay loaded meanwhile, which the loader, done with the tile, does not
need. ``bench/gemm.py --stagger`` (H200, Triton 3.6, 200 runs in each of four orders): at
2048 cubed S = 3 takes the persistent kernel from 27.58-27.65 us to 27.17-27.20 in fp16 and
from 26.91-27.01 to 26.46-26.56 in bf16 (cuBLAS 27.20-27.23 and 26.53-26.62). Where a CTA
takes several tiles, the held stages delay its next tile's loads: the time without over the
time with is 0.99 at 4096 cubed, 0.95-0.96 at 1024 x 16384 x 1024 and 0.92 at 8192 x 8192 x
512, and the tuner does not take it there.

Pipelined, one warpgroup
------------------------
``warp_specialize=False`` drops the loader warp and the second consumer: the kernel's one
warpgroup computes the whole 128-row tile (one ``warpgroup_mma`` per K step over all of A's
stage) and issues the TMA copies itself, NUM_STAGES - 1 steps ahead. It refills a stage as
soon as ``warpgroup_mma_wait(1)`` shows that the product which read it has completed, so the
ring needs no ``empty`` barriers, and C may lie over the ring once the last product has
completed. With 128 x 64 tiles it is what the tuner takes at 1024 cubed, where the whole
problem is one wave of 128 CTAs of 16 K steps each: on an H200 (Triton 3.6) it runs 8.0 us
where the warp-specialized kernel with the same tiles runs 8.5 (README, Known limits). Its
first copies go out as soon as their stages' barriers are ready, not after the whole ring's
(eight stages: 8.2 -> 8.0 us). It is not persistent.

Its tile may be 64 rows (``gemm.SKINNY_TILES``: 64 x 64, one warpgroup's MMA rows), twice
the CTAs of 128 x 64 tiles for a product of few rows: at 128 x 4096 x 4096, 64 CTAs of
128 x 64 leave half of an H200's 132 SMs idle, 128 of 64 x 64 fill them, and run it at
1.06-1.09x cuBLAS in GPU time (docs/performance.md, "64-row tiles"). As a user calls it,
the L2 cleared before each call, such a product streams B from DRAM: the rings are deep (up
to 14 stages of 64 K steps, or 7 of 128, 224 KiB in flight a CTA), which took 128 x 4096 x
4096 from 0.94-0.97x cuBLAS as called to 1.06-1.07x ("Deep rings for a cold L2"). The tuner
tries them only where 128 x 64 tiles make fewer CTAs than there are SMs, and split along K
where K is long and they too leave SMs idle: each split adds its partial of the whole tile
into the tile's sum (``split_reduction.py``), and the last to arrive stores C. 128 x 1024 x
4096, 32 tiles split four ways: 0.96-0.97x cuBLAS in GPU time, level as called.

Measured on an H100 with Triton 3.6 (``bench/gemm.py``, M = N = K = 4096 and 8192 and
16384 x 4096 x 4096): 96-99% of cuBLAS (``torch.matmul``) in fp16 and bf16. The fourth stage
gains under 1% over the best configuration without aliasing: at 128 x 256 x 64 steps three
stages already hide most of the load latency. What aliasing buys here is the room.

``main()`` checks the kernel against ``torch.matmul`` and times it on a Hopper GPU; without one
it compiles the kernel for sm_90a and prints the plan it uses (``tlx.kernel_plans``) and what
the same buffers need without aliasing.
"""

import functools
import sys

import torch
import triton
from tlx_kernels.hopper.common import (
    TORCH_TO_TRITON_DTYPE,
    TRITON_DTYPE_BITS,
    print_spec_plan,
    print_without_aliasing,
)
from tlx_kernels.hopper.gemm import (
    autotuned_matmul,
    benchmark_configs,
    chosen_config,
    compile_for_hopper,
    default_config,
    matmul,
    print_autotune_plans,
    smem_plan,
    unaliased_search,
)

# The script ---------------------------------------------------------------------------------

CHECK_SHAPES = [(1000, 1000, 1000), (4096, 4096, 4096), (257, 4095, 129), (130, 300, 8)]
BENCHMARK_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]


def print_smem_plans(dtype="fp16"):
    config = default_config(dtype)
    smem = smem_plan(config, dtype)
    print_spec_plan(f"{dtype}, {config}", smem)
    best, rejected = unaliased_search(dtype)
    print_without_aliasing(smem, rejected)
    best_plan = smem_plan(best, dtype).plan
    print(
        f"    best configuration without aliasing: {best} "
        f"({best_plan.size_bytes} bytes of SMEM region)"
    )


def check_against_torch():
    failures = 0
    for dtype in TORCH_TO_TRITON_DTYPE:
        for config in benchmark_configs(dtype):
            for M, N, K in CHECK_SHAPES:
                torch.manual_seed(M + N + K)
                a = torch.randn(M, K, device="cuda", dtype=dtype)
                b = torch.randn(K, N, device="cuda", dtype=dtype)
                expected = a.float() @ b.float()
                out = matmul(a, b, config).float()
                # Relative to the size of the sums: the output is rounded to 8 or 11 bits.
                error = ((out - expected).abs().max() / expected.abs().max()).item()
                tolerance = 1e-2 if dtype is torch.float16 else 2e-2
                ok = error <= tolerance
                failures += not ok
                print(
                    f"    {TORCH_TO_TRITON_DTYPE[dtype]} stages={config.num_stages} "
                    f"alias_c={config.alias_c!s:5} {M}x{N}x{K}: max relative error "
                    f"{error:.1e} {'ok' if ok else 'FAILED'}"
                )
    return failures


def benchmark():
    print(f"{'M=N=K':>6} {'dtype':>5} {'ours TFLOP/s':>12} {'torch.matmul TFLOP/s':>20}")
    for dtype in TORCH_TO_TRITON_DTYPE:
        for M, N, K in BENCHMARK_SHAPES:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            flops = 2.0 * M * N * K
            ours = triton.testing.do_bench(functools.partial(matmul, a, b), return_mode="median")
            cublas = triton.testing.do_bench(
                functools.partial(torch.matmul, a, b), return_mode="median"
            )
            print(
                f"{M:>6} {TORCH_TO_TRITON_DTYPE[dtype]:>5} {flops / ours * 1e-9:12.1f} "
                f"{flops / cublas * 1e-9:20.1f}"
            )


def check_autotuned():
    """autotuned_matmul against torch at each check shape, with the configuration chosen."""
    failures = 0
    for dtype, name in TORCH_TO_TRITON_DTYPE.items():
        for M, N, K in CHECK_SHAPES:
            torch.manual_seed(M + N + K)
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            expected = a.float() @ b.float()
            out = autotuned_matmul(a, b).float()
            error = ((out - expected).abs().max() / expected.abs().max()).item()
            ok = error <= (1e-2 if dtype is torch.float16 else 2e-2)
            failures += not ok
            print(
                f"    {name} {M}x{N}x{K}: {chosen_config(dtype)}, max relative error "
                f"{error:.1e} {'ok' if ok else 'FAILED'}"
            )
    return failures


def main():
    print("SMEM plan of the kernel for sm_90a (tlx.kernel_plans):")
    print_smem_plans()
    if "--plans" in sys.argv[1:]:
        print("The autotuning space, pruned by the planner before compiling (sm_90a):")
        print_autotune_plans()
        return 0
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9:
        name = torch.cuda.get_device_name()
        print(f"Correctness against torch.matmul (fp32 reference) on {name}:")
        failures = check_against_torch()
        print("Autotuned (tlx.autotune: the configuration chosen for each shape and dtype):")
        failures += check_autotuned()
        print(f"Benchmark on {name} (bench/gemm.py compares more carefully):")
        benchmark()
        return 1 if failures else 0
    print("No Hopper GPU: compiling for sm_90a only.")
    for dtype in TRITON_DTYPE_BITS:
        for config in benchmark_configs(dtype):
            compiled = compile_for_hopper(config, dtype)
            print(
                f"    {dtype} {config}: cubin {len(compiled.asm['cubin'])} bytes, "
                f"{compiled.metadata.shared} bytes of SMEM (region + mbarriers)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
