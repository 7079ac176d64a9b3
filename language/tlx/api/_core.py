"""The TLX API inside Gluon kernels: its values, their types and its builtins.

The values follow Gluon's value protocol (``base_value`` / ``base_type`` with
``_flatten_ir`` / ``_unflatten_ir`` and ``mangle``) so they can be assigned,
passed to functions, captured by partitions and cloned into loop and branch
scopes (Triton 3.6 clones every live value when it enters a region):

* ``storage_alias_spec`` and ``reuse_group`` have no IR of their own (zero
  handles);
* a ``buffered_tensor`` is one handle, its view, once its spec is sealed, and
  zero handles before. A buffered_tensor whose spec is not sealed cannot be
  passed to a function or partition (its view does not exist yet).

A type carries a reference to the trace-time state of its value (not part of
its equality or mangling), so a clone made from the type is the same spec /
buffer. Rules about blocks (``SpecState.check_block``) stop a clone that
reached another function or a loop body from sealing or growing a spec.

As in Gluon's ``_core``, every builtin checks its arguments, here and only
here, and calls one function of ``_semantic``, which emits the IR.
"""

from __future__ import annotations

import functools
import inspect

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell
from triton.language.core import _unwrap_if_constexpr, base_type, base_value

from .. import planner
from .._errors import TLXError, location_of_call
from .._kinds import reuse_group_type, storage_kind
from . import _checks as checks
from . import _semantic as emit
from ._descriptors import dtype_text, smem_backing_type, view_type
from ._state import AllocationState, SpecState, active_trace, assigned_name

TRITON_BUILTIN_MARKER = "__triton_builtin__"


def tlx_builtin(fn):
    """Marks ``fn`` as a builtin: Triton's code generator calls it while tracing
    with ``_semantic`` and ``_generator``. It must run inside a kernel compiled
    by TLX (``@tlx.jit``); anywhere else it raises a TLXError."""

    @functools.wraps(fn)
    def wrapper(*args, _semantic=None, _generator=None, **kwargs):
        checks.check_context(f"tlx.{fn.__name__}", _semantic)
        return fn(*args, _semantic=_semantic, _generator=_generator, **kwargs)

    setattr(wrapper, TRITON_BUILTIN_MARKER, True)
    wrapper.signature = inspect.signature(fn)
    return wrapper


_UNSEALED_ARGUMENT = (
    "{buffer} is passed to a function or a warp_specialize partition before its spec is "
    "sealed: its memory is not placed yet. Seal the spec first: call "
    "{spec}.set_buffer_overlap(...) or use one of its buffers once before the call"
)


def _name_fragment(value) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in str(value))


class storage_alias_spec_type(base_type):
    """The type of a ``storage_alias_spec``: its storage and explicit size."""

    def __init__(
        self,
        storage: storage_kind,
        buffer_size_bytes: int | None = None,
        state: SpecState | None = None,
    ):
        self.storage = storage
        self.buffer_size_bytes = buffer_size_bytes
        self.state = state

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, storage_alias_spec_type)
            and self.storage is other.storage
            and self.buffer_size_bytes == other.buffer_size_bytes
        )

    def __hash__(self):
        return hash((self.storage, self.buffer_size_bytes))

    def __repr__(self) -> str:
        size = "" if self.buffer_size_bytes is None else f", {self.buffer_size_bytes}"
        return f"storage_alias_spec_type<{self.storage.value}{size}>"

    def mangle(self) -> str:
        size = "" if self.buffer_size_bytes is None else str(self.buffer_size_bytes)
        return f"TLXSPEC{self.storage.value}{size}TLXSPEC"

    def _flatten_ir_types(self, builder, out) -> None:
        return

    def _unflatten_ir(self, handles, cursor):
        return storage_alias_spec._of_type(self), cursor


