"""A TMA store whose ``store_wait`` sits in another partition (issue 47, the reports).

``store_then_release`` (sm_90a): the default partition writes ``tile``, TMA-stores it and
arrives on ``stored``; the worker waits on ``stored`` and writes ``tile`` again.
``WAIT_HERE`` puts ``tma.store_wait(0)`` in the default partition before the arrive, which
retires the store; without it the wait is the worker's, which retires only the worker's
stores (none), and the report must name that wait and its partition.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, TILE, TILE_LAYOUT
from tlx.compat import tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma


@gluon.jit
def _store_tile(desc, tile, stored, TILE: gl.constexpr, WAIT_HERE: gl.constexpr):
    tile.index(0).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
    fence_async_shared()
    tma_store(desc, [0, 0], tile.index(0))
    if WAIT_HERE:
        tma.store_wait(0)
    mbarrier.arrive(stored.index(0), count=1)


@gluon.jit
def _rewrite_tile(tile, stored, TILE: gl.constexpr, WAIT_HERE: gl.constexpr):
    mbarrier.wait(stored.index(0), 0)
    if not WAIT_HERE:
        tma.store_wait(0)  # retires this partition's stores only
    tile.index(0).store(gl.full([TILE, TILE], 2, gl.float16, OUT_REGS))


@tlx.jit
def store_then_release(desc, TILE: gl.constexpr, WAIT_HERE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, spare))
    stored = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(stored.index(0), count=1)
    gl.warp_specialize(
        [
            (_store_tile, (desc, tile, stored, TILE, WAIT_HERE)),
            (_rewrite_tile, (tile, stored, TILE, WAIT_HERE)),
        ],
        [4],
        [96],
    )


def source(wait_here: bool):
    descriptor = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"
    return tlx.ASTSource(
        fn=store_then_release,
        signature={"desc": descriptor, "TILE": "constexpr", "WAIT_HERE": "constexpr"},
        constexprs={"TILE": TILE, "WAIT_HERE": wait_here},
    )
