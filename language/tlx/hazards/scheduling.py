"""Who runs when, and what orders what: partitions, asynchronous completion, mbarriers, waits.

Happens-before is tracked with vector clocks, as dynamic race detectors (FastTrack) keep them:
a clock is a dict ``component -> epoch``. Every partition of ``ttg.warp_specialize`` is a
``Thread`` with a component of its own; every asynchronous operation (a TMA copy, a
``warpgroup_mma``, a ``tcgen05`` operation) is an ``Agent``, a component joined where it
completes. The ``Scheduler`` runs the threads in turn, each until it waits on an mbarrier phase
that has not completed, and finds the deadlock where none can go on. ``Barriers`` models the
mbarriers: a phase collects the clocks of what arrives on it, a wait that sees it complete
takes its clock, and a wait by parity that another timing would let pass on another phase is
an ambiguous wait (docs/hazards.md, "Phases").
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from .memory import Memory
from .report import AmbiguousWait, BarrierRace, SourceLines


def join(first: dict, second: dict) -> dict:
    """The clock of what both ``first`` and ``second`` happen before (``first`` itself
    when ``second`` adds nothing)."""
    if not second:
        return first
    joined = dict(first)
    for component, value in second.items():
        if joined.get(component, 0) < value:
            joined[component] = value
    return joined


def happens_before(earlier: dict, later: dict) -> bool:
    """True when the event with clock ``earlier`` happens before one with ``later``."""
    return all(later.get(component, 0) >= value for component, value in earlier.items())


@dataclass
class Agent:
    """An asynchronous operation: its own clock component, joined where it completes."""

    component: int
    clock: dict
    what: str
    completion: str
    barrier: tuple | None = None  # the mbarrier a TMA load completes at
    thread: Thread | None = None
    # The latest wait of its thread that left it outstanding ("warpgroup_mma_wait(1) at
    # file:line"), for the report.
    passed_by: str = ""
    # A tcgen05 MMA's second component: its operand reads (A, B, scales), which PTX orders
    # before a later MMA's or copy's writes, where its accumulator's are not (ops.py).
    operand_component: int = 0
    # The phase of its mbarrier its completion counted on, and whether the timing executed
    # lands it late (Barrier.deferred), for the report.
    phase: int = -1
    landed_late: bool = False
    # A TMA load's: its thread's latest waits when it issued it (Thread.waited), for the
    # report of a load over bytes another partition has not released.
    waited: dict = field(default_factory=dict)


@dataclass
class Thread:
    """A partition (or the kernel before and after ``warp_specialize``): its clock, its
    environment of SSA values, and its outstanding asynchronous operations."""

    name: str
    component: int
    clock: dict
    env: dict
    dots: list = field(default_factory=list)
    stores: list = field(default_factory=list)
    tcgen05_clock: dict = field(default_factory=dict)  # all its tcgen05 operations (commit)
    # PTX's pipelined tcgen05 pairs (ops.py): the clock of its latest MMA of each
    # ("mma", accumulator, shape), and ("copy",) the join of its tcgen05 copies.
    tcgen05_pipelines: dict = field(default_factory=dict)
    # Its latest wait on each mbarrier it waited on: barrier key -> (file:line, the phase it
    # took (-1: passing on the fresh barrier), whether it passed early, its epoch), for the
    # report (language/tlx/hazards/blame.py).
    waited: dict = field(default_factory=dict)
    fences: list = field(default_factory=list)  # the epoch of each fence_async_shared
    fence_clocks: list = field(default_factory=list)  # and its clock, what happened before it
    done: bool = False
    blocked_at: str = ""  # what it waits for, while it waits
    # While it waits: whether another timing lets the wait pass now (the phase it would
    # pass on completed before it, the one after that not ordered before it), and the
    # Scheduler's choice of that timing (Barriers.wait).
    can_pass_early: bool = False
    pass_early: bool = False
    generator: object = None  # its execution (Execution.run_thread)

    def tick(self) -> None:
        self.clock = dict(self.clock)
        self.clock[self.component] = self.clock.get(self.component, 0) + 1

    def acquire(self, clock: dict) -> None:
        joined = join(self.clock, clock)
        if joined is not self.clock:
            self.clock = joined

    def retire(self, outstanding: list, keep: int, wait: str = "") -> None:
        """Waits for the oldest of ``outstanding`` (TMA stores, MMAs) until ``keep`` remain;
        ``wait`` names the wait, which the ones it leaves remember."""
        while len(outstanding) > keep:
            self.acquire(outstanding.pop(0).clock)
        for agent in outstanding:
            agent.passed_by = wait

    def tcgen05_after(self, pipeline: str, key: tuple) -> dict:
        """The clock a new tcgen05 operation (``pipeline`` "mma" or "copy", ``key`` its
        ("mma", accumulator, shape)) starts after, PTX's pipelined pairs (ops.py): an MMA
        after the earlier MMA of its accumulator and shape and after every earlier copy;
        an MMA or a copy after the operand reads (A, scales) of every earlier MMA."""
        pipelines = self.tcgen05_pipelines
        after = pipelines.get(("operands",), {})
        if pipeline == "mma":
            after = join(join(after, pipelines.get(("copy",), {})), pipelines.get(key, {}))
        return after

    def tcgen05_issued(self, pipeline: str, key: tuple, agent: Agent) -> None:
        self.tcgen05_clock = join(self.tcgen05_clock, agent.clock)
        pipelines = self.tcgen05_pipelines
        if pipeline == "copy":
            pipelines[("copy",)] = join(pipelines.get(("copy",), {}), agent.clock)
        elif pipeline == "mma":
            pipelines[key] = agent.clock
            pipelines[("operands",)] = join(
                pipelines.get(("operands",), {}), {agent.operand_component: 1}
            )

    def fence(self) -> None:
        """``fence_async_shared``: orders the earlier generic-proxy writes before later
        async-proxy accesses (AccessLog.fenced reads the epochs); a write of another thread
        that happens before it is ordered too (PTX: a proxy fence anywhere on the causality
        path from the write to the access)."""
        self.fences.append(self.clock.get(self.component, 0))
        self.fence_clocks.append(self.clock)
        self.tick()


class Barrier:
    """An mbarrier: its arrival count, expected transaction units, completed phases with
    the clock and arrivals of each, and the waits that took each phase. An ``init``
    starts it afresh (phase 0, nothing arrived); ``init`` and ``invalidate`` write the
    mbarrier object, which every arrival and wait uses: a use that happens-before does not
    order with them is a ``BarrierRace``."""

    def __init__(self, name: str, deferred=frozenset(), suspects=None):
        self.name = name
        self.count = 1
        self.late: list[tuple[tuple, int]] = []
        self.races: list[BarrierRace] = []
        # The latest init or invalidate, (clock, what, where), and the uses since, by
        # (where, clock component of whoever used it) -> (clock, where).
        self.written: tuple | None = None
        self.uses: dict[tuple, tuple[dict, str]] = {}
        self.valid = True
        # Asynchronous completions (a TMA load's bytes, a tcgen05 commit's arrival) land when
        # the hardware is done, which may be after a later arrival: ``deferred`` are the keys
        # (barrier, source, occurrence) of those this execution lands late (held until the
        # phase they would have completed completes without them, or until nothing else can
        # happen); ``suspects`` collects (key, the later arrival) where another timing may
        # land one late (Barriers.suspect_keys).
        self.deferred = deferred
        self.suspects = suspects if suspects is not None else []
        self.occurrences: dict[str, int] = {}
        self.held: list[tuple] = []
        self._start(1)

    def _start(self, count: int) -> None:
        """Phase 0 of a barrier of ``count`` arrivals, nothing arrived."""
        self.count = count
        self.pending = count
        self.transaction = 0
        self.completed = 0
        self.clock: dict = {}
        self.phase_clocks: list[dict] = []
        # What arrived on each phase, (clock, what, owner's clock component), for the reports.
        self.arrivals: list[tuple[dict, str, int]] = []
        self.phase_arrivals: list[list[tuple[dict, str, int]]] = []
        # The asynchronous completions of the phase in progress and of each completed one,
        # (clock, key): one not ordered before a later phase's arrival may land after it.
        self.asynchronous: list[tuple[dict, tuple]] = []
        self.phase_asynchronous: list[list[tuple[dict, tuple]]] = []
        # The waits that took each phase (-1: passed on the fresh barrier), each (thread
        # component, its epoch just after the wait, the wait); ``late``: (wait, the phase
        # after the one it took) where that next phase's completion is not ordered after it.
        self.waits: dict[int, list[tuple[int, int, tuple]]] = {}

    def write(self, clock: dict, what: str, where: str, count: int | None) -> None:
        """``init`` (``count`` arrivals) or ``invalidate``: every use since the latest
        init or invalidate must happen before it."""
        for use_clock, use in self.uses.values():
            if not happens_before(use_clock, clock):
                self.races.append(BarrierRace(self.name, what, where, use, "before"))
        self.written = (clock, what, where)
        self.uses = {}
        self.valid = count is not None
        if count is not None:
            self._start(count)

    def use(self, clock: dict, where: str, owner: int) -> None:
        """An arrival or a wait at ``where`` with ``clock`` (``owner``: the clock component
        of the thread or asynchronous operation): it must happen after the latest init or
        invalidate, and before the next."""
        if self.written is not None and not happens_before(self.written[0], clock):
            self.races.append(
                BarrierRace(self.name, self.written[1], self.written[2], where, "after")
            )
        elif not self.valid:
            self.races.append(
                BarrierRace(self.name, self.written[1], self.written[2], where, "invalid")
            )
        self.uses[(where, owner)] = (clock, where)

    def arrive(self, clock: dict, source: str, count: int = 1, owner: int = 0, agent=None) -> bool:
        """``count`` arrivals; ``agent``: the asynchronous operation whose completion they
        are (a tcgen05 commit, the mbarriers an MMA names), True for a commit's."""
        return self._contribute(clock, source, count, 0, owner, agent)

    def transact(self, clock: dict, source: str, units: int, owner: int = 0, agent=None) -> bool:
        """A TMA load's ``units`` bytes (``agent`` the load), against the expected ones."""
        return self._contribute(clock, source, 0, units, owner, agent or True)

    def _contribute(self, clock, source, count, units, owner, agent, held=None) -> bool:
        """Counts an arrival (``count``) or a TMA load's bytes (``units``); ``held``: the key
        of an asynchronous completion landing now, after it was held late."""
        key = held
        if agent is not None and held is None:
            occurrence = self.occurrences.get(source, 0)
            self.occurrences[source] = occurrence + 1
            key = (self.name, source, occurrence)
            if key in self.deferred:
                self.held.append((clock, source, count, units, owner, agent, key))
                return False
        self.use(clock, source, owner)
        if self.completed and held is None:
            # In the timing where an asynchronous completion of the phase before lands
            # after this arrival, this one counts on that phase in its place.
            for earlier, earlier_key in self.phase_asynchronous[-1]:
                if not happens_before(earlier, clock):
                    self.suspects.append((earlier_key, source))
        self.clock = join(self.clock, clock)
        self.arrivals.append((clock, source, owner))
        if isinstance(agent, Agent):
            agent.phase = self.completed
            agent.landed_late = held is not None
        if key is not None and held is None:
            self.asynchronous.append((clock, key))
        self.pending -= count
        self.transaction -= units
        return self._complete()

    def release_held(self) -> bool:
        """Lands the completions held late (``deferred``); True when there were any."""
        held, self.held = self.held, []
        for clock, source, count, units, owner, agent, key in held:
            self._contribute(clock, source, count, units, owner, agent, key)
        return bool(held)

    def _complete(self) -> bool:
        if self.pending <= 0 and self.transaction == 0:
            for component, epoch, wait in self.waits.pop(self.completed - 1, ()):
                if self.clock.get(component, 0) < epoch:
                    self.late.append((wait, self.completed))
            self.phase_clocks.append(self.clock)
            self.phase_arrivals.append(self.arrivals)
            self.phase_asynchronous.append(self.asynchronous)
            self.completed += 1
            self.pending = self.count
            self.clock = {}
            self.arrivals = []
            self.asynchronous = []
            # A completion held late lands on the phase after the one it did not complete.
            self.release_held()
            return True
        return False