class storage_alias_spec(base_value):
    """A region that several ``local_alloc(..., reuse=spec)`` buffers alias as
    equal peers, with no owner. Inside a ``@tlx.jit`` kernel::

        spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
        sized = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem, buffer_size_bytes=65536)

    ``storage`` is ``smem`` or ``tmem`` (``smemCluster`` is not supported);
    ``buffer_size_bytes`` is None (the compiler sizes the region for its
    users) or a positive compile-time constant (the compiler checks that the
    plan fits and keeps any extra bytes as padding). ``overlap="auto"``: the
    compiler infers the smallest tree the kernel's synchronization makes safe
    (docs/suggest.md) and uses it instead of any tree given. Immutable: ``storage``
    and ``buffer_size_bytes`` are read-only. Not indexable: index its buffers.

    The spec is *sealed* by ``set_buffer_overlap`` or by the first use of any
    of its buffers; sealing plans the region and allocates it, so it must
    happen in the block that created the spec (not inside a loop, a branch or
    a partition) and after the last ``local_alloc`` that reuses it.
    """

    __triton_builtin__ = True

    def __init__(
        self,
        storage=storage_kind.smem,
        buffer_size_bytes=None,
        overlap=None,
        _semantic=None,
        _generator=None,
    ):
        checks.check_context("tlx.storage_alias_spec", _semantic)
        storage = checks.expect_storage(storage, "storage")
        if storage is storage_kind.smemCluster:
            raise TLXError("smemCluster storage is not supported for storage_alias_spec")
        size = _unwrap_if_constexpr(buffer_size_bytes)
        if size is not None:
            size = checks.positive_int(
                size, "buffer_size_bytes", " (an int literal or a tl.constexpr)"
            )
        overlap = _unwrap_if_constexpr(overlap)
        if overlap not in (None, "auto"):
            raise TLXError(f'overlap must be None or "auto", got {overlap!r}')
        active_trace().check_storage(storage)
        state = emit.new_spec(_semantic, _generator, storage, size)
        state.auto = overlap == "auto"
        self.type = storage_alias_spec_type(storage, size, state)

    @classmethod
    def _of_type(cls, type: storage_alias_spec_type):
        """The spec a type describes (a clone made by Triton's scopes or calls)."""
        spec = cls.__new__(cls)
        spec.type = type
        return spec

    @property
    def storage(self) -> storage_kind:
        """The storage kind (read-only)."""
        return self.type.storage

    @property
    def buffer_size_bytes(self) -> int | None:
        """The explicit size in bytes, or None when the compiler sizes it (read-only)."""
        return self.type.buffer_size_bytes

    def __repr__(self) -> str:
        return (
            f"storage_alias_spec(storage={self.storage.value}, "
            f"buffer_size_bytes={self.buffer_size_bytes})"
        )

    def _flatten_ir(self, handles) -> None:
        return

    def _set_name(self, builder, name: str) -> None:
        return

    @tlx_builtin
    def set_buffer_overlap(self, overlap_def, _semantic=None, _generator=None) -> None:
        """Defines which of this spec's buffers share bytes at each buffer index
        (``shared``) and which never overlap (``distinct``), as a tree of
        ``tlx.reuse_group`` or, for a kernel that uses the buffers in phases, a
        ``tlx.reuse_phases`` of one tree per phase, and seals the spec. Every leaf
        must be a buffer of this spec; call it once, before any of the buffers is
        used. Without it, a tree (or phases) over this spec's buffers alone defines
        the overlap when the spec is sealed (docs/semantics.md, "Implicit
        overlap")."""
        if not isinstance(overlap_def, (reuse_group, reuse_phases)):
            raise TypeError(
                "set_buffer_overlap expects a tlx.reuse_group or a tlx.reuse_phases, got "
                f"{type(overlap_def).__name__}"
            )
        spec = self.type.state
        if spec.overlap_location is not None:
            raise TLXError(
                f"set_buffer_overlap is called twice on {spec.describe()}: it was already set "
                f"at {spec.overlap_location}"
            )
        if spec.sealed:
            raise TLXError(
                f"{spec.describe()} is already sealed by {spec.sealed_by}: call "
                "set_buffer_overlap before any of its buffers is used"
            )
        for allocation in overlap_def.buffers():
            if allocation.spec is not spec:
                raise TLXError(
                    f"set_buffer_overlap on {spec.describe()} got {allocation.describe()}, "
                    f"which belongs to {allocation.spec.describe()}"
                )
        spec.check_block(
            _semantic.builder,
            "set_buffer_overlap",
            "call set_buffer_overlap in the block that created the spec",
        )
        emit.set_buffer_overlap(spec, overlap_def, location_of_call(_generator), _semantic.builder)


