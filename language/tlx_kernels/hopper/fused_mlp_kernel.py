"""The Hopper fused MLP kernel (sm_90a), Y = act(X @ W1) @ W2 in two phases per hidden chunk,
whose rings share SMEM per stage ("shared"), not at all ("separate") or as whole rings
drained at each change of phase ("phases"); with HIDDEN_SPLITS > 1 the hidden chunks of a tile
of Y are split among as many CTAs, whose partial Ys the last to arrive sums
(tlx_kernels.hopper.split_reduction). Its design: tutorials/hopper_fused_mlp.py."""

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
    partition_registers,
    ring_barriers,
    ring_matmul,
)
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
def _ring_slot(index, reader, CHUNK_SPLIT: gl.constexpr):
    """The ring index of a reader's step of its own ring index ``index``: the same, or with
    CHUNK_SPLIT interleaved, consumer c's steps taking stages c, c + 2, ... of the ring (of
    an even depth) in turn, so that each stage has one reader and its barriers one arriving
    partition: its index mod the depth is the stage and its quotient the pass, as for one
    ring of half the depth."""
    slot = index
    if CHUNK_SPLIT:
        slot = 2 * index + reader
    return slot


@gluon.jit
def _load_partition(state, desc_x, desc_w1, desc_w2, schedule):
    """The loader warp: per hidden chunk, the X and W1 tiles of each d_model step into the
    phase-1 ring, then the chunk's W2 tile into the phase-2 ring (with ``SHARED_RING`` both are
    the one ring, and the steps take its stages in that order), each once its readers released
    the stage's previous contents. With ``DRAIN`` (``layout="phases"``) it also drains the
    ring at each change of phase: the chunk's W2 load waits until the consumers released every
    X/W1 step of the chunk, and the next chunk's X/W1 loads until they released its W2 tile.
    With ``CHUNK_SPLIT`` the consumers read chunks 2p and 2p + 1 at once, each in its half of
    the rings: the loader takes their steps in turn, so that neither waits for the other's
    chunk to be loaded."""
    SHARED_RING: gl.constexpr = schedule.SHARED_RING
    DRAIN: gl.constexpr = schedule.DRAIN
    k_steps = state.k_steps
    STAGES1: gl.constexpr = state.x_ring.shape[0]
    STAGES2: gl.constexpr = state.w2_ring.shape[0]
    descriptors = (desc_x, desc_w1, desc_w2)
    if schedule.CHUNK_SPLIT:
        for pair in range(gl.cdiv(state.chunks, 2)):
            # Each consumer's chunks before this one: ``pair``, k_steps X/W1 steps and one W2
            # step each (the consumers' ring indices, _consume_chunks).
            first1 = _ring_index(pair * k_steps, pair, SHARED_RING)
            for k in range(k_steps):
                for reader in gl.static_range(2):
                    chunk = 2 * pair + reader
                    if chunk < state.chunks:
                        index = _ring_slot(first1 + k, reader, True)
                        _load_x_w1(state, descriptors, schedule, chunk, k, index)
            index2 = _ring_index(pair, (pair + 1) * k_steps, SHARED_RING)
            for reader in gl.static_range(2):
                chunk = 2 * pair + reader
                if chunk < state.chunks:
                    _load_w2(state, desc_w2, chunk, _ring_slot(index2, reader, True))
    else:
        for chunk in range(state.chunks):
            first1 = _ring_index(chunk * k_steps, chunk, SHARED_RING)
            for k in range(k_steps):
                _load_x_w1(state, descriptors, schedule, chunk, k, first1 + k)
            if DRAIN:
                # The W2 ring lies over any bytes of the X/W1 ring: every X/W1 step of the
                # chunk released. Each consumer releases its steps in order (_mma_partition),
                # so the barrier phase of the last one (step j completes the phase of parity
                # (j // STAGES1) & 1 of its stage) completes after all the others.
                last1 = first1 + k_steps - 1
                mbarrier.wait(state.empty1.index(last1 % STAGES1), (last1 // STAGES1) & 1)
            last2 = _ring_index(chunk, (chunk + 1) * k_steps, SHARED_RING)
            _load_w2(state, desc_w2, chunk, last2)
            if DRAIN:
                # The next chunk's X and W1 tiles lie over any bytes of the W2 ring: the
                # chunk's one W2 step released.
                mbarrier.wait(state.empty2.index(last2 % STAGES2), (last2 // STAGES2) & 1)


@gluon.jit
def _load_x_w1(state, descriptors, schedule, chunk, k, index):
    """The X and W1 tiles of d_model step ``k`` of hidden chunk ``chunk`` (of the CTA's) into
    the phase-1 ring's stage of ring index ``index``, once its readers released it."""
    desc_x, desc_w1, _ = descriptors
    STAGES1: gl.constexpr = state.x_ring.shape[0]
    BLOCK_H: gl.constexpr = state.w2_ring.shape[1]
    step1_bytes: gl.constexpr = desc_x.block_type.nbytes + desc_w1.block_type.nbytes
    off_k = k * schedule.BLOCK_K
    off_h = (state.first_chunk + chunk) * BLOCK_H
    stage = index % STAGES1
    # Phase ^ 1: the first pass over the ring finds every stage free.
    mbarrier.wait(state.empty1.index(stage), ((index // STAGES1) & 1) ^ 1)
    mbarrier.expect(state.ready1.index(stage), step1_bytes)
    tma_load(desc_x, [state.off_m, off_k], state.ready1.index(stage), state.x_ring.index(stage))
    tma_load(desc_w1, [off_k, off_h], state.ready1.index(stage), state.w1_ring.index(stage))


@gluon.jit
def _load_w2(state, desc_w2, chunk, index):
    """Hidden chunk ``chunk``'s W2 tile into the phase-2 ring's stage of ring index
    ``index``, once its readers released it."""
    STAGES2: gl.constexpr = state.w2_ring.shape[0]
    BLOCK_H: gl.constexpr = state.w2_ring.shape[1]
    off_h = (state.first_chunk + chunk) * BLOCK_H
    stage = index % STAGES2
    mbarrier.wait(state.empty2.index(stage), ((index // STAGES2) & 1) ^ 1)
    mbarrier.expect(state.ready2.index(stage), desc_w2.block_type.nbytes)
    tma_load(desc_w2, [off_h, state.off_n], state.ready2.index(stage), state.w2_ring.index(stage))


@gluon.jit
def _mma_partition(state, consumer: gl.constexpr, schedule):
    """One consumer warpgroup: its share of the CTA's tile of Y (``_consume_rows``, or with
    BLOCK_M = 64 ``_consume_chunks``), then stored, or with HIDDEN_SPLITS > 1 its partial Y
    summed with the other splits' and stored by the last of them to arrive."""
    if schedule.CHUNK_SPLIT:
        # One tile of Y, of which each consumer holds a partial.
        y_tile = state.y_tiles.index(0)
        acc_y = _consume_chunks(state, consumer, schedule)
        off_m = state.off_m
        # What follows lies over the rings: both consumers' products read them.
        mbarrier.arrive(state.rings_read)
        mbarrier.wait(state.rings_read, 0)
        if schedule.HIDDEN_SPLITS == 1:
            acc_y = _sum_consumers(state, acc_y, consumer)
    else:
        y_tile = state.y_tiles.index(consumer)
        acc_y = _consume_rows(state, consumer, schedule)
        off_m = state.off_m + consumer * y_tile.shape[0]
    if schedule.HIDDEN_SPLITS > 1:
        # With CHUNK_SPLIT both consumers' partials of the one tile go to its sum.
        acc_y, last = split_reduce(
            acc_y,
            state.workspace,
            state.counters,
            consumer,
            state.slot,
            schedule.HIDDEN_SPLITS,
            SHARED_TILE=schedule.CHUNK_SPLIT,
        )
        if last:
            _store_y(state.desc_y, y_tile, acc_y, off_m, state.off_n)
    elif consumer == 0 or not schedule.CHUNK_SPLIT:
        # With CHUNK_SPLIT consumer 0 holds the sum.
        _store_y(state.desc_y, y_tile, acc_y, off_m, state.off_n)


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
    h_layout: gl.constexpr = accumulator_layout(BLOCK_H, gl.num_warps())
    h_tile = state.h_tiles.index(consumer)
    acc_y = gl.zeros([SUB_M, BLOCK_N], gl.float32, accumulator_layout(BLOCK_N, gl.num_warps()))
    steps1 = 0
    steps2 = 0
    for _chunk in range(state.chunks):
        # Phase 1: this consumer's rows of the chunk of H.
        acc_h = gl.zeros([SUB_M, BLOCK_H], gl.float32, h_layout)
        first = _ring_index(steps1, steps2, SHARED_RING)
        acc_h = _chunk_of_h(state, acc_h, first, consumer * SUB_M, 1)
        steps1 += state.k_steps

        # act(H) into this consumer's H tile: the previous chunk's phase-2 product, the last
        # reader of the tile, completed (waited below).
        h_tile.store(_activation(acc_h, schedule.ACTIVATION, h_tile.dtype))
        fence_async_shared()

        # Phase 2: Y += H @ W2 for the chunk.
        stage = _w2_stage(state, _ring_index(steps2, steps1, SHARED_RING))
        acc_y = warpgroup_mma(h_tile, state.w2_ring.index(stage), acc_y, is_async=True)
        acc_y = warpgroup_mma_wait(0, deps=[acc_y])
        mbarrier.arrive(state.empty2.index(stage))
        steps2 += 1
    return acc_y


@gluon.jit
def _consume_chunks(state, consumer: gl.constexpr, schedule):
    """BLOCK_M = 64: this consumer's partial of the CTA's whole tile of Y, over every other
    hidden chunk (chunks consumer, consumer + 2, ...): the chunk of H for all the rows (phase
    1), act, kept in registers as the A operand of Y += H @ W2 (phase 2). Each product is as
    wide as a chunk of H or the tile of Y (128 columns), with H never in SMEM: a product reads
    its B tile (and phase 1 X) from SMEM, where consumers splitting the columns had 64-column
    products read both operands from SMEM, as many bytes as the SMEM delivers while the
    tensor cores compute them (tutorials/hopper_fused_mlp.py, "Few tokens"). The consumer's
    steps take its half of each ring (``_ring_slot``): each stage has one reader, its
    ``empty`` barrier one arrival a pass."""
    SHARED_RING: gl.constexpr = schedule.SHARED_RING
    ROWS: gl.constexpr = state.x_ring.shape[1]
    BLOCK_H: gl.constexpr = state.w2_ring.shape[1]
    BLOCK_N: gl.constexpr = state.w2_ring.shape[2]
    num_warps: gl.constexpr = gl.num_warps()
    h_layout: gl.constexpr = accumulator_layout(BLOCK_H, num_warps)
    y_layout: gl.constexpr = accumulator_layout(BLOCK_N, num_warps)
    h_operand: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=y_layout, k_width=2)
    dtype: gl.constexpr = state.w2_ring.dtype
    k_steps = state.k_steps
    acc_y = gl.zeros([ROWS, BLOCK_N], gl.float32, y_layout)
    for chunk in range(consumer, state.chunks, 2):
        # This consumer's chunks before this one, k_steps X/W1 steps and one W2 step each.
        before = chunk // 2
        first = _ring_slot(_ring_index(before * k_steps, before, SHARED_RING), consumer, True)
        acc_h = gl.zeros([ROWS, BLOCK_H], gl.float32, h_layout)
        acc_h = _chunk_of_h(state, acc_h, first, 0, 2)
        h = gl.convert_layout(_activation(acc_h, schedule.ACTIVATION, dtype), h_operand)
        w2_index = _ring_index(before, (before + 1) * k_steps, SHARED_RING)
        stage = _w2_stage(state, _ring_slot(w2_index, consumer, True))
        acc_y = warpgroup_mma(h, state.w2_ring.index(stage), acc_y, is_async=True)
        acc_y = warpgroup_mma_wait(0, deps=[acc_y])
        mbarrier.arrive(state.empty2.index(stage))
    return acc_y


@gluon.jit
def _sum_consumers(state, acc_y, consumer: gl.constexpr):
    """The sum of both consumers' partials of the tile, in consumer 0's registers (consumer
    1's returned as it is, unused): consumer 1 writes its partial to the fp32 staging over
    the rings, consumer 0 reads it once written (``partial_written``), and its warps meet
    before any writes Y over it."""
    partial = state.y_partial.index(0)
    if consumer == 1:
        partial.store(acc_y)
        # Y's TMA store (the async proxy) reads bytes of the partial later.
        fence_async_shared()
        mbarrier.arrive(state.partial_written)
    else:
        mbarrier.wait(state.partial_written, 0)
        acc_y = acc_y + partial.load(acc_y.type.layout)
        cta_barrier()
    return acc_y


@gluon.jit
def _chunk_of_h(state, acc_h, first, row, INDEX_STEP: gl.constexpr):
    """Phase 1 of a hidden chunk: ``acc_h`` plus rows [row, ...) of X times the chunk's W1
    over its d_model steps, of ring indices ``first``, ``first + INDEX_STEP``, ..."""
    return ring_matmul(
        state.x_ring,
        state.w1_ring,
        state.ready1,
        state.empty1,
        acc_h,
        first,
        state.k_steps,
        row,
        INDEX_STEP,
    )


@gluon.jit
def _w2_stage(state, index):
    """The stage of the chunk's W2 tile (phase 2) of ring index ``index``, once it has
    landed."""
    STAGES2: gl.constexpr = state.w2_ring.shape[0]
    stage = index % STAGES2
    mbarrier.wait(state.ready2.index(stage), (index // STAGES2) & 1)
    return stage


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
    distinct: gl.constexpr = tlx.reuse_group_type.distinct
    shared: gl.constexpr = tlx.reuse_group_type.shared
    phase1 = tlx.reuse_group(x_ring, w1_ring, group_type=distinct)
    # Shared phases: one ring, stage i holding X_i and W1_i side by side or W2_i over them;
    # else a ring per phase.
    if LAYOUT == "shared":
        rings = tlx.reuse_group(phase1, w2_ring, group_type=shared)
    else:
        rings = tlx.reuse_group(phase1, w2_ring, group_type=distinct)
    if BLOCK_M == 64:
        # _consume_chunks: H stays in registers. Y (one tile) lies over the fp32 partial
        # consumer 1 hands consumer 0, which reads it before writing Y (_sum_consumers), and
        # both over the rings' first stage, read by then.
        h_tiles = 0
        y_tiles = tlx.local_alloc((BLOCK_M, BLOCK_N), dtype, 1, reuse=smem, layout=desc_y.layout)
        partial_layout: gl.constexpr = gl.NVMMASharedLayout(
            swizzle_byte_width=128, element_bitwidth=32, rank=2
        )
        y_partial = tlx.local_alloc(
            (BLOCK_M, BLOCK_N), gl.float32, 1, reuse=smem, layout=partial_layout
        )
        # The layout is "shared" or "separate" (the kernel refuses "phases" with BLOCK_M = 64).
        epilogue = tlx.reuse_group(y_tiles, y_partial, group_type=shared)
        smem.set_buffer_overlap(tlx.reuse_group(epilogue, rings, group_type=shared))
    else:
        # A consumer's rows of H and Y; Y is written over its consumer's H after the last
        # phase-2 product (every layout).
        y_partial = 0
        h_tiles = tlx.local_alloc(
            (BLOCK_M // 2, BLOCK_H), dtype, 2, reuse=smem, layout=desc_x.layout
        )
        y_tiles = tlx.local_alloc(
            (BLOCK_M // 2, BLOCK_N), dtype, 2, reuse=smem, layout=desc_y.layout
        )
        epilogue = tlx.reuse_group(y_tiles, h_tiles, group_type=shared)
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
            smem.set_buffer_overlap(tlx.reuse_group(epilogue, rings, group_type=distinct))
    return x_ring, w1_ring, w2_ring, h_tiles, y_tiles, y_partial


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
    # The consumers take every other hidden chunk (_consume_chunks), each its half of each
    # ring's stages (_ring_slot), read in turn: not drained at each change of phase, which
    # would serialize them.
    CHUNK_SPLIT: gl.constexpr = BLOCK_M == 64
    gl.static_assert(
        not CHUNK_SPLIT or (STAGES % 2 == 0 and W2_STAGES % 2 == 0 and not DRAIN_PHASES),
        "BLOCK_M == 64: even STAGES and W2_STAGES, and not LAYOUT == 'phases'",
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

    x_ring, w1_ring, w2_ring, h_tiles, y_tiles, y_partial = _smem_buffers(
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
    # A stage is released by each consumer that reads it: both, or with CHUNK_SPLIT the one
    # whose chunk it holds.
    READERS: gl.constexpr = 1 if CHUNK_SPLIT else 2
    ready1, empty1 = ring_barriers(STAGES, READERS)
    if SHARED_PHASES:
        # One ring, one pair of barriers per stage, whichever phase's step it holds.
        ready2 = ready1
        empty2 = empty1
    else:
        ready2, empty2 = ring_barriers(W2_STAGES, READERS)
    if CHUNK_SPLIT:
        # Both consumers' last products read the rings; consumer 1's partial Y is written
        # (_mma_partition, _sum_consumers).
        rings_read = gl.allocate_shared_memory(gl.int64, [1], bar_layout)
        partial_written = gl.allocate_shared_memory(gl.int64, [1], bar_layout)
        mbarrier.init(rings_read, count=2)
        mbarrier.init(partial_written, count=1)
    else:
        rings_read = 0
        partial_written = 0
    fence_async_shared()

    state = MlpState(
        desc_y,
        x_ring,
        w1_ring,
        w2_ring,
        h_tiles,
        y_tiles,
        y_partial,
        ready1,
        empty1,
        ready2,
        empty2,
        rings_read,
        partial_written,
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
        ACTIVATION, BLOCK_K, SHARED_PHASES, DRAIN_PHASES, HIDDEN_SPLITS, CHUNK_SPLIT
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