def _barrier_name(memory: Memory) -> str:
    size = memory.intervals[0][1] - memory.intervals[0][0] or 8
    index = memory.intervals[0][0] // size
    name = memory.region.name.lstrip("%")
    return f"{name}[{index}]"


def barrier_key(memory: Memory) -> tuple:
    """What identifies an mbarrier: its allocation and its first unit."""
    return (id(memory.region), memory.intervals[0][0])


class Barriers:
    """The kernel's mbarriers, by ``barrier_key``, and what their waits met: the
    synchronisation rows of language/tlx/hazards/ops.py (init, wait, arrive, expect, commit).
    ``scalar(thread, name, operation, what)`` reads a phase or a predicate."""

    def __init__(
        self, lines: SourceLines, scalar, choose=lambda alternatives: 0, deferred=frozenset()
    ):
        self.lines = lines
        self.scalar = scalar
        # The asynchronous completions this execution lands late, and where another timing
        # may land one late (Barrier.deferred, Barrier.suspects).
        self.deferred = frozenset(deferred)
        self.suspects: list[tuple[tuple, str]] = []
        # ``choose(n)`` picks one of n timings (Scheduler.choose); ``explored``: the waits
        # (file, line, callers, partition, mbarrier) whose earlier pass was offered once.
        self.choose = choose
        self.explored: set[tuple] = set()
        self.barriers: dict[tuple, Barrier] = {}
        # (file, line, callers, partition, "before" or "after") -> [AmbiguousWait, count]
        self.ambiguous_waits: dict[tuple, list] = {}

    def barrier(self, memory: Memory) -> Barrier:
        key = barrier_key(memory)
        found = self.barriers.get(key)
        if found is None:
            found = self.barriers[key] = Barrier(
                _barrier_name(memory), self.deferred, self.suspects
            )
        return found

    def completed_phases(self) -> int:
        return sum(barrier.completed for barrier in self.barriers.values())

    def release_held(self) -> bool:
        """Lands every completion held late (nothing else can happen before it); True
        when there was one."""
        return any([barrier.release_held() for barrier in self.barriers.values()])

    def suspect_keys(self) -> tuple[tuple, ...]:
        """The asynchronous completions another timing may land after a later arrival on
        their barrier (check.py executes that timing)."""
        return tuple(dict.fromkeys(key for key, _ in self.suspects))

    def init(self, thread: Thread, operation, memory: Memory) -> None:
        """``ttng.init_barrier``: a fresh barrier (a re-init starts again at phase 0)."""
        count = operation.attribute_int("count")
        if count is None:
            words = operation.text.split(",")
            count = int(words[1].split(":")[0].strip()) if len(words) > 1 else 1
        self.write(thread, operation, memory, count)

    def invalidate(self, thread: Thread, operation, memory: Memory) -> None:
        """``ttng.inval_barrier``: no use may follow until the next init."""
        self.write(thread, operation, memory, None)

    def write(self, thread: Thread, operation, memory: Memory, count: int | None) -> None:
        what = "initialized" if count is not None else "invalidated"
        where = f"{self.lines.location_text(operation)} ({thread.name})"
        self.barrier(memory).write(thread.clock, what, where, count)
        thread.tick()

    def arrive(self, thread: Thread, operation, kind: str, barrier_operand) -> None:
        """``kind`` "arrive", "expect" (sets the expected bytes and arrives once) or
        "commit" (arrives when the thread's tcgen05 operations complete); each with an
        optional predicate operand after the mbarrier."""
        position, memory = barrier_operand
        predicate_operands = operation.operands[position + 1 :]
        if predicate_operands:
            predicate = self.scalar(thread, predicate_operands[-1], operation, "predicate")
            if not predicate:
                return
        barrier = self.barrier(memory)
        source = f"{self.lines.describe_operation(operation)} ({thread.name})"
        owner = thread.component
        if kind == "expect":
            barrier.transaction += _expect_bytes(operation.text)
            barrier.arrive(thread.clock, source, owner=owner)
        elif kind == "commit":
            # Arrives when the tracked tcgen05 operations complete: asynchronously.
            clock = join(thread.clock, thread.tcgen05_clock)
            barrier.arrive(clock, source, owner=owner, agent=True)
        else:
            barrier.arrive(thread.clock, source, _arrive_count(operation.text), owner)
        thread.tick()

    def wait(self, thread: Thread, operation, barrier_operand):
        """``ttng.wait_barrier``: yields while the phase of the parity it names has not
        completed, then takes that phase's clock and checks its neighbours."""
        position, memory = barrier_operand
        rest = operation.operands[position + 1 :]
        if len(rest) >= 2 and not self.scalar(thread, rest[1], operation, "predicate"):
            return
        parity = self.scalar(thread, rest[0], operation, "phase") & 1
        barrier = self.barrier(memory)
        early = False
        while barrier.completed % 2 == parity:
            thread.blocked_at = (
                f"{self.lines.describe_operation(operation)}: mbarrier {barrier.name} phase "
                f"parity {parity} (its {barrier.completed} completed phases)"
            )
            # Had the last completed phase not completed yet, the wait would pass now.
            thread.can_pass_early = barrier.completed >= 1 and not happens_before(
                barrier.phase_clocks[-1], thread.clock
            )
            yield
            if thread.pass_early:
                early = True
                break
        thread.blocked_at = ""
        thread.can_pass_early = thread.pass_early = False
        phase = barrier.completed - (2 if early else 1)
        file_name, line, callers = self.lines.where(operation)
        wait = (file_name, line, callers[:1], thread.name, barrier.name, phase)
        if early:
            late = barrier.completed - 1
            unordered = sorted(
                {
                    source
                    for clock, source, _ in barrier.phase_arrivals[late]
                    if not happens_before(clock, thread.clock)
                }
            )
            self.ambiguous(
                wait,
                "early",
                f"phase {late}'s completion is not ordered before it (its arrivals "
                f"{', '.join(unordered)}): in the timing where that phase comes later the "
                f"wait passes {'at once' if late == 0 else f'on phase {late - 1}'}, and "
                "the check executes that timing (in the other it waits for ever)",
            )
        elif phase >= 1 and not happens_before(barrier.phase_clocks[phase - 1], thread.clock):
            # A wait passes on the last completed phase of the parity it names: while phase
            # ``phase - 1`` has not completed, that is phase ``phase - 2``.
            unordered = sorted(
                {
                    source
                    for clock, source, _ in barrier.phase_arrivals[phase - 1]
                    if not happens_before(clock, thread.clock)
                }
            )
            earlier = f"on phase {phase - 2}" if phase >= 2 else "at once"
            self.ambiguous(
                wait,
                "before",
                f"phase {phase - 1}'s completion is not ordered before it (its arrivals "
                f"{', '.join(unordered)}): had that phase not completed yet, the wait would "
                f"pass {earlier}",
            )
            # That timing is executed too (once per wait), so the race it lets through
            # is reported at its accesses.
            if wait[:5] not in self.explored:
                self.explored.add(wait[:5])
                if self.choose(2):
                    phase -= 2
                    early = True
        # Its latest wait on the barrier, for the report: where, the phase it took, and
        # whether it passed early (the timing where the phase before came later).
        thread.waited[barrier_key(memory)] = (
            self.lines.location_text(operation),
            phase,
            early,
            thread.clock.get(thread.component, 0),
        )
        if phase >= 0:
            thread.acquire(barrier.phase_clocks[phase])
        barrier.use(
            thread.clock,
            f"{self.lines.describe_operation(operation)} ({thread.name})",
            thread.component,
        )
        # Had phase ``phase + 1`` completed first, the wait would have taken ``phase + 2``:
        # the barrier checks that completion against the thread's epoch after the wait.
        thread.tick()
        barrier.waits.setdefault(phase, []).append(
            (thread.component, thread.clock[thread.component], wait)
        )

    def timing_dependent(self) -> bool:
        """Whether a wait met so far is ambiguous (its phase before, or after, unordered),
        or an asynchronous completion may land after a later arrival."""
        return (
            bool(self.ambiguous_waits)
            or bool(self.suspects)
            or any(b.late for b in self.barriers.values())
        )

    def ambiguous(self, wait: tuple, kind: str, why: str) -> None:
        """Records an ambiguous ``wait`` (file, line, callers, partition, mbarrier, phase):
        the phase next to the one it took is not ordered ``kind`` ("before" or "after")
        it, as ``why`` says."""
        found = self.ambiguous_waits.setdefault((*wait[:4], kind), [AmbiguousWait(*wait, why), 0])
        found[1] += 1

    def report_barrier_races(self) -> tuple[BarrierRace, ...]:
        counted: dict[BarrierRace, int] = {}
        for barrier in self.barriers.values():
            for race in barrier.races:
                counted[race] = counted.get(race, 0) + 1
        return tuple(
            dataclasses.replace(race, occurrences=count)
            for race, count in sorted(counted.items(), key=lambda found: found[0].where)
        )

    def report_ambiguous_waits(self) -> tuple[AmbiguousWait, ...]:
        for barrier in self.barriers.values():
            for wait, later in barrier.late:
                self.ambiguous(
                    wait,
                    "after",
                    f"phase {later}'s completion is not ordered after it: had that phase "
                    f"completed first, the wait would take phase {later + 1}",
                )
        return tuple(
            dataclasses.replace(wait, occurrences=count)
            for wait, count in sorted(
                self.ambiguous_waits.values(), key=lambda found: (found[0].line, found[0].why)
            )
        )


