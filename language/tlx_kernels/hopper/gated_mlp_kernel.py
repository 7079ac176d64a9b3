"""The Hopper gated (SwiGLU) kernel (sm_90a), H = silu(X @ W_gate) * (X @ W_up): one TMA load
of an X tile feeds two warpgroup_mma products, the gate's and the up projection's, into two
accumulators; the activation and the product are the epilogue, whose staging tile lies over
the ring once it is dead (one tile a CTA) or beside it (persistent). Warp-specialized as the
GEMM (tlx_kernels.hopper.gemm_kernel): a loader warp, two consumer warpgroups. Its design:
tutorials/hopper_fused_mlp.py, "The gated form"."""

import tlx
from tlx.compat import aggregate, cta_barrier, tma_load, tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
)

from tlx_kernels.hopper.common import (
    LOADER_REGISTERS,
    accumulator_layout,
    partition_registers,
    ring_barriers,
    ring_matmul_pair,
)
from tlx_kernels.hopper.gemm_kernel import _tile_offsets
from tlx_kernels.hopper.gemm_state import GemmTiles

# A worker consumer thread's registers: two consumers, one CTA an SM
# (tlx_kernels.hopper.common.partition_registers). Two 64 x 128 fp32 accumulators take 128.
CONSUMER_REGISTERS = gl.constexpr(partition_registers(2)[1])

# silu(g) = g * sigmoid(g) = g / (1 + 2^(-g log2(e))).
_MINUS_LOG2_E = gl.constexpr(-1.4426950408889634)


@aggregate
class GatedState:
    """What every partition takes: the H descriptor; the ring of X, W_gate and W_up stages
    (one X tile and the two weight tiles of a d_model step a stage); the H staging tile; the
    ring's barriers (``ready``: a stage landed; ``empty``: both consumers released it);
    ``mma_done``, where the consumers meet before either writes H over the ring; the CTA's
    tiles of H (a ``GemmTiles``: M is the tokens, N the hidden units, K d_model)."""

    desc_h: tma.tensor_descriptor
    x_ring: tlx.buffered_tensor
    wg_ring: tlx.buffered_tensor
    wu_ring: tlx.buffered_tensor
    h_tile: tlx.buffered_tensor
    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    mma_done: gl.shared_memory_descriptor
    tiles: GemmTiles

    @gluon.constexpr_function
    def __init__(self, desc_h, x_ring, wg_ring, wu_ring, h_tile, ready, empty, mma_done, tiles):
        self.desc_h = desc_h
        self.x_ring = x_ring
        self.wg_ring = wg_ring
        self.wu_ring = wu_ring
        self.h_tile = h_tile
        self.ready = ready
        self.empty = empty
        self.mma_done = mma_done
        self.tiles = tiles


@gluon.jit
def _load_tile(state, desc_x, desc_wg, desc_wu, off_m, off_n, first_index):
    """The loader's work for one tile of H: per d_model step, the X tile and the W_gate and
    W_up tiles into the ring's stage of index ``first_index + k`` (mod its depth) once both
    consumers have released that stage's previous contents. The X tile is loaded once for
    both products."""
    x_ring = state.x_ring
    ready = state.ready
    NUM_STAGES: gl.constexpr = x_ring.shape[0]
    BLOCK_K: gl.constexpr = x_ring.shape[2]
    step_bytes: gl.constexpr = (
        desc_x.block_type.nbytes + desc_wg.block_type.nbytes + desc_wu.block_type.nbytes
    )
    for k in range(state.tiles.k_steps):
        index = first_index + k
        stage = index % NUM_STAGES
        # Phase ^ 1: the first pass over the ring finds every stage free.
        mbarrier.wait(state.empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(stage), step_bytes)
        tma_load(desc_x, [off_m, k * BLOCK_K], ready.index(stage), x_ring.index(stage))
        tma_load(desc_wg, [k * BLOCK_K, off_n], ready.index(stage), state.wg_ring.index(stage))
        tma_load(desc_wu, [k * BLOCK_K, off_n], ready.index(stage), state.wu_ring.index(stage))


