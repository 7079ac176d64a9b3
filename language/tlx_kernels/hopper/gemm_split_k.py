"""Split-K's reduction in the Hopper GEMM kernel (tlx_kernels.hopper.gemm_kernel): the CTAs
of one tile's K splits each write their fp32 partial to a workspace, and the last of them to
arrive adds the others' into its own and stores C. No CTA waits for another: the arrival
order picks the one that reduces, so the kernel cannot deadlock whatever the SMs run.

The order is that of CUTLASS's generic barrier: every thread of a consumer stores its
partial, the consumer's warps meet (``cta_barrier``: a named barrier of the partition), and
one thread's atomic add on the half tile's counter, acquire-release at GPU scope, publishes
them; the one that sees SPLIT_K - 1 arrivals before its own acquires every other split's
partial, reads them through the L2 (``.cg``: an SM's L1 is not coherent with the others'),
and resets the counter for the next launch."""

from tlx.compat import cta_barrier
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def split_k_reduce(acc, state, consumer: gl.constexpr, slot, split, SPLITS: gl.constexpr):
    """(the whole K's sum for this consumer's rows of the tile, whether this CTA is the last
    of the tile's splits to arrive and so stores C). ``acc`` is split ``split``'s partial of
    this consumer's rows of the tile of ``slot`` (``gemm_state.split_unit``); ``state``'s
    workspace holds a tile's SPLITS partials a slot, each BLOCK_M x BLOCK_N fp32 in rows
    (tlx_kernels.hopper.gemm.split_k_partials sizes it), and its counters two a slot (one a
    consumer), zero between launches. Whole tiles need no masks: the TMA fills the rows and
    columns past M and N with zeros, whose products are zeros, and C's store clips them."""
    ROWS: gl.constexpr = acc.shape[0]
    COLUMNS: gl.constexpr = acc.shape[1]
    TILE: gl.constexpr = 2 * ROWS * COLUMNS
    layout: gl.constexpr = acc.type.layout
    rows = consumer * ROWS + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    columns = gl.arange(0, COLUMNS, layout=gl.SliceLayout(0, layout))
    offsets = gl.expand_dims(rows, 1) * COLUMNS + gl.expand_dims(columns, 0)
    partials = state.workspace + slot * (SPLITS * TILE)
    gl.store(partials + split * TILE + offsets, acc)
    cta_barrier()
    counter = state.counters + slot * 2 + consumer
    arrived = gl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLITS - 1
    if last:
        for other in gl.static_range(SPLITS):
            # The predicate is the same for every thread: the loads of its own split are off.
            partial = gl.load(
                partials + other * TILE + offsets,
                mask=gl.full([ROWS, COLUMNS], other, gl.int32, layout) != split,
                other=0.0,
                cache_modifier=".cg",
            )
            acc += partial
        gl.store(counter, 0)
    return acc, last
