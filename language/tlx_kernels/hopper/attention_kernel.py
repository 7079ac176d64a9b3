"""The Hopper Flash Attention forward kernel (sm_90a): a persistent, warp-specialized kernel
whose Q, K/V and O tiles share one SMEM region planned by tlx. Its design, and where aliasing
buys room: tutorials/hopper_flash_attention.py."""

import tlx
from tlx.compat import tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from tlx_kernels.hopper.attention_common import key_blocks, load_kv_blocks, load_q_tiles
from tlx_kernels.hopper.attention_schedule import _unit_tiles, _work_units
from tlx_kernels.hopper.attention_state import AttentionSchedule, AttentionState, AttentionTile
from tlx_kernels.hopper.common import LOADER_REGISTERS, accumulator_layout

LN2 = gl.constexpr(0.6931471805599453)


@gluon.jit
def _mask_scores(
    s,
    off_m,
    off_n,
    seq_len,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    CAUSAL: gl.constexpr,
    s_layout: gl.constexpr,
):
    if CAUSAL:
        cols = off_n + gl.arange(0, BLOCK_N, gl.SliceLayout(0, s_layout))
        rows = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, s_layout))
        keep = cols[None, :] <= rows[:, None]
    else:
        # The block's own column numbers against how many keys are left: the register
        # allocation of the persistent kernel fits in 160 registers this way, and spills
        # when the block's offset is added to every column number.
        cols = gl.arange(0, BLOCK_N, gl.SliceLayout(0, s_layout))
        keep = (cols < seq_len - off_n)[None, :]
    return gl.where(keep, s, float("-inf"))


@gluon.jit
def _to_mma_operand(p, dtype: gl.constexpr):
    """``p.to(dtype)`` for fp16 or bf16, two elements per cvt into one 32-bit register: the
    packed pair that ``warpgroup_mma`` reads from registers. Triton converts element by element
    into 16-bit registers and packs them before the MMA, which ptxas turns into one PRMT (a
    swap of the halves) per pair on top of the conversions."""
    if dtype == gl.float16:
        return gl.inline_asm_elementwise(
            "cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", [p], dtype=gl.float16, is_pure=True, pack=2
        )
    else:
        return gl.inline_asm_elementwise(
            "cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [p], dtype=gl.bfloat16, is_pure=True, pack=2
        )


@gluon.jit
def _online_softmax(s, m_i, l_i, qk_scale):
    m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
    alpha = gl.exp2(m_i - m_new)
    p = gl.exp2(s * qk_scale - m_new[:, None])
    l_new = l_i * alpha + gl.sum(p, 1)
    return p, alpha, m_new, l_new


