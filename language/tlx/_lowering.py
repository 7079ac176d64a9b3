"""Trace-time lowering of storage alias specs to stock Gluon IR.

While a kernel is traced, a spec and its buffers are Python objects only. The
spec is *sealed* by ``set_buffer_overlap`` or by the first use of any of its
buffers: sealing asks the planner for the plan and emits, at that point,

* SMEM: one ``ttg.local_alloc`` of ``[n, 128] x i8`` with a rank-1 layout and
  the plan's ``alignment``; TMEM: one ``ttng.tmem_alloc`` of ``[rows, columns]
  x i32``;
* per buffer one ``ttg.memdesc_reinterpret`` to ``[slots, *shape]`` of the
  buffer's own element type and layout (the view covers the whole region).

Buffer ``i`` is then slot ``scale * (i // K) + offset_slots + i % K`` of its
view. Every number comes from the planner; this module only translates.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell

from . import compat, planner
from ._errors import SourceLocation, TLXError, compilation_error, warn_at
from ._kinds import storage_kind
from ._plans import JoinedBuffer, SpecPlan

_PLANNER_STORAGE = {
    storage_kind.smem: planner.Storage.SMEM,
    storage_kind.tmem: planner.Storage.TMEM,
}


def planner_storage(storage: storage_kind) -> planner.Storage:
    """The planner's name of a storage kind (smem or tmem)."""
    return _PLANNER_STORAGE[storage]


# The backing allocation's layout: rank 1, so the leading dimension of the
# [n, 128] backing is a buffer dimension that may be any size.
_BACKING_SMEM_LAYOUT = ttgl.SwizzledSharedLayout(1, 1, 1, [0])


def descriptor_type(element_ty, shape, layout, storage):
    """Gluon's own memory descriptor type for ``shape`` in ``storage``."""
    shape = list(shape)
    if storage is storage_kind.tmem:
        return blackwell.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return ttgl.shared_memory_descriptor_type(element_ty, shape, layout, shape)


def descriptor(handle, element_ty, shape, layout, storage):
    """Gluon's own memory descriptor value wrapping ``handle``."""
    shape = list(shape)
    if storage is storage_kind.tmem:
        return blackwell.tensor_memory_descriptor(handle, element_ty, shape, layout, shape)
    return ttgl.shared_memory_descriptor(handle, element_ty, shape, layout, shape)


def view_type(element_ty, shape, layout, storage, view: planner.View):
    """The type of a buffer's view: ``[slots, *shape[1:]]`` of its own element
    type and layout, covering the region."""
    return descriptor_type(element_ty, (view.slots, *shape[1:]), layout, storage)


def stored_element_bits(dtype) -> int:
    """Bits one element of ``dtype`` occupies in memory (the planner's rule)."""
    if dtype.is_ptr():
        return planner.stored_element_bits(planner.ElementKind.POINTER, 64)
    kind = planner.ElementKind.FLOAT if dtype.is_floating() else planner.ElementKind.INTEGER
    return planner.stored_element_bits(kind, dtype.primitive_bitwidth)


def planner_layout(layout) -> planner.Layout:
    """The parts of a Gluon layout that decide size and alignment."""
    split_m, split_n = planner.cta_split_of_cga_bases(compat.cga_bases(layout))
    split = {"cta_split_m": split_m, "cta_split_n": split_n}
    if isinstance(layout, ttgl.NVMMASharedLayout):
        return planner.Layout(
            planner.LayoutKind.NVMMA_SHARED, swizzle_bytes=layout.swizzle_byte_width, **split
        )
    if isinstance(layout, blackwell.TensorMemoryLayout):
        return planner.Layout(
            planner.LayoutKind.TENSOR_MEMORY,
            block_m=layout.block[0],
            block_n=layout.block[1],
            unpacked=layout.col_stride != 1,
            **split,
        )
    return planner.Layout(planner.LayoutKind.SWIZZLED_SHARED, **split)


