"""The IR the TLX builtins emit: the planner's recipe, in stock Gluon IR.

Each builtin of ``_core`` checks its arguments and calls one function here, which
changes the trace state (``_state``) and emits IR; nothing here checks an argument
again. Sealing a spec (``_sealing.seal``) plans it and emits its backing
allocation and views; each use of a buffer is ``ttg.memdesc_index`` at the view's
slot: a constant index folds to ``View.slot_of``, a runtime one gets the planner's
index program (``View.index_program``). Every number and rule is the planner's;
this module only emits.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl

from .. import compat, planner
from .._errors import location_of_call
from ._descriptors import descriptor, descriptor_type
from ._sealing import join_sealed, seal, set_overlap
from ._state import AllocationState, SpecState, active_trace, assigned_name, new_spec_state


def new_spec(semantic, generator, storage, explicit_size_bytes) -> SpecState:
    """A ``tlx.storage_alias_spec``, named after the variable it is assigned to."""
    name = assigned_name(generator, "spec")
    return new_spec_state(semantic, generator, name, storage, explicit_size_bytes)


def local_alloc(
    semantic, generator, name, shape, dtype, num, storage, reuse, layout
) -> AllocationState:
    """``num`` buffers of ``shape`` x ``dtype`` named ``name``: a user of ``reuse`` (a
    SpecState, an AllocationState for the legacy reuse of a buffer, or None for a
    region of their own, sealed at once)."""
    builder = semantic.builder
    location = location_of_call(generator)
    full_shape = (num, *shape)
    type_text = str(descriptor_type(dtype, full_shape, layout, storage).to_ir(builder))
    arguments = (name, location, dtype, full_shape, layout, storage, type_text)
    if reuse is None:
        spec = new_spec_state(semantic, generator, f"{name}_region", storage, None, private=True)
        allocation = spec.add_user(*arguments)
        seal(spec, builder, f"tlx.local_alloc at {location}")
        return allocation
    if isinstance(reuse, SpecState):
        return reuse.add_user(*arguments)
    spec = reuse.spec
    if not compat.in_loop_carry_discovery(generator):
        warn_legacy_reuse(reuse, name, shape, dtype, num, storage, location)
    if not spec.sealed:
        return spec.add_user(*arguments)
    allocation = AllocationState(spec, *arguments)
    join_sealed(spec, allocation, builder)
    if not compat.in_loop_carry_discovery(generator):
        spec.followers.append(allocation)
    return allocation


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
    source = f"set_buffer_overlap at {location}"
    set_overlap(spec, overlap_def, location, source)
    seal(spec, builder, source)


def new_overlap_root(root, generator) -> None:
    """Registers a new ``reuse_group`` / ``reuse_phases`` with the kernel's trace:
    one whose leaves all belong to one spec defines that spec's overlap when it
    is sealed, unless set_buffer_overlap does (docs/semantics.md, "Implicit
    overlap")."""
    if not compat.in_loop_carry_discovery(generator):
        active_trace().overlap_roots.append(root)


def index(buffer, index, generator, builder):
    """Buffer ``index`` (an int in range, or an int32 scalar) of ``buffer`` (a
    ``buffered_tensor``) as Gluon's own shared/tensor memory descriptor:
    ``ttg.memdesc_index`` of its view at the planned slot, sealing its spec first
    when this is the first use of any of the spec's buffers. A constant index
    folds to its slot; a runtime one gets the slot arithmetic without its
    identities."""
    allocation = buffer.allocation
    location = location_of_call(generator)
    if allocation is not None and not allocation.spec.sealed:
        seal(allocation.spec, builder, allocation.first_use_at(location))
    buffer_type = buffer.type
    view = buffer_type.view
    if isinstance(index, int):
        slot = builder.get_int32(view.slot_of(index))
    else:
        slot = _slot_arithmetic(builder, index.handle, view)
    shape = buffer_type.shape[1:]
    element_ty, layout, storage = buffer_type.element_ty, buffer_type.layout, buffer_type.storage
    result_type = descriptor_type(element_ty, shape, layout, storage)
    handle = builder.create_memdesc_index(result_type.to_ir(builder), buffer.handle, slot)
    descriptor_value = descriptor(handle, element_ty, shape, layout, storage)
    if allocation is not None and not compat.in_loop_carry_discovery(generator):
        active_trace().record_use(descriptor_value.handle, allocation, location)
    return descriptor_value


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
