"""The accesses to a spec's memory and the race test between them.

``AccessLog.record`` keeps each read or write of a buffer index of a spec with the clock it
happened at (its thread's, or its asynchronous operation's) and tests it against the earlier
accesses of the same region: two accesses of shared units, at least one a write, race when
the earlier one does not happen before the later one, or when an async-proxy access follows a
generic-proxy write with no ``fence_async_shared`` between them. ``missing`` says, in words,
which ordering is missing. The functions below it read an access operation's operands as
language/tlx/hazards/ops.py's row describes them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .memory import Memory, overlap
from .report import Access, Hazard, SourceLines
from .scheduling import Agent, Thread, happens_before

# Asynchronous accesses of one operation, its units and partition kept for the check:
# a later one may complete at another mbarrier than an earlier one.
_AGENT_HISTORY = 8


@dataclass
class RecordedAccess:
    """An access with the clock it happened at: ``component`` and ``epoch`` are the ones
    a later access's clock must reach to be ordered after it."""

    component: int
    epoch: int
    clock: dict
    key: tuple  # (buffer, index)
    kind: str
    intervals: tuple
    access: Access
    thread: Thread
    agent: Agent | None
    proxy: str = "generic"


class AccessLog:
    """Every access to a spec's memory the execution met, and the hazards between them.
    ``barriers`` (the mbarriers by key) names the mbarrier a TMA load completes at."""

    def __init__(self, lines: SourceLines, barriers: dict):
        self.lines = lines
        self.barriers = barriers
        self.accesses: dict[int, dict] = {}  # region id -> {latest key: RecordedAccess}
        self.count = 0
        self.hazards: dict[tuple, list] = {}
        # The first TMA store wait of each partition, "file:line (partition)", for the report
        # of a TMA store whose wait is in another partition.
        self.store_waits: dict[str, str] = {}

    def record(
        self,
        thread: Thread,
        memory: Memory,
        kind: str,
        operation,
        what,
        agent=None,
        proxy="generic",
        operand=False,
    ):
        """Records ``thread``'s ``kind`` ("read" or "write") access of ``memory`` by
        ``operation`` (``agent`` when it is asynchronous; ``operand``: one of a tcgen05
        MMA's operand reads, its own clock component) and its hazards with earlier ones;
        returns the record (None for memory outside a spec's buffers), which tlx.suggest's
        log reads (language/tlx/suggest/pairs.py)."""
        if memory is None or memory.region.spec_plan is None or memory.buffer is None:
            return None
        self.count += 1
        file_name, line, callers = self.lines.where(operation)
        access = Access(
            what, kind, memory.buffer, memory.index, thread.name, file_name, line, callers[:1]
        )
        if agent is not None:
            component, epoch, clock = agent.component, 1, agent.clock
            if operand and agent.operand_component:
                component = agent.operand_component
        else:
            component, epoch, clock = (
                thread.component,
                thread.clock.get(thread.component, 0),
                thread.clock,
            )
        new = RecordedAccess(
            component,
            epoch,
            clock,
            (memory.buffer, memory.index),
            kind,
            memory.intervals,
            access,
            thread,
            agent,
            proxy,
        )
        recorded = self.accesses.setdefault(id(memory.region), {})
        smem = memory.region.storage == "smem"
        for history in recorded.values():
            for earlier in history:
                if earlier.kind == "read" and kind == "read":
                    continue
                missing = None
                if clock.get(earlier.component, 0) < earlier.epoch:
                    missing = self.missing
                elif smem and proxy == "async" and earlier.proxy == "generic":
                    if earlier.kind == "write" and not self.fenced(earlier, clock):
                        missing = self.missing_fence
                if missing is None:
                    continue
                shared = overlap(earlier.intervals, new.intervals)
                if shared is None:
                    continue
                key = (earlier.access, new.access)
                if key not in self.hazards:
                    self.hazards[key] = [memory.region, shared, missing(earlier, new), 0]
                self.hazards[key][3] += 1
        # One record per bytes: two accesses of one line (a static_range over row chunks)
        # that cover different units are never one record.
        latest = (
            new.key,
            memory.intervals,
            access,
            agent is not None and agent.completion,
            thread.name,
        )
        if agent is None:
            # A later access of the same operation, units and partition is ordered after
            # whatever this one is ordered after: it is enough to keep the latest.
            recorded[latest] = (new,)
        else:
            recorded[latest] = (*recorded.get(latest, ())[-(_AGENT_HISTORY - 1) :], new)
        return new

    def fenced(self, earlier: RecordedAccess, clock: dict) -> bool:
        """True when a fence_async_shared of the writer's thread after the generic-proxy
        write ``earlier`` happens before an access with ``clock``."""
        epochs = earlier.thread.fences
        position = bisect.bisect_left(epochs, earlier.epoch)
        return position < len(epochs) and clock.get(earlier.component, 0) > epochs[position]

    def missing_fence(self, earlier: RecordedAccess, new: RecordedAccess) -> str:
        return (
            f"no fence_async_shared in {earlier.access.partition} between its "
            f"{earlier.access.operation} (a generic-proxy write) and the "
            f"{new.access.operation}, which accesses shared memory through the async proxy"
        )

    def released(self, earlier: RecordedAccess, new: RecordedAccess) -> str:
        """The missing ordering named by the mbarrier that should carry it: an arrive after
        ``earlier`` (by its partition, or by whoever waited for its asynchronous operation)
        on an mbarrier that ``new``'s partition waits on for another phase, or never waits
        on; "" when nothing arrives after ``earlier``. The mbarrier an asynchronous
        ``earlier`` completes at is not one (``missing`` names it)."""
        own = earlier.agent.barrier if earlier.agent is not None else None
        waited = new.thread.waited
        found = []
        for key, barrier in self.barriers.items():
            if key == own:
                continue
            for phase, arrivals in enumerate((*barrier.phase_arrivals, barrier.arrivals)):
                for clock, source in arrivals:
                    after = clock.get(earlier.component, 0)
                    if after >= earlier.epoch and not happens_before(clock, new.clock):
                        found.append((key not in waited, after, phase, source, key, barrier))
        if earlier.agent is not None:
            # Its own partition issues the access over it: only a release it waits on for
            # the wrong phase is named; else ``missing`` says no release is waited for.
            found = [candidate for candidate in found if not candidate[0]]
        if not found:
            return ""
        unwaited, _, phase, source, key, barrier = min(found, key=lambda f: f[:2])
        partition, what = new.access.partition, earlier.access.operation
        if unwaited:
            return (
                f"{partition} never waits on mbarrier {barrier.name}, which {source} arrives "
                f"on after the {what}"
            )
        where, took = waited[key]
        if took < 0:
            took_text = "passed before its first phase completed (by its parity), before"
        else:
            took_text = f"took phase {took}, which completed without"
        arrivals = "arrival" if barrier.count == 1 else "arrivals"
        return (
            f"the wait of {partition} on mbarrier {barrier.name} at {where} {took_text} "
            f"the arrive after the {what}: {source}, on phase {phase} ({barrier.name} "
            f"completes a phase at {barrier.count} {arrivals}); the wait's parity or the "
            "barrier's arrival count lets it pass early"
        )

    def missing(self, earlier: RecordedAccess, new: RecordedAccess) -> str:
        """Which ordering is missing between ``earlier`` and ``new``, in words."""
        agent = earlier.agent
        reader = new.access.partition
        if (
            agent is not None
            and agent.completion == "tcgen05"
            and new.agent is not None
            and new.agent.completion == "tcgen05"
            and agent.thread is new.thread
        ):
            return (
                f"PTX runs a tcgen05_mma after an earlier tcgen05 operation of its partition "
                f"only with the same accumulator and shape (or after a copy, or its "
                f"accumulator writes after the earlier MMA's operand reads): the "
                f"{agent.what} runs until its commit barrier, which {reader} does not wait on "
                f"before the {new.access.operation}"
            )
        if (agent is None and earlier.thread is not new.thread) or (
            agent is not None and agent.completion == "mbarrier" and agent.thread is new.thread
        ):
            released = self.released(earlier, new)
            if released:
                return released
        if agent is not None:
            if agent.completion == "mbarrier" and agent.barrier is not None:
                barrier = self.barriers.get(agent.barrier)
                name = barrier.name if barrier else "its mbarrier"
                if agent.thread is new.thread:
                    return (
                        f"the {agent.what} completes at mbarrier {name}, and {reader} issues "
                        f"the {new.access.operation} over the same bytes waiting for no "
                        f"release of them: no mbarrier phase it waits on is arrived on after "
                        f"that phase (a consumer's release, on an empty barrier)"
                    )
                if agent.barrier not in new.thread.waited:
                    return (
                        f"the {agent.what} completes at mbarrier {name}, which {reader} "
                        f"never waits on before the {new.access.operation}"
                    )
                return (
                    f"the {agent.what} completes at mbarrier {name}, and {reader} does not wait "
                    f"for the phase it completes before the {new.access.operation}"
                )
            if agent.completion == "dot_wait":
                if agent.thread is new.thread and agent.passed_by:
                    return (
                        f"the {agent.what} reads until a warpgroup_mma wait retires it, and the "
                        f"{agent.passed_by} between it and the {new.access.operation} leaves "
                        f"it outstanding (it retires all but the newest)"
                    )
                if agent.thread is new.thread:
                    return (
                        f"the {agent.what} reads until a warpgroup_mma wait retires it, and "
                        f"there is none between it and the {new.access.operation}"
                    )
                return (
                    f"the {agent.what} reads until a warpgroup_mma wait retires it, and {reader} "
                    f"waits on no mbarrier phase arrived after that wait before the "
                    f"{new.access.operation}"
                )
            if agent.completion == "store_wait":
                if agent.passed_by:
                    return (
                        f"the {agent.what} reads until a TMA store wait retires it, and the "
                        f"{agent.passed_by} before the {new.access.operation} leaves it "
                        f"outstanding"
                    )
                elsewhere = [
                    where
                    for partition, where in self.store_waits.items()
                    if partition != earlier.access.partition
                ]
                if elsewhere:
                    return (
                        f"the {agent.what} reads until a TMA store wait of its own partition "
                        f"({earlier.access.partition}) retires it; the TMA store wait at "
                        f"{elsewhere[0]} retires only that partition's stores"
                    )
                return (
                    f"the {agent.what} reads until a TMA store wait retires it, and there is none "
                    f"between it and the {new.access.operation}"
                )
            if agent.completion == "tcgen05":
                return (
                    f"the {agent.what} runs until its commit barrier, which {reader} does not wait "
                    f"on before the {new.access.operation}"
                )
        if earlier.thread is new.thread:
            return (
                f"the {new.access.operation} is asynchronous: program order does not put it "
                f"after the {earlier.access.operation}"
            )
        return (
            f"neither is ordered before the other: {earlier.access.partition} and {reader} wait on "
            "no mbarrier phase that the other arrives on after its access"
        )

    def report_hazards(self) -> tuple[Hazard, ...]:
        hazards = []
        for (first, second), (region, shared, missing, count) in self.hazards.items():
            hazards.append(
                Hazard(region.spec_plan.name, region.storage, first, second, shared, missing, count)
            )
        hazards.sort(key=lambda h: (h.first.line, h.second.line, h.first.buffer, h.second.buffer))
        return tuple(hazards)


