"""A batch of small sm_90a kernels as a demanding user writes them, each racy kernel with a clean
twin one flag away (the flag keeps the ordering), for issue 47's "set of racy kernels and clean
twins kept from the project": TMA loads and stores with mbarriers and expect-tx, ``warpgroup_mma``
with ``warpgroup_mma_wait(n)``, ``warp_specialize`` rings of 2-4 stages, proxy fences, TMA store
waits with n > 0, loads and stores across partitions, and aliasing trees (reuse_group,
reuse_phases) whose buffers' lifetimes overlap. Several twins use unusual but correct orderings
(a fence in the reading partition, a wait that retires all but the newest product, a relay
through a third partition, one barrier for two loads), which the check must not flag.

Without its flag:

* ``register_tile_to_tma_store``: two tiles written from registers, then TMA-stored, no
  ``fence_async_shared`` between (FENCE).
* ``fence_in_the_reader``: a partition writes a tile and arrives; the reader waits and
  TMA-stores it. FENCE puts the proxy fence in the reader, after its wait: PTX asks for a
  proxy fence on the causality path from the write to the TMA store, either side of the
  barrier. Without it there is none.
* ``register_operand_to_wgmma``: an operand written from registers, then read by
  ``warpgroup_mma``, no fence (FENCE).
* ``ring_consumer_phase_off_by_one``: a 3-stage TMA ring; the consumer's ``ready`` parity is
  computed from the next step (RIGHT_PHASE): its third wait passes on the fresh barrier.
* ``ring_producer_phase_off_by_one``: the loader skips the ``empty`` wait of the first round
  and waits for round r's release rather than round r - 1's (RIGHT_PHASE): its wait passes
  while the consumer still reads the stage.
* ``refill_after_lax_dot_wait``: a pipelined loop without partitions refills the stage it just
  issued a product on after ``warpgroup_mma_wait(1)`` (RETIRE_ALL: ``warpgroup_mma_wait(0)``).
* ``refill_previous_stage``: 3 stages, the refill goes to the stage of the product before;
  ``warpgroup_mma_wait(1)`` retires it (RIGHT_WAIT), ``warpgroup_mma_wait(2)`` does not.
* ``double_buffered_epilogue``: two staging tiles TMA-stored in turn; ``tma.store_wait(1)``
  before rewriting one retires its last store (RIGHT_WAIT), ``store_wait(2)`` does not.
* ``release_before_last_read``: the consumer releases the stage between its two reads of it
  (RIGHT_RELEASE: after both).
* ``release_while_wgmma_reads``: the consumer releases the stage before ``warpgroup_mma_wait``
  retires the product that reads it (RIGHT_RELEASE: after).
* ``one_barrier_phase_zero_every_iteration``: one ``ready`` barrier per iteration's TMA load,
  waited with parity 0 each time (RIGHT_PHASE: the iteration's parity).
* ``three_waits_per_iteration``: one barrier, three loads and waits an iteration; the parity
  restarts at 0 each iteration (RIGHT_PHASE: counted across iterations).
* ``relay_through_a_third_partition``: a writer, a relay and a reader; the relay passes the
  baton on before it has it (RIGHT_RELAY).
* ``mailbox_arrive_before_store``: a 2-slot mailbox between partitions; the writer announces
  a slot before storing it (RIGHT_ORDER).
* ``tma_store_then_reload``: a tile TMA-stored, then TMA-loaded again with no
  ``tma.store_wait(0)`` between (RIGHT_WAIT).
* ``aliased_tree_lifetimes``: ``x`` shares its bytes with ``w_top`` and ``w_bottom``
  (distinct); two products read x's halves, ``warpgroup_mma_wait(1)`` retires the first
  before ``w_top`` is loaded; RIGHT_WAIT retires the second before ``w_bottom`` is.
* ``phases_across_partitions``: ``tlx.reuse_phases`` lays ``y`` over ``x``; one partition
  reads x, another loads y; RIGHT_WAIT makes the second wait for the first's release.
* ``two_loads_one_expect``: two TMA loads on one barrier; RIGHT_BYTES expects both tiles'
  bytes, else one tile's.
"""

