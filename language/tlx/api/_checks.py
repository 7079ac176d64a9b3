"""The argument checks of the TLX builtins: the API boundary.

Each builtin of ``_core`` checks its arguments with these, once, before it calls
``_semantic``; nothing below the builtins checks them again. Besides the types
and values of the arguments they check what the trace state says of them: that a
builtin runs inside a ``@tlx.jit`` kernel, that a buffer may join the spec it
reuses, and that a spec is sealed, grown or given its overlap in the block that
created it (a loop, branch or partition may not allocate the region).
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language._layouts import SharedLayout
from triton.experimental.gluon.language._semantic import GluonSemantic
from triton.experimental.gluon.language.nvidia import blackwell
from triton.language.core import _unwrap_if_constexpr, base_value

from .. import compat
from .._errors import TLXError, location_of_call
from .._kinds import storage_kind
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
