"""The argument checks of the TLX builtins: the API boundary.

Each builtin of ``_core`` checks its arguments with these, once, before it calls
``_semantic``; nothing below the builtins checks them again. Besides the types
and values of the arguments they check what the trace state says of them: that a
builtin runs inside a ``@tlx.jit`` kernel, that a buffer may join the spec it
reuses, and that a spec is sealed, grown or given its overlap in the block that
created it (a loop, branch or partition may not allocate the region).
"""

from __future__ import annotations

import math

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language._layouts import DistributedLayout, SharedLayout
from triton.experimental.gluon.language._semantic import GluonSemantic
from triton.experimental.gluon.language.nvidia import blackwell
from triton.experimental.gluon.language.nvidia.hopper import tma
from triton.language.core import _unwrap_if_constexpr, base_value

from .. import compat
from .._errors import TLXError, location_of_call
from .._kinds import storage_kind
from ._descriptors import dtype_text
from ._state import AllocationState, active_trace


def check_context(name: str, semantic) -> None:
    """Raises unless a TLX builtin called ``name`` runs while a ``@tlx.jit``
    kernel is traced (Triton's code generator passes ``_semantic``)."""
    if semantic is None:
        raise TLXError(f"{name} can only be called inside a @tlx.jit kernel")
    if not isinstance(semantic, GluonSemantic):
        raise TLXError(
            f"{name} is a Gluon builtin: decorate the kernel with @tlx.jit instead of @triton.jit"
        )
    if active_trace() is None:
        raise TLXError(
            f"{name} is used outside a @tlx.jit kernel: decorate the kernel with @tlx.jit "
            "(to compile it ahead of time use tlx.ASTSource, not GluonASTSource)"
        )


def expect_storage(value, what: str) -> storage_kind:
    """``value`` as a storage_kind, or a TypeError naming ``what``."""
    value = _unwrap_if_constexpr(value)
    if not isinstance(value, storage_kind):
        raise TypeError(f"{what} must be a tlx.storage_kind, got {type(value).__name__} {value!r}")
    return value


def check_new_root(root, generator) -> None:
    """Raises when ``root``, a new tree or phases whose leaves all belong to one spec,
    comes after that spec was sealed by a buffer's first use (it would define an
    overlap the plan no longer takes: docs/semantics.md, "Implicit overlap")."""
    if compat.in_loop_carry_discovery(generator):
        return
    specs = {allocation.spec for allocation in root.buffers()}
    if len(specs) != 1:
        return
    (spec,) = specs
    if spec.sealed and spec.overlap_location is None and not spec.private:
        raise TLXError(
            f"{root.describe()} is over buffers of {spec.describe()} only, which is already "
            f"sealed by {spec.sealed_by}: build the tree before the first use of any of "
            "the spec's buffers, or give it to set_buffer_overlap before that use"
        )


def checked_index(buffer, index, builder, generator):
    """``index`` of a use of ``buffer``, checked: an int in range (a constexpr
    unwrapped) or an int32 scalar. When the use seals the buffer's spec, the
    builder must insert into the block that created the spec."""
    allocation = buffer.allocation
    if allocation is not None and not allocation.spec.sealed:
        spec = allocation.spec
        reason = allocation.first_use_at(location_of_call(generator))
        spec.check_block(
            builder,
            f"sealing it by {reason}",
            "sealing allocates the region, which must dominate every use. Call "
            f"{spec.name}.set_buffer_overlap(...) (a tree built without it does not seal the "
            "spec) or use one of its buffers once before the loop, branch or partition",
        )
    name = allocation.name if allocation is not None else "buffered_tensor"
    if isinstance(index, ttgl.constexpr):
        index = index.value
    if isinstance(index, bool):
        raise TypeError(f'buffer "{name}": the index must be an integer, got {index!r}')
    if isinstance(index, int):
        if not 0 <= index < buffer.num:
            raise TLXError(
                f'buffer "{name}" has {buffer.num} buffers: index {index} is out of range '
                f"[0, {buffer.num})"
            )
        return index
    if isinstance(index, ttgl.tensor) and index.type == ttgl.int32:
        return index
    found = index.type if isinstance(index, ttgl.tensor) else type(index).__name__
    raise TypeError(f'buffer "{name}": the index must be an int or an int32 scalar, got {found}')


def positive_int(value, what: str, constant_hint: str = "") -> int:
    value = _unwrap_if_constexpr(value)
    if isinstance(value, base_value):
        raise TLXError(
            f"{what} must be a compile-time constant{constant_hint}, got a runtime value"
        )
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise TLXError(f"{what} must be positive, got {value}")
    return value


