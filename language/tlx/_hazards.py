"""``tlx.check_hazards``: the races on a kernel's specs, found before running.

Two buffers of one spec may share bytes; the planner guarantees the layout, the
kernel's barriers must guarantee that one is dead before its alias is written.
The check joins two sources and re-derives neither:

* which units (SMEM bytes, TMEM columns) each buffer index occupies: the plan's
  extents (``planner.buffer_extents``), as ``tlx.kernel_plans`` returns them;
* who reads and writes them and in what order: the kernel's TTGIR as stock
  Triton produced it for the target (the Gluon pipeline, run on the CPU), executed
  abstractly for one CTA (``_ttgir`` reads it, ``_hazard_ops`` says what each
  operation does): integer scalars that decide loop trips, buffer indices and
  mbarrier phases are computed with small concrete values, every partition of a
  ``ttg.warp_specialize`` is a thread, and happens-before is tracked with vector
  clocks, as dynamic race detectors do. An asynchronous operation (TMA copy,
  ``warpgroup_mma``, ``tcgen05``) is its own clock component, joined where it
  completes (an mbarrier phase, a wait, a commit).

Every pair of accesses to overlapping units of one spec (of two buffers that share
them, two buffer indices, or one buffer index), at least one a write, that
happens-before does not order is a ``Hazard``. A wait on an mbarrier phase by its
parity that happens-before does not tell from the phase two before or after it is an
``AmbiguousWait``. docs/hazards.md says what is and is not modelled.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import os
import re
import time
from dataclasses import dataclass, field

from . import _hazard_ops, _ttgir, planner

CLEAN = "clean"
HAZARDS = "hazards"
INCOMPLETE = "incomplete"
DEADLOCK = "deadlock"


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
        where = f"{os.path.basename(self.file_name)}:{self.line}"
        for file_name, line in self.callers[:1]:
            where += f" (called at {os.path.basename(file_name)}:{line})"
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
        where = f"{os.path.basename(self.file_name)}:{self.line}"
        for file_name, line in self.callers[:1]:
            where += f" (called at {os.path.basename(file_name)}:{line})"
        took = f"for phase {self.phase}" if self.phase >= 0 else "passing on the fresh barrier"
        return (
            f"ambiguous wait: {self.partition} waits on mbarrier {self.barrier} at {where} "
            f"{took} by its parity, and {self.why}"
            + (f" ({self.occurrences} times)" if self.occurrences > 1 else "")
        )


@dataclass(frozen=True)
class HazardReport:
    """What ``tlx.check_hazards`` found. ``result`` is ``"clean"`` (every pair of
    accesses to shared units is ordered and every mbarrier wait takes the phase it
    means, for the execution checked), ``"hazards"`` (``hazards``, ``ambiguous_waits``),
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


# --- Memory ----------------------------------------------------------------------------------


@dataclass
class Region:
    """An allocation: a spec's backing region (``spec_plan`` set) or any other."""

    name: str
    storage: str
    spec_plan: object = None
    extents: dict = field(default_factory=dict)  # (user, index) -> (start, end)


@dataclass(frozen=True)
class Memory:
    """An abstract ``!ttg.memdesc`` value: units ``intervals`` of ``region``; a
    buffer index of a spec's buffer when ``buffer`` is set; the view of a whole
    buffer (before ``memdesc_index``) when ``view`` is set."""

    region: Region
    type: _ttgir.MemDescType
    origin: int  # where its alloc tile starts
    intervals: tuple[tuple[int, int], ...]
    buffer: str | None = None
    index: int | None = None
    view: object = None  # (user position, planner.View) of a spec's buffer
    derived: bool = False  # transposed, reshaped or reinterpreted: sub-slices are whole


def _units(region: Region, memory_type: _ttgir.MemDescType, shape) -> int:
    if region.storage == "tmem":
        columns = shape[-1] if shape else 1
        stride = memory_type.encoding_int("colStride", 1)
        if "unpacked = true" in memory_type.encoding:
            stride = 32 // memory_type.element_bits
        return max(1, math.ceil(columns * memory_type.element_bits * stride / 32)) * max(
            1, math.prod(shape[:-2]) if len(shape) > 2 else 1
        )
    return math.prod(shape) * memory_type.element_bits // 8


