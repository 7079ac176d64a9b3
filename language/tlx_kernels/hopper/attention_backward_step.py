"""The per-Q-block steps of the Hopper attention backward's consumers
(tlx_kernels/hopper/attention_backward_kernel.py has the kernel and its design), in two shapes:

* ``step_by_keys``: S^T = K Q^T and dP^T = V dO^T, keys as rows. P^T and dS^T, the A
  operands of dV = P^T dO and dK = dS^T Q, come out of the tensor cores in registers, so P^T
  needs no SMEM; but each query's LSE and delta run along the columns, so that a thread holds
  a quarter of the Q block's (16 of each at BLOCK_M 64, and 16 query numbers).
* ``step_by_queries``: S = Q K^T and dP = dO V^T, queries as rows, the statistics one a row (2
  of each a thread). P and dS go through SMEM, where dV and dK read their transposes; dS is
  the A operand of dQ = dS K straight from registers. At HEAD_DIM 128, where dK and dV hold
  128 registers a thread, this is what keeps a consumer within its 240 (ptxas: no spills,
  where ``step_by_keys`` spills over a KiB a thread).

Both end in ``_dq_and_release``, which sums dQ the way the configuration's ``dq_pass`` says:
a consumer's share added to an fp32 accumulator in global memory with atomics (``_add_dq``),
64 columns at a time so that one chunk's accumulator is live at once, scalar or two columns
an instruction; the same chunks through fp32 SMEM staging tiles, each added by one TMA
reduce-add (``reduce_dq``); the two consumers' shares summed first, each consumer adding
half of the columns; or nothing (a kernel of its own, attention_dq.py, computes dQ).

With PIPELINED (dQ in its kernel of its own or by TMA reduce-adds, P in SMEM) a step ends
once dK's product is issued: dV's and dK's products stay in flight, as the ``warpgroup_mma``
results the loop carries (``start_pipeline``), until the next step's wait for S retires them
and releases their stage (``_wait_for_scores``); after the last step ``drain_pipeline``
retires them. With "tma_add" dQ's products are issued before dK's (``_issue_dq``), so that
the step's waits for them (``_reduce_issued_dq``) leave dK in flight, and dV too where they
are issued before it (S at HEAD_DIM 64).
"""

from tlx.compat import tma_atomic_add
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.attention_backward_state import step_tiles
from tlx_kernels.hopper.common import accumulator_layout, block_indices, red_add_pairs

LOG2E = gl.constexpr(1.4426950408889634)
# dQ = dS K is computed DQ_COLUMNS columns at a time.
DQ_COLUMNS = gl.constexpr(64)


@gluon.jit
def kv_buffer(state, tiles, consumer):
    """Consumer ``consumer``'s buffer of ``tiles`` (K, V, dK or dV) for the tile at hand:
    those are CONSUMERS a K/V slot, from the tile's first buffer (``BackwardTile``,
    attention_backward_state.py)."""
    return tiles.index(state.tile.first_buffer + consumer)


@gluon.jit
def scores_operands(state, consumer):
    """(K, V), the A operands of S^T = K Q^T and dP^T = V dO^T: registers loaded once a tile
    where the tile carries them (``Config.keys_in_registers``: ``BackwardTile.keys`` and
    ``values``), else this consumer's K and V buffers."""
    if state.tile.KEYS_IN_REGISTERS:
        operands = (state.tile.keys, state.tile.values)
    else:
        operands = (
            kv_buffer(state, state.k_tiles, consumer),
            kv_buffer(state, state.v_tiles, consumer),
        )
    return operands


@gluon.constexpr_function
def per_consumer(buffers, k_buffers, kv_slots):
    """``buffers`` over CONSUMERS, which is the K buffers' count over the K/V slots'
    (``BackwardState.k_tiles`` and ``BackwardTile.kv_ready``)."""
    return buffers * kv_slots // k_buffers


@gluon.jit
def first_step(state):
    """The ring index of the tile's first step: the steps before it are an earlier tile's of
    a persistent CTA, whose stages, dS buffers and turns that tile's epilogue settled."""
    return state.tile.first_step


