"""What the planner made of a kernel's specs, for people and tools.

``SpecPlan`` is one immutable record per spec (and per ``local_alloc`` without
``reuse``): what tlx passed to the planner and what came back, as
``tlx.kernel_plans`` returns them, with its advice; ``JoinedBuffer`` a legacy
``reuse=buffer`` user placed after sealing. Nothing here computes a size or an
offset: every number is the planner's.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass

from .. import planner
from .._kinds import storage_kind
from .budget import budget_of


@dataclass(frozen=True)
class JoinedBuffer:
    """A legacy ``local_alloc(..., reuse=buffer)`` user that joined a spec after
    the spec was sealed: the planner placed it alone, at offset 0, in the
    allocated region (``spec`` carries the region's size as its explicit size)."""

    spec: planner.Spec
    buffer: planner.Buffer
    plan: planner.Plan
    file_name: str
    line: int


@dataclass(frozen=True)
class SpecPlan:
    """The plan of one spec of a traced kernel.

    ``spec``, ``buffers`` and ``tree`` (or ``phases``, one tree per phase) are
    what tlx passed to ``tlx.planner.plan`` (buffers in ``local_alloc`` order;
    ``tree`` is None without an overlap or with phases) and ``plan`` is what it
    returned, so ``planner.plan(spec, buffers, phases or tree) == plan``.
    ``overlap_source`` says what gave the overlap (``set_buffer_overlap at
    ...``, or the tree that defines it implicitly; None: no overlap). ``plan.views[i]`` places
    ``buffers[i]``. ``sealed_by`` says what allocated the region (None: the spec
    was never sealed, allocates nothing, and its plan was only checked).
    ``private`` marks the region of a ``local_alloc`` without ``reuse``.
    ``backing_alignment`` is the alignment of the backing allocation (the
    plan's, or more when a joined buffer needs more; 0 when nothing is
    allocated). ``description`` names the spec as error messages do.
    ``other_regions_units`` is what the kernel's other allocated regions of the
    same storage take (bytes or TMEM columns): ``advice`` counts them.
    """

    description: str
    file_name: str
    line: int
    private: bool
    sealed_by: str | None
    spec: planner.Spec
    buffers: tuple[planner.Buffer, ...]
    tree: planner.Group | None
    plan: planner.Plan
    joined: tuple[JoinedBuffer, ...]
    backing_alignment: int
    other_regions_units: int = 0
    phases: tuple[planner.Group, ...] = ()
    overlap_source: str | None = None

    @property
    def name(self) -> str:
        """The spec's name: the variable it is assigned to (``<buffer>_region``
        for the region of a ``local_alloc`` without ``reuse``); the backing
        allocation carries it in the IR."""
        return self.spec.name

    @property
    def storage(self) -> storage_kind:
        return storage_kind(self.spec.storage.value)

    @property
    def allocated(self) -> bool:
        """True when the kernel allocates the region (the spec was sealed)."""
        return self.sealed_by is not None

    @property
    def region_units(self) -> int:
        """Bytes (SMEM) or TMEM columns the kernel allocates for this spec: the
        region, or 0 when the spec was never sealed."""
        return self.plan.region_size if self.allocated else 0

    @functools.cached_property
    def advice(self) -> tuple[planner.Split, ...]:
        """Under-utilisation advice (``planner.advise_splits``): for every child of
        a ``shared`` node of the tree (and every child of a ``distinct`` child of
        one), whether the kernel would still fit the target if its buffers stopped
        sharing, and what would be left. Empty without a tree or a valid plan."""
        if self.tree is None or not self.plan.ok:
            return ()
        return planner.advise_splits(self.spec, self.buffers, self.tree, self.other_regions_units)

    def to_svg(self) -> str:
        """The plan as a standalone SVG picture: a ruler, one lane per buffer, each
        buffer group in its own colour, shared units marked."""
        from .svg import plan_svg

        return plan_svg(self)

    def describe(self) -> str:
        """The spec and what sealed it, then the planner's memory map of its
        region (and of each joined buffer)."""
        if self.allocated:
            status = f"sealed by {self.sealed_by}"
        else:
            status = "never sealed: allocates nothing, its plan is only checked"
        source = "" if self.overlap_source is None else f", overlap from {self.overlap_source}"
        if self.overlap_source is not None and self.overlap_source.startswith("set_buffer_"):
            source = ""
        text = f"{self.description}, {status}{source}\n{self.plan.describe(self.buffers)}"
        for joined in self.joined:
            location = f"{os.path.basename(joined.file_name)}:{joined.line}"
            text += f"joined after sealing (reuse of a buffer) at {location}:\n"
            text += joined.plan.describe([joined.buffer])
        return text

    def plan_without_aliasing(self) -> planner.Plan:
        """The planner's plan of the same buffers when no two share bytes: every
        buffer of every user after the other, in ``local_alloc`` order (a
        ``distinct`` tree whose leaves each form one group of all their
        buffers), with the spec's limits but without its explicit size. Compare
        its ``size_bytes`` with ``plan.size_bytes`` to see what aliasing saves;
        its diagnostics say whether that layout would fit."""
        tree = None
        if self.buffers:
            tree = planner.distinct(
                *(
                    planner.shared(index, group_size=buffer.shape[0])
                    for index, buffer in enumerate(self.buffers)
                )
            )
        spec = dataclasses.replace(self.spec, explicit_size_bytes=None)
        return planner.plan(spec, self.buffers, tree)


def with_other_regions(spec_plans: tuple[SpecPlan, ...], capability: int) -> tuple[SpecPlan, ...]:
    """The plans of one kernel, each told what the others of its storage take."""
    budget = budget_of(spec_plans, capability, 1)
    return tuple(
        dataclasses.replace(
            spec_plan,
            other_regions_units=budget.storage(spec_plan.plan.storage).used_units
            - spec_plan.region_units,
        )
        for spec_plan in spec_plans
    )
