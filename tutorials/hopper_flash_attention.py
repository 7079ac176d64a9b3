"""Forward Flash Attention for Hopper (sm_90a): Gluon + tlx storage aliasing.

    python tutorials/hopper_flash_attention.py     (PYTHONPATH=language, or the package installed)

The kernel
----------
O = softmax(Q K^T * sm_scale) V, tile by tile: a tile is BLOCK_M rows of Q of one (batch, head).
The kernel is persistent: one CTA per SM (two with ``Config.ctas_per_sm``: short tiles, bound
by the latency of each consumer's chain, run faster with twice the chains) takes work units
round-robin (``_work_units``): a unit is one tile, or with a causal mask the pair of row blocks
i and n - 1 - i of a head, whose work adds up to the same for every i, so that every CTA gets
as much as the others (``_unit_tiles``: rounds rotated when a head's last row block is short,
and with ``balance_tail`` the last rounds dealt one row block at a time). A CTA has three
warp-specialized partitions:

* a loader warp issues TMA copies: each tile's Q tiles, and K_j and V_j into a ring of
  NUM_STAGES stage buffers guarded by mbarriers (k_ready / v_ready: "the copy landed",
  kv_empty: "every consumer is done with this stage"; q_ready / q_empty likewise for Q). The
  ring runs on across tiles, so the next tile's first blocks load while this one finishes;
* two consumer warpgroups (three at HEAD_DIM 64), each owning 64 rows of a tile. Per K/V block
  a consumer issues S_j = Q K_j^T and P_{j-1} V_{j-1} on the tensor cores (``warpgroup_mma``,
  P from registers) and runs the online softmax of S_j (exp2 with the scale folded in) while
  P V is in flight.
  The consumers are separate partitions that meet only at the K/V stage barriers, so they drift
  apart and one warpgroup's softmax overlaps the other's matrix products (explicit turn-taking
  through an mbarrier pair, as in FA3's ping-pong schedule, measured no faster on an H200);
* causal masking touches only the blocks on the diagonal, and a consumer stops at its own last
  block; rows and keys past the sequence end come from the TMA's zero fill and are masked
  (keys) or skipped and clipped by the TMA store (rows).

Where aliasing buys room
------------------------
All tiles live in one ``tlx.storage_alias_spec``. A consumer's Q tile is dead once its last
S = Q K^T has been computed, and the K/V stage of a tile's last key block once every consumer
has read it; the O tile an epilogue hands to the TMA store is born after both. For HEAD_DIM =
128, BLOCK_M = BLOCK_N = 128, the two consumers' O tiles take the bytes of that stage's K tile
(``distinct(shared(k, o), v)`` per stage: K is read by the last S, before the last P V reads
V), and O leaves Q's one buffer alone: each consumer reads its Q into registers as a tile
starts (S = Q K^T takes Q from registers), and the next tile's Q loads into the buffer a whole
tile ahead. 32 KB (Q) + 3 x (32 KB K + 32 KB V) = 224 KB, which fits the 227 KB of an sm_90a
CTA; without aliasing the same three stages need 256 KB, so the best configuration without
aliasing has only two stages. At HEAD_DIM 64 each consumer has two Q buffers (the next
tile's Q loads while this one is in use), each taken in turn by O (``reuse_group(q, o,
shared)``): 48 KB + 5 x 32 KB = 208 KB, where without aliasing five stages need 256 KB and
only four fit. The planner (``tlx.planner``) lays the region out while the kernel is traced;
``main()`` prints the plan the kernel uses (``tlx.kernel_plans``), the size the planner gives
the same buffers without aliasing, and the configurations without aliasing that do not
compile.
"""

import dataclasses
import functools
import math
import sys

import tlx
import torch
import triton
from flash_attention_common import (
    descriptor_signature,
    descriptors,
    key_blocks,
    load_kv_blocks,
    load_q_tiles,
)
from hopper_common import (
    LOADER_REGISTERS,
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    DirectLaunch,
    partition_registers,
    print_without_aliasing,
)
from tlx.compat import tma_store
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

LOG2E = 1.4426950408889634


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
    index,
    first_index,
    q,
    k_tiles,
    v_tiles,
    k_ready,
    v_ready,
    kv_empty,
    p,
    acc,
    m_i,
    l_i,
    qk_scale,
    off_m,
    seq_len,
    SUB_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
    MASKED: gl.constexpr,
    s_layout: gl.constexpr,
    o_layout: gl.constexpr,
    p_layout: gl.constexpr,
):
    """One software-pipelined iteration: S_j = Q K_j^T is issued together with P_{j-1} V_{j-1},
    then softmax(S_j) runs while the tensor cores finish P V. Key block j of the tile is block
    ``index = first_index + j`` of the K/V ring; ``q`` is the Q tile in SMEM or in registers."""
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
def _store_o(state, o_tile, tile_count, O_OVER_KV: gl.constexpr, ALIAS_O: gl.constexpr):
    """The epilogue of tile ``tile_count``: ``o_tile`` is (O, its head, its first row, its O
    buffer); O goes into the buffer, then out through a TMA store. With O over a K/V stage, it
    first waits until every consumer is done reading the bytes under it (``tile_done``, one
    phase per tile); with O in bytes of its own, until the store of the last O this
    warpgroup wrote has read them, which had the whole tile to do it."""
    (o, off_bh, rows, o_index) = o_tile
    desc_o = state[0]
    o_tiles = state[4]
    tile_done = state[13]
    if O_OVER_KV:
        mbarrier.wait(tile_done, tile_count & 1)
    if not ALIAS_O:
        tma.store_wait(0)
    o_smem = o_tiles.index(o_index)
    o_smem.store(o)
    fence_async_shared()
    tma_store(desc_o, [off_bh, rows, 0], o_smem.reshape([1, o.shape[0], o.shape[1]]))


