"""What the Hopper GEMM kernel's partitions take, bundled as Gluon aggregates
(``tlx.compat.aggregate``): the tiles a CTA computes (``GemmTiles``), the state every
partition shares (``GemmState``) and the schedule's constexprs (``GemmSchedule``);
tlx_kernels.hopper.gemm_kernel builds and reads them. And the schedule's arithmetic of split
tiles (``last_wave``, ``split_unit``), which the kernel runs and the host calls on ints
(their ``.fn``: tlx_kernels.hopper.gemm sizes split-K's workspace with it)."""

import tlx
from tlx.compat import aggregate
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma


@gluon.constexpr_function
def column_parts(BLOCK_N):
    """The power-of-two column parts of a tile of ``BLOCK_N`` columns (Gluon's buffers and
    tensors have power-of-two shapes): (128, 32) for 160, (128, 64) for 192, else (BLOCK_N,).
    B's stages, the consumers' accumulators and C are built of them; the host calls it
    (``.fn``) on ints. (A 16-column part, 144 columns, ran 25% slower than 192 at 1536 cubed:
    its products of N = 16 read A as often as the 128-column part's for an eighth of the work,
    docs/performance.md.)"""
    return (128, BLOCK_N - 128) if BLOCK_N in (160, 192) else (BLOCK_N,)


@gluon.jit
def last_wave(tiles, ctas):
    """(whole, ragged) of a persistent grid of ``ctas`` CTAs over ``tiles`` tiles: tiles
    [0, whole) make the waves in which every CTA runs a tile whole, the ``ragged`` tiles after
    them a last wave that would leave ``ctas - ragged`` CTAs idle, whose K steps a schedule
    with ``LAST_WAVE_SPLIT`` splits instead. Arithmetic only: the host calls it on ints."""
    ragged = tiles % ctas
    return tiles - ragged, ragged


@gluon.jit
def split_unit(unit, first_tile, tiles, k_steps, SPLITS):
    """(tile, split, slot, k_first, k_count) of work unit ``unit`` of the ``SPLITS`` x
    ``tiles`` units over tiles [first_tile, first_tile + tiles) whose K steps are split:
    split ``unit // tiles`` of the tile of ``slot = unit % tiles`` (so that consecutive units,
    run side by side, take the same K range of different tiles), K steps [k_first, k_first +
    k_count) of ``k_steps``, the splits balanced (split s starts at s * k_steps // SPLITS).
    The tile's partials and arrival counters are those of ``slot`` (split-K's reduction,
    tlx_kernels.hopper.split_reduction). Split-K's CTA is unit program_id of every tile; the
    last-wave schedule's units are those of its ragged tiles (``last_wave``); the fused MLP's
    (tlx_kernels.hopper.fused_mlp_kernel) splits its tiles' hidden chunks so. Arithmetic
    only, of non-negative numbers (Triton's ``//`` truncates, Python's floors): the host
    calls it on ints."""
    slot = unit % tiles
    split = unit // tiles
    k_first = split * k_steps // SPLITS
    k_count = (split + 1) * k_steps // SPLITS - k_first
    return first_tile + slot, split, slot, k_first, k_count