@gluon.jit
def _attn_step(
    state,
    index,
    first_index,
    q,
    p,
    acc,
    m_i,
    l_i,
    off_m,
    CAUSAL: gl.constexpr,
    MASKED: gl.constexpr,
    s_layout: gl.constexpr,
    o_layout: gl.constexpr,
    p_layout: gl.constexpr,
):
    """One software-pipelined iteration: S_j = Q K_j^T is issued together with P_{j-1} V_{j-1},
    then softmax(S_j) runs while the tensor cores finish P V. Key block j of the tile is block
    ``index = first_index + j`` of the K/V ring; ``q`` is the Q tile in SMEM or in registers."""
    k_tiles, v_tiles = state.k_tiles, state.v_tiles
    k_ready, v_ready, kv_empty = state.k_ready, state.v_ready, state.kv_empty
    qk_scale, seq_len = state.qk_scale, state.seq_len
    SUB_M: gl.constexpr = state.q_tiles.shape[1]
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    stage = index % NUM_STAGES
    prev = (index - 1) % NUM_STAGES
    mbarrier.wait(k_ready.index(stage), (index // NUM_STAGES) & 1)
    s_zero = gl.zeros([SUB_M, BLOCK_N], gl.float32, s_layout)
    s_tok = warpgroup_mma(
        q, k_tiles.index(stage).permute((1, 0)), s_zero, use_acc=False, is_async=True
    )
    mbarrier.wait(v_ready.index(prev), ((index - 1) // NUM_STAGES) & 1)
    acc_tok = warpgroup_mma(p, v_tiles.index(prev), acc, is_async=True)
    s = warpgroup_mma_wait(1, deps=[s_tok])
    if MASKED:
        off_n = (index - first_index) * BLOCK_N
        s = _mask_scores(s, off_m, off_n, seq_len, SUB_M, BLOCK_N, CAUSAL, s_layout)
    p_next, alpha, m_i, l_i = _online_softmax(s, m_i, l_i, qk_scale)
    # P_{j-1} V_{j-1} is done before P_j is converted to 16 bits: the registers of P_{j-1}
    # then take P_j, and S_j, P_{j-1}, P_j and O are never all live at once.
    acc, p = warpgroup_mma_wait(0, deps=[acc_tok, p])
    mbarrier.arrive(kv_empty.index(prev))
    p_next = gl.convert_layout(_to_mma_operand(p_next, p.dtype), p_layout)
    alpha = gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))
    acc = acc * alpha[:, None]
    return p_next, acc, m_i, l_i


@gluon.jit
def _release_after_store(kv_empty, q_empty, index, O_OVER_KV: gl.constexpr):
    """Frees the bytes under an O tile for the loader (K/V stage ``index`` with O over a K/V
    stage, else Q buffer ``index``) once the TMA stores issued so far have read their SMEM."""
    tma.store_wait(0)
    if O_OVER_KV:
        mbarrier.arrive(kv_empty.index(index))
    else:
        mbarrier.arrive(q_empty.index(index))


@gluon.jit
def _store_o(state, o_tile, tile_count, schedule):
    """The epilogue of tile ``tile_count``: ``o_tile`` is (O, its head, its first row, its O
    buffer); O goes into the buffer, then out through a TMA store. With O over a K/V stage, it
    first waits until every consumer is done reading the bytes under it (``tile_done``, one
    phase per tile); with O in bytes of its own, until the store of the last O this
    warpgroup wrote has read them, which had the whole tile to do it."""
    (o, off_bh, rows, o_index) = o_tile
    desc_o, o_tiles, tile_done = state.desc_o, state.o_tiles, state.tile_done
    O_OVER_KV: gl.constexpr = schedule.O_OVER_KV
    ALIAS_O: gl.constexpr = schedule.ALIAS_O
    if O_OVER_KV:
        mbarrier.wait(tile_done, tile_count & 1)
    if not ALIAS_O:
        tma.store_wait(0)
    o_smem = o_tiles.index(o_index)
    o_smem.store(o)
    fence_async_shared()
    tma_store(desc_o, [off_bh, rows, 0], o_smem.reshape([1, o.shape[0], o.shape[1]]))


@gluon.jit
def _first_block(state, schedule, tile, q, m_i, l_i, pending, previous, s_layout, p_layout):
    """P, m and l of the tile's first key block (peeled: there is no P V product to overlap
    with yet); the last tile's O, with STORE_O_DURING_NEXT_S, is stored while the tensor cores
    compute this S, and the bytes under it released after its softmax (``_attend_rows``)."""
    k_tiles, q_empty, kv_empty = state.k_tiles, state.q_empty, state.kv_empty
    first_index, off_m, tile_count = tile.first_index, tile.off_m, tile.tile_count
    SUB_M: gl.constexpr = state.q_tiles.shape[1]
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    CAUSAL: gl.constexpr = schedule.CAUSAL
    O_OVER_KV: gl.constexpr = schedule.O_OVER_KV
    OVERLAP_O_STORE: gl.constexpr = schedule.OVERLAP_O_STORE
    STORE_O_DURING_NEXT_S: gl.constexpr = schedule.STORE_O_DURING_NEXT_S
    first_stage = first_index % NUM_STAGES
    mbarrier.wait(state.k_ready.index(first_stage), (first_index // NUM_STAGES) & 1)
    s = gl.zeros([SUB_M, BLOCK_N], gl.float32, s_layout)
    if STORE_O_DURING_NEXT_S:
        s_tok = warpgroup_mma(
            q, k_tiles.index(first_stage).permute((1, 0)), s, use_acc=False, is_async=True
        )
        if pending >= 0:
            _store_o(state, previous, tile_count - 1, schedule)
        s = warpgroup_mma_wait(0, deps=[s_tok])
    else:
        s = warpgroup_mma(q, k_tiles.index(first_stage).permute((1, 0)), s, use_acc=False)
        if OVERLAP_O_STORE:
            if pending >= 0:
                # The last tile's O store has had this tile's start to read the bytes under it.
                _release_after_store(kv_empty, q_empty, pending, O_OVER_KV)
    if tile.n_unmasked == 0:
        s = _mask_scores(s, off_m, 0, state.seq_len, SUB_M, BLOCK_N, CAUSAL, s_layout)
    p, alpha, m_i, l_i = _online_softmax(s, m_i, l_i, state.qk_scale)
    if STORE_O_DURING_NEXT_S:
        if pending >= 0:
            # The last tile's O store, issued during this S, has had its softmax to read.
            _release_after_store(kv_empty, q_empty, pending, O_OVER_KV)
    p = gl.convert_layout(_to_mma_operand(p, state.q_tiles.dtype), p_layout)
    return p, m_i, l_i


@gluon.jit
def _store_lse(state, off_bh, off_m, m_i, l_i):
    """The natural log-sum-exp of the scaled scores of rows off_m, off_m + 1, ... of head
    ``off_bh``: m_i is their maximum and l_i their sum of exponentials in base 2, scaled by
    qk_scale = sm_scale * log2(e). Rows past the sequence's end are left out."""
    SUB_M: gl.constexpr = m_i.shape[0]
    rows = off_m + gl.arange(0, SUB_M, m_i.type.layout)
    lse = (m_i + gl.log2(l_i)) * LN2
    seq_len = state.seq_len
    gl.store(state.lse_ptr + off_bh * seq_len + rows, lse, mask=rows < seq_len)


@gluon.jit
def _attend_rows(state, schedule, tile, pending, previous):
    """O for the SUB_M rows of Q from ``off_m`` on, in Q buffer ``q_index``, over key blocks
    0 .. n_blocks - 1 (at least one), which are blocks ``first_index`` on of the K/V ring; the
    O tile goes out through O buffer ``o_index`` and a TMA store.

    With O over Q, O buffer ``o_index`` is Q buffer ``q_index``: the caller frees it once
    this returns. With O over the K/V stage of the tile's last block (O_OVER_KV; that block is
    ``tile_last`` of the ring), Q is freed after the last S, and O waits until every consumer
    is done reading the bytes under it (``tile_done``, one phase per tile): with O over that
    stage's K tile alone (O_OVER_K) a consumer is done after its last S, so that the wait is
    met by the time a consumer has finished its last P V and its softmax, where O over V
    would hold every consumer until the slowest has read V. The stage is released only once
    O has been read out of it, so the loader cannot refill it under O.

    With Q_IN_REGISTERS, Q is read into registers first (the A operand of S = Q K^T may come
    from registers) and its buffer freed at once: the next tile's Q then loads a whole tile
    ahead with one Q buffer, as it does with two when Q stays in SMEM.

    With OVERLAP_O_STORE, the bytes under O (a K/V stage, or one of two Q buffers) are not
    released here: the TMA store of O reads them while the next tile starts, and their
    release waits for the store after that tile's first S (``pending``: the stage or Q buffer
    under the last tile's O, or -1).

    With STORE_O_DURING_NEXT_S, O is returned rather than stored: the caller hands it back
    with the next tile as ``previous`` (O, its head, its first row, its O buffer), and it is
    stored while the tensor cores compute that tile's first S; the bytes under it are
    released after that S's softmax. Without, ``previous`` is unused and O is stored here.
    ``tile`` is an ``AttentionTile``: q_index, first_index, ... are its fields."""
    q_tiles, v_tiles, q_empty, v_ready = state.q_tiles, state.v_tiles, state.q_empty, state.v_ready
    kv_empty, tile_done = state.kv_empty, state.tile_done
    q_index, first_index, off_bh, off_m = tile.q_index, tile.first_index, tile.off_bh, tile.off_m
    n_unmasked, n_blocks, o_index = tile.n_unmasked, tile.n_blocks, tile.o_index
    tile_last, tile_count = tile.tile_last, tile.tile_count
    SUB_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    NUM_STAGES: gl.constexpr = v_tiles.shape[0]
    BLOCK_N: gl.constexpr = v_tiles.shape[1]
    CAUSAL: gl.constexpr = schedule.CAUSAL
    O_OVER_KV: gl.constexpr = schedule.O_OVER_KV
    # O over the last stage's K alone, where it fits (the kernel's stage layout).
    O_OVER_K: gl.constexpr = O_OVER_KV and schedule.CONSUMERS * SUB_M <= BLOCK_N
    Q_IN_REGISTERS: gl.constexpr = schedule.Q_IN_REGISTERS
    OVERLAP_O_STORE: gl.constexpr = schedule.OVERLAP_O_STORE
    STORE_O_DURING_NEXT_S: gl.constexpr = schedule.STORE_O_DURING_NEXT_S
    ALIAS_O: gl.constexpr = schedule.ALIAS_O
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = accumulator_layout(BLOCK_N, num_warps)
    o_layout: gl.constexpr = accumulator_layout(HEAD_DIM, num_warps)
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    dtype: gl.constexpr = q_tiles.dtype
    if Q_IN_REGISTERS:
        q = q_tiles.index(q_index).load(
            gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2)
        )
        mbarrier.arrive(q_empty.index(q_index))
    else:
        q = q_tiles.index(q_index)

    m_i = gl.full([SUB_M], float("-inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.full([SUB_M], 0.0, gl.float32, gl.SliceLayout(1, s_layout))
    acc = gl.zeros([SUB_M, HEAD_DIM], gl.float32, o_layout)

    p, m_i, l_i = _first_block(
        state, schedule, tile, q, m_i, l_i, pending, previous, s_layout, p_layout
    )

    # The loops run over the blocks' indices in the ring: the blocks that need no mask, then
    # those that do.
    for masked in gl.static_range(2):
        if masked == 0:
            start = first_index + 1
            end = first_index + n_unmasked
        else:
            start = first_index + gl.maximum(n_unmasked, 1)
            end = first_index + n_blocks
        for index in range(start, end):
            p, acc, m_i, l_i = _attn_step(
                state,
                index,
                first_index,
                q,
                p,
                acc,
                m_i,
                l_i,
                off_m,
                CAUSAL,
                masked == 1,
                s_layout,
                o_layout,
                p_layout,
            )

    if O_OVER_KV:
        if not Q_IN_REGISTERS:
            mbarrier.arrive(q_empty.index(q_index))  # the last S = Q K^T has completed
        if O_OVER_K:
            mbarrier.arrive(tile_done)  # so has this consumer's last read of K
    last = (first_index + n_blocks - 1) % NUM_STAGES
    mbarrier.wait(v_ready.index(last), ((first_index + n_blocks - 1) // NUM_STAGES) & 1)
    acc = warpgroup_mma(p, v_tiles.index(last), acc)
    if O_OVER_KV:
        mbarrier.arrive(kv_empty.index(last), pred=first_index + n_blocks - 1 != tile_last)
    else:
        mbarrier.arrive(kv_empty.index(last))

    # A reciprocal a row, then a multiply an element: a division an element takes the MUFU
    # once for each of O's elements, at a tile's end where the consumer has nothing to overlap
    # it with (H200, fp16: 5% of the call at D = 128 with a causal mask at N = 512).
    inverse_l = gl.convert_layout(1.0 / l_i, gl.SliceLayout(1, o_layout))
    o = (acc * inverse_l[:, None]).to(dtype)
    if schedule.SAVE_LSE:
        _store_lse(state, off_bh, off_m, m_i, l_i)
    if O_OVER_KV:
        if not O_OVER_K:
            mbarrier.arrive(tile_done)
    if not STORE_O_DURING_NEXT_S:
        _store_o(state, (o, off_bh, off_m, o_index), tile_count, schedule)
    # O may take Q's or a K/V stage's bytes: they are released once the store has read them
    # (with OVERLAP_O_STORE, after the next tile's first S: the caller's ``pending``). In
    # bytes of its own, its store runs on into the next tile (_store_o waits for it there).
    if ALIAS_O and not OVERLAP_O_STORE:
        tma.store_wait(0)
        if O_OVER_KV:
            mbarrier.arrive(kv_empty.index(last), pred=first_index + n_blocks - 1 == tile_last)
    return o


@gluon.jit
def _consumer_partition(state, consumer: gl.constexpr, schedule):
    """Rows [consumer * SUB_M, (consumer + 1) * SUB_M) of every tile of this CTA, one
    warpgroup. ``state`` holds the tensors and buffers every partition takes (an
    ``AttentionState``), ``schedule`` the kernel's schedule (an ``AttentionSchedule``)."""
    CONSUMERS: gl.constexpr = schedule.CONSUMERS
    Q_BUFFERS: gl.constexpr = schedule.Q_BUFFERS
    CAUSAL: gl.constexpr = schedule.CAUSAL
    O_OVER_KV: gl.constexpr = schedule.O_OVER_KV
    Q_IN_REGISTERS: gl.constexpr = schedule.Q_IN_REGISTERS
    OVERLAP_O_STORE: gl.constexpr = schedule.OVERLAP_O_STORE
    STORE_O_DURING_NEXT_S: gl.constexpr = schedule.STORE_O_DURING_NEXT_S
    BALANCE_TAIL: gl.constexpr = schedule.BALANCE_TAIL
    ALIAS_O: gl.constexpr = schedule.ALIAS_O
    q_tiles, k_tiles = state.q_tiles, state.k_tiles
    q_ready, q_empty, k_ready, v_ready = state.q_ready, state.q_empty, state.k_ready, state.v_ready
    kv_empty, tile_done = state.kv_empty, state.tile_done
    seq_len, batch_heads = state.seq_len, state.batch_heads
    SUB_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    BLOCK_M: gl.constexpr = CONSUMERS * SUB_M
    work, n_units = _work_units(seq_len, batch_heads, BLOCK_M, CAUSAL, BALANCE_TAIL)
    tile_count = 0  # tiles of this CTA so far: which Q buffer, which phase
    kv_count = 0  # K/V blocks of this CTA so far: which stage, which phase
    # With OVERLAP_O_STORE: the stage or Q buffer under the last tile's O, which this
    # warpgroup releases once that O's store has read it (-1: none).
    pending = -1
    # With STORE_O_DURING_NEXT_S: the last tile's O, not stored yet, with where it goes (its
    # head, its first row, its O buffer); valid while pending >= 0.
    o_layout: gl.constexpr = accumulator_layout(HEAD_DIM, gl.num_warps())
    o_previous = gl.zeros([SUB_M, HEAD_DIM], q_tiles.dtype, o_layout)
    previous_bh = 0
    previous_rows = 0
    previous_o_index = 0
    for unit in range(gl.program_id(0), n_units, gl.num_programs(0)):
        off_bh, first_row_block, step, n_tiles = _unit_tiles(unit, work, CAUSAL, BALANCE_TAIL)
        for tile in range(n_tiles):
            off_m = (first_row_block + tile * step) * BLOCK_M
            _, n_blocks = key_blocks(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
            rows = off_m + consumer * SUB_M
            n_unmasked, own_blocks = key_blocks(seq_len, rows, SUB_M, BLOCK_N, CAUSAL)
            if rows >= seq_len:
                own_blocks = 0  # rows past the end of the sequence: nothing to compute
            q_index = (tile_count % Q_BUFFERS) * CONSUMERS + consumer
            mbarrier.wait(q_ready.index(q_index), (tile_count // Q_BUFFERS) & 1)
            tile_last = kv_count + n_blocks - 1
            if O_OVER_KV:
                o_index = (tile_last % NUM_STAGES) * CONSUMERS + consumer
            else:
                o_index = q_index
            if own_blocks > 0:
                tile_rows = AttentionTile(
                    q_index,
                    kv_count,
                    off_bh,
                    rows,
                    n_unmasked,
                    own_blocks,
                    o_index,
                    tile_last,
                    tile_count,
                )
                previous = (o_previous, previous_bh, previous_rows, previous_o_index)
                o = _attend_rows(state, schedule, tile_rows, pending, previous)
                if STORE_O_DURING_NEXT_S:
                    o_previous = o
                    previous_bh = off_bh
                    previous_rows = rows
                    previous_o_index = o_index
            # Q is free (with O over a K/V stage, _attend_rows freed it after the last S; with
            # Q in registers, before the first; with O over it and OVERLAP_O_STORE, it is
            # freed after the next tile's first S).
            if O_OVER_KV or Q_IN_REGISTERS or OVERLAP_O_STORE:
                if own_blocks == 0:
                    mbarrier.arrive(q_empty.index(q_index))
            else:
                mbarrier.arrive(q_empty.index(q_index))
            # The CTA's other rows read further along K (causal) or these rows are past the
            # end: release the blocks this warpgroup skips once they have landed (so that the
            # release counts for this round of the ring, not the last).
            if OVERLAP_O_STORE:
                if own_blocks == 0:
                    # Before this tile's blocks are waited for: the loader may need the stage.
                    if pending >= 0:
                        if STORE_O_DURING_NEXT_S:
                            # No S here to store the last tile's O during.
                            _store_o(
                                state,
                                (o_previous, previous_bh, previous_rows, previous_o_index),
                                tile_count - 1,
                                schedule,
                            )
                        _release_after_store(kv_empty, q_empty, pending, O_OVER_KV)
            # With OVERLAP_O_STORE and O over a K/V stage, the release of the tile's last
            # stage, under this warpgroup's O, waits for O's store (pending). A skipped block's
            # K is waited for too: a wait names its phase by parity, and one that skipped a
            # phase of k_ready could pass on the phase two before it (tlx check).
            for j in range(own_blocks, n_blocks):
                index = kv_count + j
                mbarrier.wait(k_ready.index(index % NUM_STAGES), (index // NUM_STAGES) & 1)
                mbarrier.wait(v_ready.index(index % NUM_STAGES), (index // NUM_STAGES) & 1)
                mbarrier.arrive(
                    kv_empty.index(index % NUM_STAGES),
                    pred=not (
                        OVERLAP_O_STORE and O_OVER_KV and own_blocks > 0 and j == n_blocks - 1
                    ),
                )
            if OVERLAP_O_STORE:
                if own_blocks == 0:
                    pending = -1
                elif O_OVER_KV:
                    pending = tile_last % NUM_STAGES
                else:
                    pending = q_index
            if O_OVER_KV:
                if own_blocks == 0:
                    # No O to store, but every consumer meets at tile_done once per tile.
                    mbarrier.arrive(tile_done)
                    mbarrier.wait(tile_done, tile_count & 1)
            tile_count += 1
            kv_count += n_blocks
    if OVERLAP_O_STORE or not ALIAS_O:
        if STORE_O_DURING_NEXT_S:
            if pending >= 0:
                _store_o(
                    state,
                    (o_previous, previous_bh, previous_rows, previous_o_index),
                    tile_count - 1,
                    schedule,
                )
        # The last O store reads SMEM until it completes.
        tma.store_wait(0)


@gluon.jit
def _load_partition(state, desc_q, desc_k, desc_v, schedule, kv_group):
    """The loader warp: for every tile of this CTA, in the consumers' order, its Q tiles once
    their buffers are free (q_empty) and its K/V blocks into the ring (load_kv_blocks).

    With one Q buffer per consumer, a tile's Q can load only once the last tile's O (in the
    same bytes) has been stored: the first NUM_STAGES - 1 K/V blocks go first, into the stages
    the consumers free as they finish the last tile, so that only Q's copy stands between two
    tiles. With two, or with Q read into registers, Q goes first: its buffer was freed a tile
    ago. With ``kv_group`` (grouped-query heads; None otherwise), K and V are those of head
    off_bh // kv_group of the K/V descriptors."""
    CONSUMERS: gl.constexpr = schedule.CONSUMERS
    Q_BUFFERS: gl.constexpr = schedule.Q_BUFFERS
    CAUSAL: gl.constexpr = schedule.CAUSAL
    O_OVER_KV: gl.constexpr = schedule.O_OVER_KV
    Q_IN_REGISTERS: gl.constexpr = schedule.Q_IN_REGISTERS
    BALANCE_TAIL: gl.constexpr = schedule.BALANCE_TAIL
    q_tiles, k_tiles, v_tiles = state.q_tiles, state.k_tiles, state.v_tiles
    q_ready, q_empty, k_ready, v_ready = state.q_ready, state.q_empty, state.k_ready, state.v_ready
    kv_empty, seq_len, batch_heads = state.kv_empty, state.seq_len, state.batch_heads
    SUB_M: gl.constexpr = q_tiles.shape[1]
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    BLOCK_M: gl.constexpr = CONSUMERS * SUB_M
    if Q_BUFFERS == 1 and not O_OVER_KV and not Q_IN_REGISTERS:
        KV_BEFORE_Q: gl.constexpr = NUM_STAGES - 1
    else:
        KV_BEFORE_Q: gl.constexpr = 0
    work, n_units = _work_units(seq_len, batch_heads, BLOCK_M, CAUSAL, BALANCE_TAIL)
    tile_count = 0
    kv_count = 0
    for unit in range(gl.program_id(0), n_units, gl.num_programs(0)):
        off_bh, first_row_block, step, n_tiles = _unit_tiles(unit, work, CAUSAL, BALANCE_TAIL)
        for tile in range(n_tiles):
            off_m = (first_row_block + tile * step) * BLOCK_M
            _, n_blocks = key_blocks(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
            n_early = gl.minimum(n_blocks, KV_BEFORE_Q)
            if kv_group is None:
                kv_bh = off_bh
            else:
                kv_bh = off_bh // kv_group
            kv = (desc_k, desc_v, k_tiles, v_tiles, k_ready, v_ready, kv_empty, kv_bh)
            load_kv_blocks(*kv, 0, n_early, kv_count)
            first_q = (tile_count % Q_BUFFERS) * CONSUMERS
            for c in gl.static_range(CONSUMERS):
                mbarrier.wait(q_empty.index(first_q + c), ((tile_count // Q_BUFFERS) & 1) ^ 1)
            load_q_tiles(desc_q, q_tiles, q_ready, first_q, CONSUMERS, off_bh, off_m)
            load_kv_blocks(*kv, n_early, n_blocks, kv_count)
            tile_count += 1
            kv_count += n_blocks


@gluon.jit
def _barriers(CONSUMERS: gl.constexpr, Q_BUFFERS: gl.constexpr, NUM_STAGES: gl.constexpr):
    """The kernel's mbarriers, initialized: (q_ready, q_empty) per Q buffer, (k_ready,
    v_ready, kv_empty) per K/V stage, and tile_done, which every consumer meets once a tile."""
    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    q_ready = gl.allocate_shared_memory(gl.int64, [Q_BUFFERS * CONSUMERS, 1], bar_layout)
    q_empty = gl.allocate_shared_memory(gl.int64, [Q_BUFFERS * CONSUMERS, 1], bar_layout)
    k_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    v_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    kv_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    tile_done = gl.allocate_shared_memory(gl.int64, [1, 1], bar_layout)
    mbarrier.init(tile_done.index(0), count=CONSUMERS)
    for i in gl.static_range(Q_BUFFERS * CONSUMERS):
        mbarrier.init(q_ready.index(i), count=1)
        mbarrier.init(q_empty.index(i), count=1)
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(kv_empty.index(i), count=CONSUMERS)
    fence_async_shared()
    return q_ready, q_empty, k_ready, v_ready, kv_empty, tile_done


@gluon.jit
def _run_partitions(
    state, schedule, desc_q, desc_k, desc_v, kv_group, CONSUMER_REGISTERS: gl.constexpr
):
    """The kernel's partitions: the first consumer is the default partition (the kernel's 4
    warps), the others and the loader warp are workers. Registers: the loader warp needs few
    and the consumers share the rest of the CTA's (Config.registers)."""
    if schedule.CONSUMERS == 3:
        gl.warp_specialize(
            [
                (_consumer_partition, (state, 0, schedule)),
                (_consumer_partition, (state, 1, schedule)),
                (_consumer_partition, (state, 2, schedule)),
                (_load_partition, (state, desc_q, desc_k, desc_v, schedule, kv_group)),
            ],
            [4, 4, 1],
            [CONSUMER_REGISTERS, CONSUMER_REGISTERS, LOADER_REGISTERS],
        )
    else:
        gl.warp_specialize(
            [
                (_consumer_partition, (state, 0, schedule)),
                (_consumer_partition, (state, 1, schedule)),
                (_load_partition, (state, desc_q, desc_k, desc_v, schedule, kv_group)),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
@tlx.jit(do_not_specialize=["seq_len", "batch_heads", "kv_group"])
def attention_fwd_kernel(
    desc_q,
    desc_k,
    desc_v,
    desc_o,
    qk_scale,
    seq_len,
    batch_heads,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
    ALIAS_O: gl.constexpr,
    CONSUMERS: gl.constexpr,
    Q_BUFFERS: gl.constexpr,
    O_OVER_KV: gl.constexpr,
    Q_IN_REGISTERS: gl.constexpr,
    OVERLAP_O_STORE: gl.constexpr,
    STORE_O_DURING_NEXT_S: gl.constexpr,
    BALANCE_TAIL: gl.constexpr,
    CTAS_PER_SM: gl.constexpr,
    CONSUMER_REGISTERS: gl.constexpr,
    lse_ptr=None,
    kv_group=None,
):
    """A persistent kernel: each CTA computes the work units (_work_units) program_id,
    program_id + num_programs, ... of the batch_heads x seq_len rows of Q. CTAS_PER_SM CTAs
    run on each SM (the grid has as many an SM); CONSUMER_REGISTERS is what a consumer thread
    takes of the CTA's share of the SM's registers (``Config.registers``). Given ``lse_ptr``
    (fp32, batch_heads x seq_len), each row's log-sum-exp of its scaled scores goes there, for
    the backward pass (tlx_kernels/hopper/attention_backward.py); without (None, a constexpr),
    the kernel is the one it was. Given ``kv_group``, the query heads a K/V head serves
    (grouped-query attention), desc_k and desc_v address batch_heads / kv_group heads; without
    (None), as many as desc_q, and the kernel is the one it was."""
    SUB_M: gl.constexpr = BLOCK_M // CONSUMERS
    dtype: gl.constexpr = desc_q.dtype
    tile_layout: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=128, element_bitwidth=dtype.primitive_bitwidth, rank=2
    )
    # All tiles live in one SMEM region planned by tlx. A consumer's Q tile is dead once its
    # last S = Q K^T has been computed, so the O tile of its epilogue can take Q's bytes. With
    # two Q buffers per consumer, the loader fills one with the next tile's Q while the other
    # holds this tile's Q and then its O. With one, O rather takes the bytes of the K/V stage
    # of the tile's last block (O_OVER_KV: one O tile per consumer over each stage), so that
    # the next tile's Q can load while this tile ends.
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    q_tiles = tlx.local_alloc(
        (SUB_M, HEAD_DIM), dtype, Q_BUFFERS * CONSUMERS, reuse=smem, layout=tile_layout
    )
    if O_OVER_KV:
        O_COUNT: gl.constexpr = NUM_STAGES * CONSUMERS
    else:
        O_COUNT: gl.constexpr = Q_BUFFERS * CONSUMERS
    o_tiles = tlx.local_alloc((SUB_M, HEAD_DIM), dtype, O_COUNT, reuse=smem, layout=tile_layout)
    k_tiles = tlx.local_alloc(
        (BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=tile_layout
    )
    v_tiles = tlx.local_alloc(
        (BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=tile_layout
    )
    if O_OVER_KV:
        # Stage s is the buffer group of k_tiles[s], v_tiles[s] and o_tiles[s * CONSUMERS ..]:
        # the O tiles lie over K where they fit in it (BLOCK_M <= BLOCK_N), else over K and V.
        # K is read by each consumer's last S, before its last P V reads V: O over K waits
        # for less (_attend_rows).
        o_group = tlx.reuse_group(o_tiles, group_size=CONSUMERS)
        if BLOCK_M <= BLOCK_N:
            stages = tlx.reuse_group(
                tlx.reuse_group(k_tiles, o_group, group_type=tlx.reuse_group_type.shared),
                v_tiles,
                group_type=tlx.reuse_group_type.distinct,
            )
        else:
            stages = tlx.reuse_group(
                tlx.reuse_group(k_tiles, v_tiles, group_type=tlx.reuse_group_type.distinct),
                o_group,
                group_type=tlx.reuse_group_type.shared,
            )
        smem.set_buffer_overlap(
            tlx.reuse_group(
                tlx.reuse_group(q_tiles, group_size=Q_BUFFERS * CONSUMERS),
                stages,
                group_type=tlx.reuse_group_type.distinct,
            )
        )
    else:
        if ALIAS_O:
            q_and_o = tlx.reuse_group(
                q_tiles,
                o_tiles,
                group_type=tlx.reuse_group_type.shared,
                group_size=Q_BUFFERS * CONSUMERS,
            )
        else:
            q_and_o = tlx.reuse_group(
                q_tiles,
                o_tiles,
                group_type=tlx.reuse_group_type.distinct,
                group_size=Q_BUFFERS * CONSUMERS,
            )
        smem.set_buffer_overlap(
            tlx.reuse_group(
                q_and_o,
                tlx.reuse_group(k_tiles, group_size=NUM_STAGES),
                tlx.reuse_group(v_tiles, group_size=NUM_STAGES),
                group_type=tlx.reuse_group_type.distinct,
            )
        )

    barriers = _barriers(CONSUMERS, Q_BUFFERS, NUM_STAGES)
    q_ready, q_empty, k_ready, v_ready, kv_empty, tile_done = barriers
    SAVE_LSE: gl.constexpr = lse_ptr is not None
    if SAVE_LSE:
        lse_target = lse_ptr
    else:
        lse_target = qk_scale
    state = AttentionState(
        desc_o,
        q_tiles,
        k_tiles,
        v_tiles,
        o_tiles,
        q_ready,
        q_empty,
        k_ready,
        v_ready,
        kv_empty,
        qk_scale,
        seq_len,
        batch_heads,
        tile_done.index(0),
        lse_target,
    )
    schedule = AttentionSchedule(
        CONSUMERS,
        Q_BUFFERS,
        CAUSAL,
        O_OVER_KV,
        Q_IN_REGISTERS,
        OVERLAP_O_STORE,
        STORE_O_DURING_NEXT_S,
        BALANCE_TAIL,
        ALIAS_O,
        SAVE_LSE,
    )
    _run_partitions(state, schedule, desc_q, desc_k, desc_v, kv_group, CONSUMER_REGISTERS)
