"""The IR the TLX builtins emit: the planner's recipe, in stock Gluon IR.

Each builtin of ``_core`` and ``_reference`` checks its arguments and calls one
function here, which changes the trace state (``_state``) and emits IR; nothing here
checks an argument again. Sealing a spec (``_sealing.seal``) plans it and emits its backing
allocation and views; each use of a buffer is ``ttg.memdesc_index`` at the view's
slot: a constant index folds to ``View.slot_of``, a runtime one gets the planner's
index program (``View.index_program``). Every number and rule is the planner's;
this module only emits. The reference TLX's names (``_reference``) emit one Gluon
operation each.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell, hopper
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma

from .. import compat, planner
from .._errors import location_of_call
from ._descriptors import descriptor, descriptor_type, dtype_text
from ._sealing import (
    group_view,
    group_view_at,
    join_sealed,
    seal,
    selected_group_view,
    set_overlap,
)
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
        f"    {name} = tlx.local_alloc({shape_text}, {dtype_text(dtype)}, {num}, "
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
    identities. A view per buffer group is first taken at the group's backing row
    (``"runtime_row"``: ``_sealing.group_view``) or chosen among the groups' views by the
    group (``"selected_rows"``: ``_sealing.selected_group_view``), constant or computed
    alike."""
    allocation = buffer.allocation
    location = location_of_call(generator)
    if allocation is not None and not allocation.spec.sealed:
        seal(allocation.spec, builder, allocation.first_use_at(location))
    buffer_type = buffer.type
    view = buffer_type.view
    element_ty, layout, storage = buffer_type.element_ty, buffer_type.layout, buffer_type.storage
    source = buffer.handle
    if isinstance(index, int):
        program = view.index_program
        slot = builder.get_int32(view.slot_of(index))
        row = None if program.row is None else builder.get_int32(program.evaluate_row(index))
        if program.group is not None:
            source = group_view_at(allocation, source, view.view_start_of(index), builder)
    else:
        slot, row, group = _slot_arithmetic(builder, index.handle, view)
        if group is not None:
            source = selected_group_view(allocation, source, group, builder)
    if row is not None:
        source = group_view(allocation, source, row, builder)
    shape = buffer_type.shape[1:]
    result_type = descriptor_type(element_ty, shape, layout, storage)
    handle = builder.create_memdesc_index(result_type.to_ir(builder), source, slot)
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
    arithmetic, identities dropped), emitted operation by operation: (the slot, the
    backing row of the buffer's group, the buffer's group; None where the view has no
    ``row``, no ``group``)."""
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
    row, group = program.row, program.group
    return (
        read(program.result),
        None if row is None else read(row),
        None if group is None else read(group),
    )


# --- the reference's names (_reference): one Gluon operation each ---------------


def barrier(bars, index, semantic):
    """mbarrier ``index`` of the array ``bars``."""
    return bars.index(index, _semantic=semantic)


def local_load(src, layout, semantic):
    """Registers in ``layout`` loaded from one SMEM or TMEM buffer."""
    return src.load(layout, _semantic=semantic)


def local_store(dst, src, semantic) -> None:
    """``src`` (registers) stored into one SMEM or TMEM buffer."""
    dst.store(src, _semantic=semantic)


def local_slice(buffer, cuts, semantic):
    """``buffer`` narrowed along each (dimension, start, length) of ``cuts``: a TMEM
    buffer along its columns, the only dimension Gluon slices it by."""
    for dim, start, length in cuts:
        if isinstance(buffer, ttgl.shared_memory_descriptor):
            buffer = buffer.slice(start, length, dim, _semantic=semantic)
        else:
            buffer = buffer.slice(start, length, _semantic=semantic)
    return buffer


def local_trans(buffer, dims, semantic):
    """``buffer`` with its dimensions permuted."""
    return buffer.permute(dims, _semantic=semantic)


def local_reshape(buffer, shape, semantic):
    """``buffer`` with another shape."""
    return buffer.reshape(shape, _semantic=semantic)


def local_reinterpret(buffer, dtype, shape, layout, semantic):
    """The bytes of ``buffer`` as ``shape`` x ``dtype`` with ``layout``."""
    return compat.memdesc_reinterpret(buffer, dtype, shape, layout, semantic)


def alloc_barriers(count, arrive_count, semantic):
    """``count`` mbarriers in shared memory, each initialized for ``arrive_count``
    arrivals (Gluon's allocation and ``mbarrier.init``)."""
    bars = ttgl.allocate_shared_memory(
        ttgl.int64, [count, 1], mbarrier.MBarrierLayout(), _semantic=semantic
    )
    for index in range(count):
        mbarrier.init(bars.index(index, _semantic=semantic), arrive_count, _semantic=semantic)
    return bars


def barrier_expect_bytes(bar, size, pred, semantic) -> None:
    mbarrier.expect(bar, size, pred, _semantic=semantic)


def barrier_wait(bar, phase, pred, semantic) -> None:
    mbarrier.wait(bar, phase, pred, _semantic=semantic)


def barrier_arrive(bar, count, semantic) -> None:
    mbarrier.arrive(bar, count=count, _semantic=semantic)


def async_descriptor_load(desc, result, offsets, barrier, pred, semantic) -> None:
    """The TMA load (``tma.async_load``, named as this Triton names it)."""
    compat.tma_load(desc, offsets, barrier, result, pred, _semantic=semantic)


def async_descriptor_store(desc, source, offsets, reduce, semantic) -> None:
    """The TMA store, or ``reduce`` (a TMA reduction) when given."""
    store = reduce or compat.tma_store
    store(desc, offsets, source, _semantic=semantic)


def async_descriptor_store_wait(pendings, semantic) -> None:
    tma.store_wait(pendings, _semantic=semantic)


def fence_async_shared(semantic) -> None:
    hopper.fence_async_shared(_semantic=semantic)


def tmem_copy(src, dst, semantic) -> None:
    blackwell.tcgen05_copy(src, dst, _semantic=semantic)


def warpgroup_mma(a, b, acc, use_acc, semantic):
    """An asynchronous wgmma; its accumulator token."""
    return hopper.warpgroup_mma(a, b, acc, use_acc=use_acc, is_async=True, _semantic=semantic)


def warpgroup_mma_wait(pendings, accumulator, semantic):
    return hopper.warpgroup_mma_wait(pendings, [accumulator], _semantic=semantic)


def tcgen05_mma(a, b, acc, use_acc, pred, barriers, semantic) -> None:
    blackwell.tcgen05_mma(
        a, b, acc, use_acc=use_acc, pred=pred, mbarriers=barriers, _semantic=semantic
    )


def tcgen05_commit(bar, semantic) -> None:
    blackwell.tcgen05_commit(bar, _semantic=semantic)
