"""The accesses to a spec's memory and the race test between them.

``AccessLog.record`` keeps each read or write of a buffer index of a spec with the clock it
happened at (its thread's, or its asynchronous operation's) and tests it against the earlier
accesses of the same region: two accesses of shared units, at least one a write, race when
the earlier one does not happen before the later one, or when an async-proxy access follows a
generic-proxy write with no ``fence_async_shared`` on a path between them (``fenced``).
language/tlx/hazards/blame.py says, in words, which ordering is missing. The functions below
it read an access operation's operands as language/tlx/hazards/ops.py's row describes them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .blame import Blame
from .memory import Memory, overlap
from .report import Access, Hazard, SourceLines
from .scheduling import Agent, Thread

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

    def __init__(self, lines: SourceLines, barriers: dict, threads=()):
        self.lines = lines
        self.barriers = barriers
        self.threads = threads  # every thread, for the fences of another than the writer
        self.accesses: dict[int, dict] = {}  # region id -> {latest key: RecordedAccess}
        self.count = 0
        self.hazards: dict[tuple, list] = {}
        # The first TMA store wait of each partition, "file:line (partition)", for the report
        # of a TMA store whose wait is in another partition.
        self.store_waits: dict[str, str] = {}
        self.commits: dict[str, str] = {}  # the same of each partition's first tcgen05 commit
        self.blame = Blame(barriers, self.store_waits, self.commits)

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
                    missing = self.blame.missing
                elif smem and proxy == "async" and earlier.proxy == "generic":
                    if earlier.kind == "write" and not self.fenced(earlier, clock):
                        missing = self.blame.missing_fence
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
        """True when a fence_async_shared lies on a causality path from the generic-proxy
        write ``earlier`` to an access with ``clock``: the write happens before the fence and
        the fence before the access (PTX ISA, memory consistency model, "proxy-preserved base
        causality order": the proxy fence may be the writer's, after its write, or any other
        thread's, after it acquired the write, as a reader's after its mbarrier wait)."""
        epochs = earlier.thread.fences
        position = bisect.bisect_left(epochs, earlier.epoch)
        if position < len(epochs) and clock.get(earlier.component, 0) > epochs[position]:
            return True
        for thread in self.threads:
            if thread is earlier.thread or not thread.fences:
                continue
            # The thread's latest fence that happens before the access knows the most.
            latest = bisect.bisect_left(thread.fences, clock.get(thread.component, 0)) - 1
            if latest >= 0 and thread.fence_clocks[latest].get(earlier.component, 0) >= (
                earlier.epoch
            ):
                return True
        return False

    def report_hazards(self) -> tuple[Hazard, ...]:
        hazards = []
        for (first, second), (region, shared, missing, count) in self.hazards.items():
            hazards.append(
                Hazard(region.spec_plan.name, region.storage, first, second, shared, missing, count)
            )
        hazards.sort(key=lambda h: (h.first.line, h.second.line, h.first.buffer, h.second.buffer))
        return tuple(hazards)


def is_asynchronous(model, operation) -> bool:
    """Whether the operation's accesses last past it: a ``tcgen05_mma`` without ``is_async``
    or a ``warpgroup_mma`` without ``isAsync`` Triton waits for where it issues it. A
    ``tcgen05_copy`` is always asynchronous: Triton emits ``tcgen05.cp`` and no wait, so it
    completes at a later commit of its thread (PTX ISA, ``tcgen05.cp``)."""
    if model.pipeline == "mma" and not operation.has_word("is_async"):
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
