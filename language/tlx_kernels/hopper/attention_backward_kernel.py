"""Backward Flash Attention for Hopper (sm_90a): Gluon + tlx storage aliasing. The host side
(launches, tuning, CPU compiles): tlx_kernels.hopper.attention_backward.

Given O = softmax(Q K^T * sm_scale) V, the log-sum-exp of each row of the scaled scores (LSE,
which the forward saves) and dO, the gradients are, with P = exp(Q K^T * sm_scale - LSE):

    dV = P^T dO        dP = dO V^T        dS = P * (dP - delta), delta = rowsum(dO * O)
    dK = sm_scale * dS^T Q                dQ = sm_scale * dS K

The kernels
-----------
``attention_backward_delta.delta`` computes delta, one fp32 a row of Q (or the dQ pass does,
before this kernel: ``DqConfig.computes_delta``). ``attention_bwd_kernel`` gives one CTA each
tile, BLOCK_N keys of one (batch, KV head) (or, persistent, a CTA an SM taking the tiles in
turn: docs/attention-backward.md, "Persistent CTAs"): K and V stay in SMEM for the tile, and the
CTA loops over the query heads of the KV head's group (grouped-query attention: dK and dV are
summed over the group) and over their blocks of BLOCK_M rows of Q (with a causal mask, those at
or below the keys' diagonal). A CTA has warp-specialized partitions:

* a loader warp loads a tile's K and V, then each Q block's Q and dO (with STAGED_STATISTICS
  its rows' LSE and delta too) into a ring of NUM_STAGES stages (``ready``: the copies
  landed; ``empty``: every consumer is done with the stage);
* CONSUMERS warpgroups, each owning BLOCK_N / CONSUMERS keys (its own K and V buffers). Per
  Q block a consumer computes the scores and their gradient, with keys as rows (S^T = K Q^T,
  dP^T = V dO^T) or, with SCORES_BY_QUERY, queries as rows (S = Q K^T, dP = dO V^T), P and
  dS from them and the rows' LSE and delta, dV += P^T dO, dK += dS^T Q and its part of dQ
  (below); the epilogue stores sm_scale * dK and dV by TMA.

The shapes (attention_backward_step.py): with keys as rows P^T and dS^T, the A operands of dV
and dK, come out of the tensor cores in registers, in the layout ``warpgroup_mma`` takes them
from, so P^T needs no SMEM; with queries as rows each thread holds two rows' statistics
rather than a quarter of the Q block's, which keeps a consumer within its registers at
HEAD_DIM 128, and P and dS go through SMEM.

dQ of a Q block is a sum over every key block, which other CTAs own. The configuration's
``dq_pass`` says how it is summed (attention_backward_config.py's ``DQ_PASSES``;
docs/attention-backward.md, "How dQ is summed", says why each, with the measurements):

* "atomics", "vector": each consumer's share added from its registers by fp32 atomics, one
  or two columns an instruction;
* "summed": the two consumers' shares summed by the tensor cores first (each reads the
  other's dS and K), each consumer adding half of the columns;
* "separate": no dQ here: a pass of its own over Q blocks (attention_dq.py) computes S and dP
  again (seven matrix products a block pair rather than five) and writes dQ once;
* "tma_add": each consumer's share through fp32 SMEM staging tiles, each added by one
  asynchronous TMA reduce-add (``desc_dq``; ``tlx.compat.tma_atomic_add``);
* "split": on the pipelined steps, half of the CTA's columns a consumer over both consumers'
  dS, added the same way: each element once a CTA; with LATE_DQ a step's products are
  issued in the next step (attention_backward_late_split.py), with S by queries or, the
  statistics read from the ring's stage, with keys as rows;
* "alternate": the consumers take turns, one computing the CTA's whole dQ of a Q block over
  both consumers' dS^T, added the same way (attention_backward_turns.py).

By default the tuner tries "alternate" at HEAD_DIM 64, "separate" and "split" at 128
(``TUNED_DQ_PASSES``), "split" alone there from N = 4096 (``LONG_SEQUENCE_DQ_PASSES``).

Where aliasing buys room
------------------------
All tiles live in one ``tlx.storage_alias_spec``. The epilogue's dK and dV tiles (in the
inputs' dtype, for the TMA store) are born after the consumer's last product has read its K
and V: consumer c's dK tile takes the bytes of its K buffer, its dV tile those of its V
buffer (``shared(k, dk)``, ``shared(v, dv)``, buffer by buffer). With P_IN_SMEM, P^T is written
to SMEM for dV and dS^T for dQ: P^T is dead once dV = P^T dO has completed, before dS^T is
written, so they share one buffer a consumer. At HEAD_DIM 128, BLOCK_N = 128, BLOCK_M = 64:
K, V 64 KiB, each Q/dO stage 32 KiB, dS 16 KiB, so four stages fit (208 KiB) with the
epilogue over K and V, where without aliasing (64 KiB of dK/dV staging more) two do.

Pipelined steps (``Config.pipelined``, with dQ in its pass of its own or by TMA reduce-adds):
a step's dV and dK products stay in flight into the next step, whose wait for S retires them
(wgmma groups retire in order) and only then releases their Q/dO stage: two waits a step
rather than four, the tensor cores busy with dV and dK while the next step's Q and dO land
and its S and dP are issued. With the TMA reduce-adds dQ's products are issued before dK's,
so that the step's wait for them leaves dK in flight (dV too with S at HEAD_DIM 64). P^T is
still being read by dV when dS^T is written, so P^T and dS^T take buffers of their own
(``distinct`` in the spec; K and V still under dK and dV): at HEAD_DIM 128 four stages take
224 KiB. A persistent CTA of the split a step late may stage dK and dV over its dS, P and
dQ staging tiles instead (``Config.epilogue_over_scores``), so that K and V are free for
its next tile before the epilogue (attention_backward_smem.py).
"""