@gluon.jit
def _load_partition(state, desc_x, desc_wg, desc_wu):
    """The loader warp: each of the CTA's tiles (``state.tiles``) in turn, the ring running on
    from one tile to the next."""
    tiles = state.tiles
    BLOCK_M: gl.constexpr = state.h_tile.shape[1]
    BLOCK_N: gl.constexpr = state.h_tile.shape[2]
    step = 0
    for tile in range(tiles.first_tile, tiles.end_tile, tiles.tile_step):
        off_m, off_n = _tile_offsets(tile, tiles.M, tiles.N, tiles.GROUP_M, BLOCK_M, BLOCK_N)
        _load_tile(state, desc_x, desc_wg, desc_wu, off_m, off_n, step)
        step += tiles.k_steps


@gluon.jit
def _mma_tile(state, consumer: gl.constexpr, off_m, off_n, first_index, PERSISTENT: gl.constexpr):
    """One consumer's rows of one tile of H: the two products over the ring, then its half of
    the epilogue, silu(gate) * up in fp32, rounded once to H's dtype and stored by TMA."""
    h_tile = state.h_tile
    SUB_M: gl.constexpr = h_tile.shape[1] // 2
    BLOCK_N: gl.constexpr = h_tile.shape[2]
    acc_layout: gl.constexpr = accumulator_layout(BLOCK_N, gl.num_warps())
    acc_g = gl.zeros([SUB_M, BLOCK_N], gl.float32, acc_layout)
    acc_u = gl.zeros([SUB_M, BLOCK_N], gl.float32, acc_layout)
    acc_g, acc_u = ring_matmul_pair(
        state.x_ring, state.wg_ring, state.wu_ring, state.ready, state.empty, acc_g, acc_u,
        first_index, state.tiles.k_steps, consumer * SUB_M,
    )  # fmt: skip
    h = acc_g / (1.0 + gl.exp2(_MINUS_LOG2_E * acc_g)) * acc_u
    if not PERSISTENT:
        # H lies over the ring: meet the other consumer at mma_done (one arrival per
        # consumer, made once all four warps of this one are past their last wait), so that
        # no stage either still reads is written, whichever of the ring's bytes the planner
        # gives H (with X first in the ring's group, each half lies over its own consumer's
        # rows of X stages, which the tree does not promise). Every stage the loader filled
        # was waited for by both consumers: no TMA load is in flight either.
        cta_barrier()
        mbarrier.arrive(state.mma_done)
        mbarrier.wait(state.mma_done, 0)
    h_half = h_tile.index(0).slice(consumer * SUB_M, SUB_M)
    # The previous tile's store (persistent) has read this half of the staging tile.
    tma.store_wait(0)
    h_half.store(h.to(h_half.dtype))
    fence_async_shared()
    tma_store(state.desc_h, [off_m + consumer * SUB_M, off_n], h_half)


@gluon.jit
def _mma_partition(state, consumer: gl.constexpr, PERSISTENT: gl.constexpr):
    """Rows [consumer * BLOCK_M / 2, (consumer + 1) * BLOCK_M / 2) of each of the CTA's tiles
    of H, one warpgroup."""
    tiles = state.tiles
    BLOCK_M: gl.constexpr = state.h_tile.shape[1]
    BLOCK_N: gl.constexpr = state.h_tile.shape[2]
    step = 0
    for tile in range(tiles.first_tile, tiles.end_tile, tiles.tile_step):
        off_m, off_n = _tile_offsets(tile, tiles.M, tiles.N, tiles.GROUP_M, BLOCK_M, BLOCK_N)
        _mma_tile(state, consumer, off_m, off_n, step, PERSISTENT)
        step += tiles.k_steps
    tma.store_wait(0)


