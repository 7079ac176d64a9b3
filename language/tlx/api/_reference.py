"""The reference TLX's names, where Gluon has one meaning for them (docs/porting.md).

A kernel written for the reference TLX fork calls ``tlx.local_load(buf[0])``,
``tlx.barrier_wait(bars[i], phase)``, ``tlx.async_dot(a, b, acc)``... Each such name
here is a thin builtin with the reference's parameters that emits the Gluon operation
of the same meaning (Hopper: TMA, mbarriers, ``warpgroup_mma``; Blackwell:
``tcgen05_mma``, ``tcgen05_commit``, TMEM). Where Gluon needs what the reference
infers, a register layout above all, the builtin takes it as a keyword argument and,
without it, says which layout would do. Reference names with no single meaning here
(``async_tasks``, named barriers, ...) are in ``NOT_PORTED``: ``tlx.NAME`` says what to
use instead.

As in ``_core``, each builtin checks its arguments (``_checks``) and calls one
function of ``_semantic``.
"""

from __future__ import annotations

import ast

from triton.experimental.gluon import language as ttgl
from triton.language.core import _unwrap_if_constexpr

from .._errors import TLXError
from . import _checks as checks
from . import _semantic as emit
from ._core import buffered_tensor, default_layout, tlx_builtin
from ._state import active_trace


class barrier_array_type(ttgl.shared_memory_descriptor_type):
    """The type of ``tlx.alloc_barriers``' value: Gluon's shared memory descriptor of
    ``[num_barriers, 1]`` int64 mbarriers, cloned (loops, calls, partitions) as a
    ``barrier_array``."""

    def _unflatten_ir(self, handles, cursor):
        value = barrier_array(
            handles[cursor], self.element_ty, self.shape, self.layout, self.alloc_shape
        )
        return value, cursor + 1

    def mangle(self) -> str:
        return f"TLXBARS{super().mangle()}TLXBARS"


class barrier_array(ttgl.shared_memory_descriptor):
    """An array of initialized mbarriers (``tlx.alloc_barriers``): Gluon's shared
    memory descriptor, which ``bars[i]`` (as ``bars.index(i)``) indexes."""

    def __init__(self, handle, element_ty, shape, layout, alloc_shape):
        super().__init__(handle, element_ty, shape, layout, alloc_shape)
        self.type = barrier_array_type(element_ty, shape, layout, alloc_shape)

    @classmethod
    def _of_descriptor(cls, descriptor):
        kind = descriptor.type
        return cls(descriptor.handle, kind.element_ty, kind.shape, kind.layout, kind.alloc_shape)

    @tlx_builtin
    def __getitem__(self, index, _semantic=None, _generator=None):
        """``bars[i]``: mbarrier ``i`` (an int or an int32 scalar), as ``bars.index(i)``."""
        index = checks.barrier_index(self, index)
        return emit.barrier(self, index, _semantic)


def _call_text(generator, position: int, fallback: str) -> str:
    """The source of argument ``position`` of the builtin call being visited."""
    node = generator.cur_node
    arguments = getattr(node, "args", ())
    if position < len(arguments):
        return ast.unparse(arguments[position])
    return fallback


# --- buffers ------------------------------------------------------------------


@tlx_builtin
def local_load(src, token=None, layout=None, _semantic=None, _generator=None):
    """Registers loaded from one SMEM or TMEM buffer (``buf[i]``) in register layout
    ``layout``, which Gluon needs: without it the error names one that would do (a
    TMEM buffer: ``tlx.compat.tmem_reg_layout(...)`` of that buffer)."""
    src = checks.memory_descriptor("tlx.local_load", "src", src)
    checks.no_token("tlx.local_load", token)
    layout = _unwrap_if_constexpr(layout)
    if layout is None:
        num_warps = checks.num_warps(_semantic, _generator)
        src_text = _call_text(_generator, 0, "src")
        raise TLXError(
            f"tlx.local_load of {src_text} needs its register layout, layout=: "
            f"{checks.register_layout_hint(src, src_text, num_warps)}"
        )
    checks.register_layout("tlx.local_load", layout)
    return emit.local_load(src, layout, _semantic)


@tlx_builtin
def local_store(dst, src, _semantic=None, _generator=None) -> None:
    """Stores the register tensor ``src`` into one SMEM or TMEM buffer ``dst``."""
    dst = checks.memory_descriptor("tlx.local_store", "dst", dst)
    checks.register_tensor("tlx.local_store", "src", src)
    emit.local_store(dst, src, _semantic)


