"""The state of one kernel's tracing: its specs, their users and their plans.

While a kernel is traced, a spec and its buffers are Python objects only
(``SpecState``, ``AllocationState``), registered with the ``KernelTrace`` of the
kernel. A spec is *sealed* by ``set_buffer_overlap`` or by the first use of any
of its buffers: ``plan_for_sealing`` asks the planner for the plan, reports its
diagnostics and records it; ``_semantic`` then emits it. When tracing is done,
``KernelTrace.finish`` checks the specs never sealed, records every plan
(``SpecPlan``, ``_report``) and hands the trace to the dump (``_dump``).
``_translate`` turns Gluon's values into the planner's inputs; every number
comes from the planner.
"""

from __future__ import annotations

import itertools
import threading

from . import compat, planner
from ._errors import (
    SourceLocation,
    TLXError,
    compilation_error,
    location_of_call,
    warn_at,
    warn_deprecated_at,
)
from ._translate import planner_buffer, planner_spec, planner_storage
from .report.dump import dump_if_asked
from .report.plan import JoinedBuffer, SpecPlan, with_other_regions


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
        return planner_buffer(self.name, self.shape, self.element_ty, self.layout, self.storage)


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
        # One tree per phase (a reuse_phases); empty for one tree or none.
        self.overlap_phases: tuple[planner.Group, ...] = ()
        self.overlap_location: SourceLocation | None = None
        # What gave the overlap: set_buffer_overlap, or a tree over this spec's
        # buffers alone (implicit overlap); None: no overlap.
        self.overlap_source: str | None = None
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
        return planner_spec(self.name, self.storage, size, self.capability)

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
            phases=self.overlap_phases,
            overlap_source=self.overlap_source,
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


def _warn(spec: SpecState, plan: planner.Plan, users) -> None:
    for warning in plan.warnings:
        subject = _diagnostic_subject(spec, warning, users)
        warn_at(subject.location, _diagnostic_message(spec, warning, users))


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
    if hasattr(root, "trees"):
        spec.overlap_phases = root.planner_groups(spec)
    else:
        spec.overlap_tree = root.planner_group(spec)
    spec.overlap_location = root.location
    spec.overlap_source = root.describe()


def _plan(spec: SpecState) -> planner.Plan:
    """Plans ``spec`` for its users and tree (or phases); keeps the question and
    the answer on it."""
    _implicit_overlap(spec)
    spec.planned_spec = spec.planner_spec()
    spec.planned_buffers = tuple(user.planner_buffer() for user in spec.users)
    overlap = spec.overlap_phases or spec.overlap_tree
    spec.plan = planner.plan(spec.planned_spec, spec.planned_buffers, overlap)
    return spec.plan


def plan_for_sealing(spec: SpecState, builder, reason: str) -> planner.Plan:
    """Checks that ``spec`` may be sealed at the builder's insertion point, plans
    it (a TLXError lists the plan's errors; its warnings are emitted) and marks it
    sealed by ``reason``."""
    spec.check_block(
        builder,
        f"sealing it by {reason}",
        "sealing allocates the region, which must dominate every use. Call "
        f"{spec.name}.set_buffer_overlap(...) (a tree built without it does not seal the "
        "spec) or use one of its buffers once before the loop, branch or partition",
    )
    plan = _plan(spec)
    _warn(spec, plan, spec.users)
    if plan.errors:
        raise TLXError(
            "\n".join(_diagnostic_message(spec, error, spec.users) for error in plan.errors)
        )
    spec.backing_alignment = plan.alignment
    spec.sealed_by = reason
    return plan


def plan_for_joining(spec: SpecState, user: AllocationState) -> planner.Plan:
    """Plans a legacy ``reuse=buffered_tensor`` user in a region that is already
    allocated: alone, at offset 0, and it must fit that region."""
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
    user.joined = JoinedBuffer(region, buffer, plan, user.location.file_name, user.location.line)
    return plan


def check_unsealed(spec: SpecState) -> None:
    """Plans a spec that was never sealed (none of its buffers is used), only to
    report its diagnostics; errors point at the buffer or spec they are about."""
    plan = _plan(spec)
    _warn(spec, plan, spec.users)
    if plan.errors:
        first = _diagnostic_subject(spec, plan.errors[0], spec.users)
        message = "\n".join(_diagnostic_message(spec, error, spec.users) for error in plan.errors)
        raise compilation_error(first.location, message)