def buffer_shape(shape) -> tuple[int, ...]:
    shape = _unwrap_if_constexpr(shape)
    if not isinstance(shape, (tuple, list, ttgl.tuple)):
        raise TypeError(f"shape must be a tuple of ints, got {type(shape).__name__} {shape!r}")
    dims = tuple(positive_int(dim, "every dimension of shape") for dim in shape)
    if not dims:
        raise TLXError("shape must have at least one dimension")
    return dims


def check_layout(layout, shape, storage: storage_kind):
    if storage is storage_kind.tmem:
        if not isinstance(layout, blackwell.TensorMemoryLayout):
            raise TypeError(
                f"a tmem buffer needs a TensorMemoryLayout, got {type(layout).__name__} {layout!r}"
            )
        return
    if not isinstance(layout, SharedLayout):
        raise TypeError(
            f"an smem buffer needs a shared layout, got {type(layout).__name__} {layout!r}"
        )
    rank = getattr(layout, "rank", None)
    if isinstance(layout, ttgl.SwizzledSharedLayout):
        rank = len(layout.order)
    if rank is not None and rank != len(shape):
        raise TLXError(
            f"layout {layout} has rank {rank} but one buffer has shape {list(shape)} (rank "
            f"{len(shape)}): give the layout of one buffer, without the num dimension"
        )


def check_reuse(reuse, name: str, storage: storage_kind, builder) -> None:
    """Raises unless buffer ``name`` of ``storage`` may join ``reuse`` (a SpecState, or
    the AllocationState of a legacy ``reuse=buffer``) here: the same storage, a spec
    not sealed yet (a legacy reuse may join a sealed region), and the block that
    created the spec."""
    legacy = isinstance(reuse, AllocationState)
    spec = reuse.spec if legacy else reuse
    if spec.storage is not storage:
        raise TLXError(
            f'local_alloc of "{name}" with storage={storage.value} cannot reuse '
            f"{spec.describe()}, whose storage is {spec.storage.value}"
        )
    if spec.sealed:
        if not legacy:
            raise TLXError(
                f'local_alloc of "{name}" reuses {spec.describe()}, which is already sealed by '
                f"{spec.sealed_by}: allocate every buffer of a spec before set_buffer_overlap "
                "and before the first use of any of its buffers"
            )
        return
    spec.check_block(
        builder,
        f'adding buffer "{name}" to it',
        "allocate every buffer of a spec in the block that created the spec",
    )


# --- the reference's names (_reference) ----------------------------------------

_SMEM = ttgl.shared_memory_descriptor
_TMEM = blackwell.tensor_memory_descriptor
_STORE_REDUCTIONS = ("add", "min", "max", "and", "or", "xor")


def _kind(value) -> str:
    return type(value).__name__


def _whole_buffers(op: str, what: str, value):
    """The error for a whole ``tlx.local_alloc`` buffer where one buffer is meant."""
    return TLXError(
        f"{op}: {what} is all {value.num} buffers of a tlx.local_alloc: give one, "
        f"{what}[i] (or .index(i))"
    )


def memory_descriptor(op: str, what: str, value):
    """``value`` if it is one SMEM or TMEM buffer (Gluon's memory descriptor)."""
    if isinstance(value, (_SMEM, _TMEM)):
        return value
    if hasattr(value, "num") and hasattr(value, "allocation"):
        raise _whole_buffers(op, what, value)
    raise TypeError(f"{op}: {what} must be one SMEM or TMEM buffer (buf[i]), got {_kind(value)}")


def smem_descriptor(op: str, value, what: str = "buffer"):
    """``value`` if it is one SMEM buffer."""
    if isinstance(value, _TMEM):
        raise TLXError(f"{op}: {what} is a TMEM buffer; Gluon has this operation for SMEM only")
    return memory_descriptor(op, what, value)


def tmem_descriptor(op: str, what: str, value, smem_hint: str):
    """``value`` if it is one TMEM buffer; an SMEM one gets ``smem_hint``."""
    if isinstance(value, _SMEM):
        raise TLXError(
            f"{op}: {what} is an SMEM buffer, where a TMEM buffer is needed: {smem_hint}"
        )
    return memory_descriptor(op, what, value)


def no_token(op: str, token) -> None:
    if _unwrap_if_constexpr(token) is not None:
        raise TLXError(f"{op}: Gluon orders TMEM accesses without tokens: leave token out")