def _subslice_intervals(memory: Memory, offsets, shape) -> tuple[tuple[int, int], ...]:
    """The units of ``shape`` at ``offsets`` inside ``memory``'s alloc tile."""
    memory_type = memory.type
    alloc = memory_type.alloc_shape
    if memory.derived or len(offsets) != len(alloc) or len(alloc) < 2:
        return memory.intervals
    element_bytes = memory_type.element_bits / 8
    rows = math.prod(alloc[:-1])
    inner = alloc[-1]
    row_offset = 0
    for dim, offset in enumerate(offsets[:-1]):
        row_offset += offset * math.prod(alloc[dim + 1 : -1])
    sub_rows = math.prod(shape[:-1])
    column = offsets[-1]
    swizzle = memory_type.encoding_int("swizzlingByteWidth", 0)
    if "nvmma_shared" in memory_type.encoding and not memory_type.encoding_flag("transposed"):
        block = min(inner, int(swizzle / element_bytes)) if swizzle else inner
        row_bytes = int(block * element_bytes)
        intervals = []
        for column_block in range(column // block, math.ceil((column + shape[-1]) / block)):
            start = memory.origin + (column_block * rows + row_offset) * row_bytes
            intervals.append((start, start + sub_rows * row_bytes))
        return tuple(intervals)
    if "nvmma_shared" in memory_type.encoding:
        return memory.intervals
    row_bytes = int(inner * element_bytes)
    start = memory.origin + row_offset * row_bytes
    return ((start, start + sub_rows * row_bytes),)


def _overlap(first, second) -> tuple[int, int] | None:
    best = None
    for a_start, a_end in first:
        for b_start, b_end in second:
            start, end = max(a_start, b_start), min(a_end, b_end)
            if start < end and (best is None or start < best[0]):
                best = (start, end)
    return best


# --- Ordering ---------------------------------------------------------------------------------


def _join(first: dict, second: dict) -> dict:
    if not second:
        return first
    joined = dict(first)
    for component, value in second.items():
        if joined.get(component, 0) < value:
            joined[component] = value
    return joined


def _before(earlier: dict, later: dict) -> bool:
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


@dataclass
class RecordedAccess:
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


# Asynchronous accesses of one operation, buffer index and partition kept for the check:
# a later one may complete at another mbarrier than an earlier one.
_AGENT_HISTORY = 8


class Barrier:
    def __init__(self, name: str):
        self.name = name
        self.count = 1
        self.pending = 1
        self.transaction = 0
        self.completed = 0
        self.clock: dict = {}
        self.phase_clocks: list[dict] = []
        # What arrived on each phase, (clock, what), for the report of an ambiguous wait.
        self.arrivals: list[tuple[dict, str]] = []
        self.phase_arrivals: list[list[tuple[dict, str]]] = []
        # The waits that took each phase (-1: passed on the fresh barrier), each (thread
        # component, its epoch just after the wait, the wait); and (wait, the phase after
        # the one it took) where that next phase's completion is not ordered after it.
        self.waits: dict[int, list[tuple[int, int, tuple]]] = {}
        self.late: list[tuple[tuple, int]] = []

    def arrive(self, clock: dict, source: str, count: int = 1) -> bool:
        self.clock = _join(self.clock, clock)
        self.arrivals.append((clock, source))
        self.pending -= count
        return self._complete()

    def transact(self, clock: dict, source: str, units: int) -> bool:
        self.clock = _join(self.clock, clock)
        self.arrivals.append((clock, source))
        self.transaction -= units
        return self._complete()

    def _complete(self) -> bool:
        if self.pending <= 0 and self.transaction == 0:
            for component, epoch, wait in self.waits.pop(self.completed - 1, ()):
                if self.clock.get(component, 0) < epoch:
                    self.late.append((wait, self.completed))
            self.phase_clocks.append(self.clock)
            self.phase_arrivals.append(self.arrivals)
            self.completed += 1
            self.pending = self.count
            self.clock = {}
            self.arrivals = []
            return True
        return False


@dataclass
class Thread:
    name: str
    component: int
    clock: dict
    env: dict
    dots: list = field(default_factory=list)
    stores: list = field(default_factory=list)
    tcgen05_clock: dict = field(default_factory=dict)
    waited: set = field(default_factory=set)
    fences: list = field(default_factory=list)  # the epoch of each fence_async_shared
    done: bool = False
    blocked_at: str = ""  # what it waits for, while it waits
    generator: object = None  # its execution (Execution.run_thread)

    def tick(self) -> None:
        self.clock = dict(self.clock)
        self.clock[self.component] = self.clock.get(self.component, 0) + 1

    def acquire(self, clock: dict) -> None:
        joined = _join(self.clock, clock)
        if joined is not self.clock:
            self.clock = joined


# --- The abstract execution -------------------------------------------------------------------

_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}


def _divide(a, b):
    if b == 0:
        return None
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _remainder(a, b):
    if b == 0:
        return None
    return a - b * _divide(a, b)


_BINARY = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _divide,
    "arith.divui": _divide,
    "arith.remsi": _remainder,
    "arith.remui": _remainder,
    "arith.ceildivsi": lambda a, b: -_divide(-a, b) if b else None,
    "arith.ceildivui": lambda a, b: -_divide(-a, b) if b else None,
    "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.shrui": lambda a, b: a >> b,
    "arith.minsi": min,
    "arith.minui": min,
    "arith.maxsi": max,
    "arith.maxui": max,
}
_INTEGERS = frozenset({"i1", "i8", "i16", "i32", "i64"})
# Integer parameter types as a kernel's signature writes them.
_INTEGER_SIGNATURES = _INTEGERS | {"u1", "u8", "u16", "u32", "u64"}
_CASTS = frozenset({"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"})