import tlx
from tlx.compat import tma_load, tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
)

from tlx_kernels.hopper.attention_backward_late_split import (
    last_late_dq,
    step_splitting_late,
    step_splitting_late_by_keys,
    wait_for_late_dq_on_own,
)
from tlx_kernels.hopper.attention_backward_smem import cross_consumer_barriers, smem_tiles
from tlx_kernels.hopper.attention_backward_state import (
    ABSENT,
    BackwardSchedule,
    BackwardState,
    BackwardTile,
    with_tile,
)
from tlx_kernels.hopper.attention_backward_step import (
    drain_pipeline,
    first_step,
    kv_buffer,
    row_statistics,
    start_pipeline,
    step_by_keys,
    step_by_queries,
    wait_for_other_consumer,
)
from tlx_kernels.hopper.attention_backward_turns import (
    compact_statistics_layout,
    last_turns,
    step_taking_turns,
    wait_for_turns_on_own,
)
from tlx_kernels.hopper.attention_common import (
    head_and_block,
    load_pair_into_ring,
    load_pairs_once,
    tiles_of_cta,
)
from tlx_kernels.hopper.common import (
    LOADER_REGISTERS,
    accumulator_layout,
    ring_barriers,
)


@gluon.jit
def _q_blocks(seq_len, off_n, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """(first, masked end, end) of the Q blocks the keys [off_n, off_n + BLOCK_N) meet: with
    a causal mask, the blocks from the one that holds row off_n on, of which those before
    ``masked end`` cross the diagonal; without, all of them, none masked."""
    n_m = gl.cdiv(seq_len, BLOCK_M)
    if CAUSAL:
        first = off_n // BLOCK_M
        masked_end = gl.minimum(gl.cdiv(off_n + BLOCK_N, BLOCK_M), n_m)
    else:
        first = 0
        masked_end = 0
    return first, masked_end, n_m


@gluon.jit
def _tile_at(tile, seq_len, batch_kv_heads, BLOCK_N: gl.constexpr, ORDER: gl.constexpr, programs):
    """(batch * KV head, first key) of tile ``tile`` of ``programs`` CTAs' in ``ORDER``
    (``head_and_block``; the kernel's TILE_ORDER)."""
    blocks = gl.cdiv(seq_len, BLOCK_N)
    bh_kv, block = head_and_block(tile, batch_kv_heads, blocks, ORDER, programs)
    return bh_kv, block * BLOCK_N


@gluon.jit
def _load_stage_with_statistics(state, loads, index, bh_q, row):
    """``load_pair_into_ring``'s step with the Q block's statistics: once the consumers have
    released stage ``index % NUM_STAGES``, the Q block's Q, dO and its LSE and delta rows
    (``desc_statistics``: rows 2 * ``bh_q`` and the next, from ``row``) are copied into it,
    and ``ready`` completes when all three have landed."""
    (desc_q, desc_do, _, _, desc_statistics) = loads
    (q_tiles, do_tiles, statistics_tiles) = (
        state.q_tiles,
        state.do_tiles,
        state.statistics_tiles,
    )
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    stage = index % NUM_STAGES
    ready = state.ready.index(stage)
    mbarrier.wait(state.empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
    NBYTES: gl.constexpr = (
        desc_q.block_type.nbytes + desc_do.block_type.nbytes + desc_statistics.block_type.nbytes
    )
    mbarrier.expect(ready, NBYTES)
    tma_load(desc_q, [bh_q, row, 0], ready, q_tiles.index(stage).reshape([1, BLOCK_M, HEAD_DIM]))
    tma_load(desc_do, [bh_q, row, 0], ready, do_tiles.index(stage).reshape([1, BLOCK_M, HEAD_DIM]))
    tma_load(desc_statistics, [2 * bh_q, row], ready, statistics_tiles.index(stage))


@gluon.jit
def _load_partition(state, loads, schedule):
    """The loader warp, for each of the CTA's tiles: its K and V into the tile's K/V slot
    (``kv_ready``) once the epilogue of the slot's previous tile has stored dK and dV from
    its bytes (``kv_free``), then Q and dO (and, with STAGED_STATISTICS, their rows'
    statistics) of every Q block of every query head of the group into the ring, in the
    consumers' order. The ring's index runs on from tile to tile, so the next tile's
    first Q blocks load during this one's last steps. ``loads``: the descriptors of Q, dO,
    K, V and the statistics; ``schedule``: the kernel's constexprs (``BackwardSchedule``)."""
    (desc_q, desc_do, desc_k, desc_v, desc_statistics) = loads
    CAUSAL: gl.constexpr = schedule.CAUSAL
    PERSISTENT: gl.constexpr = schedule.PERSISTENT
    STAGED_STATISTICS: gl.constexpr = schedule.STAGED_STATISTICS
    (q_tiles, do_tiles, k_tiles, v_tiles) = (
        state.q_tiles,
        state.do_tiles,
        state.k_tiles,
        state.v_tiles,
    )
    (kv_ready, kv_free) = (state.tile.kv_ready, state.tile.kv_free)
    batch_kv_heads = state.tile.batch_kv_heads
    (ready, empty) = (state.ready, state.empty)
    (seq_len, group) = (state.seq_len, state.group)
    KV_BUFFERS: gl.constexpr = kv_ready.shape[0]
    CONSUMERS: gl.constexpr = k_tiles.shape[0] // KV_BUFFERS
    BLOCK_N: gl.constexpr = CONSUMERS * k_tiles.shape[1]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    index = 0
    taken = 0
    tiles = gl.cdiv(seq_len, BLOCK_N) * batch_kv_heads
    (first_tile, end_tile, tile_step) = tiles_of_cta(tiles, PERSISTENT)
    for tile in range(first_tile, end_tile, tile_step):
        bh_kv, off_n = _tile_at(
            tile, seq_len, batch_kv_heads, BLOCK_N, schedule.TILE_ORDER, tile_step
        )
        slot = taken % KV_BUFFERS
        mbarrier.wait(kv_free.index(slot), ((taken // KV_BUFFERS) & 1) ^ 1)
        load_pairs_once(
            desc_k,
            desc_v,
            k_tiles,
            v_tiles,
            kv_ready.index(slot),
            bh_kv,
            off_n,
            slot * CONSUMERS,
            CONSUMERS,
        )
        first, _, n_m = _q_blocks(seq_len, off_n, BLOCK_M, BLOCK_N, CAUSAL)
        for g in range(group):
            bh_q = bh_kv * group + g
            for m in range(first, n_m):
                if STAGED_STATISTICS:
                    _load_stage_with_statistics(state, loads, index, bh_q, m * BLOCK_M)
                else:
                    load_pair_into_ring(
                        desc_q, desc_do, q_tiles, do_tiles, ready, empty, index, bh_q, m * BLOCK_M
                    )
                index += 1
        taken += 1


@gluon.jit
def _store_dk_dv(state, dk, dv, bh_kv, rows, consumer: gl.constexpr, OVER_SCORES: gl.constexpr):
    """The epilogue: sm_scale * dK and dV in the inputs' dtype through SMEM (with aliasing,
    the bytes of this consumer's K and V buffers of the tile, which its last products have
    read, or with OVER_SCORES those of its dS, P and dQ staging tiles, once the last dQ
    reduce-add has read them) and TMA stores, waited for: the tile's K/V slot, or the step's
    buffers, may then take the next tile's."""
    (dk_tiles, dv_tiles) = (state.dk_tiles, state.dv_tiles)
    sm_scale = state.sm_scale
    (desc_dk, desc_dv) = (state.desc_dk, state.desc_dv)
    SUB_N: gl.constexpr = dk_tiles.shape[1]
    HEAD_DIM: gl.constexpr = dk_tiles.shape[2]
    dtype: gl.constexpr = dk_tiles.dtype
    if OVER_SCORES:
        tma.store_wait(0)
        dk_smem = dk_tiles.index(consumer)
        dv_smem = dv_tiles.index(consumer)
    else:
        dk_smem = kv_buffer(state, dk_tiles, consumer)
        dv_smem = kv_buffer(state, dv_tiles, consumer)
    dk_smem.store((dk * sm_scale).to(dtype))
    dv_smem.store(dv.to(dtype))
    fence_async_shared()
    tma_store(desc_dk, [bh_kv, rows, 0], dk_smem.reshape([1, SUB_N, HEAD_DIM]))
    tma_store(desc_dv, [bh_kv, rows, 0], dv_smem.reshape([1, SUB_N, HEAD_DIM]))
    tma.store_wait(0)


@gluon.jit
def _step(state, at, next_rows, statistics, rows, key_rows, dk, dv, consumer, MASKED, schedule):
    """One Q block in the shape ``schedule`` names (attention_backward_step.py): S^T or S, or
    the consumers' turns at dQ (attention_backward_turns.py), which need the earlier steps' Q
    blocks. ``at``: (ring index, query head, the Q block's first row, the Q blocks of the two
    steps before as ``previous_rows``). With LATE_DQ or STATISTICS_AHEAD the step takes its
    rows' ``statistics`` (LSE in base 2, delta), loaded by the step before, and loads those of
    ``next_rows`` (the next step's query head and first row, ``_next_rows``) for the next;
    returns (dK, dV, the statistics the next step takes)."""
    (index, bh_q, off_m, _) = at
    P_IN_SMEM: gl.constexpr = schedule.P_IN_SMEM
    DQ_PASS: gl.constexpr = schedule.DQ_PASS
    PIPELINED: gl.constexpr = schedule.PIPELINED
    if DQ_PASS == "alternate":
        dk, dv, statistics = step_taking_turns(
            state, at, next_rows, statistics, key_rows, dk, dv, consumer, MASKED, schedule
        )
    elif schedule.LATE_DQ and not schedule.SCORES_BY_QUERY:
        dk, dv, statistics = step_splitting_late_by_keys(
            state, at, statistics, key_rows, dk, dv, consumer, MASKED
        )
    elif schedule.LATE_DQ:
        dk, dv, statistics = step_splitting_late(
            state, at, next_rows, statistics, rows, dk, dv, consumer, MASKED
        )
    elif schedule.SCORES_BY_QUERY:
        dk, dv = step_by_queries(
            state, index, bh_q, off_m, rows, dk, dv, consumer, MASKED, DQ_PASS, PIPELINED
        )
    else:
        dk, dv = step_by_keys(
            state,
            index,
            bh_q,
            off_m,
            key_rows,
            dk,
            dv,
            consumer,
            MASKED,
            P_IN_SMEM,
            DQ_PASS,
            PIPELINED,
        )
    return dk, dv, statistics


@gluon.jit
def _next_rows(bh_q, m, first, n_m, end_head, seq_len, BLOCK_M: gl.constexpr):
    """(query head, first row) of the step after the one of Q block ``m`` of head ``bh_q``
    in ``_tile``'s order, whose statistics a step loads ahead: the head's next block, else
    the next head's first; after the tile's last step (the next head ``end_head``), row
    seq_len, which ``row_statistics`` masks off (nothing is read)."""
    last_block = m + 1 == n_m
    next_head = gl.where(last_block, bh_q + 1, bh_q)
    next_row = gl.where(last_block, first, m + 1) * BLOCK_M
    return next_head, gl.where(next_head < end_head, next_row, seq_len)


@gluon.jit
def _tile(state, bh_kv, off_n, consumer: gl.constexpr, schedule):
    """One tile, keys [off_n + consumer * SUB_N, off_n + (consumer + 1) * SUB_N) of KV head
    ``bh_kv``: every Q block of every query head of the group, masked ones (on the diagonal)
    first, then the epilogue. ``state.tile`` names the tile's K/V buffers and first step
    (attention_backward_step.kv_buffer, first_step); returns the steps taken so far."""
    CAUSAL: gl.constexpr = schedule.CAUSAL
    (q_tiles, k_tiles) = (state.q_tiles, state.k_tiles)
    (seq_len, group) = (state.seq_len, state.group)
    SUB_N: gl.constexpr = k_tiles.shape[1]
    BLOCK_N: gl.constexpr = k_tiles.shape[0] // state.tile.kv_ready.shape[0] * SUB_N
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    num_warps: gl.constexpr = gl.num_warps()
    acc_layout: gl.constexpr = accumulator_layout(HEAD_DIM, num_warps)
    st_layout: gl.constexpr = accumulator_layout(BLOCK_M, num_warps)
    rows = off_n + consumer * SUB_N
    key_rows = rows + gl.arange(0, SUB_N, gl.SliceLayout(1, st_layout))
    first, masked_end, n_m = _q_blocks(seq_len, off_n, BLOCK_M, BLOCK_N, CAUSAL)
    dk = gl.zeros([SUB_N, HEAD_DIM], gl.float32, acc_layout)
    dv = gl.zeros([SUB_N, HEAD_DIM], gl.float32, acc_layout)
    dk, dv = start_pipeline(dk, dv, schedule.PIPELINED)
    if schedule.KEYS_IN_REGISTERS:
        # K and V as the A operands of S^T and dP^T, loaded once a tile (scores_operands).
        operand_layout: gl.constexpr = gl.DotOperandLayout(
            operand_index=0, parent=st_layout, k_width=2
        )
        keys = kv_buffer(state, k_tiles, consumer).load(operand_layout)
        values = kv_buffer(state, state.v_tiles, consumer).load(operand_layout)
        tile = state.tile
        state = with_tile(
            state,
            BackwardTile(
                tile.kv_ready,
                tile.kv_free,
                tile.batch_kv_heads,
                tile.first_buffer,
                tile.first_step,
                True,
                keys,
                values,
            ),
        )
    # A step with LATE_DQ (S by queries) or STATISTICS_AHEAD loads the next one's statistics
    # (its rows' LSE and delta), so that their latency is hidden behind a whole step
    # (attention_backward_late_split.py, attention_backward_turns.py); the first step's load
    # here. The other steps load their own or read them from the stage: nothing is carried.
    end_head = (bh_kv + 1) * group
    if (schedule.LATE_DQ and schedule.SCORES_BY_QUERY) or schedule.STATISTICS_AHEAD:
        if schedule.LATE_DQ:
            ahead: gl.constexpr = gl.SliceLayout(1, accumulator_layout(SUB_N, num_warps))
        else:
            ahead: gl.constexpr = compact_statistics_layout(BLOCK_M, num_warps)
        first_rows = first * BLOCK_M + gl.arange(0, BLOCK_M, ahead)
        statistics = row_statistics(state, bh_kv * group, first_rows)
    else:
        statistics = (0.0, 0.0)
    index = first_step(state)
    # The Q blocks of the last two steps (their first rows of the [batch * heads * seq_len]
    # rows), whose dQ a step of dq_pass "alternate" may compute.
    previous_row = 0
    earlier_row = 0
    for g in range(group):
        bh_q = bh_kv * group + g
        for m in range(first, masked_end):
            at = (index, bh_q, m * BLOCK_M, (previous_row, earlier_row))
            next_rows = _next_rows(bh_q, m, first, n_m, end_head, seq_len, BLOCK_M)
            dk, dv, statistics = _step(
                state, at, next_rows, statistics, rows, key_rows, dk, dv, consumer, True, schedule
            )
            earlier_row = previous_row
            previous_row = bh_q * seq_len + m * BLOCK_M
            index += 1
        for m in range(gl.maximum(first, masked_end), n_m):
            at = (index, bh_q, m * BLOCK_M, (previous_row, earlier_row))
            next_rows = _next_rows(bh_q, m, first, n_m, end_head, seq_len, BLOCK_M)
            dk, dv, statistics = _step(
                state, at, next_rows, statistics, rows, key_rows, dk, dv, consumer, False, schedule
            )
            earlier_row = previous_row
            previous_row = bh_q * seq_len + m * BLOCK_M
            index += 1
    dk, dv = drain_pipeline(state, index, dk, dv, schedule.PIPELINED)
    if schedule.DQ_PASS == "alternate":
        last_turns(state, index, (previous_row, earlier_row), consumer, schedule.TURN_DELAY)
        wait_for_turns_on_own(state, index, consumer)
    elif schedule.LATE_DQ:
        last_late_dq(state, index, previous_row, consumer, schedule.SCORES_BY_QUERY)
        if schedule.EPILOGUE_OVER_SCORES:
            # This consumer's products read K and V no more, the epilogue stores over its
            # dS, P and dQ staging tiles: the next tile's K and V may land in their slot
            # while it does.
            KV_BUFFERS: gl.constexpr = state.tile.kv_ready.shape[0]
            CONSUMERS: gl.constexpr = k_tiles.shape[0] // KV_BUFFERS
            mbarrier.arrive(state.tile.kv_free.index(state.tile.first_buffer // CONSUMERS))
        wait_for_late_dq_on_own(state, index, consumer)
    else:
        wait_for_other_consumer(state, index, consumer, schedule.DQ_PASS)
    _store_dk_dv(state, dk, dv, bh_kv, rows, consumer, schedule.EPILOGUE_OVER_SCORES)
    return index


@gluon.jit
def _consumer_partition(state, consumer: gl.constexpr, schedule):
    """One consumer warpgroup, for each of the CTA's tiles (``_tile``) once its K and V have
    landed (``kv_ready``); with PERSISTENT it then frees the tile's K/V slot (``kv_free``: the
    epilogue has stored dK and dV from its bytes; with EPILOGUE_OVER_SCORES ``_tile`` frees
    it before the epilogue) for the loader's next tile in it. The ring's index and every
    barrier phase run on from tile to tile. ``schedule``: the kernel's
    constexprs (``BackwardSchedule``)."""
    (kv_ready, kv_free) = (state.tile.kv_ready, state.tile.kv_free)
    batch_kv_heads = state.tile.batch_kv_heads
    k_tiles = state.k_tiles
    seq_len = state.seq_len
    KV_BUFFERS: gl.constexpr = kv_ready.shape[0]
    CONSUMERS: gl.constexpr = k_tiles.shape[0] // KV_BUFFERS
    BLOCK_N: gl.constexpr = CONSUMERS * k_tiles.shape[1]
    index = 0
    taken = 0
    PERSISTENT: gl.constexpr = schedule.PERSISTENT
    tiles = gl.cdiv(seq_len, BLOCK_N) * batch_kv_heads
    (first_tile, end_tile, tile_step) = tiles_of_cta(tiles, PERSISTENT)
    for tile in range(first_tile, end_tile, tile_step):
        bh_kv, off_n = _tile_at(
            tile, seq_len, batch_kv_heads, BLOCK_N, schedule.TILE_ORDER, tile_step
        )
        slot = taken % KV_BUFFERS
        tile = BackwardTile(
            kv_ready, kv_free, batch_kv_heads, slot * CONSUMERS, index, False, ABSENT, ABSENT
        )
        tile_state = with_tile(state, tile)
        mbarrier.wait(kv_ready.index(slot), (taken // KV_BUFFERS) & 1)
        index = _tile(tile_state, bh_kv, off_n, consumer, schedule)
        if PERSISTENT and not schedule.EPILOGUE_OVER_SCORES:
            mbarrier.arrive(kv_free.index(slot))
        taken += 1


# The shapes vary from call to call and the TMA clips at the edges: specializing on them
# would compile every configuration again for each.
@tlx.jit(do_not_specialize=["seq_len", "group", "batch_kv_heads"])
def attention_bwd_kernel(
    desc_q,
    desc_k,
    desc_v,
    desc_do,
    desc_dk,
    desc_dv,
    desc_dq,
    desc_statistics,
    lse_ptr,
    delta_ptr,
    dq_ptr,
    sm_scale,
    qk_scale,
    seq_len,
    group,
    batch_kv_heads,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
    CONSUMERS: gl.constexpr,
    P_IN_SMEM: gl.constexpr,
    ALIAS: gl.constexpr,
    SCORES_BY_QUERY: gl.constexpr,
    DQ_PASS: gl.constexpr,
    PIPELINED: gl.constexpr,
    TURN_DELAY: gl.constexpr,
    TURN_BUFFERS: gl.constexpr,
    KV_BUFFERS: gl.constexpr,
    PERSISTENT: gl.constexpr,
    KEYS_IN_REGISTERS: gl.constexpr,
    DQ_STAGING_TILES: gl.constexpr,
    LATE_DQ: gl.constexpr,
    STATISTICS_AHEAD: gl.constexpr,
    STAGED_STATISTICS: gl.constexpr,
    DK_FROM_REGISTERS: gl.constexpr,
    EPILOGUE_OVER_SCORES: gl.constexpr,
    CAUSAL_TILE_ORDER: gl.constexpr,
    CONSUMER_REGISTERS: gl.constexpr,
):
    """A tile a CTA (grid: the key blocks of every (batch, KV head)), or with PERSISTENT each
    CTA's tiles in turn (grid: at most one CTA an SM): dK and dV of BLOCK_N keys of a KV head,
    summed over the ``group`` query heads that share it, and their share of each of those
    heads' dQ (into the fp32 accumulator ``dq_ptr``, as DQ_PASS says: atomics, or TMA
    reduce-adds through ``desc_dq``, its [batch * heads, seq_len, head_dim] descriptor; none
    with "separate"). ``qk_scale`` is sm_scale * log2(e); ``lse_ptr`` holds the forward's
    natural-log LSE a row, ``delta_ptr`` rowsum(dO * O), or with STAGED_STATISTICS
    ``desc_statistics`` addresses both, the rows [2 * head, 2 * head + 2) of LSE in base 2
    and delta (attention_backward_delta.staged_statistics); ``batch_kv_heads``: batch * KV
    heads, the tiles' heads (and the tuner's key)."""
    SUB_N: gl.constexpr = BLOCK_N // CONSUMERS
    tiles = smem_tiles(
        desc_q.dtype,
        BLOCK_M,
        SUB_N,
        HEAD_DIM,
        NUM_STAGES,
        CONSUMERS,
        P_IN_SMEM,
        ALIAS,
        SCORES_BY_QUERY,
        PIPELINED,
        DQ_PASS,
        TURN_BUFFERS,
        KV_BUFFERS,
        DQ_STAGING_TILES,
        LATE_DQ,
        STAGED_STATISTICS,
        EPILOGUE_OVER_SCORES,
    )
    # A K/V slot's K and V have landed (kv_ready); its tile is done with K and V, one
    # arrival a consumer (kv_free): the barriers of a ring of slots.
    kv_ready, kv_free = ring_barriers(KV_BUFFERS, CONSUMERS)
    ready, empty = ring_barriers(NUM_STAGES, CONSUMERS)
    ds_barriers = cross_consumer_barriers(CONSUMERS, DQ_PASS, TURN_BUFFERS, LATE_DQ)
    fence_async_shared()
    # What a pass does not use is ABSENT.
    if DQ_PASS == "tma_add" or DQ_PASS == "split" or DQ_PASS == "alternate":
        dq_staging = (tiles[8], desc_dq)
    else:
        dq_staging = (ABSENT, ABSENT)
    # The tile: each partition sets its first K/V buffer and first step for each of its
    # tiles.
    tile = BackwardTile(kv_ready, kv_free, batch_kv_heads, ABSENT, ABSENT, False, ABSENT, ABSENT)
    state = BackwardState(
        tiles[0],
        tiles[1],
        tiles[2],
        tiles[3],
        tiles[4],
        tiles[5],
        tiles[6],
        tiles[7],
        tile,
        ready,
        empty,
        lse_ptr,
        delta_ptr,
        dq_ptr,
        sm_scale,
        qk_scale,
        seq_len,
        group,
        desc_dk,
        desc_dv,
        dq_staging[0],
        dq_staging[1],
        ds_barriers[0],
        ds_barriers[1],
        tiles[9],
    )
    schedule = BackwardSchedule(
        CAUSAL,
        P_IN_SMEM,
        SCORES_BY_QUERY,
        DQ_PASS,
        PIPELINED,
        TURN_DELAY,
        PERSISTENT,
        KEYS_IN_REGISTERS,
        LATE_DQ,
        STATISTICS_AHEAD,
        STAGED_STATISTICS,
        DK_FROM_REGISTERS,
        EPILOGUE_OVER_SCORES,
        CAUSAL_TILE_ORDER,
    )
    loads = (desc_q, desc_do, desc_k, desc_v, desc_statistics)
    if CONSUMERS == 2:
        gl.warp_specialize(
            [
                (_consumer_partition, (state, 0, schedule)),
                (_consumer_partition, (state, 1, schedule)),
                (_load_partition, (state, loads, schedule)),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )
    else:
        gl.warp_specialize(
            [
                (_consumer_partition, (state, 0, schedule)),
                (_load_partition, (state, loads, schedule)),
            ],
            [1],
            [LOADER_REGISTERS],
        )
