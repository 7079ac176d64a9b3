"""What the Hopper attention kernel's partitions take, bundled as Gluon aggregates
(``tlx.compat.aggregate``): the state every partition shares (``AttentionState``), the
schedule's constexprs (``AttentionSchedule``) and a consumer's rows of one tile
(``AttentionTile``). tlx_kernels.hopper.attention_kernel builds and reads them."""

import tlx
from tlx.compat import aggregate
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma


@aggregate
class AttentionState:
    """What every partition of the kernel takes: the O descriptor, the SMEM tiles and their
    barriers, the scale of S in base 2, the problem's size and where the rows' log-sum-exp
    goes (``lse_ptr``; the kernel's ``lse_ptr``, or ``qk_scale`` standing in when it saves
    none: the schedule's SAVE_LSE says which)."""

    desc_o: tma.tensor_descriptor
    q_tiles: tlx.buffered_tensor
    k_tiles: tlx.buffered_tensor
    v_tiles: tlx.buffered_tensor
    o_tiles: tlx.buffered_tensor
    q_ready: gl.shared_memory_descriptor
    q_empty: gl.shared_memory_descriptor
    k_ready: gl.shared_memory_descriptor
    v_ready: gl.shared_memory_descriptor
    kv_empty: gl.shared_memory_descriptor
    qk_scale: gl.tensor
    seq_len: gl.tensor
    batch_heads: gl.tensor
    tile_done: gl.shared_memory_descriptor
    lse_ptr: gl.tensor

    @gluon.constexpr_function
    def __init__(
        self,
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
        tile_done,
        lse_ptr,
    ):
        self.desc_o = desc_o
        self.q_tiles = q_tiles
        self.k_tiles = k_tiles
        self.v_tiles = v_tiles
        self.o_tiles = o_tiles
        self.q_ready = q_ready
        self.q_empty = q_empty
        self.k_ready = k_ready
        self.v_ready = v_ready
        self.kv_empty = kv_empty
        self.qk_scale = qk_scale
        self.seq_len = seq_len
        self.batch_heads = batch_heads
        self.tile_done = tile_done
        self.lse_ptr = lse_ptr


@aggregate
class AttentionSchedule:
    """The kernel's schedule, which every partition takes: its constexprs (the ``Config`` of
    tlx_kernels.hopper.attention says what each does)."""

    CONSUMERS: gl.constexpr
    Q_BUFFERS: gl.constexpr
    CAUSAL: gl.constexpr
    O_OVER_KV: gl.constexpr
    Q_IN_REGISTERS: gl.constexpr
    OVERLAP_O_STORE: gl.constexpr
    STORE_O_DURING_NEXT_S: gl.constexpr
    BALANCE_TAIL: gl.constexpr
    ALIAS_O: gl.constexpr
    SAVE_LSE: gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self,
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
    ):
        self.CONSUMERS = gl.constexpr(CONSUMERS)
        self.Q_BUFFERS = gl.constexpr(Q_BUFFERS)
        self.CAUSAL = gl.constexpr(CAUSAL)
        self.O_OVER_KV = gl.constexpr(O_OVER_KV)
        self.Q_IN_REGISTERS = gl.constexpr(Q_IN_REGISTERS)
        self.OVERLAP_O_STORE = gl.constexpr(OVERLAP_O_STORE)
        self.STORE_O_DURING_NEXT_S = gl.constexpr(STORE_O_DURING_NEXT_S)
        self.BALANCE_TAIL = gl.constexpr(BALANCE_TAIL)
        self.ALIAS_O = gl.constexpr(ALIAS_O)
        self.SAVE_LSE = gl.constexpr(SAVE_LSE)


@aggregate
class AttentionTile:
    """A consumer's rows of one tile: its Q buffer, the ring index of the tile's first K/V
    block, its head and first row, its key blocks (those without a mask, then all), its O
    buffer, the ring index of the tile's last block and the tiles of this CTA before it."""

    q_index: gl.tensor
    first_index: gl.tensor
    off_bh: gl.tensor
    off_m: gl.tensor
    n_unmasked: gl.tensor
    n_blocks: gl.tensor
    o_index: gl.tensor
    tile_last: gl.tensor
    tile_count: gl.tensor

    @gluon.constexpr_function
    def __init__(
        self,
        q_index,
        first_index,
        off_bh,
        off_m,
        n_unmasked,
        n_blocks,
        o_index,
        tile_last,
        tile_count,
    ):
        self.q_index = q_index
        self.first_index = first_index
        self.off_bh = off_bh
        self.off_m = off_m
        self.n_unmasked = n_unmasked
        self.n_blocks = n_blocks
        self.o_index = o_index
        self.tile_last = tile_last
        self.tile_count = tile_count
