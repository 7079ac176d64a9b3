"""The Hopper GEMM kernel (sm_90a), C = A @ B: warp-specialized (a loader warp, two consumer
warpgroups), persistent or not, or pipelined in one warpgroup; the A/B ring and the C tile
share one SMEM region planned by tlx. Its design: tutorials/hopper_gemm.py."""

import tlx
from tlx.compat import cta_barrier, tma_load, tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.common import (
    LOADER_REGISTERS,
    accumulator_layout,
    let_dependent_grids_launch,
    partition_registers,
    ring_matmul,
    ring_matmul_pair,
    wait_for_prior_grids,
)
from tlx_kernels.hopper.gemm_state import (
    GemmSchedule,
    GemmState,
    GemmTiles,
    column_parts,
    last_wave,
    split_unit,
)
from tlx_kernels.hopper.split_reduction import split_reduce

# A worker consumer thread's registers: two consumers, one CTA an SM
# (tlx_kernels.hopper.common.partition_registers).
CONSUMER_REGISTERS = gl.constexpr(partition_registers(2)[1])


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


@gluon.constexpr_function
def _tile_columns(b_ring, b_tail):
    """A tile's columns: its B stage's, and its narrower part's if it has one."""
    return b_ring.shape[2] + (0 if b_tail is None else b_tail.shape[2])


