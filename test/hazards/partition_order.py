"""Class 2 of issue 47, partition order: kernels whose verdict depended on the order in which
the check gave the ``warp_specialize`` partitions their turns.

The check's scheduler runs the partitions in turn, each until it blocks. Where every one is
blocked and several waits could pass early (docs/hazards.md, "A wait that passes early"), it
let the first in its turns pass, and reported only the race that timing lets through: with
the partitions listed in another order, another race. It now executes each choice. In each
kernel a partition writes its tile, arrives on its barrier, waits on another's barrier, reads
that one's tile and arrives again. ``RIGHT_PARITY`` waits for parity 0; with parity 1 each wait
sleeps on the completed phase 0 for ever, and passes early where that phase comes late; the
first to pass arrives again, which lets the wait on its barrier pass on phase 1, in order:

* ``crossed_wrong_parity`` (sm_90a): the default partition and a worker wait on each other;
* ``crossed_wrong_parity_in_workers`` (sm_90a): the same, between two workers, the default
  partition idle;
* ``ring_wrong_parity`` (sm_90a): three partitions in a ring, each waiting on the one before.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM90A, TILE, TILE_LAYOUT, _line
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@gluon.jit
def _hand_over(
    mine, theirs, my_ready, their_ready, out_ptr, TILE: gl.constexpr, PARITY: gl.constexpr
):
    mine.index(0).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
    mbarrier.arrive(my_ready.index(0), count=1)
    mbarrier.wait(their_ready.index(0), PARITY)
    values = theirs.index(0).load(OUT_REGS)
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)
    if PARITY == 1:  # the wrong parity: the arrive that lets the other's wait pass on phase 1
        mbarrier.arrive(my_ready.index(0), count=1)


# The same body under other names, so that each partition's accesses have lines of their own.
@gluon.jit
def _hand_back(
    mine, theirs, my_ready, their_ready, out_ptr, TILE: gl.constexpr, PARITY: gl.constexpr
):
    mine.index(0).store(gl.full([TILE, TILE], 2, gl.float16, OUT_REGS))
    mbarrier.arrive(my_ready.index(0), count=1)
    mbarrier.wait(their_ready.index(0), PARITY)
    values = theirs.index(0).load(OUT_REGS)
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)
    if PARITY == 1:  # the wrong parity: the arrive that lets the other's wait pass on phase 1
        mbarrier.arrive(my_ready.index(0), count=1)


@gluon.jit
def _hand_last(
    mine, theirs, my_ready, their_ready, out_ptr, TILE: gl.constexpr, PARITY: gl.constexpr
):
    mine.index(0).store(gl.full([TILE, TILE], 3, gl.float16, OUT_REGS))
    mbarrier.arrive(my_ready.index(0), count=1)
    mbarrier.wait(their_ready.index(0), PARITY)
    values = theirs.index(0).load(OUT_REGS)
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)
    if PARITY == 1:  # the wrong parity: the arrive that lets the other's wait pass on phase 1
        mbarrier.arrive(my_ready.index(0), count=1)


@gluon.jit
def _idle():
    pass


@tlx.jit
def crossed_wrong_parity(out_ptr, TILE: gl.constexpr, RIGHT_PARITY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    first = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    second = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(
        tlx.reuse_group(first, second, group_type=tlx.reuse_group_type.distinct)
    )
    first_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    second_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(first_ready.index(0), count=1)
    mbarrier.init(second_ready.index(0), count=1)
    parity: gl.constexpr = 0 if RIGHT_PARITY else 1
    # Each partition stores what it read to a tile of out of its own, so that the output
    # depends on the SMEM ordering alone, not on which partition's store lands last.
    out_1 = out_ptr + TILE * TILE
    gl.warp_specialize(
        [
            (_hand_over, (first, second, first_ready, second_ready, out_ptr, TILE, parity)),
            (_hand_back, (second, first, second_ready, first_ready, out_1, TILE, parity)),
        ],
        [4],
        [96],
    )


@tlx.jit
def crossed_wrong_parity_in_workers(out_ptr, TILE: gl.constexpr, RIGHT_PARITY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    first = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    second = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(
        tlx.reuse_group(first, second, group_type=tlx.reuse_group_type.distinct)
    )
    first_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    second_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(first_ready.index(0), count=1)
    mbarrier.init(second_ready.index(0), count=1)
    parity: gl.constexpr = 0 if RIGHT_PARITY else 1
    # Each partition stores what it read to a tile of out of its own, so that the output
    # depends on the SMEM ordering alone, not on which partition's store lands last.
    out_1 = out_ptr + TILE * TILE
    gl.warp_specialize(
        [
            (_idle, ()),
            (_hand_over, (first, second, first_ready, second_ready, out_ptr, TILE, parity)),
            (_hand_back, (second, first, second_ready, first_ready, out_1, TILE, parity)),
        ],
        [4, 4],
        [96, 96],
    )


@tlx.jit
def ring_wrong_parity(out_ptr, TILE: gl.constexpr, RIGHT_PARITY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    first = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    second = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    third = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(
        tlx.reuse_group(first, second, third, group_type=tlx.reuse_group_type.distinct)
    )
    first_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    second_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    third_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(first_ready.index(0), count=1)
    mbarrier.init(second_ready.index(0), count=1)
    mbarrier.init(third_ready.index(0), count=1)
    parity: gl.constexpr = 0 if RIGHT_PARITY else 1
    # Each partition stores what it read to a tile of out of its own, so that the output
    # depends on the SMEM ordering alone, not on which partition's store lands last.
    out_1 = out_ptr + TILE * TILE
    out_2 = out_ptr + 2 * TILE * TILE
    gl.warp_specialize(
        [
            (_hand_over, (first, third, first_ready, third_ready, out_ptr, TILE, parity)),
            (_hand_back, (second, first, second_ready, first_ready, out_1, TILE, parity)),
            (_hand_last, (third, second, third_ready, second_ready, out_2, TILE, parity)),
        ],
        [4, 4],
        [96, 96],
    )


def _source(function, flag: str, value: bool):
    return tlx.ASTSource(
        fn=function,
        signature={"out_ptr": "*fp16", "TILE": "constexpr", flag: "constexpr"},
        constexprs={"TILE": TILE, flag: value},
    )


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report), as kernels.seeds(). Each race is the one the
    scheduler found only when the listed partitions took their turns in another order."""
    file_name = __file__.rsplit("/", 1)[-1]

    def race(writer, reader):
        return frozenset(
            {
                (file_name, _line(writer, "mine.index(0).store(")),
                (file_name, _line(reader, "values = theirs.index(0).load(")),
            }
        )

    return (
        (
            "two partitions wait on each other with the wrong parity",
            lambda right: _source(crossed_wrong_parity, "RIGHT_PARITY", right),
            SM90A,
            race(_hand_over, _hand_back),
        ),
        (
            "two worker partitions wait on each other with the wrong parity",
            lambda right: _source(crossed_wrong_parity_in_workers, "RIGHT_PARITY", right),
            SM90A,
            race(_hand_over, _hand_back),
        ),
        (
            "three partitions in a ring wait with the wrong parity",
            lambda right: _source(ring_wrong_parity, "RIGHT_PARITY", right),
            SM90A,
            race(_hand_back, _hand_last),
        ),
    )
