"""What the Hopper attention backward's partitions take, bundled as Gluon aggregates
(``tlx.compat.aggregate``): the state every partition shares (``BackwardState``), the
tile a consumer works on (``BackwardTile``, which the state carries) and the schedule's
constexprs (``BackwardSchedule``), which tlx_kernels.hopper.attention_backward_kernel builds
and its steps (attention_backward_step.py, attention_backward_late_split.py,
attention_backward_turns.py) read; and the same of the dQ pass of its own
(tlx_kernels.hopper.attention_dq: ``DqState``, ``DqTile``)."""

import tlx
from tlx.compat import aggregate
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma

from tlx_kernels.hopper.common import constexpr_unless

# What stands in for a member a configuration does not have.
ABSENT = gl.constexpr(0)


@aggregate
class BackwardTile:
    """The K/V slots' barriers (``kv_ready``: a slot's K and V landed; ``kv_free``: its
    tile's epilogue stored dK and dV from its bytes), batch * KV heads (the tiles' heads),
    and of the tile a partition works on: its first K/V buffer (CONSUMERS a slot), its first
    step (the ring index its steps start from: the steps before are an earlier tile's) and,
    with KEYS_IN_REGISTERS, the consumer's keys and values as the A operands of S^T and
    dP^T, loaded once a tile (else ABSENT)."""

    kv_ready: gl.shared_memory_descriptor
    kv_free: gl.shared_memory_descriptor
    batch_kv_heads: gl.tensor
    first_buffer: gl.tensor | gl.constexpr
    first_step: gl.tensor | gl.constexpr
    KEYS_IN_REGISTERS: gl.constexpr
    keys: gl.tensor | gl.constexpr
    values: gl.tensor | gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self,
        kv_ready,
        kv_free,
        batch_kv_heads,
        first_buffer,
        first_step,
        KEYS_IN_REGISTERS,
        keys,
        values,
    ):
        self.kv_ready = kv_ready
        self.kv_free = kv_free
        self.batch_kv_heads = batch_kv_heads
        self.first_buffer = constexpr_unless(first_buffer, gl.tensor)
        self.first_step = constexpr_unless(first_step, gl.tensor)
        self.KEYS_IN_REGISTERS = gl.constexpr(KEYS_IN_REGISTERS)
        self.keys = constexpr_unless(keys, gl.tensor)
        self.values = constexpr_unless(values, gl.tensor)


@aggregate
class BackwardState:
    """What every partition takes: the SMEM tiles (Q and dO, the ring's stages; K, V and the
    epilogue's dK and dV, CONSUMERS buffers a K/V slot; dS and P), the ``tile`` a partition
    works on (``BackwardTile``), the ring's barriers (``ready``: a stage's Q and dO landed;
    ``empty``: every consumer released it), the rows' LSE and delta, dQ's fp32 accumulator
    (``dq_ptr``), sm_scale and sm_scale * log2(e), the sequence's length, the query heads a
    KV head serves (``group``), the dK and dV descriptors; with the TMA reduce-add passes
    ("tma_add", "split", "alternate") dQ's fp32 staging tiles and the accumulator's
    descriptor, and with "summed", "split" or "alternate" the barriers between the
    consumers' dS (``ds_ready``: written; ``ds_free``: the other consumer has read it); with
    STAGED_STATISTICS each stage's LSE and delta (``statistics_tiles``); ABSENT where a pass
    has none."""

    q_tiles: tlx.buffered_tensor
    do_tiles: tlx.buffered_tensor
    k_tiles: tlx.buffered_tensor
    v_tiles: tlx.buffered_tensor
    ds_tiles: tlx.buffered_tensor
    p_tiles: tlx.buffered_tensor
    dk_tiles: tlx.buffered_tensor
    dv_tiles: tlx.buffered_tensor
    tile: BackwardTile
    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    lse_ptr: gl.tensor
    delta_ptr: gl.tensor
    dq_ptr: gl.tensor
    sm_scale: gl.tensor
    qk_scale: gl.tensor
    seq_len: gl.tensor
    group: gl.tensor
    desc_dk: tma.tensor_descriptor
    desc_dv: tma.tensor_descriptor
    dq_tiles: tlx.buffered_tensor | gl.constexpr
    desc_dq: tma.tensor_descriptor | gl.constexpr
    ds_ready: gl.shared_memory_descriptor | gl.constexpr
    ds_free: gl.shared_memory_descriptor | gl.constexpr
    statistics_tiles: tlx.buffered_tensor | gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self,
        q_tiles,
        do_tiles,
        k_tiles,
        v_tiles,
        ds_tiles,
        p_tiles,
        dk_tiles,
        dv_tiles,
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
        dq_tiles,
        desc_dq,
        ds_ready,
        ds_free,
        statistics_tiles,
    ):
        self.q_tiles = q_tiles
        self.do_tiles = do_tiles
        self.k_tiles = k_tiles
        self.v_tiles = v_tiles
        self.ds_tiles = ds_tiles
        self.p_tiles = p_tiles
        self.dk_tiles = dk_tiles
        self.dv_tiles = dv_tiles
        self.tile = tile
        self.ready = ready
        self.empty = empty
        self.lse_ptr = lse_ptr
        self.delta_ptr = delta_ptr
        self.dq_ptr = dq_ptr
        self.sm_scale = sm_scale
        self.qk_scale = qk_scale
        self.seq_len = seq_len
        self.group = group
        self.desc_dk = desc_dk
        self.desc_dv = desc_dv
        self.dq_tiles = constexpr_unless(dq_tiles, tlx.buffered_tensor)
        self.desc_dq = constexpr_unless(desc_dq, tma.tensor_descriptor)
        self.ds_ready = constexpr_unless(ds_ready, gl.shared_memory_descriptor)
        self.ds_free = constexpr_unless(ds_free, gl.shared_memory_descriptor)
        self.statistics_tiles = constexpr_unless(statistics_tiles, tlx.buffered_tensor)