@gluon.jit
def row_statistics(state, bh_q, queries):
    """(LSE in base 2, delta) of the rows ``queries`` of query head ``bh_q``: +inf and 0 for
    rows past the sequence's end, so that their P is 0."""
    (lse_ptr, delta_ptr) = (state.lse_ptr, state.delta_ptr)
    seq_len = state.seq_len
    in_sequence = queries < seq_len
    row_start = bh_q * seq_len
    lse = gl.load(lse_ptr + row_start + queries, mask=in_sequence, other=float("inf"))
    delta = gl.load(delta_ptr + row_start + queries, mask=in_sequence, other=0.0)
    return lse * LOG2E, delta


@gluon.jit
def scores_to_gradients(s, dp, lse2, delta, queries, key_rows, qk_scale, MASKED: gl.constexpr):
    """(P^T, dS^T) of a Q block from S^T and dP^T (fp32, keys by rows, queries by columns):
    P^T = exp(S^T * sm_scale - LSE), zero above the diagonal when MASKED (a query before a
    key), and dS^T = P^T * (dP^T - delta)."""
    if MASKED:
        s = gl.where(queries[None, :] >= key_rows[:, None], s, float("-inf"))
    p = gl.exp2(s * qk_scale - lse2[None, :])
    ds = p * (dp - delta[None, :])
    return p, ds


@gluon.jit
def _add_dq(state, dq, bh_q, off_m, first_column, VECTOR: gl.constexpr):
    """Adds sm_scale * ``dq``, columns ``first_column`` on of the dQ of a Q block (this
    consumer's share, or the CTA's sum), to the fp32 dQ accumulator (rows past the
    sequence's end left out); with VECTOR two columns an instruction (``red_add_pairs``)."""
    dq_ptr = state.dq_ptr
    sm_scale = state.sm_scale
    seq_len = state.seq_len
    HEAD_DIM: gl.constexpr = state.q_tiles.shape[2]
    BLOCK_M: gl.constexpr = dq.shape[0]
    COLUMNS: gl.constexpr = dq.shape[1]
    rows = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, dq.type.layout))
    columns = first_column + gl.arange(0, COLUMNS, gl.SliceLayout(0, dq.type.layout))
    offsets = (bh_q * seq_len + rows)[:, None] * HEAD_DIM + columns[None, :]
    mask = (rows[:, None] < seq_len) & (columns[None, :] < HEAD_DIM)
    if VECTOR:
        red_add_pairs(dq_ptr + offsets, dq * sm_scale, mask)
    else:
        gl.atomic_add(dq_ptr + offsets, dq * sm_scale, mask=mask, sem="relaxed")


@gluon.jit
def reduce_dq(state, dq, bh_q, off_m, sequence, first_column, consumer: gl.constexpr):
    """Adds sm_scale * ``dq`` (this consumer's share, columns ``first_column`` on) to the fp32
    dQ accumulator by a TMA reduce-add from one of the consumer's fp32 staging tiles (rows
    past the sequence's end lie outside the descriptor's [batch * heads, seq_len, head_dim]:
    the TMA drops them). ``sequence`` numbers the consumer's reductions, which take its tiles
    in turn (two a consumer, or one with "alternate", whose consumer reduces every other
    step): before a tile is rewritten ``tma.store_wait`` retires the reduction that read it
    and leaves those issued since in flight. The epilogue's ``tma.store_wait(0)``
    (``_store_dk_dv``) retires the last ones."""
    (dq_tiles, desc_dq) = (state.dq_tiles, state.desc_dq)
    sm_scale = state.sm_scale
    BLOCK_M: gl.constexpr = dq.shape[0]
    COLUMNS: gl.constexpr = dq.shape[1]
    TILES: gl.constexpr = per_consumer(
        dq_tiles.shape[0], state.k_tiles.shape[0], state.tile.kv_ready.shape[0]
    )
    staging = dq_tiles.index(TILES * consumer + sequence % TILES)
    tma.store_wait(TILES - 1)
    staging.store(dq * sm_scale)
    fence_async_shared()
    tma_atomic_add(desc_dq, [bh_q, off_m, first_column], staging.reshape([1, BLOCK_M, COLUMNS]))