@aggregate
class GemmTiles:
    """The tiles of C a CTA computes, ``first_tile``, ``first_tile + tile_step``, ... before
    ``end_tile``, in the order of ``GROUP_M``-row groups (``_tile_offsets``), of a problem of
    ``M`` x ``N`` outputs, each over ``k_steps`` K steps from step ``k_first``. A kernel of one
    tile a CTA walks none of them: its ``tile_step`` is the constexpr 1. With split-K the CTA
    computes the K steps of one split of its tile, from ``k_first``; without, ``k_first`` is
    the constexpr 0. A persistent CTA of the last-wave schedule then computes the work units
    ``first_tile``, ``first_tile + tile_step``, ... before ``units``: splits of the ``ragged``
    tiles from ``end_tile`` (``split_unit``); other kernels have none (both the constexpr
    0)."""

    M: gl.tensor
    N: gl.tensor
    GROUP_M: gl.tensor
    k_steps: gl.tensor
    first_tile: gl.tensor
    end_tile: gl.tensor
    tile_step: gl.tensor | gl.constexpr
    k_first: gl.tensor | gl.constexpr
    ragged: gl.tensor | gl.constexpr
    units: gl.tensor | gl.constexpr

    @gluon.constexpr_function
    def __init__(
        self, M, N, GROUP_M, k_steps, first_tile, end_tile, tile_step, k_first, ragged, units
    ):  # fmt: skip
        self.M = M
        self.N = N
        self.GROUP_M = GROUP_M
        self.k_steps = k_steps
        self.first_tile = first_tile
        self.end_tile = end_tile
        # A constexpr argument reaches a constexpr function as its Python value.
        self.tile_step = tile_step if isinstance(tile_step, gl.tensor) else gl.constexpr(tile_step)
        self.k_first = k_first if isinstance(k_first, gl.tensor) else gl.constexpr(k_first)
        self.ragged = ragged if isinstance(ragged, gl.tensor) else gl.constexpr(ragged)
        self.units = units if isinstance(units, gl.tensor) else gl.constexpr(units)


@aggregate
class GemmState:
    """What every partition takes: the C descriptor, the A/B ring and the C tile (and a tile
    of two column parts' second part of B's stages and of C: ``b_tail``, ``c_tail``), the ring's
    barriers (``ready``: a stage landed; ``empty``: both consumers released it), ``mma_done``
    (where the consumers meet: C over the ring, or staggered consumers), the CTA's tiles, and
    split-K's fp32 sums (``workspace``) and arrival counters (``counters``), which a
    kernel without split-K does not touch."""

    desc_c: tma.tensor_descriptor
    a_ring: tlx.buffered_tensor
    b_ring: tlx.buffered_tensor
    c_tile: tlx.buffered_tensor
    b_tail: tlx.buffered_tensor | gl.constexpr
    c_tail: tlx.buffered_tensor | gl.constexpr
    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    mma_done: gl.shared_memory_descriptor
    tiles: GemmTiles
    workspace: gl.tensor
    counters: gl.tensor

    @gluon.constexpr_function
    def __init__(
        self, desc_c, a_ring, b_ring, c_tile, b_tail, c_tail, ready, empty, mma_done, tiles,
        workspace, counters,
    ):  # fmt: skip
        self.desc_c = desc_c
        self.a_ring = a_ring
        self.b_ring = b_ring
        self.c_tile = c_tile
        # A tile of two column parts (``column_parts``): the narrower part's B ring and C;
        # else the constexpr None.
        self.b_tail = gl.constexpr(None) if b_tail is None else b_tail
        self.c_tail = gl.constexpr(None) if c_tail is None else c_tail
        self.ready = ready
        self.empty = empty
        self.mma_done = mma_done
        self.tiles = tiles
        self.workspace = workspace
        self.counters = counters


@aggregate
class GemmSchedule:
    """The kernel's schedule, which every partition takes: its constexprs (the ``Config`` of
    tlx_kernels.hopper.gemm says what each does)."""

    ALIAS_C: gl.constexpr
    PERSISTENT: gl.constexpr
    STAGGER: gl.constexpr
    SPLIT_K: gl.constexpr
    LAST_WAVE_SPLIT: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, ALIAS_C, PERSISTENT, STAGGER, SPLIT_K, LAST_WAVE_SPLIT):
        self.ALIAS_C = gl.constexpr(ALIAS_C)
        self.PERSISTENT = gl.constexpr(PERSISTENT)
        self.STAGGER = gl.constexpr(STAGGER)
        self.SPLIT_K = gl.constexpr(SPLIT_K)
        self.LAST_WAVE_SPLIT = gl.constexpr(LAST_WAVE_SPLIT)
