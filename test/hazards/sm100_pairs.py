"""A batch of small sm_100a kernels as a demanding user writes them, each racy kernel with a clean
twin one flag away (the flag keeps the ordering), beside test/hazards/sm90_pairs.py: ``tcgen05_mma``
committed into mbarriers, TMEM loads and stores, ``tcgen05_copy``, rings whose stages the MMA
releases with a commit, and TMEM buffers aliased across partitions.

Without its flag:

* ``commit_waited_with_wrong_parity``: an MMA, a ``tcgen05_commit`` and a wait for parity 1 of
  the fresh barrier (RIGHT_PARITY: 0), which passes at once; the TMEM load races the MMA.
* ``accumulator_released_before_load``: two TMEM accumulators in turn between an MMA warp and
  an epilogue; the epilogue releases an accumulator before loading it (RIGHT_RELEASE: after).
* ``tmem_copy_without_fence``: scales written from registers into SMEM, then copied to TMEM
  by ``tcgen05_copy`` (the async proxy) with no ``fence_async_shared`` (FENCE).
* ``tmem_load_before_copy_lands``: ``tcgen05_copy`` is asynchronous (Triton waits for
  nothing): the TMEM load of its destination waits for its commit (RIGHT_WAIT) or not.
* ``p_announced_before_stored``: S and P share TMEM columns; the softmax partition arrives on
  ``p_ready`` before its TMEM store of P (RIGHT_ORDER: after), which the P V product reads.
* ``two_mmas_signal_one_barrier``: a K loop in two MMAs, both naming ``acc_ready`` (one
  arrival): it completes at the first (RIGHT_SIGNAL: only the last names it).
* ``stage_released_at_issue``: a TMA ring read by ``tcgen05_mma``; the MMA warp releases a
  stage with ``mbarrier.arrive`` at issue rather than with ``tcgen05_commit`` when the MMA has
  read it (RIGHT_RELEASE).
* ``commit_in_another_partition``: the MMA's completion is committed by a partition that
  issued no MMA (RIGHT_COMMIT: by the MMA's own); the epilogue's TMEM load races the MMA.
"""

from __future__ import annotations

import tlx
from kernels import OUT_REGS, SM100A, TILE, TILE_LAYOUT, _line
from tlx.compat import tensor_memory_layout, tma_load, tmem_reg_layout
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    tcgen05_commit,
    tcgen05_copy,
    tcgen05_mma,
)
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier

M = gl.constexpr(128)
N = gl.constexpr(64)
K = gl.constexpr(64)
ACC_LAYOUT = gl.constexpr(tensor_memory_layout((M, N), col_stride=1))
OPERAND_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))
DESCRIPTOR = f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>"


BARRIERS = gl.constexpr(mbarrier.MBarrierLayout())


@gluon.jit
def _init_barriers(bars):
    """Initializes each mbarrier of ``bars`` for one arrival."""
    COUNT: gl.constexpr = bars.shape[0]
    for i in gl.static_range(COUNT):
        mbarrier.init(bars.index(i), count=1)


@gluon.jit
def _operand(ptr, ROWS: gl.constexpr, COLUMNS: gl.constexpr):
    """A ROWS x COLUMNS fp16 tile from global memory in SMEM (outside every spec)."""
    rows = gl.arange(0, ROWS, gl.SliceLayout(1, OUT_REGS))
    columns = gl.arange(0, COLUMNS, gl.SliceLayout(0, OUT_REGS))
    values = gl.load(ptr + rows[:, None] * COLUMNS + columns[None, :])
    return gl.allocate_shared_memory(gl.float16, [ROWS, COLUMNS], OPERAND_LAYOUT, values)


@gluon.jit
def _accumulators(NUM: gl.constexpr):
    """``NUM`` M x N fp32 accumulators and a spare in one TMEM spec."""
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc((M, N), gl.float32, NUM, tlx.storage_kind.tmem, reuse=tmem)
    spare = tlx.local_alloc((M, N), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem)
    tmem.set_buffer_overlap(tlx.reuse_group(acc, spare))
    return acc