@gluon.jit
def _attend_rows(
    state,
    q_index,
    first_index,
    off_bh,
    off_m,
    n_unmasked,
    n_blocks,
    o_index,
    tile_last,
    tile_count,
    pending,
    previous,
    SUB_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
    O_OVER_KV: gl.constexpr,
    O_OVER_K: gl.constexpr,
    Q_IN_REGISTERS: gl.constexpr,
    OVERLAP_O_STORE: gl.constexpr,
    STORE_O_DURING_NEXT_S: gl.constexpr,
    ALIAS_O: gl.constexpr,
):
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
    released after that S's softmax. Without, ``previous`` is unused and O is stored here."""
    (q_tiles, k_tiles, v_tiles) = state[1:4]
    (q_empty, k_ready, v_ready, kv_empty) = state[6:10]
    (qk_scale, seq_len) = state[10:12]
    tile_done = state[13]
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, HEAD_DIM, 16]
    )
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

    # Block 0 is peeled: there is no P V product to overlap with yet.
    first_stage = first_index % NUM_STAGES
    mbarrier.wait(k_ready.index(first_stage), (first_index // NUM_STAGES) & 1)
    s = gl.zeros([SUB_M, BLOCK_N], gl.float32, s_layout)
    if STORE_O_DURING_NEXT_S:
        s_tok = warpgroup_mma(
            q, k_tiles.index(first_stage).permute((1, 0)), s, use_acc=False, is_async=True
        )
        if pending >= 0:
            _store_o(state, previous, tile_count - 1, O_OVER_KV, ALIAS_O)
        s = warpgroup_mma_wait(0, deps=[s_tok])
    else:
        s = warpgroup_mma(q, k_tiles.index(first_stage).permute((1, 0)), s, use_acc=False)
        if OVERLAP_O_STORE:
            if pending >= 0:
                # The last tile's O store has had this tile's start to read the bytes under it.
                _release_after_store(kv_empty, q_empty, pending, O_OVER_KV)
    if n_unmasked == 0:
        s = _mask_scores(s, off_m, 0, seq_len, SUB_M, BLOCK_N, CAUSAL, s_layout)
    p, alpha, m_i, l_i = _online_softmax(s, m_i, l_i, qk_scale)
    if STORE_O_DURING_NEXT_S:
        if pending >= 0:
            # The last tile's O store, issued during this S, has had its softmax to read.
            _release_after_store(kv_empty, q_empty, pending, O_OVER_KV)
    p = gl.convert_layout(_to_mma_operand(p, dtype), p_layout)

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
                index,
                first_index,
                q,
                k_tiles,
                v_tiles,
                k_ready,
                v_ready,
                kv_empty,
                p,
                acc,
                m_i,
                l_i,
                qk_scale,
                off_m,
                seq_len,
                SUB_M,
                BLOCK_N,
                NUM_STAGES,
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
    if O_OVER_KV:
        if not O_OVER_K:
            mbarrier.arrive(tile_done)
    if not STORE_O_DURING_NEXT_S:
        _store_o(state, (o, off_bh, off_m, o_index), tile_count, O_OVER_KV, ALIAS_O)
    # O may take Q's or a K/V stage's bytes: they are released once the store has read them
    # (with OVERLAP_O_STORE, after the next tile's first S: the caller's ``pending``). In
    # bytes of its own, its store runs on into the next tile (_store_o waits for it there).
    if ALIAS_O and not OVERLAP_O_STORE:
        tma.store_wait(0)
        if O_OVER_KV:
            mbarrier.arrive(kv_empty.index(last), pred=first_index + n_blocks - 1 == tile_last)
    return o


@gluon.jit
def _work_units(
    seq_len, batch_heads, BLOCK_M: gl.constexpr, CAUSAL: gl.constexpr, BALANCE_TAIL: gl.constexpr
):
    """(work, work units): the grid's CTAs take work units round-robin, ``_unit_tiles`` says
    which tiles a unit is from ``work`` (row blocks per head, work units per head, tail heads,
    batch_heads, whether the last row block is short). A unit is
    one row block of a head; causal, it is the pair of row blocks i and n - 1 - i (n row
    blocks), whose key blocks add up to about n + 1 whatever i, so that every CTA gets as much
    work as the others (the middle block of an odd n is a unit alone). Pairs leave the grid's
    last round part empty, a pair's worth of work idle on the CTAs without one: with
    BALANCE_TAIL, the last ``tail heads`` heads (the pairs of that last round and of one round
    more) are rather dealt tile by tile, longest first."""
    n_row_blocks = gl.cdiv(seq_len, BLOCK_M)
    if CAUSAL:
        units_per_head = (n_row_blocks + 1) // 2
    else:
        units_per_head = n_row_blocks
    n_units = units_per_head * batch_heads
    tail_heads = 0
    if CAUSAL and BALANCE_TAIL:
        programs = gl.num_programs(0)
        tail_units = n_units % programs + programs
        tail_heads = gl.minimum(gl.cdiv(tail_units, units_per_head), batch_heads)
        n_units += tail_heads * (n_row_blocks - units_per_head)
    short_last = seq_len % BLOCK_M != 0
    return (n_row_blocks, units_per_head, tail_heads, batch_heads, short_last), n_units


@gluon.jit
def _unit_tiles(unit, work, CAUSAL: gl.constexpr, BALANCE_TAIL: gl.constexpr):
    """(off_bh, first row block, row block step, tiles) of a work unit, ``work`` as
    _work_units finds it. A unit's tiles are row blocks first, first + step, ..., the longest
    first when causal.

    A tail head's tiles are units of one tile each: row block n - 1 of every tail head, then
    n - 2, ... The CTAs take them in rounds of num_programs tiles whose direction alternates
    from the last round, which is partial and goes to the first CTAs: so that those get the
    shortest tiles of the round before it, and every CTA ends within about a short tile of the
    others (against a pair's worth of work when the tail is dealt in pairs).

    When the last row block is short, the other units are dealt in rounds of num_programs
    rotated by one CTA a round: CTA c takes unit c + r of round r. A round keeps its units (the
    same heads run side by side, their K/V shared in L2), but a CTA no longer takes the same
    row block of a head every round when the units per head divide num_programs: with
    192-row tiles at N = 1024 on 132 SMs, 22 CTAs took every short last row block and the
    others only full ones (3% of the call, H200)."""
    n_row_blocks, units_per_head, tail_heads, batch_heads, short_last = work
    programs = gl.num_programs(0)
    body_units = (batch_heads - tail_heads) * units_per_head
    dealt = unit
    if short_last:
        if unit < body_units:
            round_start = unit - unit % programs
            in_round = gl.minimum(programs, body_units - round_start)
            dealt = round_start + (unit - round_start + unit // programs) % in_round
    off_bh = dealt // units_per_head
    first = dealt % units_per_head
    step = 0
    n_tiles = 1
    if CAUSAL:
        i = first
        first = n_row_blocks - 1 - i
        step = i - first
        n_tiles = gl.minimum(first - i, 1) + 1
        if BALANCE_TAIL:
            if unit >= body_units:
                tail_tile = unit - body_units
                tail_round = tail_tile // programs
                position = tail_tile % programs
                tail_rounds = gl.cdiv(tail_heads * n_row_blocks, programs)
                if (tail_rounds - 1 - tail_round) % 2 == 1:
                    position = programs - 1 - position
                rank = tail_round * programs + position
                off_bh = batch_heads - tail_heads + rank % tail_heads
                first = n_row_blocks - 1 - rank // tail_heads
                step = 0
                n_tiles = 1
    return off_bh, first, step, n_tiles


@gluon.jit
def _consumer_partition(state, consumer: gl.constexpr, SCHEDULE: gl.constexpr):
    """Rows [consumer * SUB_M, (consumer + 1) * SUB_M) of every tile of this CTA, one
    warpgroup. ``state`` holds the tensors and buffers every partition takes (the kernel's
    ``partition_state``), ``SCHEDULE`` the kernel's schedule constexprs (its ``schedule``)."""
    CONSUMERS: gl.constexpr = SCHEDULE[0]
    Q_BUFFERS: gl.constexpr = SCHEDULE[1]
    CAUSAL: gl.constexpr = SCHEDULE[2]
    O_OVER_KV: gl.constexpr = SCHEDULE[3]
    Q_IN_REGISTERS: gl.constexpr = SCHEDULE[4]
    OVERLAP_O_STORE: gl.constexpr = SCHEDULE[5]
    STORE_O_DURING_NEXT_S: gl.constexpr = SCHEDULE[6]
    BALANCE_TAIL: gl.constexpr = SCHEDULE[7]
    ALIAS_O: gl.constexpr = SCHEDULE[8]
    (q_tiles, k_tiles) = state[1:3]
    (q_ready, q_empty, k_ready, v_ready, kv_empty) = state[5:10]
    (seq_len, batch_heads, tile_done) = state[11:14]
    SUB_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    BLOCK_M: gl.constexpr = CONSUMERS * SUB_M
    O_OVER_K: gl.constexpr = O_OVER_KV and BLOCK_M <= BLOCK_N  # the kernel's stage layout
    work, n_units = _work_units(seq_len, batch_heads, BLOCK_M, CAUSAL, BALANCE_TAIL)
    tile_count = 0  # tiles of this CTA so far: which Q buffer, which phase
    kv_count = 0  # K/V blocks of this CTA so far: which stage, which phase
    # With OVERLAP_O_STORE: the stage or Q buffer under the last tile's O, which this
    # warpgroup releases once that O's store has read it (-1: none).
    pending = -1
    # With STORE_O_DURING_NEXT_S: the last tile's O, not stored yet, with where it goes (its
    # head, its first row, its O buffer); valid while pending >= 0.
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, HEAD_DIM, 16]
    )
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
                o = _attend_rows(
                    state,
                    q_index,
                    kv_count,
                    off_bh,
                    rows,
                    n_unmasked,
                    own_blocks,
                    o_index,
                    tile_last,
                    tile_count,
                    pending,
                    (o_previous, previous_bh, previous_rows, previous_o_index),
                    SUB_M,
                    BLOCK_N,
                    HEAD_DIM,
                    NUM_STAGES,
                    CAUSAL,
                    O_OVER_KV,
                    O_OVER_K,
                    Q_IN_REGISTERS,
                    OVERLAP_O_STORE,
                    STORE_O_DURING_NEXT_S,
                    ALIAS_O,
                )
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
                                O_OVER_KV,
                                ALIAS_O,
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
                    O_OVER_KV,
                    ALIAS_O,
                )
        # The last O store reads SMEM until it completes.
        tma.store_wait(0)


