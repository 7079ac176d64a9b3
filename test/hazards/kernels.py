"""Small kernels of the hazard corpus, each with its one ordering behind a flag.

* ``tma_over_mma_operand`` (sm_90a): ``a`` and ``b`` share their bytes; an asynchronous
  ``warpgroup_mma`` reads ``a``, then a TMA load writes ``b``. ``WAIT_MMA`` retires the
  MMA first (``warpgroup_mma_wait``); without it the load overwrites the operand that
  the tensor cores may still be reading.
* ``tmem_store_over_mma`` (sm_100a): ``acc`` (fp32) and ``half`` (fp16) share TMEM
  columns; an asynchronous ``tcgen05_mma`` writes ``acc`` and commits to ``done``.
  ``WAIT_MMA`` waits on ``done`` before the accumulator is read and ``half`` is written
  over it; without it the TMEM store races with the MMA.
* ``tmem_store_over_loaded_alias`` (sm_100a): the same TMEM sharing, across partitions, as
  the reference 2-CTA attention backward raced it: the default partition loads ``acc`` and
  arrives on ``loaded``; a worker partition stores ``half`` over it. ``WAIT_LOAD`` makes the
  worker wait on ``loaded`` first; without it its TMEM store races with the TMEM load.

``SEEDS`` lists them as the corpus's other seeds do (lines of the two accesses);
test/python/test_hazards.py checks them, test/gpu/sanitize_hazards.py runs the Hopper one.

* ``wait_skips_a_phase`` (sm_90a): two producer partitions complete a phase of
  ``k_ready`` and of ``v_ready`` each round, a consumer waits for both and releases the
  round (``empty``). Round 1 needs V only: without ``WAIT_EVERY_PHASE`` the consumer
  skips that round's ``k_ready`` phase, and its next wait on ``k_ready``, which names
  phase 2 by its parity, would pass on phase 0 were phase 1 late, as the Hopper
  attention consumer's wait on K did after a key block it skipped (the check reports an
  ambiguous wait; no buffer is involved).
"""

from __future__ import annotations

import inspect

import tlx
from tlx.compat import tensor_memory_layout, tma_load, tmem_reg_layout
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_wait,
)

SM90A = GPUTarget("cuda", 90, 32)
SM100A = GPUTarget("cuda", 100, 32)
TILE = 64
TILE_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))
ACC_REGS = gl.constexpr(
    gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
)
OUT_REGS = gl.constexpr(gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))


@tlx.jit
def tma_over_mma_operand(desc, out_ptr, TILE: gl.constexpr, WAIT_MMA: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    b = tlx.local_alloc((TILE, TILE), gl.float16, 1, reuse=spec, layout=TILE_LAYOUT)
    spec.set_buffer_overlap(tlx.reuse_group(a, b))
    ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    mbarrier.init(ready.index(0), count=1)
    mbarrier.init(ready.index(1), count=1)
    fence_async_shared()

    mbarrier.expect(ready.index(0), desc.block_type.nbytes)
    tma_load(desc, [0, 0], ready.index(0), a.index(0))
    mbarrier.wait(ready.index(0), 0)
    acc = gl.zeros([TILE, TILE], gl.float32, ACC_REGS)
    acc = warpgroup_mma(a.index(0), a.index(0), acc, is_async=True)  # reads a
    if WAIT_MMA:
        acc = warpgroup_mma_wait(0, deps=[acc])
    mbarrier.expect(ready.index(1), desc.block_type.nbytes)
    tma_load(desc, [TILE, 0], ready.index(1), b.index(0))  # writes b, over a
    mbarrier.wait(ready.index(1), 0)
    acc = warpgroup_mma_wait(0, deps=[acc])

    rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    tile = rows[:, None] * TILE + columns[None, :]
    gl.store(out_ptr + tile, gl.convert_layout(acc, OUT_REGS))
    gl.store(out_ptr + TILE * TILE + tile, b.index(0).load(OUT_REGS).to(gl.float32))
    mbarrier.invalidate(ready.index(0))
    mbarrier.invalidate(ready.index(1))


ACC_TMEM = gl.constexpr(tensor_memory_layout((128, TILE), col_stride=1))
SMEM_128 = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))


