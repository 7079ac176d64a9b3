"""Class 1 of issue 47: a tile written in chunks by one line of a ``static_range``.

Each chunk's store is one TTGIR operation at one source line; the chunks cover different
bytes, so the check must keep a record of each (docs/hazards.md, "What the check proves").
Each kernel's race is against the first chunk only: a check that kept one record per line
(the latest, the last chunk) missed it. The flag keeps the ordering; without it:

* ``chunks_then_tma_load`` (sm_90a): ``tile`` (two row chunks) and ``top`` (the bytes of its
  first chunk) share a spec; the tile is written chunk by chunk with ``local_store``, then a
  TMA load writes ``top``. ``FENCE`` puts a ``fence_async_shared`` between them: without it
  the first chunk's generic-proxy write is not ordered before the async-proxy write.
* ``chunks_then_partition_load`` (sm_90a): the default partition writes ``tile`` in row
  chunks; a worker partition loads ``top``. ``WAIT`` makes the worker wait on ``written``,
  which the default partition arrives on after its chunks.
* ``chunks_then_tmem_store`` (sm_100a): the same across partitions in TMEM: the default
  partition writes ``acc`` in column chunks (TMEM stores); a worker stores ``left``, the
  columns of the first chunk. ``WAIT`` orders the worker after the chunks.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM90A, SM100A, TILE, TILE_LAYOUT, _line
from tlx.compat import tensor_memory_layout, tma_load, tmem_reg_layout
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier


@tlx.jit
def chunks_then_tma_load(desc, out_ptr, TILE: gl.constexpr, FENCE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((2 * TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    top = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, top))
    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=1)
    ones = gl.full([TILE, TILE], 1, gl.float16, OUT_REGS)
    for chunk in gl.static_range(2):
        tile.index(0).slice(chunk * TILE, TILE).store(ones)
    if FENCE:
        fence_async_shared()
    mbarrier.expect(ready.index(0), desc.block_type.nbytes)
    tma_load(desc, [0, 0], ready.index(0), top.index(0))  # over the first chunk
    mbarrier.wait(ready.index(0), 0)
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], top.index(0).load(OUT_REGS))
    mbarrier.invalidate(ready.index(0))


@gluon.jit
def _write_chunks(tile, written, TILE: gl.constexpr):
    ones = gl.full([TILE, TILE], 1, gl.float16, OUT_REGS)
    for chunk in gl.static_range(2):
        tile.index(0).slice(chunk * TILE, TILE).store(ones)
    mbarrier.arrive(written.index(0), count=1)


@gluon.jit
def _load_top(top, written, out_ptr, TILE: gl.constexpr, WAIT: gl.constexpr):
    if WAIT:
        mbarrier.wait(written.index(0), 0)
    values = top.index(0).load(OUT_REGS)  # the first chunk's bytes
    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)


@tlx.jit
def chunks_then_partition_load(out_ptr, TILE: gl.constexpr, WAIT: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    tile = tlx.local_alloc((2 * TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    top = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(tile, top))
    written = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(written.index(0), count=1)
    gl.warp_specialize(
        [
            (_write_chunks, (tile, written, TILE)),
            (_load_top, (top, written, out_ptr, TILE, WAIT)),
        ],
        [4],
        [96],
    )


WIDE_TMEM = gl.constexpr(tensor_memory_layout((128, 2 * TILE), col_stride=1))
HALF_TMEM = gl.constexpr(tensor_memory_layout((128, TILE), col_stride=1))


@gluon.jit
def _write_tmem_chunks(acc, written, TILE: gl.constexpr):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (128, TILE), HALF_TMEM, 4)
    for chunk in gl.static_range(2):
        acc.index(0).slice(chunk * TILE, TILE).store(gl.full([128, TILE], 1.0, gl.float32, regs))
    mbarrier.arrive(written.index(0), count=1)


@gluon.jit
def _store_left(left, written, TILE: gl.constexpr, WAIT: gl.constexpr):
    if WAIT:
        mbarrier.wait(written.index(0), 0)
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (128, TILE), HALF_TMEM, 4)
    left.index(0).store(gl.full([128, TILE], 2.0, gl.float32, regs))  # the first chunk's columns


@tlx.jit
def chunks_then_tmem_store(TILE: gl.constexpr, WAIT: gl.constexpr):
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc(
        (128, 2 * TILE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=WIDE_TMEM
    )
    left = tlx.local_alloc(
        (128, TILE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=HALF_TMEM
    )
    tmem.set_buffer_overlap(tlx.reuse_group(acc, left))
    written = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(written.index(0), count=1)
    gl.warp_specialize(
        [(_write_tmem_chunks, (acc, written, TILE)), (_store_left, (left, written, TILE, WAIT))],
        [4],
        [96],
    )


def _source(function, flag: str, value: bool, signature=None):
    signature = {**(signature or {}), "TILE": "constexpr", flag: "constexpr"}
    return tlx.ASTSource(fn=function, signature=signature, constexprs={"TILE": TILE, flag: value})


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report), as kernels.seeds()."""
    file_name = __file__.rsplit("/", 1)[-1]
    descriptor = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"
    chunk_store = "tile.index(0).slice(chunk * TILE, TILE).store("
    return (
        (
            "TMA load over the first of two chunks, no fence",
            lambda fence: _source(
                chunks_then_tma_load, "FENCE", fence, {"desc": descriptor, "out_ptr": "*fp16"}
            ),
            SM90A,
            frozenset(
                {
                    (file_name, _line(chunks_then_tma_load, chunk_store)),
                    (file_name, _line(chunks_then_tma_load, "tma_load(desc, [0, 0]")),
                }
            ),
        ),
        (
            "a partition loads the first of two chunks another writes",
            lambda wait: _source(chunks_then_partition_load, "WAIT", wait, {"out_ptr": "*fp16"}),
            SM90A,
            frozenset(
                {
                    (file_name, _line(_write_chunks, chunk_store)),
                    (file_name, _line(_load_top, "values = top.index(0).load(")),
                }
            ),
        ),
        (
            "a partition stores TMEM over the first of two column chunks",
            lambda wait: _source(chunks_then_tmem_store, "WAIT", wait),
            SM100A,
            frozenset(
                {
                    (file_name, _line(_write_tmem_chunks, "acc.index(0).slice(chunk * TILE")),
                    (file_name, _line(_store_left, "left.index(0).store(")),
                }
            ),
        ),
    )
