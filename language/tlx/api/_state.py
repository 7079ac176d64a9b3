"""The state of one kernel's tracing: its specs, their users and their plans.

While a kernel is traced, a spec and its buffers are Python objects only
(``SpecState``, ``AllocationState``), registered with the ``KernelTrace`` of the
kernel, the one ``tracing`` makes active on this thread. ``_semantic`` creates
and changes them, ``_sealing`` plans them and records the plan on them, and when
tracing is done ``_jit.finish_trace`` reads them. This module holds data and asks
nothing of the planner but the planner's inputs (``_translate``).
"""

from __future__ import annotations

import threading

from .. import compat, planner
from .._errors import SourceLocation, TLXError, location_of_call
from ..report.plan import JoinedBuffer, SpecPlan
from ._translate import planner_buffer, planner_spec, planner_storage


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

    def first_use_at(self, location: SourceLocation) -> str:
        """What seals the spec when this is the first use of any of its buffers."""
        return f'the first use of buffer "{self.name}" at {location}'

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
        # storage_alias_spec(..., overlap="auto"): tlx.suggest infers the tree.
        self.auto = False

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
        # DeprecationWarnings and TLXWarnings (location, message) to emit when tracing
        # is done without an error: a kernel that does not compile gets its error alone.
        self.deprecations: list = []
        self.warnings: list = []
        # Set by the hazard check (tlx.hazards): every backing allocation and view
        # carries its spec's and buffer's name as an attribute, so that CSE keeps
        # views of equal type apart and the check can name each access.
        self.name_views = False
        # Set by _jit.finish_trace: the plan of every spec, in creation order.
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


_active = threading.local()
# tlx.suggest's trace-time override of overlaps (language/tlx/suggest/override.py): a
# function (SpecState) -> (tree, phases, source) to plan the spec with, or None to keep its
# own; one per thread, set with ``overriding_overlap``.
_override = threading.local()


def overlap_override():
    """The override of overlaps active on this thread (None: every spec keeps its own)."""
    return getattr(_override, "function", None)


class overriding_overlap:
    """``with overriding_overlap(function):`` plans specs with ``function``'s trees."""

    def __init__(self, function):
        self.function = function

    def __enter__(self):
        self.previous = overlap_override()
        _override.function = self.function

    def __exit__(self, *exception) -> None:
        _override.function = self.previous


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
    during a loop's dry run (whose IR Triton throws away) is not registered."""
    trace = active_trace()
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