@tlx.jit
def tmem_store_over_mma(a_ptr, b_ptr, out_ptr, TILE: gl.constexpr, WAIT_MMA: gl.constexpr):
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc(
        (128, TILE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_TMEM
    )
    half = tlx.local_alloc(
        (128, TILE), gl.float16, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_TMEM
    )
    tmem.set_buffer_overlap(tlx.reuse_group(acc, half))
    done = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(done.index(0), count=1)

    a_rows = gl.arange(0, 128, gl.SliceLayout(1, OUT_REGS))
    b_rows = gl.arange(0, TILE, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, OUT_REGS))
    a_smem = gl.allocate_shared_memory(
        gl.float16,
        [128, TILE],
        SMEM_128,
        gl.load(a_ptr + a_rows[:, None] * TILE + columns[None, :]),
    )
    b_smem = gl.allocate_shared_memory(
        gl.float16,
        [TILE, TILE],
        SMEM_128,
        gl.load(b_ptr + b_rows[:, None] * TILE + columns[None, :]),
    )
    fence_async_shared()
    blackwell.tcgen05_mma(a_smem, b_smem, acc.index(0), use_acc=False, mbarriers=[done.index(0)])
    if WAIT_MMA:
        mbarrier.wait(done.index(0), 0)
    half_regs: gl.constexpr = tmem_reg_layout(gl.float16, (128, TILE), ACC_TMEM, 4)
    half.index(0).store(gl.full([128, TILE], 0, gl.float16, half_regs))  # over acc
    out = half.index(0).load(half_regs)
    rows = gl.arange(0, 128, gl.SliceLayout(1, half_regs))
    out_columns = gl.arange(0, TILE, gl.SliceLayout(0, half_regs))
    gl.store(out_ptr + rows[:, None] * TILE + out_columns[None, :], out)


@gluon.jit
def _load_acc(acc, loaded, out_ptr, TILE: gl.constexpr):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (128, TILE), ACC_TMEM, 4)
    values = acc.index(0).load(regs)
    mbarrier.arrive(loaded.index(0), count=1)
    rows = gl.arange(0, 128, gl.SliceLayout(1, regs))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, regs))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], values)


@gluon.jit
def _store_half(half, loaded, TILE: gl.constexpr, WAIT_LOAD: gl.constexpr):
    if WAIT_LOAD:
        mbarrier.wait(loaded.index(0), 0)
    regs: gl.constexpr = tmem_reg_layout(gl.float16, (128, TILE), ACC_TMEM, 4)
    half.index(0).store(gl.full([128, TILE], 0, gl.float16, regs))


@tlx.jit
def tmem_store_over_loaded_alias(out_ptr, TILE: gl.constexpr, WAIT_LOAD: gl.constexpr):
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc(
        (128, TILE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_TMEM
    )
    half = tlx.local_alloc(
        (128, TILE), gl.float16, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_TMEM
    )
    tmem.set_buffer_overlap(tlx.reuse_group(acc, half))
    loaded = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(loaded.index(0), count=1)
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (128, TILE), ACC_TMEM, 4)
    acc.index(0).store(gl.full([128, TILE], 1.0, gl.float32, regs))
    gl.warp_specialize(
        [
            (_load_acc, (acc, loaded, out_ptr, TILE)),
            (_store_half, (half, loaded, TILE, WAIT_LOAD)),
        ],
        [4],
        [96],
    )


@gluon.jit
def _produce(ready, empty, ROUNDS: gl.constexpr):
    for round in range(ROUNDS):
        mbarrier.wait(empty.index(0), (round & 1) ^ 1)  # the round before was consumed
        mbarrier.arrive(ready.index(0))