class AllocationState:
    """One ``local_alloc``: a user of a spec, while the kernel is traced."""

    def __init__(self, spec, name, location, element_ty, shape, layout, storage, type_text):
        self.spec = spec
        self.index = len(spec.users)
        self.name = name
        self.location = location
        self.element_ty = element_ty
        self.shape = tuple(shape)
        self.layout = layout
        self.storage = storage
        # The !ttg.memdesc text of the allocation as the user wrote it (for
        # TLX_DUMP_ALIAS_IR).
        self.type_text = type_text
        # Set when the spec is sealed.
        self.view: planner.View | None = None
        self.view_handle = None
        # Set when a legacy reuse=buffered_tensor user joins a sealed spec.
        self.joined: JoinedBuffer | None = None

    def describe(self) -> str:
        return f'buffer "{self.name}" (tlx.local_alloc at {self.location})'

    def planner_buffer(self) -> planner.Buffer:
        return planner.Buffer(
            self.name,
            self.shape,
            stored_element_bits(self.element_ty),
            _PLANNER_STORAGE[self.storage],
            planner_layout(self.layout),
        )


class SpecState:
    """A storage alias spec while the kernel is traced: its users, its overlap
    tree and, once sealed, its plan and backing allocation."""

    def __init__(
        self,
        name,
        storage,
        explicit_size_bytes,
        location,
        block,
        function_name,
        *,
        private=False,
        capability=0,
    ):
        self.name = name
        self.storage = storage
        self.explicit_size_bytes = explicit_size_bytes
        self.location = location
        self.block = block
        self.function_name = function_name
        # A spec made by local_alloc without reuse: one buffer, sealed at once.
        self.private = private
        # The CUDA compute capability compiled for (0: unknown).
        self.capability = capability
        self.users: list[AllocationState] = []
        # Legacy reuse=buffered_tensor users added after the spec was sealed.
        self.followers: list[AllocationState] = []
        self.overlap_tree: planner.Group | None = None
        self.overlap_location: SourceLocation | None = None
        self.sealed_by: str | None = None
        # What was passed to the planner and its answer (set by sealing, or by
        # check_unsealed at the end of tracing).
        self.planned_spec: planner.Spec | None = None
        self.planned_buffers: tuple[planner.Buffer, ...] = ()
        self.plan: planner.Plan | None = None
        self.backing = None
        # The backing allocation's alignment attribute (legacy reuse may raise it).
        self.backing_alignment = 0

    @property
    def sealed(self) -> bool:
        return self.sealed_by is not None

    def describe(self) -> str:
        if self.private:
            owner = self.users[0].name
            return f'the region of buffer "{owner}" (tlx.local_alloc at {self.location})'
        return f'storage_alias_spec "{self.name}" (created at {self.location})'

    def planner_spec(self, explicit_size_bytes=None) -> planner.Spec:
        size = self.explicit_size_bytes if explicit_size_bytes is None else explicit_size_bytes
        return planner.Spec(self.name, _PLANNER_STORAGE[self.storage], size, self.capability)

    def add_user(self, name, location, element_ty, shape, layout, storage, type_text):
        user = AllocationState(self, name, location, element_ty, shape, layout, storage, type_text)
        self.users.append(user)
        return user

    def record(self) -> SpecPlan:
        """The immutable record of this spec's plan (once it is planned)."""
        return SpecPlan(
            description=self.describe(),
            file_name=self.location.file_name,
            line=self.location.line,
            private=self.private,
            sealed_by=self.sealed_by,
            spec=self.planned_spec,
            buffers=self.planned_buffers,
            tree=self.overlap_tree,
            plan=self.plan,
            joined=tuple(follower.joined for follower in self.followers),
            backing_alignment=self.backing_alignment,
        )

    def check_block(self, builder, action: str, hint: str) -> None:
        """Raises unless the builder inserts into the block the spec was made in."""
        if builder.get_insertion_block() == self.block:
            return
        raise TLXError(
            f"{self.describe()}: {action} happens in another block than the spec's own "
            f"(inside a loop, a branch, a warp_specialize partition or another function): {hint}"
        )


def _diagnostic_subject(spec: SpecState, diagnostic: planner.Diagnostic, users):
    if 0 <= diagnostic.buffer < len(users):
        return users[diagnostic.buffer]
    return spec


def _diagnostic_message(spec: SpecState, diagnostic: planner.Diagnostic, users) -> str:
    subject = _diagnostic_subject(spec, diagnostic, users)
    if subject is spec:
        return f"{spec.describe()}: {diagnostic.message}"
    return f"{subject.describe()} of {spec.describe()}: {diagnostic.message}"


def _report(spec: SpecState, plan: planner.Plan, users) -> None:
    """Raises a TLXError listing the plan's errors; emits its warnings."""
    for warning in plan.warnings:
        subject = _diagnostic_subject(spec, warning, users)
        warn_at(subject.location, _diagnostic_message(spec, warning, users))
    if plan.errors:
        raise TLXError("\n".join(_diagnostic_message(spec, error, users) for error in plan.errors))


def _plan(spec: SpecState) -> planner.Plan:
    """Plans ``spec`` for its users and tree; keeps the question and the answer on it."""
    spec.planned_spec = spec.planner_spec()
    spec.planned_buffers = tuple(user.planner_buffer() for user in spec.users)
    spec.plan = planner.plan(spec.planned_spec, spec.planned_buffers, spec.overlap_tree)
    return spec.plan


def check_unsealed(spec: SpecState) -> None:
    """Plans a spec that was never sealed (none of its buffers is used), only to
    report its diagnostics; errors point at the buffer or spec they are about."""
    plan = _plan(spec)
    for warning in plan.warnings:
        subject = _diagnostic_subject(spec, warning, spec.users)
        warn_at(subject.location, _diagnostic_message(spec, warning, spec.users))
    if plan.errors:
        first = _diagnostic_subject(spec, plan.errors[0], spec.users)
        message = "\n".join(_diagnostic_message(spec, error, spec.users) for error in plan.errors)
        raise compilation_error(first.location, message)


def seal(spec: SpecState, builder, reason: str) -> None:
    """Plans ``spec`` and emits its backing allocation and every user's view at
    the builder's insertion point. ``reason`` says what sealed it."""
    spec.check_block(
        builder,
        f"sealing it by {reason}",
        "sealing allocates the region, which must dominate every use. Call "
        f"{spec.name}.set_buffer_overlap(...) or use one of its buffers once before the loop, "
        "branch or partition",
    )
    plan = _plan(spec)
    _report(spec, plan, spec.users)
    spec.backing_alignment = plan.alignment
    spec.sealed_by = reason
    spec.backing = _emit_backing(spec, plan, builder)
    for user, view in zip(spec.users, plan.views, strict=True):
        _emit_view(user, view, spec.backing, builder)


def join_sealed(spec: SpecState, user: AllocationState, builder) -> None:
    """Places a legacy ``reuse=buffered_tensor`` user in a region that is
    already allocated: at offset 0, and it must fit that region."""
    region = spec.planner_spec(spec.plan.size_bytes)
    buffer = user.planner_buffer()
    plan = planner.plan(region, [buffer])
    for warning in plan.warnings:
        warn_at(user.location, f"{user.describe()}: {warning.message}")
    if plan.errors:
        problems = "; ".join(error.message for error in plan.errors)
        raise TLXError(
            f"{user.describe()} reuses {spec.describe()}, which is already allocated "
            f"({spec.plan.size_bytes} bytes, sealed by {spec.sealed_by}), and does not fit it: "
            f"{problems}. Reuse a tlx.storage_alias_spec instead so that the region is sized "
            "for every buffer"
        )
    if plan.alignment > spec.backing_alignment and spec.storage is storage_kind.smem:
        spec.backing.set_attr("alignment", builder.get_int32_attr(plan.alignment))
        spec.backing_alignment = plan.alignment
    user.joined = JoinedBuffer(region, buffer, plan, user.location.file_name, user.location.line)
    _emit_view(user, plan.views[0], spec.backing, builder)