class reuse_group_ir_type(base_type):
    """The type of a ``reuse_group``: its kind (and the group it describes)."""

    def __init__(self, group_type: reuse_group_type, group=None):
        self.group_type = group_type
        self.group = group

    def __eq__(self, other) -> bool:
        return isinstance(other, reuse_group_ir_type) and self.group_type is other.group_type

    def __hash__(self):
        return hash(self.group_type)

    def __repr__(self) -> str:
        return f"reuse_group<{self.group_type.value}>"

    def mangle(self) -> str:
        return f"TLXGROUP{self.group_type.value}TLXGROUP"

    def _flatten_ir_types(self, builder, out) -> None:
        return

    def _unflatten_ir(self, handles, cursor):
        return self.group, cursor


class reuse_group(base_value):
    """A node of a spec's overlap tree. Inside a ``@tlx.jit`` kernel::

        tlx.reuse_group(qk, tlx.reuse_group(p, alpha, group_type=tlx.reuse_group_type.distinct))

    Its elements are buffers (``buffered_tensor``) or nested groups.
    ``group_type=shared`` (default): the elements occupy the same bytes at
    each buffer index (they may overlap; the kernel synchronises).
    ``distinct``: they never overlap and can be used at the same time.
    ``group_size=K`` (default 1) makes K consecutive buffers of each leaf one
    logical buffer group, e.g. K slices of P inside one QK buffer. Pass the
    root to ``spec.set_buffer_overlap``."""

    __triton_builtin__ = True

    def __init__(
        self,
        *elements,
        group_type=reuse_group_type.shared,
        group_size=1,
        _semantic=None,
        _generator=None,
    ):
        checks.check_context("tlx.reuse_group", _semantic)
        if not elements:
            raise TLXError("tlx.reuse_group needs at least one element (a buffer or a group)")
        for element in elements:
            if not isinstance(element, (buffered_tensor, reuse_group)):
                raise TypeError(
                    "tlx.reuse_group elements must be tlx.local_alloc buffers or "
                    f"tlx.reuse_group, got {type(element).__name__}"
                )
        group_type = _unwrap_if_constexpr(group_type)
        if not isinstance(group_type, reuse_group_type):
            raise TypeError(
                "group_type must be a tlx.reuse_group_type, got "
                f"{type(group_type).__name__} {group_type!r}"
            )
        group_size = _unwrap_if_constexpr(group_size)
        if isinstance(group_size, bool) or not isinstance(group_size, int):
            raise TypeError(
                f"group_size must be a compile-time int, got {type(group_size).__name__}"
            )
        if group_size < 1:
            raise TLXError(f"group_size must be at least 1, got {group_size}")
        self.type = reuse_group_ir_type(group_type, self)
        self.elements = tuple(elements)
        self.group_type = group_type
        self.group_size = group_size
        self.location = location_of_call(_generator)
        # The group or phases this one is part of (None: a root).
        self.parent = None
        for element in elements:
            if isinstance(element, reuse_group):
                element.parent = self
        checks.check_new_root(self, _generator)
        emit.new_overlap_root(self, _generator)

    def buffers(self):
        """Every buffer of the tree (``AllocationState``), in order."""
        for element in self.elements:
            if isinstance(element, reuse_group):
                yield from element.buffers()
            else:
                yield element.type.allocation

    def describe(self) -> str:
        return f"tlx.reuse_group at {self.location}"

    def __repr__(self) -> str:
        return (
            f"reuse_group({len(self.elements)} elements, group_type={self.group_type.value}, "
            f"group_size={self.group_size})"
        )

    def _flatten_ir(self, handles) -> None:
        return

    def _set_name(self, builder, name: str) -> None:
        return

    def planner_group(self) -> planner.Group:
        """This tree with each buffer replaced by its index among its spec's users."""
        children = tuple(
            element.planner_group()
            if isinstance(element, reuse_group)
            else element.type.allocation.index
            for element in self.elements
        )
        return planner.Group(self.group_type.value, children, self.group_size)

    def planner_overlap(self) -> tuple[planner.Group, tuple[planner.Group, ...]]:
        """(tree, phases) of a spec whose overlap is this tree: no phases."""
        return self.planner_group(), ()


