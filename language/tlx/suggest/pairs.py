"""Which buffer indices of a spec may share bytes: the pairs the kernel's synchronization orders.

The hazard check (language/tlx/hazards/) executes one CTA and tests every two accesses to the
same units of a spec's region by happens-before. ``SharingLog`` is its ``AccessLog`` with one
change: every access to a spec's region is recorded as covering the whole region, so the check
tests every two accesses of the spec, whatever bytes the kernel's current plan gives them. A
hazard between buffer index i of one buffer and j of another is then a pair that must never
share a byte; a pair with no hazard is ordered in every timing the check executes (its proof:
docs/hazards.md, "What the check proves") and may share. The execution, its timings and its
race test are the check's own (``check_ttgir(access_log=SharingLog)``); nothing is re-derived.

``Conflicts`` holds the result for one spec: the pairs that may not share, each with the hazard
that says why (the two accesses, their lines, the ordering that is missing).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from ..hazards.accesses import AccessLog
from ..hazards.check import check_ttgir
from ..hazards.report import HazardReport
from ..hazards.values import INTEGER_SIGNATURES

# The units every access is recorded at: more than any region has.
_EVERY_UNIT = ((0, 1 << 62),)


# The writes of a buffer index kept for the test of overwritten values.
_WRITES_KEPT = 8


def _before(earlier, later) -> bool:
    """Whether access ``earlier`` happens before ``later``, each ``(number, record)`` with
    the number the log gave it: the check's test on clocks, where two accesses of one
    thread between two of its synchronizations share an epoch, so the one recorded first
    (in program order) is the earlier."""
    (first, earlier), (second, later) = earlier, later
    return first < second and later.clock.get(earlier.component, 0) >= earlier.epoch


@dataclass
class _Life:
    """A buffer index's accesses as far as sharing needs them: where its current value's
    writes began (the first write after a read), its latest writes, its latest kind."""

    start: object = None
    writes: list = field(default_factory=list)
    last_kind: str = ""


class SharingLog(AccessLog):
    """The check's access log, with every access to a spec's region covering all of it, and
    one more test: ordered is not enough for two buffers to share bytes; a read of one
    buffer index must not follow a write of another that comes after the writes whose value
    it reads (sharing would overwrite the value before it is read). Such a write is a
    hazard too, its missing ordering saying so."""

    def __init__(self, lines, barriers, unwritten: dict):
        super().__init__(lines, barriers)
        self.lives: dict[int, dict] = {}  # region id -> {(buffer, index): _Life}
        # Reads of a buffer index nothing wrote before (its bytes are another buffer's, as a
        # reinterpretation reads them): spec name -> {(buffer, index): the read's Access},
        # shared by every execution of one check.
        self.unwritten = unwritten

    def record(self, thread, memory, kind, *rest, **keywords):
        if memory is not None and memory.region.spec_plan is not None:
            memory = dataclasses.replace(memory, intervals=_EVERY_UNIT)
        new = super().record(thread, memory, kind, *rest, **keywords)
        if new is not None:
            self._live(memory.region, (self.count, new))
        return new

    def _live(self, region, numbered) -> None:
        """Tests a read against the writes of other buffer indices since the writes whose
        value it reads began; keeps a write. ``numbered``: (number, record)."""
        new = numbered[1]
        lives = self.lives.setdefault(id(region), {})
        life = lives.setdefault(new.key, _Life())
        if new.kind == "read" and life.start is None:
            self.unwritten.setdefault(region.spec_plan.name, {}).setdefault(new.key, new.access)
        if new.kind == "read" and life.start is not None:
            for key, other in lives.items():
                if key[0] == new.key[0]:
                    continue
                for write in reversed(other.writes):
                    if _before(life.start, write) and _before(write, numbered):
                        self._overwritten(region, life.start[1], write[1], new)
                        break
        if new.kind == "write":
            if life.last_kind != "write":
                life.start = numbered
            life.writes = [*life.writes[-(_WRITES_KEPT - 1) :], numbered]
        life.last_kind = new.kind

    def _overwritten(self, region, start, write, read) -> None:
        pair = (write.access, read.access)
        if pair not in self.hazards:
            buffer, index = read.key
            missing = (
                f"the {write.access.operation} comes after the {start.access.operation} of "
                f'"{buffer}"[{index}] at {start.access.file_name.rsplit("/", 1)[-1]}:'
                f"{start.access.line} and before this read of it: with shared bytes it would "
                "overwrite the value before it is read"
            )
            self.hazards[pair] = [region, _EVERY_UNIT[0], missing, 0]
        self.hazards[pair][3] += 1


@dataclass(frozen=True)
class Conflicts:
    """The pairs of buffer indices of one spec that may not share bytes: ``pairs`` maps
    ``((user, index), (user, index))`` (the lesser first) to the hazard that says why.
    ``users`` are the spec's buffer names, in ``local_alloc`` order."""

    spec: str
    users: tuple[str, ...]
    pairs: dict
    # Buffer indices read before anything writes them: what they read is another buffer's
    # bytes, which only the kernel's author can say whose: {(buffer, index): Access}.
    unwritten: dict = field(default_factory=dict)

    def conflict(self, first: tuple[int, int], second: tuple[int, int]):
        """The hazard between two buffer indices, or None when they may share."""
        return self.pairs.get((min(first, second), max(first, second)))

    def between(self, first: int, second: int) -> list:
        """Every hazard between any index of user ``first`` and any of ``second``."""
        return [
            hazard
            for (a, b), hazard in sorted(self.pairs.items())
            if {a[0], b[0]} == {first, second}
        ]


