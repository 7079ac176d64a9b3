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
def split_k_reduce(acc, state, consumer: gl.constexpr, tile, off_m, off_n, SPLIT_K: gl.constexpr):
    """(the whole K's sum for this consumer's rows of the tile, whether this CTA is the last
    of the tile's splits to arrive and so stores C). ``acc`` is this split's partial, rows
    [off_m, off_m + its rows) of the tile whose columns start at ``off_n``; ``state``'s
    workspace holds SPLIT_K x M x N fp32 partials and its counters two per tile (one a
    consumer), zero between launches."""
    tiles = state.tiles
    M = tiles.M
    N = tiles.N
    ROWS: gl.constexpr = acc.shape[0]
    COLUMNS: gl.constexpr = acc.shape[1]
    layout: gl.constexpr = acc.type.layout
    rows = off_m + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    columns = off_n + gl.arange(0, COLUMNS, layout=gl.SliceLayout(0, layout))
    offsets = gl.expand_dims(rows, 1) * N + gl.expand_dims(columns, 0)
    inside = (gl.expand_dims(rows, 1) < M) & (gl.expand_dims(columns, 0) < N)
    matrix = M * N
    gl.store(state.workspace + tiles.split * matrix + offsets, acc, mask=inside)
    cta_barrier()
    counter = state.counters + tile * 2 + consumer
    arrived = gl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLIT_K - 1
    if last:
        for split in gl.static_range(SPLIT_K):
            partial = gl.load(
                state.workspace + split * matrix + offsets,
                mask=inside & (tiles.split != split),
                other=0.0,
                cache_modifier=".cg",
            )
            acc += partial
        gl.store(counter, 0)
    return acc, last