@gluon.jit
def with_tile(state, tile):
    """``state`` working on ``tile`` (a ``BackwardTile``)."""
    return BackwardState(
        state.q_tiles,
        state.do_tiles,
        state.k_tiles,
        state.v_tiles,
        state.ds_tiles,
        state.p_tiles,
        state.dk_tiles,
        state.dv_tiles,
        tile,
        state.ready,
        state.empty,
        state.lse_ptr,
        state.delta_ptr,
        state.dq_ptr,
        state.sm_scale,
        state.qk_scale,
        state.seq_len,
        state.group,
        state.desc_dk,
        state.desc_dv,
        state.dq_tiles,
        state.desc_dq,
        state.ds_ready,
        state.ds_free,
        state.statistics_tiles,
    )


@gluon.jit
def step_tiles(state):
    """(Q, dO, K, V, dS, P): the tiles a step with S by queries reads."""
    return (
        state.q_tiles,
        state.do_tiles,
        state.k_tiles,
        state.v_tiles,
        state.ds_tiles,
        state.p_tiles,
    )


@aggregate
class BackwardSchedule:
    """The kernel's schedule, which every consumer takes: its constexprs (the ``Config`` of
    tlx_kernels.hopper.attention_backward_config says what each does), and TILE_ORDER, the
    order of the CTAs' tiles: CAUSAL_TILE_ORDER (``Config.causal_tile_order``) under a
    causal mask, else "by_head" (every tile as long: a head's tiles go together, sharing
    its Q and dO in the L2)."""

    CAUSAL: gl.constexpr
    P_IN_SMEM: gl.constexpr
    SCORES_BY_QUERY: gl.constexpr
    DQ_PASS: gl.constexpr
    PIPELINED: gl.constexpr
    TURN_DELAY: gl.constexpr
    PERSISTENT: gl.constexpr
    KEYS_IN_REGISTERS: gl.constexpr
    LATE_DQ: gl.constexpr
    STATISTICS_AHEAD: gl.constexpr
    STAGED_STATISTICS: gl.constexpr
    DK_FROM_REGISTERS: gl.constexpr
    EPILOGUE_OVER_SCORES: gl.constexpr
    TILE_ORDER: gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self,
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
    ):
        self.CAUSAL = gl.constexpr(CAUSAL)
        self.P_IN_SMEM = gl.constexpr(P_IN_SMEM)
        self.SCORES_BY_QUERY = gl.constexpr(SCORES_BY_QUERY)
        self.DQ_PASS = gl.constexpr(DQ_PASS)
        self.PIPELINED = gl.constexpr(PIPELINED)
        self.TURN_DELAY = gl.constexpr(TURN_DELAY)
        self.PERSISTENT = gl.constexpr(PERSISTENT)
        self.KEYS_IN_REGISTERS = gl.constexpr(KEYS_IN_REGISTERS)
        self.LATE_DQ = gl.constexpr(LATE_DQ)
        self.STATISTICS_AHEAD = gl.constexpr(STATISTICS_AHEAD)
        self.STAGED_STATISTICS = gl.constexpr(STAGED_STATISTICS)
        self.DK_FROM_REGISTERS = gl.constexpr(DK_FROM_REGISTERS)
        self.EPILOGUE_OVER_SCORES = gl.constexpr(EPILOGUE_OVER_SCORES)
        self.TILE_ORDER = gl.constexpr(CAUSAL_TILE_ORDER if CAUSAL else "by_head")