# Ops that make a memory descriptor of another one: their results are uses of
# the same buffer.
_VIEW_OPS = ("ttg.memdesc_", "ttng.tmem_subslice")


def _uses_in_program_order(module, buffer_uses):
    """{user: [(sequence, position, location)]}: every op of ``module``'s kernel that
    reads a memory descriptor of a user (its view, or one buffer indexing made, or
    one derived from those), numbered in the order of the IR (nested ops in their
    order, a loop's body once; an op with regions is not a use itself: the ops inside
    are). An op that reads buffers of several users (an MMA) is a use of each. A call
    is expanded into the uses of the function it calls (a helper, a
    warp_specialize partition), in their order, at each call. ``sequence`` is the
    sequence of control a use is in: the kernel outside ``ttg.warp_specialize``, its
    default region, or one of its partitions (they run concurrently)."""
    derived = dict(buffer_uses)
    # The walk visits the ops of a block in order, and nested ops before the op
    # that holds them: each region's steps, in order, are ("use", user,
    # location), ("call", callee) and ("nested", op name, region ids).
    steps_of: dict[int, list] = {}
    body_of: dict[str, int] = {}

    def visit(op):
        name = op.get_name()
        block = op.get_block()
        if block is None:
            return
        steps = steps_of.setdefault(block.get_parent().id(), [])
        regions = [op.get_region(i).id() for i in range(op.get_num_regions())]
        if name == "tt.func":
            body_of[op.get_str_attr("sym_name")] = regions[0]
            return
        if regions:
            steps.append(("nested", name, regions))
            return
        found = []
        for i in range(op.get_num_operands()):
            operand = op.get_operand(i)
            entry = derived.get(operand.id())
            # The type guards against the id of a value Triton erased while
            # tracing being reused by another value.
            if entry is not None and entry[2] == str(operand.get_type()):
                found.append(entry)
        if found:
            # Buffer indexing's own op is at the line of its index call.
            results = [op.get_result(i) for i in range(op.get_num_results())]
            made = [derived.get(result.id()) for result in results]
            located = next((entry[1] for entry in made if entry is not None), None)
            for user, location, _ in found:
                steps.append(("use", user, located or location))
            if name.startswith(_VIEW_OPS):
                user, location, _ = found[0]
                for result in results:
                    derived.setdefault(result.id(), (user, location, str(result.get_type())))
        if name == "tt.call":
            # Buffer types mangle their buffer: each buffer gets its own
            # instance of a helper, whose uses are its own.
            steps.append(("call", op.get_flat_symbol_ref_attr("callee")))

    module.walk(visit)

    uses: dict[AllocationState, list] = {}
    position = 0
    sequences = itertools.count()

    def expand(region, sequence, calling):
        nonlocal position
        for step in steps_of.get(region, ()):
            if step[0] == "use":
                position += 1
                uses.setdefault(step[1], []).append((sequence, position, step[2]))
            elif step[0] == "call":
                callee = step[1]
                if callee in body_of and callee not in calling:
                    expand(body_of[callee], sequence, calling | {callee})
            elif step[1].startswith("ttg.warp_specialize"):
                # The default region and each partition run concurrently.
                for nested in step[2]:
                    expand(nested, next(sequences), calling)
            else:
                for nested in step[2]:
                    expand(nested, sequence, calling)

    entry = module.get_entry_func_name()
    if entry in body_of:
        expand(body_of[entry], next(sequences), frozenset({entry}))
    return uses


def check_phase_lifetimes(specs, module, buffer_uses) -> None:
    """The lifetime check of phases (``planner.check_phase_lifetimes``) from the
    traced IR's order within each sequence of control: an error at the use in
    between, naming both buffers and the lines of the three uses."""
    uses = _uses_in_program_order(module, buffer_uses)
    for spec in specs:
        of_user = [uses.get(user, ()) for user in spec.users]
        where = {position: location for found in of_user for _, position, location in found}
        phase_uses = [
            [
                planner.PhaseUse(sequence=sequence, position=position)
                for sequence, position, _ in found
            ]
            for found in of_user
        ]
        problems = planner.check_phase_lifetimes(
            spec.plan, spec.planned_buffers, phase_uses, spec.name
        )
        if not problems:
            continue
        problem = problems[0]
        in_between, before, after = (where[n] for n in problem.numbers[:3])
        later, earlier = (spec.users[b] for b in problem.buffers)
        message = (
            f"{spec.describe()}: {problem.message}. {later.describe()} is used at {in_between}, "
            f"between the uses of {earlier.describe()} at {before} and at {after}"
        )
        raise compilation_error(in_between, message)


