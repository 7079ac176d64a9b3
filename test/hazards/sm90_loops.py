"""More sm_90a pairs of test/hazards/sm90_pairs.py's batch, written the other ways users write
loops: a phase carried through the loop and flipped when the stage index wraps, a persistent
``while`` loop over tiles, predicated TMA copies and waits, and a ``warpgroup_mma_wait(n)`` whose
release another partition waits on. Each racy kernel has a clean twin one flag away.

Without its flag:

* ``carried_phase_flipped_early``: the consumer of a 3-stage ring carries its ``ready`` parity
  and flips it when the stage index wraps to 0 (RIGHT_FLIP), or one step early, when it
  reaches the last stage: its wait on the last stage passes on the fresh barrier.
* ``persistent_while_loop``: a loader and a consumer walk the tiles of a persistent CTA with
  ``while`` loops over a 2-stage ring; the loader's ``empty`` wait is predicated off for the
  first round (RIGHT_PRED) or for the first two rounds.
* ``release_after_lax_dot_wait``: the consumer multiplies every stage of a ring and, at the
  end, arrives on ``done`` after ``warpgroup_mma_wait(0)`` (RIGHT_WAIT) or
  ``warpgroup_mma_wait(1)``; the epilogue partition waits on ``done`` and writes ``c``, which
  ``tlx.reuse_group`` lays over the ring.
* ``store_wait_then_release``: an epilogue partition TMA-stores ``c`` and releases it to the
  partition that rewrites it after ``tma.store_wait(0)`` (RIGHT_WAIT) or
  ``tma.store_wait(1)``, with one store in flight.
* ``predicated_refill``: a pipelined loop without partitions refills the stage just read with a
  predicated TMA load (``pred=``); the refill's ``expect`` and load are predicated on the
  product being retired (RIGHT_PRED: by ``warpgroup_mma_wait(0)``; else after
  ``warpgroup_mma_wait(1)``, which leaves it in flight).
* ``double_buffered_reduce_add``: a loop adds tiles into global memory by TMA reduce-adds
  (``compat.tma_atomic_add``, the Hopper attention backward's dQ) from two staging tiles in
  turn; ``tma.store_wait(1)`` before rewriting one retires the reduction that read it
  (RIGHT_WAIT), ``store_wait(2)`` does not.
"""

from __future__ import annotations

import tlx
from kernels import ACC_REGS, OUT_REGS, SM90A, TILE, TILE_LAYOUT, _line
from tlx.compat import tma_atomic_add, tma_load, tma_store
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

STEPS = gl.constexpr(6)
BARRIERS = gl.constexpr(mbarrier.MBarrierLayout())
DESCRIPTOR = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"


@gluon.jit
def _init_barriers(bars):
    COUNT: gl.constexpr = bars.shape[0]
    for i in gl.static_range(COUNT):
        mbarrier.init(bars.index(i), count=1)


@gluon.jit
def _store_out(out_ptr, values):
    rows = gl.arange(0, values.shape[0], gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, values.shape[1], gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * values.shape[1] + columns[None, :], values)