def num_warps(semantic, generator) -> int:
    """The warps that run the code being traced (a partition's own)."""
    return _unwrap_if_constexpr(ttgl.num_warps(_semantic=semantic, _generator=generator))


def blocked_layout_text(rank: int, num_warps: int) -> str:
    """A blocked register layout over ``num_warps`` warps for a tensor of ``rank``."""
    ones = [1] * rank
    threads = [*ones[:-1], 32]
    warps = [num_warps, *ones[1:]]
    order = list(reversed(range(rank)))
    return f"ttgl.BlockedLayout({ones}, {threads}, {warps}, {order})"


def register_layout_hint(src, src_text: str, num_warps: int) -> str:
    """A register layout that a load of ``src`` (written ``src_text``) may use, as the
    kernel would write it."""
    if isinstance(src, _TMEM):
        return (
            f"layout=tlx.compat.tmem_reg_layout({dtype_text(src.dtype)}, {list(src.shape)}, "
            f"{src_text}.layout, {num_warps}), the TMEM register layout of this buffer "
            f"({src.type.layout!r}) over {num_warps} warps"
        )
    return f"layout={blocked_layout_text(len(src.shape), num_warps)} would do"


def register_layout(op: str, layout) -> None:
    if not isinstance(layout, DistributedLayout):
        raise TypeError(
            f"{op}: layout must be a register (distributed) layout, got {_kind(layout)}"
        )


def register_tensor(op: str, what: str, value) -> None:
    if not isinstance(value, ttgl.tensor) or not value.type.is_block():
        raise TypeError(f"{op}: {what} must be a register tensor, got {_kind(value)}")


def _int_list(op: str, what: str, values, rank: int) -> list[int]:
    values = _unwrap_if_constexpr(values)
    if not isinstance(values, (tuple, list, ttgl.tuple)) or len(values) != rank:
        raise TypeError(f"{op}: {what} must be {rank} ints (one per dimension), got {values!r}")
    return [_int(op, what, v) for v in values]


def _int(op: str, what: str, value) -> int:
    value = _unwrap_if_constexpr(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}: {what} must be compile-time ints, got {_kind(value)} {value!r}")
    return value


def bounded_int(op: str, what: str, value, low: int, high: int) -> int:
    value = _int(op, what, value)
    if not low <= value <= high:
        raise TLXError(f"{op}: {what} {value} is outside [{low}, {high}]")
    return value


def slice_cuts(buffer, offset, shape) -> tuple[tuple[int, int, int], ...]:
    """(dimension, start, length) of each dimension ``local_slice`` narrows."""
    full = list(buffer.shape)
    offset = _int_list("tlx.local_slice", "offset", offset, len(full))
    shape = _int_list("tlx.local_slice", "shape", shape, len(full))
    cuts = []
    for dim, (start, length, size) in enumerate(zip(offset, shape, full, strict=True)):
        if start < 0 or length < 1 or start + length > size:
            raise TLXError(
                f"tlx.local_slice: dimension {dim} of {full}: offset {start} and shape {length} "
                f"leave the buffer"
            )
        if (start, length) != (0, size):
            cuts.append((dim, start, length))
    if isinstance(buffer, _TMEM) and any(dim != len(full) - 1 for dim, _, _ in cuts):
        raise TLXError("tlx.local_slice: a TMEM buffer is sliced by columns only (keep every row)")
    return tuple(cuts)


def permutation(buffer, dims) -> list[int]:
    rank = len(buffer.shape)
    dims = _int_list("tlx.local_trans", "dims", dims, rank)
    if sorted(dims) != list(range(rank)):
        raise TLXError(f"tlx.local_trans: dims {dims} is not a permutation of {list(range(rank))}")
    return dims


def reshaped(buffer, shape) -> list[int]:
    shape = list(buffer_shape(shape))
    if math.prod(shape) != math.prod(buffer.shape):
        raise TLXError(
            f"tlx.local_reshape: {shape} has {math.prod(shape)} elements, the buffer "
            f"{list(buffer.shape)} has {math.prod(buffer.shape)}"
        )
    return shape


def scalar_dtype(op: str, dtype):
    dtype = _unwrap_if_constexpr(dtype)
    if not isinstance(dtype, ttgl.dtype) or dtype.is_block() or dtype == ttgl.void:
        raise TypeError(f"{op}: dtype must be a scalar Gluon dtype, got {_kind(dtype)} {dtype!r}")
    return dtype


