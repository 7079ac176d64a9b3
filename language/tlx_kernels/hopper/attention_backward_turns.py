"""The consumers' turns at dQ in the Hopper attention backward (dq_pass "alternate";
tlx_kernels/hopper/attention_backward_kernel.py has the kernel, attention_backward_step.py
the other steps).

A step is ``attention_backward_step.step_by_keys``'s, pipelined: S^T = K Q^T and dP^T =
V dO^T, P^T from registers for dV, dS^T through SMEM for dK (or, with DK_FROM_REGISTERS,
from registers: dK then retired within the step, as dV is). The dQ of step i's Q block, a
sum over both consumers' keys, is computed once a CTA, by consumer i % 2 (its turn), in step
i + TURN_DELAY or, for the last steps, after the loop (``last_turns``): its two products
read the dS^T each consumer wrote in step i, are issued after the turn's step's S^T and dP^T
so that they run under its softmax, and their sum is added by one TMA reduce-add from the
consumer's fp32 staging tile. So the consumers need not be in step: a turn waits for a dS^T
written TURN_DELAY steps earlier.

Each consumer writes its dS^T to TURN_BUFFERS buffers in turn (step i's to buffer
i % TURN_BUFFERS), so a buffer is rewritten TURN_BUFFERS steps later. A dS^T whose turn is
the other consumer's (a "given" one: consumer c's are those of the steps of parity 1 - c) is
announced by its buffer's ``ds_ready`` barrier once written; the other arrives on the
buffer's ``ds_free`` once its turn has read it and the writer's K, and the writer waits for
that before it rewrites the buffer (``_wait_for_turn_on``) and before the epilogue writes
dK over K (``wait_for_turns_on_own``). A consumer reads a dS^T of its own turn itself, in
step i + TURN_DELAY, before that step writes: hence TURN_DELAY <= TURN_BUFFERS
(attention_backward_config.Config).

A buffer's barriers, not a consumer's: a buffer is given every lcm(TURN_BUFFERS, 2) steps,
and each of its uses waits for the one before, so neither barrier can complete a phase
twice between a wait and the one it means. With one barrier pair a consumer and three
buffers, the writer could announce two dS^T before the other's turn waited for the first
(``python -m tlx check`` reports it as an ambiguous wait).

No branch of a turn yields a product in flight: the registers of such a result were copied
before the tensor cores had written them (a first version's dK came out wrong so), hence
each branch waits for what it issues and dV and dK are issued after it.
"""

import tlx
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.attention_backward_step import (
    first_step,
    kv_buffer,
    per_consumer,
    reduce_dq,
    release_stage_of,
    row_statistics,
    scores_operands,
    scores_to_gradients,
)
from tlx_kernels.hopper.common import accumulator_layout, block_indices


@gluon.constexpr_function
def compact_statistics_layout(block_m, num_warps):
    """The layout a turns step with STATISTICS_AHEAD carries the next step's statistics in:
    a Q block's rows spread over the warpgroup's threads, one value a thread (or two threads
    a value), where the S^T accumulator's column slice holds a quarter of the block's a
    thread (32 registers for LSE and delta, which carried through a step spilled)."""
    return gl.BlockedLayout([1], [32], [num_warps], [0])


@gluon.jit
def _ds_buffer(state, owner: gl.constexpr, step):
    """Consumer ``owner``'s dS^T buffer of step ``step``: its TURN_BUFFERS buffers are the
    spec's ds_tiles [owner * TURN_BUFFERS, (owner + 1) * TURN_BUFFERS)."""
    ds_tiles = state.ds_tiles
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    return ds_tiles.index(TURN_BUFFERS * owner + step % TURN_BUFFERS)


