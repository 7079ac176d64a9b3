"""Sealing a spec: the one place that asks the planner for a spec's plan and emits
its backing allocation and views.

A spec is sealed by ``set_buffer_overlap``, by the first use of any of its
buffers, or at once for a ``local_alloc`` without ``reuse``. ``seal`` takes the
overlap (given, or implicit: docs/semantics.md, "Implicit overlap"), plans the
spec, reports the planner's diagnostics (errors as one TLXError; warnings, at the
user's line, once the trace ends without an error) and emits the plan's recipe at
the builder's insertion point:

* the backing allocation: SMEM ``ttg.local_alloc`` of ``Plan.backing_shape`` bytes
  with a rank-1 layout and the plan's ``alignment``; TMEM ``ttng.tmem_alloc`` of
  ``Plan.backing_shape`` 32-bit words whose layout block is ``Plan.backing_block``
  (split over the CTAs as the users are);
* per buffer one ``ttg.memdesc_reinterpret`` to ``View.shape`` of the buffer's own
  element type and layout: of the whole backing (``View.form`` ``"slots"``), of the
  backing's rows from ``View.base`` (``"sliced_rows"``: ``ttg.memdesc_subslice``) or of
  its row at ``View.base`` (``"indexed_row"``: ``ttg.memdesc_index``); a view per buffer
  group (``"runtime_row"``, ``"selected_rows"``) is the backing itself, which each use
  takes at its group's row (``group_view``) or rows (``selected_group_view``:
  ``_semantic.index``).

``join_sealed`` places a legacy ``reuse=buffered_tensor`` user in a region that is
already allocated, and ``check_unsealed`` plans a spec never sealed, only for its
diagnostics. The builtins of ``_core`` have checked that sealing may happen at the
builder's insertion point; every number and rule is the planner's.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl

from .. import compat, planner
from .._errors import SourceLocation, TLXError, compilation_error
from .._kinds import storage_kind
from ..report.plan import JoinedBuffer
from ._descriptors import BACKING_SMEM_LAYOUT, descriptor_type, smem_backing_type, view_type
from ._state import AllocationState, SpecState, active_trace, overlap_override


def set_overlap(spec: SpecState, root, location: SourceLocation, source: str) -> None:
    """Makes ``root`` (a ``reuse_group`` tree or a ``reuse_phases`` whose leaves are
    all buffers of ``spec``) the overlap of ``spec``, given at ``location`` by
    ``source``."""
    spec.overlap_tree, spec.overlap_phases = root.planner_overlap()
    spec.overlap_location = location
    spec.overlap_source = source


def _diagnostic_subject(spec: SpecState, diagnostic: planner.Diagnostic):
    if 0 <= diagnostic.buffer < len(spec.users):
        return spec.users[diagnostic.buffer]
    return spec


def _diagnostic_message(spec: SpecState, diagnostic: planner.Diagnostic) -> str:
    subject = _diagnostic_subject(spec, diagnostic)
    if subject is spec:
        return f"{spec.describe()}: {diagnostic.message}"
    return f"{subject.describe()} of {spec.describe()}: {diagnostic.message}"


# The specs (by their description, source line included) told about views at byte offsets
# under Triton 3.8's rules: once a process, since a tuner traces a spec once per configuration.
_TOLD_OFFSET_VIEWS: set[str] = set()


def _warn(spec: SpecState, plan: planner.Plan) -> None:
    """Keeps the plan's warnings for the end of the trace (``_jit.finish_trace``), and
    under Triton 3.8's rules the smaller region views at byte offsets would need."""
    trace = active_trace()
    for warning in plan.warnings:
        subject = _diagnostic_subject(spec, warning)
        trace.warnings.append((subject.location, _diagnostic_message(spec, warning)))
    if plan.offset_views_region and spec.describe() not in _TOLD_OFFSET_VIEWS:
        # Triton 3.8's rules: say which trees another release packs tighter, as the
        # MLIR door's remark does (dialect/lib/Analysis/ModulePlan.cpp).
        _TOLD_OFFSET_VIEWS.add(spec.describe())
        trace.warnings.append(
            (
                spec.location,
                f"{spec.describe()} needs {plan.region_size} bytes with views of the whole "
                "region (Triton 3.8's rules); views at byte offsets (Triton 3.6, 3.7 and 3.9) "
                f"would need {plan.offset_views_region}",
            )
        )


def warn_trees_over_several_specs(trace) -> None:
    """Keeps a warning for each tree (or phases) the kernel built whose buffers belong to
    two or more specs: no spec takes it as its overlap (set_buffer_overlap refuses it and
    implicit overlap is one spec's), so it places nothing."""
    for root in trace.overlap_roots:
        if root.parent is not None:
            continue
        buffers_of = {}
        for allocation in root.buffers():
            buffers_of.setdefault(allocation.spec, []).append(allocation.name)
        if len(buffers_of) < 2:
            continue
        specs = "; ".join(
            f"{spec.describe()}: " + ", ".join(f'"{name}"' for name in dict.fromkeys(names))
            for spec, names in buffers_of.items()
        )
        trace.warnings.append(
            (
                root.location,
                f"{root.describe()} is over buffers of {len(buffers_of)} specs ({specs}), so it "
                "is no spec's overlap and places nothing: a tree is over the buffers of one "
                "spec. Build one tree per spec (and give it to that spec's set_buffer_overlap)",
            )
        )


