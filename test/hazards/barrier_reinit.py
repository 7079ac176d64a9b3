"""Class 4 of issue 47: mbarriers initialized, invalidated and initialized again.

An init / wait / invalidate loop per tile is correct: each init starts the barrier afresh at
phase 0 (docs/hazards.md, "Barrier init, invalidate and re-init"). The flag keeps the
ordering; without it:

* ``phase_across_reinit`` (sm_90a): each tile initializes ``ready``, TMA-loads ``tile`` and
  waits. ``RESET_PHASE`` waits for phase 0 of each fresh barrier; without it the wait names
  the tile's parity, as if the phases ran on: the second tile's wait for parity 1 passes at
  once on the fresh barrier, and its load of the tile races with the TMA load.
* ``reinit_with_load_in_flight`` (sm_90a): the same loop, over two buffers; ``WAIT`` waits
  for each tile's TMA load before invalidating ``ready``. Without it the first tile's TMA
  load may still complete on the barrier when it is invalidated (and re-initialized).
* ``invalidate_while_partition_waits`` (sm_90a): the default partition arrives on
  ``ready``, then invalidates it; a worker partition waits on it. ``WAIT`` makes the default
  partition wait on ``consumed``, which the worker arrives on after its wait, before it
  invalidates ``ready``.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM90A, TILE, TILE_LAYOUT, _line
from tlx.compat import tma_load
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@tlx.jit
def phase_across_reinit(desc, out_ptr, TILE: gl.constexpr, RESET_PHASE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, spare))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    for t in range(2):
        mbarrier.init(ready.index(0), count=1)
        mbarrier.expect(ready.index(0), desc.block_type.nbytes)
        tma_load(desc, [t * TILE, 0], ready.index(0), tile.index(0))
        if RESET_PHASE:
            mbarrier.wait(ready.index(0), 0)
        else:
            mbarrier.wait(ready.index(0), t & 1)
        values = tile.index(0).load(OUT_REGS)
        gl.store(out_ptr + t * TILE * TILE + rows[:, None] * TILE + columns[None, :], values)
        mbarrier.invalidate(ready.index(0))


@tlx.jit
def reinit_with_load_in_flight(desc, out_ptr, TILE: gl.constexpr, WAIT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tiles = tlx.local_alloc((TILE, TILE), gl.float16, 2, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 2, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tiles, spare))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    for t in range(2):
        mbarrier.init(ready.index(0), count=1)
        mbarrier.expect(ready.index(0), desc.block_type.nbytes)
        tma_load(desc, [t * TILE, 0], ready.index(0), tiles.index(t))
        if WAIT or t == 1:  # the first tile's data is not needed
            mbarrier.wait(ready.index(0), 0)
            values = tiles.index(t).load(OUT_REGS)
            gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)
        mbarrier.invalidate(ready.index(0))


@gluon.jit
def _arrive_then_invalidate(ready, consumed, WAIT: gl.constexpr):
    mbarrier.arrive(ready.index(0), count=1)
    if WAIT:
        mbarrier.wait(consumed.index(0), 0)
    mbarrier.invalidate(ready.index(0))


@gluon.jit
def _wait_ready(ready, consumed):
    mbarrier.wait(ready.index(0), 0)
    mbarrier.arrive(consumed.index(0), count=1)


@tlx.jit
def invalidate_while_partition_waits(WAIT: gl.constexpr):
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    consumed = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=1)
    mbarrier.init(consumed.index(0), count=1)
    gl.warp_specialize(
        [(_arrive_then_invalidate, (ready, consumed, WAIT)), (_wait_ready, (ready, consumed))],
        [1],
        [24],
    )


def _source(function, flag: str, value: bool, tile: bool = True):
    signature = {flag: "constexpr"}
    constexprs = {flag: value}
    if tile:
        descriptor = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"
        signature = {"desc": descriptor, "out_ptr": "*fp16", "TILE": "constexpr", **signature}
        constexprs["TILE"] = TILE
    return tlx.ASTSource(fn=function, signature=signature, constexprs=constexprs)


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report: of a hazard's accesses, or of a barrier race's
    init or invalidate and use), as kernels.seeds()."""
    file_name = __file__.rsplit("/", 1)[-1]
    return (
        (
            "the wait after a re-init names the phase of a barrier never re-initialized",
            lambda reset: _source(phase_across_reinit, "RESET_PHASE", reset),
            SM90A,
            frozenset(
                {
                    (file_name, _line(phase_across_reinit, "tma_load(desc, [t * TILE, 0]")),
                    (file_name, _line(phase_across_reinit, "values = tile.index(0).load(")),
                }
            ),
        ),
        (
            "a barrier invalidated while a TMA load completes on it",
            lambda wait: _source(reinit_with_load_in_flight, "WAIT", wait),
            SM90A,
            frozenset(
                {
                    (file_name, _line(reinit_with_load_in_flight, "tma_load(desc, [t * TILE")),
                    (file_name, _line(reinit_with_load_in_flight, "mbarrier.invalidate(")),
                }
            ),
        ),
        (
            "a barrier invalidated while another partition waits on it",
            lambda wait: _source(invalidate_while_partition_waits, "WAIT", wait, tile=False),
            SM90A,
            frozenset(
                {
                    (file_name, _line(_arrive_then_invalidate, "mbarrier.invalidate(")),
                    (file_name, _line(_wait_ready, "mbarrier.wait(ready.index(0), 0)")),
                }
            ),
        ),
    )
