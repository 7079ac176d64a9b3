"""The Hopper fused MLP kernel (sm_90a), Y = act(X @ W1) @ W2 in two phases per hidden chunk,
whose rings share SMEM per stage ("shared"), not at all ("separate") or as whole rings
drained at each change of phase ("phases"); with HIDDEN_SPLITS > 1 the hidden chunks of a tile
of Y are split among as many CTAs, whose partial Ys the last to arrive sums
(tlx_kernels.hopper.split_reduction). Its design: tutorials/hopper_fused_mlp.py."""

import tlx
from tlx.compat import tma_load, tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.common import LOADER_REGISTERS, partition_registers, ring_matmul
from tlx_kernels.hopper.fused_mlp_state import MlpSchedule, MlpState
from tlx_kernels.hopper.gemm_state import split_unit
from tlx_kernels.hopper.split_reduction import split_reduce

# A worker consumer thread's registers: two consumers, one CTA an SM
# (tlx_kernels.hopper.common.partition_registers).
CONSUMER_REGISTERS = gl.constexpr(partition_registers(2)[1])

# GELU(h) with the tanh approximation, 0.5 h (1 + tanh(c (h + 0.044715 h^3))), c = sqrt(2/pi),
# the tanh by one tanh.approx.f32: one operation of the SMs' special-function units an
# element, where h * sigmoid(2 c (...)) took two (an ex2 and the quotient's reciprocal). Those
# units retire 16 results a clock an SM: at d_model 128, two an element of H took as long as
# its share of the tensor cores' products (tokens x hidden elements against
# 4 x tokens x 128 x hidden FLOPs).
_GELU_SCALE = gl.constexpr(0.7978845608028654)
_GELU_CUBIC_SCALE = gl.constexpr(0.7978845608028654 * 0.044715)


@gluon.jit
def _tanh(x):
    """tanh(x) by the special-function unit, to a relative error of about 2^-11: the size of
    fp16's rounding of H, to which the activation is rounded."""
    return gl.inline_asm_elementwise(
        "tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=gl.float32, is_pure=True, pack=1
    )


@gluon.jit
def _activation(h, ACTIVATION: gl.constexpr, dtype: gl.constexpr):
    """act(h) elementwise, "gelu" (tanh approximation) or "relu", rounded to ``dtype``."""
    if ACTIVATION == "relu":
        out = gl.maximum(h, 0.0)
    else:
        half = 0.5 * h
        out = half + half * _tanh(h * (_GELU_SCALE + _GELU_CUBIC_SCALE * h * h))
    return out.to(dtype)


@gluon.jit
def _ring_index(own_steps, other_steps, SHARED_RING: gl.constexpr):
    """The ring index of a phase's next step: its own step count when each phase has its own
    ring, the count of both phases' steps when they share one."""
    index = own_steps
    if SHARED_RING:
        index = own_steps + other_steps
    return index


