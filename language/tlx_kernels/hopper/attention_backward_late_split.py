"""FA3's split of dQ a step late in the Hopper attention backward (dq_pass "split" with
``Config.late_dq``; tlx_kernels/hopper/attention_backward_kernel.py has the kernel,
attention_backward_step.py the split in its step).

The split's consumer c computes columns [c D/2, (c+1) D/2) of the CTA's dQ of a Q block over
both consumers' dS. In its step that waits for the other consumer's dS of the same step, so
the two consumers run in step, and each one's softmax leaves the tensor cores with nothing of
its own to run. Here step i issues the products of step i - 1's dQ (both consumers' dS of that
step, read from SMEM) after its softmax, where the split issues step i's, and waits for the
other's dS of the step before: the consumers need not be in step, so that one's softmax may
run while the other's products do. (Issued before the softmax, to run under it, their
accumulator beside S, dP, dK and dV spilled 384 / 1124 bytes a thread at HEAD_DIM 128,
ptxas on Triton 3.6, without / with the causal mask.) The last
step's dQ follows the loop (``last_late_dq``).

Each step also loads the next step's statistics (its rows' LSE and delta, two a thread): loaded
in the step that uses them, their latency showed in `ncu`'s warp-state samples (the first use
of the LSE waited on the load in 3-4% of all samples, HEAD_DIM 128), and a step ahead the
kernel ran 3-6% faster on an H100 (docs/attention-backward.md, "Statistics a step ahead").

With S^T (``step_splitting_late_by_keys``, ``Config.splits_on_keys``) P^T and dS^T are dV's
and dK's A operands from registers, retired within the step, and the buffers hold dS^T,
which dQ's products read transposed: no P goes through SMEM, and a consumer's step reads
128 KiB of wgmma operands at HEAD_DIM 128 where the steps with S by queries read 144. The
statistics come with the ring's stage (``Config.staged_statistics``).

Each consumer writes its dS to two buffers in turn (step i's to buffer i % 2), each with a
barrier pair: ``ds_ready`` (written) and ``ds_free`` (the other consumer's dQ products have
read it and the writer's K). A buffer is rewritten two steps later, once the other's products
of its last use are retired; the epilogue waits for both buffers' last uses before it writes
dK over K (``wait_for_late_dq_on_own``). Every step uses its buffer once, so a use's phase is
(step // 2) & 1.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.attention_backward_state import step_tiles
from tlx_kernels.hopper.attention_backward_step import (
    first_step,
    gradients_by_query,
    kv_buffer,
    reduce_dq,
    release_stage_of,
    row_statistics,
    scores_to_gradients,
)
from tlx_kernels.hopper.attention_backward_turns import staged_row_statistics
from tlx_kernels.hopper.common import accumulator_layout, block_indices


@gluon.jit
def _ds_use(owner, step):
    """(the index of consumer ``owner``'s dS buffer of step ``step`` among ds_tiles and its
    barriers, the parity of that use's phase). A step before the CTA's first (negative) gets
    parity 1, which a barrier not yet used has completed: a wait for it passes."""
    return 2 * owner + (step & 1), (step >> 1) & 1


@gluon.jit
def _ds_operand(state, buffer, BY_QUERY: gl.constexpr):
    """dQ's A operand from a dS buffer: the buffer itself with S by queries, the transpose
    of the dS^T written with S^T."""
    tile = state.ds_tiles.index(buffer)
    if BY_QUERY:
        operand = tile
    else:
        operand = tile.permute((1, 0))
    return operand


@gluon.jit
def _issue_late_dq(state, step, consumer: gl.constexpr, BY_QUERY: gl.constexpr):
    """Issues this consumer's columns of step ``step``'s dQ: its own dS of the step times its
    K, then, once the other consumer's dS of the step is written (``ds_ready``), the other's
    times its K, both dS read from SMEM. Before the tile's first step there is no step: the
    second product then reads this consumer's own buffer again, and the sum is dropped
    (products are issued on every step, not in a branch: a branch that yields a product in
    flight lets the compiler copy its registers before the tensor cores write them)."""
    (k_tiles, ds_tiles) = state.k_tiles, state.ds_tiles
    ds_ready = state.ds_ready
    COLUMNS: gl.constexpr = k_tiles.shape[2] // 2
    BLOCK_M: gl.constexpr = ds_tiles.shape[1]
    num_warps: gl.constexpr = gl.num_warps()
    half_layout: gl.constexpr = accumulator_layout(COLUMNS, num_warps)
    other: gl.constexpr = 1 - consumer
    own_buffer, _ = _ds_use(consumer, step)
    other_buffer, phase = _ds_use(other, step)
    # Before the tile's first step the wait is for a phase completed already (the previous
    # tile's last step, or none: ``_ds_use``), so it passes: no branch around it.
    in_tile = step >= first_step(state)
    mbarrier.wait(ds_ready.index(other_buffer), phase)
    dq = warpgroup_mma(
        _ds_operand(state, own_buffer, BY_QUERY),
        kv_buffer(state, k_tiles, consumer).slice(consumer * COLUMNS, COLUMNS, dim=1),
        gl.zeros([BLOCK_M, COLUMNS], gl.float32, half_layout),
        use_acc=False,
        is_async=True,
    )
    second = gl.where(in_tile, other, consumer)
    return warpgroup_mma(
        _ds_operand(state, gl.where(in_tile, other_buffer, own_buffer), BY_QUERY),
        kv_buffer(state, k_tiles, second).slice(consumer * COLUMNS, COLUMNS, dim=1),
        dq,
        is_async=True,
    )


@gluon.jit
def _finish_late_dq(state, dq, step, row, consumer: gl.constexpr):
    """Step ``step``'s dQ columns complete (``dq``, its products waited for): the other
    consumer's dS buffer of the step is free again (``ds_free``), and the columns go to a
    staging tile and its TMA reduce-add (``reduce_dq``; ``row``: the Q block's first row of
    the [batch * heads * seq_len] rows). Before the tile's first step there is no step: the
    arrival is predicated off and zeros are added (whatever the products read), so that no
    branch stands between dK's issue and the next step's wait."""
    ds_free = state.ds_free
    seq_len = state.seq_len
    COLUMNS: gl.constexpr = dq.shape[1]
    in_tile = step >= first_step(state)
    mbarrier.arrive(ds_free.index(_ds_use(1 - consumer, step)[0]), pred=in_tile)
    dq = gl.where(in_tile, dq, 0.0)
    # The reductions' numbers, which pick the staging tiles in turn, from 0: step + 1 (the
    # step before the CTA's first is -1).
    sequence = step + 1
    reduce_dq(state, dq, row // seq_len, row % seq_len, sequence, consumer * COLUMNS, consumer)


@gluon.jit
def _wait_for_late_dq_on(state, step, consumer: gl.constexpr):
    """Waits until the other consumer's dQ products have read this consumer's dS of step
    ``step`` and its K. For a step before the tile's first the phase was completed already
    (an earlier tile's, waited for by its epilogue, or none: ``_ds_use``), and it passes."""
    ds_free = state.ds_free
    buffer, phase = _ds_use(consumer, step)
    mbarrier.wait(ds_free.index(buffer), phase)


@gluon.jit
def wait_for_late_dq_on_own(state, index, consumer: gl.constexpr):
    """Before the epilogue writes dK over K (``index``: the steps taken): waits for the other
    consumer's products over this consumer's dS of the last two steps; the earlier ones were
    waited for before their buffers were rewritten."""
    _wait_for_late_dq_on(state, index - 2, consumer)
    _wait_for_late_dq_on(state, index - 1, consumer)


@gluon.jit
def last_late_dq(state, index, previous_row, consumer: gl.constexpr, BY_QUERY: gl.constexpr):
    """After the loop (``index``: the steps taken; ``previous_row``: the last step's Q
    block; ``BY_QUERY``: the steps' S by queries, else S^T): this consumer's columns of the
    last step's dQ."""
    step = index - 1
    dq = _issue_late_dq(state, step, consumer, BY_QUERY)
    dq = warpgroup_mma_wait(0, deps=[dq])
    _finish_late_dq(state, dq, step, previous_row, consumer)


@gluon.jit
def step_splitting_late(
    state,
    at,
    next_rows,
    statistics,
    first_key,
    dk,
    dv,
    consumer: gl.constexpr,
    MASKED: gl.constexpr,
):
    """One step with S by queries: S and dP, the softmax, P to SMEM for dV, step index - 1's
    dQ columns, dS to this step's buffer for dK and the next step's dQ. ``at``: (the ring
    index, the query head, the Q block's first row, ``previous_rows``: the Q blocks of steps
    index - 1 and index - 2, their first rows of the [batch * heads * seq_len] rows). dQ's
    products follow dV's, once P is in SMEM and dS in 16 bits (their accumulator beside
    fp32 P and dS spilled 248 bytes a thread at HEAD_DIM 128), and the step's wait for them
    retires dV too; dK stays in flight into the next step, whose wait for S retires it.
    ``statistics``: this step's rows' (LSE in base 2, delta), loaded by the step before;
    returns (dK, dV, those of ``next_rows``, the next step's query head and first row)."""
    (index, _, off_m, previous_rows) = at
    (q_tiles, do_tiles, k_tiles, v_tiles, ds_tiles, p_tiles) = step_tiles(state)
    ready = state.ready
    ds_ready = state.ds_ready
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    SUB_N: gl.constexpr = k_tiles.shape[1]
    dtype: gl.constexpr = q_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = accumulator_layout(SUB_N, num_warps)
    stage = index % NUM_STAGES
    q = q_tiles.index(stage)
    do = do_tiles.index(stage)
    # The consumer's buffers indexed by a value the compiler cannot fold (index >> 31 is 0),
    # so that their wgmma descriptors are not hoisted out of the loop into registers that
    # stay live across it (as attention_backward_step.step_by_queries does).
    own = consumer + (index >> 31)
    k = kv_buffer(state, k_tiles, own)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([BLOCK_M, SUB_N], gl.float32, s_layout)
    s_tok = warpgroup_mma(q, k.permute((1, 0)), zeros, use_acc=False, is_async=True)
    dp_tok = warpgroup_mma(
        do, kv_buffer(state, v_tiles, own).permute((1, 0)), zeros, use_acc=False, is_async=True
    )
    # Sums, not common.block_indices: its shorter masked step ran 1-3% slower here
    # (docs/attention-backward.md, "The causal mask's key indices").
    queries = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, s_layout))
    keys = first_key + (index >> 31) + gl.arange(0, SUB_N, gl.SliceLayout(0, s_layout))
    # This step's statistics came with the step before; the next step's load here, a step
    # ahead of their use.
    lse2, delta = statistics
    next_queries = next_rows[1] + gl.arange(0, BLOCK_M, gl.SliceLayout(1, s_layout))
    statistics = row_statistics(state, next_rows[0], next_queries)
    s, dk, dv = warpgroup_mma_wait(1, deps=[s_tok, dk, dv])
    previous = index - 1
    if previous >= first_step(state):
        release_stage_of(state, previous)
    dp = warpgroup_mma_wait(0, deps=[dp_tok])
    p, ds = gradients_by_query(s, dp, lse2, delta, queries, keys, state.qk_scale, MASKED)
    p_smem = p_tiles.index(own)
    p_smem.store(p.to(dtype))
    fence_async_shared()
    dv = warpgroup_mma(p_smem.permute((1, 0)), do, dv, is_async=True)
    ds16 = ds.to(dtype)
    dq = _issue_late_dq(state, previous, consumer, True)
    buffer, _ = _ds_use(consumer, index)
    ds_smem = ds_tiles.index(buffer)
    _wait_for_late_dq_on(state, index - 2, consumer)
    ds_smem.store(ds16)
    fence_async_shared()
    mbarrier.arrive(ds_ready.index(buffer))
    dk = warpgroup_mma(ds_smem.permute((1, 0)), q, dk, is_async=True)
    # Retires dV and dQ's products, leaves dK in flight into the next step.
    dq = warpgroup_mma_wait(1, deps=[dq])
    _finish_late_dq(state, dq, previous, previous_rows[0], consumer)
    return dk, dv, statistics