@tlx_builtin
def local_slice(buffer, offset, shape, _semantic=None, _generator=None):
    """The same-rank sub-view of ``buffer`` at element ``offset`` of ``shape``
    (Gluon's ``slice`` along each dimension that changes; TMEM: columns only)."""
    buffer = checks.memory_descriptor("tlx.local_slice", "buffer", buffer)
    cuts = checks.slice_cuts(buffer, offset, shape)
    return emit.local_slice(buffer, cuts, _semantic)


@tlx_builtin
def subslice(buffer, offset, size, _semantic=None, _generator=None):
    """TMEM columns ``offset .. offset + size`` of ``buffer`` (Gluon's ``slice``)."""
    buffer = checks.tmem_descriptor("tlx.subslice", "buffer", buffer, "use tlx.local_slice")
    columns = buffer.shape[-1]
    offset = checks.bounded_int("tlx.subslice", "offset", offset, 0, columns - 1)
    size = checks.bounded_int("tlx.subslice", "size", size, 1, columns - offset)
    return emit.local_slice(buffer, ((buffer.rank - 1, offset, size),), _semantic)


@tlx_builtin
def local_trans(buffer, dims=(1, 0), _semantic=None, _generator=None):
    """``buffer`` (SMEM) with its dimensions in the order ``dims`` (Gluon's ``permute``)."""
    buffer = checks.smem_descriptor("tlx.local_trans", buffer)
    dims = checks.permutation(buffer, dims)
    return emit.local_trans(buffer, dims, _semantic)


@tlx_builtin
def local_reshape(buffer, shape, _semantic=None, _generator=None):
    """``buffer`` (SMEM) viewed with another ``shape`` of as many elements (Gluon's
    ``reshape``)."""
    buffer = checks.smem_descriptor("tlx.local_reshape", buffer)
    shape = checks.reshaped(buffer, shape)
    return emit.local_reshape(buffer, shape, _semantic)


@tlx_builtin
def local_reinterpret(buffer, dtype, shape, layout=None, _semantic=None, _generator=None):
    """The bytes of ``buffer`` viewed as ``shape`` x ``dtype`` with ``layout``. Without a
    layout, ``buffer``'s own when the element width and rank stay; else the error names
    one (``tlx.default_layout``)."""
    buffer = checks.memory_descriptor("tlx.local_reinterpret", "buffer", buffer)
    dtype = checks.scalar_dtype("tlx.local_reinterpret", dtype)
    shape = checks.buffer_shape(shape)
    layout = checks.reinterpret_layout(
        buffer, dtype, shape, _unwrap_if_constexpr(layout), default_layout
    )
    return emit.local_reinterpret(buffer, dtype, shape, layout, _semantic)


@tlx_builtin
def dtype_of(x, _semantic=None, _generator=None):
    """The element type of ``x``: a tensor (a pointer's pointee), a memory descriptor, a
    ``tlx.local_alloc`` buffer or a TMA tensor descriptor."""
    if isinstance(x, buffered_tensor):
        return ttgl.constexpr(x.dtype)
    return ttgl.constexpr(checks.element_type("tlx.dtype_of", x))


