"""The Hopper attention backward's shared memory (tlx_kernels/hopper/attention_backward_kernel.py
has the kernel): its tiles as one ``tlx.storage_alias_spec`` and its reuse tree
(``smem_tiles``) and the barriers by which a consumer hands its dS to the other
(``cross_consumer_barriers``). docs/attention-backward.md draws the plans."""

import tlx
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

from tlx_kernels.hopper.attention_backward_state import ABSENT
from tlx_kernels.hopper.attention_backward_step import DQ_COLUMNS
from tlx_kernels.hopper.common import unswizzled_layout


@gluon.constexpr_function
def _dq_staging(HEAD_DIM, CONSUMERS, DQ_PASS, DQ_STAGING_TILES):
    """(tiles, columns) of dQ's fp32 staging tiles with DQ_PASS "tma_add", "split" or
    "alternate": DQ_STAGING_TILES a consumer (None: two, one with "alternate", whose consumer
    reduces every other step), consumer c's from tile c * DQ_STAGING_TILES on; half the
    head dim with "split", all of it with "alternate", else DQ_COLUMNS; no tiles with the
    other passes."""
    if DQ_PASS not in ("tma_add", "split", "alternate"):
        tiles = 0
    elif DQ_STAGING_TILES is not None:
        tiles = DQ_STAGING_TILES * CONSUMERS
    elif DQ_PASS == "alternate":
        tiles = CONSUMERS
    else:
        tiles = 2 * CONSUMERS
    columns = {"split": HEAD_DIM // 2, "alternate": HEAD_DIM}.get(DQ_PASS, DQ_COLUMNS)
    return gl.constexpr((tiles, columns))


@gluon.constexpr_function
def _ds_buffers(CONSUMERS, DQ_PASS, TURN_BUFFERS, LATE_DQ):
    """The dS (or dS^T) buffers: TURN_BUFFERS a consumer with "alternate", two with LATE_DQ,
    else one."""
    if DQ_PASS == "alternate":
        return gl.constexpr(TURN_BUFFERS * CONSUMERS)
    if LATE_DQ:
        return gl.constexpr(2 * CONSUMERS)
    return gl.constexpr(CONSUMERS)


@gluon.jit
def smem_tiles(
    dtype: gl.constexpr,
    BLOCK_M: gl.constexpr,
    SUB_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CONSUMERS: gl.constexpr,
    P_IN_SMEM: gl.constexpr,
    ALIAS: gl.constexpr,
    SCORES_BY_QUERY: gl.constexpr,
    PIPELINED: gl.constexpr,
    DQ_PASS: gl.constexpr,
    TURN_BUFFERS: gl.constexpr,
    KV_BUFFERS: gl.constexpr,
    DQ_STAGING_TILES: gl.constexpr,
    LATE_DQ: gl.constexpr,
    STAGED_STATISTICS: gl.constexpr,
    EPILOGUE_OVER_SCORES: gl.constexpr,
):
    """The kernel's SMEM, one spec: (q, dO, K, V, dS^T, P^T, dK, dV tiles; dS and P, queries
    by rows, with SCORES_BY_QUERY; dQ's staging tiles (``_dq_staging``), else dS^T's
    buffer, unused; with STAGED_STATISTICS a Q block's LSE and delta a stage, fp32 rows
    beside its Q and dO, else ABSENT). With ALIAS, consumer c's dK and dV staging tiles take
    its K and V buffers' bytes (with EPILOGUE_OVER_SCORES, those of its two dS buffers, P
    buffer if P_IN_SMEM, and dQ staging tiles instead, the late split's, dead by the
    epilogue, so that K and V are free before it) and, with P_IN_SMEM, P^T and dS^T share a
    buffer unless PIPELINED (whose dV, reading P^T, is still in flight when dS^T is
    written); without,
    every tile has bytes of its own. P^T is dS^T's buffer (unused) without P_IN_SMEM. dQ's
    staging tiles have bytes of their own either way: a TMA reduce-add reads one into the
    next step, while K, V, the ring and the next P and dS are live (and a P/dS buffer is
    half a staging tile). K and V: CONSUMERS buffers a K/V slot, KV_BUFFERS slots (a
    persistent CTA loads its next tile's K and V into the other slot while this one runs);
    dK and dV as many, or CONSUMERS with EPILOGUE_OVER_SCORES. (Every buffer is allocated
    and the tree built here, in the spec's block, before the buffers are passed on:
    docs/diagnostics.md.)"""
    layout: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=128, element_bitwidth=dtype.primitive_bitwidth, rank=2
    )
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    distinct: gl.constexpr = tlx.reuse_group_type.distinct
    q_tiles = tlx.local_alloc((BLOCK_M, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=layout)
    do_tiles = tlx.local_alloc((BLOCK_M, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=layout)
    if STAGED_STATISTICS:
        statistics_tiles = tlx.local_alloc(
            (2, BLOCK_M), gl.float32, NUM_STAGES, reuse=smem, layout=unswizzled_layout(32, 2)
        )
        ring = tlx.reuse_group(
            q_tiles, do_tiles, statistics_tiles, group_type=distinct, group_size=NUM_STAGES
        )
    else:
        statistics_tiles = ABSENT
        ring = tlx.reuse_group(q_tiles, do_tiles, group_type=distinct, group_size=NUM_STAGES)
    KV: gl.constexpr = CONSUMERS * KV_BUFFERS
    if EPILOGUE_OVER_SCORES:
        STAGED: gl.constexpr = CONSUMERS
    else:
        STAGED: gl.constexpr = KV
    k_tiles = tlx.local_alloc((SUB_N, HEAD_DIM), dtype, KV, reuse=smem, layout=layout)
    v_tiles = tlx.local_alloc((SUB_N, HEAD_DIM), dtype, KV, reuse=smem, layout=layout)
    dk_tiles = tlx.local_alloc((SUB_N, HEAD_DIM), dtype, STAGED, reuse=smem, layout=layout)
    dv_tiles = tlx.local_alloc((SUB_N, HEAD_DIM), dtype, STAGED, reuse=smem, layout=layout)
    if SCORES_BY_QUERY:
        SCORES: gl.constexpr = (BLOCK_M, SUB_N)
    else:
        SCORES: gl.constexpr = (SUB_N, BLOCK_M)
    # "alternate": TURN_BUFFERS dS^T buffers a consumer, written in turn
    # (attention_backward_turns.py); with LATE_DQ two, one a parity of the step
    # (attention_backward_late_split.py).
    DS_BUFFERS: gl.constexpr = _ds_buffers(CONSUMERS, DQ_PASS, TURN_BUFFERS, LATE_DQ)
    ds_tiles = tlx.local_alloc(SCORES, dtype, DS_BUFFERS, reuse=smem, layout=layout)
    if P_IN_SMEM:
        p_tiles = tlx.local_alloc(SCORES, dtype, CONSUMERS, reuse=smem, layout=layout)
    else:
        p_tiles = ds_tiles
    STAGING: gl.constexpr = _dq_staging(HEAD_DIM, CONSUMERS, DQ_PASS, DQ_STAGING_TILES)
    if STAGING[0] > 0:
        dq_tiles = tlx.local_alloc(
            (BLOCK_M, STAGING[1]),
            gl.float32,
            STAGING[0],
            reuse=smem,
            layout=gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2),
        )
    else:
        dq_tiles = ds_tiles
    if EPILOGUE_OVER_SCORES:
        # Buffer group c: consumer c's dK and dV tiles over its two dS buffers (2c, 2c + 1:
        # attention_backward_late_split._ds_use), its P buffer and its dQ staging tiles.
        # With S^T there is no P buffer (p_tiles is ds_tiles).
        ds_pairs = tlx.reuse_group(ds_tiles, group_size=2)
        staging = tlx.reuse_group(dq_tiles, group_size=STAGING[0] // CONSUMERS)
        if P_IN_SMEM:
            step_buffers = tlx.reuse_group(ds_pairs, p_tiles, staging, group_type=distinct)
        else:
            step_buffers = tlx.reuse_group(ds_pairs, staging, group_type=distinct)
        epilogue = tlx.reuse_group(dk_tiles, dv_tiles, group_type=distinct)
        smem.set_buffer_overlap(
            tlx.reuse_group(
                tlx.reuse_group(k_tiles, group_size=KV),
                tlx.reuse_group(v_tiles, group_size=KV),
                ring,
                tlx.reuse_group(epilogue, step_buffers, group_type=tlx.reuse_group_type.shared),
                group_type=distinct,
            )
        )
    else:
        if ALIAS:
            over: gl.constexpr = tlx.reuse_group_type.shared
        else:
            over: gl.constexpr = distinct
        if PIPELINED:
            scores_over: gl.constexpr = distinct
        else:
            scores_over: gl.constexpr = over
        if not P_IN_SMEM:
            scores = tlx.reuse_group(ds_tiles, group_size=DS_BUFFERS)
        elif LATE_DQ:
            scores = tlx.reuse_group(ds_tiles, p_tiles, group_type=scores_over)
        else:
            scores = tlx.reuse_group(
                ds_tiles, p_tiles, group_type=scores_over, group_size=CONSUMERS
            )
        keys = tlx.reuse_group(k_tiles, dk_tiles, group_type=over, group_size=KV)
        values = tlx.reuse_group(v_tiles, dv_tiles, group_type=over, group_size=KV)
        if STAGING[0] > 0:
            smem.set_buffer_overlap(
                tlx.reuse_group(keys, values, ring, scores, dq_tiles, group_type=distinct)
            )
        else:
            smem.set_buffer_overlap(
                tlx.reuse_group(keys, values, ring, scores, group_type=distinct)
            )
    return (
        q_tiles,
        do_tiles,
        k_tiles,
        v_tiles,
        ds_tiles,
        p_tiles,
        dk_tiles,
        dv_tiles,
        dq_tiles,
        statistics_tiles,
    )


@gluon.jit
def cross_consumer_barriers(
    CONSUMERS: gl.constexpr,
    DQ_PASS: gl.constexpr,
    TURN_BUFFERS: gl.constexpr,
    LATE_DQ: gl.constexpr,
):
    """(ds_ready, ds_free) of the dQ passes in which a consumer's products read the other's
    dS ("summed", "split", "alternate"): a consumer's dS is written, and the other consumer
    has read it; a pair a consumer, two with LATE_DQ, or with "alternate" a pair a dS^T
    buffer (attention_backward_turns.py). ABSENT for the other passes."""
    if DQ_PASS == "summed" or DQ_PASS == "split" or DQ_PASS == "alternate":
        if DQ_PASS == "alternate":
            GIVEN: gl.constexpr = CONSUMERS * TURN_BUFFERS
        elif LATE_DQ:
            GIVEN: gl.constexpr = 2 * CONSUMERS
        else:
            GIVEN: gl.constexpr = CONSUMERS
        bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
        ds_ready = gl.allocate_shared_memory(gl.int64, [GIVEN, 1], bar_layout)
        ds_free = gl.allocate_shared_memory(gl.int64, [GIVEN, 1], bar_layout)
        for i in gl.static_range(GIVEN):
            mbarrier.init(ds_ready.index(i), count=1)
            mbarrier.init(ds_free.index(i), count=1)
        barriers = (ds_ready, ds_free)
    else:
        barriers = (ABSENT, ABSENT)
    return barriers
