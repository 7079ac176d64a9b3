"""What the planner made of a kernel's specs, for people and tools.

* ``SpecPlan``: one immutable record per spec (and per ``local_alloc`` without
  ``reuse``), what tlx passed to the planner and what came back, as
  ``tlx.kernel_plans`` returns them;
* ``dump_module_text``: the kernel's specs as a TLX-dialect module
  (``TLX_DUMP_ALIAS_IR=1``), with the users typed by the ``!ttg.memdesc`` text
  Triton prints, so that ``triton-opt --tlx-storage-alias-lowering`` reproduces
  the kernel's plan.

Nothing here computes a size or an offset: every number is the planner's.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
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
        from ._svg import plan_svg

        return plan_svg(self)

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


def kernel_usage(spec_plans) -> dict[planner.Storage, int]:
    """Units of each storage the kernel's tlx regions take (``region_units``
    summed), for the storages it allocates."""
    usage: dict[planner.Storage, int] = {}
    for spec_plan in spec_plans:
        if spec_plan.allocated:
            storage = spec_plan.plan.storage
            usage[storage] = usage.get(storage, 0) + spec_plan.region_units
    return usage


def with_other_regions(spec_plans: tuple[SpecPlan, ...]) -> tuple[SpecPlan, ...]:
    """The plans of one kernel, each told what the others of its storage take."""
    usage = kernel_usage(spec_plans)
    return tuple(
        dataclasses.replace(
            spec_plan,
            other_regions_units=usage.get(spec_plan.plan.storage, 0) - spec_plan.region_units,
        )
        for spec_plan in spec_plans
    )


_BARE_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_NOT_IN_SSA_NAME = re.compile(r"[^A-Za-z0-9_$.]")


class _Names:
    """Unique SSA names within one function."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, wanted: str) -> str:
        base = _NOT_IN_SSA_NAME.sub("_", wanted) or "v"
        if base[0].isdigit():
            base = f"v{base}"
        name, suffix = base, 1
        while name in self.used:
            name = f"{base}_{suffix}"
            suffix += 1
        self.used.add(name)
        return f"%{name}"


def _symbol(name: str) -> str:
    if _BARE_IDENTIFIER.match(name):
        return f"@{name}"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'@"{escaped}"'


def _spec_type(spec) -> str:
    size = "" if spec.explicit_size_bytes is None else f", {spec.explicit_size_bytes}"
    return f"!tlx.storage_alias_spec<{spec.storage.value}{size}>"


def _spec_lines(spec, names: _Names) -> list[str]:
    spec_type = _spec_type(spec)
    spec_name = names.fresh(spec.name)
    size = "" if spec.explicit_size_bytes is None else f", size = {spec.explicit_size_bytes}"
    lines = [
        f"{spec_name} = tlx.storage_alias_spec storage = {spec.storage.value}{size} : {spec_type}"
    ]
    user_values = []
    for user in (*spec.users, *spec.followers):
        value = names.fresh(user.name)
        user_values.append((value, user.type_text))
        lines.append(
            f"{value} = tlx.storage_alias_local_alloc {spec_name} : {spec_type} -> {user.type_text}"
        )
    if spec.overlap_tree is not None:
        root, root_type = _group_lines(spec.overlap_tree, user_values, names, lines)
        lines.append(
            f"tlx.set_buffer_overlap({spec_name}, {root}) : ({spec_type}, {root_type}) -> ()"
        )
    return lines


def _group_lines(group, user_values, names: _Names, lines: list[str]) -> tuple[str, str]:
    operands = []
    for child in group.children:
        if isinstance(child, int):
            operands.append(user_values[child])
        else:
            operands.append(_group_lines(child, user_values, names, lines))
    value = names.fresh("group")
    group_type = f"!tlx.reuse_group<{group.kind}>"
    group_size = "" if group.group_size == 1 else f", group_size = {group.group_size}"
    values = ", ".join(operand for operand, _ in operands)
    types = ", ".join(operand_type for _, operand_type in operands)
    lines.append(
        f"{value} = tlx.reuse_group({values}) group_kind = {group.kind}{group_size} : "
        f"({types}) -> {group_type}"
    )
    return value, group_type


def dump_module_text(trace) -> str:
    """The TLX-dialect module of every spec ``trace`` recorded."""
    functions: dict[str, list] = {}
    for spec in trace.specs:
        functions.setdefault(spec.function_name, []).append(spec)
    options = trace.options
    lines = [
        f"// TLX storage alias specs of kernel {trace.kernel_name} ({trace.target_name})",
        f'module attributes {{"ttg.num-ctas" = {options.num_ctas} : i32, '
        f'"ttg.num-warps" = {options.num_warps} : i32, ttg.target = "{trace.target_name}", '
        f'"ttg.threads-per-warp" = {options.warp_size} : i32}} {{',
    ]
    for function_name, specs in functions.items():
        lines.append(f"  tt.func {_symbol(function_name)}() {{")
        names = _Names()
        for spec in specs:
            lines.extend(f"    {line}" for line in _spec_lines(spec, names))
        lines.append("    tt.return")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
