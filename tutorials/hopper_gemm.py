"""Matrix multiplication C = A @ B for Hopper (sm_90a): Gluon + tlx storage aliasing.

    python tutorials/hopper_gemm.py [--plans]   (PYTHONPATH=language, or the package installed)

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

Measured on an H100 with Triton 3.6 (``bench/gemm.py``, M = N = K = 4096 and 8192 and
16384 x 4096 x 4096): 96-99% of cuBLAS (``torch.matmul``) in fp16 and bf16. The fourth stage
gains under 1% over the best configuration without aliasing: at 128 x 256 x 64 steps three
stages already hide most of the load latency. What aliasing buys here is the room.

``main()`` checks the kernel against ``torch.matmul`` and times it on a Hopper GPU; without one
it compiles the kernel for sm_90a and prints the plan it uses (``tlx.kernel_plans``) and what
the same buffers need without aliasing.
"""

import dataclasses
import functools
import sys

import tlx
import torch
import triton
from hopper_common import (
    LOADER_REGISTERS,
    SM90A,
    TMA_ALIGNMENT,
    TORCH_TO_TRITON_DTYPE,
    TRITON_DTYPE_BITS,
    DirectLaunch,
    partition_registers,
    print_plan_verdicts,
    print_spec_plan,
    print_without_aliasing,
    ring_matmul,
)
from hopper_common import tile_layout as _tile_layout
from hopper_common import tma_operand as _tma_operand
from hopper_common import triton_dtype as _triton_dtype
from tlx.compat import cta_barrier, tma_load, tma_store
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

# Kernel side -------------------------------------------------------------------------------