@tlx_builtin
def size_of(dtype, _semantic=None, _generator=None):
    """The size of ``dtype`` in bytes."""
    dtype = checks.scalar_dtype("tlx.size_of", dtype)
    bits = dtype.primitive_bitwidth
    if bits % 8:
        raise TLXError(f"tlx.size_of({dtype}): a {bits}-bit element has no whole byte size")
    return ttgl.constexpr(bits // 8)


# --- barriers -----------------------------------------------------------------


@tlx_builtin
def alloc_barriers(num_barriers, arrive_count=1, _semantic=None, _generator=None):
    """``num_barriers`` mbarriers, each initialized to expect ``arrive_count``
    arrivals; ``bars[i]`` is one."""
    count = checks.positive_int(num_barriers, "tlx.alloc_barriers: num_barriers")
    arrivals = checks.positive_int(arrive_count, "tlx.alloc_barriers: arrive_count")
    return barrier_array._of_descriptor(emit.alloc_barriers(count, arrivals, _semantic))


@tlx_builtin
def barrier_expect_bytes(bar, size, pred=None, _semantic=None, _generator=None) -> None:
    """The bytes the current phase of ``bar`` waits for (Gluon's ``mbarrier.expect``)."""
    bar = checks.one_barrier("tlx.barrier_expect_bytes", bar)
    size = checks.positive_int(
        size,
        "tlx.barrier_expect_bytes: size",
        " (Gluon's mbarrier.expect; a variable that holds it is one when it is declared "
        "`name: tl.constexpr = ...`)",
    )
    emit.barrier_expect_bytes(bar, size, checks.predicate(pred), _semantic)


@tlx_builtin
def barrier_wait(bar, phase, pred=None, _semantic=None, _generator=None) -> None:
    """Waits for the phase of parity ``phase`` of ``bar`` (``mbarrier.wait``)."""
    bar = checks.one_barrier("tlx.barrier_wait", bar)
    emit.barrier_wait(bar, phase, checks.predicate(pred), _semantic)


@tlx_builtin
def barrier_arrive(bar, arrive_count=1, _semantic=None, _generator=None) -> None:
    """Arrives ``arrive_count`` times on ``bar`` (``mbarrier.arrive``)."""
    bar = checks.one_barrier("tlx.barrier_arrive", bar)
    count = checks.positive_int(arrive_count, "tlx.barrier_arrive: arrive_count")
    emit.barrier_arrive(bar, count, _semantic)


# --- copies and fences --------------------------------------------------------


@tlx_builtin
def async_descriptor_load(
    desc,
    result,
    offsets,
    barrier,
    pred=None,
    multicast_targets=None,
    two_ctas=False,
    _semantic=None,
    _generator=None,
) -> None:
    """A TMA load of the tile of ``desc`` at ``offsets`` into ``result`` (one SMEM
    buffer), completion counted on ``barrier``."""
    checks.tma_descriptor("tlx.async_descriptor_load", desc)
    result = checks.smem_descriptor("tlx.async_descriptor_load", result, "result")
    barrier = checks.one_barrier("tlx.async_descriptor_load", barrier)
    checks.single_cta_copy("tlx.async_descriptor_load", multicast_targets, two_ctas)
    offsets = checks.offsets("tlx.async_descriptor_load", desc, offsets)
    emit.async_descriptor_load(desc, result, offsets, barrier, checks.predicate(pred), _semantic)


@tlx_builtin
def async_descriptor_store(
    desc, source, offsets, store_reduce=None, _semantic=None, _generator=None
) -> None:
    """A TMA store of ``source`` (one SMEM buffer) into the tile of ``desc`` at
    ``offsets``; ``store_reduce="add"`` (min, max, and, or, xor) reduces into it."""
    checks.tma_descriptor("tlx.async_descriptor_store", desc)
    source = checks.smem_descriptor("tlx.async_descriptor_store", source, "source")
    offsets = checks.offsets("tlx.async_descriptor_store", desc, offsets)
    reduce = checks.store_reduce(_unwrap_if_constexpr(store_reduce))
    emit.async_descriptor_store(desc, source, offsets, reduce, _semantic)


@tlx_builtin
def async_descriptor_store_wait(pendings, _semantic=None, _generator=None) -> None:
    """Waits until at most ``pendings`` TMA stores are in flight (``tma.store_wait``)."""
    pendings = checks.count("tlx.async_descriptor_store_wait", "pendings", pendings)
    emit.async_descriptor_store_wait(pendings, _semantic)


@tlx_builtin
def fence(scope, _semantic=None, _generator=None) -> None:
    """A memory fence: ``scope="async_shared"`` orders this thread's shared memory
    accesses before later asynchronous-proxy ones (TMA, wgmma, tcgen05):
    ``fence_async_shared``, the one fence Gluon has."""
    checks.fence_scope(_unwrap_if_constexpr(scope))
    emit.fence_async_shared(_semantic)


@tlx_builtin
def tmem_copy(src, dst, _semantic=None, _generator=None) -> None:
    """Copies one SMEM buffer into one TMEM buffer (Blackwell: ``tcgen05_copy``)."""
    checks.blackwell_target("tlx.tmem_copy")
    src = checks.smem_descriptor("tlx.tmem_copy", src, "src")
    dst = checks.tmem_descriptor("tlx.tmem_copy", "dst", dst, "the destination is TMEM")
    emit.tmem_copy(src, dst, _semantic)


# --- matrix products ----------------------------------------------------------


@tlx_builtin
def async_dot(
    A,
    B,
    acc=None,
    use_acc=None,
    pred=None,
    mBarriers=(),
    two_ctas=False,
    out_dtype=ttgl.float32,
    _semantic=None,
    _generator=None,
):
    """``acc (+)= A @ B`` started asynchronously. Hopper: ``warpgroup_mma`` with a
    register accumulator (``acc`` required: Gluon needs its layout), returning the
    accumulator token that ``tlx.async_dot_wait`` resolves. Blackwell: ``tcgen05_mma``
    into a TMEM accumulator ``acc``, completion signalled on ``mBarriers``; returns
    None."""
    capability = active_trace().capability
    use_acc = True if use_acc is None else use_acc
    if checks.is_hopper(capability):
        num_warps = checks.num_warps(_semantic, _generator)
        checks.wgmma_operands(A, B, acc, pred, mBarriers, two_ctas, out_dtype, num_warps)
        return emit.warpgroup_mma(A, B, acc, use_acc, _semantic)
    barriers = checks.tcgen05_operands(capability, A, B, acc, mBarriers, two_ctas, out_dtype)
    emit.tcgen05_mma(A, B, acc, use_acc, checks.predicate(pred), barriers, _semantic)
    return None


@tlx_builtin
def async_dot_wait(pendings, inp, _semantic=None, _generator=None):
    """Waits until at most ``pendings`` wgmma groups are in flight and returns the
    accumulator ``inp`` (Hopper: ``warpgroup_mma_wait``)."""
    checks.hopper_wait(active_trace().capability)
    pendings = checks.count("tlx.async_dot_wait", "pendings", pendings)
    return emit.warpgroup_mma_wait(pendings, inp, _semantic)


@tlx_builtin
def tcgen05_commit(mBarrier, two_ctas=False, _semantic=None, _generator=None) -> None:
    """Makes ``mBarrier`` track the completion of every earlier tcgen05 operation of
    this thread (Blackwell: ``tcgen05_commit``)."""
    checks.blackwell_target("tlx.tcgen05_commit")
    bar = checks.one_barrier("tlx.tcgen05_commit", mBarrier)
    checks.single_cta_copy("tlx.tcgen05_commit", None, two_ctas)
    emit.tcgen05_commit(bar, _semantic)


# Reference names with no single meaning here, or that need the fork's own passes:
# what to use instead (tlx/__init__.py's __getattr__ raises it; docs/porting.md).
_WARP_SPECIALIZE = (
    "warp specialization is Gluon's ttgl.warp_specialize([(default_fn, args), (worker_fn, "
    "args), ...], worker_num_warps=[...], worker_num_regs=[...]): the body of each "
    "tlx.async_task becomes a @gluon.jit function taking the values it uses"
)
NOT_PORTED = {
    "async_tasks": _WARP_SPECIALIZE,
    "async_task": _WARP_SPECIALIZE,
    "async_task_replica_id": (
        "ttgl.warp_specialize has no replicas: list the worker function once per replica and "
        "pass each its replica number as an argument"
    ),
    "named_barrier_arrive": (
        "Gluon has no named barriers: order the partitions with mbarriers (tlx.alloc_barriers, "
        "tlx.barrier_arrive, tlx.barrier_wait)"
    ),
    "named_barrier_wait": (
        "Gluon has no named barriers: order the partitions with mbarriers (tlx.alloc_barriers, "
        "tlx.barrier_arrive, tlx.barrier_wait)"
    ),
    "async_load": (
        "cp.async is Gluon's triton.experimental.gluon.language.nvidia.ampere.async_copy: "
        "async_copy_global_to_shared(smem, pointer, mask) (async_load from Triton 3.9), with no "
        "`other` (masked elements are not written) and mbarrier_arrive(bar) for a barrier"
    ),
    "async_load_commit_group": (
        "use commit_group() of triton.experimental.gluon.language.nvidia.ampere.async_copy"
    ),
    "async_load_wait_group": (
        "use wait_group(pendings) of triton.experimental.gluon.language.nvidia.ampere.async_copy"
    ),
    "async_dot_scaled": (
        "the block-scaled MMA is Gluon's blackwell.tcgen05_mma_scaled(a, b, acc, a_scale, "
        "b_scale, a_type, b_type, use_acc=..., mbarriers=[...]), its scales in TMEM "
        "(TensorMemoryScalesLayout)"
    ),
    "fence_async_shared": 'use tlx.fence("async_shared")',
}