class KernelTrace:
    """Specs created while one kernel is traced, in creation order."""

    def __init__(self, kernel_name: str, target, target_name: str, options):
        self.kernel_name = kernel_name
        self.target = target
        self.target_name = target_name
        self.options = options
        self.specs: list[SpecState] = []
        # Every reuse_group / reuse_phases built, in order (implicit overlap).
        self.overlap_roots: list = []
        # The memory descriptors buffer indexing made: value id -> (user, where,
        # the descriptor's type text).
        self.buffer_uses: dict[int, tuple[AllocationState, SourceLocation, str]] = {}
        # DeprecationWarnings (location, message) to emit when tracing is done.
        self.deprecations: list = []
        # Set by the hazard check (_hazards): every backing allocation and view
        # carries its spec's and buffer's name as an attribute, so that CSE keeps
        # views of equal type apart and the check can name each access.
        self.name_views = False
        # Set by finish: the plan of every spec, in creation order.
        self.spec_plans: tuple[SpecPlan, ...] = ()

    @property
    def capability(self) -> int:
        """The CUDA compute capability compiled for; 0 (unknown to the planner)
        for targets without one."""
        arch = self.target.arch
        return arch if isinstance(arch, int) and not isinstance(arch, bool) else 0

    def check_storage(self, storage) -> None:
        """Raises unless the target has ``storage`` (TMEM needs Blackwell)."""
        problem = planner.storage_unavailable(planner_storage(storage), self.capability)
        if problem:
            raise TLXError(problem)

    def register(self, spec: SpecState) -> None:
        self.specs.append(spec)

    def record_use(self, handle, user: AllocationState, location: SourceLocation) -> None:
        """Remembers that ``handle`` (a buffer's memory descriptor) is buffer
        indexing of ``user`` at ``location``, for the lifetime check of phases."""
        self.buffer_uses[handle.id()] = (user, location, str(handle.get_type()))

    def finish(self, module=None) -> None:
        """Reports the specs never sealed, checks the lifetimes of phases in
        ``module`` (the traced IR), records every spec's plan, then dumps when
        asked to."""
        for location, message in self.deprecations:
            warn_deprecated_at(location, message)
        for spec in self.specs:
            if not spec.sealed:
                check_unsealed(spec)
        phased = [spec for spec in self.specs if spec.plan is not None and spec.plan.phases]
        if phased and module is not None:
            check_phase_lifetimes(phased, module, self.buffer_uses)
        self.spec_plans = with_other_regions(
            tuple(spec.record() for spec in self.specs), self.capability
        )
        dump_if_asked(self)


_active = threading.local()


def active_trace() -> KernelTrace | None:
    """The trace of the kernel being compiled on this thread, if it is a TLX one."""
    stack = getattr(_active, "stack", None)
    return stack[-1] if stack else None


class tracing:
    """``with tracing(trace):`` makes ``trace`` the active one on this thread."""

    def __init__(self, trace: KernelTrace):
        self.trace = trace

    def __enter__(self) -> KernelTrace:
        stack = getattr(_active, "stack", None)
        if stack is None:
            stack = _active.stack = []
        stack.append(self.trace)
        return self.trace

    def __exit__(self, *exception) -> None:
        _active.stack.pop()


def assigned_name(generator, fallback: str) -> str:
    """The variable the value being built is assigned to (``a = tlx.local_alloc(...)``
    names the buffer "a"), else ``fallback`` and the line number."""
    name = generator.name_loc_as_prefix
    if name:
        return name
    return f"{fallback}_line{location_of_call(generator).line}"


def new_spec_state(semantic, generator, name, storage, explicit_size_bytes, *, private=False):
    """A spec's trace-time state, registered with the kernel's trace. A spec made
    during a loop's dry run (whose IR Triton throws away) is not registered.
    Raises when the target has no such storage."""
    trace = active_trace()
    trace.check_storage(storage)
    spec = SpecState(
        name,
        storage,
        explicit_size_bytes,
        location_of_call(generator),
        semantic.builder.get_insertion_block(),
        generator.function_name,
        private=private,
        capability=trace.capability,
    )
    if not compat.in_loop_carry_discovery(generator):
        trace.register(spec)
    return spec