class reuse_phases_ir_type(base_type):
    """The type of a ``reuse_phases`` (and the phases it describes)."""

    def __init__(self, phases=None):
        self.phases = phases

    def __eq__(self, other) -> bool:
        return isinstance(other, reuse_phases_ir_type)

    def __hash__(self):
        return hash("reuse_phases")

    def __repr__(self) -> str:
        return "reuse_phases"

    def mangle(self) -> str:
        return "TLXPHASESTLXPHASES"

    def _flatten_ir_types(self, builder, out) -> None:
        return

    def _unflatten_ir(self, handles, cursor):
        return self.phases, cursor


class reuse_phases(base_value):
    """The overlap of a spec whose buffers a kernel uses in phases, one
    ``tlx.reuse_group`` tree per phase, in order (phase 0, 1, ...)::

        spec.set_buffer_overlap(tlx.reuse_phases(
            tlx.reuse_group(x, w1, h, group_type=tlx.reuse_group_type.distinct),
            tlx.reuse_group(h, w2, group_type=tlx.reuse_group_type.distinct),
        ))

    Inside a phase its tree means what it means alone. A buffer of one phase
    may take bytes of buffers of the other phases; a buffer written into
    several phases has one place valid in all of them. The compiler checks
    that uses of buffers of different phases that share bytes do not
    interleave (docs/semantics.md, "Phases"). Pass it to
    ``spec.set_buffer_overlap``, or let it define the spec's overlap without
    (every leaf a buffer of one spec)."""

    __triton_builtin__ = True

    def __init__(self, *trees, _semantic=None, _generator=None):
        checks.check_context("tlx.reuse_phases", _semantic)
        if len(trees) < 2:
            raise TLXError(
                f"tlx.reuse_phases needs two or more trees (one per phase), got {len(trees)}: "
                "a kernel with one phase gives its tlx.reuse_group alone"
            )
        for tree in trees:
            if not isinstance(tree, reuse_group):
                raise TypeError(
                    f"tlx.reuse_phases takes tlx.reuse_group trees, got {type(tree).__name__}"
                )
            if tree.parent is not None:
                raise TLXError(
                    f"tlx.reuse_phases got {tree.describe()}, which is already part of "
                    f"{tree.parent.describe()}: give each phase a tree of its own"
                )
        self.type = reuse_phases_ir_type(self)
        self.trees = tuple(trees)
        self.location = location_of_call(_generator)
        self.parent = None
        for tree in trees:
            tree.parent = self
        checks.check_new_root(self, _generator)
        emit.new_overlap_root(self, _generator)

    def __repr__(self) -> str:
        return f"reuse_phases({len(self.trees)} phases)"

    def _flatten_ir(self, handles) -> None:
        return

    def _set_name(self, builder, name: str) -> None:
        return

    def buffers(self):
        """Every buffer of every phase (``AllocationState``), in order."""
        for tree in self.trees:
            yield from tree.buffers()

    def describe(self) -> str:
        return f"tlx.reuse_phases at {self.location}"

    def planner_overlap(self) -> tuple[None, tuple[planner.Group, ...]]:
        """(tree, phases) of a spec whose overlap is these phases: one tree per phase."""
        return None, tuple(tree.planner_group() for tree in self.trees)