@gluon.jit
def _given(barriers, owner: gl.constexpr, step, TURN_BUFFERS: gl.constexpr):
    """(the barrier of consumer ``owner``'s dS^T buffer of step ``step``, the phase of its
    use by that step): the buffer's given uses are lcm(TURN_BUFFERS, 2) steps apart."""
    SPACING: gl.constexpr = TURN_BUFFERS * (1 + TURN_BUFFERS % 2)
    return barriers.index(TURN_BUFFERS * owner + step % TURN_BUFFERS), (step // SPACING) & 1


@gluon.jit
def _issue_turn(state, step, consumer: gl.constexpr):
    """Issues, on this consumer's turn, dQ's products of step ``step``'s Q block over both
    consumers' keys: dS_c K_c from its own dS^T buffer of the step, then, once the other's
    dS^T of the step is written (``ds_ready``), the other's. Each dS is read from SMEM as the
    transpose of the dS^T tile written."""
    (k_tiles, ds_tiles) = state.k_tiles, state.ds_tiles
    ds_ready = state.ds_ready
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    BLOCK_M: gl.constexpr = ds_tiles.shape[2]
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    num_warps: gl.constexpr = gl.num_warps()
    acc_layout: gl.constexpr = accumulator_layout(HEAD_DIM, num_warps)
    other: gl.constexpr = 1 - consumer
    dq = warpgroup_mma(
        _ds_buffer(state, consumer, step).permute((1, 0)),
        kv_buffer(state, k_tiles, consumer),
        gl.zeros([BLOCK_M, HEAD_DIM], gl.float32, acc_layout),
        use_acc=False,
        is_async=True,
    )
    barrier, phase = _given(ds_ready, other, step, TURN_BUFFERS)
    mbarrier.wait(barrier, phase)
    dq = warpgroup_mma(
        _ds_buffer(state, other, step).permute((1, 0)),
        kv_buffer(state, k_tiles, other),
        dq,
        is_async=True,
    )
    return dq


@gluon.jit
def _finish_turn(state, dq, step, row, consumer: gl.constexpr):
    """dQ of step ``step``'s Q block complete (``dq``, its products waited for): the other
    consumer's dS^T buffer is free again (``ds_free``), and dQ goes to this consumer's staging
    tile and its TMA reduce-add (``reduce_dq``; ``row``: the Q block's first row of the
    [batch * heads * seq_len] rows)."""
    ds_free = state.ds_free
    seq_len = state.seq_len
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    mbarrier.arrive(_given(ds_free, 1 - consumer, step, TURN_BUFFERS)[0])
    reduce_dq(state, dq, row // seq_len, row % seq_len, step >> 1, 0, consumer)


@gluon.jit
def _wait_for_turn_on(state, step, consumer: gl.constexpr):
    """If step ``step`` (none if negative) gave this consumer's dS^T to the other's turn,
    waits until that turn has read it and this consumer's K (its buffer's ``ds_free``)."""
    ds_free = state.ds_free
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    if (step >= first_step(state)) & ((step & 1) != consumer):
        barrier, phase = _given(ds_free, consumer, step, TURN_BUFFERS)
        mbarrier.wait(barrier, phase)


@gluon.jit
def wait_for_turns_on_own(state, index, consumer: gl.constexpr):
    """Before the epilogue writes dK over K (``index``: the steps taken): waits until the
    other consumer's turns have read the dS^T this consumer gave them in its last
    TURN_BUFFERS steps, and its K; the earlier ones were waited for before their buffers were
    rewritten."""
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    for back in gl.static_range(TURN_BUFFERS):
        _wait_for_turn_on(state, index - TURN_BUFFERS + back, consumer)


@gluon.jit
def last_turns(state, index, previous_rows, consumer: gl.constexpr, TURN_DELAY: gl.constexpr):
    """After the loop (``index``: the steps taken; ``previous_rows``: the Q blocks of steps
    index - 1 and index - 2, as ``step_taking_turns`` takes them): this consumer's turns of
    the last TURN_DELAY steps, oldest first."""
    for back in gl.static_range(TURN_DELAY):
        step = index - TURN_DELAY + back
        if (step >= first_step(state)) & ((step & 1) == consumer):
            dq = _issue_turn(state, step, consumer)
            dq = warpgroup_mma_wait(0, deps=[dq])
            _finish_turn(state, dq, step, previous_rows[TURN_DELAY - 1 - back], consumer)


@gluon.jit
def staged_row_statistics(state, stage, layout: gl.constexpr):
    """(LSE in base 2, delta) of a stage's Q block in ``layout``, from the rows the loader
    copied beside its Q and dO (STAGED_STATISTICS): zeros past the sequence's end, where Q
    and dO are zeros too, so that P^T is 1 and dS^T 0 there, and dV and dK gain nothing."""
    BLOCK_M: gl.constexpr = state.statistics_tiles.shape[2]
    # The stage's two rows, unswizzled, as one run of 2 * BLOCK_M values.
    run: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])
    rows = tlx.local_reinterpret(
        state.statistics_tiles.index(stage), gl.float32, [2 * BLOCK_M], run
    )
    return rows.slice(0, BLOCK_M).load(layout), rows.slice(BLOCK_M, BLOCK_M).load(layout)