@gluon.jit
def _load_partition(state, desc_x, desc_w1, desc_w2, schedule):
    """The loader warp: per hidden chunk, the X and W1 tiles of each d_model step into the
    phase-1 ring, then the chunk's W2 tile into the phase-2 ring (with ``SHARED_RING`` both are
    the one ring, and the steps take its stages in that order), each once both consumers
    released the stage's previous contents. With ``DRAIN`` (``layout="phases"``) it also
    drains the ring at each change of phase: the chunk's W2 load waits until the consumers
    released every X/W1 step of the chunk, and the next chunk's X/W1 loads until they
    released its W2 tile."""
    BLOCK_K: gl.constexpr = schedule.BLOCK_K
    SHARED_RING: gl.constexpr = schedule.SHARED_RING
    DRAIN: gl.constexpr = schedule.DRAIN
    x_ring = state.x_ring
    w1_ring = state.w1_ring
    w2_ring = state.w2_ring
    ready1 = state.ready1
    empty1 = state.empty1
    ready2 = state.ready2
    empty2 = state.empty2
    off_m = state.off_m
    off_n = state.off_n
    k_steps = state.k_steps
    STAGES1: gl.constexpr = x_ring.shape[0]
    STAGES2: gl.constexpr = w2_ring.shape[0]
    BLOCK_H: gl.constexpr = w2_ring.shape[1]
    step1_bytes: gl.constexpr = desc_x.block_type.nbytes + desc_w1.block_type.nbytes
    steps1 = 0
    steps2 = 0
    for chunk in range(state.chunks):
        off_h = (state.first_chunk + chunk) * BLOCK_H
        for k in range(k_steps):
            index = _ring_index(steps1, steps2, SHARED_RING)
            stage = index % STAGES1
            # Phase ^ 1: the first pass over the ring finds every stage free.
            mbarrier.wait(empty1.index(stage), ((index // STAGES1) & 1) ^ 1)
            mbarrier.expect(ready1.index(stage), step1_bytes)
            tma_load(desc_x, [off_m, k * BLOCK_K], ready1.index(stage), x_ring.index(stage))
            tma_load(desc_w1, [k * BLOCK_K, off_h], ready1.index(stage), w1_ring.index(stage))
            steps1 += 1
        if DRAIN:
            # The W2 ring lies over any bytes of the X/W1 ring: every X/W1 step of the chunk
            # released. Each consumer releases its steps in order (_mma_partition), so the
            # barrier phase of the last one (step j completes the phase of parity
            # (j // STAGES1) & 1 of its stage) completes after all the others.
            last1 = steps1 - 1
            mbarrier.wait(empty1.index(last1 % STAGES1), (last1 // STAGES1) & 1)
        index = _ring_index(steps2, steps1, SHARED_RING)
        stage = index % STAGES2
        mbarrier.wait(empty2.index(stage), ((index // STAGES2) & 1) ^ 1)
        mbarrier.expect(ready2.index(stage), desc_w2.block_type.nbytes)
        tma_load(desc_w2, [off_h, off_n], ready2.index(stage), w2_ring.index(stage))
        steps2 += 1
        if DRAIN:
            # The next chunk's X and W1 tiles lie over any bytes of the W2 ring: the chunk's
            # one W2 step released.
            last2 = steps2 - 1
            mbarrier.wait(empty2.index(last2 % STAGES2), (last2 // STAGES2) & 1)


@gluon.jit
def _mma_partition(state, consumer: gl.constexpr, schedule):
    """One consumer warpgroup: its half of the CTA's tile of Y (``_consume_rows``, or with
    BLOCK_M = 64 ``_consume_columns``), then stored, or with HIDDEN_SPLITS > 1 its partial Y
    summed with the other splits' and stored by the last of them to arrive."""
    y_tile = state.y_tiles.index(consumer)
    if schedule.COLUMN_SPLIT:
        acc_y = _consume_columns(state, consumer, schedule)
        off_m = state.off_m
        off_n = state.off_n + consumer * y_tile.shape[1]
    else:
        acc_y = _consume_rows(state, consumer, schedule)
        off_m = state.off_m + consumer * y_tile.shape[0]
        off_n = state.off_n
    if schedule.HIDDEN_SPLITS > 1:
        acc_y, last = split_reduce(
            acc_y, state.workspace, state.counters, consumer, state.slot, schedule.HIDDEN_SPLITS
        )
        if last:
            _store_y(state.desc_y, y_tile, acc_y, off_m, off_n)
    else:
        _store_y(state.desc_y, y_tile, acc_y, off_m, off_n)


@gluon.jit
def _consume_rows(state, consumer: gl.constexpr, schedule):
    """Rows [consumer * SUB_M, (consumer + 1) * SUB_M) of the CTA's tile of Y, per hidden
    chunk: its rows of H (phase 1), act, H to its H tile, its rows of Y += H @ W2 (phase 2).
    Y is then written over its own H tile (one shared group per consumer), whose last reader,
    the last phase-2 product, completed."""
    SHARED_RING: gl.constexpr = schedule.SHARED_RING
    SUB_M: gl.constexpr = state.h_tiles.shape[1]
    BLOCK_H: gl.constexpr = state.h_tiles.shape[2]
    BLOCK_N: gl.constexpr = state.y_tiles.shape[2]
    h_layout: gl.constexpr = _accumulator_layout(BLOCK_H, gl.num_warps())
    h_tile = state.h_tiles.index(consumer)
    acc_y = gl.zeros([SUB_M, BLOCK_N], gl.float32, _accumulator_layout(BLOCK_N, gl.num_warps()))
    steps1 = 0
    steps2 = 0
    for _chunk in range(state.chunks):
        # Phase 1: this consumer's rows of the chunk of H.
        acc_h = gl.zeros([SUB_M, BLOCK_H], gl.float32, h_layout)
        acc_h = _chunk_of_h(state, acc_h, steps1, steps2, consumer * SUB_M, 0, SHARED_RING)
        steps1 += state.k_steps

        # act(H) into this consumer's H tile: the previous chunk's phase-2 product, the last
        # reader of the tile, completed (waited below).
        h_tile.store(_activation(acc_h, schedule.ACTIVATION, h_tile.dtype))
        fence_async_shared()

        # Phase 2: Y += H @ W2 for the chunk.
        stage = _w2_stage(state, steps2, steps1, SHARED_RING)
        acc_y = warpgroup_mma(h_tile, state.w2_ring.index(stage), acc_y, is_async=True)
        acc_y = warpgroup_mma_wait(0, deps=[acc_y])
        mbarrier.arrive(state.empty2.index(stage))
        steps2 += 1
    return acc_y


@gluon.jit
def _consume_columns(state, consumer: gl.constexpr, schedule):
    """BLOCK_M = 64: columns [c HALF_N, (c+1) HALF_N) of the CTA's tile of Y (c the
    consumer), per hidden chunk: columns [c HALF_H, (c+1) HALF_H) of the chunk of H for all
    the rows (phase 1), act, into this consumer's half of H (``h_tiles.index(c)``), then its
    columns of Y += H @ W2 over both halves of H, its own and then the other consumer's once
    written (``h_ready``). ``h_free``: the other consumer's product has read this one's half,
    waited for before the half is rewritten and before Y is written over it."""
    SHARED_RING: gl.constexpr = schedule.SHARED_RING
    h_ready = state.h_ready
    h_free = state.h_free
    ROWS: gl.constexpr = state.h_tiles.shape[1]
    HALF_H: gl.constexpr = state.h_tiles.shape[2]
    HALF_N: gl.constexpr = state.y_tiles.shape[2]
    other: gl.constexpr = 1 - consumer
    h_layout: gl.constexpr = _accumulator_layout(HALF_H, gl.num_warps())
    own_h = state.h_tiles.index(consumer)
    other_h = state.h_tiles.index(other)
    acc_y = gl.zeros([ROWS, HALF_N], gl.float32, _accumulator_layout(HALF_N, gl.num_warps()))
    steps1 = 0
    steps2 = 0
    for chunk in range(state.chunks):
        acc_h = gl.zeros([ROWS, HALF_H], gl.float32, h_layout)
        acc_h = _chunk_of_h(state, acc_h, steps1, steps2, 0, consumer * HALF_H, SHARED_RING)
        steps1 += state.k_steps

        # The other consumer's product of the previous chunk read this half (at chunk 0 the
        # wait passes).
        mbarrier.wait(h_free.index(consumer), (chunk & 1) ^ 1)
        own_h.store(_activation(acc_h, schedule.ACTIVATION, own_h.dtype))
        fence_async_shared()
        mbarrier.arrive(h_ready.index(consumer))

        stage = _w2_stage(state, steps2, steps1, SHARED_RING)
        w2 = state.w2_ring.index(stage).slice(consumer * HALF_N, HALF_N, dim=1)
        acc_y = warpgroup_mma(
            own_h, w2.slice(consumer * HALF_H, HALF_H, dim=0), acc_y, is_async=True
        )
        mbarrier.wait(h_ready.index(other), chunk & 1)
        acc_y = warpgroup_mma(
            other_h, w2.slice(other * HALF_H, HALF_H, dim=0), acc_y, is_async=True
        )
        acc_y = warpgroup_mma_wait(0, deps=[acc_y])
        mbarrier.arrive(state.empty2.index(stage))
        mbarrier.arrive(h_free.index(other))
        steps2 += 1
    # Y lies over this consumer's half of H: the other's last product read it.
    mbarrier.wait(h_free.index(consumer), (state.chunks & 1) ^ 1)
    return acc_y


@gluon.jit
def _chunk_of_h(state, acc_h, steps1, steps2, row, column, SHARED_RING: gl.constexpr):
    """Phase 1 of a hidden chunk: ``acc_h`` plus rows [row, ...) of X times columns
    [column, ...) of W1 over the chunk's d_model steps, which take consecutive ring indices
    in every layout."""
    first = _ring_index(steps1, steps2, SHARED_RING)
    return ring_matmul(
        state.x_ring,
        state.w1_ring,
        state.ready1,
        state.empty1,
        acc_h,
        first,
        state.k_steps,
        row,
        column,
    )


@gluon.jit
def _w2_stage(state, steps2, steps1, SHARED_RING: gl.constexpr):
    """The stage of the chunk's W2 tile (phase 2), once it has landed."""
    STAGES2: gl.constexpr = state.w2_ring.shape[0]
    index = _ring_index(steps2, steps1, SHARED_RING)
    stage = index % STAGES2
    mbarrier.wait(state.ready2.index(stage), (index // STAGES2) & 1)
    return stage


@gluon.constexpr_function
def _accumulator_layout(columns, num_warps):
    """The register layout of a consumer's fp32 accumulator of ``columns`` columns."""
    return gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, columns, 16]
    )


@gluon.jit
def _store_y(desc_y, y_tile, acc_y, off_m, off_n):
    """``acc_y`` into ``y_tile``, then to Y at (off_m, off_n) by TMA."""
    y_tile.store(acc_y.to(y_tile.dtype))
    fence_async_shared()
    tma_store(desc_y, [off_m, off_n], y_tile)
    tma.store_wait(0)


@gluon.jit
def _smem_buffers(
    descriptors,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr,
    W2_STAGES: gl.constexpr,
    LAYOUT: gl.constexpr,
):
    """The kernel's SMEM buffers in one region planned by tlx, and the overlap tree (one per
    phase with ``LAYOUT == "phases"``) that says what shares bytes (tutorials/hopper_fused_mlp.py,
    "Two phases, one region"): stage i of every ring is buffer group i, H and Y tile c (consumer
    c's) are group c of theirs. The layouts are the descriptors' (128-byte swizzle), which the
    TMA and warpgroup_mma both read."""
    desc_x, desc_w1, desc_w2, desc_y = descriptors
    dtype: gl.constexpr = desc_x.dtype
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x_ring = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, STAGES, reuse=smem, layout=desc_x.layout)
    w1_ring = tlx.local_alloc((BLOCK_K, BLOCK_H), dtype, STAGES, reuse=smem, layout=desc_w1.layout)
    w2_ring = tlx.local_alloc(
        (BLOCK_H, BLOCK_N), dtype, W2_STAGES, reuse=smem, layout=desc_w2.layout
    )
    # A consumer's H and Y: its rows, or with BLOCK_M = 64 its columns (_consume_columns).
    if BLOCK_M == 64:
        h_shape: gl.constexpr = (BLOCK_M, BLOCK_H // 2)
        y_shape: gl.constexpr = (BLOCK_M, BLOCK_N // 2)
    else:
        h_shape: gl.constexpr = (BLOCK_M // 2, BLOCK_H)
        y_shape: gl.constexpr = (BLOCK_M // 2, BLOCK_N)
    h_tiles = tlx.local_alloc(h_shape, dtype, 2, reuse=smem, layout=desc_x.layout)
    y_tiles = tlx.local_alloc(y_shape, dtype, 2, reuse=smem, layout=desc_y.layout)

    distinct: gl.constexpr = tlx.reuse_group_type.distinct
    shared: gl.constexpr = tlx.reuse_group_type.shared
    # Y is written over its consumer's H after the last phase-2 product (every layout).
    epilogue = tlx.reuse_group(y_tiles, h_tiles, group_type=shared)
    phase1 = tlx.reuse_group(x_ring, w1_ring, group_type=distinct)
    if LAYOUT == "phases":
        # H and Y in both phases (one place in both); the W2 ring anywhere over the X/W1
        # ring's bytes, which the loader's drain makes safe.
        epilogue2 = tlx.reuse_group(y_tiles, h_tiles, group_type=shared)
        smem.set_buffer_overlap(
            tlx.reuse_phases(
                tlx.reuse_group(epilogue, phase1, group_type=distinct),
                tlx.reuse_group(epilogue2, w2_ring, group_type=distinct),
            )
        )
    else:
        if LAYOUT == "shared":
            # One ring: stage i holds X_i and W1_i side by side, or W2_i over them.
            rings = tlx.reuse_group(phase1, w2_ring, group_type=shared)
        else:
            rings = tlx.reuse_group(phase1, w2_ring, group_type=distinct)
        smem.set_buffer_overlap(tlx.reuse_group(epilogue, rings, group_type=distinct))
    return x_ring, w1_ring, w2_ring, h_tiles, y_tiles


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
@tlx.jit(do_not_specialize=["tokens", "d_model", "hidden"])
def fused_mlp_kernel(
    desc_x,
    desc_w1,
    desc_w2,
    desc_y,
    tokens,
    d_model,
    hidden,
    workspace,
    counters,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr,
    W2_STAGES: gl.constexpr,
    LAYOUT: gl.constexpr,
    HIDDEN_SPLITS: gl.constexpr,
    ACTIVATION: gl.constexpr,
):
    gl.static_assert(
        LAYOUT == "shared" or LAYOUT == "separate" or LAYOUT == "phases",
        "LAYOUT: shared, separate or phases",
    )
    SHARED_PHASES: gl.constexpr = LAYOUT == "shared"
    # Phases whose rings the planner may lay over each other: the loader drains at each
    # change of phase (_load_partition).
    DRAIN_PHASES: gl.constexpr = LAYOUT == "phases"
    gl.static_assert(
        not SHARED_PHASES or STAGES == W2_STAGES, "shared phases run one ring: W2_STAGES == STAGES"
    )
    # A consumer releases a phase-1 stage once its next product is issued: one stage would
    # wait for itself.
    gl.static_assert(STAGES >= 2, "the X/W1 ring needs at least two stages")
    gl.static_assert(ACTIVATION == "gelu" or ACTIVATION == "relu", "ACTIVATION: gelu or relu")
    gl.static_assert(HIDDEN_SPLITS >= 1, "HIDDEN_SPLITS: 1 or more")
    gl.static_assert(BLOCK_M == 128 or BLOCK_M == 64, "BLOCK_M: 128 or 64")
    # The consumers split the columns of H and Y (_consume_columns), each half whole rows of
    # the 128-byte swizzle.
    COLUMN_SPLIT: gl.constexpr = BLOCK_M == 64
    gl.static_assert(
        not COLUMN_SPLIT or (BLOCK_H % 128 == 0 and BLOCK_N % 128 == 0),
        "BLOCK_M == 64: BLOCK_H and BLOCK_N multiples of 128",
    )
    # CTAs launched together take the N tiles of one row block: they read the same rows of X
    # and walk W1 in the same order, and find both in L2. The splits of the hidden dimension
    # are the grid's third axis: the CTAs launched together take one slice of W1 and W2.
    off_n = gl.program_id(0) * BLOCK_N
    off_m = gl.program_id(1) * BLOCK_M
    k_steps = gl.cdiv(d_model, BLOCK_K)
    chunks = gl.cdiv(hidden, BLOCK_H)
    if HIDDEN_SPLITS > 1:
        # The GEMM's balanced splits (split_unit), of hidden chunks: split s takes chunks
        # [s * chunks // HIDDEN_SPLITS, (s + 1) * chunks // HIDDEN_SPLITS) of the tile of
        # slot = its index; the host launches no more splits than chunks, so none is empty.
        tiles = gl.num_programs(0) * gl.num_programs(1)
        tile = gl.program_id(1) * gl.num_programs(0) + gl.program_id(0)
        _, _, slot, first_chunk, chunks = split_unit(
            gl.program_id(2) * tiles + tile, 0, tiles, chunks, HIDDEN_SPLITS
        )
    else:
        slot = 0
        first_chunk = 0

    x_ring, w1_ring, w2_ring, h_tiles, y_tiles = _smem_buffers(
        (desc_x, desc_w1, desc_w2, desc_y),
        BLOCK_M,
        BLOCK_N,
        BLOCK_H,
        BLOCK_K,
        STAGES,
        W2_STAGES,
        LAYOUT,
    )

    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    ready1 = gl.allocate_shared_memory(gl.int64, [STAGES, 1], bar_layout)
    empty1 = gl.allocate_shared_memory(gl.int64, [STAGES, 1], bar_layout)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready1.index(i), count=1)
        mbarrier.init(empty1.index(i), count=2)
    if SHARED_PHASES:
        # One ring, one pair of barriers per stage, whichever phase's step it holds.
        ready2 = ready1
        empty2 = empty1
    else:
        ready2 = gl.allocate_shared_memory(gl.int64, [W2_STAGES, 1], bar_layout)
        empty2 = gl.allocate_shared_memory(gl.int64, [W2_STAGES, 1], bar_layout)
        for i in gl.static_range(W2_STAGES):
            mbarrier.init(ready2.index(i), count=1)
            mbarrier.init(empty2.index(i), count=2)
    if COLUMN_SPLIT:
        # Per consumer: its half of H is written (h_ready), the other's product has read it
        # (h_free).
        h_ready = gl.allocate_shared_memory(gl.int64, [2, 1], bar_layout)
        h_free = gl.allocate_shared_memory(gl.int64, [2, 1], bar_layout)
        for i in gl.static_range(2):
            mbarrier.init(h_ready.index(i), count=1)
            mbarrier.init(h_free.index(i), count=1)
    else:
        h_ready = 0
        h_free = 0
    fence_async_shared()

    state = MlpState(
        desc_y,
        x_ring,
        w1_ring,
        w2_ring,
        h_tiles,
        y_tiles,
        ready1,
        empty1,
        ready2,
        empty2,
        h_ready,
        h_free,
        off_m,
        off_n,
        k_steps,
        first_chunk,
        chunks,
        workspace,
        counters,
        slot,
    )
    schedule = MlpSchedule(
        ACTIVATION, BLOCK_K, SHARED_PHASES, DRAIN_PHASES, HIDDEN_SPLITS, COLUMN_SPLIT
    )
    gl.warp_specialize(
        [
            (_mma_partition, (state, 0, schedule)),
            (_mma_partition, (state, 1, schedule)),
            (_load_partition, (state, desc_x, desc_w1, desc_w2, schedule)),
        ],
        [4, 1],
        [CONSUMER_REGISTERS, LOADER_REGISTERS],
    )