from __future__ import annotations

import tlx
from kernels import ACC_REGS, OUT_REGS, SM90A, TILE, TILE_LAYOUT, _line
from tlx.compat import cta_barrier, tma_load, tma_store
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
DESCRIPTOR = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"


@gluon.jit
def _store_out(out_ptr, values):
    rows = gl.arange(0, values.shape[0], gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, values.shape[1], gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * values.shape[1] + columns[None, :], values)


BARRIERS = gl.constexpr(mbarrier.MBarrierLayout())


@gluon.jit
def _init_barriers(bars):
    """Initializes each mbarrier of ``bars`` for one arrival."""
    COUNT: gl.constexpr = bars.shape[0]
    for i in gl.static_range(COUNT):
        mbarrier.init(bars.index(i), count=1)


@gluon.jit
def _tiles(NUM: gl.constexpr, TILE: gl.constexpr):
    """``NUM`` tiles and a spare of one spec, sharing the bytes of the first."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tiles = tlx.local_alloc((TILE, TILE), gl.float16, NUM, reuse=spec, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tiles, spare))
    return tiles


# --- proxy fences --------------------------------------------------------------------------


@tlx.jit
def register_tile_to_tma_store(desc, TILE: gl.constexpr, FENCE: gl.constexpr):
    tiles = _tiles(2, TILE)
    for t in gl.static_range(2):
        tiles.index(t).store(gl.full([TILE, TILE], t + 1, gl.float16, OUT_REGS))
    cta_barrier()
    if FENCE:
        fence_async_shared()
    for t in gl.static_range(2):
        tma_store(desc, [t * TILE, 0], tiles.index(t))
    tma.store_wait(0)


@gluon.jit
def _write_and_announce(tile, written, TILE: gl.constexpr):
    tile.index(0).store(gl.full([TILE, TILE], 3, gl.float16, OUT_REGS))
    mbarrier.arrive(written.index(0), count=1)


@gluon.jit
def _wait_and_store(desc, tile, written, FENCE: gl.constexpr):
    mbarrier.wait(written.index(0), 0)
    if FENCE:
        fence_async_shared()  # on the causality path from the write: PTX's proxy rule holds
    tma_store(desc, [0, 0], tile.index(0))
    tma.store_wait(0)


@tlx.jit
def fence_in_the_reader(desc, TILE: gl.constexpr, FENCE: gl.constexpr):
    tile = _tiles(1, TILE)
    written = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(written)
    gl.warp_specialize(
        [
            (_write_and_announce, (tile, written, TILE)),
            (_wait_and_store, (desc, tile, written, FENCE)),
        ],
        [1],
        [24],
    )


@tlx.jit
def register_operand_to_wgmma(out_ptr, TILE: gl.constexpr, FENCE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    b = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    a.index(0).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
    b.index(0).store(gl.full([TILE, TILE], 2, gl.float16, OUT_REGS))
    if FENCE:
        fence_async_shared()
    acc = warpgroup_mma(a.index(0), b.index(0), gl.zeros([TILE, TILE], gl.float32, ACC_REGS))
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


# --- rings between partitions --------------------------------------------------------------


@gluon.jit
def _load_ring(desc, ring, ready, empty, STEPS: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(empty.index(stage), ((i // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
        tma_load(desc, [i * desc.block_type.shape[0], 0], ready.index(stage), ring.index(stage))


@gluon.jit
def _consume_ring_off_by_one(ring, ready, empty, out_ptr, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    TILE: gl.constexpr = ring.shape[1]
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    for i in range(STEPS):
        stage = i % STAGES
        phase = (i // STAGES) & 1 if RIGHT else ((i + 1) // STAGES) & 1
        mbarrier.wait(ready.index(stage), phase)
        acc = warpgroup_mma(ring.index(stage), ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty.index(stage), count=1)
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


@tlx.jit
def ring_consumer_phase_off_by_one(desc, out_ptr, TILE: gl.constexpr, RIGHT_PHASE: gl.constexpr):
    ring = _tiles(3, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_consume_ring_off_by_one, (ring, ready, empty, out_ptr, STEPS, RIGHT_PHASE)),
            (_load_ring, (desc, ring, ready, empty, STEPS)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _load_ring_skipping_round_0(desc, ring, ready, empty, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        round = i // STAGES
        if i >= STAGES:  # the first round's stages are free
            mbarrier.wait(empty.index(stage), (round - 1) & 1 if RIGHT else round & 1)
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
        tma_load(desc, [i * desc.block_type.shape[0], 0], ready.index(stage), ring.index(stage))


@gluon.jit
def _read_ring(ring, ready, empty, out_ptr, STEPS: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        values = ring.index(stage).load(OUT_REGS)
        mbarrier.arrive(empty.index(stage), count=1)
        _store_out(out_ptr + i * values.numel, values)


@tlx.jit
def ring_producer_phase_off_by_one(desc, out_ptr, TILE: gl.constexpr, RIGHT_PHASE: gl.constexpr):
    ring = _tiles(2, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_read_ring, (ring, ready, empty, out_ptr, STEPS)),
            (_load_ring_skipping_round_0, (desc, ring, ready, empty, STEPS, RIGHT_PHASE)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _read_twice(ring, ready, empty, out_ptr, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    TILE: gl.constexpr = ring.shape[1]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        values = ring.index(stage).load(OUT_REGS)
        if not RIGHT:
            mbarrier.arrive(empty.index(stage), count=1)
        top = ring.index(stage).slice(0, TILE // 2).load(OUT_REGS)  # the residual rows again
        if RIGHT:
            mbarrier.arrive(empty.index(stage), count=1)
        _store_out(out_ptr + i * values.numel, values)
        _store_out(out_ptr + (STEPS + i) * values.numel, top)


@tlx.jit
def release_before_last_read(desc, out_ptr, TILE: gl.constexpr, RIGHT_RELEASE: gl.constexpr):
    ring = _tiles(2, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_read_twice, (ring, ready, empty, out_ptr, STEPS, RIGHT_RELEASE)),
            (_load_ring, (desc, ring, ready, empty, STEPS)),
        ],
        [1],
        [24],
    )


@gluon.jit
def _multiply_ring(ring, ready, empty, out_ptr, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    TILE: gl.constexpr = ring.shape[1]
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        acc = warpgroup_mma(ring.index(stage), ring.index(stage), acc, is_async=True)
        if RIGHT:
            acc = warpgroup_mma_wait(0, deps=[acc])
        mbarrier.arrive(empty.index(stage), count=1)
        if not RIGHT:
            acc = warpgroup_mma_wait(0, deps=[acc])
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


@tlx.jit
def release_while_wgmma_reads(desc, out_ptr, TILE: gl.constexpr, RIGHT_RELEASE: gl.constexpr):
    ring = _tiles(4, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [4, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [4, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_multiply_ring, (ring, ready, empty, out_ptr, STEPS, RIGHT_RELEASE)),
            (_load_ring, (desc, ring, ready, empty, STEPS)),
        ],
        [1],
        [24],
    )


# --- pipelines without partitions: wait(n) -------------------------------------------------


@tlx.jit
def refill_after_lax_dot_wait(desc, out_ptr, TILE: gl.constexpr, RETIRE_ALL: gl.constexpr):
    ring = _tiles(2, TILE)
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
        acc = warpgroup_mma_wait(0 if RETIRE_ALL else 1, deps=[acc])
        if i + 2 < STEPS:  # the stage this product read takes step i + 2
            mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
            tma_load(desc, [(i + 2) * TILE, 0], ready.index(stage), ring.index(stage))
    acc = warpgroup_mma_wait(0, deps=[acc])
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


@tlx.jit
def refill_previous_stage(desc, out_ptr, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    ring = _tiles(3, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(ready)
    for s in gl.static_range(2):
        mbarrier.expect(ready.index(s), desc.block_type.nbytes)
        tma_load(desc, [s * TILE, 0], ready.index(s), ring.index(s))
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    for i in range(STEPS):
        stage = i % 3
        mbarrier.wait(ready.index(stage), (i // 3) & 1)
        acc = warpgroup_mma(ring.index(stage), ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(1 if RIGHT_WAIT else 2, deps=[acc])
        refill = (i + 2) % 3  # the stage of step i - 1, which the wait retired
        if i + 2 < STEPS:
            mbarrier.expect(ready.index(refill), desc.block_type.nbytes)
            tma_load(desc, [(i + 2) * TILE, 0], ready.index(refill), ring.index(refill))
    acc = warpgroup_mma_wait(0, deps=[acc])
    _store_out(out_ptr, gl.convert_layout(acc, OUT_REGS).to(gl.float16))


@tlx.jit
def double_buffered_epilogue(desc, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    staging = _tiles(2, TILE)
    for t in range(4):
        buffer = t % 2
        tma.store_wait(1 if RIGHT_WAIT else 2)  # the store of tile t - 2 read this buffer
        staging.index(buffer).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
        fence_async_shared()
        tma_store(desc, [t * TILE, 0], staging.index(buffer))
    tma.store_wait(0)


@tlx.jit
def tma_store_then_reload(desc, out_ptr, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    tile = _tiles(1, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(ready)
    tile.index(0).store(gl.full([TILE, TILE], 1, gl.float16, OUT_REGS))
    fence_async_shared()
    tma_store(desc, [0, 0], tile.index(0))
    if RIGHT_WAIT:
        tma.store_wait(0)
    mbarrier.expect(ready.index(0), desc.block_type.nbytes)
    tma_load(desc, [TILE, 0], ready.index(0), tile.index(0))
    mbarrier.wait(ready.index(0), 0)
    _store_out(out_ptr, tile.index(0).load(OUT_REGS))
    tma.store_wait(0)


# --- one barrier, many phases --------------------------------------------------------------


@tlx.jit
def one_barrier_phase_zero_every_iteration(
    desc, out_ptr, TILE: gl.constexpr, RIGHT_PHASE: gl.constexpr
):
    tile = _tiles(1, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(ready)
    for t in range(3):
        mbarrier.expect(ready.index(0), desc.block_type.nbytes)
        tma_load(desc, [t * TILE, 0], ready.index(0), tile.index(0))
        mbarrier.wait(ready.index(0), t & 1 if RIGHT_PHASE else 0)
        values = tile.index(0).load(OUT_REGS)
        _store_out(out_ptr + t * values.numel, values)


@tlx.jit
def three_waits_per_iteration(desc, out_ptr, TILE: gl.constexpr, RIGHT_PHASE: gl.constexpr):
    tiles = _tiles(3, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(ready)
    for t in range(2):
        for j in gl.static_range(3):
            mbarrier.expect(ready.index(0), desc.block_type.nbytes)
            tma_load(desc, [(3 * t + j) * TILE, 0], ready.index(0), tiles.index(j))
            mbarrier.wait(ready.index(0), (3 * t + j) & 1 if RIGHT_PHASE else j & 1)
            values = tiles.index(j).load(OUT_REGS)
            _store_out(out_ptr + (3 * t + j) * values.numel, values)


@tlx.jit
def two_loads_one_expect(desc, out_ptr, TILE: gl.constexpr, RIGHT_BYTES: gl.constexpr):
    tiles = _tiles(2, TILE)
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(ready)
    tiles_bytes: gl.constexpr = 2 if RIGHT_BYTES else 1
    mbarrier.expect(ready.index(0), tiles_bytes * desc.block_type.nbytes)
    tma_load(desc, [0, 0], ready.index(0), tiles.index(0))
    tma_load(desc, [TILE, 0], ready.index(0), tiles.index(1))
    mbarrier.wait(ready.index(0), 0)
    first = tiles.index(0).load(OUT_REGS)
    second = tiles.index(1).load(OUT_REGS)
    _store_out(out_ptr, first + second)


# --- partitions handing tiles over ---------------------------------------------------------


@gluon.jit
def _relay(first, second, RIGHT: gl.constexpr):
    if RIGHT:
        mbarrier.wait(first.index(0), 0)
    mbarrier.arrive(second.index(0), count=1)
    if not RIGHT:
        mbarrier.wait(first.index(0), 0)


@gluon.jit
def _read_after(tile, second, out_ptr):
    mbarrier.wait(second.index(0), 0)
    _store_out(out_ptr, tile.index(0).load(OUT_REGS))


@tlx.jit
def relay_through_a_third_partition(out_ptr, TILE: gl.constexpr, RIGHT_RELAY: gl.constexpr):
    tile = _tiles(1, TILE)
    first = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(first)
    second = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(second)
    gl.warp_specialize(
        [
            (_write_and_announce, (tile, first, TILE)),
            (_relay, (first, second, RIGHT_RELAY)),
            (_read_after, (tile, second, out_ptr)),
        ],
        [1, 4],
        [24, 96],
    )


@gluon.jit
def _post(slots, full, empty, TILE: gl.constexpr, RIGHT: gl.constexpr):
    for i in range(4):
        slot = i % 2
        mbarrier.wait(empty.index(slot), ((i // 2) & 1) ^ 1)
        if not RIGHT:
            mbarrier.arrive(full.index(slot), count=1)
        slots.index(slot).store(gl.full([TILE, TILE], i, gl.float16, OUT_REGS))
        if RIGHT:
            mbarrier.arrive(full.index(slot), count=1)


@gluon.jit
def _collect(slots, full, empty, out_ptr):
    for i in range(4):
        slot = i % 2
        mbarrier.wait(full.index(slot), (i // 2) & 1)
        values = slots.index(slot).load(OUT_REGS)
        mbarrier.arrive(empty.index(slot), count=1)
        _store_out(out_ptr + i * values.numel, values)


@tlx.jit
def mailbox_arrive_before_store(out_ptr, TILE: gl.constexpr, RIGHT_ORDER: gl.constexpr):
    slots = _tiles(2, TILE)
    full = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(full)
    empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(empty)
    gl.warp_specialize(
        [
            (_collect, (slots, full, empty, out_ptr)),
            (_post, (slots, full, empty, TILE, RIGHT_ORDER)),
        ],
        [4],
        [96],
    )


# --- aliasing trees whose buffers' lifetimes overlap ---------------------------------------


@tlx.jit
def aliased_tree_lifetimes(desc, out_ptr, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((2 * TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    w_top = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    w_bottom = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            x, tlx.reuse_group(w_top, w_bottom, group_type=tlx.reuse_group_type.distinct)
        )
    )
    b_values = gl.full([TILE, TILE], 1, gl.float16, OUT_REGS)
    b = gl.allocate_shared_memory(gl.float16, [TILE, TILE], TILE_LAYOUT, b_values)
    ready = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(ready)
    mbarrier.expect(ready.index(0), 2 * desc.block_type.nbytes)  # one barrier, two loads
    tma_load(desc, [0, 0], ready.index(0), x.index(0).slice(0, TILE))
    tma_load(desc, [TILE, 0], ready.index(0), x.index(0).slice(TILE, TILE))
    fence_async_shared()
    mbarrier.wait(ready.index(0), 0)
    top = warpgroup_mma(
        x.index(0).slice(0, TILE), b, gl.zeros([TILE, TILE], gl.float32, ACC_REGS), is_async=True
    )
    bottom = warpgroup_mma(
        x.index(0).slice(TILE, TILE), b, gl.zeros([TILE, TILE], gl.float32, ACC_REGS), is_async=True
    )
    top = warpgroup_mma_wait(1, deps=[top])  # retires the first product only
    mbarrier.expect(ready.index(1), desc.block_type.nbytes)
    tma_load(desc, [2 * TILE, 0], ready.index(1), w_top.index(0))
    if RIGHT_WAIT:
        bottom = warpgroup_mma_wait(0, deps=[bottom])
    mbarrier.expect(ready.index(2), desc.block_type.nbytes)
    tma_load(desc, [3 * TILE, 0], ready.index(2), w_bottom.index(0))
    bottom = warpgroup_mma_wait(0, deps=[bottom])
    mbarrier.wait(ready.index(1), 0)
    mbarrier.wait(ready.index(2), 0)
    both = w_top.index(0).load(OUT_REGS) + w_bottom.index(0).load(OUT_REGS)
    _store_out(out_ptr, both + gl.convert_layout(top + bottom, OUT_REGS).to(gl.float16))


@gluon.jit
def _read_x(desc, x, ready, released, out_ptr):
    mbarrier.expect(ready.index(0), desc.block_type.nbytes)
    tma_load(desc, [0, 0], ready.index(0), x.index(0))
    mbarrier.wait(ready.index(0), 0)
    values = x.index(0).load(OUT_REGS)
    mbarrier.arrive(released.index(0), count=1)
    _store_out(out_ptr, values)


@gluon.jit
def _load_y(desc, y, ready, released, out_ptr, RIGHT: gl.constexpr):
    if RIGHT:
        mbarrier.wait(released.index(0), 0)
    mbarrier.expect(ready.index(1), desc.block_type.nbytes)
    tma_load(desc, [desc.block_type.shape[0], 0], ready.index(1), y.index(0))
    mbarrier.wait(ready.index(1), 0)
    values = y.index(0).load(OUT_REGS)
    _store_out(out_ptr + values.numel, values)


@tlx.jit
def phases_across_partitions(desc, out_ptr, TILE: gl.constexpr, RIGHT_WAIT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    y = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_phases(tlx.reuse_group(x), tlx.reuse_group(y)))
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(ready)
    released = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(released)
    gl.warp_specialize(
        [
            (_read_x, (desc, x, ready, released, out_ptr)),
            (_load_y, (desc, y, ready, released, out_ptr, RIGHT_WAIT)),
        ],
        [4],
        [96],
    )


# --- the batch ------------------------------------------------------------------------------


def _source(function, flag: str, value: bool, descriptor=True, out=True):
    signature = {}
    if descriptor:
        signature["desc"] = DESCRIPTOR
    if out:
        signature["out_ptr"] = "*fp16"
    signature.update({"TILE": "constexpr", flag: "constexpr"})
    return tlx.ASTSource(fn=function, signature=signature, constexprs={"TILE": TILE, flag: value})


def _pair(name, function, flag, places, descriptor=True, out=True):
    """A pair of the batch as kernels.seeds() gives one: (name, source factory (takes the
    flag that keeps the ordering), target, the two (file, line) the check must report),
    ``places`` being (function, text of the line) of each access."""
    file_name = __file__.rsplit("/", 1)[-1]
    return (
        name,
        lambda value: _source(function, flag, value, descriptor, out),
        SM90A,
        frozenset((file_name, _line(where, text)) for where, text in places),
    )


_RING_LOAD = (_load_ring, "tma_load(desc, [i * desc")
PAIRS = (
    _pair(
        "two tiles written from registers, TMA-stored without a fence",
        register_tile_to_tma_store,
        "FENCE",
        [
            (register_tile_to_tma_store, "tiles.index(t).store("),
            (register_tile_to_tma_store, "tma_store(desc, [t * TILE"),
        ],
        out=False,
    ),
    _pair(
        "a tile another partition wrote, TMA-stored with no fence on either side",
        fence_in_the_reader,
        "FENCE",
        [(_write_and_announce, "tile.index(0).store("), (_wait_and_store, "tma_store(")],
        out=False,
    ),
    _pair(
        "an operand written from registers, read by warpgroup_mma without a fence",
        register_operand_to_wgmma,
        "FENCE",
        [
            (register_operand_to_wgmma, "a.index(0).store("),
            (register_operand_to_wgmma, "acc = warpgroup_mma("),
        ],
        descriptor=False,
    ),
    _pair(
        "a ring consumer's ready parity computed from the next step",
        ring_consumer_phase_off_by_one,
        "RIGHT_PHASE",
        [_RING_LOAD, (_consume_ring_off_by_one, "acc = warpgroup_mma(ring")],
    ),
    _pair(
        "a loader that skips round 0 waits for the release of round r, not r - 1",
        ring_producer_phase_off_by_one,
        "RIGHT_PHASE",
        [
            (_load_ring_skipping_round_0, "tma_load(desc,"),
            (_read_ring, "values = ring.index(stage).load("),
        ],
    ),
    _pair(
        "a stage refilled after warpgroup_mma_wait(1) while its product is in flight",
        refill_after_lax_dot_wait,
        "RETIRE_ALL",
        [
            (refill_after_lax_dot_wait, "acc = warpgroup_mma(ring"),
            (refill_after_lax_dot_wait, "tma_load(desc, [(i + 2) * TILE"),
        ],
    ),
    _pair(
        "the previous step's stage refilled after warpgroup_mma_wait(2)",
        refill_previous_stage,
        "RIGHT_WAIT",
        [
            (refill_previous_stage, "acc = warpgroup_mma(ring"),
            (refill_previous_stage, "tma_load(desc, [(i + 2) * TILE"),
        ],
    ),
    _pair(
        "a double-buffered epilogue rewrites a buffer after tma.store_wait(2)",
        double_buffered_epilogue,
        "RIGHT_WAIT",
        [
            (double_buffered_epilogue, "staging.index(buffer).store("),
            (double_buffered_epilogue, "tma_store(desc, [t * TILE"),
        ],
        out=False,
    ),
    _pair(
        "a consumer releases its stage between its two reads of it",
        release_before_last_read,
        "RIGHT_RELEASE",
        [_RING_LOAD, (_read_twice, "top = ring.index(stage).slice(")],
    ),
    _pair(
        "a consumer releases its stage before warpgroup_mma_wait retires the product",
        release_while_wgmma_reads,
        "RIGHT_RELEASE",
        [_RING_LOAD, (_multiply_ring, "acc = warpgroup_mma(ring")],
    ),
    _pair(
        "one barrier reused every iteration, waited with parity 0",
        one_barrier_phase_zero_every_iteration,
        "RIGHT_PHASE",
        [
            (one_barrier_phase_zero_every_iteration, "tma_load(desc, [t * TILE"),
            (one_barrier_phase_zero_every_iteration, "values = tile.index(0).load("),
        ],
    ),
    _pair(
        "three waits an iteration on one barrier, the parity restarting each iteration",
        three_waits_per_iteration,
        "RIGHT_PHASE",
        [
            (three_waits_per_iteration, "tma_load(desc, [(3 * t + j)"),
            (three_waits_per_iteration, "values = tiles.index(j).load("),
        ],
    ),
    _pair(
        "two TMA loads on one barrier that expects one tile's bytes",
        two_loads_one_expect,
        "RIGHT_BYTES",
        [
            (two_loads_one_expect, "tma_load(desc, [TILE, 0]"),
            (two_loads_one_expect, "second = tiles.index(1).load("),
        ],
    ),
    _pair(
        "a relay partition passes the baton on before it has it",
        relay_through_a_third_partition,
        "RIGHT_RELAY",
        [(_write_and_announce, "tile.index(0).store("), (_read_after, "tile.index(0).load(")],
        descriptor=False,
    ),
    _pair(
        "a mailbox writer announces a slot before storing it",
        mailbox_arrive_before_store,
        "RIGHT_ORDER",
        [(_post, "slots.index(slot).store("), (_collect, "values = slots.index(slot).load(")],
        descriptor=False,
    ),
    _pair(
        "a tile TMA-loaded again while its TMA store still reads it",
        tma_store_then_reload,
        "RIGHT_WAIT",
        [
            (tma_store_then_reload, "tma_store(desc, [0, 0]"),
            (tma_store_then_reload, "tma_load(desc, [TILE, 0]"),
        ],
    ),
    _pair(
        "an aliased buffer loaded while a product still reads the bytes it shares",
        aliased_tree_lifetimes,
        "RIGHT_WAIT",
        [
            (aliased_tree_lifetimes, "bottom = warpgroup_mma("),
            (aliased_tree_lifetimes, "tma_load(desc, [3 * TILE, 0]"),
        ],
    ),
    _pair(
        "reuse_phases: a partition loads y over x another partition still reads",
        phases_across_partitions,
        "RIGHT_WAIT",
        [(_read_x, "values = x.index(0).load("), (_load_y, "tma_load(desc,")],
    ),
)


def seeds():
    """The batch's pairs, as kernels.seeds() gives them."""
    return PAIRS