def reinterpret_layout(buffer, dtype, shape, layout, default_layout):
    """The layout of ``local_reinterpret``: ``layout``, or the buffer's own when the
    element width and rank stay (else an error naming ``default_layout``'s)."""
    if layout is not None:
        return layout
    old = buffer.dtype.primitive_bitwidth
    if dtype.primitive_bitwidth == old and len(shape) == len(buffer.shape):
        return buffer.type.layout
    storage = storage_kind.tmem if isinstance(buffer, _TMEM) else storage_kind.smem
    suggestion = default_layout(shape, dtype, storage)
    raise TLXError(
        f"tlx.local_reinterpret to {list(shape)} x {dtype} needs layout=: the buffer's own "
        f"layout is for {old}-bit elements of rank {len(buffer.shape)}; "
        f"layout={suggestion!r} (tlx.default_layout) would do"
    )


def element_type(op: str, value):
    """The element type of a tensor (a pointer's pointee), a memory descriptor or a
    TMA tensor descriptor."""
    if isinstance(value, ttgl.tensor):
        dtype = value.dtype
        return dtype.element_ty if dtype.is_ptr() else dtype
    if isinstance(value, (_SMEM, _TMEM)):
        return value.dtype
    block_type = getattr(value, "block_type", None)
    if block_type is not None:
        return block_type.element_ty
    dtype = _unwrap_if_constexpr(value)
    if isinstance(dtype, ttgl.dtype):
        return dtype.element_ty if dtype.is_ptr() else dtype
    raise TypeError(f"{op}: expects a tensor, a buffer or a descriptor, got {_kind(value)}")


def barrier_index(bars, index):
    index = _unwrap_if_constexpr(index)
    count = bars.shape[0]
    if isinstance(index, bool):
        raise TypeError(f"mbarrier array: the index must be an integer, got {index!r}")
    if isinstance(index, int):
        if not 0 <= index < count:
            raise TLXError(f"mbarrier array of {count}: index {index} is out of range [0, {count})")
        return index
    if isinstance(index, ttgl.tensor) and index.type == ttgl.int32:
        return index
    raise TypeError(
        f"mbarrier array: the index must be an int or an int32 scalar, got {_kind(index)}"
    )


def one_barrier(op: str, bar):
    """``bar`` if it is one mbarrier (``bars[i]``), not an array."""
    if not isinstance(bar, _SMEM) or bar.dtype != ttgl.int64:
        raise TypeError(
            f"{op}: expects one mbarrier (bars[i] of tlx.alloc_barriers), got {_kind(bar)}"
        )
    if len(bar.shape) != 1:
        raise TLXError(
            f"{op}: expects one mbarrier, got an array of {bar.shape[0]}: index it, bars[i]"
        )
    return bar


def predicate(pred):
    """Gluon's predicate for the reference's ``pred=None`` (always)."""
    return True if _unwrap_if_constexpr(pred) is None else pred


def tma_descriptor(op: str, desc) -> None:
    if not isinstance(desc, tma.tensor_descriptor):
        raise TypeError(f"{op}: desc must be a TMA tensor descriptor, got {_kind(desc)}")


def offsets(op: str, desc, values) -> list:
    values = _unwrap_if_constexpr(values)
    rank = len(desc.block_type.shape)
    if not isinstance(values, (tuple, list, ttgl.tuple)) or len(values) != rank:
        raise TypeError(
            f"{op}: offsets must be {rank} coordinates (one per dimension), got {values!r}"
        )
    return list(values)


def single_cta_copy(op: str, multicast_targets, two_ctas) -> None:
    if _unwrap_if_constexpr(multicast_targets) or _unwrap_if_constexpr(two_ctas):
        raise TLXError(
            f"{op}: multicast and two-CTA operations have no single Gluon form here: use "
            "Gluon's own (tma.async_load(..., multicast=True), tcgen05_mma with a two-CTA "
            "TensorMemoryLayout) with a cluster layout"
        )


def store_reduce(kind):
    """Gluon's TMA reduction for ``store_reduce`` (None: a plain store)."""
    if kind is None:
        return None
    if kind not in _STORE_REDUCTIONS:
        raise TLXError(
            f"tlx.async_descriptor_store: store_reduce must be None or one of "
            f"{', '.join(_STORE_REDUCTIONS)}, got {kind!r}"
        )
    return compat.tma_reduce(kind)