@gluon.jit
def step_splitting_late_by_keys(
    state, at, statistics, key_rows, dk, dv, consumer: gl.constexpr, MASKED: gl.constexpr
):
    """One step of the late split with S^T (``Config.splits_on_keys``): S^T = K Q^T and
    dP^T = V dO^T, the statistics from the stage (``staged_row_statistics``: read from
    registers, 16 queries' a thread, they spilled), P^T and dS^T, dV and dK with both from
    registers, step index - 1's dQ columns over both consumers' dS (the transposes of the
    dS^T buffers), this step's dS^T to its buffer for the next step's; dV and dK are retired
    with the step (their A operands' registers), dQ's products then, and the previous step's
    columns reduced. ``at`` and the step's order of waits are ``step_splitting_late``'s;
    ``key_rows``: this consumer's keys. Returns (dK, dV, ``statistics`` unchanged)."""
    (index, _, off_m, previous_rows) = at
    (q_tiles, do_tiles, k_tiles) = state.q_tiles, state.do_tiles, state.k_tiles
    ready = state.ready
    ds_ready = state.ds_ready
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    SUB_N: gl.constexpr = k_tiles.shape[1]
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    dtype: gl.constexpr = q_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    st_layout: gl.constexpr = accumulator_layout(BLOCK_M, num_warps)
    operand_layout: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=accumulator_layout(HEAD_DIM, num_warps), k_width=2
    )
    stage = index % NUM_STAGES
    q = q_tiles.index(stage)
    do = do_tiles.index(stage)
    # Indexed by a value the compiler cannot fold, as step_splitting_late's.
    own = consumer + (index >> 31)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([SUB_N, BLOCK_M], gl.float32, st_layout)
    s_tok = warpgroup_mma(
        kv_buffer(state, k_tiles, own), q.permute((1, 0)), zeros, use_acc=False, is_async=True
    )
    dp_tok = warpgroup_mma(
        kv_buffer(state, state.v_tiles, own),
        do.permute((1, 0)),
        zeros,
        use_acc=False,
        is_async=True,
    )
    queries = block_indices(off_m, BLOCK_M, gl.SliceLayout(0, st_layout))
    s = warpgroup_mma_wait(1, deps=[s_tok])
    previous = index - 1
    if previous >= first_step(state):
        release_stage_of(state, previous)
    lse2, delta = staged_row_statistics(state, stage, gl.SliceLayout(0, st_layout))
    dp = warpgroup_mma_wait(0, deps=[dp_tok])
    p, ds = scores_to_gradients(s, dp, lse2, delta, queries, key_rows, state.qk_scale, MASKED)
    p16 = gl.convert_layout(p.to(dtype), operand_layout)
    dv = warpgroup_mma(p16, do, dv, is_async=True)
    ds16 = ds.to(dtype)
    ds_operand = gl.convert_layout(ds16, operand_layout)
    dk = warpgroup_mma(ds_operand, q, dk, is_async=True)
    # Before this step's dS^T is announced, as step_splitting_late: a consumer announcing
    # step i's dS^T before waiting for the other's of step i - 1 could run two steps ahead,
    # and the other's wait on a buffer's parity would be ambiguous (``python -m tlx check``).
    dq = _issue_late_dq(state, previous, consumer, False)
    buffer, _ = _ds_use(consumer, index)
    ds_smem = state.ds_tiles.index(buffer)
    _wait_for_late_dq_on(state, index - 2, consumer)
    ds_smem.store(ds16)
    fence_async_shared()
    mbarrier.arrive(ds_ready.index(buffer))
    dv, dk, p16, ds_operand = warpgroup_mma_wait(2, deps=[dv, dk, p16, ds_operand])
    dq = warpgroup_mma_wait(0, deps=[dq])
    _finish_late_dq(state, dq, previous, previous_rows[0], consumer)
    return warpgroup_mma_init(dk), warpgroup_mma_init(dv), statistics
