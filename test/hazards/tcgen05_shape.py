"""Class 3 of issue 47: two ``tcgen05_mma`` of one partition that PTX does not order.

PTX runs two asynchronous ``tcgen05.mma`` of one thread in issue order only when they have the
same accumulator and the same shape (M x N, and K by the operands' type); it orders an MMA's
operand reads before a later MMA's accumulator writes, nothing else (docs/hazards.md, "The
ISA's ordering rules"). The hardware may serialize them anyway; the check models the ISA.
Each kernel issues two asynchronous MMAs into TMEM columns they share, from one partition (an
MMA with an mbarrier is asynchronous; a predicate false keeps its arrive off), and reads the
result after a commit. The flag keeps the ordering; without it:

* ``wide_then_narrow`` (sm_100a): an N = 64 MMA into the whole accumulator, then an N = 32
  MMA into its first column half (use_acc false: both write those columns). ``WAIT`` waits
  for the first MMA's barrier before the second.
* ``narrow_then_wide`` (sm_100a): an N = 32 MMA into the first column half, then an N = 64
  MMA into the whole accumulator that adds to it (reads what the first writes).
  ``SAME_SHAPE`` makes the second an N = 32 MMA into the same half: same accumulator, same
  shape, a pipelined pair.
* ``shifted_accumulator`` (sm_100a): two N = 32 MMAs of the same shape, the second into
  columns 16 .. 48 of the accumulator the first writes at 0 .. 32: not the same
  accumulator. ``SAME_ACCUMULATOR`` puts the second at column 0 as well.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM100A, _line
from tlx.compat import tensor_memory_layout, tmem_reg_layout
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import tcgen05_commit, tcgen05_mma
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier

M = gl.constexpr(128)
WIDE = gl.constexpr(64)
NARROW = gl.constexpr(32)
K = gl.constexpr(64)
ACC_LAYOUT = gl.constexpr(tensor_memory_layout((M, WIDE), col_stride=1))
OPERAND_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))
NARROW_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(64, 16, rank=2))


@gluon.jit
def _operand(ptr, ROWS: gl.constexpr, COLUMNS: gl.constexpr, LAYOUT: gl.constexpr):
    """A ROWS x COLUMNS fp16 tile loaded from global memory into SMEM."""
    rows = gl.arange(0, ROWS, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, COLUMNS, gl.SliceLayout(0, OUT_REGS))
    values = gl.load(ptr + rows[:, None] * COLUMNS + columns[None, :])
    return gl.allocate_shared_memory(gl.float16, [ROWS, COLUMNS], LAYOUT, values)


@gluon.jit
def _store_result(acc, out_ptr, done):
    """Waits for every MMA (the commit after them) and stores the accumulator."""
    tcgen05_commit(done.index(0))
    mbarrier.wait(done.index(0), 0)
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (M, WIDE), ACC_LAYOUT, 4)
    values = acc.index(0).load(regs)
    rows = gl.arange(0, M, gl.SliceLayout(1, regs))
    columns = gl.arange(0, WIDE, gl.SliceLayout(0, regs))
    gl.store(out_ptr + rows[:, None] * WIDE + columns[None, :], values)


@gluon.jit
def _accumulator():
    """The accumulator and a buffer beside it in one TMEM spec, and the barrier ``done``."""
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc(
        (M, WIDE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_LAYOUT
    )
    spare = tlx.local_alloc(
        (M, WIDE), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_LAYOUT
    )
    tmem.set_buffer_overlap(tlx.reuse_group(acc, spare))
    done = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(done.index(0), count=1)
    return acc, done


@tlx.jit
def wide_then_narrow(a_ptr, b_ptr, out_ptr, WAIT: gl.constexpr):
    acc, done = _accumulator()
    first = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(first.index(0), count=1)
    a = _operand(a_ptr, M, K, OPERAND_LAYOUT)
    b = _operand(b_ptr, K, WIDE, OPERAND_LAYOUT)
    b_narrow = _operand(b_ptr, K, NARROW, NARROW_LAYOUT)
    fence_async_shared()
    bar = done.index(0)
    half = acc.index(0).slice(0, NARROW)
    tcgen05_mma(a, b, acc.index(0), use_acc=False, mbarriers=[first.index(0)])
    if WAIT:
        mbarrier.wait(first.index(0), 0)
    tcgen05_mma(a, b_narrow, half, use_acc=False, mbarriers=[bar], mbarrier_preds=[False])
    _store_result(acc, out_ptr, done)


@tlx.jit
def narrow_then_wide(a_ptr, b_ptr, out_ptr, SAME_SHAPE: gl.constexpr):
    acc, done = _accumulator()
    a = _operand(a_ptr, M, K, OPERAND_LAYOUT)
    b = _operand(b_ptr, K, WIDE, OPERAND_LAYOUT)
    b_narrow = _operand(b_ptr, K, NARROW, NARROW_LAYOUT)
    fence_async_shared()
    bar = done.index(0)
    half = acc.index(0).slice(0, NARROW)
    tcgen05_mma(a, b_narrow, half, use_acc=False, mbarriers=[bar], mbarrier_preds=[False])
    if SAME_SHAPE:
        tcgen05_mma(a, b_narrow, half, use_acc=True, mbarriers=[bar], mbarrier_preds=[False])
    else:
        tcgen05_mma(a, b, acc.index(0), use_acc=True, mbarriers=[bar], mbarrier_preds=[False])
    _store_result(acc, out_ptr, done)


@tlx.jit
def shifted_accumulator(a_ptr, b_ptr, out_ptr, SAME_ACCUMULATOR: gl.constexpr):
    acc, done = _accumulator()
    a = _operand(a_ptr, M, K, OPERAND_LAYOUT)
    b_narrow = _operand(b_ptr, K, NARROW, NARROW_LAYOUT)
    fence_async_shared()
    bar = done.index(0)
    half = acc.index(0).slice(0, NARROW)
    second: gl.constexpr = 0 if SAME_ACCUMULATOR else NARROW // 2
    shifted = acc.index(0).slice(second, NARROW)
    tcgen05_mma(a, b_narrow, half, use_acc=False, mbarriers=[bar], mbarrier_preds=[False])
    tcgen05_mma(a, b_narrow, shifted, use_acc=True, mbarriers=[bar], mbarrier_preds=[False])
    _store_result(acc, out_ptr, done)


def _source(function, flag: str, value: bool):
    return tlx.ASTSource(
        fn=function,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp32", flag: "constexpr"},
        constexprs={flag: value},
    )


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report: the two MMAs), as kernels.seeds()."""
    file_name = __file__.rsplit("/", 1)[-1]

    def race(function, first, second):
        return frozenset(
            {(file_name, _line(function, first)), (file_name, _line(function, second))}
        )

    return (
        (
            "an N = 32 MMA into the column half of an N = 64 MMA's accumulator",
            lambda wait: _source(wide_then_narrow, "WAIT", wait),
            SM100A,
            race(
                wide_then_narrow,
                "tcgen05_mma(a, b, acc.index(0), use_acc=False",
                "tcgen05_mma(a, b_narrow, half, use_acc=False",
            ),
        ),
        (
            "an N = 64 MMA adding to an N = 32 MMA's columns",
            lambda same: _source(narrow_then_wide, "SAME_SHAPE", same),
            SM100A,
            race(
                narrow_then_wide,
                "tcgen05_mma(a, b_narrow, half, use_acc=False",
                "tcgen05_mma(a, b, acc.index(0), use_acc=True",
            ),
        ),
        (
            "two MMAs of one shape into accumulators at different columns",
            lambda same: _source(shifted_accumulator, "SAME_ACCUMULATOR", same),
            SM100A,
            race(
                shifted_accumulator,
                "tcgen05_mma(a, b_narrow, half, use_acc=False",
                "tcgen05_mma(a, b_narrow, shifted, use_acc=True",
            ),
        ),
    )