class buffered_tensor_type(base_type):
    """The type of a ``buffered_tensor``: element type, full shape (``num``
    first), layout, storage and, once sealed, the planner's view."""

    def __init__(
        self,
        element_ty,
        shape,
        layout,
        storage: storage_kind,
        view: planner.View | None,
        allocation: AllocationState | None = None,
    ):
        self.element_ty = element_ty
        self.shape = tuple(shape)
        self.layout = layout
        self.storage = storage
        self.view = view
        self.allocation = allocation

    def __eq__(self, other) -> bool:
        return isinstance(other, buffered_tensor_type) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.element_ty, self.shape, self.layout, self.storage, self.view)

    def __repr__(self) -> str:
        return (
            f"buffered_tensor<{self.element_ty}, {list(self.shape)}, {self.layout}, "
            f"{self.storage.value}, {self.view}>"
        )

    def mangle(self) -> str:
        # Triton mangles the arguments of a call in the caller, before it traces the
        # callee: the place to refuse an unsealed buffer with its reason at the call.
        view = self.view
        if view is None:
            raise TLXError(self._unsealed_argument())
        shape = "_".join(str(d) for d in self.shape)
        placement = f"{view.slots}_{view.period}_{view.scale}_{view.offset_slots}_{view.step}"
        # The buffer too: a function called with two buffers of one type gets an
        # instance each, whose uses the lifetime check of phases can attribute.
        allocation = self.allocation
        buffer = "" if allocation is None else f"{allocation.spec.name}_{allocation.index}"
        return (
            f"TLXB{self.element_ty.mangle()}S{shape}SL{self.layout.mangle()}L"
            f"{self.storage.value}P{_name_fragment(placement)}B{_name_fragment(buffer)}TLXB"
        )

    def _unsealed_argument(self) -> str:
        """Why this unsealed buffer cannot be an argument, naming it and its spec."""
        allocation = self.allocation
        if allocation is None:
            return _UNSEALED_ARGUMENT.format(buffer="a buffered_tensor", spec="spec")
        buffer = f"{allocation.describe()} of {allocation.spec.describe()}"
        return _UNSEALED_ARGUMENT.format(buffer=buffer, spec=allocation.spec.name)

    def to_ir(self, builder):
        if self.view is None:
            raise TLXError(self._unsealed_argument())
        if self.view.per_group:
            # A view per buffer group: the value is the spec's backing (api/_sealing.py).
            return smem_backing_type(self.allocation.spec.plan.backing_shape).to_ir(builder)
        return view_type(self.element_ty, self.layout, self.storage, self.view).to_ir(builder)

    def _flatten_ir_types(self, builder, out) -> None:
        out.append(self.to_ir(builder))

    def _unflatten_ir(self, handles, cursor):
        if self.view is None:
            return buffered_tensor(self, None), cursor
        return buffered_tensor(self, handles[cursor]), cursor + 1