@gluon.jit
def _consume_k_and_v(k_ready, v_ready, empty, ROUNDS: gl.constexpr, WAIT_EVERY_PHASE: gl.constexpr):
    for round in range(ROUNDS):
        if WAIT_EVERY_PHASE or round != 1:  # round 1 needs V only
            mbarrier.wait(k_ready.index(0), round & 1)
        mbarrier.wait(v_ready.index(0), round & 1)
        mbarrier.arrive(empty.index(0))


@tlx.jit
def wait_skips_a_phase(ROUNDS: gl.constexpr, WAIT_EVERY_PHASE: gl.constexpr):
    k_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(k_ready.index(0), count=1)
    mbarrier.init(v_ready.index(0), count=1)
    mbarrier.init(empty.index(0), count=1)
    gl.warp_specialize(
        [
            (_consume_k_and_v, (k_ready, v_ready, empty, ROUNDS, WAIT_EVERY_PHASE)),
            (_produce, (k_ready, empty, ROUNDS)),
            (_produce, (v_ready, empty, ROUNDS)),
        ],
        [1, 1],
        [24, 24],
    )


def wait_skips_a_phase_source(wait_every_phase: bool):
    return tlx.ASTSource(
        fn=wait_skips_a_phase,
        signature={"ROUNDS": "constexpr", "WAIT_EVERY_PHASE": "constexpr"},
        constexprs={"ROUNDS": 4, "WAIT_EVERY_PHASE": wait_every_phase},
    )


def _line(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function.fn)
    return first + next(number for number, line in enumerate(lines) if text in line)


def tma_over_mma_operand_source(wait_mma: bool):
    signature = {
        "desc": f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>",
        "out_ptr": "*fp32",
        "TILE": "constexpr",
        "WAIT_MMA": "constexpr",
    }
    return tlx.ASTSource(
        fn=tma_over_mma_operand,
        signature=signature,
        constexprs={"TILE": TILE, "WAIT_MMA": wait_mma},
    )


def tmem_store_over_mma_source(wait_mma: bool):
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp16", "TILE": "constexpr"}
    signature["WAIT_MMA"] = "constexpr"
    return tlx.ASTSource(
        fn=tmem_store_over_mma, signature=signature, constexprs={"TILE": TILE, "WAIT_MMA": wait_mma}
    )


def tmem_store_over_loaded_alias_source(wait_load: bool):
    signature = {"out_ptr": "*fp32", "TILE": "constexpr", "WAIT_LOAD": "constexpr"}
    return tlx.ASTSource(
        fn=tmem_store_over_loaded_alias,
        signature=signature,
        constexprs={"TILE": TILE, "WAIT_LOAD": wait_load},
    )


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report)."""
    file_name = __file__.rsplit("/", 1)[-1]
    return (
        (
            "TMA load into b while warpgroup_mma reads a",
            tma_over_mma_operand_source,
            SM90A,
            frozenset(
                {
                    (file_name, _line(tma_over_mma_operand, "acc = warpgroup_mma(a.index(0)")),
                    (file_name, _line(tma_over_mma_operand, "tma_load(desc, [TILE, 0]")),
                }
            ),
        ),
        (
            "TMEM store over the accumulator of an unfinished tcgen05_mma",
            tmem_store_over_mma_source,
            SM100A,
            frozenset(
                {
                    (file_name, _line(tmem_store_over_mma, "blackwell.tcgen05_mma(")),
                    (file_name, _line(tmem_store_over_mma, "half.index(0).store(")),
                }
            ),
        ),
        (
            "TMEM store in one partition over an alias another partition loads",
            tmem_store_over_loaded_alias_source,
            SM100A,
            frozenset(
                {
                    (file_name, _line(_load_acc, "values = acc.index(0).load(")),
                    (file_name, _line(_store_half, "half.index(0).store(")),
                }
            ),
        ),
    )