def count(op: str, what: str, value) -> int:
    value = _unwrap_if_constexpr(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{op}: {what} must be a compile-time int >= 0, got {value!r}")
    return value


def fence_scope(scope) -> None:
    if scope != "async_shared":
        raise TLXError(
            f'tlx.fence: scope {scope!r} has no Gluon fence; the one Gluon has is "async_shared" '
            "(fence.proxy.async: shared memory writes before TMA, wgmma or tcgen05 reads)"
        )


def is_hopper(capability: int) -> bool:
    return capability // 10 == 9


def _is_blackwell(capability: int) -> bool:
    return 100 <= capability < 120


def blackwell_target(op: str) -> None:
    capability = active_trace().capability
    if not _is_blackwell(capability):
        raise TLXError(f"{op} is a tcgen05 operation: it needs sm_100a, not sm_{capability}")


def wgmma_operands(a, b, acc, pred, barriers, two_ctas, out_dtype, num_warps) -> None:
    """The operands of ``tlx.async_dot`` on Hopper (``warpgroup_mma``)."""
    if not isinstance(b, _SMEM):
        raise TypeError(f"tlx.async_dot: B must be one SMEM buffer (B[i]), got {_kind(b)}")
    if not isinstance(a, (_SMEM, ttgl.tensor)):
        raise TypeError(
            f"tlx.async_dot: A must be one SMEM buffer or a register tensor, got {_kind(a)}"
        )
    m, n = a.shape[0], b.shape[1]
    if acc is None:
        layout = (
            f"ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[{num_warps}, 1], "
            f"instr_shape=[16, {min(n, 256)}, 16])"
        )
        raise TLXError(
            "tlx.async_dot on Hopper (warpgroup_mma) needs the accumulator acc= in registers, "
            f"with its layout: acc=ttgl.zeros([{m}, {n}], "
            f"{dtype_text(_unwrap_if_constexpr(out_dtype))}, {layout}) would do"
        )
    if isinstance(acc, _TMEM):
        raise TLXError(
            "tlx.async_dot on Hopper: acc is a TMEM buffer; wgmma accumulates in registers"
        )
    register_tensor("tlx.async_dot", "acc", acc)
    _out_dtype(acc, out_dtype)
    if _unwrap_if_constexpr(pred) is not None:
        raise TLXError("tlx.async_dot on Hopper: wgmma takes no pred; put the call under an if")
    if _unwrap_if_constexpr(barriers):
        raise TLXError(
            "tlx.async_dot on Hopper: wgmma completes without mbarriers (mBarriers=); wait for "
            "it with tlx.async_dot_wait"
        )
    single_cta_copy("tlx.async_dot", None, two_ctas)


def _out_dtype(acc, out_dtype) -> None:
    out_dtype = _unwrap_if_constexpr(out_dtype)
    if acc.dtype != out_dtype:
        raise TLXError(
            f"tlx.async_dot: the accumulator is {acc.dtype} but out_dtype is {out_dtype}: "
            "give out_dtype the accumulator's type"
        )


def tcgen05_operands(capability, a, b, acc, barriers, two_ctas, out_dtype) -> list | None:
    """The operands of ``tlx.async_dot`` on Blackwell (``tcgen05_mma``); its mbarriers."""
    if not _is_blackwell(capability):
        raise TLXError(
            f"tlx.async_dot needs sm_90a (wgmma) or sm_100a (tcgen05), not sm_{capability}"
        )
    if not isinstance(a, (_SMEM, _TMEM)) or not isinstance(b, _SMEM):
        raise TypeError(
            "tlx.async_dot on Blackwell: A must be one SMEM or TMEM buffer and B one SMEM "
            f"buffer, got {_kind(a)} and {_kind(b)}"
        )
    if not isinstance(acc, _TMEM):
        raise TLXError(
            "tlx.async_dot on Blackwell (tcgen05_mma) needs acc=, one TMEM buffer (a "
            f"tlx.local_alloc(..., storage=tlx.storage_kind.tmem) buffer, acc[i]), got {_kind(acc)}"
        )
    _out_dtype(acc, out_dtype)
    single_cta_copy("tlx.async_dot", None, two_ctas)
    barriers = _unwrap_if_constexpr(barriers)
    barriers = list(barriers) if barriers else []
    for bar in barriers:
        one_barrier("tlx.async_dot: mBarriers", bar)
    return barriers or None


def hopper_wait(capability: int) -> None:
    if not is_hopper(capability):
        raise TLXError(
            "tlx.async_dot_wait waits for wgmma (Hopper); a tcgen05 MMA completes on the "
            "mbarriers given to tlx.async_dot(mBarriers=[...]) or tlx.tcgen05_commit: wait on "
            "them with tlx.barrier_wait"
        )
