"""``storage_alias_spec(..., overlap="auto")``: the tree inferred when the kernel is compiled.

When a trace (``api._jit.ASTSource.traced_make_ir``) made a spec with ``overlap="auto"`` and no
override is active, ``auto_overlap`` infers the tree of every such spec as ``tlx.suggest_reuse``
does (the kernel traced with those specs' trees stripped, its TTGIR executed with the values of
``@tlx.jit(overlap_values=...)``, the smallest tree searched) and returns the override the kernel
is traced again with. A spec whose buffers may share nothing, or whose pairs cannot be inferred
(an operation outside the check's table, a value not given, a buffer read before it is written),
gets the tree that shares nothing, and a ``TLXWarning`` says why: the pair nothing orders and
what is missing. A tree that differs from the one a previous compile of the kernel chose gets a
``TLXWarning`` too. The proof (``python -m tlx suggest``) is not run at compile time.
"""

from __future__ import annotations

import dataclasses
import warnings

from .. import planner
from .._errors import TLXWarning
from ..api._state import overlap_override
from .override import Override
from .suggestion import infer

# The tree each compile chose: (kernel, target, spec) -> tree.
_CHOSEN: dict = {}


def _unshared(buffers) -> planner.Group:
    """Every buffer apart from every other (``SpecPlan.plan_without_aliasing``'s tree)."""
    return planner.distinct(
        *(planner.shared(user, group_size=buffer.shape[0]) for user, buffer in enumerate(buffers))
    )


def _why_not(spec) -> str:
    if spec.unwritten:
        return spec.unwritten[0]
    if spec.search.incompatible:
        first, second, hazard = spec.search.incompatible[0]
        return (
            f'"{spec.names[first]}" and "{spec.names[second]}" are used unordered: '
            f"{hazard.first.describe()} and {hazard.second.describe()}; not ordered: "
            f"{hazard.missing}"
        )
    return "no tree fits"


def auto_overlap(src, target, options, trace) -> Override | None:
    """The override a kernel with ``overlap="auto"`` specs is traced again with, or None
    (no such spec in ``trace``, or an override is already active: the inference's own
    traces, or ``tlx.suggest``'s)."""
    auto = [spec for spec in trace.specs if spec.auto]
    if not auto or overlap_override() is not None:
        return None
    values = getattr(src.fn, "overlap_values", {})
    compile_options = {
        field.name: getattr(options, field.name) for field in dataclasses.fields(options)
    }
    specs, found, _, _ = infer(src, target, compile_options, values=values, strip="auto")
    trees = {}
    for state in auto:
        spec = next((s for s in specs if s.name == state.name), None)
        buffers = [user.planner_buffer() for user in state.users]
        if len(buffers) < 2:
            continue
        if spec is None or not spec.shares or spec.unwritten:
            why = "; ".join(found.problems) if spec is None else _why_not(spec)
            warnings.warn(
                f'{state.describe()} has overlap="auto" and no sharing is safe, so its buffers '
                f"share nothing: {why}",
                TLXWarning,
                stacklevel=2,
            )
            tree = _unshared(buffers)
        else:
            tree = spec.tree
        key = (src.fn.__name__, planner.target_name(target.arch), state.name)
        previous = _CHOSEN.get(key)
        if previous is not None and previous != tree:
            warnings.warn(
                f'{state.describe()} has overlap="auto", and this compile inferred another '
                f"tree than the previous one ({tree} instead of {previous}): the values or "
                "constexprs changed which buffers the kernel's synchronization orders",
                TLXWarning,
                stacklevel=2,
            )
        _CHOSEN[key] = tree
        trees[state.name] = tree
    return Override(trees)
