"""Tracing a kernel with other reuse trees than its own: the trace-time override.

``tlx.suggest`` traces a kernel twice with trees it chooses: once with every tree stripped
(each buffer of the spec from the region's start, as without a tree), to execute the kernel
and find the pairs its synchronization orders, and once with the suggested trees, to prove
them with the hazard check. The kernel's code is not changed: the API layer asks the active
override (``api._state.overriding_overlap``, read where a spec is planned, ``api._sealing``)
for each spec's tree, and the override remembers the kernel's own, for the comparison.

To compile or launch a kernel on other trees (the GPU runs of suggested trees,
test/gpu/test_suggested_trees.py), ``Override.source`` and ``Override.jit`` give a source and a
JIT function whose compiles trace under the override and whose cache key names its trees, so
that neither Triton's file cache nor the JIT's own hands back the binary of the kernel's trees.
"""

from __future__ import annotations

import hashlib

from .. import planner
from ..api._jit import ASTSource, JITFunction
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
    """The trees a trace plans its specs with: ``trees`` by spec name (a tuple of trees is a
    ``reuse_phases``); every other spec of more than one user keeps its own tree, or loses it
    (``strip``: ``"all"``, or ``"auto"`` for the specs made with ``overlap="auto"``).
    ``originals`` records what each spec had: (tree, phases, what gave it)."""

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
        if isinstance(tree, tuple):
            return None, tree, SUGGESTED
        if tree is not None:
            return tree, (), SUGGESTED
        if len(spec.users) > 1 and (self.strip == "all" or (self.strip == "auto" and spec.auto)):
            buffers = [user.planner_buffer() for user in spec.users]
            return stripped_tree(buffers), (), STRIPPED
        return None

    def active(self):
        """``with override.active():`` traces on this thread use it."""
        return overriding_overlap(self)

    def key(self) -> str:
        """What the override changes, for a compiled kernel's cache key."""
        return repr((sorted(self.trees.items()), self.strip))

    def jit(self, kernel) -> JITFunction:
        """A ``@tlx.jit`` function of ``kernel``'s code (and ``do_not_specialize``) whose
        compiles trace under this override: launched as ``kernel`` is, on the override's trees;
        its compiled kernels are its own (a JIT cache of its own, a file cache key with the
        trees)."""
        variant = _OverriddenJIT(kernel.fn, do_not_specialize=kernel.do_not_specialize)
        variant.overlap_values = dict(getattr(kernel, "overlap_values", {}))
        variant.override = self
        return variant

    def source(self, src: ASTSource) -> ASTSource:
        """``src`` (a ``tlx.ASTSource``) compiled under this override (``triton.compile``)."""
        return _OverriddenSource(self.jit(src.fn), src.signature, src.constants, src.attrs)


class _OverriddenSource(ASTSource):
    """The source of an ``Override.jit`` function: traced under its override, keyed by it."""

    def hash(self):
        key = super().hash() + self.fn.override.key()
        return hashlib.sha256(key.encode()).hexdigest()

    def make_ir(self, target, options, codegen_fns, module_map, context):
        with self.fn.override.active():
            return super().make_ir(target, options, codegen_fns, module_map, context)


class _OverriddenJIT(JITFunction):
    """``Override.jit``'s function: its compiles use ``_OverriddenSource``."""

    override: Override

    def create_binder(self):
        result = super().create_binder()
        self.ASTSource = _OverriddenSource
        return result
