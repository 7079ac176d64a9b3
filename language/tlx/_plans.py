"""What the planner made of a kernel's specs: one immutable ``SpecPlan`` per spec.

While a kernel is traced, every storage alias spec (and the region of every
``local_alloc`` without ``reuse``) is planned once: when it is sealed, or at
the end of tracing when it never was. The trace keeps what was passed to the
planner and what came back; ``tlx.kernel_plans`` returns it. Nothing here
computes a size or an offset: every number is the planner's.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from . import planner
from ._kinds import storage_kind


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

    ``spec``, ``buffers`` and ``tree`` are what tlx passed to ``tlx.planner.plan``
    (buffers in ``local_alloc`` order; ``tree`` is None without
    ``set_buffer_overlap``) and ``plan`` is what it returned, so
    ``planner.plan(spec, buffers, tree) == plan``. ``plan.views[i]`` places
    ``buffers[i]``. ``sealed_by`` says what allocated the region (None: the spec
    was never sealed, allocates nothing, and its plan was only checked).
    ``private`` marks the region of a ``local_alloc`` without ``reuse``.
    ``backing_alignment`` is the alignment of the backing allocation (the
    plan's, or more when a joined buffer needs more; 0 when nothing is
    allocated). ``description`` names the spec as error messages do.
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

    def describe(self) -> str:
        """The spec and what sealed it, then the planner's memory map of its
        region (and of each joined buffer)."""
        if self.allocated:
            status = f"sealed by {self.sealed_by}"
        else:
            status = "never sealed: allocates nothing, its plan is only checked"
        text = f"{self.description}, {status}\n{self.plan.describe(self.buffers)}"
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