@gluon.jit
def _copy_step(desc_a, desc_b, a_ring, b_ring, b_tail, ready, stage, off_m, off_n, k):
    """The TMA copies of K step ``k``'s A and B tiles into stage ``stage`` of the ring, whose
    ``ready`` barrier expects their bytes. A tile of two column parts (``b_tail`` not None)
    copies B a descriptor's box (the narrower part's width) at a time: 128 / that many into
    the 128-column part, one into ``b_tail``; past N the TMA fills zeros and still counts the
    box's bytes."""
    BLOCK_K: gl.constexpr = a_ring.shape[2]
    BOX_N: gl.constexpr = desc_b.block_type.shape[1]
    MAIN_N: gl.constexpr = b_ring.shape[2]
    b_copies: gl.constexpr = MAIN_N // BOX_N + (0 if b_tail is None else 1)
    step_bytes: gl.constexpr = desc_a.block_type.nbytes + b_copies * desc_b.block_type.nbytes
    mbarrier.expect(ready.index(stage), step_bytes)
    tma_load(desc_a, [off_m, k * BLOCK_K], ready.index(stage), a_ring.index(stage))
    if b_tail is None:
        tma_load(desc_b, [k * BLOCK_K, off_n], ready.index(stage), b_ring.index(stage))
    else:
        b_stage = b_ring.index(stage)
        for part in gl.static_range(MAIN_N // BOX_N):
            tma_load(
                desc_b, [k * BLOCK_K, off_n + part * BOX_N], ready.index(stage),
                b_stage.slice(part * BOX_N, BOX_N, dim=1),
            )  # fmt: skip
        tma_load(desc_b, [k * BLOCK_K, off_n + MAIN_N], ready.index(stage), b_tail.index(stage))


@gluon.jit
def _load_tile(state, desc_a, desc_b, off_m, off_n, first_index, k_first, k_steps):
    """The loader's work for one tile: the A and B tiles of K step ``k_first + k`` into the
    ring's stage of index ``first_index + k`` (mod its depth) once both consumers have released
    that stage's previous contents."""
    NUM_STAGES: gl.constexpr = state.a_ring.shape[0]
    for k in range(k_steps):
        index = first_index + k
        stage = index % NUM_STAGES
        # Phase ^ 1: the first pass over the ring finds every stage free.
        mbarrier.wait(state.empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
        _copy_step(
            desc_a, desc_b, state.a_ring, state.b_ring, state.b_tail, state.ready, stage, off_m,
            off_n, k_first + k,
        )  # fmt: skip


@gluon.jit
def _load_partition(state, desc_a, desc_b, schedule):
    """The loader warp: for each of the CTA's tiles (``state.tiles``), then (last-wave
    schedule) each of its split units, its K steps into the next stages of the ring, which
    runs on from one to the next."""
    tiles = state.tiles
    BLOCK_M: gl.constexpr = state.a_ring.shape[1]
    BLOCK_N: gl.constexpr = _tile_columns(state.b_ring, state.b_tail)
    M = tiles.M
    N = tiles.N
    GROUP_M = tiles.GROUP_M
    k_steps = tiles.k_steps
    if schedule.PERSISTENT:
        step = 0
        for tile in range(tiles.first_tile, tiles.end_tile, tiles.tile_step):
            off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
            _load_tile(state, desc_a, desc_b, off_m, off_n, step, 0, k_steps)
            step += k_steps
        if schedule.LAST_WAVE_SPLIT > 1:
            for unit in range(tiles.first_tile, tiles.units, tiles.tile_step):
                tile, _, _, k_first, k_count = split_unit(
                    unit, tiles.end_tile, tiles.ragged, k_steps, schedule.LAST_WAVE_SPLIT
                )
                off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
                _load_tile(state, desc_a, desc_b, off_m, off_n, step, k_first, k_count)
                step += k_count
    else:
        # One tile, from ring index 0: a constant the stage arithmetic folds.
        off_m, off_n = _tile_offsets(tiles.first_tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
        _load_tile(state, desc_a, desc_b, off_m, off_n, 0, tiles.k_first, k_steps)


@gluon.jit
def _mma_tile(
    state, consumer: gl.constexpr, off_m, off_n, first_index, k_steps, tile_phase, schedule,
    slot, SPLITS: gl.constexpr,
):  # fmt: skip
    """One consumer's rows of one tile: its matrix products over the ``k_steps`` ring stages
    of indices ``first_index``, ``first_index + 1``, ..., then its half of the epilogue: C, or
    (SPLITS > 1) its split's partial of the tile of ``slot``, reduced by the last
    of the tile's splits to arrive, which stores C (split_reduction.py). With STAGGER,
    the second consumer computes its last STAGGER K steps only once the first has finished
    the tile (``mma_done`` of phase ``tile_phase``), so that the first one's C store runs
    under them."""
    STAGGER: gl.constexpr = schedule.STAGGER
    a_ring = state.a_ring
    b_ring = state.b_ring
    c_tile = state.c_tile
    ready = state.ready
    empty = state.empty
    mma_done = state.mma_done
    SUB_M: gl.constexpr = c_tile.shape[1] // 2
    BLOCK_N: gl.constexpr = c_tile.shape[2]
    num_warps: gl.constexpr = gl.num_warps()
    acc_layout: gl.constexpr = accumulator_layout(BLOCK_N, num_warps)
    c_half = c_tile.index(0).slice(consumer * SUB_M, SUB_M)
    acc = gl.zeros([SUB_M, BLOCK_N], gl.float32, acc_layout)
    # The tile's last stage is released at the end, so the loader may refill it with the next
    # tile's steps.
    if state.b_tail is not None:
        # Two column parts (Config refuses STAGGER and SPLITS > 1 for them).
        TAIL_N: gl.constexpr = state.b_tail.shape[2]
        tail_layout: gl.constexpr = accumulator_layout(TAIL_N, num_warps)
        acc_tail = gl.zeros([SUB_M, TAIL_N], gl.float32, tail_layout)
        acc, acc_tail = ring_matmul_pair(
            a_ring, b_ring, state.b_tail, ready, empty, acc, acc_tail, first_index, k_steps,
            consumer * SUB_M,
        )  # fmt: skip
    elif STAGGER == 0:
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

    if schedule.ALIAS_C:
        # C lies over A stages the other consumer may still be reading: meet it at mma_done
        # (one arrival per consumer, made once all four warps of this one are past their last
        # wait). A kernel whose C aliases the ring has one tile per CTA.
        cta_barrier()
        mbarrier.arrive(mma_done)
        mbarrier.wait(mma_done, 0)

    if SPLITS > 1:
        # The store only the last of the tile's splits to arrive makes.
        acc, last = split_reduce(acc, state.workspace, state.counters, consumer, slot, SPLITS)
        if last:
            _store_c_half(state.desc_c, c_half, acc, off_m + consumer * SUB_M, off_n)
    else:
        _store_c_half(state.desc_c, c_half, acc, off_m + consumer * SUB_M, off_n)
    if state.b_tail is not None:
        c_tail = state.c_tail.index(0).slice(consumer * SUB_M, SUB_M)
        _store_c_half(state.desc_c, c_tail, acc_tail, off_m + consumer * SUB_M, off_n + BLOCK_N)


@gluon.jit
def _store_c_half(desc_c, c_half, acc, off_m, off_n):
    """``acc`` into this consumer's half of the C tile (or of a column part of it), then to C
    at (off_m, off_n) by TMA, a descriptor's box at a time."""
    BOX_N: gl.constexpr = desc_c.block_type.shape[1]
    WIDTH: gl.constexpr = c_half.shape[1]
    # The previous tile's store has read this half of C.
    tma.store_wait(0)
    c_half.store(acc.to(c_half.dtype))
    fence_async_shared()
    if BOX_N == WIDTH:
        tma_store(desc_c, [off_m, off_n], c_half)
    else:
        for part in gl.static_range(WIDTH // BOX_N):
            tma_store(desc_c, [off_m, off_n + part * BOX_N], c_half.slice(part * BOX_N, BOX_N, 1))


@gluon.jit
def _mma_partition(state, consumer: gl.constexpr, schedule):
    """Rows [consumer * BLOCK_M / 2, (consumer + 1) * BLOCK_M / 2) of each of the CTA's
    tiles, then (last-wave schedule) of each of its split units, one warpgroup: the matrix
    products, then this half of the tile's epilogue."""
    tiles = state.tiles
    M = tiles.M
    N = tiles.N
    GROUP_M = tiles.GROUP_M
    k_steps = tiles.k_steps
    BLOCK_M: gl.constexpr = state.c_tile.shape[1]
    BLOCK_N: gl.constexpr = _tile_columns(state.b_ring, state.b_tail)
    if schedule.PERSISTENT:
        step = 0
        tile_phase = 0
        for tile in range(tiles.first_tile, tiles.end_tile, tiles.tile_step):
            off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
            _mma_tile(state, consumer, off_m, off_n, step, k_steps, tile_phase, schedule, 0, 1)
            step += k_steps
            tile_phase ^= 1
        if schedule.LAST_WAVE_SPLIT > 1:
            for unit in range(tiles.first_tile, tiles.units, tiles.tile_step):
                tile, _, slot, _, k_count = split_unit(
                    unit, tiles.end_tile, tiles.ragged, k_steps, schedule.LAST_WAVE_SPLIT
                )
                off_m, off_n = _tile_offsets(tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
                _mma_tile(
                    state, consumer, off_m, off_n, step, k_count, tile_phase, schedule, slot,
                    schedule.LAST_WAVE_SPLIT,
                )  # fmt: skip
                step += k_count
                tile_phase ^= 1
    else:
        off_m, off_n = _tile_offsets(tiles.first_tile, M, N, GROUP_M, BLOCK_M, BLOCK_N)
        # Split-K: the tile's slot is the tile.
        _mma_tile(
            state, consumer, off_m, off_n, 0, k_steps, 0, schedule, tiles.first_tile,
            schedule.SPLIT_K,
        )  # fmt: skip
    tma.store_wait(0)


@gluon.jit
def _pipelined_tile(
    desc_a, desc_b, desc_c, a_ring, b_ring, c_tile, ready, tiles, workspace, counters, ALIAS_C,
    SPLITS: gl.constexpr,
):  # fmt: skip
    """A whole tile in the kernel's one warpgroup, without warp specialization, over the
    ``tiles.k_steps`` K steps from ``tiles.k_first``: it issues the TMA copies of the first
    NUM_STAGES - 1 K steps, keeps them NUM_STAGES - 1 steps ahead of its matrix products, and
    refills a stage as soon as ``warpgroup_mma_wait(1)`` shows that the product which read it
    has completed. Then C, or (SPLITS > 1, split-K) the split's partial of the whole tile,
    reduced by the last of the tile's splits to arrive, which stores C
    (split_reduction.py)."""
    k_steps = tiles.k_steps
    NUM_STAGES: gl.constexpr = a_ring.shape[0]
    BLOCK_M: gl.constexpr = a_ring.shape[1]
    BLOCK_N: gl.constexpr = b_ring.shape[2]
    off_m, off_n = _tile_offsets(
        tiles.first_tile, tiles.M, tiles.N, tiles.GROUP_M, BLOCK_M, BLOCK_N
    )
    # Each of the first NUM_STAGES - 1 copies is issued as soon as its stage's barrier is
    # initialized and fenced, not after the whole ring's: at 1024 cubed the tile's first loads
    # are on its critical path (0.1-0.2 us of 8, H200).
    for k in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(k), count=1)
        fence_async_shared()
        if k < NUM_STAGES - 1 and k < k_steps:
            _copy_step(
                desc_a, desc_b, a_ring, b_ring, None, ready, k, off_m, off_n, tiles.k_first + k
            )
    acc_layout: gl.constexpr = accumulator_layout(BLOCK_N, gl.num_warps())
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
            _copy_step(
                desc_a, desc_b, a_ring, b_ring, None, ready, refill_stage, off_m, off_n,
                tiles.k_first + refill,
            )  # fmt: skip
    acc = warpgroup_mma_wait(0, deps=[acc])
    if ALIAS_C:
        # C lies over the ring: every copy issued has been waited for, and every product
        # has completed once all four warps are past their last wait.
        cta_barrier()
    if SPLITS > 1:
        # Split-K: the tile's slot is the tile; the split's one partial is the whole tile's.
        acc, last = split_reduce(acc, workspace, counters, 0, tiles.first_tile, SPLITS, True, 1)
        if last:
            _store_c_whole(desc_c, c_tile, acc, off_m, off_n)
    else:
        _store_c_whole(desc_c, c_tile, acc, off_m, off_n)
    tma.store_wait(0)


@gluon.jit
def _store_c_whole(desc_c, c_tile, acc, off_m, off_n):
    """The pipelined kernel's tile ``acc`` into C's SMEM tile, then to C at (off_m, off_n) by
    TMA, a descriptor's block (half of the tile's rows) at a time."""
    BLOCK_M: gl.constexpr = c_tile.shape[1]
    SUB_M: gl.constexpr = desc_c.block_type.shape[0]
    c_whole = c_tile.index(0)
    c_whole.store(acc.to(c_tile.dtype))
    fence_async_shared()
    for half in gl.static_range(BLOCK_M // SUB_M):
        tma_store(desc_c, [off_m + half * SUB_M, off_n], c_whole.slice(half * SUB_M, SUB_M))


@gluon.jit
def _cta_tiles(
    M,
    N,
    K,
    GROUP_M,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    PERSISTENT: gl.constexpr,
    SPLIT_K: gl.constexpr,
    LAST_WAVE_SPLIT: gl.constexpr,
):
    """The tiles this CTA computes (a ``GemmTiles``): its own, (persistent) every
    num_programs-th from it, or (split-K) work unit program_id of every tile's splits
    (``split_unit``). The last-wave schedule's persistent CTA walks the tiles of the whole
    waves so, then every num_programs-th split unit of the ragged tiles from its own
    (``last_wave``)."""
    k_steps = gl.cdiv(K, BLOCK_K)
    first_tile = gl.program_id(0)
    tile_count = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
    if SPLIT_K > 1:
        tile, _, _, k_first, k_steps = split_unit(first_tile, 0, tile_count, k_steps, SPLIT_K)
        tiles = GemmTiles(M, N, GROUP_M, k_steps, tile, tile + 1, 1, k_first, 0, 0)
    elif LAST_WAVE_SPLIT > 1:
        ctas = gl.num_programs(0)
        whole, ragged = last_wave(tile_count, ctas)
        tiles = GemmTiles(
            M, N, GROUP_M, k_steps, first_tile, whole, ctas, 0, ragged, ragged * LAST_WAVE_SPLIT
        )
    elif PERSISTENT:
        tiles = GemmTiles(
            M, N, GROUP_M, k_steps, first_tile, tile_count, gl.num_programs(0), 0, 0, 0
        )
    else:
        tiles = GemmTiles(M, N, GROUP_M, k_steps, first_tile, first_tile + 1, 1, 0, 0, 0)
    return tiles


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
    workspace,
    counters,
    GROUP_M,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    ALIAS_C: gl.constexpr,
    PERSISTENT: gl.constexpr,
    WARP_SPECIALIZE: gl.constexpr,
    STAGGER: gl.constexpr,
    SPLIT_K: gl.constexpr,
    LAST_WAVE_SPLIT: gl.constexpr,
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
    # Split-K: one tile a CTA, each of the tile's splits a CTA of its own.
    gl.static_assert(
        SPLIT_K == 1 or (not PERSISTENT and STAGGER == 0),
        "split-K needs one tile a CTA and no staggered consumers",
    )
    # The last wave's split units follow a persistent CTA's whole tiles.
    gl.static_assert(
        LAST_WAVE_SPLIT == 1 or (PERSISTENT and SPLIT_K == 1),
        "splitting the last wave needs a persistent kernel without split-K",
    )
    gl.static_assert(
        len(column_parts(BLOCK_N)) == 1
        or (WARP_SPECIALIZE and STAGGER == 0 and SPLIT_K == 1 and LAST_WAVE_SPLIT == 1),
        "a tile of two column parts needs warp specialization, no stagger and no split",
    )
    tiles = _cta_tiles(
        M, N, K, GROUP_M, BLOCK_M, BLOCK_N, BLOCK_K, PERSISTENT, SPLIT_K, LAST_WAVE_SPLIT
    )

    dtype: gl.constexpr = desc_a.dtype
    # One SMEM region planned by tlx for the ring and the epilogue tile. The layouts are the
    # descriptors' (``common.tile_layout``), which the TMA and warpgroup_mma both read.
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    # A tile of two column parts (``column_parts``) has a second B ring and C tile, of its
    # narrower part: each buffer of the spec has a power-of-two shape.
    MAIN_N: gl.constexpr = column_parts(BLOCK_N)[0]
    TWO_PARTS: gl.constexpr = MAIN_N != BLOCK_N
    a_ring = tlx.local_alloc(
        (BLOCK_M, BLOCK_K), dtype, NUM_STAGES, reuse=smem, layout=desc_a.layout
    )
    b_ring = tlx.local_alloc((BLOCK_K, MAIN_N), dtype, NUM_STAGES, reuse=smem, layout=desc_b.layout)
    c_tile = tlx.local_alloc((BLOCK_M, MAIN_N), dtype, 1, reuse=smem, layout=desc_c.layout)
    b_tail = None
    c_tail = None
    if TWO_PARTS:
        TAIL_N: gl.constexpr = BLOCK_N - MAIN_N
        b_tail = tlx.local_alloc(
            (BLOCK_K, TAIL_N), dtype, NUM_STAGES, reuse=smem, layout=desc_b.layout
        )
        c_tail = tlx.local_alloc((BLOCK_M, TAIL_N), dtype, 1, reuse=smem, layout=desc_c.layout)
        # A stage: B's parts, then A (the narrower part last, so that each stage's buffers
        # start at multiples of 4 KiB); C: both parts side by side.
        stage = tlx.reuse_group(b_ring, a_ring, b_tail, group_type=tlx.reuse_group_type.distinct)
        c_group = tlx.reuse_group(c_tile, c_tail, group_type=tlx.reuse_group_type.distinct)
        ring = tlx.reuse_group(stage, group_size=NUM_STAGES)
        if ALIAS_C:
            overlap = tlx.reuse_group(c_group, ring, group_type=tlx.reuse_group_type.shared)
        else:
            overlap = tlx.reuse_group(c_group, ring, group_type=tlx.reuse_group_type.distinct)
        smem.set_buffer_overlap(overlap)
    elif ALIAS_C:
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
        # have to skip 16 KiB to start at a multiple of 32 KiB). 256-row tiles have the larger
        # A stages, which go first.
        if BLOCK_M > 128:
            stage = tlx.reuse_group(a_ring, b_ring, group_type=tlx.reuse_group_type.distinct)
        else:
            stage = tlx.reuse_group(b_ring, a_ring, group_type=tlx.reuse_group_type.distinct)
        ring = tlx.reuse_group(stage, group_size=NUM_STAGES)
        smem.set_buffer_overlap(
            tlx.reuse_group(c_tile, ring, group_type=tlx.reuse_group_type.distinct)
        )

    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    # Nothing above reads or writes global memory: launched with programmatic dependent launch
    # (``gemm.LAUNCH_PDL``), the kernel gets this far beside the grid before it. The next
    # grid may start as this one's last CTAs do.
    wait_for_prior_grids()
    let_dependent_grids_launch()
    if not WARP_SPECIALIZE:
        _pipelined_tile(
            desc_a, desc_b, desc_c, a_ring, b_ring, c_tile, ready, tiles, workspace, counters,
            ALIAS_C, SPLIT_K,
        )  # fmt: skip
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

        state = GemmState(
            desc_c, a_ring, b_ring, c_tile, b_tail, c_tail, ready, empty, mma_done.index(0),
            tiles, workspace, counters,
        )  # fmt: skip
        schedule = GemmSchedule(ALIAS_C, PERSISTENT, STAGGER, SPLIT_K, LAST_WAVE_SPLIT)
        gl.warp_specialize(
            [
                (_mma_partition, (state, 0, schedule)),
                (_mma_partition, (state, 1, schedule)),
                (_load_partition, (state, desc_a, desc_b, schedule)),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )
