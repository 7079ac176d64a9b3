"""The IR the TLX builtins emit: the planner's recipe, in stock Gluon IR.

The builtins of ``_core`` check their arguments and call one function here.
Sealing a spec plans it (``_state.plan_for_sealing``) and emits the plan's recipe
at that point:

* the backing allocation: SMEM ``ttg.local_alloc`` of ``Plan.backing_shape`` bytes
  with a rank-1 layout and the plan's ``alignment``; TMEM ``ttng.tmem_alloc`` of
  ``Plan.backing_shape`` 32-bit words whose layout block is ``Plan.backing_block``
  (split over the CTAs as the users are);
* per buffer one ``ttg.memdesc_reinterpret`` to ``View.shape`` of the buffer's own
  element type and layout;

and each use of a buffer is ``ttg.memdesc_index`` at the view's slot: a constant
index folds to ``View.slot_of``, a runtime one gets the planner's index program
(``View.index_program``). Every number and rule is the planner's; this module only
emits.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell

from . import compat, planner
from ._errors import TLXError, location_of_call
from ._kinds import storage_kind
from ._state import (
    AllocationState,
    SpecState,
    active_trace,
    assigned_name,
    new_spec_state,
    plan_for_joining,
    plan_for_sealing,
)

# The SMEM backing allocation's layout: rank 1, so the leading dimension of the
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


def view_type(element_ty, layout, storage, view: planner.View):
    """The type of a buffer's view: ``View.shape`` of its own element type and
    layout."""
    return descriptor_type(element_ty, view.shape, layout, storage)


def new_spec(semantic, generator, storage, explicit_size_bytes) -> SpecState:
    """A ``tlx.storage_alias_spec``, named after the variable it is assigned to."""
    name = assigned_name(generator, "spec")
    return new_spec_state(semantic, generator, name, storage, explicit_size_bytes)


def local_alloc(semantic, generator, shape, dtype, num, storage, reuse, layout) -> AllocationState:
    """``num`` buffers of ``shape`` x ``dtype``: a user of ``reuse`` (a SpecState,
    an AllocationState for the legacy reuse of a buffer, or None for a region of
    their own, sealed at once)."""
    builder = semantic.builder
    location = location_of_call(generator)
    name = assigned_name(generator, "buffer")
    full_shape = (num, *shape)
    type_text = str(descriptor_type(dtype, full_shape, layout, storage).to_ir(builder))
    arguments = (name, location, dtype, full_shape, layout, storage, type_text)

    if reuse is None:
        spec = new_spec_state(semantic, generator, f"{name}_region", storage, None, private=True)
        allocation = spec.add_user(*arguments)
        seal(spec, builder, f"tlx.local_alloc at {location}")
        return allocation

    legacy = isinstance(reuse, AllocationState)
    spec = reuse.spec if legacy else reuse
    if legacy and not compat.in_loop_carry_discovery(generator):
        warn_legacy_reuse(reuse, name, shape, dtype, num, storage, location)
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
        allocation = AllocationState(spec, *arguments)
        join_sealed(spec, allocation, builder)
        if not compat.in_loop_carry_discovery(generator):
            spec.followers.append(allocation)
        return allocation
    spec.check_block(
        builder,
        f'adding buffer "{name}" to it',
        "allocate every buffer of a spec in the block that created the spec",
    )
    return spec.add_user(*arguments)


def _dtype_text(dtype) -> str:
    """How a kernel spells ``dtype``: ``ttgl.float16``."""
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "float8e4nv",
        "float8e5",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int1",
    ):
        if getattr(ttgl, name, None) == dtype:
            return f"ttgl.{name}"
    return f"ttgl.{dtype}"


def warn_legacy_reuse(owner: AllocationState, name, shape, dtype, num, storage, location):
    """The DeprecationWarning of ``local_alloc(..., reuse=buffer)``, at the user's
    line, showing the storage_alias_spec code that says the same (docs/migration.md).
    The trace emits it when it finishes: Triton 3.6 ignores DeprecationWarnings while
    it visits the kernel's code."""
    storage_text = f"tlx.storage_kind.{storage.value}"
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    spec_name = f"{owner.name}_{name}_spec"
    message = (
        f'local_alloc(..., reuse={owner.name}) for "{name}" is deprecated: it aliases offset '
        f'0 of the region of "{owner.name}" and nothing checks that "{name}" fits or what it '
        "overlaps. Say the sharing with a storage_alias_spec instead:\n"
        f"    {spec_name} = tlx.storage_alias_spec(storage={storage_text})\n"
        f"    {owner.name} = tlx.local_alloc(..., reuse={spec_name})  "
        f"# at {owner.location}\n"
        f"    {name} = tlx.local_alloc({shape_text}, {_dtype_text(dtype)}, {num}, "
        f"reuse={spec_name})\n"
        f"    tlx.reuse_group({owner.name}, {name})  # shared: they take the same bytes\n"
        "(docs/migration.md)"
    )
    active_trace().deprecations.append((location, message))


def set_buffer_overlap(spec: SpecState, overlap_def, location, builder) -> None:
    """Gives ``spec`` the overlap ``overlap_def`` (a ``reuse_group`` tree, or a
    ``reuse_phases`` of one tree per phase) and seals it."""
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
    if hasattr(overlap_def, "trees"):
        phases = overlap_def.planner_groups(spec)
        tree = None
    else:
        phases = ()
        tree = overlap_def.planner_group(spec)
    spec.check_block(
        builder,
        "set_buffer_overlap",
        "call set_buffer_overlap in the block that created the spec",
    )
    spec.overlap_tree = tree
    spec.overlap_phases = phases
    spec.overlap_location = location
    spec.overlap_source = f"set_buffer_overlap at {location}"
    seal(spec, builder, f"set_buffer_overlap at {location}")


def new_overlap_root(root, generator) -> None:
    """Registers a new ``reuse_group`` / ``reuse_phases`` with the kernel's trace:
    one whose leaves all belong to one spec defines that spec's overlap when it
    is sealed, unless set_buffer_overlap does (docs/semantics.md, "Implicit
    overlap"). A tree built after its spec was sealed by a buffer's first use
    comes too late, and is an error."""
    if compat.in_loop_carry_discovery(generator):
        return
    trace = active_trace()
    trace.overlap_roots.append(root)
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


def seal(spec: SpecState, builder, reason: str) -> None:
    """Plans ``spec`` and emits its backing allocation and every user's view at
    the builder's insertion point. ``reason`` says what sealed it."""
    plan = plan_for_sealing(spec, builder, reason)
    spec.backing = _emit_backing(spec, plan, builder)
    for user, view in zip(spec.users, plan.views, strict=True):
        _emit_view(user, view, spec.backing, builder)


def join_sealed(spec: SpecState, user: AllocationState, builder) -> None:
    """Places a legacy ``reuse=buffered_tensor`` user in a region that is already
    allocated: at offset 0, and it must fit that region."""
    plan = plan_for_joining(spec, user)
    if plan.alignment > spec.backing_alignment and spec.storage is storage_kind.smem:
        spec.backing.set_attr("alignment", builder.get_int32_attr(plan.alignment))
        spec.backing_alignment = plan.alignment
    _emit_view(user, plan.views[0], spec.backing, builder)


def index(buffer, index, generator, builder):
    """Buffer ``index`` of ``buffer`` (a ``buffered_tensor``), sealing its spec
    first when this is the first use of any of the spec's buffers."""
    allocation = buffer.allocation
    if allocation is not None and not allocation.spec.sealed:
        location = location_of_call(generator)
        seal(allocation.spec, builder, f'the first use of buffer "{allocation.name}" at {location}')
    buffer_type = buffer.type
    descriptor_value = emit_index(
        builder,
        buffer.handle,
        buffer_type.view,
        buffer_type.element_ty,
        buffer_type.shape,
        buffer_type.layout,
        buffer_type.storage,
        index,
        allocation.name if allocation is not None else "buffered_tensor",
    )
    if allocation is not None and not compat.in_loop_carry_discovery(generator):
        active_trace().record_use(descriptor_value.handle, allocation, location_of_call(generator))
    return descriptor_value


def _named(handle, builder, name: str, attribute: str):
    handle.set_loc(builder.create_name_loc(name, handle.get_loc()))
    trace = active_trace()
    if trace is not None and trace.name_views:
        handle.set_attr(attribute, builder.get_string_attr(name))
    return handle


def _emit_backing(spec: SpecState, plan: planner.Plan, builder):
    shape = list(plan.backing_shape)
    element_ty = ttgl.int32 if plan.backing_element_bits == 32 else ttgl.int8
    if spec.storage is storage_kind.tmem:
        # Split over the CTAs as every user is (the planner checked they agree).
        layout = compat.tmem_layout_with_block(spec.users[0].layout, plan.backing_block)
        backing_type = descriptor_type(element_ty, shape, layout, spec.storage)
        return _named(
            builder.create_tmem_alloc(backing_type.to_ir(builder), None),
            builder,
            spec.name,
            "tlx.spec",
        )
    backing_type = descriptor_type(element_ty, shape, _BACKING_SMEM_LAYOUT, spec.storage)
    handle = builder.create_local_alloc(backing_type.to_ir(builder))
    handle.set_attr("alignment", builder.get_int32_attr(plan.alignment))
    return _named(handle, builder, spec.name, "tlx.spec")


def _emit_view(user: AllocationState, view: planner.View, backing, builder) -> None:
    user.view = view
    user_view_type = view_type(user.element_ty, user.layout, user.storage, view)
    handle = builder.create_memdesc_reinterpret(user_view_type.to_ir(builder), backing)
    user.view_handle = _named(handle, builder, user.name, "tlx.buffer")


def emit_index(
    builder, view_handle, view: planner.View, element_ty, shape, layout, storage, index, name: str
):
    """Buffer ``index`` of a sealed buffer: ``ttg.memdesc_index`` of its view at
    the planned slot, as Gluon's own shared/tensor memory descriptor.

    A constant index is checked against the buffer count and folds to its slot;
    a runtime index (i32) gets the slot arithmetic without its identities."""
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


_INDEX_OPCODES = {
    "divide_unsigned": "create_udiv",
    "remainder_unsigned": "create_urem",
    "multiply": "create_mul",
    "add": "create_add",
}


def _slot_arithmetic(builder, index, view: planner.View):
    """The view's index program (``View.index_program``: the planner's slot
    arithmetic, identities dropped), emitted operation by operation."""
    program = view.index_program
    results = []
    constants = {}

    def read(operand):
        if operand.kind == "buffer_index":
            return index
        if operand.kind == "constant":
            if operand.value not in constants:
                constants[operand.value] = builder.get_int32(operand.value)
            return constants[operand.value]
        return results[operand.value]

    for operation in program.operations:
        create = getattr(builder, _INDEX_OPCODES[operation.opcode])
        results.append(create(read(operation.lhs), read(operation.rhs)))
    return read(program.result)
