"""What the Hopper fused MLP kernel's partitions take, bundled as Gluon aggregates
(``tlx.compat.aggregate``): the state every partition shares (``MlpState``) and the schedule's
constexprs (``MlpSchedule``). tlx_kernels.hopper.fused_mlp_kernel builds and reads them."""

import tlx
from tlx.compat import aggregate
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma

from tlx_kernels.hopper.common import constexpr_unless


@aggregate
class MlpState:
    """What every partition takes: the Y descriptor; the X/W1 ring and the W2 ring; the
    consumers' H and Y tiles (with BLOCK_M = 64 no H tiles, the constexpr 0, and one Y tile)
    and with BLOCK_M = 64 the fp32 partial Y one consumer hands the other (else the constexpr
    0); each ring's barriers (``ready``: a stage landed; ``empty``: its readers released it;
    one pair serves both rings when they are one); with BLOCK_M = 64 the barriers of the
    epilogue over the rings (``rings_read``: both consumers' products read the rings;
    ``partial_written``: consumer 1's partial is in SMEM; else the constexpr 0); the CTA's
    tile of Y (``off_m``, ``off_n``), its d_model steps, its hidden chunks (``chunks`` of them
    from chunk ``first_chunk``: its split of the tile's hidden dimension) and where its
    partial Y meets the other splits' (tlx_kernels.hopper.split_reduction: the fp32
    ``workspace``, the arrival ``counters`` and the tile's ``slot`` in them), which a kernel of
    one split does not touch (``slot`` and ``first_chunk`` the constexpr 0)."""

    desc_y: tma.tensor_descriptor
    x_ring: tlx.buffered_tensor
    w1_ring: tlx.buffered_tensor
    w2_ring: tlx.buffered_tensor
    h_tiles: tlx.buffered_tensor | gl.constexpr
    y_tiles: tlx.buffered_tensor
    y_partial: tlx.buffered_tensor | gl.constexpr
    ready1: gl.shared_memory_descriptor
    empty1: gl.shared_memory_descriptor
    ready2: gl.shared_memory_descriptor
    empty2: gl.shared_memory_descriptor
    rings_read: gl.shared_memory_descriptor | gl.constexpr
    partial_written: gl.shared_memory_descriptor | gl.constexpr
    off_m: gl.tensor
    off_n: gl.tensor
    k_steps: gl.tensor
    first_chunk: gl.tensor | gl.constexpr
    chunks: gl.tensor
    workspace: gl.tensor
    counters: gl.tensor
    slot: gl.tensor | gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self,
        desc_y,
        x_ring,
        w1_ring,
        w2_ring,
        h_tiles,
        y_tiles,
        y_partial,
        ready1,
        empty1,
        ready2,
        empty2,
        rings_read,
        partial_written,
        off_m,
        off_n,
        k_steps,
        first_chunk,
        chunks,
        workspace,
        counters,
        slot,
    ):
        self.desc_y = desc_y
        self.x_ring = x_ring
        self.w1_ring = w1_ring
        self.w2_ring = w2_ring
        self.h_tiles = constexpr_unless(h_tiles, tlx.buffered_tensor)
        self.y_tiles = y_tiles
        self.y_partial = constexpr_unless(y_partial, tlx.buffered_tensor)
        self.ready1 = ready1
        self.empty1 = empty1
        self.ready2 = ready2
        self.empty2 = empty2
        self.rings_read = constexpr_unless(rings_read, gl.shared_memory_descriptor)
        self.partial_written = constexpr_unless(partial_written, gl.shared_memory_descriptor)
        self.off_m = off_m
        self.off_n = off_n
        self.k_steps = k_steps
        self.first_chunk = constexpr_unless(first_chunk, gl.tensor)
        self.chunks = chunks
        self.workspace = workspace
        self.counters = counters
        self.slot = constexpr_unless(slot, gl.tensor)


@aggregate
class MlpSchedule:
    """The kernel's schedule, which every partition takes: the activation, the d_model step,
    whether both phases' steps take one ring (``SHARED_RING``, ``layout="shared"``) and
    whether the loader drains the ring at each change of phase (``DRAIN``,
    ``layout="phases"``), the CTAs a tile of Y's hidden dimension is split among
    (``HIDDEN_SPLITS``) and whether the consumers take every other hidden chunk of the whole
    tile (``CHUNK_SPLIT``, BLOCK_M = 64) rather than half the rows of every chunk."""

    ACTIVATION: gl.constexpr
    BLOCK_K: gl.constexpr
    SHARED_RING: gl.constexpr
    DRAIN: gl.constexpr
    HIDDEN_SPLITS: gl.constexpr
    CHUNK_SPLIT: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, ACTIVATION, BLOCK_K, SHARED_RING, DRAIN, HIDDEN_SPLITS, CHUNK_SPLIT):
        self.ACTIVATION = gl.constexpr(ACTIVATION)
        self.BLOCK_K = gl.constexpr(BLOCK_K)
        self.SHARED_RING = gl.constexpr(SHARED_RING)
        self.DRAIN = gl.constexpr(DRAIN)
        self.HIDDEN_SPLITS = gl.constexpr(HIDDEN_SPLITS)
        self.CHUNK_SPLIT = gl.constexpr(CHUNK_SPLIT)
