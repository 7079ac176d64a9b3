"""The attention backward's dQ in a pass of its own, for Hopper (sm_90a): no atomics.

``attention_bwd_kernel`` (tlx_kernels/hopper/attention_backward_kernel.py) gives a CTA a block of
keys, so the dQ of a Q block is a sum over CTAs, which it adds to an fp32 accumulator with
atomics. With ``dq_pass="separate"`` it skips dQ, and this kernel computes it the other way
round: one CTA a tile, a block of BLOCK_M rows of Q of one query head (or, persistent, a CTA
an SM taking the tiles in turn: docs/attention-backward.md, "Persistent CTAs"), looping over
the key blocks of its KV head (query head h reads KV head h // group), with

    S = Q K^T     P = exp(S * sm_scale - LSE)     dP = dO V^T     dS = P * (dP - delta)
    dQ += dS K,   written once, sm_scale * dQ in the inputs' dtype.

S and dP are computed a second time (seven matrix products a block pair in all rather than
five), traded for the atomics' global memory traffic. With COMPUTES_DELTA the kernel also
makes delta = rowsum(dO * O) of its rows and stores it, and runs before the backward kernel,
in place of the preprocess (docs/attention-backward.md, "delta in the dQ pass").

The CTA's partitions: a loader warp loads each consumer's Q and dO once, then K and V of every
key block into a ring of NUM_STAGES stages; CONSUMERS warpgroups own 64 rows of Q each (with
ROWS_IN_REGISTERS their Q and dO loaded to registers once, the A operands of S and dP), and dS
is the A operand of dQ = dS K straight from registers (queries as rows: step_by_queries' shape,
tlx_kernels/hopper/attention_backward_step.py), so it needs no SMEM.

SMEM, one ``tlx.storage_alias_spec``: Q and dO a consumer, the K/V ring, and the epilogue's
dQ staging tile (the TMA store's source), which takes the bytes of the consumer's Q buffer:
its last reader, the last S product, has completed by then (``shared(q, dq)``, buffer by
buffer). Keys past the sequence's end need no mask: the TMA zero-fills their K and V rows,
so their share of dS K is zero; rows of Q past it load an LSE of +inf, so their P is zero.
"""

import dataclasses
import functools

import tlx
import torch
import triton
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

from tlx_kernels._host import KernelConfig, KernelHost
from tlx_kernels.hopper.attention_backward_state import ABSENT, DqState, DqTile, dq_with_tile
from tlx_kernels.hopper.attention_backward_step import LOG2E
from tlx_kernels.hopper.attention_common import (
    check_slots,
    head_and_block,
    key_blocks,
    launch_grid,
    load_pair_into_ring,
    load_pairs_once,
    tiles_of_cta,
)
from tlx_kernels.hopper.common import (
    LOADER_REGISTERS,
    SM90A,
    accumulator_layout,
    block_indices,
    partition_registers,
    ring_barriers,
)

# Kernel side -------------------------------------------------------------------------------


@gluon.jit
def _tile_at(
    tile,
    seq_len,
    batch_heads,
    BLOCK_M: gl.constexpr,
    CAUSAL: gl.constexpr,
    PERSISTENT: gl.constexpr,
):
    """(batch * head, first row) of tile ``tile`` (``head_and_block``; a persistent CTA's
    under a causal mask by block): with a causal mask the longest rows (the last blocks)
    first, so that the short ones fill the tail of the grid."""
    row_blocks = gl.cdiv(seq_len, BLOCK_M)
    if CAUSAL and PERSISTENT:
        ORDER: gl.constexpr = "by_block"
    else:
        ORDER: gl.constexpr = "by_head"
    bh_q, block = head_and_block(tile, batch_heads, row_blocks, ORDER, 1)
    if CAUSAL:
        block = row_blocks - 1 - block
    return bh_q, block * BLOCK_M