@gluon.jit
def _smem_buffers(
    descriptors,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    PERSISTENT: gl.constexpr,
):
    """The ring and the H staging tile in one region planned by tlx. The layouts are the
    descriptors' (128-byte swizzle), which the TMA and warpgroup_mma both read."""
    desc_x, desc_wg, desc_wu, desc_h = descriptors
    dtype: gl.constexpr = desc_x.dtype
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x_ring = tlx.local_alloc(
        (BLOCK_M, BLOCK_K), dtype, NUM_STAGES, reuse=smem, layout=desc_x.layout
    )
    wg_ring = tlx.local_alloc(
        (BLOCK_K, BLOCK_N), dtype, NUM_STAGES, reuse=smem, layout=desc_wg.layout
    )
    wu_ring = tlx.local_alloc(
        (BLOCK_K, BLOCK_N), dtype, NUM_STAGES, reuse=smem, layout=desc_wu.layout
    )
    h_tile = tlx.local_alloc((BLOCK_M, BLOCK_N), dtype, 1, reuse=smem, layout=desc_h.layout)
    # The ring is one buffer group (x0 .. x3 wg0 .. wg3 wu0 .. wu3); the X tile, the largest
    # of a stage, first, so that each buffer starts at a multiple of its size unpadded.
    stage = tlx.reuse_group(x_ring, wg_ring, wu_ring, group_type=tlx.reuse_group_type.distinct)
    ring = tlx.reuse_group(stage, group_size=NUM_STAGES)
    if PERSISTENT:
        # The loader fills the ring with the next tile's steps while the consumers store this
        # one's H: the staging tile is beside the ring.
        smem.set_buffer_overlap(
            tlx.reuse_group(h_tile, ring, group_type=tlx.reuse_group_type.distinct)
        )
    else:
        # One tile a CTA: the ring is dead once both consumers' products completed, and H,
        # born then, takes its first bytes.
        smem.set_buffer_overlap(
            tlx.reuse_group(h_tile, ring, group_type=tlx.reuse_group_type.shared)
        )
    return x_ring, wg_ring, wu_ring, h_tile


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
# GROUP_M only orders the tiles.
@tlx.jit(do_not_specialize=["tokens", "d_model", "hidden", "GROUP_M"])
def gated_mlp_kernel(
    desc_x,
    desc_wg,
    desc_wu,
    desc_h,
    tokens,
    d_model,
    hidden,
    GROUP_M,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    PERSISTENT: gl.constexpr,
):
    # A consumer releases a stage once its next step's products are issued: one stage would
    # wait for itself.
    gl.static_assert(NUM_STAGES >= 2, "the ring needs at least two stages")
    tile_count = gl.cdiv(tokens, BLOCK_M) * gl.cdiv(hidden, BLOCK_N)
    k_steps = gl.cdiv(d_model, BLOCK_K)
    first_tile = gl.program_id(0)
    if PERSISTENT:
        tiles = GemmTiles(
            tokens, hidden, GROUP_M, k_steps, first_tile, tile_count, gl.num_programs(0), 0, 0, 0
        )
    else:
        tiles = GemmTiles(tokens, hidden, GROUP_M, k_steps, first_tile, first_tile + 1, 1, 0, 0, 0)

    x_ring, wg_ring, wu_ring, h_tile = _smem_buffers(
        (desc_x, desc_wg, desc_wu, desc_h), BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, PERSISTENT
    )
    ready, empty = ring_barriers(NUM_STAGES, 2)
    mma_done = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(mma_done.index(0), count=2)
    fence_async_shared()

    state = GatedState(
        desc_h, x_ring, wg_ring, wu_ring, h_tile, ready, empty, mma_done.index(0), tiles
    )
    gl.warp_specialize(
        [
            (_mma_partition, (state, 0, PERSISTENT)),
            (_mma_partition, (state, 1, PERSISTENT)),
            (_load_partition, (state, desc_x, desc_wg, desc_wu)),
        ],
        [4, 1],
        [CONSUMER_REGISTERS, LOADER_REGISTERS],
    )