@gluon.jit
def _ring(STAGES: gl.constexpr, TILE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    ring = tlx.local_alloc((TILE, TILE), gl.float16, STAGES, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(ring, spare))
    return ring


@gluon.jit
def _load_ring(desc, ring, ready, empty, STEPS: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(empty.index(stage), ((i // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
        tma_load(desc, [i * desc.block_type.shape[0], 0], ready.index(stage), ring.index(stage))


@gluon.jit
def _read_with_carried_phase(ring, ready, empty, out_ptr, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    phase = 0
    stage = 0
    for i in range(STEPS):
        mbarrier.wait(ready.index(stage), phase)
        values = ring.index(stage).load(OUT_REGS)
        mbarrier.arrive(empty.index(stage), count=1)
        _store_out(out_ptr + i * values.numel, values)
        stage = stage + 1
        if RIGHT:
            if stage == STAGES:
                stage = 0
                phase = phase ^ 1
        else:
            if stage == STAGES - 1:  # one step early
                phase = phase ^ 1
            if stage == STAGES:
                stage = 0


@tlx.jit
def carried_phase_flipped_early(desc, out_ptr, TILE: gl.constexpr, RIGHT_FLIP: gl.constexpr):
    ring = _ring(3, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_read_with_carried_phase, (ring, ready, empty, out_ptr, STEPS, RIGHT_FLIP)),
            (_load_ring, (desc, ring, ready, empty, STEPS)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _load_tiles_while(desc, ring, ready, empty, tiles, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    i = 0
    while i < tiles:
        stage = i % STAGES
        first_rounds = STAGES if RIGHT else 2 * STAGES
        mbarrier.wait(empty.index(stage), ((i // STAGES) & 1) ^ 1, pred=i >= first_rounds)
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
        tma_load(desc, [i * desc.block_type.shape[0], 0], ready.index(stage), ring.index(stage))
        i += 1


@gluon.jit
def _read_tiles_while(ring, ready, empty, out_ptr, tiles):
    STAGES: gl.constexpr = ring.shape[0]
    i = 0
    while i < tiles:
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        values = ring.index(stage).load(OUT_REGS)
        mbarrier.arrive(empty.index(stage), count=1)
        _store_out(out_ptr + i * values.numel, values)
        i += 1


@tlx.jit
def persistent_while_loop(desc, out_ptr, tiles, TILE: gl.constexpr, RIGHT_PRED: gl.constexpr):
    ring = _ring(2, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(empty)
    my_tiles = (tiles - gl.program_id(0) + gl.num_programs(0) - 1) // gl.num_programs(0)
    gl.warp_specialize(
        [
            (_read_tiles_while, (ring, ready, empty, out_ptr, my_tiles)),
            (_load_tiles_while, (desc, ring, ready, empty, my_tiles, RIGHT_PRED)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _multiply_all(ring, ready, empty, done, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    TILE: gl.constexpr = ring.shape[1]
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        acc = warpgroup_mma(ring.index(stage), ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=[acc])
        mbarrier.arrive(empty.index((i + STAGES - 1) % STAGES), count=1, pred=i > 0)
    acc = warpgroup_mma_wait(0 if RIGHT else 1, deps=[acc])
    mbarrier.arrive(done.index(0), count=1)  # the ring is read: c may take its bytes
    acc = warpgroup_mma_wait(0, deps=[acc])


@gluon.jit
def _write_c(c, done, out_ptr, TILE: gl.constexpr):
    mbarrier.wait(done.index(0), 0)
    c.index(0).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
    _store_out(out_ptr, c.index(0).load(OUT_REGS))


@tlx.jit
def release_after_lax_dot_wait(desc, out_ptr, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    ring = tlx.local_alloc((TILE, TILE), gl.float16, 2, reuse=spec, layout=TILE_LAYOUT)
    c = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(c, tlx.reuse_group(ring, group_size=2)))
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(empty)
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    gl.warp_specialize(
        [
            (_multiply_all, (ring, ready, empty, done, 3, RIGHT_WAIT)),  # the last reads stage 0
            (_load_ring, (desc, ring, ready, empty, 3)),
            (_write_c, (c, done, out_ptr, TILE)),
        ],
        [1, 4],
        [24, 96],
    )


@gluon.jit
def _store_and_release(desc, c, free, written, TILE: gl.constexpr, RIGHT: gl.constexpr):
    for t in range(2):
        mbarrier.wait(written.index(0), t & 1)
        fence_async_shared()
        tma_store(desc, [t * TILE, 0], c.index(0))
        tma_store(desc, [(t + 2) * TILE, 0], c.index(1))
        tma.store_wait(0 if RIGHT else 1)  # the store of c[0] is the older one
        mbarrier.arrive(free.index(0), count=1)
    tma.store_wait(0)


@gluon.jit
def _rewrite(c, free, written, TILE: gl.constexpr):
    for t in range(2):
        mbarrier.wait(free.index(0), (t & 1) ^ 1)
        c.index(0).store(gl.full([TILE, TILE], t, gl.float16, OUT_REGS))
        c.index(1).store(gl.full([TILE, TILE], t, gl.float16, OUT_REGS))
        mbarrier.arrive(written.index(0), count=1)


@tlx.jit
def store_wait_then_release(desc, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    c = _ring(2, TILE)
    free = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(free)
    written = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(written)
    gl.warp_specialize(
        [
            (_rewrite, (c, free, written, TILE)),
            (_store_and_release, (desc, c, free, written, TILE, RIGHT_WAIT)),
        ],
        [1],
        [24],
    )


@tlx.jit
def predicated_refill(desc, out_ptr, TILE: gl.constexpr, RIGHT_PRED: gl.constexpr):
    ring = _ring(2, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    for s in gl.static_range(2):
        mbarrier.expect(ready.index(s), desc.block_type.nbytes)
        tma_load(desc, [s * TILE, 0], ready.index(s), ring.index(s))
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    for i in range(STEPS):
        stage = i % 2
        mbarrier.wait(ready.index(stage), (i // 2) & 1)
        acc = warpgroup_mma(ring.index(stage), ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(0 if RIGHT_PRED else 1, deps=[acc])
        refill = i + 2 < STEPS
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes, pred=refill)
        tma_load(desc, [(i + 2) * TILE, 0], ready.index(stage), ring.index(stage), pred=refill)
    acc = warpgroup_mma_wait(0, deps=[acc])
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


@tlx.jit
def double_buffered_reduce_add(desc, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    staging = _ring(2, TILE)
    for t in range(STEPS):
        tile = staging.index(t % 2)
        tma.store_wait(1 if RIGHT_WAIT else 2)  # the reduction of step t - 2 read this tile
        tile.store(gl.full([TILE, TILE], t, gl.float16, OUT_REGS))
        fence_async_shared()
        tma_atomic_add(desc, [t * TILE, 0], tile)
    tma.store_wait(0)


def _source(function, flag: str, value: bool, out=True, tiles=False):
    signature = {"desc": DESCRIPTOR}
    if out:
        signature["out_ptr"] = "*fp16"
    if tiles:
        signature["tiles"] = "i32"
    signature.update({"TILE": "constexpr", flag: "constexpr"})
    return tlx.ASTSource(fn=function, signature=signature, constexprs={"TILE": TILE, flag: value})


# The integer arguments the check executes with (a persistent CTA of one program: 6 tiles).
VALUES = {"tiles": 6}


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report), as kernels.seeds(); ``VALUES`` gives the integer
    arguments."""
    file_name = __file__.rsplit("/", 1)[-1]

    def pair(name, function, flag, places, **source):
        return (
            name,
            lambda value: _source(function, flag, value, **source),
            SM90A,
            frozenset((file_name, _line(where, text)) for where, text in places),
        )

    ring_load = (_load_ring, "tma_load(desc, [i * desc")
    return (
        pair(
            "a carried ready parity flipped one step before the stage index wraps",
            carried_phase_flipped_early,
            "RIGHT_FLIP",
            [ring_load, (_read_with_carried_phase, "values = ring.index(stage).load(")],
        ),
        pair(
            "a while-loop loader whose empty wait is predicated off for two rounds",
            persistent_while_loop,
            "RIGHT_PRED",
            [
                (_load_tiles_while, "tma_load(desc,"),
                (_read_tiles_while, "values = ring.index(stage).load("),
            ],
            tiles=True,
        ),
        pair(
            "a ring released to an aliased c after warpgroup_mma_wait(1)",
            release_after_lax_dot_wait,
            "RIGHT_WAIT",
            [(_multiply_all, "acc = warpgroup_mma(ring"), (_write_c, "c.index(0).store(")],
        ),
        pair(
            "a staging buffer released after tma.store_wait(1) with its store in flight",
            store_wait_then_release,
            "RIGHT_WAIT",
            [
                (_store_and_release, "tma_store(desc, [(t + 2) * TILE"),
                (_rewrite, "c.index(1).store("),
            ],
            out=False,
        ),
        pair(
            "a predicated refill after warpgroup_mma_wait(1) of the stage just read",
            predicated_refill,
            "RIGHT_PRED",
            [
                (predicated_refill, "acc = warpgroup_mma(ring"),
                (predicated_refill, "tma_load(desc, [(i + 2) * TILE"),
            ],
        ),
        pair(
            "a staging tile rewritten after tma.store_wait(2) while its reduce-add reads it",
            double_buffered_reduce_add,
            "RIGHT_WAIT",
            [
                (double_buffered_reduce_add, "tile.store("),
                (double_buffered_reduce_add, "tma_atomic_add(desc,"),
            ],
            out=False,
        ),
    )