@gluon.jit
def _key_range(seq_len, off_m, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """(unmasked, blocks): how many key blocks the CTA's rows meet and how many of those, from
    the first, need no causal mask. Without one no block needs a mask (see the module's
    docstring)."""
    n_unmasked, n_blocks = key_blocks(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
    if not CAUSAL:
        n_unmasked = n_blocks
    return n_unmasked, n_blocks


@gluon.jit
def _key_block(step, n_unmasked, n_blocks, MASKED_FIRST: gl.constexpr):
    """The key block of a tile's step ``step``, the order of the loader's copies into the ring
    and of the consumers' steps: in order, or with MASKED_FIRST those that need the causal
    mask (from ``n_unmasked`` on) first, then the others (``_dq_tile`` says why). Without a
    mask ``n_unmasked`` is ``n_blocks``: the blocks in order either way."""
    if MASKED_FIRST:
        step = (step + n_unmasked) % n_blocks
    return step


@gluon.jit
def _dq_load_partition(
    state, desc_q, desc_do, desc_k, desc_v, CAUSAL: gl.constexpr, PERSISTENT: gl.constexpr
):
    """The loader warp, for each of the CTA's tiles: each consumer's Q and dO into the tile's
    Q slot (``q_ready``) once the epilogue of the slot's previous tile has stored dQ from its
    bytes (``q_free``), then K and V of every key block into the ring, in the consumers'
    order (``_key_block``); the ring's index runs on from tile to tile."""
    (q_tiles, do_tiles, k_tiles, v_tiles) = (
        state.q_tiles,
        state.do_tiles,
        state.k_tiles,
        state.v_tiles,
    )
    (q_ready, q_free, batch_heads) = (state.tile.q_ready, state.tile.q_free, state.tile.batch_heads)
    (ready, empty) = (state.ready, state.empty)
    (seq_len, group) = (state.seq_len, state.group)
    Q_BUFFERS: gl.constexpr = q_ready.shape[0]
    CONSUMERS: gl.constexpr = q_tiles.shape[0] // Q_BUFFERS
    SUB_M: gl.constexpr = q_tiles.shape[1]
    BLOCK_M: gl.constexpr = CONSUMERS * SUB_M
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    index = 0
    taken = 0
    tiles = gl.cdiv(seq_len, BLOCK_M) * batch_heads
    (first_tile, end_tile, tile_step) = tiles_of_cta(tiles, PERSISTENT)
    for tile in range(first_tile, end_tile, tile_step):
        bh_q, off_m = _tile_at(tile, seq_len, batch_heads, BLOCK_M, CAUSAL, PERSISTENT)
        bh_kv = bh_q // group
        slot = taken % Q_BUFFERS
        mbarrier.wait(q_free.index(slot), ((taken // Q_BUFFERS) & 1) ^ 1)
        load_pairs_once(
            desc_q,
            desc_do,
            q_tiles,
            do_tiles,
            q_ready.index(slot),
            bh_q,
            off_m,
            slot * CONSUMERS,
            CONSUMERS,
        )
        n_unmasked, n_blocks = _key_range(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
        for step in range(n_blocks):
            keys = _key_block(step, n_unmasked, n_blocks, Q_BUFFERS > 1) * BLOCK_N
            load_pair_into_ring(desc_k, desc_v, k_tiles, v_tiles, ready, empty, index, bh_kv, keys)
            index += 1
        taken += 1


@gluon.jit
def _dq_step(state, index, block, q, do, queries, lse2, delta, dq, MASKED: gl.constexpr):
    """Key block ``block`` (ring index ``index``) for this consumer's rows: S and dP, P and dS
    from them, dQ += dS K; the stage is released once dQ's product, the last reader of K, has
    completed. ``q`` and ``do``: the rows' Q and dO, in SMEM or registers."""
    (k_tiles, v_tiles) = (state.k_tiles, state.v_tiles)
    (ready, empty) = (state.ready, state.empty)
    qk_scale = state.qk_scale
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    SUB_M: gl.constexpr = q.shape[0]
    dtype: gl.constexpr = q.dtype
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = accumulator_layout(BLOCK_N, num_warps)
    stage = index % NUM_STAGES
    k = k_tiles.index(stage)
    mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
    zeros = gl.zeros([SUB_M, BLOCK_N], gl.float32, s_layout)
    s_tok = warpgroup_mma(q, k.permute((1, 0)), zeros, use_acc=False, is_async=True)
    dp_tok = warpgroup_mma(
        do, v_tiles.index(stage).permute((1, 0)), zeros, use_acc=False, is_async=True
    )
    s = warpgroup_mma_wait(1, deps=[s_tok])
    dp = warpgroup_mma_wait(0, deps=[dp_tok])
    if MASKED:
        keys = block_indices(block * BLOCK_N, BLOCK_N, gl.SliceLayout(0, s_layout))
        s = gl.where(queries[:, None] >= keys[None, :], s, float("-inf"))
    p = gl.exp2(s * qk_scale - lse2[:, None])
    ds = p * (dp - delta[:, None])
    ds_operand = gl.convert_layout(
        ds.to(dtype), gl.DotOperandLayout(operand_index=0, parent=dq.type.layout, k_width=2)
    )
    dq = warpgroup_mma(ds_operand, k, dq, is_async=True)
    dq, ds_operand = warpgroup_mma_wait(0, deps=[dq, ds_operand])
    mbarrier.arrive(empty.index(stage))
    return dq


@gluon.jit
def _dq_tile(
    state,
    bh_q,
    off_m,
    index,
    o_rows,
    consumer: gl.constexpr,
    CAUSAL: gl.constexpr,
    ROWS_IN_REGISTERS: gl.constexpr,
    COMPUTES_DELTA: gl.constexpr,
):
    """One tile, rows [off_m + consumer * SUB_M, off_m + (consumer + 1) * SUB_M) of query
    head ``bh_q``, from ring index ``index`` on: every key block (``_key_block``'s order),
    then sm_scale * dQ through SMEM (the bytes of its Q buffer of the tile's slot,
    ``state.tile.first_buffer`` its first) and a TMA store, which clips rows past the
    sequence's end, waited for. With ROWS_IN_REGISTERS the rows' Q and dO are loaded to
    registers once, the A operands of every S and dP, whose products then read SMEM for K
    and V alone. With COMPUTES_DELTA the rows' delta comes from ``o_rows``
    (``_rows_of_o``) and dO, and is stored; else it is loaded. Returns the ring index after
    the tile."""
    (q_tiles, do_tiles, dq_tiles) = state.q_tiles, state.do_tiles, state.dq_tiles
    (lse_ptr, delta_ptr, sm_scale) = (state.lse_ptr, state.delta_ptr, state.sm_scale)
    (seq_len, desc_dq) = state.seq_len, state.desc_dq
    SUB_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    BLOCK_M: gl.constexpr = q_tiles.shape[0] // state.tile.q_ready.shape[0] * SUB_M
    BLOCK_N: gl.constexpr = state.k_tiles.shape[1]
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = accumulator_layout(BLOCK_N, num_warps)
    dq_layout: gl.constexpr = accumulator_layout(HEAD_DIM, num_warps)
    rows = off_m + consumer * SUB_M
    queries = block_indices(rows, SUB_M, gl.SliceLayout(1, s_layout))
    in_sequence = queries < seq_len
    row_start = bh_q * seq_len
    lse = gl.load(lse_ptr + row_start + queries, mask=in_sequence, other=float("inf"))
    lse2 = lse * LOG2E
    n_unmasked, n_blocks = _key_range(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
    buffer = state.tile.first_buffer + consumer
    q = q_tiles.index(buffer)
    do = do_tiles.index(buffer)
    if COMPUTES_DELTA:
        # delta = rowsum(dO * O) from the rows of O loaded before Q and dO landed, stored for
        # the backward kernel, which runs after this one.
        do_rows = do.load(o_rows.type.layout)
        row_sums = gl.sum(do_rows.to(gl.float32) * o_rows.to(gl.float32), axis=1)
        delta = gl.convert_layout(row_sums, queries.type.layout)
        gl.store(delta_ptr + row_start + queries, delta, mask=in_sequence)
    else:
        delta = gl.load(delta_ptr + row_start + queries, mask=in_sequence, other=0.0)
    dq = gl.zeros([SUB_M, HEAD_DIM], gl.float32, dq_layout)
    if ROWS_IN_REGISTERS:
        rows_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2)
        q = q.load(rows_layout)
        do = do.load(rows_layout)
    # With two Q slots, whose descriptors change from tile to tile, the masked blocks come
    # first (_key_block), since a causal tile always has one: with the unmasked ones first,
    # ptxas 12.8 (Triton 3.6's) used in the masked loop wgmma descriptors of Q and dO that it
    # computed before the unmasked one, which a tile of the first Q block skips, so that tile
    # read the previous tile's slot, or an undefined address as a CTA's first
    # (test_attention_gradients.py, issue 45). With one slot the blocks run in order, which
    # an H100 ran 0.5-8% faster causal (docs/attention-backward.md, "Persistent CTAs"). One
    # loop with the mask in a branch spills at HEAD_DIM 128.
    MASKED_FIRST: gl.constexpr = CAUSAL and state.tile.q_ready.shape[0] > 1
    masked_steps_first = 0
    if MASKED_FIRST:
        masked_steps_first = n_blocks - n_unmasked
        for step in range(0, masked_steps_first):
            block = _key_block(step, n_unmasked, n_blocks, True)
            dq = _dq_step(state, index + step, block, q, do, queries, lse2, delta, dq, True)
    for step in range(masked_steps_first, masked_steps_first + n_unmasked):
        block = _key_block(step, n_unmasked, n_blocks, MASKED_FIRST)
        dq = _dq_step(state, index + step, block, q, do, queries, lse2, delta, dq, False)
    if CAUSAL and not MASKED_FIRST:
        for step in range(n_unmasked, n_blocks):
            dq = _dq_step(state, index + step, step, q, do, queries, lse2, delta, dq, True)
    dq_smem = dq_tiles.index(buffer)
    dq_smem.store((dq * sm_scale).to(dq_tiles.dtype))
    fence_async_shared()
    tma_store(desc_dq, [bh_q, rows, 0], dq_smem.reshape([1, SUB_M, HEAD_DIM]))
    tma.store_wait(0)
    return index + n_blocks


@gluon.jit
def _rows_of_o(state, bh_q, off_m, consumer: gl.constexpr):
    """This consumer's rows of O (zeros past the sequence's end) in a dQ accumulator's
    layout, whose rows are S's: their sums with dO's are the rows' delta (``_dq_tile``)."""
    q_tiles = state.q_tiles
    (seq_len, o_ptr) = state.seq_len, state.o_ptr
    SUB_M: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    layout: gl.constexpr = accumulator_layout(HEAD_DIM, gl.num_warps())
    queries = off_m + consumer * SUB_M + gl.arange(0, SUB_M, gl.SliceLayout(1, layout))
    columns = gl.arange(0, HEAD_DIM, gl.SliceLayout(0, layout))
    offsets = (bh_q * seq_len + queries)[:, None].to(gl.int64) * HEAD_DIM + columns[None, :]
    in_sequence = (queries[:, None] < seq_len) & (columns[None, :] < HEAD_DIM)
    return gl.load(o_ptr + offsets, mask=in_sequence, other=0.0)


@gluon.jit
def _dq_consumer_partition(
    state,
    consumer: gl.constexpr,
    CAUSAL: gl.constexpr,
    ROWS_IN_REGISTERS: gl.constexpr,
    PERSISTENT: gl.constexpr,
    COMPUTES_DELTA: gl.constexpr,
):
    """One consumer warpgroup, for each of the CTA's tiles (``_dq_tile``) once its Q and dO
    have landed (``q_ready``); with PERSISTENT it then frees the tile's Q slot (``q_free``:
    the epilogue has stored dQ from its bytes) for the loader's next tile in it. The ring's
    index runs on from tile to tile. With COMPUTES_DELTA the tile's rows of O load from
    global memory while Q and dO land."""
    (q_ready, q_free, batch_heads) = (state.tile.q_ready, state.tile.q_free, state.tile.batch_heads)
    q_tiles = state.q_tiles
    seq_len = state.seq_len
    Q_BUFFERS: gl.constexpr = q_ready.shape[0]
    CONSUMERS: gl.constexpr = q_tiles.shape[0] // Q_BUFFERS
    BLOCK_M: gl.constexpr = CONSUMERS * q_tiles.shape[1]
    index = 0
    taken = 0
    tiles = gl.cdiv(seq_len, BLOCK_M) * batch_heads
    (first_tile, end_tile, tile_step) = tiles_of_cta(tiles, PERSISTENT)
    for tile in range(first_tile, end_tile, tile_step):
        bh_q, off_m = _tile_at(tile, seq_len, batch_heads, BLOCK_M, CAUSAL, PERSISTENT)
        slot = taken % Q_BUFFERS
        tile_state = dq_with_tile(state, DqTile(q_ready, q_free, batch_heads, slot * CONSUMERS))
        o_rows = 0
        if COMPUTES_DELTA:
            o_rows = _rows_of_o(state, bh_q, off_m, consumer)
        mbarrier.wait(q_ready.index(slot), (taken // Q_BUFFERS) & 1)
        index = _dq_tile(
            tile_state,
            bh_q,
            off_m,
            index,
            o_rows,
            consumer,
            CAUSAL,
            ROWS_IN_REGISTERS,
            COMPUTES_DELTA,
        )
        if PERSISTENT:
            mbarrier.arrive(q_free.index(slot))
        taken += 1


@gluon.jit
def _dq_smem_tiles(
    dtype: gl.constexpr,
    SUB_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CONSUMERS: gl.constexpr,
    Q_BUFFERS: gl.constexpr,
):
    """The kernel's SMEM, one spec: (Q, dO, K, V, dQ tiles); Q, dO and dQ are CONSUMERS
    buffers a Q slot, Q_BUFFERS slots (a persistent CTA loads its next tile's Q and dO into
    the other while this one runs), and each dQ staging tile takes its Q buffer's bytes."""
    layout: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=128, element_bitwidth=dtype.primitive_bitwidth, rank=2
    )
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    ROWS: gl.constexpr = CONSUMERS * Q_BUFFERS
    q_tiles = tlx.local_alloc((SUB_M, HEAD_DIM), dtype, ROWS, reuse=smem, layout=layout)
    do_tiles = tlx.local_alloc((SUB_M, HEAD_DIM), dtype, ROWS, reuse=smem, layout=layout)
    k_tiles = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=layout)
    v_tiles = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=layout)
    dq_tiles = tlx.local_alloc((SUB_M, HEAD_DIM), dtype, ROWS, reuse=smem, layout=layout)
    smem.set_buffer_overlap(
        tlx.reuse_group(
            tlx.reuse_group(
                q_tiles, dq_tiles, group_type=tlx.reuse_group_type.shared, group_size=ROWS
            ),
            tlx.reuse_group(do_tiles, group_size=ROWS),
            tlx.reuse_group(
                k_tiles, v_tiles, group_type=tlx.reuse_group_type.distinct, group_size=NUM_STAGES
            ),
            group_type=tlx.reuse_group_type.distinct,
        )
    )
    return q_tiles, do_tiles, k_tiles, v_tiles, dq_tiles


@tlx.jit(do_not_specialize=["seq_len", "group", "batch_heads"])
def attention_dq_kernel(
    desc_q,
    desc_k,
    desc_v,
    desc_do,
    desc_dq,
    lse_ptr,
    delta_ptr,
    o_ptr,
    sm_scale,
    qk_scale,
    seq_len,
    group,
    batch_heads,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
    CONSUMERS: gl.constexpr,
    ROWS_IN_REGISTERS: gl.constexpr,
    Q_BUFFERS: gl.constexpr,
    PERSISTENT: gl.constexpr,
    COMPUTES_DELTA: gl.constexpr,
    CONSUMER_REGISTERS: gl.constexpr,
):
    """A tile a CTA (grid: the Q blocks of every (batch, head)), or with PERSISTENT each
    CTA's tiles in turn (grid: at most one CTA an SM): dQ of BLOCK_M rows of a query head, in
    the inputs' dtype, over every key of KV head ``bh // group``. ``qk_scale`` is sm_scale *
    log2(e); ``lse_ptr`` holds the forward's natural-log LSE a row, ``delta_ptr`` rowsum(dO *
    O), or with COMPUTES_DELTA receives it, computed from O (``o_ptr``, unread without);
    ``batch_heads``: batch * heads, the tiles' heads (and the tuner's key)."""
    tiles = _dq_smem_tiles(
        desc_q.dtype, BLOCK_M // CONSUMERS, BLOCK_N, HEAD_DIM, NUM_STAGES, CONSUMERS, Q_BUFFERS
    )
    # A Q slot's Q and dO have landed (q_ready); its tile's epilogue has stored dQ from its
    # bytes, one arrival a consumer (q_free): the barriers of a ring of slots.
    q_ready, q_free = ring_barriers(Q_BUFFERS, CONSUMERS)
    ready, empty = ring_barriers(NUM_STAGES, CONSUMERS)
    fence_async_shared()
    # The tile: each partition sets its first Q buffer for each of its tiles.
    tile = DqTile(q_ready, q_free, batch_heads, ABSENT)
    state = DqState(
        tiles[0],
        tiles[1],
        tiles[2],
        tiles[3],
        tiles[4],
        tile,
        ready,
        empty,
        lse_ptr,
        delta_ptr,
        sm_scale,
        qk_scale,
        seq_len,
        group,
        desc_dq,
        o_ptr,
    )
    if CONSUMERS == 2:
        gl.warp_specialize(
            [
                (
                    _dq_consumer_partition,
                    (state, 0, CAUSAL, ROWS_IN_REGISTERS, PERSISTENT, COMPUTES_DELTA),
                ),
                (
                    _dq_consumer_partition,
                    (state, 1, CAUSAL, ROWS_IN_REGISTERS, PERSISTENT, COMPUTES_DELTA),
                ),
                (_dq_load_partition, (state, desc_q, desc_do, desc_k, desc_v, CAUSAL, PERSISTENT)),
            ],
            [4, 1],
            [CONSUMER_REGISTERS, LOADER_REGISTERS],
        )
    else:
        gl.warp_specialize(
            [
                (
                    _dq_consumer_partition,
                    (state, 0, CAUSAL, ROWS_IN_REGISTERS, PERSISTENT, COMPUTES_DELTA),
                ),
                (_dq_load_partition, (state, desc_q, desc_do, desc_k, desc_v, CAUSAL, PERSISTENT)),
            ],
            [1],
            [LOADER_REGISTERS],
        )


# Host side ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DqConfig(KernelConfig):
    """Tile sizes and schedule of one compiled dQ kernel: BLOCK_M rows of Q a CTA, split
    among ``consumers`` warpgroups (1 or 2, 64 rows each), key blocks of BLOCK_N keys
    streaming through ``num_stages`` K/V stages; ``rows_in_registers``: each consumer's Q and
    dO held in registers, the A operands of S and dP (``_dq_tile``); ``persistent``: a CTA
    an SM at most, taking the tiles in turn, with ``q_buffers`` Q slots (the second loads the
    next tile's Q and dO while one runs); ``computes_delta``: the kernel computes delta =
    rowsum(dO * O) of its rows from O and stores it, for the backward kernel run after it,
    in place of the preprocess (attention_backward_delta.py)."""

    ARGUMENTS = {
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "num_stages": "NUM_STAGES",
        "consumers": "CONSUMERS",
        "rows_in_registers": "ROWS_IN_REGISTERS",
        "q_buffers": "Q_BUFFERS",
        "persistent": "PERSISTENT",
        "computes_delta": "COMPUTES_DELTA",
    }

    block_m: int
    block_n: int
    num_stages: int
    consumers: int = 2
    rows_in_registers: bool = False
    q_buffers: int = 1
    persistent: bool = False
    computes_delta: bool = False

    def __post_init__(self):
        if self.consumers not in (1, 2):
            raise ValueError(f"consumers must be 1 or 2, got {self.consumers}")
        if self.block_m != 64 * self.consumers:
            raise ValueError(
                f"each consumer warpgroup owns 64 rows of Q: block_m must be "
                f"{64 * self.consumers} with {self.consumers} consumers, got {self.block_m}"
            )
        check_slots("q_buffers", self.q_buffers, self.persistent, "Q and dO")

    def kernel_arguments(self):
        """The fields' arguments, then a worker consumer thread's registers after setmaxnreg
        (the kernel passes them with two consumers only)."""
        registers = partition_registers(self.consumers)[1]
        return {**super().kernel_arguments(), "CONSUMER_REGISTERS": registers}

    def __repr__(self):
        consumers = "" if self.consumers == 2 else f" consumers={self.consumers}"
        registers = " rows_in_registers" if self.rows_in_registers else ""
        persistent = " persistent" if self.persistent else ""
        q_buffers = "" if self.q_buffers == 1 else f" q_buffers={self.q_buffers}"
        delta = " computes_delta" if self.computes_delta else ""
        return (
            f"dQ BLOCK_M={self.block_m} BLOCK_N={self.block_n} stages={self.num_stages}"
            f"{consumers}{registers}{persistent}{q_buffers}{delta}"
        )


def block_shapes(config, arguments):
    """Block shapes of the Q, K, V, dO and dQ descriptors ([batch * heads, seq_len,
    head_dim]): a consumer's rows of Q, dO and dQ, a key block of K and V."""
    head_dim = arguments["HEAD_DIM"]
    q_block = [1, config.block_m // config.consumers, head_dim]
    kv_block = [1, config.block_n, head_dim]
    return (q_block, kv_block, kv_block, q_block, q_block)


HOST = KernelHost(
    attention_dq_kernel,
    DqConfig,
    descriptors=("desc_q", "desc_k", "desc_v", "desc_do", "desc_dq"),
    scalars={
        "lse_ptr": "*fp32",
        "delta_ptr": "*fp32",
        "o_ptr": "*{dtype}",
        "sm_scale": "fp32",
        "qk_scale": "fp32",
        "seq_len": "i32",
        "group": "i32",
        "batch_heads": "i32",
    },
    block_shapes=block_shapes,
    target=SM90A,
)


def kernel_source(config, head_dim, dtype="fp16", causal=False):
    """The dQ kernel with ``config``, as ``triton.compile``, ``tlx.kernel_plans`` and
    ``tlx.check_hazards`` take it."""
    return HOST.kernel_source(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)


def compile_for_hopper(config, head_dim, dtype="fp16", causal=False):
    """Compiles the dQ kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return HOST.compile(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)


def smem_plan(config, head_dim):
    """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) for sm_90a with ``config``."""
    return HOST.smem_plan(config, HEAD_DIM=head_dim, CAUSAL=False)


def default_config(head_dim):
    """Two consumers over 128 rows of Q, 64-key blocks through four stages: what
    ``backward`` runs with ``dq_pass="separate"`` and no dQ configuration given."""
    return DqConfig(128, 64, 4)


def autotune_space(head_dim):
    """The configurations the tuner searches: at HEAD_DIM 64 two consumers over 128 rows
    with 64-key blocks through two or four stages, or 128-key blocks through two (S and dP
    take 64 registers a thread each), and one consumer over 64 rows (twice the CTAs); then
    each consumer's Q and dO in registers (``rows_in_registers``), with 64-key and 128-key
    blocks. On the H200 the rows in registers ran the 64-key kernel 1.5-3% faster
    (docs/performance.md). At HEAD_DIM 128 (where ptxas spills 448 bytes a thread with the
    128-key rows in registers) the configurations the grid's rows chose (``grid_choices``):
    on an H100 the others trailed the fastest by 1-61% on every row the tuner timed (bf16,
    N = 512 and 2048, causal or not; docs/autotune.md, "The spaces cut to their winners").
    Then the persistent variants that won where they were timed (``persistent_winners``)."""
    if head_dim == 128:
        return grid_choices(head_dim) + persistent_winners(head_dim)
    return [
        DqConfig(128, 64, 4),
        DqConfig(128, 64, 2),
        DqConfig(128, 128, 2),
        DqConfig(64, 64, 4, consumers=1),
        DqConfig(128, 64, 4, rows_in_registers=True),
        DqConfig(128, 128, 2, rows_in_registers=True),
        *persistent_winners(head_dim),
    ]


def grid_choices(head_dim):
    """The configurations the grid's rows chose (docs/performance.md): 128 x 128 with two
    stages, the rows in registers or not at HEAD_DIM 64; at 128 that without them, and
    128 x 64 with four, the rows in registers."""
    if head_dim == 64:
        return [DqConfig(128, 128, 2, rows_in_registers=rows) for rows in (True, False)]
    return [DqConfig(128, 128, 2), DqConfig(128, 64, 4, rows_in_registers=True)]


def persistent_variants(head_dim):
    """The persistent forms (``DqConfig.persistent``: a CTA an SM, taking the tiles in turn)
    of ``grid_choices``, with one Q slot (their own ring) and with two (the next tile's Q and
    dO load while a tile runs) where a second slot fits beside a ring of the same depth, else
    beside the deepest that fits (at 128: the 128 x 64 ring's three stages of four; none
    beside the 128 x 128 ring). ``bench/attention_backward.py --persistent`` times them;
    those of ``persistent_winners`` are in the space too."""
    persistent = dict(persistent=True)
    two_slots = dict(persistent=True, q_buffers=2)
    chosen = grid_choices(head_dim)
    if head_dim == 64:
        return [config.replace(**slots) for config in chosen for slots in (persistent, two_slots)]
    in_registers = chosen[1]
    return [
        chosen[0].replace(**persistent),
        in_registers.replace(**persistent),
        in_registers.replace(num_stages=3, **two_slots),
    ]


def persistent_winners(head_dim):
    """The persistent variants in the tuner's space: two Q slots with the rows in registers,
    the fastest dQ kernel of ``bench/attention_backward.py --persistent`` at N = 512 and
    1024 on an H200 (4-9% above one tile a CTA at HEAD_DIM 64, 3-6% at 128 without a mask:
    docs/performance.md, "The leads timed")."""
    return [
        config
        for config in persistent_variants(head_dim)
        if config.q_buffers == 2 and config.rows_in_registers
    ]


def delta_variants(head_dim):
    """``grid_choices`` and ``persistent_winners`` computing delta
    (``DqConfig.computes_delta``): the backward then runs no preprocess, whose read of O and
    dO is a few percent of the backward's time at N = 512 and 1024 (docs/attention-backward.md,
    "delta in the dQ pass"), and the dQ kernel, which holds dO already, reads O alone.
    ``bench/attention_backward.py --delta`` times them beside the same configurations behind
    the preprocess; the backward's tuner times its chosen dQ configuration both ways
    (``attention_backward._tune``)."""
    chosen = grid_choices(head_dim) + persistent_winners(head_dim)
    return [config.replace(computes_delta=True) for config in chosen]


def autotune_configs(head_dim):
    """``autotune_space(head_dim)`` as ``triton.Config``s."""
    return [HOST.triton_config(config) for config in autotune_space(head_dim)]


def config_of(triton_config):
    """The ``DqConfig`` of a ``triton.Config`` of ``autotune_configs``."""
    return DqConfig.of_arguments(triton_config)


@functools.cache
def autotuned_kernel(dtype, head_dim):
    """The dQ kernel under ``tlx.autotune`` for one dtype and head dim, keyed on the
    sequence length, the batch's heads, the grouping and the mask."""
    return tlx.autotune(
        configs=autotune_configs(head_dim), key=["seq_len", "batch_heads", "group", "CAUSAL"]
    )(attention_dq_kernel)


def compute_dq(q3, k3, v3, do3, lse, delta, sm_scale, causal, config=None, o3=None):
    """dQ, in q3's dtype, of [batch * heads, seq_len, head_dim] contiguous q3 and do3 and
    [batch * kv_heads, seq_len, head_dim] k3 and v3; ``lse`` and ``delta`` fp32, one a row
    of q3. With ``config`` None, the configuration ``tlx.autotune`` finds fastest for the
    shape, dtype, grouping and mask (the first call of a key times them all). A ``config``
    that ``computes_delta`` writes delta from ``o3`` (q3's shape) and dO. Returns (dQ, the
    configuration it ran)."""
    computes_delta = config is not None and config.computes_delta
    if computes_delta and (o3 is None or o3.shape != q3.shape):
        shape = None if o3 is None else tuple(o3.shape)
        raise ValueError(
            f"{config} computes delta from O: o3 must have q3's shape {tuple(q3.shape)}, "
            f"got {shape}"
        )
    group = q3.shape[0] // k3.shape[0]
    head_dim = q3.shape[2]
    dq = torch.empty_like(q3)
    operands = (q3, k3, v3, do3, dq)
    # A kernel that does not compute delta reads no O: dO stands for it.
    o_rows = do3 if o3 is None else o3
    scalars = (
        lse,
        delta,
        o_rows,
        sm_scale,
        sm_scale * LOG2E.value,
        q3.shape[1],
        group,
        q3.shape[0],
    )
    if config is None:
        tuner = autotuned_kernel(q3.dtype, head_dim)
        # The configuration's pre_hook sets each descriptor's block shape.
        descs = HOST.make_descriptors(autotune_space(head_dim)[0], operands, HEAD_DIM=head_dim)

        def grid(meta):
            tiles = triton.cdiv(q3.shape[1], meta["BLOCK_M"]) * q3.shape[0]
            return launch_grid(tiles, meta["PERSISTENT"], q3.device)

        tuner[grid](*descs, *scalars, HEAD_DIM=head_dim, CAUSAL=causal)
        return dq, config_of(tuner.best_config)
    tiles = triton.cdiv(q3.shape[1], config.block_m) * q3.shape[0]
    grid = launch_grid(tiles, config.persistent, q3.device)
    HOST.launch(config, grid, operands, scalars, HEAD_DIM=head_dim, CAUSAL=causal)
    return dq, config
