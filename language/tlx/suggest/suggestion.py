"""``tlx.suggest_reuse``: the smallest reuse tree a kernel's synchronization makes safe, proved.

Three steps, each another module's job:

1. the kernel is traced with its trees stripped (``override``) and its TTGIR executed as the
   hazard check executes it, every pair of accesses to a spec tested (``pairs``): the pairs of
   buffer indices its synchronization orders in every timing;
2. per spec, the smallest tree over those pairs (``search``, scored by the planner);
3. the kernel is traced again with the suggested trees and checked (``tlx.check_hazards``):
   the proof.

``Suggestion.describe()`` prints, per spec, the tree as ``tlx.reuse_group`` code, its plan, and
what it saves against the kernel's own tree and against no sharing. docs/suggest.md.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

from .. import planner
from .._errors import TLXWarning
from ..hazards.check import check_hazards, kernel_ttgir
from ..hazards.report import HazardReport
from .code import tree_code
from .override import Override
from .pairs import Conflicts, Ordering, integer_arguments, ordering
from .search import Search, search

CLEAN = "clean"  # a tree found and proved
NOTHING_SAFE = "nothing safe"  # no two buffers may share: no sharing is safe
NOT_PROVED = "not proved"  # the check of the suggested trees found something
NOT_CHECKED = "not checked"  # the kernel cannot be executed, or is racy without sharing


@dataclass(frozen=True)
class SpecSuggestion:
    """One spec: its buffers, the tree it had (``own_tree``/``own_phases``, None without)
    and that tree's plan (``own_plan``, None without a tree), the plan with no sharing
    (``unshared_plan``), the search and its best tree."""

    name: str
    spec: planner.Spec
    buffers: tuple[planner.Buffer, ...]
    own_tree: planner.Group | None
    own_phases: tuple[planner.Group, ...]
    own_plan: planner.Plan | None
    unshared_plan: planner.Plan
    search: Search
    conflicts: Conflicts

    @property
    def tree(self) -> planner.Group | tuple[planner.Group, ...] | None:
        """The suggested tree (a tuple of trees: the kernel's own ``reuse_phases``, kept)."""
        return self.search.best.tree if self.search.best else None

    @property
    def inferred_tree(self) -> planner.Group | None:
        """The smallest tree of the search's family, the kernel's own tree no candidate: what
        the inference alone finds (equal to ``tree`` unless the kernel's own tree wins)."""
        return self.search.inferred.tree if self.search.inferred else None

    @property
    def keeps_own(self) -> bool:
        """Whether the suggestion is the kernel's own tree (no smaller safe tree found)."""
        return self.search.best is not None and self.search.best.own

    @property
    def shares(self) -> bool:
        """Whether the suggested tree lets two buffers share bytes."""
        return self.search.best is not None and self.search.best.shared_pairs > 0

    @property
    def plan(self) -> planner.Plan | None:
        return self.search.best.plan if self.search.best else None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(buffer.name for buffer in self.buffers)

    def code(self) -> str:
        return tree_code(self.name, self.tree, self.names) if self.tree is not None else ""

    def _saving(self, other: planner.Plan | None, what: str) -> str:
        if other is None or self.plan is None:
            return ""
        unit = "bytes" if self.plan.storage == planner.Storage.SMEM else "columns"
        if not other.ok:
            return f"against {what}: that plan is refused ({other.errors[0].message})"
        delta = other.region_size - self.plan.region_size
        verb = "saves" if delta >= 0 else "costs"
        return f"{verb} {abs(delta)} {unit} against {what} ({other.region_size} {unit})"

    @property
    def unwritten(self) -> tuple[str, ...]:
        """The reads of buffer indices nothing wrote before them, in words."""
        return tuple(
            f'{access.describe()} before anything writes "{self.names[user]}"[{index}]: it '
            "reads bytes another buffer wrote (a reinterpretation), and whose only the kernel's "
            "author can say; keep that sharing in a tree of your own"
            for (user, index), access in sorted(self.conflicts.unwritten.items())
        )

    def describe(self) -> str:
        lines = [f'spec "{self.name}" ({", ".join(self.names)}):']
        if self.unwritten:
            lines.append("  not inferred: a buffer is read before it is written:")
            lines.extend(f"    {line}" for line in self.unwritten)
            return "\n".join(lines)
        if not self.shares:
            lines.append(
                "  no sharing is safe: no two of these buffers may share a byte in any tree "
                "this search makes; the pairs, and why (one hazard each):"
                if self.plan is not None
                else "  no tree fits: no sharing is safe, and these buffers unshared do not fit"
            )
            lines.extend(_why(self))
            return "\n".join(lines)
        if self.keeps_own:
            lines.append("  suggested tree: the kernel's own, no safe tree found is smaller:")
        else:
            lines.append("  suggested tree (paste it over the spec's set_buffer_overlap):")
        lines.extend(f"    {line}" for line in self.code().splitlines())
        lines.extend(f"  {line}" for line in self.plan.describe(self.buffers).rstrip().splitlines())
        for text in (
            self._saving(self.own_plan, "the kernel's own tree" if self.own_plan else ""),
            self._saving(self.unshared_plan, "no sharing"),
        ):
            if text:
                lines.append(f"  {text}")
        lines.extend(self._unseen())
        if self.search.incompatible:
            lines.append("  pairs that may never share, and why (one hazard each):")
            lines.extend(_why(self))
        return "\n".join(lines)

    def _unseen(self) -> list[str]:
        """Where the kernel's own tree shares bytes the inference finds unordered: the
        ordering it relies on, which the check's execution could not see."""
        if self.search.own_conflict is None:
            return []
        (first, i), (second, j), hazard = self.search.own_conflict
        return [
            f'  the kernel\'s own tree lays "{self.names[first]}"[{i}] and '
            f'"{self.names[second]}"[{j}] on shared bytes, which the inference finds '
            "unordered (so it is no candidate):",
            f"    {hazard.first.describe()}",
            f"    {hazard.second.describe()}",
            f"    not ordered: {hazard.missing}",
        ]


def _why(suggestion: SpecSuggestion) -> list[str]:
    names = suggestion.names
    lines = []
    for first, second, hazard in suggestion.search.incompatible:
        lines.append(f'    "{names[first]}" and "{names[second]}":')
        lines.append(f"      {hazard.first.describe()}")
        lines.append(f"      {hazard.second.describe()}")
        lines.append(f"      not ordered: {hazard.missing}")
    return lines


@dataclass(frozen=True)
class Suggestion:
    """What ``tlx.suggest_reuse`` found. ``result``: ``"clean"`` (every spec of two or more
    buffers has a tree and the kernel with them checks clean), ``"nothing safe"`` (no spec's
    buffers may share a byte, each says why, or some spec's do not fit unshared), ``"not
    proved"`` (the check of the suggested trees found something) or ``"not checked"`` (the
    kernel cannot be executed, or a buffer is read before it is written: ``problems`` and the
    specs say why). ``specs`` per spec, ``ordering`` (the execution of the stripped kernel),
    ``proof`` (the check of the kernel with the suggested trees; None when not run) and the
    seconds of each step."""

    kernel: str
    target: str
    result: str
    specs: tuple[SpecSuggestion, ...]
    ordering: Ordering
    proof: HazardReport | None
    problems: tuple[str, ...]
    ttgir_seconds: float
    search_seconds: float
    proof_seconds: float

    @property
    def trees(self) -> dict:
        """The suggested tree of each spec that has one, by spec name."""
        return {spec.name: spec.tree for spec in self.specs if spec.tree is not None}

    @property
    def inferred_trees(self) -> dict:
        """The tree the inference alone finds for each spec that has one (``trees`` but for
        the kernels' own trees), by spec name."""
        return {
            spec.name: spec.inferred_tree for spec in self.specs if spec.inferred_tree is not None
        }

    def describe(self) -> str:
        lines = [f"kernel {self.kernel} for {self.target}: {self.result}"]
        lines.append(
            f"TTGIR of the kernel without trees in {self.ttgir_seconds:.2f} s; pairs and search "
            f"in {self.search_seconds:.2f} s; proof in {self.proof_seconds:.2f} s"
        )
        for problem in self.problems:
            lines.append(f"  {problem}")
        for spec in self.specs:
            lines.append(spec.describe())
        if self.proof is not None:
            if self.proof.clean:
                lines.append("proof: the kernel with the suggested trees checks clean")
            else:
                lines.append("proof failed: the kernel with the suggested trees is not clean")
                lines.append(self.proof.describe().rstrip())
        return "\n".join(lines) + "\n"


def _spec_suggestion(spec_plan, own, conflicts) -> SpecSuggestion:
    own_tree, own_phases, _ = own
    own_plan = None
    if own_tree is not None or own_phases:
        own_plan = planner.plan(spec_plan.spec, spec_plan.buffers, own_phases or own_tree)
    return SpecSuggestion(
        spec_plan.name,
        spec_plan.spec,
        spec_plan.buffers,
        own_tree,
        own_phases,
        own_plan,
        spec_plan.plan_without_aliasing(),
        search(spec_plan.spec, spec_plan.buffers, conflicts, own_phases or own_tree),
        conflicts,
    )


def infer(
    src,
    target,
    options=None,
    *,
    values=None,
    program_id=(0, 0, 0),
    num_programs=(1, 1, 1),
    strip="all",
):
    """Steps 1 and 2: (per-spec suggestions, the ordering, seconds of the pairs and search,
    seconds of the TTGIR) of the kernel with its trees stripped (``strip``: ``Override``'s:
    "all", or "auto" for the specs made with ``overlap="auto"`` alone)."""
    override = Override(strip=strip)
    started = time.perf_counter()
    with override.active(), warnings.catch_warnings():
        warnings.simplefilter("ignore", TLXWarning)
        text, spec_plans = kernel_ttgir(src, target, options)
    ttgir_seconds = time.perf_counter() - started
    started = time.perf_counter()
    found = ordering(
        text,
        spec_plans,
        kernel=src.fn.__name__,
        target=planner.target_name(target.arch),
        integer_names=integer_arguments(src),
        values=dict(values or {}),
        program_id=tuple(program_id),
        num_programs=tuple(num_programs),
    )
    specs = []
    if not found.problems:
        for spec_plan in spec_plans:
            if spec_plan.private or len(spec_plan.buffers) < 2:
                continue
            if strip == "auto" and spec_plan.name not in override.auto:
                continue
            own = override.originals.get(spec_plan.name, (None, (), None))
            specs.append(_spec_suggestion(spec_plan, own, found.conflicts[spec_plan.name]))
    return tuple(specs), found, time.perf_counter() - started, ttgir_seconds


def suggest_reuse(
    src, target, options=None, *, values=None, program_id=(0, 0, 0), num_programs=(1, 1, 1)
) -> Suggestion:
    """The smallest race-free reuse tree of every spec of a ``@tlx.jit`` kernel, proved.

    Takes what ``tlx.check_hazards`` takes (``src`` a ``tlx.ASTSource``, ``target`` a
    ``GPUTarget``, ``options`` the compile options, ``values`` the integer arguments that
    decide loop trips, buffer indices and phases, ``program_id``/``num_programs``). The
    kernel's own trees are ignored (stripped) for the inference and compared with at the
    end. Runs on the CPU; ``describe()`` prints the result (docs/suggest.md)."""
    check = {"values": values, "program_id": program_id, "num_programs": num_programs}
    specs, found, search_seconds, ttgir_seconds = infer(src, target, options, **check)
    problems = found.problems
    proof, proof_seconds = None, 0.0
    if problems or any(spec.unwritten for spec in specs):
        result = NOT_CHECKED
    elif any(spec.tree is None for spec in specs) or not any(spec.shares for spec in specs):
        result = NOTHING_SAFE
    else:
        started = time.perf_counter()
        override = Override({spec.name: spec.tree for spec in specs})
        with override.active(), warnings.catch_warnings():
            warnings.simplefilter("ignore", TLXWarning)
            proof = check_hazards(src, target, options, **check)
        proof_seconds = time.perf_counter() - started
        result = CLEAN if proof.clean else NOT_PROVED
    return Suggestion(
        src.fn.__name__,
        planner.target_name(target.arch),
        result,
        specs,
        found,
        proof,
        problems,
        ttgir_seconds,
        search_seconds,
        proof_seconds,
    )