@aggregate
class DqTile:
    """The dQ pass's Q slots' barriers (``q_ready``: a slot's Q and dO landed; ``q_free``: its
    tile's epilogue stored dQ from its bytes), batch * heads (the tiles' heads) and the first
    Q buffer of the tile a partition works on (CONSUMERS a slot)."""

    q_ready: gl.shared_memory_descriptor
    q_free: gl.shared_memory_descriptor
    batch_heads: gl.tensor
    first_buffer: gl.tensor | gl.constexpr

    @gluon.constexpr_function
    def __init__(self, q_ready, q_free, batch_heads, first_buffer):
        self.q_ready = q_ready
        self.q_free = q_free
        self.batch_heads = batch_heads
        self.first_buffer = constexpr_unless(first_buffer, gl.tensor)


@aggregate
class DqState:
    """What every partition of the dQ pass (tlx_kernels.hopper.attention_dq) takes: the SMEM
    tiles (Q, dO and the epilogue's dQ, CONSUMERS buffers a Q slot; K and V, the ring's
    stages), the ``tile`` a partition works on (``DqTile``), the ring's barriers (``ready``:
    a stage's K and V landed; ``empty``: every consumer released it), the rows' LSE and
    delta, sm_scale and sm_scale * log2(e), the sequence's length, the query heads a KV head
    serves (``group``), the dQ descriptor and O (read where the pass computes delta)."""

    q_tiles: tlx.buffered_tensor
    do_tiles: tlx.buffered_tensor
    k_tiles: tlx.buffered_tensor
    v_tiles: tlx.buffered_tensor
    dq_tiles: tlx.buffered_tensor
    tile: DqTile
    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    lse_ptr: gl.tensor
    delta_ptr: gl.tensor
    sm_scale: gl.tensor
    qk_scale: gl.tensor
    seq_len: gl.tensor
    group: gl.tensor
    desc_dq: tma.tensor_descriptor
    o_ptr: gl.tensor

    @gluon.constexpr_function
    def __init__(
        self,
        q_tiles,
        do_tiles,
        k_tiles,
        v_tiles,
        dq_tiles,
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
    ):
        self.q_tiles = q_tiles
        self.do_tiles = do_tiles
        self.k_tiles = k_tiles
        self.v_tiles = v_tiles
        self.dq_tiles = dq_tiles
        self.tile = tile
        self.ready = ready
        self.empty = empty
        self.lse_ptr = lse_ptr
        self.delta_ptr = delta_ptr
        self.sm_scale = sm_scale
        self.qk_scale = qk_scale
        self.seq_len = seq_len
        self.group = group
        self.desc_dq = desc_dq
        self.o_ptr = o_ptr


@gluon.jit
def dq_with_tile(state, tile):
    """``state`` (a ``DqState``) working on ``tile`` (a ``DqTile``)."""
    return DqState(
        state.q_tiles,
        state.do_tiles,
        state.k_tiles,
        state.v_tiles,
        state.dq_tiles,
        tile,
        state.ready,
        state.empty,
        state.lse_ptr,
        state.delta_ptr,
        state.sm_scale,
        state.qk_scale,
        state.seq_len,
        state.group,
        state.desc_dq,
        state.o_ptr,
    )
