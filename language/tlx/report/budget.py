"""A kernel's budget: the SMEM and TMEM its plans use against a target's capacity.

``kernel_budget(spec_plans, target, ctas_per_sm)`` adds up the regions a kernel
allocates, per storage, and asks the planner whether they fit what one CTA of the
target has when ``ctas_per_sm`` CTAs are to share an SM (``planner.storage_budget``,
``planner.over_storage_budget``). Its ``reasons`` are
the planner's words: each plan's own errors (``over_smem_limit``, ...) and the
kernel-wide ``over_storage_budget``. The plan report, the tutorials and
configuration pruning read it; none of them re-derives a budget.

``ctas_per_sm`` is checked once, where it enters: ``kernel_budget`` checks it, and the
package's own callers, which checked it where the user gave it, call ``budget_of``. The
planner's functions (``planner.storage_budget``) keep their own check: they are
``tlx.planner``'s public API and the last step before its C++.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .. import planner

_TARGET_NAME = re.compile(r"(?:sm_)?(\d+)a?\Z")


def target_capability(target) -> int:
    """The CUDA compute capability of ``target``: an int (90, 100), a name
    (``"sm_90a"``, ``"sm_100a"``, ``"sm_90"``) or a ``GPUTarget`` (its ``arch``)."""
    arch = getattr(target, "arch", target)
    if isinstance(arch, int) and not isinstance(arch, bool):
        return arch
    if isinstance(arch, str):
        match = _TARGET_NAME.match(arch.strip())
        if match:
            return int(match.group(1))
    raise ValueError(
        f"target must be a compute capability (90, 100), a name such as 'sm_90a' or a "
        f"GPUTarget, got {target!r}"
    )


@dataclass(frozen=True)
class StorageBudget:
    """One storage of a kernel against one CTA of the target (its share of an SM where
    several CTAs share one): ``used_units`` (bytes for SMEM, columns for TMEM) of
    ``capacity_units``, made of ``regions`` (the
    name and units of each region the kernel allocates, in creation order).
    ``error`` is the planner's ``over_storage_budget`` diagnostic, None when it
    fits."""

    storage: planner.Storage
    used_units: int
    capacity_units: int
    regions: tuple[tuple[str, int], ...]
    error: planner.Diagnostic | None

    @property
    def fits(self) -> bool:
        return self.error is None

    @property
    def left_units(self) -> int:
        """What is left of the capacity (negative: over it)."""
        return self.capacity_units - self.used_units

    @property
    def unit(self) -> str:
        return "bytes" if self.storage is planner.Storage.SMEM else "columns"

    def describe(self) -> str:
        """``smem: 163840 of 232448 bytes (68608 left): smem 163840``."""
        left = self.left_units
        verdict = f"{left} left" if left >= 0 else f"{-left} over"
        parts = ", ".join(f"{name} {units}" for name, units in self.regions)
        return (
            f"{self.storage.value}: {self.used_units} of {self.capacity_units} {self.unit} "
            f"({verdict}): {parts}"
        )


@dataclass(frozen=True)
class KernelBudget:
    """What a kernel's plans use of each storage it allocates, against the target
    of ``capability`` with ``ctas_per_sm`` CTAs an SM. ``storages`` has one entry
    per storage the kernel allocates (in the order its regions are created);
    ``reasons`` says, in the planner's words, why the kernel does not fit (empty
    when it does)."""

    capability: int
    storages: tuple[StorageBudget, ...]
    reasons: tuple[str, ...]
    ctas_per_sm: int = 1

    @property
    def fits(self) -> bool:
        return not self.reasons

    def storage(self, storage) -> StorageBudget:
        """The entry of ``storage`` (``tlx.storage_kind.smem``, ``planner.Storage.SMEM``
        or ``"smem"``; one with nothing used when the kernel allocates none of it)."""
        storage = planner.Storage(getattr(storage, "value", storage))
        for entry in self.storages:
            if entry.storage is storage:
                return entry
        return _storage_budget(storage, self.capability, (), self.ctas_per_sm)

    def describe(self) -> str:
        """One line per storage (``StorageBudget.describe``), then the reasons."""
        lines = [entry.describe() for entry in self.storages]
        lines.extend(f"does not fit: {reason}" for reason in self.reasons)
        return "\n".join(lines)


def _storage_budget(storage, capability, regions, ctas_per_sm) -> StorageBudget:
    used = sum(units for _, units in regions)
    return StorageBudget(
        storage,
        used,
        planner.storage_budget(storage, capability, ctas_per_sm),
        tuple(regions),
        planner.over_storage_budget(storage, capability, used, ctas_per_sm),
    )


def kernel_budget(spec_plans: Iterable, target, ctas_per_sm: int = 1) -> KernelBudget:
    """The budget of a kernel whose plans are ``spec_plans`` (``tlx.SpecPlan``, as
    ``tlx.kernel_plans`` returns them) on ``target`` (a compute capability such as
    90 or 100, a name such as ``"sm_90a"``, or a ``GPUTarget``), ``ctas_per_sm`` of
    its CTAs to run on one SM at once (each then has an equal share of the SM's SMEM
    and TMEM). Counts the regions the kernel allocates (``SpecPlan.region_units``); a
    spec never sealed counts nothing but its plan's errors are still reasons."""
    return budget_of(
        spec_plans, target_capability(target), planner.checked_ctas_per_sm(ctas_per_sm)
    )


def budget_of(spec_plans: Iterable, capability: int, ctas_per_sm: int) -> KernelBudget:
    """``kernel_budget`` of a ``capability`` and a ``ctas_per_sm`` already checked at the
    API boundary they came through (``tlx.kernel_budget``, ``tlx.PlanPruner``, the
    command line), by ``planner.checked_ctas_per_sm``."""
    spec_plans = tuple(spec_plans)
    regions: dict[planner.Storage, list[tuple[str, int]]] = {}
    reasons = []
    for spec_plan in spec_plans:
        reasons.extend(error.message for error in spec_plan.plan.errors)
        if spec_plan.allocated:
            regions.setdefault(spec_plan.plan.storage, []).append(
                (spec_plan.name, spec_plan.region_units)
            )
    storages = tuple(
        _storage_budget(storage, capability, storage_regions, ctas_per_sm)
        for storage, storage_regions in regions.items()
    )
    reasons.extend(entry.error.message for entry in storages if entry.error is not None)
    return KernelBudget(capability, storages, tuple(reasons), ctas_per_sm)