@gluon.jit
def _load_partition(state, desc_q, desc_k, desc_v, SCHEDULE: gl.constexpr):
    """The loader warp: for every tile of this CTA, in the consumers' order, its Q tiles once
    their buffers are free (q_empty) and its K/V blocks into the ring (load_kv_blocks).

    With one Q buffer per consumer, a tile's Q can load only once the last tile's O (in the
    same bytes) has been stored: the first NUM_STAGES - 1 K/V blocks go first, into the stages
    the consumers free as they finish the last tile, so that only Q's copy stands between two
    tiles. With two, or with Q read into registers, Q goes first: its buffer was freed a tile
    ago."""
    CONSUMERS: gl.constexpr = SCHEDULE[0]
    Q_BUFFERS: gl.constexpr = SCHEDULE[1]
    CAUSAL: gl.constexpr = SCHEDULE[2]
    O_OVER_KV: gl.constexpr = SCHEDULE[3]
    Q_IN_REGISTERS: gl.constexpr = SCHEDULE[4]
    BALANCE_TAIL: gl.constexpr = SCHEDULE[7]
    (q_tiles, k_tiles, v_tiles) = state[1:4]
    (q_ready, q_empty, k_ready, v_ready, kv_empty) = state[5:10]
    (seq_len, batch_heads) = state[11:13]
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
            kv = (desc_k, desc_v, k_tiles, v_tiles, k_ready, v_ready, kv_empty, off_bh)
            load_kv_blocks(*kv, 0, n_early, kv_count)
            first_q = (tile_count % Q_BUFFERS) * CONSUMERS
            for c in gl.static_range(CONSUMERS):
                mbarrier.wait(q_empty.index(first_q + c), ((tile_count // Q_BUFFERS) & 1) ^ 1)
            load_q_tiles(desc_q, q_tiles, q_ready, first_q, CONSUMERS, off_bh, off_m)
            load_kv_blocks(*kv, n_early, n_blocks, kv_count)
            tile_count += 1
            kv_count += n_blocks


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
@tlx.jit(do_not_specialize=["seq_len", "batch_heads"])
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
):
    """A persistent kernel: each CTA computes the work units (_work_units) program_id,
    program_id + num_programs, ... of the batch_heads x seq_len rows of Q. CTAS_PER_SM CTAs
    run on each SM (the grid has as many an SM); CONSUMER_REGISTERS is what a consumer thread
    takes of the CTA's share of the SM's registers (``Config.registers``)."""
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

    # What every partition takes (a tuple held in a variable keeps tensors only, so the
    # constexprs go in each call).
    partition_state = (
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
    )
    # The partitions' constexprs, as one constexpr tuple (a plain tuple held in a variable
    # keeps tensors only).
    SCHEDULE: gl.constexpr = (
        CONSUMERS,
        Q_BUFFERS,
        CAUSAL,
        O_OVER_KV,
        Q_IN_REGISTERS,
        OVERLAP_O_STORE,
        STORE_O_DURING_NEXT_S,
        BALANCE_TAIL,
        ALIAS_O,
    )
    # The first consumer is the default partition (the kernel's 4 warps), the others and the
    # loader warp are workers. Registers: the loader warp needs few and the consumers share
    # the rest of the CTA's (Config.registers).
    if CONSUMERS == 3:
        gl.warp_specialize(
            [
                (_consumer_partition, (partition_state, 0, SCHEDULE)),
                (_consumer_partition, (partition_state, 1, SCHEDULE)),
                (_consumer_partition, (partition_state, 2, SCHEDULE)),
                (_load_partition, (partition_state, desc_q, desc_k, desc_v, SCHEDULE)),
            ],
            [4, 4, 1],
            [CONSUMER_REGISTERS, CONSUMER_REGISTERS, LOADER_REGISTERS],
        )
    else:
        gl.warp_specialize(
            [
                (_consumer_partition, (partition_state, 0, SCHEDULE)),
                (_consumer_partition, (partition_state, 1, SCHEDULE)),
                (_load_partition, (partition_state, desc_q, desc_k, desc_v, SCHEDULE)),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )


# Host side ---------------------------------------------------------------------------------

HEAD_DIMS = (64, 128)
COMPILE_OPTIONS = {"num_warps": 4}


@dataclasses.dataclass(frozen=True)
class Config:
    """Tile sizes and schedule of one compiled kernel: BLOCK_M rows of Q per tile, split among
    ``consumers`` warpgroups (2 or 3), BLOCK_N keys per K/V block, ``num_stages`` K/V stages,
    ``q_buffers`` Q tiles per consumer (2: the next tile's Q loads while this one's is in use),
    and where the epilogue's O tiles live: in bytes of their own (``alias_o=False``: O's TMA
    store then runs on into the next tile, which waits for it only to write its own O there),
    over the consumers' Q tiles, or (``o_over_kv``) over the K/V stage of the tile's last key
    block.
    ``q_in_registers``: each consumer reads its Q tile into registers as a tile starts, which
    frees the Q buffer for the next tile's Q at once (O cannot then lie over Q).
    ``overlap_o_store`` (with O over a K/V stage or over one of two Q buffers): the TMA store
    of O runs on while the next tile starts; the bytes under O are released after that
    tile's first S. ``store_o_during_next_s`` (with ``overlap_o_store``): O is written to SMEM
    and its TMA store issued while the tensor cores compute the next tile's first S, rather
    than before that tile starts. ``balance_tail`` (causal only): the grid's last rounds take
    single row blocks, longest first, rather than pairs (``_work_units``). ``ctas_per_sm``
    (1 or 2): CTAs that run on one SM at once, each with half its shared memory (the plan
    pruner holds each to that share: ``tlx.autotune(ctas_per_sm=...)``) and registers
    (``registers``); with two, an SM runs four consumer warpgroups' chains of S, softmax and
    P V rather than two, which short tiles, bound by those chains' latency, need."""

    block_m: int
    block_n: int
    num_stages: int
    alias_o: bool
    consumers: int = 2
    q_buffers: int = 1
    o_over_kv: bool = False
    q_in_registers: bool = False
    overlap_o_store: bool = False
    store_o_during_next_s: bool = False
    balance_tail: bool = False
    ctas_per_sm: int = 1

    def __post_init__(self):
        if self.ctas_per_sm not in (1, 2):
            raise ValueError(f"ctas_per_sm must be 1 or 2, got {self.ctas_per_sm}")
        if self.ctas_per_sm == 2 and (self.consumers != 2 or self.block_n != 64):
            raise ValueError(
                f"ctas_per_sm=2 leaves a consumer thread {self.registers[1]} registers: two "
                f"consumers over 64-key blocks fit in 112, {self.consumers} over "
                f"{self.block_n}-key blocks do not"
            )
        if self.o_over_kv and not self.alias_o:
            raise ValueError("o_over_kv places O over a K/V stage: it needs alias_o=True")
        if self.q_in_registers and self.alias_o and not self.o_over_kv:
            raise ValueError(
                "q_in_registers frees Q's buffer for the next tile's Q before the epilogue: O "
                "cannot lie over Q (use o_over_kv=True or alias_o=False)"
            )
        if self.overlap_o_store and not (
            self.o_over_kv or (self.alias_o and self.q_buffers == 2 and not self.q_in_registers)
        ):
            raise ValueError(
                "overlap_o_store releases the bytes under O after the next tile's first S: "
                "it needs O over a K/V stage (o_over_kv=True) or over one of two Q buffers "
                "(alias_o=True, q_buffers=2)"
            )
        if self.store_o_during_next_s and not self.overlap_o_store:
            raise ValueError(
                "store_o_during_next_s stores O while the next tile starts, which is what "
                "overlap_o_store releases its bytes for: it needs overlap_o_store=True"
            )

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    @property
    def registers(self):
        """(registers a thread at launch, a worker consumer thread's): the CTA's share of the
        SM's (``hopper_common.partition_registers``). With two CTAs an SM the default partition,
        consumer 0, gets 104 beside consumer 1's 112: the later rows of a causal tile, which
        have more key blocks."""
        return partition_registers(self.consumers, self.ctas_per_sm)

    @property
    def compile_options(self):
        """Triton's compile options: with CTAs sharing an SM, every thread launched with
        its CTA's share (``maxnreg``), which is what lets them share it."""
        if self.ctas_per_sm == 1:
            return COMPILE_OPTIONS
        return {**COMPILE_OPTIONS, "maxnreg": self.registers[0]}

    def __repr__(self):
        consumers = "" if self.consumers == 2 else f" consumers={self.consumers}"
        q_buffers = "" if self.q_buffers == 1 else f" q_buffers={self.q_buffers}"
        o_over_kv = " o_over_kv" if self.o_over_kv else ""
        q_in_registers = " q_in_registers" if self.q_in_registers else ""
        overlap_o_store = " overlap_o_store" if self.overlap_o_store else ""
        store_o_during_next_s = " store_o_during_next_s" if self.store_o_during_next_s else ""
        balance_tail = " balance_tail" if self.balance_tail else ""
        ctas_per_sm = "" if self.ctas_per_sm == 1 else f" ctas_per_sm={self.ctas_per_sm}"
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} stages={self.num_stages} "
            f"alias_o={self.alias_o}{consumers}{q_buffers}{o_over_kv}{q_in_registers}"
            f"{overlap_o_store}{store_o_during_next_s}{balance_tail}{ctas_per_sm}"
        )


def default_config(head_dim):
    """The fastest configuration measured on an H100 (bench/flash_attention.py --sweep).
    HEAD_DIM 128: BLOCK_M = BLOCK_N = 128 and as many K/V stages as fit with O aliasing (3).
    A second Q buffer does not fit beside them, so O takes the K/V stage of the tile's last
    block rather than Q (1-2.5% faster than O over Q), and each consumer reads its Q into
    registers as the tile starts: the next tile's Q loads a whole tile ahead into the one
    buffer (1.5-3.5% faster at N = 512 to 2048 than Q read from SMEM by every S, which frees
    it only after the tile's last S; 0-2% from N = 4096 up). The TMA store of O runs on into
    the next tile (2-4% faster without a mask at N = 512 and 1024, 0-0.5% from 2048 up, but
    2% slower with a causal mask at 512 and 1024, where the tuner takes other tiles). HEAD_DIM
    64: the exponentials of the softmax take about as long as both matrix products of a
    block, so three consumer warpgroups (BLOCK_M = 192) keep the tensor cores busier than two;
    two Q buffers per consumer, O over Q (5-6% faster than one Q buffer, with O over Q or over
    the last stage: the next tile's Q is there when this one ends) and 5 stages (within 1% of
    4)."""
    if head_dim == 128:
        return Config(
            128, 128, 3, alias_o=True, o_over_kv=True, q_in_registers=True, overlap_o_store=True
        )
    return Config(192, 128, 5, alias_o=True, consumers=3, q_buffers=2)


@functools.cache
def unaliased_search(head_dim):
    """The default configuration without aliasing, tried with fewer and fewer stages. Returns
    (the first whose kernel compiles, ((configuration, error message), ...) for those that do
    not: their region does not fit, and the planner's message states the bytes it needs)."""
    rejected = []
    for num_stages in range(default_config(head_dim).num_stages, 0, -1):
        config = default_config(head_dim).replace(
            num_stages=num_stages, alias_o=False, o_over_kv=False, overlap_o_store=False
        )
        try:
            smem_plan(config, head_dim)
        except CompilationError as error:
            if num_stages == 1:
                raise
            rejected.append((config, error.error_message))
        else:
            return config, tuple(rejected)


def best_unaliased_config(head_dim):
    """The default configuration without aliasing, with as many stages as the planner fits."""
    return unaliased_search(head_dim)[0]


def benchmark_configs(head_dim):
    """(with aliasing, best without aliasing)."""
    return default_config(head_dim), best_unaliased_config(head_dim)


def all_configs(head_dim):
    """The configurations bench/flash_attention.py --sweep times. Measured too on an H100, at
    HEAD_DIM 64: BLOCK_N = 256 spills registers and ran 10-30% slower; BLOCK_M = 256, 128 rows
    per consumer, ran 1-7% slower; computing 1 to 5 of every 8 exponentials by a polynomial on
    the FMA units instead of the MUFU unit ran 2% to 21% slower (the softmax is bound by the
    instructions it issues, not by the MUFU unit). At HEAD_DIM 128: BLOCK_N = 64 with four to
    six stages (and one or two Q buffers) ran 7-12% slower."""
    base = default_config(head_dim)
    configs = [
        base,
        base.replace(num_stages=2),
        best_unaliased_config(head_dim),
        Config(128, 64, 6, alias_o=True),
    ]
    if head_dim == 64:
        # Three consumer warpgroups of 64 rows: each K/V block feeds 192 rows of Q.
        configs += [base.replace(num_stages=stages) for stages in (3, 4)]
        configs.append(base.replace(q_buffers=1))
        configs.append(base.replace(block_n=64))
        configs.append(Config(128, 128, 5, alias_o=True, q_buffers=2))
        configs.append(base.replace(q_buffers=1, o_over_kv=True))
    else:
        configs.append(base.replace(overlap_o_store=False))
        configs.append(base.replace(q_in_registers=False, overlap_o_store=False))
        configs.append(base.replace(o_over_kv=False, q_in_registers=False, overlap_o_store=False))
    return list(dict.fromkeys(configs))


def _check_inputs(q, k, v):
    if not (q.shape == k.shape == v.shape) or q.dim() != 4:
        raise ValueError(
            f"q, k, v must share one (batch, heads, seq_len, head_dim) shape, got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(
            f"q, k, v must all be float16 or bfloat16, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if q.shape[3] not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {q.shape[3]}")


@functools.cache
def _sm_count(device):
    return torch.cuda.get_device_properties(device).multi_processor_count


def _persistent_grid(device, batch_heads, seq_len, block_m, ctas_per_sm):
    # Persistent: as many CTAs an SM as run on one at once, and no more than there are row
    # blocks; a CTA with no work unit left returns at once.
    return (min(ctas_per_sm * _sm_count(device), batch_heads * triton.cdiv(seq_len, block_m)),)


def _call_arguments(q, sm_scale):
    """The kernel's arguments after the descriptors: the scale of S in base 2, the sequence
    length and the number of (batch, head) pairs."""
    batch, heads, seq_len, head_dim = q.shape
    sm_scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim)
    return sm_scale * LOG2E, seq_len, batch * heads