@gluon.jit
def _tile_offsets(tile, M, N, GROUP_M, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """(first row, first column) of tile ``tile`` of C. Consecutive tiles walk down a group of
    GROUP_M tile rows before moving one tile column right."""
    pid = tile
    tiles_m = gl.cdiv(M, BLOCK_M)
    tiles_n = gl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    first_m = (pid // tiles_per_group) * GROUP_M
    rows_in_group = gl.minimum(tiles_m - first_m, GROUP_M)
    in_group = pid % tiles_per_group
    tile_m = first_m + in_group % rows_in_group
    tile_n = in_group // rows_in_group
    return tile_m * BLOCK_M, tile_n * BLOCK_N


@gluon.jit
def _copy_step(desc_a, desc_b, a_ring, b_ring, ready, stage, off_m, off_n, k):
    """The TMA copies of K step ``k``'s A and B tiles into stage ``stage`` of the ring, whose
    ``ready`` barrier expects their bytes."""
    BLOCK_K: gl.constexpr = a_ring.shape[2]
    step_bytes: gl.constexpr = desc_a.block_type.nbytes + desc_b.block_type.nbytes
    mbarrier.expect(ready.index(stage), step_bytes)
    tma_load(desc_a, [off_m, k * BLOCK_K], ready.index(stage), a_ring.index(stage))
    tma_load(desc_b, [k * BLOCK_K, off_n], ready.index(stage), b_ring.index(stage))


@gluon.jit
def _load_tile(desc_a, desc_b, a_ring, b_ring, ready, empty, off_m, off_n, first_index, k_steps):
    """The loader's work for one tile: the A and B tiles of K step k into the ring's stage of
    index ``first_index + k`` (mod its depth) once both consumers have released that stage's
    previous contents."""
    NUM_STAGES: gl.constexpr = a_ring.shape[0]
    for k in range(k_steps):
        index = first_index + k
        stage = index % NUM_STAGES
        # Phase ^ 1: the first pass over the ring finds every stage free.
        mbarrier.wait(empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
        _copy_step(desc_a, desc_b, a_ring, b_ring, ready, stage, off_m, off_n, k)


@gluon.jit
def _load_partition(
    desc_a,
    desc_b,
    a_ring,
    b_ring,
    ready,
    empty,
    schedule,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    PERSISTENT: gl.constexpr,
):
    """The loader warp: for each of the CTA's tiles (``schedule``), its K steps into the next
    stages of the ring, which runs on from one tile to the next."""
    M, N, GROUP_M, k_steps, first_tile, end_tile, tile_step = schedule
    if PERSISTENT:
        step = 0
        for tile in range(first_tile, end_tile, tile_step):
            off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
            _load_tile(desc_a, desc_b, a_ring, b_ring, ready, empty, off_m, off_n, step, k_steps)
            step += k_steps
    else:
        # One tile, from ring index 0: a constant the stage arithmetic folds.
        off_m, off_n = _tile_offsets(first_tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
        _load_tile(desc_a, desc_b, a_ring, b_ring, ready, empty, off_m, off_n, 0, k_steps)


@gluon.jit
def _mma_tile(
    state,
    consumer: gl.constexpr,
    off_m,
    off_n,
    first_index,
    tile_phase,
    ALIAS_C: gl.constexpr,
    STAGGER: gl.constexpr,
):
    """One consumer's rows of one tile: its matrix products over the ring's stages of indices
    ``first_index``, ``first_index + 1``, ..., then its half of the epilogue. With STAGGER,
    the second consumer computes its last STAGGER K steps only once the first has finished
    the tile (``mma_done`` of phase ``tile_phase``), so that the first one's C store runs
    under them."""
    desc_c, a_ring, b_ring, c_tile, ready, empty, mma_done, schedule = state
    k_steps = schedule[3]
    SUB_M: gl.constexpr = c_tile.shape[1] // 2
    BLOCK_N: gl.constexpr = c_tile.shape[2]
    num_warps: gl.constexpr = gl.num_warps()
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    c_half = c_tile.index(0).slice(consumer * SUB_M, SUB_M)
    acc = gl.zeros([SUB_M, BLOCK_N], gl.float32, acc_layout)
    # The tile's last stage is released at the end, so the loader may refill it with the next
    # tile's steps.
    if STAGGER == 0:
        acc = ring_matmul(a_ring, b_ring, ready, empty, acc, first_index, k_steps, consumer * SUB_M)
    elif consumer == 0:
        acc = ring_matmul(a_ring, b_ring, ready, empty, acc, first_index, k_steps, 0)
        mbarrier.arrive(mma_done)
    else:
        # The stages of the last STAGGER steps stay loaded while this consumer waits: no
        # copy needs them before it releases them (STAGGER <= NUM_STAGES).
        staggered = gl.minimum(k_steps, STAGGER)
        leading = k_steps - staggered
        if leading > 0:
            acc = ring_matmul(a_ring, b_ring, ready, empty, acc, first_index, leading, SUB_M)
        mbarrier.wait(mma_done, tile_phase)
        acc = ring_matmul(
            a_ring, b_ring, ready, empty, acc, first_index + leading, staggered, SUB_M
        )

    if ALIAS_C:
        # C lies over A stages the other consumer may still be reading: meet it at mma_done
        # (one arrival per consumer, made once all four warps of this one are past their last
        # wait). A kernel whose C aliases the ring has one tile per CTA.
        cta_barrier()
        mbarrier.arrive(mma_done)
        mbarrier.wait(mma_done, 0)

    # The previous tile's store has read this half of C.
    tma.store_wait(0)
    c_half.store(acc.to(c_tile.dtype))
    fence_async_shared()
    tma_store(desc_c, [off_m + consumer * SUB_M, off_n], c_half)


@gluon.jit
def _mma_partition(
    state,
    consumer: gl.constexpr,
    ALIAS_C: gl.constexpr,
    PERSISTENT: gl.constexpr,
    STAGGER: gl.constexpr,
):
    """Rows [consumer * BLOCK_M / 2, (consumer + 1) * BLOCK_M / 2) of each of the CTA's
    tiles, one warpgroup: the matrix products, then this half of the tile's epilogue.
    ``state`` holds the tensors and buffers both consumers take (the kernel's
    ``consumer_state``)."""
    c_tile = state[3]
    M, N, GROUP_M, k_steps, first_tile, end_tile, tile_step = state[7]
    BLOCK_M: gl.constexpr = c_tile.shape[1]
    BLOCK_N: gl.constexpr = c_tile.shape[2]
    if PERSISTENT:
        step = 0
        tile_phase = 0
        for tile in range(first_tile, end_tile, tile_step):
            off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
            _mma_tile(state, consumer, off_m, off_n, step, tile_phase, ALIAS_C, STAGGER)
            step += k_steps
            tile_phase ^= 1
    else:
        off_m, off_n = _tile_offsets(first_tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
        _mma_tile(state, consumer, off_m, off_n, 0, 0, ALIAS_C, STAGGER)
    tma.store_wait(0)


@gluon.jit
def _pipelined_tile(
    desc_a, desc_b, desc_c, a_ring, b_ring, c_tile, ready, off_m, off_n, k_steps, ALIAS_C
):
    """A whole tile in the kernel's one warpgroup, without warp specialization: the kernel has
    issued the TMA copies of its first NUM_STAGES - 1 K steps; this keeps them NUM_STAGES - 1
    steps ahead of its matrix products, and refills a stage as soon as
    ``warpgroup_mma_wait(1)`` shows that the product which read it has completed."""
    NUM_STAGES: gl.constexpr = a_ring.shape[0]
    BLOCK_M: gl.constexpr = a_ring.shape[1]
    BLOCK_N: gl.constexpr = b_ring.shape[2]
    SUB_M: gl.constexpr = desc_c.block_type.shape[0]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BLOCK_N, 16]
    )
    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, acc_layout)
    for k in range(k_steps):
        stage = k % NUM_STAGES
        mbarrier.wait(ready.index(stage), (k // NUM_STAGES) & 1)
        acc = warpgroup_mma(a_ring.index(stage), b_ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=[acc])
        # Step k - 1's product has read its stage, which takes step k + NUM_STAGES - 1.
        refill = k + NUM_STAGES - 1
        if refill < k_steps:
            refill_stage = refill % NUM_STAGES
            _copy_step(desc_a, desc_b, a_ring, b_ring, ready, refill_stage, off_m, off_n, refill)
    acc = warpgroup_mma_wait(0, deps=[acc])
    if ALIAS_C:
        # C lies over the ring: every copy issued has been waited for, and every product
        # has completed once all four warps are past their last wait.
        cta_barrier()
    c_whole = c_tile.index(0)
    c_whole.store(acc.to(c_tile.dtype))
    fence_async_shared()
    # The C descriptor's block is half a tile (a warp-specialized consumer's rows).
    for half in gl.static_range(BLOCK_M // SUB_M):
        tma_store(desc_c, [off_m + half * SUB_M, off_n], c_whole.slice(half * SUB_M, SUB_M))
    tma.store_wait(0)


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
# GROUP_M only orders the tiles: as an argument, the tuner's GROUP_M variants of a
# configuration share one compiled kernel.
@tlx.jit(do_not_specialize=["M", "N", "K", "GROUP_M"])
def gemm_kernel(
    desc_a,
    desc_b,
    desc_c,
    M,
    N,
    K,
    GROUP_M,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    ALIAS_C: gl.constexpr,
    PERSISTENT: gl.constexpr,
    WARP_SPECIALIZE: gl.constexpr,
    STAGGER: gl.constexpr,
):
    # A persistent CTA's next tile loads into the ring while this one's C is stored: C cannot
    # lie over the ring then.
    gl.static_assert(not (PERSISTENT and ALIAS_C), "a persistent kernel's C cannot alias the ring")
    gl.static_assert(
        WARP_SPECIALIZE or not PERSISTENT, "a kernel without warp specialization is not persistent"
    )
    # The first consumer stores C while the second still reads the ring, whose last STAGGER
    # stages stay loaded until then.
    gl.static_assert(
        STAGGER == 0 or (WARP_SPECIALIZE and not ALIAS_C and STAGGER <= NUM_STAGES),
        "staggered consumers need warp specialization, C beside the ring and STAGGER <= NUM_STAGES",
    )
    k_steps = gl.cdiv(K, BLOCK_K)
    # The tiles this CTA computes: its own, or (persistent) every num_programs-th from it.
    first_tile = gl.program_id(0)
    if PERSISTENT:
        end_tile = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
        tile_step = gl.num_programs(0)
    else:
        end_tile = first_tile + 1
        tile_step = 1
    schedule = (M, N, GROUP_M, k_steps, first_tile, end_tile, tile_step)

    dtype: gl.constexpr = desc_a.dtype
    # One SMEM region planned by tlx for the ring and the epilogue tile. The layouts are the
    # descriptors' (128-byte swizzle), which the TMA and warpgroup_mma both read.
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a_ring = tlx.local_alloc(
        (BLOCK_M, BLOCK_K), dtype, NUM_STAGES, reuse=smem, layout=desc_a.layout
    )
    b_ring = tlx.local_alloc(
        (BLOCK_K, BLOCK_N), dtype, NUM_STAGES, reuse=smem, layout=desc_b.layout
    )
    c_tile = tlx.local_alloc((BLOCK_M, BLOCK_N), dtype, 1, reuse=smem, layout=desc_c.layout)
    if ALIAS_C:
        # The ring is one buffer group (a0 a1 a2 a3 b0 b1 b2 b3) and C, born after the ring's
        # last use, takes its first bytes.
        ring = tlx.reuse_group(
            tlx.reuse_group(a_ring, b_ring, group_type=tlx.reuse_group_type.distinct),
            group_size=NUM_STAGES,
        )
        smem.set_buffer_overlap(
            tlx.reuse_group(c_tile, ring, group_type=tlx.reuse_group_type.shared)
        )
    else:
        # Nothing shares bytes. C, then the B stages, then the A stages: each buffer starts at
        # a multiple of its own size without padding (after C and three A stages, B would
        # have to skip 16 KiB to start at a multiple of 32 KiB).
        ring = tlx.reuse_group(
            tlx.reuse_group(b_ring, a_ring, group_type=tlx.reuse_group_type.distinct),
            group_size=NUM_STAGES,
        )
        smem.set_buffer_overlap(
            tlx.reuse_group(c_tile, ring, group_type=tlx.reuse_group_type.distinct)
        )

    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    if not WARP_SPECIALIZE:
        # Each of the first NUM_STAGES - 1 copies is issued as soon as its stage's barrier is
        # initialized and fenced, not after the whole ring's: at 1024 cubed the tile's first
        # loads are on its critical path (0.1-0.2 us of 8, H200).
        off_m, off_n = _tile_offsets(first_tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
        for k in gl.static_range(NUM_STAGES):
            mbarrier.init(ready.index(k), count=1)
            fence_async_shared()
            if k < NUM_STAGES - 1 and k < k_steps:
                _copy_step(desc_a, desc_b, a_ring, b_ring, ready, k, off_m, off_n, k)
        _pipelined_tile(
            desc_a, desc_b, desc_c, a_ring, b_ring, c_tile, ready, off_m, off_n, k_steps, ALIAS_C
        )
    else:
        for i in gl.static_range(NUM_STAGES):
            mbarrier.init(ready.index(i), count=1)
        empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
        mma_done = gl.allocate_shared_memory(gl.int64, [1, 1], bar_layout)
        for i in gl.static_range(NUM_STAGES):
            mbarrier.init(empty.index(i), count=2)
        # C over the ring: both consumers' products are complete. Staggered: the first
        # consumer's are.
        mbarrier.init(mma_done.index(0), count=2 if ALIAS_C else 1)
        fence_async_shared()

        # Both consumers take these (a tuple held in a variable keeps tensors only, so the
        # constexprs go in each call).
        consumer_state = (
            desc_c,
            a_ring,
            b_ring,
            c_tile,
            ready,
            empty,
            mma_done.index(0),
            schedule,
        )
        gl.warp_specialize(
            [
                (
                    _mma_partition,
                    (consumer_state, 0, ALIAS_C, PERSISTENT, STAGGER),
                ),
                (
                    _mma_partition,
                    (consumer_state, 1, ALIAS_C, PERSISTENT, STAGGER),
                ),
                (
                    _load_partition,
                    (
                        desc_a,
                        desc_b,
                        a_ring,
                        b_ring,
                        ready,
                        empty,
                        schedule,
                        BLOCK_M,
                        BLOCK_N,
                        PERSISTENT,
                    ),
                ),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )


# Host side ---------------------------------------------------------------------------------

_TORCH_DTYPE = {name: dtype for dtype, name in TORCH_TO_TRITON_DTYPE.items()}
# The default partition is one consumer warpgroup; the other consumer (4 warps) and the loader
# (1 warp) are workers. Without warp specialization the 4 warps are the kernel's one warpgroup.
COMPILE_OPTIONS = {"num_warps": 4}
# A worker consumer thread's registers: two consumers, one CTA an SM
# (hopper_common.partition_registers).
CONSUMER_REGISTERS = gl.constexpr(partition_registers(2)[1])


@dataclasses.dataclass(frozen=True)
class Config:
    """Tile sizes and schedule of one compiled kernel. BLOCK_M is split between the two
    consumer warpgroups, so BLOCK_M / 2 must be a multiple of 64 (one warpgroup's MMA rows)."""

    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    alias_c: bool
    group_m: int = 8
    persistent: bool = False
    warp_specialize: bool = True
    stagger: int = 0

    def __post_init__(self):
        if self.persistent and self.alias_c:
            raise ValueError(
                "a persistent kernel loads a CTA's next tile while it stores C: C cannot alias "
                "the ring (alias_c=False)"
            )
        if self.persistent and not self.warp_specialize:
            raise ValueError(
                "a persistent kernel loads a CTA's next tile in a loader warp while the "
                "consumers store C: it needs warp_specialize=True"
            )
        if self.stagger < 0:
            raise ValueError(f"stagger={self.stagger}: a number of K steps, 0 or more")
        if self.stagger and (self.alias_c or not self.warp_specialize):
            raise ValueError(
                f"stagger={self.stagger}: the first consumer stores its half of C while the "
                "second still reads the ring, so staggered consumers need warp_specialize=True "
                "and C beside the ring (alias_c=False)"
            )
        if self.stagger > self.num_stages:
            raise ValueError(
                f"stagger={self.stagger} > num_stages={self.num_stages}: the ring must hold the "
                "stages of every K step the second consumer leaves until the first is done"
            )

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def __repr__(self):
        persistent = " persistent" if self.persistent else ""
        pipelined = "" if self.warp_specialize else " pipelined"
        stagger = f" stagger={self.stagger}" if self.stagger else ""
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_K={self.block_k} "
            f"stages={self.num_stages} alias_c={self.alias_c} GROUP_M={self.group_m}"
            f"{persistent}{pipelined}{stagger}"
        )


def default_config(dtype="fp16"):
    """128 x 256 x 64 tiles and four stages, with C aliasing the ring (the same for fp16 and
    bf16: both are 16 bits wide). Measured on an H100 against it: GROUP_M = 16 within 0.3%,
    GROUP_M = 4 up to 3% slower, BLOCK_K = 128 with two stages 30% slower."""
    _triton_dtype(dtype)
    return Config(128, 256, 64, 4, alias_c=True)


@functools.cache
def unaliased_search(dtype="fp16"):
    """The default configuration without aliasing, tried with fewer and fewer stages. Returns
    (the first whose kernel compiles, ((configuration, error message), ...) for those that do
    not: their region does not fit, and the planner's message states the bytes it needs)."""
    base = default_config(dtype)
    rejected = []
    for num_stages in range(base.num_stages, 0, -1):
        config = base.replace(num_stages=num_stages, alias_c=False)
        try:
            smem_plan(config, dtype)
        except CompilationError as error:
            if num_stages == 1:
                raise
            rejected.append((config, error.error_message))
        else:
            return config, tuple(rejected)


def best_unaliased_config(dtype="fp16"):
    """The default configuration without aliasing, with as many stages as the planner fits."""
    return unaliased_search(dtype)[0]


def benchmark_configs(dtype="fp16"):
    """(with aliasing, best without aliasing)."""
    return default_config(dtype), best_unaliased_config(dtype)


@functools.cache
def _block_shapes(config):
    """Block shapes of the A, B and C descriptors: C is stored a consumer's half at a time."""
    return (
        [config.block_m, config.block_k],
        [config.block_k, config.block_n],
        [config.block_m // 2, config.block_n],
    )


def kernel_source(config, dtype="fp16"):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    dtype = _triton_dtype(dtype)
    layout = _tile_layout(TRITON_DTYPE_BITS[dtype])
    arguments = constexprs(config)
    descriptors = {
        name: f"tensordesc<{dtype}[{shape[0]},{shape[1]}],{layout!r}>"
        for name, shape in zip(("desc_a", "desc_b", "desc_c"), _block_shapes(config), strict=True)
    }
    signature = {
        **descriptors,
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "GROUP_M": "i32",
        **dict.fromkeys(arguments, "constexpr"),
    }
    return tlx.ASTSource(fn=gemm_kernel, signature=signature, constexprs=arguments)


def compile_for_hopper(config, dtype="fp16"):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return triton.compile(kernel_source(config, dtype), target=SM90A, options=COMPILE_OPTIONS)


def smem_plan(config, dtype="fp16"):
    """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) as tlx makes it when the kernel
    is compiled for sm_90a with ``config``: ``tlx.kernel_plans`` traces the kernel (no GPU, no
    PTX). A configuration that does not fit raises the CompilationError compiling it raises."""
    (smem,) = tlx.kernel_plans(kernel_source(config, dtype), target=SM90A, options=COMPILE_OPTIONS)
    return smem


def _check_inputs(a, b):
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a must be [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a.dtype != b.dtype or a.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(f"a and b must both be float16 or bfloat16, got {a.dtype} and {b.dtype}")


def _operands(a, b):
    """(a, b, c, (M, N, K)): the operands as the TMA can address them and the output, or c
    None when the product is empty."""
    _check_inputs(a, b)
    if not (a.is_cuda and b.is_cuda):
        raise ValueError(f"a and b must be CUDA tensors, got {a.device} and {b.device}")
    (M, K), N = a.shape, b.shape[1]
    if M == 0 or N == 0 or K == 0:
        return a, b, None, (M, N, K)
    return _tma_operand(a), _tma_operand(b), _tma_operand(a.new_empty(M, N)), (M, N, K)


def matmul(a, b, config=None):
    """a @ b for CUDA tensors a [M, K] and b [K, N] of one dtype (float16 or bfloat16),
    accumulated in float32; the result has the inputs' dtype. Operands whose rows the TMA
    cannot address (a row not a multiple of 16 bytes) are first copied into padded rows."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    a, b, c, (M, N, K) = _operands(a, b)
    if c is None:
        return torch.zeros(M, N, device=a.device, dtype=a.dtype)
    config = config or default_config(a.dtype)
    layout = _tile_layout(a.element_size() * 8)
    block_a, block_b, block_c = _block_shapes(config)
    desc_a = TensorDescriptor.from_tensor(a, block_a, layout)
    desc_b = TensorDescriptor.from_tensor(b, block_b, layout)
    desc_c = TensorDescriptor.from_tensor(c, block_c, layout)
    grid = _launch_grid(M, N, config, a.device)
    gemm_kernel[grid](
        desc_a, desc_b, desc_c, M, N, K, **config_arguments(config), **COMPILE_OPTIONS
    )
    return c if c.is_contiguous() else c.contiguous()


@functools.cache
def _sm_count(device):
    return torch.cuda.get_device_properties(device).multi_processor_count


def _launch_grid(M, N, config, device):
    """One CTA per tile of C, or (persistent) one per SM while there are more tiles."""
    tiles = triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n)
    return (min(tiles, _sm_count(device)) if config.persistent else tiles,)


# Autotuning ---------------------------------------------------------------------------------


def autotune_configs():
    """The space ``autotuned_matmul`` searches (tlx.autotune): 64, 128 or 256 columns per
    tile (a narrow tile gives a small matrix more CTAs), 2 to 6 stages (to 8 for 64 columns,
    which the tuner takes at 1024 cubed: a short K loop, whose fill a deep ring hides), C over
    the ring or beside it, persistent kernels (C beside the ring) whose next tile loads while
    this one's C is stored, and for the 256-column tiles, whose order decides most what L2
    holds, groups of 4, 8 or 16 tile rows (GROUP_M is an argument: the variants share one
    compiled kernel), and 64-column tiles without warp specialization (K steps of 64 with 4,
    6 or 8 stages, or of 128 with 4; C over the ring or beside it), which the tuner takes at
    1024 cubed; and for the 256-column tiles with C beside a ring of 2 or 3 stages, the
    same with staggered consumers over the whole ring (what the tuner takes at 2048 cubed).
    The planner drops, before compiling, the 24 of 87 whose SMEM does not fit: 256 columns
    fit 3 stages with C beside the ring and 4 with C over it (a tiles-times-stages formula
    would drop that one too); 64 and 128 columns fit all their stages."""
    configs = [
        Config(128, block_n, 64, stages, alias_c)
        for block_n in (64, 128, 256)
        for stages in range(2, 9 if block_n == 64 else 7)
        for alias_c in (True, False)
    ]
    configs += [
        Config(128, block_n, 64, stages, alias_c=False, persistent=True)
        for block_n in (128, 256)
        for stages in (3, 4, 5, 6)
    ]
    configs += [
        config.replace(stagger=config.num_stages)
        for config in configs
        if config.block_n == 256 and not config.alias_c and config.num_stages <= 3
    ]
    configs += [
        config.replace(group_m=group_m)
        for config in configs
        if config.block_n == 256
        for group_m in (4, 16)
    ]
    configs += [
        Config(128, 64, block_k, stages, alias_c, warp_specialize=False)
        for block_k, stages in ((64, 4), (64, 6), (64, 8), (128, 4))
        for alias_c in (True, False)
    ]
    return [
        triton.Config(config_arguments(config), pre_hook=_set_block_shapes, **COMPILE_OPTIONS)
        for config in configs
    ]


def constexprs(config):
    """The kernel's constexpr arguments for ``config``."""
    return {
        "BLOCK_M": config.block_m,
        "BLOCK_N": config.block_n,
        "BLOCK_K": config.block_k,
        "NUM_STAGES": config.num_stages,
        "ALIAS_C": config.alias_c,
        "PERSISTENT": config.persistent,
        "WARP_SPECIALIZE": config.warp_specialize,
        "STAGGER": config.stagger,
    }


def config_arguments(config):
    """Every kernel argument ``config`` sets (a ``triton.Config``'s kwargs): GROUP_M, then
    the constexprs, in the kernel's order."""
    return {"GROUP_M": config.group_m, **constexprs(config)}


def config_of(arguments):
    """The ``Config`` of the kernel's constexpr arguments (a ``triton.Config``'s kwargs, or
    the arguments the autotuner hands a hook)."""
    arguments = getattr(arguments, "kwargs", arguments)
    return Config(
        arguments["BLOCK_M"],
        arguments["BLOCK_N"],
        arguments["BLOCK_K"],
        arguments["NUM_STAGES"],
        arguments["ALIAS_C"],
        arguments["GROUP_M"],
        arguments["PERSISTENT"],
        arguments["WARP_SPECIALIZE"],
        arguments["STAGGER"],
    )


def _set_block_shapes(arguments):
    """The configuration's tiles on the descriptors: the autotuner runs this before each
    launch, and the plan pruner before it types the arguments."""
    shapes = _block_shapes(config_of(arguments))
    for name, shape in zip(("desc_a", "desc_b", "desc_c"), shapes, strict=True):
        arguments[name].block_shape = list(shape)


@functools.cache
def autotuned_kernel(dtype):
    """The kernel under ``tlx.autotune`` for one dtype, keyed on the shape (the dtype has a
    tuner of its own)."""
    _triton_dtype(dtype)
    return tlx.autotune(configs=autotune_configs(), key=["M", "N", "K"])(gemm_kernel)


def _grid(meta):
    return _launch_grid(meta["M"], meta["N"], config_of(meta), meta["desc_a"].base.device)


# (device, dtypes, shapes) -> hopper_common.DirectLaunch, and dtype -> the configuration last
# run.
_launches = {}
_last_config = {}


def _direct_operand(t):
    """True when ``t`` is a CUDA matrix the TMA addresses as it is: contiguous rows of a
    multiple of 16 bytes, from a 16-byte aligned start."""
    return (
        t.is_cuda
        and t.is_contiguous()
        and (t.shape[1] * t.element_size()) % TMA_ALIGNMENT == 0
        and t.data_ptr() % TMA_ALIGNMENT == 0
    )


def tuner_arguments(a, b):
    """(c, the kernel's arguments for c = a @ b under the tuner: descriptors whose block
    shapes each configuration's pre_hook sets, M, N, K); the arguments are None when the
    product is empty, and c is then its zeros."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    a, b, c, (M, N, K) = _operands(a, b)
    if c is None:
        return torch.zeros(M, N, device=a.device, dtype=a.dtype), None
    layout = _tile_layout(a.element_size() * 8)
    descriptors = (
        TensorDescriptor.from_tensor(t, shape, layout)
        for t, shape in zip((a, b, c), _block_shapes(default_config()), strict=True)
    )
    return c, (*descriptors, M, N, K)


def _launch_key(a, b):
    return (a.device, a.dtype, b.dtype, *a.shape, *b.shape)


def direct_launch(a, b):
    """The ``hopper_common.DirectLaunch`` of ``a @ b``'s tuned key, when the key is tuned and
    the TMA addresses ``a`` and ``b`` as they are; else None."""
    launch = _launches.get(_launch_key(a, b))
    if launch is not None and _direct_operand(a) and _direct_operand(b):
        return launch
    return None


def compiled_launch(kernel, a, b, config):
    """The ``hopper_common.DirectLaunch`` of ``kernel`` (``compile_for_hopper(config, ...)``'s)
    for products of ``a``'s and ``b``'s shapes and dtype, which the TMA addresses as they
    are."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    M, K = a.shape
    N = b.shape[1]
    layout = _tile_layout(a.element_size() * 8)
    c = torch.empty(M, N, device=a.device, dtype=a.dtype)
    descriptors = [
        TensorDescriptor.from_tensor(t, shape, layout)
        for t, shape in zip((a, b, c), _block_shapes(config), strict=True)
    ]
    return DirectLaunch.of_compiled(
        kernel,
        gemm_kernel,
        config,
        _launch_grid(M, N, config, a.device),
        descriptors,
        (M, N, K),
        {**config_arguments(config), **COMPILE_OPTIONS},
    )


def autotuned_matmul(a, b):
    """``matmul`` with the configuration tlx.autotune finds fastest for the shape and dtype
    (the first call of a shape times every configuration that fits, later ones launch the
    chosen kernel directly)."""
    launch = direct_launch(a, b)
    if launch is not None:
        _last_config[a.dtype] = launch.config
        M, K = a.shape
        N = b.shape[1]
        c = a.new_empty((M, N))
        launch((a, b, c), (M, N, K))
        return c

    c, arguments = tuner_arguments(a, b)
    if arguments is None:
        return c
    desc_a, desc_b, desc_c, M, N, K = arguments
    tuner = autotuned_kernel(_triton_dtype(a.dtype))
    tuner[_grid](*arguments)
    config = config_of(tuner.best_config)
    _last_config[a.dtype] = config
    key = _launch_key(a, b)
    if key not in _launches and c.is_contiguous():
        _launches[key] = DirectLaunch.compile(
            gemm_kernel,
            config,
            _launch_grid(M, N, config, a.device),
            (desc_a, desc_b, desc_c),
            (M, N, K),
            {**config_arguments(config), **COMPILE_OPTIONS},
        )
    return c if c.is_contiguous() else c.contiguous()


def chosen_config(dtype):
    """The configuration the last ``autotuned_matmul`` of ``dtype`` ran (a ``Config``)."""
    return _last_config[dtype if isinstance(dtype, torch.dtype) else _TORCH_DTYPE[dtype]]


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the space, on the CPU."""
    pruner = tlx.PlanPruner(gemm_kernel, target=SM90A)
    t = torch.empty(16, 16, dtype=torch.float16 if dtype == "fp16" else torch.bfloat16)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    layout = _tile_layout(16)
    arguments = {
        name: TensorDescriptor(t, [4096, 4096], [4096, 1], list(shape), layout)
        for name, shape in zip(
            ("desc_a", "desc_b", "desc_c"), _block_shapes(default_config()), strict=True
        )
    }
    arguments.update(M=4096, N=4096, K=4096)
    print_plan_verdicts(pruner, autotune_configs(), arguments, config_of)


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