class buffered_tensor(base_value):
    """``num`` buffers of ``shape`` in shared or tensor memory, returned by
    ``tlx.local_alloc``. ``buf.index(i)`` / ``tlx.local_view(buf, i)`` give
    buffer ``i`` as Gluon's own ``shared_memory_descriptor`` (SMEM) or
    ``tensor_memory_descriptor`` (TMEM), so every Gluon operation works on it.

    Before its spec is sealed it has no IR; a copy of it (a function argument,
    a partition capture) holds the view it was given."""

    def __init__(self, type: buffered_tensor_type, handle):
        self._type = type
        self._handle = handle

    @classmethod
    def _of_allocation(cls, allocation: AllocationState):
        return cls(
            buffered_tensor_type(
                allocation.element_ty,
                allocation.shape,
                allocation.layout,
                allocation.storage,
                None,
                allocation,
            ),
            None,
        )

    @property
    def type(self) -> buffered_tensor_type:
        allocation = self._type.allocation
        if allocation is None or self._type.view is not None or allocation.view is None:
            return self._type
        self._type = buffered_tensor_type(
            allocation.element_ty,
            allocation.shape,
            allocation.layout,
            allocation.storage,
            allocation.view,
            allocation,
        )
        return self._type

    @property
    def handle(self):
        """The IR value of the whole view (None until the spec is sealed)."""
        if self._handle is not None:
            return self._handle
        allocation = self._type.allocation
        return None if allocation is None else allocation.view_handle

    @property
    def dtype(self):
        """The element type."""
        return self._type.element_ty

    @property
    def shape(self):
        """The full shape: ``[num, *shape]``."""
        return list(self._type.shape)

    @property
    def num(self) -> int:
        """The number of buffers."""
        return self._type.shape[0]

    @property
    def layout(self):
        """The layout of one buffer."""
        return self._type.layout

    @property
    def storage(self) -> storage_kind:
        """The storage kind."""
        return self._type.storage

    def __repr__(self) -> str:
        return f"buffered_tensor({self.type!r})"

    def _flatten_ir(self, handles) -> None:
        handle = self.handle
        if handle is not None:
            handles.append(handle)

    def _set_name(self, builder, name: str) -> None:
        return

    @property
    def allocation(self) -> AllocationState | None:
        """The trace-time state of the ``local_alloc`` these buffers come from."""
        return self._type.allocation

    @tlx_builtin
    def index(self, index, _semantic=None, _generator=None):
        """Buffer ``index`` (an int or an int32 scalar) as Gluon's
        ``shared_memory_descriptor`` / ``tensor_memory_descriptor``. The first
        use of any buffer of a spec seals it (see ``storage_alias_spec``)."""
        index = checks.checked_index(self, index, _semantic.builder, _generator)
        return emit.index(self, index, _generator, _semantic.builder)

    @tlx_builtin
    def __getitem__(self, index, _semantic=None, _generator=None):
        """``buf[i]``, the reference TLX's spelling of ``buf.index(i)``."""
        index = checks.checked_index(self, index, _semantic.builder, _generator)
        return emit.index(self, index, _generator, _semantic.builder)


# Element widths an NVMMA shared layout (wgmma / tcgen05 operands, TMA) takes.
_NVMMA_ELEMENT_BITS = (8, 16, 32)
# A tile is MMA-shaped when its rows are a multiple of the core matrix height
# and a row is at least one 16-byte core matrix row.
_MMA_ROW_MULTIPLE = 8
_MMA_MIN_ROW_BYTES = 16


def default_layout(shape, dtype, storage: storage_kind):
    """The layout ``local_alloc`` uses when none is given.

    SMEM: Gluon's default NVMMA shared layout (largest swizzle the row allows)
    for MMA-shaped 2-D tiles (rows a multiple of 8, a row at least 16 bytes,
    8/16/32-bit elements); anything else gets an unswizzled row-major layout.
    TMEM: a packed tensor memory layout whose block is the tile (at most 128
    rows).
    """
    bits = 0 if dtype.is_ptr() else dtype.primitive_bitwidth
    if storage is storage_kind.tmem:
        return blackwell.TensorMemoryLayout(
            block=(min(shape[0], planner.TMEM_LANES), shape[1]), col_stride=1
        )
    if (
        len(shape) == 2
        and bits in _NVMMA_ELEMENT_BITS
        and shape[0] % _MMA_ROW_MULTIPLE == 0
        and shape[1] * bits >= _MMA_MIN_ROW_BYTES * 8
    ):
        return ttgl.NVMMASharedLayout.get_default_for(list(shape), dtype)
    return ttgl.SwizzledSharedLayout(1, 1, 1, list(reversed(range(len(shape)))))


