"""What the hazard check reports, in the kernel's own terms: Python buffer names and source lines.

``HazardReport`` is the result of ``tlx.check_hazards``; a ``Hazard`` is two ``Access``es that
nothing orders, an ``AmbiguousWait`` an mbarrier wait by parity that another timing would let
pass on another phase, a ``BarrierRace`` a use of an mbarrier not ordered with its (re-)init
or invalidate. ``SourceLines`` turns a TTGIR operation's location into the file and
line of the Python source (and of its call site), which is how every message names it.
``Incomplete`` stops an execution that cannot go on; its message becomes a line of the report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .ttgir import Module

CLEAN = "clean"
HAZARDS = "hazards"
INCOMPLETE = "incomplete"
DEADLOCK = "deadlock"


def _where(file_name: str, line: int, callers) -> str:
    """``file.py:line``, and the first call site of a line inside a called function."""
    where = f"{os.path.basename(file_name)}:{line}"
    for caller_file, caller_line in callers[:1]:
        where += f" (called at {os.path.basename(caller_file)}:{caller_line})"
    return where


@dataclass(frozen=True)
class Access:
    """One side of a hazard: a read or write of a buffer index at a source line."""

    operation: str  # how the report names it ("TMA load", "local_store", ...)
    kind: str  # "read" or "write"
    buffer: str
    index: int
    partition: str
    file_name: str
    line: int
    callers: tuple[tuple[str, int], ...] = ()

    def describe(self) -> str:
        where = _where(self.file_name, self.line, self.callers)
        buffer = f'"{self.buffer}"[{self.index}]'
        return f"{self.operation} {self.kind}s {buffer} at {where} ({self.partition})"


@dataclass(frozen=True)
class Hazard:
    """Two accesses to shared units that nothing orders; ``units`` is [start, end)
    of the spec's region (bytes for SMEM, columns for TMEM); ``missing`` says which
    ordering is missing; ``occurrences`` counts the pairs the execution met."""

    spec: str
    storage: str
    first: Access
    second: Access
    units: tuple[int, int]
    missing: str
    occurrences: int = 1

    def describe(self) -> str:
        unit = "bytes" if self.storage == "smem" else "TMEM columns"
        start, end = self.units
        return (
            f'hazard in spec "{self.spec}": {unit} {start} .. {end} are shared by\n'
            f"  {self.first.describe()}\n"
            f"  {self.second.describe()}\n"
            f"  not ordered: {self.missing}"
            + (f" ({self.occurrences} times)" if self.occurrences > 1 else "")
        )


@dataclass(frozen=True)
class AmbiguousWait:
    """A wait on mbarrier ``barrier`` that passed on phase ``phase`` by the phase's
    parity, which the hardware cannot tell from the phases two before and two after
    it: ``why`` says which neighbouring phase nothing orders before (or after) it.
    ``occurrences`` counts the waits the execution met at that line in that partition."""

    file_name: str
    line: int
    callers: tuple[tuple[str, int], ...]
    partition: str
    barrier: str
    phase: int
    why: str
    occurrences: int = 1

    def describe(self) -> str:
        where = _where(self.file_name, self.line, self.callers)
        took = f"for phase {self.phase}" if self.phase >= 0 else "passing on the fresh barrier"
        return (
            f"ambiguous wait: {self.partition} waits on mbarrier {self.barrier} at {where} "
            f"{took} by its parity, and {self.why}"
            + (f" ({self.occurrences} times)" if self.occurrences > 1 else "")
        )


@dataclass(frozen=True)
class BarrierRace:
    """An mbarrier used (an arrival, a wait, a TMA load or ``tcgen05`` commit completing on
    it) at ``use`` without happens-before ordering it with the init or invalidate at
    ``where``: ``order`` is "before" (the use may come after the re-init or invalidate),
    "after" (it may come before the init) or "invalid" (it follows an invalidate, with no
    init between). ``occurrences`` counts how often the execution met it."""

    barrier: str
    what: str  # "initialized" or "invalidated"
    where: str  # file:line (partition) of the init or invalidate
    use: str  # the operation that uses the barrier, at file:line (partition)
    order: str
    occurrences: int = 1

    def describe(self) -> str:
        if self.order == "before":
            why = f"{self.use} is not ordered before it"
        elif self.order == "after":
            why = f"{self.use} is not ordered after it"
        else:
            why = f"{self.use} uses it after that, with no init between"
        return f"mbarrier race: {self.barrier} is {self.what} at {self.where}, and {why}" + (
            f" ({self.occurrences} times)" if self.occurrences > 1 else ""
        )


@dataclass(frozen=True)
class HazardReport:
    """What ``tlx.check_hazards`` found. ``result`` is ``"clean"`` (every pair of
    accesses to shared units is ordered and every mbarrier wait takes the phase it
    means, for the execution checked), ``"hazards"`` (``hazards``, ``ambiguous_waits``,
    ``barrier_races``),
    ``"deadlock"`` (the partitions wait on each other for ever: ``blocked`` says
    where) or ``"incomplete"`` (``unmodelled`` names what the check cannot execute,
    and nothing is claimed)."""

    kernel: str
    target: str
    result: str
    hazards: tuple[Hazard, ...]
    unmodelled: tuple[str, ...]
    blocked: tuple[str, ...]
    operations: int
    accesses: int
    seconds: float  # the abstract execution and the check
    values: dict = field(default_factory=dict)
    ttgir_seconds: float = 0.0  # Triton's front end and TTGIR pipeline, before it
    ambiguous_waits: tuple[AmbiguousWait, ...] = ()
    barrier_races: tuple[BarrierRace, ...] = ()

    @property
    def clean(self) -> bool:
        return self.result == CLEAN

    def describe(self) -> str:
        target = f" for {self.target}" if self.target else ""
        lines = [f"kernel {self.kernel}{target}: {self.result}"]
        given = ", ".join(f"{name}={value}" for name, value in sorted(self.values.items()))
        lines.append(
            f"executed {self.operations} operations of one CTA ({given or 'no values given'}), "
            f"{self.accesses} accesses to aliased buffers, in {self.seconds:.2f} s"
            + (f" (TTGIR made in {self.ttgir_seconds:.2f} s)" if self.ttgir_seconds else "")
        )
        for hazard in self.hazards:
            lines.append(hazard.describe())
        for wait in self.ambiguous_waits:
            lines.append(wait.describe())
        for race in self.barrier_races:
            lines.append(race.describe())
        if self.blocked:
            lines.append("deadlock: every partition waits for ever:")
            lines.extend(f"  {line}" for line in self.blocked)
        if self.unmodelled:
            lines.append("not checked: the kernel has operations the check does not model:")
            lines.extend(f"  {line}" for line in self.unmodelled)
        if self.result == CLEAN:
            lines.append(
                "no hazard: every two accesses to the same bytes are ordered, and every "
                "mbarrier wait takes the phase it names"
            )
        return "\n".join(lines) + "\n"


class Incomplete(Exception):
    """The abstract execution cannot go on: the message says why."""


class SourceLines:
    """The Python source line of each TTGIR operation (through call sites and name
    locations), cached per location, and the operation named by it for messages."""

    def __init__(self, module: Module):
        self.module = module
        self.cache: dict[str, tuple] = {}

    def where(self, operation) -> tuple:
        """(file, line, callers) of ``operation``; callers outermost last."""
        cached = self.cache.get(operation.location)
        if cached is None:
            file_name, line, callers = self.module.source_location(operation.location)
            cached = self.cache[operation.location] = (file_name, line, tuple(callers))
        return cached

    def location_text(self, operation) -> str:
        file_name, line, _ = self.where(operation)
        return f"{os.path.basename(file_name)}:{line}"

    def describe_operation(self, operation) -> str:
        return f"{operation.name} at {self.location_text(operation)}"