@gluon.jit
def _store_acc(out_ptr, acc):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (M, N), ACC_LAYOUT, 4)
    values = acc.load(regs)
    rows = gl.arange(0, M, gl.SliceLayout(1, regs))
    columns = gl.arange(0, N, gl.SliceLayout(0, regs))
    gl.store(out_ptr + rows[:, None] * N + columns[None, :], values)


@tlx.jit
def commit_waited_with_wrong_parity(a_ptr, b_ptr, out_ptr, RIGHT_PARITY: gl.constexpr):
    acc = _accumulators(1)
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    a = _operand(a_ptr, M, K)
    b = _operand(b_ptr, K, N)
    fence_async_shared()
    tcgen05_mma(
        a, b, acc.index(0), use_acc=False, mbarriers=[done.index(0)], mbarrier_preds=[False]
    )
    tcgen05_commit(done.index(0))
    mbarrier.wait(done.index(0), 0 if RIGHT_PARITY else 1)
    _store_acc(out_ptr, acc.index(0))


@gluon.jit
def _multiply_into_turns(a, b, acc, acc_ready, acc_empty, TILES: gl.constexpr):
    for t in range(TILES):
        turn = t % 2
        mbarrier.wait(acc_empty.index(turn), ((t // 2) & 1) ^ 1)
        tcgen05_mma(a, b, acc.index(turn), use_acc=False, mbarriers=[acc_ready.index(turn)])


@gluon.jit
def _drain_turns(acc, acc_ready, acc_empty, out_ptr, TILES: gl.constexpr, RIGHT: gl.constexpr):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (M, N), ACC_LAYOUT, 4)
    rows = gl.arange(0, M, gl.SliceLayout(1, regs))
    columns = gl.arange(0, N, gl.SliceLayout(0, regs))
    for t in range(TILES):
        turn = t % 2
        mbarrier.wait(acc_ready.index(turn), (t // 2) & 1)
        if not RIGHT:
            mbarrier.arrive(acc_empty.index(turn), count=1)
        values = acc.index(turn).load(regs)
        if RIGHT:
            mbarrier.arrive(acc_empty.index(turn), count=1)
        gl.store(out_ptr + t * M * N + rows[:, None] * N + columns[None, :], values)


@tlx.jit
def accumulator_released_before_load(a_ptr, b_ptr, out_ptr, RIGHT_RELEASE: gl.constexpr):
    acc = _accumulators(2)
    acc_ready = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(acc_ready)
    acc_empty = gl.allocate_shared_memory(gl.int64, [2, 1], BARRIERS)
    _init_barriers(acc_empty)
    a = _operand(a_ptr, M, K)
    b = _operand(b_ptr, K, N)
    fence_async_shared()
    gl.warp_specialize(
        [
            (_drain_turns, (acc, acc_ready, acc_empty, out_ptr, 4, RIGHT_RELEASE)),
            (_multiply_into_turns, (a, b, acc, acc_ready, acc_empty, 4)),
        ],
        [1],
        [24],
    )


SCALE_COLUMNS = gl.constexpr(32)
SCALE_SMEM = gl.constexpr(gl.NVMMASharedLayout(128, 32, rank=2))
SCALE_TMEM = gl.constexpr(tensor_memory_layout((M, SCALE_COLUMNS), col_stride=1))


@gluon.jit
def _scale_buffers():
    """Scales in SMEM (and a spare) and their TMEM copy (and a spare), two specs."""
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    scales = tlx.local_alloc((M, SCALE_COLUMNS), gl.float32, 1, reuse=smem, layout=SCALE_SMEM)
    spare = tlx.local_alloc((M, SCALE_COLUMNS), gl.float32, 1, reuse=smem, layout=SCALE_SMEM)
    smem.set_buffer_overlap(tlx.reuse_group(scales, spare))
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    copied = tlx.local_alloc(
        (M, SCALE_COLUMNS), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=SCALE_TMEM
    )
    other = tlx.local_alloc(
        (M, SCALE_COLUMNS), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=SCALE_TMEM
    )
    tmem.set_buffer_overlap(tlx.reuse_group(copied, other))
    return scales, copied


@gluon.jit
def _store_scales(out_ptr, copied):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (M, SCALE_COLUMNS), SCALE_TMEM, 4)
    values = copied.index(0).load(regs)
    rows = gl.arange(0, M, gl.SliceLayout(1, regs))
    columns = gl.arange(0, SCALE_COLUMNS, gl.SliceLayout(0, regs))
    gl.store(out_ptr + rows[:, None] * SCALE_COLUMNS + columns[None, :], values)


@tlx.jit
def tmem_copy_without_fence(out_ptr, FENCE: gl.constexpr):
    scales, copied = _scale_buffers()
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    scales.index(0).store(gl.full([M, SCALE_COLUMNS], 2.0, gl.float32, OUT_REGS))
    if FENCE:
        fence_async_shared()
    tcgen05_copy(scales.index(0), copied.index(0))
    tcgen05_commit(done.index(0))
    mbarrier.wait(done.index(0), 0)
    _store_scales(out_ptr, copied)


@tlx.jit
def tmem_load_before_copy_lands(out_ptr, RIGHT_WAIT: gl.constexpr):
    scales, copied = _scale_buffers()
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    scales.index(0).store(gl.full([M, SCALE_COLUMNS], 2.0, gl.float32, OUT_REGS))
    fence_async_shared()
    tcgen05_copy(scales.index(0), copied.index(0))
    tcgen05_commit(done.index(0))
    if RIGHT_WAIT:
        mbarrier.wait(done.index(0), 0)
    _store_scales(out_ptr, copied)
    if not RIGHT_WAIT:
        mbarrier.wait(done.index(0), 0)


P_LAYOUT = gl.constexpr(tensor_memory_layout((M, N), col_stride=1))


@gluon.jit
def _s_then_pv(q, k, v, s_tiles, p_tiles, o, s_ready, p_ready, o_done):
    tcgen05_mma(q, k, s_tiles.index(0), use_acc=False, mbarriers=[s_ready.index(0)])
    mbarrier.wait(p_ready.index(0), 0)
    tcgen05_mma(p_tiles.index(0), v, o.index(0), use_acc=False, mbarriers=[o_done.index(0)])


@gluon.jit
def _softmax(s_tiles, p_tiles, o, s_ready, p_ready, o_done, out_ptr, RIGHT: gl.constexpr):
    regs: gl.constexpr = tmem_reg_layout(gl.float32, (M, N), ACC_LAYOUT, 4)
    p_regs: gl.constexpr = tmem_reg_layout(gl.float16, (M, N), P_LAYOUT, 4)
    mbarrier.wait(s_ready.index(0), 0)
    s = s_tiles.index(0).load(regs)
    if not RIGHT:
        mbarrier.arrive(p_ready.index(0), count=1)
    p_tiles.index(0).store(gl.convert_layout(gl.exp2(s).to(gl.float16), p_regs))
    if RIGHT:
        mbarrier.arrive(p_ready.index(0), count=1)
    mbarrier.wait(o_done.index(0), 0)
    _store_acc(out_ptr, o.index(0))


@tlx.jit
def p_announced_before_stored(q_ptr, k_ptr, out_ptr, RIGHT_ORDER: gl.constexpr):
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    s_tiles = tlx.local_alloc((M, N), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem)
    p_tiles = tlx.local_alloc(
        (M, N), gl.float16, 1, tlx.storage_kind.tmem, reuse=tmem, layout=P_LAYOUT
    )
    tmem.set_buffer_overlap(tlx.reuse_group(s_tiles, p_tiles))
    o = tlx.local_alloc((M, N), gl.float32, 1, tlx.storage_kind.tmem)
    s_ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(s_ready)
    p_ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(p_ready)
    o_done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(o_done)
    q = _operand(q_ptr, M, K)
    k = _operand(k_ptr, K, N)
    v = _operand(k_ptr, N, N)
    fence_async_shared()
    gl.warp_specialize(
        [
            (_softmax, (s_tiles, p_tiles, o, s_ready, p_ready, o_done, out_ptr, RIGHT_ORDER)),
            (_s_then_pv, (q, k, v, s_tiles, p_tiles, o, s_ready, p_ready, o_done)),
        ],
        [1],
        [24],
    )


@tlx.jit
def two_mmas_signal_one_barrier(a_ptr, b_ptr, out_ptr, RIGHT_SIGNAL: gl.constexpr):
    acc = _accumulators(1)
    acc_ready = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(acc_ready)
    a = _operand(a_ptr, M, 2 * K)
    b = _operand(b_ptr, 2 * K, N)
    fence_async_shared()
    tcgen05_mma(
        a.slice(0, K, dim=1),
        b.slice(0, K),
        acc.index(0),
        use_acc=False,
        mbarriers=[acc_ready.index(0)],
        mbarrier_preds=[not RIGHT_SIGNAL],
    )
    tcgen05_mma(a.slice(K, K, dim=1), b.slice(K, K), acc.index(0), mbarriers=[acc_ready.index(0)])
    mbarrier.wait(acc_ready.index(0), 0)
    _store_acc(out_ptr, acc.index(0))


@gluon.jit
def _load_stages(desc, ring, ready, empty, STEPS: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(empty.index(stage), ((i // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(stage), desc.block_type.nbytes)
        tma_load(desc, [i * desc.block_type.shape[0], 0], ready.index(stage), ring.index(stage))


@gluon.jit
def _multiply_stages(a, ring, ready, empty, acc, done, STEPS: gl.constexpr, RIGHT: gl.constexpr):
    STAGES: gl.constexpr = ring.shape[0]
    for i in range(STEPS):
        stage = i % STAGES
        mbarrier.wait(ready.index(stage), (i // STAGES) & 1)
        last = i == STEPS - 1
        tcgen05_mma(
            a,
            ring.index(stage),
            acc.index(0),
            use_acc=i > 0,
            mbarriers=[done.index(0)],
            mbarrier_preds=[last],
        )
        if RIGHT:
            tcgen05_commit(empty.index(stage))  # arrives once the MMA has read the stage
        else:
            mbarrier.arrive(empty.index(stage), count=1)


@gluon.jit
def _wait_and_store(acc, done, out_ptr):
    mbarrier.wait(done.index(0), 0)
    _store_acc(out_ptr, acc.index(0))


@tlx.jit
def stage_released_at_issue(desc, a_ptr, out_ptr, RIGHT_RELEASE: gl.constexpr):
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    ring = tlx.local_alloc((K, N), gl.float16, 3, reuse=smem, layout=TILE_LAYOUT)
    spare = tlx.local_alloc((K, N), gl.float16, 1, reuse=smem, layout=TILE_LAYOUT)
    smem.set_buffer_overlap(tlx.reuse_group(ring, spare))
    acc = _accumulators(1)
    ready = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(ready)
    empty = gl.allocate_shared_memory(gl.int64, [3, 1], BARRIERS)
    _init_barriers(empty)
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    a = _operand(a_ptr, M, K)
    fence_async_shared()
    gl.warp_specialize(
        [
            (_wait_and_store, (acc, done, out_ptr)),
            (_load_stages, (desc, ring, ready, empty, 6)),
            (_multiply_stages, (a, ring, ready, empty, acc, done, 6, RIGHT_RELEASE)),
        ],
        [1, 1],
        [24, 24],
    )


@gluon.jit
def _issue_mma(a, b, acc, issued, done, RIGHT: gl.constexpr):
    tcgen05_mma(
        a, b, acc.index(0), use_acc=False, mbarriers=[done.index(0)], mbarrier_preds=[False]
    )
    if RIGHT:
        tcgen05_commit(done.index(0))
    mbarrier.arrive(issued.index(0), count=1)


@gluon.jit
def _commit_for_it(issued, done, RIGHT: gl.constexpr):
    mbarrier.wait(issued.index(0), 0)
    if not RIGHT:
        tcgen05_commit(done.index(0))  # tracks this partition's tcgen05 operations: none


@tlx.jit
def commit_in_another_partition(a_ptr, b_ptr, out_ptr, RIGHT_COMMIT: gl.constexpr):
    acc = _accumulators(1)
    issued = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(issued)
    done = gl.allocate_shared_memory(gl.int64, [1, 1], BARRIERS)
    _init_barriers(done)
    a = _operand(a_ptr, M, K)
    b = _operand(b_ptr, K, N)
    fence_async_shared()
    gl.warp_specialize(
        [
            (_wait_and_store, (acc, done, out_ptr)),
            (_issue_mma, (a, b, acc, issued, done, RIGHT_COMMIT)),
            (_commit_for_it, (issued, done, RIGHT_COMMIT)),
        ],
        [1, 1],
        [24, 24],
    )


# --- the batch ------------------------------------------------------------------------------


def _source(function, flag: str, value: bool, pointers=("a_ptr", "b_ptr"), descriptor=False):
    signature = {"desc": DESCRIPTOR} if descriptor else {}
    signature.update({name: "*fp16" for name in pointers})
    signature.update({"out_ptr": "*fp32", flag: "constexpr"})
    return tlx.ASTSource(fn=function, signature=signature, constexprs={flag: value})


def seeds():
    """(name, source factory (takes the flag that keeps the ordering), target, the two
    (file, line) the check must report), as kernels.seeds()."""
    file_name = __file__.rsplit("/", 1)[-1]

    def pair(name, function, flag, places, **source):
        return (
            name,
            lambda value: _source(function, flag, value, **source),
            SM100A,
            frozenset((file_name, _line(where, text)) for where, text in places),
        )

    return (
        pair(
            "a commit waited for with the parity of the phase before the fresh barrier's",
            commit_waited_with_wrong_parity,
            "RIGHT_PARITY",
            [
                (commit_waited_with_wrong_parity, "tcgen05_mma("),
                (_store_acc, "values = acc.load("),
            ],
        ),
        pair(
            "an epilogue releases its TMEM accumulator before loading it",
            accumulator_released_before_load,
            "RIGHT_RELEASE",
            [
                (_multiply_into_turns, "tcgen05_mma(a, b, acc.index(turn)"),
                (_drain_turns, "values = acc.index(turn).load("),
            ],
        ),
        pair(
            "scales written from registers, copied to TMEM without a fence",
            tmem_copy_without_fence,
            "FENCE",
            [
                (tmem_copy_without_fence, "scales.index(0).store("),
                (tmem_copy_without_fence, "tcgen05_copy("),
            ],
            pointers=(),
        ),
        pair(
            "a TMEM load of a tcgen05_copy's destination before its commit is waited for",
            tmem_load_before_copy_lands,
            "RIGHT_WAIT",
            [(tmem_load_before_copy_lands, "tcgen05_copy("), (_store_scales, "values = copied")],
            pointers=(),
        ),
        pair(
            "P announced before its TMEM store, which the P V product reads",
            p_announced_before_stored,
            "RIGHT_ORDER",
            [
                (_softmax, "p_tiles.index(0).store("),
                (_s_then_pv, "tcgen05_mma(p_tiles.index(0)"),
            ],
            pointers=("q_ptr", "k_ptr"),
        ),
        pair(
            "two MMAs of a K loop both complete acc_ready, which counts one arrival",
            two_mmas_signal_one_barrier,
            "RIGHT_SIGNAL",
            [
                (two_mmas_signal_one_barrier, "tcgen05_mma(a.slice(K, K, dim=1)"),
                (_store_acc, "values = acc.load("),
            ],
        ),
        pair(
            "an MMA warp releases a ring stage at issue, not with a commit",
            stage_released_at_issue,
            "RIGHT_RELEASE",
            [
                (_load_stages, "tma_load(desc,"),
                (_multiply_stages, "tcgen05_mma("),
            ],
            pointers=("a_ptr",),
            descriptor=True,
        ),
        pair(
            "an MMA committed by a partition that issued none",
            commit_in_another_partition,
            "RIGHT_COMMIT",
            [(_issue_mma, "tcgen05_mma("), (_store_acc, "values = acc.load(")],
        ),
    )
