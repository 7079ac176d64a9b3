"""Class 2 of issue 47, parity and arrival count: waits that pass early on a GPU.

A wait by parity passes as soon as the barrier's last completed phase has that parity; a
barrier initialized with a count smaller than its arrivals completes a phase before the last
of them. A check that completed every asynchronous operation at issue, in one order of the
partitions, saw such a wait block for ever (a deadlock) or take the phase it meant; the race
it lets through must be reported at its two accesses, and the report name the barrier whose
wait passes early (docs/hazards.md, "A wait that passes early"). The flag keeps the ordering;
without it:

* ``ring_wrong_parity`` (sm_90a): a loader partition TMA-loads a tile into a one-stage ring
  each round (``ready``), the default partition waits, reads it and releases the stage
  (``empty``). ``RIGHT_PARITY`` waits on ``ready`` for ``round & 1``; without it for the
  other parity, which passes at once on the fresh barrier: the read races the TMA load.
* ``ready_count_too_small`` (sm_90a): two partitions each write half the rows of a tile and
  arrive on ``ready``; the default partition waits and reads the tile. ``RIGHT_COUNT``
  initializes ``ready`` for two arrivals; with one, the phase completes at the first arrival
  and the read races the other half's write (either half: the check executes both orders).
* ``empty_count_too_small`` (sm_90a): a loader TMA-loads a tile, two consumer partitions
  read it and arrive on ``empty``, the loader waits on ``empty`` and loads the next tile
  into the same stage. ``RIGHT_COUNT`` initializes ``empty`` for two arrivals; with one, the
  second load races the slower consumer's read, and the report blames ``empty``, not
  ``ready``.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM90A, TILE, TILE_LAYOUT, _line
from tlx.compat import tma_load
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

ROUNDS = gl.constexpr(2)


@gluon.jit
def _store_tile(out_ptr, values):
    rows = gl.arange(0, values.shape[0], gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, values.shape[1], gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * values.shape[1] + columns[None, :], values)


@gluon.jit
def _load_rounds(desc, tile, ready, empty, ROUNDS: gl.constexpr):
    for round in range(ROUNDS):
        mbarrier.wait(empty.index(0), (round & 1) ^ 1)
        mbarrier.expect(ready.index(0), desc.block_type.nbytes)
        tma_load(desc, [round * desc.block_type.shape[0], 0], ready.index(0), tile.index(0))


@tlx.jit
def ring_wrong_parity(desc, out_ptr, TILE: gl.constexpr, RIGHT_PARITY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, spare))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=1)
    mbarrier.init(empty.index(0), count=1)
    gl.warp_specialize(
        [
            (_read_rounds, (tile, ready, empty, out_ptr, ROUNDS, RIGHT_PARITY)),
            (_load_rounds, (desc, tile, ready, empty, ROUNDS)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _read_rounds(tile, ready, empty, out_ptr, ROUNDS: gl.constexpr, RIGHT_PARITY: gl.constexpr):
    for round in range(ROUNDS):
        parity = round & 1 if RIGHT_PARITY else (round & 1) ^ 1
        mbarrier.wait(ready.index(0), parity)
        values = tile.index(0).load(OUT_REGS)
        mbarrier.arrive(empty.index(0), count=1)
        _store_tile(out_ptr + round * values.numel, values)


@gluon.jit
def _write_top(tile, ready, TILE: gl.constexpr):
    ones = gl.full([TILE // 2, TILE], 1, gl.float16, OUT_REGS)
    tile.index(0).slice(0, TILE // 2).store(ones)
    mbarrier.arrive(ready.index(0), count=1)


@gluon.jit
def _write_bottom(tile, ready, TILE: gl.constexpr):
    twos = gl.full([TILE // 2, TILE], 2, gl.float16, OUT_REGS)
    tile.index(0).slice(TILE // 2, TILE // 2).store(twos)
    mbarrier.arrive(ready.index(0), count=1)


@gluon.jit
def _read_tile(tile, ready, out_ptr):
    mbarrier.wait(ready.index(0), 0)
    _store_tile(out_ptr, tile.index(0).load(OUT_REGS))


@tlx.jit
def ready_count_too_small(out_ptr, TILE: gl.constexpr, RIGHT_COUNT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, spare))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=2 if RIGHT_COUNT else 1)
    gl.warp_specialize(
        [
            (_read_tile, (tile, ready, out_ptr)),
            (_write_top, (tile, ready, TILE)),
            (_write_bottom, (tile, ready, TILE)),
        ],
        [4, 4],
        [96, 96],
    )


@gluon.jit
def _consume(tile, ready, empty, out_ptr, ROUNDS: gl.constexpr):
    for round in range(ROUNDS):
        mbarrier.wait(ready.index(0), round & 1)
        values = tile.index(0).load(OUT_REGS)
        mbarrier.arrive(empty.index(0), count=1)
        _store_tile(out_ptr + round * values.numel, values)


@gluon.jit
def _idle():
    pass


@tlx.jit
def empty_count_too_small(desc, out_ptr, TILE: gl.constexpr, RIGHT_COUNT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, spare))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=1)
    mbarrier.init(empty.index(0), count=2 if RIGHT_COUNT else 1)
    gl.warp_specialize(
        [
            (_idle, ()),
            (_load_rounds, (desc, tile, ready, empty, ROUNDS)),
            (_consume, (tile, ready, empty, out_ptr, ROUNDS)),
            (_consume, (tile, ready, empty, out_ptr, ROUNDS)),
        ],
        [1, 4, 4],
        [24, 96, 96],
    )


def _source(function, flag: str, value: bool, descriptor: bool = True):
    signature = {"out_ptr": "*fp16", "TILE": "constexpr", flag: "constexpr"}
    if descriptor:
        signature = {"desc": f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>", **signature}
    return tlx.ASTSource(fn=function, signature=signature, constexprs={"TILE": TILE, flag: value})


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report), as kernels.seeds()."""
    file_name = __file__.rsplit("/", 1)[-1]
    tma_load_line = (file_name, _line(_load_rounds, "tma_load(desc,"))
    return (
        (
            "a ring's consumer waits on ready with the other parity",
            lambda right: _source(ring_wrong_parity, "RIGHT_PARITY", right),
            SM90A,
            frozenset({tma_load_line, (file_name, _line(_read_rounds, "values = tile.index(0)"))}),
        ),
        (
            "ready counts one arrival of two writers",
            lambda right: _source(ready_count_too_small, "RIGHT_COUNT", right, descriptor=False),
            SM90A,
            frozenset(
                {
                    (file_name, _line(_write_bottom, "tile.index(0).slice(")),
                    (file_name, _line(_read_tile, "_store_tile(out_ptr, tile.index(0)")),
                }
            ),
        ),
        (
            "empty counts one release of two consumers",
            lambda right: _source(empty_count_too_small, "RIGHT_COUNT", right),
            SM90A,
            frozenset({tma_load_line, (file_name, _line(_consume, "values = tile.index(0)"))}),
        ),
    )