def attention(q, k, v, causal, sm_scale=None, config=None):
    """softmax(q k^T * sm_scale) v for (batch, heads, seq_len, head_dim) CUDA tensors."""
    _check_inputs(q, k, v)
    batch, heads, seq_len, head_dim = q.shape
    config = config or default_config(head_dim)
    o, *descs = descriptors(q, k, v, config.block_m // config.consumers, config.block_n)
    grid = _persistent_grid(q.device, batch * heads, seq_len, config.block_m, config.ctas_per_sm)
    attention_fwd_kernel[grid](
        *descs,
        *_call_arguments(q, sm_scale),
        HEAD_DIM=head_dim,
        CAUSAL=causal,
        **config_arguments(config),
        **config.compile_options,
    )
    return o.view(batch, heads, seq_len, head_dim)


# Autotuning ---------------------------------------------------------------------------------


def autotune_space(head_dim):
    """The configurations ``autotuned_attention`` searches for ``head_dim`` (tlx.autotune):
    the sweep's (``all_configs``), and for short sequences, where a CTA's tiles are few and
    short, narrower tiles: 128 rows in two consumers with 64- or 128-key blocks (O over the
    last K/V stage) and 192 rows in three with 64-key blocks. Each compiles in a few seconds
    on first use, so the space stays small; the planner drops those whose SMEM does not fit
    before any is compiled (at HEAD_DIM 128, four 128-key stages)."""
    short = [
        Config(128, 128, 3, alias_o=True, o_over_kv=True),
        Config(128, 128, 4, alias_o=True, o_over_kv=True),
        Config(128, 64, 4, alias_o=True, o_over_kv=True),
        Config(128, 64, 6, alias_o=True, o_over_kv=True),
        Config(192, 64, 4, alias_o=True, consumers=3),
    ]
    # The next tile's Q loaded a whole tile ahead: a short tile waits for little else
    # (bench/flash_attention.py --tile-cost). At HEAD_DIM 128 a second Q buffer fits only
    # beside 64-key stages, and Q read into registers (one buffer, free once read) ran
    # 1.5-3.5% faster than either at N = 512 to 2048 (H100). At HEAD_DIM 64, 64-key blocks
    # with two Q buffers were 1.04-1.12x the space's best with a causal mask at N = 512 and
    # 1024, and 128 rows with Q in registers over five 128-key stages the best at 2048.
    qreg = dict(alias_o=True, o_over_kv=True, q_in_registers=True)
    # O stored while the tensor cores compute the next tile's first S (H200, fp16, without a
    # mask): 2.8-3.6% faster at N = 512 to 2048 for the HEAD_DIM 128 default, 3-6% at N = 512
    # and 1024 for the HEAD_DIM 64 default with overlap_o_store; with a causal mask 0-2%
    # slower, where the tuner keeps the variants without it.
    store_late = dict(overlap_o_store=True, store_o_during_next_s=True)
    if head_dim == 128:
        short += [
            Config(128, block_n, stages, **qreg) for block_n, stages in ((128, 3), (64, 4), (64, 6))
        ]
        short.append(default_config(head_dim).replace(**store_late))
        # With a causal mask, the grid's last rounds dealt tile by tile (H200, fp16, against
        # the same kernels dealing pairs): 2% at N = 2048 for the default, which lost 4% at
        # 1024; with Q in registers over six 64-key stages, 3.9% at N = 512 and 0.8% at 1024.
        short += [
            Config(128, 64, 6, **qreg, balance_tail=True),
            default_config(head_dim).replace(balance_tail=True),
        ]
        # O in bytes of its own, its store running on into the next tile: with a causal mask
        # the first consumer, a block short of the second in each tile, goes on to its next
        # tile where O over the last K/V stage holds it until the second has read that stage
        # (H200, fp16, against cuDNN): 1.052-1.056x at N = 512, 1.063-1.066x at 1024 and
        # 1.052x at 2048, where six stages with O over the last ran 0.994-0.997x, 1.035x and
        # 1.045x.
        short.append(Config(128, 64, 5, alias_o=False, q_in_registers=True, balance_tail=True))
    else:
        two_ctas = Config(
            128, 64, 4, alias_o=True, q_buffers=2, overlap_o_store=True, ctas_per_sm=2
        )
        # O's store overlapping the next tile: 1.5-2.5% at N = 512 and 1024 with a causal
        # mask for the 64-key blocks, 1% from N = 1024 up without a mask for the default.
        short += [
            Config(128, 64, 6, alias_o=True, q_buffers=2, overlap_o_store=True),
            Config(128, 128, 5, **qreg),
            default_config(head_dim).replace(overlap_o_store=True),
            default_config(head_dim).replace(**store_late),
            # Two consumers, two Q buffers, O over Q: 0.963x cuDNN without a mask at N = 512
            # on an H100, where the default with it reached 0.909x.
            Config(128, 128, 5, alias_o=True, q_buffers=2, **store_late),
            # With a causal mask, the grid's last rounds dealt tile by tile (H200, fp16, against
            # the same kernels dealing pairs): 1-7% at N = 512 to 4096 for the 64-key blocks
            # with two Q buffers, 1-2% from 2048 up for the default.
            Config(128, 64, 6, alias_o=True, q_buffers=2, overlap_o_store=True, balance_tail=True),
            default_config(head_dim).replace(balance_tail=True),
            # 192 rows over six 64-key stages with O's store overlapping the next tile:
            # 1.016x cuDNN with a causal mask at N = 2048, where the kernel the tuner took
            # (five stages, the store not overlapped) ran 0.998x (H200, fp16).
            Config(192, 64, 6, alias_o=True, consumers=3, q_buffers=2, overlap_o_store=True),
            # Two CTAs an SM, each with two consumers over four 64-key stages (113 KiB):
            # with a causal mask 1.008x cuDNN at N = 512 (without balance_tail), 1.033x at
            # 1024 and 1.022x at 2048 (with it), where the space's best ran 0.953x, 0.929x and
            # 1.02x (H200, fp16). Five stages: 1.050x at N = 512 where four ran 1.042x; O
            # stored during the next tile's first S: 0.981x without a mask at N = 512 where
            # the space's best ran 0.965x.
            two_ctas,
            two_ctas.replace(balance_tail=True),
            two_ctas.replace(num_stages=5),
            two_ctas.replace(store_o_during_next_s=True),
        ]
    return list(dict.fromkeys([*all_configs(head_dim), *short]))


def config_arguments(config):
    """The kernel's constexpr arguments of ``config``."""
    return {
        "BLOCK_M": config.block_m,
        "BLOCK_N": config.block_n,
        "NUM_STAGES": config.num_stages,
        "ALIAS_O": config.alias_o,
        "CONSUMERS": config.consumers,
        "Q_BUFFERS": config.q_buffers,
        "O_OVER_KV": config.o_over_kv,
        "Q_IN_REGISTERS": config.q_in_registers,
        "OVERLAP_O_STORE": config.overlap_o_store,
        "STORE_O_DURING_NEXT_S": config.store_o_during_next_s,
        "BALANCE_TAIL": config.balance_tail,
        "CTAS_PER_SM": config.ctas_per_sm,
        "CONSUMER_REGISTERS": config.registers[1],
    }


def _triton_config(config):
    return triton.Config(
        config_arguments(config), pre_hook=_set_block_shapes, **config.compile_options
    )


def autotune_configs(head_dim):
    """``autotune_space(head_dim)`` as ``triton.Config``s."""
    return [_triton_config(config) for config in autotune_space(head_dim)]


def config_of(triton_config):
    """The tutorial's ``Config`` of a ``triton.Config`` of ``autotune_configs``."""
    kwargs = triton_config.kwargs
    return Config(
        kwargs["BLOCK_M"],
        kwargs["BLOCK_N"],
        kwargs["NUM_STAGES"],
        kwargs["ALIAS_O"],
        kwargs["CONSUMERS"],
        kwargs["Q_BUFFERS"],
        kwargs["O_OVER_KV"],
        kwargs["Q_IN_REGISTERS"],
        kwargs["OVERLAP_O_STORE"],
        kwargs["STORE_O_DURING_NEXT_S"],
        kwargs["BALANCE_TAIL"],
        kwargs["CTAS_PER_SM"],
    )


def _set_block_shapes(arguments):
    """The configuration's tiles on the descriptors (run by the autotuner before each launch
    and by the plan pruner before it types the arguments)."""
    q_rows = arguments["BLOCK_M"] // arguments["CONSUMERS"]
    head_dim = arguments["HEAD_DIM"]
    for name, rows in (
        ("desc_q", q_rows),
        ("desc_o", q_rows),
        ("desc_k", arguments["BLOCK_N"]),
        ("desc_v", arguments["BLOCK_N"]),
    ):
        arguments[name].block_shape = [1, rows, head_dim]


@functools.cache
def autotuned_kernel(dtype, head_dim, retime_top=3):
    """The kernel under ``tlx.autotune`` for one dtype and head dim, keyed on the sequence
    length, the number of heads and the mask (``retime_top``: tlx.autotune's)."""
    return tlx.autotune(
        configs=autotune_configs(head_dim),
        key=["seq_len", "batch_heads", "CAUSAL"],
        prune_configs_by={"early_config_prune": causal_only_pruned},
        ctas_per_sm="CTAS_PER_SM",
        retime_top=retime_top,
    )(attention_fwd_kernel)


def causal_only_pruned(configs, named_args, **kwargs):
    """``configs`` less those whose only difference is with a causal mask (``balance_tail``)
    when the call has none: the kernel they compile to is the one without it."""
    if kwargs["CAUSAL"]:
        return configs
    return [config for config in configs if not config.kwargs["BALANCE_TAIL"]]


# (device, dtype, shape, mask) -> hopper_common.DirectLaunch, and (dtype, head dim) -> the
# configuration last run.
_launches = {}
_last_config = {}


def run_tuner(tuner, q, k, v, causal, sm_scale=None):
    """Launches ``tuner`` (an ``autotuned_kernel``) on the inputs, which times every
    configuration on a key's first call. Returns (O, the descriptors and the call's arguments
    it ran with)."""
    call_arguments = _call_arguments(q, sm_scale)
    base = default_config(q.shape[-1])
    # The configuration's pre_hook sets each descriptor's block shape.
    o, *descs = descriptors(q, k, v, base.block_m // base.consumers, base.block_n)

    def grid(meta):
        return _persistent_grid(
            q.device, meta["batch_heads"], meta["seq_len"], meta["BLOCK_M"], meta["CTAS_PER_SM"]
        )

    tuner[grid](*descs, *call_arguments, HEAD_DIM=q.shape[-1], CAUSAL=causal)
    return o, descs, call_arguments


def autotuned_attention(q, k, v, causal, sm_scale=None):
    """``attention`` with the configuration tlx.autotune finds fastest for the shape, dtype
    and mask (the first call of a key times every configuration that fits, later ones launch
    the chosen kernel directly)."""
    _check_inputs(q, k, v)
    batch, heads, seq_len, head_dim = q.shape
    key = (q.device, q.dtype, tuple(q.shape), causal)
    launch = _launches.get(key)
    if launch is not None:
        _last_config[q.dtype, head_dim] = launch.config
        q3, k3, v3 = (t.contiguous().view(batch * heads, seq_len, head_dim) for t in (q, k, v))
        o = q3.new_empty(q3.shape)
        launch((q3, k3, v3, o), _call_arguments(q, sm_scale))
        return o.view(batch, heads, seq_len, head_dim)

    tuner = autotuned_kernel(q.dtype, head_dim)
    o, descs, call_arguments = run_tuner(tuner, q, k, v, causal, sm_scale)
    config = config_of(tuner.best_config)
    _last_config[q.dtype, head_dim] = config
    _launches[key] = DirectLaunch.compile(
        attention_fwd_kernel,
        config,
        _persistent_grid(q.device, batch * heads, seq_len, config.block_m, config.ctas_per_sm),
        descs,
        call_arguments,
        {
            **tuner.best_config.kwargs,
            "HEAD_DIM": head_dim,
            "CAUSAL": causal,
            **config.compile_options,
        },
    )
    return o.view(batch, heads, seq_len, head_dim)


def chosen_config(dtype, head_dim):
    """The configuration the last ``autotuned_attention`` of ``dtype`` and ``head_dim`` ran."""
    return _last_config[dtype, head_dim]


def kernel_source(config, head_dim, dtype="fp16", causal=False):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    constexprs = {**config_arguments(config), "HEAD_DIM": head_dim, "CAUSAL": causal}
    signature = {
        **descriptor_signature(dtype, config.block_m // config.consumers, config.block_n, head_dim),
        "qk_scale": "fp32",
        "seq_len": "i32",
        "batch_heads": "i32",
        **dict.fromkeys(constexprs, "constexpr"),
    }
    return tlx.ASTSource(fn=attention_fwd_kernel, signature=signature, constexprs=constexprs)


def compile_for_hopper(config, head_dim, dtype="fp16", causal=False):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    source = kernel_source(config, head_dim, dtype, causal)
    return triton.compile(source, target=SM90A, options=config.compile_options)


def smem_plan(config, head_dim):
    """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) as tlx makes it when the kernel
    is compiled for sm_90a with ``config``: ``tlx.kernel_plans`` traces the kernel (no GPU, no
    PTX). A configuration that does not fit raises the CompilationError compiling it raises."""
    (smem,) = tlx.kernel_plans(
        kernel_source(config, head_dim), target=SM90A, options=config.compile_options
    )
    return smem


def print_smem_plans():
    for head_dim in HEAD_DIMS:
        config = default_config(head_dim)
        smem = smem_plan(config, head_dim)
        plan = smem.plan
        print(
            f"HEAD_DIM={head_dim}, {config}: SMEM region {plan.size_bytes} bytes "
            f"({plan.size_bytes / 1024:.0f} KB, aligned to {plan.alignment})"
        )
        for buffer, view in zip(smem.buffers, plan.views, strict=True):
            print(
                f"    {buffer.name:8s} {buffer.shape[0]} x {list(buffer.shape[1:])} "
                f"{buffer.element_bits}-bit: "
                f"offset {view.offset:6d}, {view.buffer_size} bytes per buffer"
            )
        best, rejected = unaliased_search(head_dim)
        print_without_aliasing(smem, rejected)
        print(f"    best configuration without aliasing: {best}")


def check_against_torch():
    failures = 0
    for dtype in TORCH_TO_TRITON_DTYPE:
        for head_dim in HEAD_DIMS:
            for causal in (False, True):
                for seq_len in (77, 1000, 2048):
                    torch.manual_seed(seq_len)
                    q, k, v = (
                        torch.randn(2, 4, seq_len, head_dim, device="cuda", dtype=dtype)
                        for _ in range(3)
                    )
                    expected = torch.nn.functional.scaled_dot_product_attention(
                        q.float(), k.float(), v.float(), is_causal=causal
                    )
                    error = (attention(q, k, v, causal).float() - expected).abs().max().item()
                    tolerance = 1e-2 if dtype is torch.float16 else 3e-2
                    ok = error <= tolerance
                    failures += not ok
                    print(
                        f"    {TORCH_TO_TRITON_DTYPE[dtype]} D={head_dim:3d} causal={causal!s:5} "
                        f"N={seq_len:4d}: max |error| {error:.1e} {'ok' if ok else 'FAILED'}"
                    )
    return failures


def benchmark():
    print(f"{'D':>4} {'causal':>6} {'ours TFLOP/s':>12} {'torch SDPA TFLOP/s':>18}")
    batch, heads, seq_len = 4, 32, 4096
    for head_dim in HEAD_DIMS:
        for causal in (False, True):
            q, k, v = (
                torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=torch.float16)
                for _ in range(3)
            )
            flops = 4.0 * batch * heads * seq_len * seq_len * head_dim / (2 if causal else 1)
            ours = triton.testing.do_bench(
                functools.partial(attention, q, k, v, causal), return_mode="median"
            )
            sdpa = triton.testing.do_bench(
                functools.partial(
                    torch.nn.functional.scaled_dot_product_attention, q, k, v, is_causal=causal
                ),
                return_mode="median",
            )
            print(
                f"{head_dim:>4} {causal!s:>6} {flops / ours * 1e-9:12.1f} "
                f"{flops / sdpa * 1e-9:18.1f}"
            )


def check_autotuned():
    """autotuned_attention against torch SDPA for each head dim and mask, with the
    configuration chosen for each key."""
    failures = 0
    for head_dim in HEAD_DIMS:
        for causal in (False, True):
            for seq_len in (1000, 4096):
                q, k, v = (
                    torch.randn(2, 4, seq_len, head_dim, device="cuda", dtype=torch.float16)
                    for _ in range(3)
                )
                expected = torch.nn.functional.scaled_dot_product_attention(
                    q.float(), k.float(), v.float(), is_causal=causal
                )
                out = autotuned_attention(q, k, v, causal)
                error = (out.float() - expected).abs().max().item()
                ok = error <= 1e-2
                failures += not ok
                print(
                    f"    fp16 D={head_dim:3d} causal={causal!s:5} N={seq_len:4d}: "
                    f"{chosen_config(torch.float16, head_dim)}, max |error| {error:.1e} "
                    f"{'ok' if ok else 'FAILED'}"
                )
    return failures


def main():
    print("SMEM plans of the kernel for sm_90a (tlx.kernel_plans):")
    print_smem_plans()
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9:
        print(f"Correctness against torch SDPA (fp32 reference) on {torch.cuda.get_device_name()}:")
        failures = check_against_torch()
        print("Autotuned (tlx.autotune: the configuration chosen for each shape and mask):")
        failures += check_autotuned()
        print(f"Benchmark, B=4 H=32 N=4096 fp16 on {torch.cuda.get_device_name()}:")
        benchmark()
        return 1 if failures else 0
    print("No Hopper GPU: compiling for sm_90a only.")
    for head_dim in HEAD_DIMS:
        config = default_config(head_dim)
        compiled = compile_for_hopper(config, head_dim)
        print(
            f"    HEAD_DIM={head_dim} {config}: cubin {len(compiled.asm['cubin'])} bytes, "
            f"{compiled.metadata.shared} bytes of SMEM (region + mbarriers)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