@dataclass(frozen=True)
class Ordering:
    """What the check's execution says of a kernel's specs: ``conflicts`` per spec name,
    and ``report``, the check's own (``report.hazards`` are every unordered pair)."""

    conflicts: dict
    report: HazardReport

    @property
    def problems(self) -> tuple[str, ...]:
        """Why nothing can be inferred: the kernel's synchronization is not sound without
        any sharing (an ambiguous wait, an mbarrier race, a deadlock), or the check could
        not execute it (an operation outside its table, named with its line; a value not
        given). Empty when every pair's verdict holds in every timing."""
        report = self.report
        found = [f"not checked: {line}" for line in report.unmodelled]
        found += [wait.describe() for wait in report.ambiguous_waits]
        found += [race.describe() for race in report.barrier_races]
        found += [f"deadlock: {line}" for line in report.blocked]
        return tuple(found)


def integer_arguments(src) -> tuple[str, ...]:
    """The kernel's integer parameters (those the check may need values of)."""
    return tuple(
        param.name for param in src.fn.params if src.signature.get(param.name) in INTEGER_SIGNATURES
    )


def ordering(
    text: str, spec_plans, *, kernel="", target="", integer_names=None, **check
) -> Ordering:
    """Executes the TTGIR ``text`` (whose specs ``spec_plans`` planned) as the hazard check
    does, every pair of accesses to a spec tested; ``check`` takes ``check_ttgir``'s
    ``values``, ``program_id``, ``num_programs``."""
    unwritten: dict = {}
    report = check_ttgir(
        text,
        spec_plans,
        kernel=kernel,
        target=target,
        integer_arguments=integer_names,
        access_log=functools.partial(SharingLog, unwritten=unwritten),
        **check,
    )
    conflicts = {}
    for spec_plan in spec_plans:
        if spec_plan.private:
            continue
        names = tuple(buffer.name for buffer in spec_plan.buffers)
        user_of = {name: position for position, name in enumerate(names)}
        pairs = {}
        for hazard in report.hazards:
            if hazard.spec != spec_plan.name:
                continue
            first = (user_of[hazard.first.buffer], hazard.first.index)
            second = (user_of[hazard.second.buffer], hazard.second.index)
            if first[0] == second[0]:
                continue  # two indices of one buffer never share bytes in any tree
            key = (min(first, second), max(first, second))
            pairs.setdefault(key, hazard)
        reads = {
            (user_of[buffer], index): access
            for (buffer, index), access in unwritten.get(spec_plan.name, {}).items()
        }
        conflicts[spec_plan.name] = Conflicts(spec_plan.name, names, pairs, reads)
    return Ordering(conflicts, report)