def is_asynchronous(model, operation) -> bool:
    """Whether the operation's accesses last past it: without ``is_async`` (``tcgen05``)
    or ``isAsync`` (``warpgroup_mma``) Triton waits for it where it issues it."""
    if model.completion == "tcgen05" and not operation.has_word("is_async"):
        return False
    if model.completion == "dot_wait" and "isAsync = true" not in operation.text:
        return False
    return model.completion != "sync"


def operand_roles(model, operation, env, memories) -> tuple[list, list]:
    """(data, barriers): the memory operands ``(position, Memory)`` of an access operation
    with their roles, each ``(position, Memory, role)``. ``use_acc`` false: the MMA writes
    its accumulator without reading it."""
    roles = model.roles
    data, barriers = [], []
    for number, (position, memory) in enumerate(memories):
        role = roles[number] if number < len(roles) else ("barrier" if model.more_barriers else "")
        (barriers if role == "barrier" else data).append((position, memory, role))
    if model.completion == "dot_wait" and len(data) < 2:
        # A register A operand: the memdesc operand is B.
        data = [(p, m, "read") for p, m, _ in data]
    use_accumulator = re.search(r"\]\s*,\s*(%[\w.$-]+)", operation.text)
    if model.completion == "tcgen05" and use_accumulator is not None:
        if env.get(use_accumulator.group(1)) == 0:
            data = [(p, m, "write" if r == "readwrite" else r) for p, m, r in data]
    return data, barriers


def is_issued(model, operation, env, barriers) -> bool:
    """False when the operation's own predicate is known false: the operand before its
    first mbarrier (``tcgen05``), or its last."""
    if model.completion not in ("mbarrier", "tcgen05") and not model.predicated:
        return True
    operands = operation.operands
    predicate_position = (
        barriers[0][0] - 1 if barriers and model.completion == "tcgen05" else len(operands) - 1
    )
    predicate = env.get(operands[predicate_position]) if operands else 1
    return not (isinstance(predicate, int) and not predicate)


def tcgen05_pipeline(data) -> tuple:
    """("mma", accumulator, shape) of an MMA's data operands (A, B, D, ...): PTX pipelines
    two MMAs of one partition only when both are equal (ops.py). The accumulator is D's
    TMEM columns; the shape is the instruction's, M x N (D's tile) and K, which the
    operands' element type fixes (16 for 16-bit types): a K loop split over several
    TTGIR MMAs is one shape."""
    if len(data) < 3:
        return ()
    accumulator = data[2][1]
    shape = (accumulator.type.shape, data[0][1].type.element_bits)
    return ("mma", id(accumulator.region), accumulator.intervals, shape)
