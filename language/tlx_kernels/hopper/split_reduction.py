"""The reduction of a tile's splits, which the Hopper GEMM (tlx_kernels.hopper.gemm_kernel:
split-K's and the last-wave schedule's splits of K) and the fused MLP
(tlx_kernels.hopper.fused_mlp_kernel: splits of the hidden dimension) share: the CTAs of one
tile's splits each add their fp32 partial into the tile's sum in a workspace, and the last of
them to arrive reads the sum and stores the tile. No CTA waits for another: the arrival order
picks the one that stores, so the kernel cannot deadlock whatever the SMs run. On the host:
the workspace and counters a launch needs (``split_buffers``) and the split counts the tuners
time (``splits_to_try``, ``last_wave_splits_to_try``).

The adds are the L2's (``red.global.add.v2.f32``, ``common.red_add_pairs``): a split sends its
partial once and reads nothing, and the last reads one tile, where a partial a split in a slot
of its own had the last read all the others' (S - 1 tiles through one SM: at 128 x 1024 x
4096, eight splits of 128 x 64 tiles spent 1.2 us a partial, H200). The price is the order of
the fp32 adds, which the arrivals decide: a tile's sum may differ in its last bits from launch
to launch. The order of the arrival is that of CUTLASS's generic barrier: every thread of a
consumer sends its adds, the consumer's warps meet (``cta_barrier``: a named barrier of the
partition), and one thread's atomic add on the half tile's counter, acquire-release at GPU
scope, publishes them; the one that sees SPLITS - 1 arrivals before its own acquires every
other split's adds, takes the sum from the L2 and leaves it zero for the next launch in one
atomic exchange a pair of values (``common.take_pairs``; an SM's L1 is not coherent with the
others', so a plain load would not do), and zeroes the counter. A load of the sum and a store
of zeros cost a last-wave unit of 128 x 128 tiles at 1536 cubed 5-6 us more than the exchange
(30.5 against 24.8 us a launch, H200)."""

import torch
import triton
from tlx.compat import cta_barrier
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.runtime import driver

from tlx_kernels.hopper.common import red_add_pairs, take_pairs


@gluon.jit
def split_reduce(
    acc,
    workspace,
    counters,
    consumer: gl.constexpr,
    slot,
    SPLITS: gl.constexpr,
    SHARED_TILE: gl.constexpr = False,
    PARTIALS: gl.constexpr = 2,
):  # fmt: skip
    """(the sum of every split's partial for this consumer's part of the tile, whether this
    CTA's consumer is the last of the part's partials to arrive and so stores it). ``acc`` is
    this split's partial of the part of the tile of ``slot``: its consumer's half of the rows,
    or with SHARED_TILE the whole tile, of which each of the split's PARTIALS warpgroups holds
    a partial (two consumers: tlx_kernels.hopper.fused_mlp_kernel's 64-row tiles; one: the
    GEMM's pipelined kernel, tlx_kernels.hopper.gemm_kernel). ``workspace`` holds a tile's fp32 sum
    a slot (``tile_sums`` sizes it) and ``counters`` two a slot (one a part), both zero
    between launches. Whole tiles need no masks: the TMA fills the rows and columns past the
    operands' with zeros, whose products are zeros, and the tile's store clips them."""
    ROWS: gl.constexpr = acc.shape[0]
    COLUMNS: gl.constexpr = acc.shape[1]
    if SHARED_TILE:
        TILE: gl.constexpr = ROWS * COLUMNS
        PART: gl.constexpr = 0
        ARRIVALS: gl.constexpr = PARTIALS * SPLITS
    else:
        TILE: gl.constexpr = 2 * ROWS * COLUMNS
        PART: gl.constexpr = consumer
        ARRIVALS: gl.constexpr = SPLITS
    layout: gl.constexpr = acc.type.layout
    rows = PART * ROWS + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    columns = gl.arange(0, COLUMNS, layout=gl.SliceLayout(0, layout))
    offsets = gl.expand_dims(rows, 1) * COLUMNS + gl.expand_dims(columns, 0)
    sums = workspace + slot * TILE + offsets
    everywhere = gl.full([ROWS, COLUMNS], 1, gl.int1, layout)
    red_add_pairs(sums, acc, everywhere)
    cta_barrier()
    counter = counters + slot * 2 + PART
    arrived = gl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    last = arrived == ARRIVALS - 1
    if last:
        # Each thread takes the elements it added to (the same layout), now the sum, and
        # leaves them zero for the next launch.
        acc = take_pairs(sums)
        gl.store(counter, 0)
    return acc, last


# Host ----------------------------------------------------------------------------------------

# Each stream's buffers, by (device, stream handle): (fp32 sums, int32 arrival counters),
# grown as launches need; the kernels leave both zero. Launches on one stream, the GEMM's and
# the fused MLP's, run one after another and share them; launches on two streams may run at
# once, and would race on one workspace, so each stream has its own.
_stream_buffers = {}