def _implicit_overlap(spec: SpecState) -> None:
    """Without set_buffer_overlap, the largest tree (or phases) whose leaves are all
    buffers of ``spec`` defines its overlap: a root of the trees the kernel built (a
    tree inside another is part of it). Two such roots are an error naming both."""
    if spec.overlap_location is not None or spec.private:
        return
    trace = active_trace()
    roots = [
        root
        for root in (trace.overlap_roots if trace is not None else ())
        if root.parent is None and {a.spec for a in root.buffers()} == {spec}
    ]
    if not roots:
        return
    if len(roots) > 1:
        first, second = roots[:2]
        raise TLXError(
            f"{spec.describe()} has two overlap trees and no set_buffer_overlap: "
            f"{first.describe()} and {second.describe()} are both over its buffers alone and "
            "neither is part of the other. Nest one in the other, or give the one you mean to "
            f"{spec.name}.set_buffer_overlap(...)"
        )
    (root,) = roots
    set_overlap(spec, root, root.location, root.describe())


def _plan(spec: SpecState) -> planner.Plan:
    """Plans ``spec`` for its users and tree (or phases); keeps the question and
    the answer on it."""
    _implicit_overlap(spec)
    override = overlap_override()
    if override is None and spec.auto:
        # The first trace of a kernel with overlap="auto": its tree is not inferred yet
        # (language/tlx/suggest/auto.py traces it again with it).
        from ..suggest.override import Override

        override = Override(strip="auto")
    replaced = None if override is None or spec.private else override(spec)
    if replaced is not None:
        spec.overlap_tree, spec.overlap_phases, spec.overlap_source = replaced
    spec.planned_spec = spec.planner_spec()
    spec.planned_buffers = tuple(user.planner_buffer() for user in spec.users)
    overlap = spec.overlap_phases or spec.overlap_tree
    spec.plan = planner.plan(spec.planned_spec, spec.planned_buffers, overlap)
    return spec.plan


def seal(spec: SpecState, builder, reason: str) -> None:
    """Plans ``spec`` (a TLXError lists the plan's errors; its warnings are emitted),
    marks it sealed by ``reason`` and emits its backing allocation and every user's
    view at the builder's insertion point."""
    plan = _plan(spec)
    _warn(spec, plan)
    if plan.errors:
        raise TLXError("\n".join(_diagnostic_message(spec, error) for error in plan.errors))
    spec.backing_alignment = plan.alignment
    spec.sealed_by = reason
    spec.backing = _emit_backing(spec, plan, builder)
    for user, view in zip(spec.users, plan.views, strict=True):
        _emit_view(user, view, spec.backing, builder)


def join_sealed(spec: SpecState, user: AllocationState, builder) -> None:
    """Places a legacy ``reuse=buffered_tensor`` user in a region that is already
    allocated: planned alone, at offset 0, and it must fit that region."""
    region = spec.planner_spec(spec.plan.size_bytes)
    buffer = user.planner_buffer()
    plan = planner.plan(region, [buffer])
    for warning in plan.warnings:
        active_trace().warnings.append((user.location, f"{user.describe()}: {warning.message}"))
    if plan.errors:
        problems = "; ".join(error.message for error in plan.errors)
        raise TLXError(
            f"{user.describe()} reuses {spec.describe()}, which is already allocated "
            f"({spec.plan.size_bytes} bytes, sealed by {spec.sealed_by}), and does not fit it: "
            f"{problems}. Reuse a tlx.storage_alias_spec instead so that the region is sized "
            "for every buffer"
        )
    user.joined = JoinedBuffer(region, buffer, plan, user.location.file_name, user.location.line)
    if plan.alignment > spec.backing_alignment and spec.storage is storage_kind.smem:
        spec.backing.set_attr("alignment", builder.get_int32_attr(plan.alignment))
        spec.backing_alignment = plan.alignment
    _emit_view(user, plan.views[0], spec.backing, builder)


def check_unsealed(spec: SpecState) -> None:
    """Plans a spec that was never sealed (none of its buffers is used), only to
    report its diagnostics; errors point at the buffer or spec they are about."""
    plan = _plan(spec)
    _warn(spec, plan)
    if plan.errors:
        first = _diagnostic_subject(spec, plan.errors[0])
        message = "\n".join(_diagnostic_message(spec, error) for error in plan.errors)
        raise compilation_error(first.location, message)


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
    handle = builder.create_local_alloc(smem_backing_type(shape).to_ir(builder))
    handle.set_attr("alignment", builder.get_int32_attr(plan.alignment))
    return _named(handle, builder, spec.name, "tlx.spec")


