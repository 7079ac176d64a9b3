"""Tracing a kernel with other reuse trees than its own: the trace-time override.

``tlx.suggest`` traces a kernel twice with trees it chooses: once with every tree stripped
(each buffer of the spec from the region's start, as without a tree), to execute the kernel
and find the pairs its synchronization orders, and once with the suggested trees, to prove
them with the hazard check. The kernel's code is not changed: the API layer asks the active
override (``api._state.overriding_overlap``, read where a spec is planned, ``api._sealing``)
for each spec's tree, and the override remembers the kernel's own, for the comparison.
"""

from __future__ import annotations

from .. import planner
from ..api._state import overriding_overlap
from .search import buffer_count

STRIPPED = "tlx.suggest (tree stripped)"
SUGGESTED = "tlx.suggest"


def stripped_tree(buffers) -> planner.Group:
    """Every user's buffers from the region's start, one after the other, as without a tree
    (docs/semantics.md), written as a tree so that the planner does not warn of a missing
    one: a shared node of one group per user."""
    return planner.shared(
        *(planner.shared(user, group_size=buffer_count(b)) for user, b in enumerate(buffers))
    )


class Override:
    """The trees a trace plans its specs with: ``trees`` by spec name; every other spec of
    more than one user keeps its own tree, or loses it (``strip``: ``"all"``, or ``"auto"``
    for the specs made with ``overlap="auto"``). ``originals`` records what each spec had:
    (tree, phases, what gave it)."""

    def __init__(self, trees=None, strip: str = ""):
        self.trees = dict(trees or {})
        self.strip = strip
        self.originals: dict = {}
        self.auto: list[str] = []  # the specs made with overlap="auto", in order

    def __call__(self, spec):
        self.originals[spec.name] = (spec.overlap_tree, spec.overlap_phases, spec.overlap_source)
        if spec.auto:
            self.auto.append(spec.name)
        tree = self.trees.get(spec.name)
        if tree is not None:
            return tree, (), SUGGESTED
        if len(spec.users) > 1 and (self.strip == "all" or (self.strip == "auto" and spec.auto)):
            buffers = [user.planner_buffer() for user in spec.users]
            return stripped_tree(buffers), (), STRIPPED
        return None

    def active(self):
        """``with override.active():`` traces on this thread use it."""
        return overriding_overlap(self)