def _expect_bytes(text: str) -> int:
    words = text.split(",")
    return int(words[1].strip()) if len(words) > 1 else 0


def _arrive_count(text: str) -> int:
    words = text.split(",")
    try:
        return int(words[1].strip().split(" ")[0]) if len(words) > 1 else 1
    except ValueError:
        return 1


class Scheduler:
    """The threads and the clock components: runs every live thread in turn until all are
    done, or until all wait for ever (a deadlock). ``progress()`` counts the operations
    executed so far; a round that executes none is where threads may be stuck."""

    def __init__(self, barriers: Barriers, progress, partition_order=(), choices=()):
        self.barriers = barriers
        self.progress = progress
        self.components = itertools.count(1)
        self.threads: list[Thread] = []
        # The order the threads take their turns in: ``partition_order[i]`` is the turn of
        # the i-th thread made (the kernel, which becomes the default partition, then the
        # partitions in the order warp_specialize lists them); the verdict must not depend
        # on it (test/python/test_hazards.py runs the corpus in every order).
        self.partition_order = tuple(partition_order)
        # Where every thread is blocked and several waits could pass early, which one
        # passes: ``choices`` gives the pick at each such point in turn (0 past its end);
        # ``made`` records (pick, how many there were), so that check.py runs the others.
        self.choices = tuple(choices)
        self.made: list[tuple[int, int]] = []
        self.timing_choices = 0

    def _turn(self, thread: Thread) -> int:
        index = self.threads.index(thread)
        order = self.partition_order
        return order[index] if index < len(order) else index

    def choose(self, alternatives: int, timing: bool = True) -> int:
        """Which of ``alternatives`` timings this execution takes at its next choice point
        (the ``choices`` given, then the first), recorded in ``made``; ``timing`` False: a
        branch on a value the check does not compute, which the order of the partitions does
        not change (``timing_choices`` counts the others)."""
        point = len(self.made)
        pick = self.choices[point] if point < len(self.choices) else 0
        self.made.append((pick, alternatives))
        self.timing_choices += timing
        return pick

    def start(self, env: dict) -> Thread:
        """The kernel's thread, before its first operation."""
        main = Thread("kernel", next(self.components), {}, env)
        main.tick()
        self.threads.append(main)
        return main

    def fork(self, parent: Thread, name: str, env: dict) -> Thread:
        """A partition of ``warp_specialize``: everything before it in ``parent`` happens
        before it."""
        component = next(self.components)
        clock = dict(parent.clock)
        clock[component] = 1
        child = Thread(name, component, clock, env)
        self.threads.append(child)
        return child

    def new_agent(
        self, thread: Thread, what: str, completion: str, barrier=None, after=None
    ) -> Agent:
        """An asynchronous operation ``thread`` issues now; ``after``: the clock of the
        earlier asynchronous operations the hardware runs it after (Thread.tcgen05_after)."""
        component = next(self.components)
        clock = join(dict(thread.clock), after or {})
        clock[component] = 1
        operand_component = 0
        if completion == "tcgen05":
            operand_component = next(self.components)
            clock[operand_component] = 1
        thread.tick()
        return Agent(
            component, clock, what, completion, barrier, thread, operand_component=operand_component
        )

    def run(self) -> list[str]:
        """Runs the threads; returns where each waits for ever, or [] when all are done."""
        while True:
            live = sorted((t for t in self.threads if not t.done), key=self._turn)
            if not live:
                return []
            before = self.progress()
            for thread in live:
                next(thread.generator, None)
            if self.progress() == before and all(
                thread.done or thread.blocked_at for thread in self.threads
            ):
                stuck = [thread for thread in live if not thread.done]
                if all(thread.blocked_at for thread in stuck) and self._no_progress(stuck):
                    if self.barriers.release_held():
                        continue  # the completions held late land: nothing else can happen
                    early = [thread for thread in stuck if thread.can_pass_early]
                    if not early:
                        return [f"{thread.name}: {thread.blocked_at}" for thread in stuck]
                    # Not a deadlock in every timing: a wait by parity whose last phase
                    # could have come later passes early there; execute that timing. The
                    # candidates go in the order the threads were made, not their turns.
                    early.sort(key=self.threads.index)
                    early[self.choose(len(early))].pass_early = True

    def _no_progress(self, stuck) -> bool:
        """True when one more turn of every blocked thread executes nothing."""
        before = self.progress()
        completed = self.barriers.completed_phases()
        for thread in stuck:
            next(thread.generator, None)
        return (
            self.progress() == before
            and completed == self.barriers.completed_phases()
            and not any(thread.done for thread in stuck)
        )