@gluon.jit
def _issue_dq(ds_operand, k, BLOCK_M: gl.constexpr, FIRST: gl.constexpr, END: gl.constexpr):
    """dQ's products of a step with dq_pass "tma_add" (a pipelined step's, left in flight; an
    unpipelined step's, a chunk at a time), or of the atomics passes, issued:
    chunks [FIRST, END) of this consumer's share dS K (``ds_operand``: dS as the A operand,
    registers or SMEM; ``k`` its K buffer), DQ_COLUMNS columns a product, one
    ``warpgroup_mma`` group each; a tuple of them for ``_reduce_issued_dq``."""
    num_warps: gl.constexpr = gl.num_warps()
    dq_layout: gl.constexpr = accumulator_layout(DQ_COLUMNS, num_warps)
    dq_zeros = gl.zeros([BLOCK_M, DQ_COLUMNS], gl.float32, dq_layout)
    chunks = ()
    for chunk in gl.static_range(FIRST, END):
        dq = warpgroup_mma(
            ds_operand,
            k.slice(chunk * DQ_COLUMNS, DQ_COLUMNS, dim=1),
            dq_zeros,
            use_acc=False,
            is_async=True,
        )
        chunks = chunks + (dq,)
    return chunks


@gluon.jit
def _reduce_issued_dq(
    state,
    chunks,
    ds_operand,
    index,
    bh_q,
    off_m,
    consumer: gl.constexpr,
    FIRST: gl.constexpr,
    AFTER: gl.constexpr,
):
    """Waits for each of the dQ products ``_issue_dq`` issued (chunks FIRST on), leaving in
    flight the AFTER groups issued since (dK's, and dV's if issued after them: wgmma groups
    retire in order, so the wait for a chunk leaves the later chunks and those groups
    outstanding), and adds it by a TMA reduce-add (``reduce_dq``) while they run.
    ``ds_operand`` is kept alive till the last wait: an A operand from registers is read by
    the products in flight."""
    HEAD_DIM: gl.constexpr = state.k_tiles.shape[2]
    COUNT: gl.constexpr = len(chunks)
    for i in gl.static_range(COUNT):
        dq, ds_operand = warpgroup_mma_wait(AFTER + COUNT - 1 - i, deps=[chunks[i], ds_operand])
        sequence = index * (HEAD_DIM // DQ_COLUMNS) + FIRST + i
        reduce_dq(state, dq, bh_q, off_m, sequence, (FIRST + i) * DQ_COLUMNS, consumer)


@gluon.jit
def _own_half_of_dq(ds_operand, k, BLOCK_M: gl.constexpr, consumer: gl.constexpr):
    """Issues the first product of this consumer's half of the CTA's dQ ("summed", "split"):
    columns [c D/2, (c+1) D/2) of dS_c K_c (``ds_operand``: its dS as the A operand, ``k``
    its K buffer)."""
    COLUMNS: gl.constexpr = k.shape[1] // 2
    num_warps: gl.constexpr = gl.num_warps()
    half_layout: gl.constexpr = accumulator_layout(COLUMNS, num_warps)
    return warpgroup_mma(
        ds_operand,
        k.slice(consumer * COLUMNS, COLUMNS, dim=1),
        gl.zeros([BLOCK_M, COLUMNS], gl.float32, half_layout),
        use_acc=False,
        is_async=True,
    )


@gluon.jit
def _other_half_of_dq(state, dq, other_ds, index, consumer: gl.constexpr):
    """Once the other consumer's dS of step ``index`` is in SMEM (``ds_ready``), issues its
    share of this consumer's columns of dQ onto ``dq``: ``other_ds`` (its dS as the A
    operand) times the same columns of its K."""
    k_tiles = state.k_tiles
    ds_ready = state.ds_ready
    COLUMNS: gl.constexpr = k_tiles.shape[2] // 2
    other: gl.constexpr = 1 - consumer
    mbarrier.wait(ds_ready.index(other), index & 1)
    return warpgroup_mma(
        other_ds,
        kv_buffer(state, k_tiles, other).slice(consumer * COLUMNS, COLUMNS, dim=1),
        dq,
        is_async=True,
    )


@gluon.jit
def wait_for_other_consumer(state, index, consumer: gl.constexpr, DQ_PASS: gl.constexpr):
    """With ``DQ_PASS`` "summed" or "split", where the other consumer's dQ products read this
    consumer's dS and K: waits until the other consumer has read every dS this consumer gave
    it before step ``index``, one a step (``ds_free``; when there is none, it passes). Before
    a step's write to the dS buffer the other reads (its P/dS buffer unpipelined), and before
    the epilogue writes dK over its K (``index``: the steps it took). "alternate" has its
    own: attention_backward_turns.wait_for_turns_on_own."""
    if DQ_PASS == "summed" or DQ_PASS == "split":
        ds_free = state.ds_free
        mbarrier.wait(ds_free.index(consumer), (index & 1) ^ 1)


@gluon.jit
def release_stage_of(state, index):
    """The consumer is done with the Q/dO stage of step ``index``: one arrival on its
    ``empty`` barrier (of the CONSUMERS it counts)."""
    empty = state.empty
    NUM_STAGES: gl.constexpr = state.q_tiles.shape[0]
    mbarrier.arrive(empty.index(index % NUM_STAGES))


@gluon.jit
def _wait_for_scores(state, index, s_tok, dk, dv, PIPELINED: gl.constexpr):
    """(S or S^T, dK, dV) once the step's first product, issued before dP's, has completed.
    PIPELINED: the previous step's dV and dK are still in flight, issued before S; wgmma
    groups retire in order, so the wait that leaves only dP outstanding retires them too, and
    with them the last reads of the previous step's Q/dO stage (released here) and of this
    consumer's P and dS buffers (which the step may now overwrite)."""
    if PIPELINED:
        s, dk, dv = warpgroup_mma_wait(1, deps=[s_tok, dk, dv])
        if index > first_step(state):
            release_stage_of(state, index - 1)
    else:
        s = warpgroup_mma_wait(1, deps=[s_tok])
    return s, dk, dv


@gluon.jit
def start_pipeline(dk, dv, PIPELINED: gl.constexpr):
    """The zeroed dK and dV accumulators as the loop carries them: with PIPELINED, as
    ``warpgroup_mma`` results still in flight (each step returns them so)."""
    if PIPELINED:
        dk = warpgroup_mma_init(dk)
        dv = warpgroup_mma_init(dv)
    return dk, dv


@gluon.jit
def drain_pipeline(state, index, dk, dv, PIPELINED: gl.constexpr):
    """(dK, dV) complete after a consumer's last step (``index``: the steps it took): with
    PIPELINED, the last step's dV and dK are retired here and its stage released, before the
    epilogue writes dK and dV over K and V."""
    if PIPELINED:
        dk, dv = warpgroup_mma_wait(0, deps=[dk, dv])
        if index > first_step(state):
            release_stage_of(state, index - 1)
    return dk, dv


@gluon.jit
def _dq_and_release(
    state,
    ds_operand,
    k,
    index,
    stage,
    bh_q,
    off_m,
    dk,
    dv,
    consumer: gl.constexpr,
    DQ_PASS: gl.constexpr,
    BY_QUERY: gl.constexpr,
):
    """dQ's part of a step, once dS is in this consumer's SMEM buffer and dK's product is
    issued (``ds_operand``: this consumer's dS as dQ's A operand, registers or SMEM; ``k``
    its K buffer), by
    DQ_PASS:

    * "atomics" / "vector" / "tma_add": this consumer's share dS K, DQ_COLUMNS columns at a
      time, added with atomics (scalar, or two columns an instruction: ``red_add_pairs``),
      or by a TMA reduce-add from SMEM (``reduce_dq``);
    * "summed": the CTA's dQ, both consumers' dS against their K, each consumer computing
      and adding half of the columns (``ds_ready``: the other's dS is written; ``ds_free``:
      this consumer has read it), so that a CTA adds each element once, not once a consumer;
    * "separate": none (attention_dq.py computes dQ).

    The stage is released once dV and dK, the last readers of Q and dO, have completed."""
    (k_tiles, ds_tiles) = state.k_tiles, state.ds_tiles
    empty = state.empty
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    BLOCK_M: gl.constexpr = state.q_tiles.shape[1]
    if DQ_PASS == "separate":
        dv, dk = warpgroup_mma_wait(0, deps=[dv, dk])
        mbarrier.arrive(empty.index(stage))
    elif DQ_PASS == "summed":
        (ds_ready, ds_free) = (state.ds_ready, state.ds_free)
        other: gl.constexpr = 1 - consumer
        first: gl.constexpr = consumer * (HEAD_DIM // 2)
        mbarrier.arrive(ds_ready.index(consumer))
        if BY_QUERY:
            other_ds = ds_tiles.index(other)
        else:
            other_ds = ds_tiles.index(other).permute((1, 0))
        dq = _own_half_of_dq(ds_operand, k, BLOCK_M, consumer)
        dq = _other_half_of_dq(state, dq, other_ds, index, consumer)
        dv, dk, dq = warpgroup_mma_wait(0, deps=[dv, dk, dq])
        mbarrier.arrive(empty.index(stage))
        mbarrier.arrive(ds_free.index(other))
        _add_dq(state, dq, bh_q, off_m, first, True)
    else:
        # DQ_COLUMNS columns at a time: one chunk's accumulator is live at once.
        CHUNKS: gl.constexpr = HEAD_DIM // DQ_COLUMNS
        for chunk in gl.static_range(CHUNKS):
            (dq,) = _issue_dq(ds_operand, k, BLOCK_M, chunk, chunk + 1)
            if chunk == 0:
                dv, dk, dq = warpgroup_mma_wait(0, deps=[dv, dk, dq])
                mbarrier.arrive(empty.index(stage))
            else:
                dq = warpgroup_mma_wait(0, deps=[dq])
            if DQ_PASS == "tma_add":
                sequence = index * CHUNKS + chunk
                reduce_dq(state, dq, bh_q, off_m, sequence, chunk * DQ_COLUMNS, consumer)
            else:
                _add_dq(state, dq, bh_q, off_m, chunk * DQ_COLUMNS, DQ_PASS == "vector")
    return dk, dv


@gluon.jit
def step_by_keys(
    state,
    index,
    bh_q,
    off_m,
    key_rows,
    dk,
    dv,
    consumer: gl.constexpr,
    MASKED: gl.constexpr,
    P_IN_SMEM: gl.constexpr,
    DQ_PASS: gl.constexpr,
    PIPELINED: gl.constexpr,
):
    """One Q block (ring index ``index``) for this consumer's keys, with keys as the rows of
    S^T and dP^T: dK and dV accumulate, dQ as DQ_PASS says (``_dq_and_release``). The stage
    is released once every product that reads Q or dO has completed: in this step, or with
    PIPELINED (P^T and dS^T in buffers of their own) in the next one, whose wait for S^T
    retires this step's dV and dK (``_wait_for_scores``), which stay in flight till then
    (with "tma_add" dK alone: dQ's products, which read dS^T from SMEM, follow dV's)."""
    (q_tiles, do_tiles, k_tiles) = (state.q_tiles, state.do_tiles, state.k_tiles)
    (ds_tiles, p_tiles) = (state.ds_tiles, state.p_tiles)
    ready = state.ready
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    SUB_N: gl.constexpr = k_tiles.shape[1]
    dtype: gl.constexpr = q_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    st_layout: gl.constexpr = accumulator_layout(BLOCK_M, num_warps)
    # dK's and dV's (``_consumer_partition``'s), named here: with PIPELINED they come in as
    # ``warpgroup_mma`` results in flight, whose type has no layout.
    acc_layout: gl.constexpr = accumulator_layout(q_tiles.shape[2], num_warps)
    operand_layout: gl.constexpr = gl.DotOperandLayout(
        operand_index=0, parent=acc_layout, k_width=2
    )
    stage = index % NUM_STAGES
    q = q_tiles.index(stage)
    do = do_tiles.index(stage)
    k = kv_buffer(state, k_tiles, consumer)
    ds_smem = ds_tiles.index(consumer)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([SUB_N, BLOCK_M], gl.float32, st_layout)
    keys, values = scores_operands(state, consumer)
    s_tok = warpgroup_mma(keys, q.permute((1, 0)), zeros, use_acc=False, is_async=True)
    dp_tok = warpgroup_mma(values, do.permute((1, 0)), zeros, use_acc=False, is_async=True)
    # The rows' statistics load from global memory while the tensor cores work.
    queries = block_indices(off_m, BLOCK_M, gl.SliceLayout(0, st_layout))
    lse2, delta = row_statistics(state, bh_q, queries)
    s, dk, dv = _wait_for_scores(state, index, s_tok, dk, dv, PIPELINED)
    dp = warpgroup_mma_wait(0, deps=[dp_tok])
    p, ds = scores_to_gradients(s, dp, lse2, delta, queries, key_rows, state.qk_scale, MASKED)
    if P_IN_SMEM:
        p_smem = p_tiles.index(consumer)
        wait_for_other_consumer(state, index, consumer, DQ_PASS)
        p_smem.store(p.to(dtype))
        fence_async_shared()
        dv = warpgroup_mma(p_smem, do, dv, is_async=True)
        ds16 = ds.to(dtype)
        if not PIPELINED:
            # P^T and dS^T may take one buffer in turn: dV has read P^T before dS^T is
            # written.
            dv = warpgroup_mma_wait(0, deps=[dv])
    else:
        p16 = gl.convert_layout(p.to(dtype), operand_layout)
        dv = warpgroup_mma(p16, do, dv, is_async=True)
        ds16 = ds.to(dtype)
        wait_for_other_consumer(state, index, consumer, DQ_PASS)
    ds_smem.store(ds16)
    fence_async_shared()
    if PIPELINED and DQ_PASS == "tma_add":
        # dQ's products (dS from SMEM, as dS^T is written) before dK's: the wait for them
        # retires dV, issued before, and leaves dK in flight into the next step.
        ds_operand = ds_smem.permute((1, 0))
        dq_chunks = _issue_dq(ds_operand, k, BLOCK_M, 0, q_tiles.shape[2] // DQ_COLUMNS)
    # dS^T from SMEM for dK too: registers are what the consumer lacks (dK and dV take 128 a
    # thread at HEAD_DIM 128).
    dk = warpgroup_mma(ds_smem, q, dk, is_async=True)
    if PIPELINED:
        if DQ_PASS == "tma_add":
            _reduce_issued_dq(state, dq_chunks, ds_operand, index, bh_q, off_m, consumer, 0, 1)
    else:
        dk, dv = _dq_and_release(
            state,
            ds_smem.permute((1, 0)),
            k,
            index,
            stage,
            bh_q,
            off_m,
            dk,
            dv,
            consumer,
            DQ_PASS,
            False,
        )
    return dk, dv


@gluon.jit
def gradients_by_query(s, dp, lse2, delta, queries, keys, qk_scale, MASKED: gl.constexpr):
    """(P, dS) of a Q block from S and dP (fp32, queries by rows, keys by columns): P =
    exp(S * sm_scale - LSE), zero right of the diagonal when MASKED (a key after the query),
    and dS = P * (dP - delta)."""
    if MASKED:
        s = gl.where(queries[:, None] >= keys[None, :], s, float("-inf"))
    p = gl.exp2(s * qk_scale - lse2[:, None])
    ds = p * (dp - delta[:, None])
    return p, ds


@gluon.jit
def _split_dq(
    state,
    p,
    ds,
    q,
    do,
    k,
    p_smem,
    ds_smem,
    index,
    bh_q,
    off_m,
    dk,
    dv,
    consumer: gl.constexpr,
):
    """The rest of a pipelined ``step_by_queries`` step with dq_pass "split", from P and dS
    in registers: this consumer computes columns [c D/2, (c+1) D/2) of the CTA's dQ of the Q
    block over both consumers' keys, dS K_c from its dS in registers, plus the other
    consumer's dS (from SMEM) times the other's K, and adds them by one TMA reduce-add
    (``reduce_dq``): each element once a CTA, half the bytes of "tma_add". Products in the
    order dQ's first, dV, dQ's second, dK, so that the wait for dQ (``warpgroup_mma_wait(1)``)
    leaves dK in flight into the next step. ``ds_ready``: this consumer's dS is in SMEM;
    ``ds_free``: the other consumer's product has read it (waited for before it is rewritten,
    and before the epilogue writes dK over K, which the other's product reads too)."""
    (k_tiles, ds_tiles) = state.k_tiles, state.ds_tiles
    (ds_ready, ds_free) = (state.ds_ready, state.ds_free)
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    BLOCK_M: gl.constexpr = p.shape[0]
    COLUMNS: gl.constexpr = HEAD_DIM // 2
    other: gl.constexpr = 1 - consumer
    dtype: gl.constexpr = k_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    dq_layout: gl.constexpr = accumulator_layout(COLUMNS, num_warps)
    ds16 = ds.to(dtype)
    ds_operand = gl.convert_layout(
        ds16, gl.DotOperandLayout(operand_index=0, parent=dq_layout, k_width=2)
    )
    dq = _own_half_of_dq(ds_operand, k, BLOCK_M, consumer)
    p_smem.store(p.to(dtype))
    fence_async_shared()
    dv = warpgroup_mma(p_smem.permute((1, 0)), do, dv, is_async=True)
    wait_for_other_consumer(state, index, consumer, "split")
    ds_smem.store(ds16)
    fence_async_shared()
    mbarrier.arrive(ds_ready.index(consumer))
    dq = _other_half_of_dq(state, dq, ds_tiles.index(other), index, consumer)
    dk = warpgroup_mma(ds_smem.permute((1, 0)), q, dk, is_async=True)
    dq, ds_operand = warpgroup_mma_wait(1, deps=[dq, ds_operand])
    mbarrier.arrive(ds_free.index(other))
    reduce_dq(state, dq, bh_q, off_m, index, consumer * COLUMNS, consumer)
    return dk, dv


@gluon.jit
def step_by_queries(
    state,
    index,
    bh_q,
    off_m,
    first_key,
    dk,
    dv,
    consumer: gl.constexpr,
    MASKED: gl.constexpr,
    DQ_PASS: gl.constexpr,
    PIPELINED: gl.constexpr,
):
    """``step_by_keys`` with queries as the rows of S and dP: P and dS go through SMEM (one
    buffer with aliasing: dV has read P before dS is written there), dV = P^T dO and dK =
    dS^T Q read their transposes there, and dQ = dS K takes dS from registers (with PIPELINED
    and "tma_add", issued first). ``first_key`` is this consumer's first key."""
    (q_tiles, do_tiles, k_tiles, v_tiles, ds_tiles, p_tiles) = step_tiles(state)
    ready = state.ready
    NUM_STAGES: gl.constexpr = q_tiles.shape[0]
    BLOCK_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    SUB_N: gl.constexpr = k_tiles.shape[1]
    dtype: gl.constexpr = q_tiles.dtype
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = accumulator_layout(SUB_N, num_warps)
    # dS from registers is the A operand of dQ's products, whose columns _dq_and_release says.
    if DQ_PASS == "summed":
        DQ_N: gl.constexpr = HEAD_DIM // 2
    else:
        DQ_N: gl.constexpr = DQ_COLUMNS
    dq_layout: gl.constexpr = accumulator_layout(DQ_N, num_warps)
    stage = index % NUM_STAGES
    q = q_tiles.index(stage)
    do = do_tiles.index(stage)
    own = consumer + (index >> 31)
    k = kv_buffer(state, k_tiles, own)
    p_smem = p_tiles.index(own)
    ds_smem = ds_tiles.index(own)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([BLOCK_M, SUB_N], gl.float32, s_layout)
    s_tok = warpgroup_mma(q, k.permute((1, 0)), zeros, use_acc=False, is_async=True)
    dp_tok = warpgroup_mma(
        do, kv_buffer(state, v_tiles, own).permute((1, 0)), zeros, use_acc=False, is_async=True
    )
    # The rows' statistics load from global memory while the tensor cores work.
    queries = block_indices(off_m, BLOCK_M, gl.SliceLayout(1, s_layout))
    keys = block_indices(first_key + (index >> 31), SUB_N, gl.SliceLayout(0, s_layout))
    lse2, delta = row_statistics(state, bh_q, queries)
    s, dk, dv = _wait_for_scores(state, index, s_tok, dk, dv, PIPELINED)
    dp = warpgroup_mma_wait(0, deps=[dp_tok])
    p, ds = gradients_by_query(s, dp, lse2, delta, queries, keys, state.qk_scale, MASKED)
    if DQ_PASS == "split":
        dk, dv = _split_dq(
            state, p, ds, q, do, k, p_smem, ds_smem, index, bh_q, off_m, dk, dv, consumer
        )
        return dk, dv
    wait_for_other_consumer(state, index, consumer, DQ_PASS)
    # PIPELINED with "tma_add": dQ's first product before dV's, dS from registers. At HEAD_DIM
    # 64 (one chunk) the step waits for it after dK's issue, leaving dV and dK in flight into
    # the next step. At 128, where dK and dV take 128 registers a thread, one chunk's
    # accumulator is live at a time: the first is waited for (dV left in flight) and added
    # before the second is issued, which dK follows; the step ends with dK in flight.
    PIPELINED_TMA_ADD: gl.constexpr = PIPELINED and DQ_PASS == "tma_add"
    CHUNKS: gl.constexpr = HEAD_DIM // DQ_COLUMNS
    if PIPELINED_TMA_ADD:
        ds_operand = gl.convert_layout(
            ds.to(dtype), gl.DotOperandLayout(operand_index=0, parent=dq_layout, k_width=2)
        )
        dq_chunks = _issue_dq(ds_operand, k, BLOCK_M, 0, 1)
    p_smem.store(p.to(dtype))
    fence_async_shared()
    dv = warpgroup_mma(p_smem.permute((1, 0)), do, dv, is_async=True)
    if PIPELINED_TMA_ADD and CHUNKS > 1:
        _reduce_issued_dq(state, dq_chunks, ds_operand, index, bh_q, off_m, consumer, 0, 1)
        dq_chunks = _issue_dq(ds_operand, k, BLOCK_M, 1, CHUNKS)
    ds16 = ds.to(dtype)
    if not PIPELINED:
        # With aliasing P and dS take one buffer: dV has read P before dS is written.
        dv = warpgroup_mma_wait(0, deps=[dv])
    ds_smem.store(ds16)
    fence_async_shared()
    dk = warpgroup_mma(ds_smem.permute((1, 0)), q, dk, is_async=True)
    # PIPELINED: dK (and dV) stay in flight, retired by the next step's wait for S.
    if PIPELINED_TMA_ADD:
        if CHUNKS > 1:
            _reduce_issued_dq(state, dq_chunks, ds_operand, index, bh_q, off_m, consumer, 1, 1)
        else:
            _reduce_issued_dq(state, dq_chunks, ds_operand, index, bh_q, off_m, consumer, 0, 2)
    if not PIPELINED:
        ds_operand = gl.convert_layout(
            ds16, gl.DotOperandLayout(operand_index=0, parent=dq_layout, k_width=2)
        )
        dk, dv = _dq_and_release(
            state, ds_operand, k, index, stage, bh_q, off_m, dk, dv, consumer, DQ_PASS, True
        )
    return dk, dv