@tlx_builtin
def local_alloc(
    shape,
    dtype,
    num,
    storage=storage_kind.smem,
    reuse=None,
    layout=None,
    _semantic=None,
    _generator=None,
) -> buffered_tensor:
    """Allocates ``num`` buffers of ``shape`` x ``dtype`` in ``storage`` (smem
    or tmem) and returns them as a ``buffered_tensor``; index it with
    ``buf.index(i)`` or ``tlx.local_view(buf, i)``.

    ``reuse``: None (the buffers get their own region), a
    ``storage_alias_spec`` (the buffers are one user of the spec's region; the
    spec's storage must match), or a ``buffered_tensor`` (legacy: the new
    buffers alias the region of that buffer at offset 0; they must fit when
    that region is already allocated). ``layout``: the layout of one buffer
    (``shape`` without ``num``); by default see ``default_layout``.
    """
    shape = checks.buffer_shape(shape)
    dtype = _unwrap_if_constexpr(dtype)
    if not isinstance(dtype, ttgl.dtype) or dtype.is_block() or dtype == ttgl.void:
        raise TypeError(f"dtype must be a scalar Gluon dtype, got {type(dtype).__name__} {dtype!r}")
    if dtype.is_ptr():
        raise TLXError(
            f"local_alloc of {dtype}: stock Triton cannot view shared memory as pointers "
            "(Triton 3.6 to 3.8 do not lower pointer buffers, 3.8 and 3.9 fail on a "
            "memdesc_reinterpret to them); keep the addresses as int64 and make pointers of "
            f"the loaded values with .to(ttgl.pointer_type({dtype_text(dtype.element_ty)}))"
        )
    num = checks.positive_int(num, "num")
    storage = checks.expect_storage(storage, "storage")
    if storage is storage_kind.smemCluster:
        raise TLXError("local_alloc does not support smemCluster storage: use smem or tmem")
    if storage is storage_kind.tmem and len(shape) != 2:
        raise TLXError(f"a tmem buffer must be 2-D [rows, columns], got shape {list(shape)}")
    layout = _unwrap_if_constexpr(layout)
    if layout is None:
        layout = default_layout(shape, dtype, storage)
    checks.check_layout(layout, shape, storage)
    reuse = _unwrap_if_constexpr(reuse)
    if reuse is not None and not isinstance(reuse, (storage_alias_spec, buffered_tensor)):
        raise TypeError(
            "reuse must be None, a tlx.storage_alias_spec or a tlx.local_alloc buffer, got "
            f"{type(reuse).__name__}"
        )
    name = assigned_name(_generator, "buffer")
    if reuse is None:
        active_trace().check_storage(storage)
    else:
        reuse = reuse.type.state if isinstance(reuse, storage_alias_spec) else reuse.allocation
        checks.check_reuse(reuse, name, storage, _semantic.builder)
    allocation = emit.local_alloc(
        _semantic, _generator, name, shape, dtype, num, storage, reuse, layout
    )
    return buffered_tensor._of_allocation(allocation)


@tlx_builtin
def local_view(buf, index, _semantic=None, _generator=None):
    """Buffer ``index`` (an int or an int32 scalar) of ``buf`` as Gluon's
    ``shared_memory_descriptor`` / ``tensor_memory_descriptor``; the same as
    ``buf.index(index)``."""
    if not isinstance(buf, buffered_tensor):
        raise TypeError(
            f"tlx.local_view expects a tlx.local_alloc buffer, got {type(buf).__name__}"
        )
    index = checks.checked_index(buf, index, _semantic.builder, _generator)
    return emit.index(buf, index, _generator, _semantic.builder)