class Execution:
    def __init__(
        self,
        module: _ttgir.Module,
        spec_plans,
        values,
        program_id,
        num_programs,
        budget,
        integer_arguments=None,
    ):
        self.module = module
        # The kernel's integer parameters by name (None: every integer argument of the
        # TTGIR function, descriptors' shapes and strides included).
        self.integer_arguments = integer_arguments
        self.values = values
        self.program_id = program_id
        self.num_programs = num_programs
        self.budget = budget
        self.operations = 0
        self.components = itertools.count(1)
        self.threads: list[Thread] = []
        self.barriers: dict[tuple, Barrier] = {}
        self.specs = {spec_plan.name: spec_plan for spec_plan in spec_plans}
        self.accesses: dict[int, dict] = {}  # region id -> {latest key: RecordedAccess}
        self.access_count = 0
        self.hazards: dict[tuple, list] = {}
        # (file, line, callers, partition, "before" or "after") -> [AmbiguousWait, count]
        self.ambiguous_waits: dict[tuple, list] = {}
        self.unmodelled: dict[str, str] = {}
        self.location_cache: dict[str, tuple] = {}
        self.not_given: list[str] = []  # integer arguments without a value
        self.slot_indices: dict[tuple, int | None] = {}  # (view, slot) -> buffer index

    # Locations and names.
    def where(self, operation) -> tuple:
        cached = self.location_cache.get(operation.location)
        if cached is None:
            file_name, line, callers = self.module.source_location(operation.location)
            cached = self.location_cache[operation.location] = (file_name, line, tuple(callers))
        return cached

    def location_text(self, operation) -> str:
        file_name, line, _ = self.where(operation)
        return f"{os.path.basename(file_name)}:{line}"

    def describe_operation(self, operation) -> str:
        return f"{operation.name} at {self.location_text(operation)}"

    def unmodelled_operation(self, operation, why: str) -> None:
        self.unmodelled.setdefault(
            operation.name + why, f"{self.describe_operation(operation)}{why}"
        )

    # Values.
    def scalar(self, thread: Thread, name: str, operation, what: str) -> int:
        found = thread.env.get(name)
        if not isinstance(found, int):
            given = ", ".join(self.not_given) or "none"
            raise Incomplete(
                f"{self.describe_operation(operation)}: its {what} is not known (it depends on "
                f"a value the check was not given; integer arguments not given: {given})"
            )
        return found

    def predicate(self, thread: Thread, operation, name: str) -> bool:
        return bool(self.scalar(thread, name, operation, "predicate"))

    # Memory.
    def allocation(self, operation) -> Memory | None:
        memory_type = self.module.memdesc(operation.text)
        if memory_type is None:
            return None
        spec_name = operation.string_attribute("tlx.spec")
        spec_plan = self.specs.get(spec_name) if spec_name else None
        region = Region(
            spec_name or (operation.results[0] if operation.results else "?"),
            memory_type.memory_space,
            spec_plan,
        )
        if spec_plan is not None:
            for extent in planner.buffer_extents(spec_plan.plan, spec_plan.buffers):
                region.extents[(extent.user, extent.index)] = (extent.start, extent.end)
        size = _units(region, memory_type, memory_type.shape)
        return Memory(region, memory_type, 0, ((0, size),))

    def view(self, operation, source: Memory, thread: Thread) -> Memory | None:
        name = operation.name
        result_type = self.module.memdesc(operation.text)
        if result_type is None or source is None:
            return None
        region = source.region
        if name == "ttg.memdesc_index":
            slot = self.scalar(thread, operation.operands[1], operation, "buffer index")
            if source.view is not None:
                user, view = source.view
                index = self.slot_indices.get((id(view), slot))
                if index is None:
                    index = self.slot_indices[(id(view), slot)] = _index_of_slot(view, slot)
                spec_plan = region.spec_plan
                start, end = region.extents.get((user, index), (None, None))
                if start is None:
                    raise Incomplete(
                        f"{self.describe_operation(operation)}: slot {slot} of "
                        f'"{spec_plan.buffers[user].name}" is no buffer of its plan'
                    )
                return Memory(
                    region, result_type, start, ((start, end),), spec_plan.buffers[user].name, index
                )
            stride = _units(region, source.type, source.type.alloc_shape[1:])
            start = source.origin + slot * stride
            return Memory(
                region,
                result_type,
                start,
                ((start, start + _units(region, result_type, result_type.shape)),),
                source.buffer,
                source.index,
            )
        if name == "ttg.memdesc_reinterpret":
            buffer_name = operation.string_attribute("tlx.buffer")
            spec_plan = region.spec_plan
            if buffer_name is not None and spec_plan is not None:
                user = next(
                    (i for i, b in enumerate(spec_plan.buffers) if b.name == buffer_name), None
                )
                if user is None:
                    self.unmodelled_operation(
                        operation,
                        f' (the view of "{buffer_name}", a reuse=buffered_tensor user that '
                        "joined its spec after sealing, is not checked)",
                    )
                else:
                    view = spec_plan.plan.views[user]
                    if not view.indexed:
                        start, end = region.extents[(user, 0)]
                        return Memory(region, result_type, start, ((start, end),), buffer_name, 0)
                    return Memory(region, result_type, 0, source.intervals, view=(user, view))
            size = _units(region, result_type, result_type.shape)
            return Memory(
                region,
                result_type,
                source.origin,
                ((source.origin, source.origin + size),)
                if source.buffer is None
                else source.intervals,
                source.buffer,
                source.index,
                derived=True,
            )
        if name == "ttg.memdesc_subslice":
            offsets = _subslice_offsets(operation.text)
            if region.storage == "tmem":
                column = offsets[-1] if offsets else 0
                start = source.origin + _units(region, source.type, (column,))
                size = _units(region, result_type, result_type.shape)
                intervals = ((start, start + size),)
            else:
                intervals = _subslice_intervals(source, offsets, result_type.shape)
            return Memory(
                region,
                result_type,
                source.origin,
                intervals,
                source.buffer,
                source.index,
                derived=source.derived,
            )
        if name == "ttng.tmem_subslice":
            column = operation.attribute_int("N")
            if column is None:
                column = operation.attribute_int("offset") or 0
            start = source.origin + _units(region, source.type, (column,))
            size = _units(region, result_type, result_type.shape)
            return Memory(
                region, result_type, start, ((start, start + size),), source.buffer, source.index
            )
        # memdesc_trans, memdesc_reshape: the same units.
        return Memory(
            region,
            result_type,
            source.origin,
            source.intervals,
            source.buffer,
            source.index,
            derived=True,
        )

    def barrier(self, memory: Memory) -> Barrier:
        key = (id(memory.region), memory.intervals[0][0])
        found = self.barriers.get(key)
        if found is None:
            found = self.barriers[key] = Barrier(_barrier_name(memory))
        return found

    # Accesses.
    def record(
        self,
        thread: Thread,
        memory: Memory,
        kind: str,
        operation,
        what,
        agent=None,
        proxy="generic",
    ):
        if memory is None or memory.region.spec_plan is None or memory.buffer is None:
            return
        self.access_count += 1
        file_name, line, callers = self.where(operation)
        access = Access(
            what, kind, memory.buffer, memory.index, thread.name, file_name, line, callers[:1]
        )
        if agent is not None:
            component, epoch, clock = agent.component, 1, agent.clock
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
                shared = _overlap(earlier.intervals, new.intervals)
                if shared is None:
                    continue
                key = (earlier.access, new.access)
                if key not in self.hazards:
                    self.hazards[key] = [memory.region, shared, missing(earlier, new), 0]
                self.hazards[key][3] += 1
        latest = (new.key, access, agent is not None and agent.completion, thread.name)
        if agent is None:
            # A later access of the same operation, index and partition is ordered after
            # whatever this one is ordered after: it is enough to keep the latest.
            recorded[latest] = (new,)
        else:
            recorded[latest] = (*recorded.get(latest, ())[-(_AGENT_HISTORY - 1) :], new)

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

    def missing(self, earlier: RecordedAccess, new: RecordedAccess) -> str:
        """Which ordering is missing between ``earlier`` and ``new``, in words."""
        agent = earlier.agent
        reader = new.access.partition
        if agent is not None:
            if agent.completion == "mbarrier" and agent.barrier is not None:
                barrier = self.barriers.get(agent.barrier)
                name = barrier.name if barrier else "its mbarrier"
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

    def new_agent(self, thread: Thread, what: str, completion: str, barrier=None) -> Agent:
        component = next(self.components)
        clock = dict(thread.clock)
        if completion == "tcgen05":
            # The tcgen05 operations of one thread run in the order it issues them.
            clock = _join(clock, thread.tcgen05_clock)
        clock[component] = 1
        thread.tick()
        return Agent(component, clock, what, completion, barrier, thread)

    # Execution proper: generators that yield when a thread blocks.
    def run_block(self, thread: Thread, operations):
        for operation in operations:
            self.operations += 1
            if self.operations > self.budget:
                raise Incomplete(
                    f"the execution took more than {self.budget} operations: give smaller "
                    "integer arguments"
                )
            result = self.execute(thread, operation)
            if result is not None:
                yield from result

    def execute(self, thread: Thread, operation):
        name = operation.name
        env = thread.env
        if name == "arith.constant":
            text = operation.text
            if "dense<" not in text:
                word = text.split("arith.constant", 1)[1].strip().split(" ")[0].rstrip(":")
                if word in ("true", "false"):
                    env[operation.results[0]] = int(word == "true")
                else:
                    try:
                        env[operation.results[0]] = int(word)
                    except ValueError:
                        env[operation.results[0]] = None
            return None
        if name in _BINARY:
            a, b = env.get(operation.operands[0]), env.get(operation.operands[1])
            env[operation.results[0]] = (
                _BINARY[name](a, b) if isinstance(a, int) and isinstance(b, int) else None
            )
            return None
        if name == "arith.cmpi":
            predicate = operation.text.split("arith.cmpi", 1)[1].strip().split(",")[0]
            a, b = env.get(operation.operands[0]), env.get(operation.operands[1])
            env[operation.results[0]] = (
                int(_COMPARE[predicate](a, b))
                if isinstance(a, int) and isinstance(b, int)
                else None
            )
            return None
        if name == "arith.select":
            # A scalar, or a memory descriptor: both are chosen by a known condition.
            condition = env.get(operation.operands[0])
            chosen = None
            if isinstance(condition, int):
                chosen = env.get(operation.operands[1 if condition else 2])
            env[operation.results[0]] = chosen
            return None
        if name in _CASTS:
            env[operation.results[0]] = env.get(operation.operands[0])
            return None
        if name == "tt.get_program_id":
            env[operation.results[0]] = self.program_id[_axis(operation.text)]
            return None
        if name == "tt.get_num_programs":
            env[operation.results[0]] = self.num_programs[_axis(operation.text)]
            return None
        if name == "scf.for":
            return self.run_for(thread, operation)
        if name == "scf.if":
            return self.run_if(thread, operation)
        if name == "scf.while":
            return self.run_while(thread, operation)
        if name in ("scf.yield", "scf.condition", "tt.return"):
            thread.env["__yield__"] = [env.get(operand) for operand in operation.operands]
            return None
        if name == "ttg.warp_specialize":
            return self.run_warp_specialize(thread, operation)
        if name in _hazard_ops.VIEW_OPS:
            source = env.get(operation.operands[0])
            env[operation.results[0]] = self.view(operation, source, thread)
            return None
        if name in ("ttg.local_alloc", "ttng.tmem_alloc"):
            memory = self.allocation(operation)
            env[operation.results[0]] = memory
            if operation.operands and memory is not None:
                self.record(thread, memory, "write", operation, "local_alloc of a value")
            return None
        model = _hazard_ops.model_of(name)
        if model is not None:
            return self.run_model(thread, operation, model)
        if name in _hazard_ops.PURE_OPS or (
            name.startswith(_hazard_ops.PURE_PREFIXES) and name not in _hazard_ops.IMPURE_TT
        ):
            if any(isinstance(env.get(operand), Memory) for operand in operation.operands):
                self.unmodelled_operation(operation, " (uses a memory descriptor)")
            for result in operation.results:
                env[result] = None
            return None
        self.unmodelled_operation(operation, "")
        for result in operation.results:
            env[result] = None
        return None

    def run_for(self, thread: Thread, operation):
        lower = self.scalar(thread, operation.operands[0], operation, "lower bound")
        upper = self.scalar(thread, operation.operands[1], operation, "upper bound")
        step = self.scalar(thread, operation.operands[2], operation, "step")
        carried = [thread.env.get(operand) for operand in operation.operands[3:]]
        body = operation.regions[0]
        if step <= 0:
            raise Incomplete(f"{self.describe_operation(operation)}: step {step}")
        for induction in range(lower, upper, step):
            for argument, value in zip(body.arguments, [induction, *carried], strict=False):
                thread.env[argument] = value
            yield from self.run_block(thread, body.operations)
            carried = thread.env.pop("__yield__", [])
        for result, value in zip(operation.results, carried, strict=False):
            thread.env[result] = value

    def run_if(self, thread: Thread, operation):
        condition = self.scalar(thread, operation.operands[0], operation, "condition")
        region = operation.regions[0] if condition else (operation.regions[1:] or [None])[0]
        values = []
        if region is not None:
            yield from self.run_block(thread, region.operations)
            values = thread.env.pop("__yield__", [])
        for result, value in zip(operation.results, values, strict=False):
            thread.env[result] = value

    def run_while(self, thread: Thread, operation):
        before, after = operation.regions[0], operation.regions[1]
        carried = [thread.env.get(operand) for operand in operation.operands]
        while True:
            for argument, value in zip(before.arguments, carried, strict=False):
                thread.env[argument] = value
            yield from self.run_block(thread, before.operations)
            condition_values = thread.env.pop("__yield__", [])
            if not condition_values or not isinstance(condition_values[0], int):
                raise Incomplete(
                    f"{self.describe_operation(operation)}: its condition is not known"
                )
            if not condition_values[0]:
                carried = condition_values[1:]
                break
            for argument, value in zip(after.arguments, condition_values[1:], strict=False):
                thread.env[argument] = value
            yield from self.run_block(thread, after.operations)
            carried = thread.env.pop("__yield__", [])
        for result, value in zip(operation.results, carried, strict=False):
            thread.env[result] = value

    def run_warp_specialize(self, thread: Thread, operation):
        captures = [thread.env.get(operand) for operand in operation.operands]
        children = []
        for region in operation.regions[1:]:
            component = next(self.components)
            clock = dict(thread.clock)
            clock[component] = 1
            child = Thread(
                region.label, component, clock, dict(zip(region.arguments, captures, strict=False))
            )
            self.threads.append(child)
            children.append(child)
            child.generator = self.run_thread(child, region.operations)
        thread.tick()
        default_name = thread.name
        thread.name = "default partition"
        yield from self.run_block(thread, operation.regions[0].operations)
        values = thread.env.pop("__yield__", [])
        thread.name = default_name
        while not all(child.done for child in children):
            thread.blocked_at = f"{self.describe_operation(operation)}: the end of the partitions"
            yield
        thread.blocked_at = ""
        for child in children:
            thread.acquire(child.clock)
        for result, value in zip(operation.results, values, strict=False):
            thread.env[result] = value

    def run_thread(self, thread: Thread, operations):
        yield from self.run_block(thread, operations)
        thread.done = True

    def run_model(self, thread: Thread, operation, model: _hazard_ops.OpModel):
        env = thread.env
        memories = [
            (position, env[operand])
            for position, operand in enumerate(operation.operands)
            if isinstance(env.get(operand), Memory)
        ]
        operands = operation.operands
        sync = model.sync
        if sync == "none":
            return None
        if sync == "fence":
            thread.fences.append(thread.clock.get(thread.component, 0))
            thread.tick()
            return None
        if "barrier" in model.roles and not memories:
            raise Incomplete(
                f"{self.describe_operation(operation)}: its mbarrier comes from an operation "
                "the check does not model"
            )
        if sync == "init":
            barrier = self.barrier(memories[0][1])
            count = operation.attribute_int("count")
            if count is None:
                words = operation.text.split(",")
                count = int(words[1].split(":")[0].strip()) if len(words) > 1 else 1
            barrier.count = barrier.pending = count
            return None
        if sync == "wait":
            return self.run_wait(thread, operation, memories[0])
        if sync in ("arrive", "expect", "commit"):
            position, memory = memories[0]
            predicate_operands = operands[position + 1 :]
            if sync == "arrive" and len(predicate_operands) >= 1:
                if not self.predicate(thread, operation, predicate_operands[-1]):
                    return None
            if sync in ("expect", "commit") and predicate_operands:
                if not self.predicate(thread, operation, predicate_operands[-1]):
                    return None
            barrier = self.barrier(memory)
            source = f"{self.describe_operation(operation)} ({thread.name})"
            if sync == "expect":
                barrier.transaction += _expect_bytes(operation.text)
                barrier.arrive(thread.clock, source)
            elif sync == "commit":
                barrier.arrive(_join(thread.clock, thread.tcgen05_clock), source)
            else:
                count = _arrive_count(operation.text)
                barrier.arrive(thread.clock, source, count)
            thread.tick()
            return None
        if sync == "store_wait":
            self.retire(thread, thread.stores, operation.attribute_int("pendings") or 0)
            return None
        if sync == "dot_wait":
            self.retire(thread, thread.dots, operation.attribute_int("pendings") or 0)
            for result, operand in zip(operation.results, operands, strict=False):
                env[result] = env.get(operand)
            return None
        return self.run_access(thread, operation, model, memories)

    def retire(self, thread: Thread, outstanding: list, keep: int) -> None:
        while len(outstanding) > keep:
            thread.acquire(outstanding.pop(0).clock)

    def run_wait(self, thread: Thread, operation, barrier_operand):
        position, memory = barrier_operand
        rest = operation.operands[position + 1 :]
        if len(rest) >= 2 and not self.predicate(thread, operation, rest[1]):
            return
        parity = self.scalar(thread, rest[0], operation, "phase") & 1
        barrier = self.barrier(memory)
        key = (id(memory.region), memory.intervals[0][0])
        while barrier.completed % 2 == parity:
            thread.blocked_at = (
                f"{self.describe_operation(operation)}: mbarrier {barrier.name} phase parity "
                f"{parity} (its {barrier.completed} completed phases)"
            )
            yield
        thread.blocked_at = ""
        thread.waited.add(key)
        phase = barrier.completed - 1
        file_name, line, callers = self.where(operation)
        wait = (file_name, line, callers[:1], thread.name, barrier.name, phase)
        if phase >= 1 and not _before(barrier.phase_clocks[phase - 1], thread.clock):
            # A wait passes on the last completed phase of the parity it names: while phase
            # ``phase - 1`` has not completed, that is phase ``phase - 2``.
            unordered = sorted(
                {
                    source
                    for clock, source in barrier.phase_arrivals[phase - 1]
                    if not _before(clock, thread.clock)
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
        if phase >= 0:
            thread.acquire(barrier.phase_clocks[phase])
        # Had phase ``phase + 1`` completed first, the wait would have taken ``phase + 2``:
        # the barrier checks that completion against the thread's epoch after the wait.
        thread.tick()
        barrier.waits.setdefault(phase, []).append(
            (thread.component, thread.clock[thread.component], wait)
        )

    def ambiguous(self, wait: tuple, kind: str, why: str) -> None:
        """Records an ambiguous ``wait`` (file, line, callers, partition, mbarrier, phase):
        the phase next to the one it took is not ordered ``kind`` ("before" or "after")
        it, as ``why`` says."""
        found = self.ambiguous_waits.setdefault((*wait[:4], kind), [AmbiguousWait(*wait, why), 0])
        found[1] += 1

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

    def run_access(self, thread: Thread, operation, model, memories):
        operands = operation.operands
        env = thread.env
        asynchronous = model.completion != "sync"
        # Without is_async / isAsync Triton waits for the operation where it issues it.
        if model.completion == "tcgen05" and not operation.has_word("is_async"):
            asynchronous = False
        if model.completion == "dot_wait" and "isAsync = true" not in operation.text:
            asynchronous = False
        # The operation's own predicate: the operand before its first mbarrier, or its last.
        roles = list(model.roles)
        data, barriers = [], []
        for number, (position, memory) in enumerate(memories):
            role = (
                roles[number] if number < len(roles) else ("barrier" if model.more_barriers else "")
            )
            (barriers if role == "barrier" else data).append((position, memory, role))
        if model.completion == "dot_wait" and len(data) < 2:
            # A register A operand: the memdesc operand is B.
            data = [(p, m, "read") for p, m, _ in data]
        predicate_position = (
            barriers[0][0] - 1 if barriers and model.completion == "tcgen05" else len(operands) - 1
        )
        if model.completion in ("mbarrier", "tcgen05") or operation.name == "ttng.tmem_store":
            predicate = env.get(operands[predicate_position]) if operands else 1
            if isinstance(predicate, int) and not predicate:
                return None
        what = model.what
        agent = None
        barrier_key = None
        if model.completion == "mbarrier" and barriers:
            barrier_memory = barriers[0][1]
            barrier_key = (id(barrier_memory.region), barrier_memory.intervals[0][0])
        if asynchronous:
            agent = self.new_agent(thread, what, model.completion, barrier_key)
        use_accumulator = re.search(r"\]\s*,\s*(%[\w.$-]+)", operation.text)
        if model.completion == "tcgen05" and use_accumulator is not None:
            # use_acc = false: the MMA writes its accumulator without reading it.
            if env.get(use_accumulator.group(1)) == 0:
                data = [(p, m, "write" if r == "readwrite" else r) for p, m, r in data]
        for _, memory, role in data:
            for kind in ("read", "write") if role == "readwrite" else (role,):
                self.record(thread, memory, kind, operation, what, agent, model.proxy)
        if agent is None:
            return None
        if model.completion == "mbarrier" and barriers:
            units = sum(
                _units(memory.region, memory.type, memory.type.shape) for _, memory, _ in data
            )
            source = f"{what} at {self.location_text(operation)} ({thread.name})"
            self.barrier(barriers[0][1]).transact(agent.clock, source, units)
        elif model.completion == "store_wait":
            thread.stores.append(agent)
        elif model.completion == "dot_wait":
            thread.dots.append(agent)
            for result in operation.results:
                env[result] = None
        elif model.completion == "tcgen05":
            thread.tcgen05_clock = _join(thread.tcgen05_clock, agent.clock)
            for position, memory, _ in barriers:
                barrier_predicate = (
                    env.get(operands[position + 1]) if position + 1 < len(operands) else 1
                )
                if isinstance(barrier_predicate, int) and not barrier_predicate:
                    continue
                self.barrier(memory).arrive(
                    _join(agent.clock, thread.tcgen05_clock),
                    f"{self.describe_operation(operation)} ({thread.name})",
                )
        return None

    # The scheduler.
    def run(self, function) -> list[str]:
        body = function.regions[0]
        env = {}
        for argument, kind in itertools.zip_longest(body.arguments, body.argument_types):
            name = argument.lstrip("%")
            env[argument] = self.values.get(name)
            if self.integer_arguments is None and env[argument] is None and kind in _INTEGERS:
                self.not_given.append(name)
        if self.integer_arguments is not None:
            self.not_given = [name for name in self.integer_arguments if name not in self.values]
        main = Thread("kernel", next(self.components), {}, env)
        main.tick()
        main.generator = self.run_thread(main, function.regions[0].operations)
        self.threads.append(main)
        while True:
            live = [thread for thread in self.threads if not thread.done]
            if not live:
                return []
            before = self.operations
            for thread in live:
                next(thread.generator, None)
            if self.operations == before and all(
                thread.done or thread.blocked_at for thread in self.threads
            ):
                stuck = [thread for thread in self.threads if not thread.done]
                if all(thread.blocked_at for thread in stuck) and self._no_progress(stuck):
                    return [f"{thread.name}: {thread.blocked_at}" for thread in stuck]

    def _no_progress(self, stuck) -> bool:
        """True when one more turn of every blocked thread executes nothing."""
        before = self.operations
        completed = sum(barrier.completed for barrier in self.barriers.values())
        for thread in stuck:
            next(thread.generator, None)
        return (
            self.operations == before
            and completed == sum(barrier.completed for barrier in self.barriers.values())
            and not any(thread.done for thread in stuck)
        )

    def report_hazards(self) -> tuple[Hazard, ...]:
        hazards = []
        for (first, second), (region, shared, missing, count) in self.hazards.items():
            hazards.append(
                Hazard(region.spec_plan.name, region.storage, first, second, shared, missing, count)
            )
        hazards.sort(key=lambda h: (h.first.line, h.second.line, h.first.buffer, h.second.buffer))
        return tuple(hazards)


def _index_of_slot(view, slot: int) -> int | None:
    for index in range(view.slots):
        if view.slot_of(index) == slot:
            return index
    return None


def _subslice_offsets(text: str) -> tuple[int, ...]:
    start = text.find("[")
    end = text.find("]", start)
    return tuple(int(part) for part in text[start + 1 : end].split(",") if part.strip())


def _axis(text: str) -> int:
    for axis, word in enumerate((" x", " y", " z")):
        if word + " " in text + " " or word + ":" in text:
            return axis
    return 0


def _expect_bytes(text: str) -> int:
    words = text.split(",")
    return int(words[1].strip()) if len(words) > 1 else 0


def _arrive_count(text: str) -> int:
    words = text.split(",")
    try:
        return int(words[1].strip().split(" ")[0]) if len(words) > 1 else 1
    except ValueError:
        return 1


def _barrier_name(memory: Memory) -> str:
    size = memory.intervals[0][1] - memory.intervals[0][0] or 8
    index = memory.intervals[0][0] // size
    name = memory.region.name.lstrip("%")
    return f"{name}[{index}]"


# --- The front door ---------------------------------------------------------------------------


def kernel_ttgir(src, target, options=None):
    """(TTGIR text, spec plans) of a ``tlx.ASTSource`` for ``target``: Triton's front
    end, then its Gluon TTGIR pipeline for the target, on the CPU. Each spec's
    backing allocation and views carry the spec's and buffer's names
    (``tlx.spec``, ``tlx.buffer`` attributes)."""
    from .api._jit import front_end

    module, trace, backend, options = front_end(
        src, target, options, "tlx.check_hazards", name_views=True
    )
    backend.gluon_to_ttgir(module, {}, options, backend._parse_arch(options.arch))
    return module.str(), trace.spec_plans


def check_ttgir(
    text: str,
    spec_plans,
    *,
    kernel: str = "",
    target: str = "",
    values=None,
    program_id=(0, 0, 0),
    num_programs=(1, 1, 1),
    budget: int = 2_000_000,
    integer_arguments=None,
) -> HazardReport:
    """The hazard check of a TTGIR module's text whose specs ``spec_plans`` planned;
    ``integer_arguments`` names the kernel's integer parameters (for messages)."""
    started = time.perf_counter()
    values = dict(values or {})
    module = _ttgir.parse_module(text)
    # The kernel is the public function (functions Triton did not inline are private).
    functions = sorted(module.functions.values(), key=lambda f: "tt.func public" not in f.text)
    function = functions[0] if functions else None
    execution = Execution(
        module,
        spec_plans,
        values,
        tuple(program_id),
        tuple(num_programs),
        budget,
        integer_arguments,
    )
    blocked: list[str] = []
    result = CLEAN
    if function is None:
        execution.unmodelled["no function"] = "the module has no function"
    else:
        try:
            blocked = execution.run(function)
        except Incomplete as why:
            execution.unmodelled["incomplete"] = str(why)
    hazards = execution.report_hazards()
    ambiguous_waits = execution.report_ambiguous_waits()
    unmodelled = tuple(execution.unmodelled.values())
    if blocked:
        result = DEADLOCK
    if hazards or ambiguous_waits:
        result = HAZARDS
    if unmodelled:
        # What an unmodelled operation orders is unknown: the hazards listed may be its.
        result = INCOMPLETE
    return HazardReport(
        kernel or (function.text.split("@")[1].split("(")[0] if function else "?"),
        target,
        result,
        hazards,
        unmodelled,
        tuple(blocked),
        execution.operations,
        execution.access_count,
        time.perf_counter() - started,
        values,
        ambiguous_waits=ambiguous_waits,
    )


def check_hazards(
    src,
    target,
    options=None,
    *,
    values=None,
    program_id=(0, 0, 0),
    num_programs=(1, 1, 1),
    budget: int = 2_000_000,
) -> HazardReport:
    """The races on the SMEM and TMEM of a ``@tlx.jit`` kernel's specs: between buffers
    that share bytes, and within one buffer index.

    Takes what ``tlx.kernel_plans`` takes (``src`` a ``tlx.ASTSource``, ``target`` a
    ``GPUTarget`` for sm_90a or sm_100a, ``options`` the compile options) and
    ``values``: the kernel's integer arguments by name (``{"K": 256}``; what loop
    trips, buffer indices and phases depend on; small values keep the check fast).
    ``program_id``/``num_programs`` place the one CTA executed in the grid. Runs on
    the CPU; returns a ``HazardReport`` (``describe()`` prints it)."""
    started = time.perf_counter()
    text, spec_plans = kernel_ttgir(src, target, options)
    ttgir_seconds = time.perf_counter() - started
    report = check_ttgir(
        text,
        spec_plans,
        kernel=src.fn.__name__,
        target=planner.target_name(target.arch),
        values=values,
        program_id=program_id,
        num_programs=num_programs,
        budget=budget,
        integer_arguments=tuple(
            param.name
            for param in src.fn.params
            if src.signature.get(param.name) in _INTEGER_SIGNATURES
        ),
    )
    return dataclasses.replace(report, ttgir_seconds=ttgir_seconds)