def _named(handle, builder, name: str):
    handle.set_loc(builder.create_name_loc(name, handle.get_loc()))
    return handle


def _emit_backing(spec: SpecState, plan: planner.Plan, builder):
    shape = list(plan.backing_shape)
    if spec.storage is storage_kind.tmem:
        # Split over the CTAs as every user is (the planner checked they agree).
        layout = compat.tmem_layout_with_block(spec.users[0].layout, plan.backing_block)
        backing_type = descriptor_type(ttgl.int32, shape, layout, spec.storage)
        return _named(
            builder.create_tmem_alloc(backing_type.to_ir(builder), None), builder, spec.name
        )
    backing_type = descriptor_type(ttgl.int8, shape, _BACKING_SMEM_LAYOUT, spec.storage)
    handle = builder.create_local_alloc(backing_type.to_ir(builder))
    handle.set_attr("alignment", builder.get_int32_attr(plan.alignment))
    return _named(handle, builder, spec.name)


def _emit_view(user: AllocationState, view: planner.View, backing, builder) -> None:
    user.view = view
    user_view_type = view_type(user.element_ty, user.shape, user.layout, user.storage, view)
    handle = builder.create_memdesc_reinterpret(user_view_type.to_ir(builder), backing)
    user.view_handle = _named(handle, builder, user.name)


def emit_index(
    semantic, view_handle, view: planner.View, element_ty, shape, layout, storage, index, name: str
):
    """Buffer ``index`` of a sealed buffer: ``ttg.memdesc_index`` of its view at
    the planned slot, as Gluon's own shared/tensor memory descriptor.

    A constant index is checked against the buffer count and folds to its slot;
    a runtime index (i32) becomes ``scale * (i // K) + offset_slots + i % K``
    with only the operations that are not identities."""
    builder = semantic.builder
    num_buffers = shape[0]
    if isinstance(index, ttgl.constexpr):
        index = index.value
    if isinstance(index, bool):
        raise TypeError(f'buffer "{name}": the index must be an integer, got {index!r}')
    if isinstance(index, int):
        if not 0 <= index < num_buffers:
            raise TLXError(
                f'buffer "{name}" has {num_buffers} buffers: index {index} is out of range '
                f"[0, {num_buffers})"
            )
        slot = builder.get_int32(view.slot_of(index))
    elif isinstance(index, ttgl.tensor) and index.type == ttgl.int32:
        slot = _slot_arithmetic(builder, index.handle, view)
    else:
        found = index.type if isinstance(index, ttgl.tensor) else type(index).__name__
        raise TypeError(
            f'buffer "{name}": the index must be an int or an int32 scalar, got {found}'
        )
    result_type = descriptor_type(element_ty, shape[1:], layout, storage)
    handle = builder.create_memdesc_index(result_type.to_ir(builder), view_handle, slot)
    return descriptor(handle, element_ty, shape[1:], layout, storage)


def _slot_arithmetic(builder, index, view: planner.View):
    if view.identity_index:
        return index
    if view.group_size > 1:
        group_size = builder.get_int32(view.group_size)
        slot = builder.create_udiv(index, group_size)
        within_group = builder.create_urem(index, group_size)
    else:
        slot = index
        within_group = None
    if view.scale != 1:
        slot = builder.create_mul(slot, builder.get_int32(view.scale))
    if view.offset_slots != 0:
        slot = builder.create_add(slot, builder.get_int32(view.offset_slots))
    if within_group is not None:
        slot = builder.create_add(slot, within_group)
    return slot