# Splits are tried where a wave of the tiles alone would keep fewer of the SMs busy, and kept
# for a tile where their waves keep at least as many: the most of each tile's splits.
SPLIT_BELOW_OCCUPANCY = 0.9
SPLITS_KEPT = 2


def tile_sums(tiles, splits, block_m, block_n):
    """The fp32 sums ``splits`` splits of each of ``tiles`` BLOCK_M x BLOCK_N tiles add into
    (``split_reduce``'s workspace: a whole tile's for each tile), none unsplit."""
    return tiles * block_m * block_n if splits > 1 else 0


def sums_addressable(sums):
    """Whether ``sums`` fp32 sums lie within the 32-bit offsets ``split_reduce`` computes."""
    return sums < 2**31


def current_stream(device):
    """The handle of the stream a launch on ``device`` goes to now, torch's current stream
    there (Triton's driver reads it as Triton's launches do, cheaply), or None off CUDA, where
    the CPU tests size the buffers. The kernels' direct launches are kept a stream, with
    their buffers (gemm.py, fused_mlp.py)."""
    if device.type != "cuda":
        return None
    return driver.active.get_current_stream(device.index)


def _stream_key(device):
    """The key of the buffers of a launch on ``device`` now."""
    return device, current_stream(device)


def stream_buffers(device):
    """(workspace, counters) of the current stream of ``device``, as the split launches on it
    left them (zero), or None where none has needed them."""
    return _stream_buffers.get(_stream_key(device))


def forget_stream_buffers(device):
    """Drops the buffers of the current stream of ``device``: the next split launch there
    allocates them anew, to its own size."""
    _stream_buffers.pop(_stream_key(device), None)


def split_buffers(device, launches):
    """(workspace, counters) for ``launches``, each (tiles, splits, BLOCK_M, BLOCK_N): the fp32
    sums of the one that needs most (``tile_sums``) and two counters a split tile (one a
    consumer) for the one of most split tiles, the buffers of the current stream of
    ``device`` grown to them, zero (the kernels leave them so). Refuses sums the kernels'
    32-bit offsets cannot address."""
    launches = [launch for launch in launches if launch[1] > 1]
    sums = max((tile_sums(*launch) for launch in launches), default=0)
    counts = max((2 * tiles for tiles, *_ in launches), default=0)
    if not sums_addressable(sums):
        raise ValueError(
            f"the split tiles need {sums} fp32 sums, more than 32-bit offsets address: take a "
            "configuration without splits"
        )
    key = _stream_key(device)
    workspace, counters = _stream_buffers.get(key, (None, None))
    if workspace is None or workspace.numel() < sums:
        workspace = torch.zeros(max(sums, 1), device=device, dtype=torch.float32)
    if counters is None or counters.numel() < counts:
        counters = torch.zeros(max(counts, 1), device=device, dtype=torch.int32)
    _stream_buffers[key] = (workspace, counters)
    return workspace, counters


def wave_occupancy(ctas, sms):
    """The share of the SMs' time busy over the waves of ``ctas`` equal CTAs."""
    return ctas / (triton.cdiv(ctas, sms) * sms)


def leaves_sms_idle(tiles, sms):
    """Whether a wave of ``tiles`` CTAs, one a tile, would keep fewer than 90% of ``sms``
    busy: where splitting the tiles is worth a try."""
    return tiles < sms and wave_occupancy(tiles, sms) < SPLIT_BELOW_OCCUPANCY


def _fullest(tiles, sms, splits):
    """The ``SPLITS_KEPT`` of ``splits`` whose ``tiles`` x split CTAs keep the most SMs busy
    (the fewest splits first among equals)."""
    ranked = sorted((-wave_occupancy(tiles * split, sms), split) for split in splits)
    return [split for _, split in ranked[:SPLITS_KEPT]]


def splits_to_try(tiles, sms, splits):
    """Of ``splits`` (the split counts the shape allows a tile), those the tuner times for
    ``tiles`` tiles each split among as many CTAs, on ``sms`` SMs (split-K, the fused MLP's
    hidden splits): none where a wave of the tiles alone keeps 90% of the SMs busy
    (``leaves_sms_idle``), else of those whose waves keep at least 90% busy the
    ``SPLITS_KEPT`` that keep the most."""
    if not leaves_sms_idle(tiles, sms):
        return []
    filling = [
        split for split in splits if wave_occupancy(tiles * split, sms) >= SPLIT_BELOW_OCCUPANCY
    ]
    return _fullest(tiles, sms, filling)


def last_wave_splits_to_try(ragged, sms, splits):
    """Of ``splits``, those the tuner times for a last wave of ``ragged`` tiles whose units
    the CTAs share (the GEMM's last-wave schedule): none where the last wave keeps 90% of the
    SMs busy or is empty, else of those whose units keep more SMs busy than the ragged tiles
    alone the ``SPLITS_KEPT`` that keep the most."""
    if not 0 < ragged < SPLIT_BELOW_OCCUPANCY * sms:
        return []
    better = [
        split
        for split in splits
        if wave_occupancy(ragged * split, sms) > wave_occupancy(ragged, sms)
    ]
    return _fullest(ragged, sms, better)