def _view_source(view: planner.View, form: str, start: int, backing, backing_shape, builder):
    """What the view reinterprets: the SMEM backing (``[rows, row_bytes]`` x i8), or its
    bytes from byte ``start`` in ``form``, the form the planner chose for this Triton
    (``compat.VIEW_FORMS``)."""
    if form == "slots":
        return backing
    row_bytes = backing_shape[1]
    if form == "indexed_row":
        return builder.create_memdesc_index(
            smem_backing_type([row_bytes]).to_ir(builder),
            backing,
            builder.get_int32(start // row_bytes),
        )
    return _sliced_rows(view, start, backing, backing_shape, builder)


def _sliced_rows(view: planner.View, start: int, backing, backing_shape, builder):
    """``ttg.memdesc_subslice`` of the backing's rows that ``view``'s slots span from byte
    ``start`` (``"sliced_rows"``, and each group's view of ``"selected_rows"``)."""
    row_bytes = backing_shape[1]
    rows = [-(-view.slots * view.buffer_size // row_bytes), row_bytes]
    rows_type = ttgl.shared_memory_descriptor_type(
        ttgl.int8, rows, BACKING_SMEM_LAYOUT, list(backing_shape)
    )
    return builder.create_memdesc_subslice(
        rows_type.to_ir(builder), backing, [start // row_bytes, 0]
    )


def _emit_view(user: AllocationState, view: planner.View, backing, builder) -> None:
    user.view = view
    if view.per_group:
        # A view per buffer group: each use indexes the backing (_semantic.index).
        user.view_handle = backing
        return
    user_view_type = view_type(user.element_ty, user.layout, user.storage, view)
    source = _view_source(
        view, view.form, view.base, backing, user.spec.plan.backing_shape, builder
    )
    handle = builder.create_memdesc_reinterpret(user_view_type.to_ir(builder), source)
    user.view_handle = _named(handle, builder, user.name, "tlx.buffer")


def group_view(user: AllocationState, backing, row, builder):
    """The view of one buffer group of ``user``, whose view is one per group
    (``"runtime_row"``): ``ttg.memdesc_index`` of the backing's ``row`` (an int32 value,
    the index program's ``row``: where the group starts), then ``ttg.memdesc_reinterpret``
    to the group's slots (``View.shape``), which Triton 3.6 and 3.7 accept larger than
    the row (``compat.VIEW_FORMS``)."""
    row_bytes = user.spec.plan.backing_shape[1]
    group_row = builder.create_memdesc_index(
        smem_backing_type([row_bytes]).to_ir(builder), backing, row
    )
    group_type = view_type(user.element_ty, user.layout, user.storage, user.view)
    handle = builder.create_memdesc_reinterpret(group_type.to_ir(builder), group_row)
    return _named(handle, builder, user.name, "tlx.buffer")


def group_view_at(user: AllocationState, backing, start: int, builder):
    """The view of the buffer group of ``user`` (``"selected_rows"``) that starts at byte
    ``start``: the backing's bytes from there in the form the planner gives each group's
    view (``View.group_form``: ``"sliced_rows"`` on 3.9, ``"indexed_row"`` on 3.6 and
    3.7), reinterpreted to the group's slots."""
    view = user.view
    rows = _view_source(
        view, view.group_form, start, backing, user.spec.plan.backing_shape, builder
    )
    group_type = view_type(user.element_ty, user.layout, user.storage, view)
    handle = builder.create_memdesc_reinterpret(group_type.to_ir(builder), rows)
    return _named(handle, builder, user.name, "tlx.buffer")


def selected_group_view(user: AllocationState, backing, group, builder):
    """The view of one buffer group of ``user``, whose view is one per group
    (``"selected_rows"``): each group's view at its start (``View.group_view_starts``,
    ``group_view_at``), one chosen at run time by ``scf.if`` on ``group`` (the index
    program's int32 ``group``), each built in its own branch: built outside, Triton's
    canonicalization would make the chain an ``arith.select`` of views (Triton 3.9 refuses
    ``"runtime_row"``: ``compat.VIEW_FORMS``)."""
    view = user.view
    starts = view.group_view_starts(user.shape[0])
    group_type = view_type(user.element_ty, user.layout, user.storage, view).to_ir(builder)
    after = builder.get_insertion_point()
    chosen = None
    parent = None  # the else block of the last scf.if, where the next one goes
    for position, start in enumerate(starts):
        if position == len(starts) - 1:
            if parent is None:
                return group_view_at(user, backing, start, builder)
            builder.set_insertion_point_to_end(parent)
            builder.create_yield_op([group_view_at(user, backing, start, builder)])
            break
        if parent is not None:
            builder.set_insertion_point_to_end(parent)
        is_group = builder.create_icmpEQ(group, builder.get_int32(position))
        choice = builder.create_if_op([group_type], is_group, True)
        if parent is None:
            chosen = choice.get_result(0)
        else:
            builder.create_yield_op([choice.get_result(0)])
        builder.set_insertion_point_to_end(choice.get_then_block())
        builder.create_yield_op([group_view_at(user, backing, start, builder)])
        parent = choice.get_else_block()
    builder.restore_insertion_point(after)
    return chosen