@gluon.jit
def step_taking_turns(
    state,
    at,
    next_rows,
    statistics,
    key_rows,
    dk,
    dv,
    consumer: gl.constexpr,
    MASKED: gl.constexpr,
    schedule,
):
    """One step: S^T and dP^T, on this consumer's turn the products of step index -
    TURN_DELAY's dQ, the softmax, dV from P^T in registers, dS^T into SMEM for dK (and the
    other consumer's turn, if the step's is). ``at``: (the step's ring index, its query head,
    its Q block's first row, ``previous_rows``: the Q blocks of steps index - 1 and
    index - 2, their first rows of the [batch * heads * seq_len] rows). dV is retired within
    the step (P^T's registers), dK left in flight into the next step. With the schedule's
    STATISTICS_AHEAD, ``statistics`` holds this step's rows' (LSE in base 2, delta) in
    ``compact_statistics_layout``, loaded by the step before, and the step loads those of
    ``next_rows`` (the next step's query head and first row); with STAGED_STATISTICS it reads
    its own from the stage (``staged_row_statistics``); else it loads its own. Either of
    those passes ``statistics`` on. With the schedule's DK_FROM_REGISTERS dK reads dS^T from
    registers and is retired with dV. Returns (dK, dV, the statistics the next step
    takes)."""
    (index, bh_q, off_m, previous_rows) = at
    TURN_DELAY: gl.constexpr = schedule.TURN_DELAY
    (q_tiles, do_tiles, k_tiles) = (state.q_tiles, state.do_tiles, state.k_tiles)
    ready = state.ready
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    SUB_N: gl.constexpr = k_tiles.shape[1]
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    TURN_BUFFERS: gl.constexpr = per_consumer(
        state.ds_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    dtype: gl.constexpr = q_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    st_layout: gl.constexpr = accumulator_layout(BLOCK_M, num_warps)
    acc_layout: gl.constexpr = accumulator_layout(HEAD_DIM, num_warps)
    operand_layout: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=acc_layout, k_width=2
    )
    ds_ready = state.ds_ready
    stage = index % NUM_STAGES
    q = q_tiles.index(stage)
    do = do_tiles.index(stage)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([SUB_N, BLOCK_M], gl.float32, st_layout)
    keys, values = scores_operands(state, consumer)
    s_tok = warpgroup_mma(keys, q.permute((1, 0)), zeros, use_acc=False, is_async=True)
    dp_tok = warpgroup_mma(values, do.permute((1, 0)), zeros, use_acc=False, is_async=True)
    queries = block_indices(off_m, BLOCK_M, gl.SliceLayout(0, st_layout))
    if schedule.STATISTICS_AHEAD:
        # To the accumulator's column slice through SMEM (convert_layout), where the global
        # load, issued here, waited at the softmax; the next step's load, a step ahead.
        lse2 = gl.convert_layout(statistics[0], queries.type.layout)
        delta = gl.convert_layout(statistics[1], queries.type.layout)
        compact: gl.constexpr = compact_statistics_layout(BLOCK_M, num_warps)
        next_queries = next_rows[1] + gl.arange(0, BLOCK_M, compact)
        statistics = row_statistics(state, next_rows[0], next_queries)
    elif schedule.STAGED_STATISTICS:
        lse2, delta = staged_row_statistics(state, stage, gl.SliceLayout(0, st_layout))
    else:
        lse2, delta = row_statistics(state, bh_q, queries)
    turn = index - TURN_DELAY
    # This consumer's turn: step turn's dQ, its products run under the softmax.
    if (turn >= first_step(state)) & ((turn & 1) == consumer):
        dq = _issue_turn(state, turn, consumer)
        s, dk_done, dv_done = warpgroup_mma_wait(3, deps=[s_tok, dk, dv])
        release_stage_of(state, index - 1)
        dp = warpgroup_mma_wait(2, deps=[dp_tok])
        p, ds = scores_to_gradients(s, dp, lse2, delta, queries, key_rows, state.qk_scale, MASKED)
        dq = warpgroup_mma_wait(0, deps=[dq])
        _finish_turn(state, dq, turn, previous_rows[TURN_DELAY - 1], consumer)
    else:
        s, dk_done, dv_done = warpgroup_mma_wait(1, deps=[s_tok, dk, dv])
        if index > first_step(state):
            release_stage_of(state, index - 1)
        dp = warpgroup_mma_wait(0, deps=[dp_tok])
        p, ds = scores_to_gradients(s, dp, lse2, delta, queries, key_rows, state.qk_scale, MASKED)
    p16 = gl.convert_layout(p.to(dtype), operand_layout)
    dv = warpgroup_mma(p16, do, dv_done, is_async=True)
    ds16 = ds.to(dtype)
    if schedule.DK_FROM_REGISTERS:
        # dS^T as dK's A operand from registers, issued before the store for dQ's turn.
        ds_operand = gl.convert_layout(ds16, operand_layout)
        dk = warpgroup_mma(ds_operand, q, dk_done, is_async=True)
    ds_smem = _ds_buffer(state, consumer, index)
    _wait_for_turn_on(state, index - TURN_BUFFERS, consumer)
    ds_smem.store(ds16)
    fence_async_shared()
    # dQ of this step is consumer (index & 1)'s turn: the other's, this consumer gives it dS^T.
    if (index & 1) != consumer:
        mbarrier.arrive(_given(ds_ready, consumer, index, TURN_BUFFERS)[0])
    if schedule.DK_FROM_REGISTERS:
        # dV and dK retired within the step: their A operands are registers the next reuses.
        dv, dk, p16, ds_operand = warpgroup_mma_wait(0, deps=[dv, dk, p16, ds_operand])
        return warpgroup_mma_init(dk), warpgroup_mma_init(dv), statistics
    dk = warpgroup_mma(ds_smem, q, dk_done, is_async=True)
    dv, p16 = warpgroup_mma_wait(1, deps=[dv, p16])
    return dk, warpgroup_mma_init(dv), statistics
