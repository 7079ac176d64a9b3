"""The abstract execution of one CTA of a kernel's TTGIR: the interpreter and its dispatch table.

``Execution`` walks the operations of the kernel's function. Each thread's execution is a
generator that yields where the thread blocks (an mbarrier wait, the end of the partitions),
so that the ``Scheduler`` (language/tlx/hazards/scheduling.py) can run the others. Every
operation goes to its handler through ``HANDLERS``, operation name -> ``handler(execution,
thread, operation)``: the scalars of language/tlx/hazards/values.py, control flow, the views
and allocations of language/tlx/hazards/memory.py, and every row of the op table
(language/tlx/hazards/ops.py), dispatched by the row's ``sync`` kind (``KIND_HANDLERS``).
An operation without a handler is pure (its results are unknown) or unmodelled, which makes
the report incomplete.
"""

from __future__ import annotations

import itertools

from . import ops, values
from .accesses import AccessLog, is_asynchronous, is_issued, operand_roles, tcgen05_pipeline
from .memory import VIEW_HANDLERS, Memories, Memory, units
from .report import Incomplete, SourceLines
from .scheduling import Barriers, Scheduler, Thread, barrier_key, join
from .ttgir import Module


class Execution:
    """One CTA of a kernel executed abstractly: ``values`` are the integer arguments given,
    ``budget`` the most operations it executes. ``integer_arguments`` names the kernel's
    integer parameters (None: every integer argument of the TTGIR function, descriptors'
    shapes and strides included), for the message of a value not given;
    ``partition_order`` the order the threads take turns in, ``choices`` the waits that
    pass early (``Scheduler``) and ``deferred`` the asynchronous completions that land
    late (``Barrier.deferred``)."""

    def __init__(
        self,
        module: Module,
        spec_plans,
        values,
        program_id,
        num_programs,
        budget,
        integer_arguments=None,
        partition_order=(),
        choices=(),
        deferred=frozenset(),
    ):
        self.module = module
        self.integer_arguments = integer_arguments
        self.values = values
        self.program_id = program_id
        self.num_programs = num_programs
        self.budget = budget
        self.operations = 0
        self.unmodelled: dict[str, str] = {}
        self.not_given: list[str] = []  # integer arguments without a value
        self.lines = SourceLines(module)
        self.memories = Memories(self.lines, spec_plans, self.scalar, self.unmodelled_operation)
        self.barriers = Barriers(self.lines, self.scalar, deferred=deferred)
        self.scheduler = Scheduler(self.barriers, lambda: self.operations, partition_order, choices)
        self.barriers.choose = self.scheduler.choose
        self.log = AccessLog(self.lines, self.barriers.barriers, self.scheduler.threads)

    def timing_dependent(self) -> bool:
        """Whether another timing could take another phase at a wait: a choice of a timing
        was made (Scheduler.choose; not a branch's), a wait is ambiguous, or an asynchronous
        completion may land after a later arrival on its barrier."""
        return self.scheduler.timing_choices > 0 or self.barriers.timing_dependent()

    def choices_made(self) -> int:
        """How far its timing is from the plainest: the waits it let pass early and the
        asynchronous completions it landed late."""
        return sum(1 for pick, _ in self.scheduler.made if pick) + len(self.barriers.deferred)

    def unmodelled_operation(self, operation, why: str) -> None:
        self.unmodelled.setdefault(
            operation.name + why, f"{self.lines.describe_operation(operation)}{why}"
        )

    def scalar(self, thread: Thread, name: str, operation, what: str) -> int:
        """The integer value ``name`` in ``thread``; ``Incomplete`` when it is not known."""
        found = thread.env.get(name)
        if found is values.DATA:
            raise Incomplete(
                f"{self.lines.describe_operation(operation)}: its {what} is not known (it is "
                "computed from memory, a tensor or a float, which the check does not compute)"
            )
        if not isinstance(found, int):
            given = ", ".join(self.not_given) or "none"
            raise Incomplete(
                f"{self.lines.describe_operation(operation)}: its {what} is not known (it "
                f"depends on a value the check was not given; integer arguments not given: "
                f"{given})"
            )
        return found

    # Running: generators that yield when a thread blocks.
    def run(self, function) -> list[str]:
        """Executes the kernel ``function``; returns where every thread waits for ever
        (a deadlock), or []."""
        body = function.regions[0]
        env = {}
        for argument, kind in itertools.zip_longest(body.arguments, body.argument_types):
            name = argument.lstrip("%")
            env[argument] = self.values.get(name)
            if self.integer_arguments is None and env[argument] is None and kind in values.INTEGERS:
                self.not_given.append(name)
        if self.integer_arguments is not None:
            self.not_given = [name for name in self.integer_arguments if name not in self.values]
        main = self.scheduler.start(env)
        main.generator = self.run_thread(main, body.operations)
        return self.scheduler.run()

    def run_thread(self, thread: Thread, operations):
        yield from self.run_block(thread, operations)
        thread.done = True

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
        """Executes one operation: None, or a generator when it may block."""
        handler = HANDLERS.get(operation.name)
        if handler is not None:
            return handler(self, thread, operation)
        name = operation.name
        if name in ops.PURE_OPS or (
            name.startswith(ops.PURE_PREFIXES) and name not in ops.IMPURE_TT
        ):
            values.opaque(self, thread, operation)
            return None
        self.unmodelled_operation(operation, "")
        for result in operation.results:
            thread.env[result] = None
        return None

    # Control flow.
    def run_for(self, thread: Thread, operation):
        lower = self.scalar(thread, operation.operands[0], operation, "lower bound")
        upper = self.scalar(thread, operation.operands[1], operation, "upper bound")
        step = self.scalar(thread, operation.operands[2], operation, "step")
        carried = [thread.env.get(operand) for operand in operation.operands[3:]]
        body = operation.regions[0]
        if step <= 0:
            raise Incomplete(f"{self.lines.describe_operation(operation)}: step {step}")
        for induction in range(lower, upper, step):
            for argument, value in zip(body.arguments, [induction, *carried], strict=False):
                thread.env[argument] = value
            yield from self.run_block(thread, body.operations)
            carried = thread.env.pop("__yield__", [])
        for result, value in zip(operation.results, carried, strict=False):
            thread.env[result] = value

    def run_if(self, thread: Thread, operation):
        condition = thread.env.get(operation.operands[0])
        if condition is values.DATA:
            # Computed from memory (an atomic's result: split-K's last CTA to arrive): each
            # branch is a choice of the execution, and check.py executes both. The choice
            # binds the value, so that every later branch on it (Triton 3.6 tests one
            # condition in two scf.if) takes the same side: the other combinations cannot
            # happen, and executing them would only spend the check's bound.
            condition = not self.scheduler.choose(2, timing=False)
            thread.env[operation.operands[0]] = condition
        else:
            condition = self.scalar(thread, operation.operands[0], operation, "condition")
        region = operation.regions[0] if condition else (operation.regions[1:] or [None])[0]
        carried = []
        if region is not None:
            yield from self.run_block(thread, region.operations)
            carried = thread.env.pop("__yield__", [])
        for result, value in zip(operation.results, carried, strict=False):
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
                    f"{self.lines.describe_operation(operation)}: its condition is not known"
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

    def end_region(self, thread: Thread, operation) -> None:
        """``scf.yield``, ``scf.condition``, ``tt.return``: the region's results."""
        thread.env["__yield__"] = [thread.env.get(operand) for operand in operation.operands]

    def run_warp_specialize(self, thread: Thread, operation):
        captures = [thread.env.get(operand) for operand in operation.operands]
        children = []
        for region in operation.regions[1:]:
            env = dict(zip(region.arguments, captures, strict=False))
            child = self.scheduler.fork(thread, region.label, env)
            children.append(child)
            child.generator = self.run_thread(child, region.operations)
        thread.tick()
        default_name = thread.name
        thread.name = "default partition"
        yield from self.run_block(thread, operation.regions[0].operations)
        carried = thread.env.pop("__yield__", [])
        thread.name = default_name
        while not all(child.done for child in children):
            thread.blocked_at = (
                f"{self.lines.describe_operation(operation)}: the end of the partitions"
            )
            yield
        thread.blocked_at = ""
        for child in children:
            thread.acquire(child.clock)
        for result, value in zip(operation.results, carried, strict=False):
            thread.env[result] = value

    # Memory.
    def view(self, thread: Thread, operation) -> None:
        source = thread.env.get(operation.operands[0])
        thread.env[operation.results[0]] = self.memories.view(operation, source, thread)

    def allocate(self, thread: Thread, operation) -> None:
        """``ttg.local_alloc``, ``ttng.tmem_alloc``: the memory; one with an initial value
        also writes it."""
        memory = self.memories.allocation(operation)
        thread.env[operation.results[0]] = memory
        if operation.operands and memory is not None:
            self.log.record(thread, memory, "write", operation, "local_alloc of a value")

    # The rows of the op table, by their sync kind.
    def modelled(self, thread: Thread, operation):
        model = ops.model_of(operation.name)
        return KIND_HANDLERS[model.sync](self, thread, operation, model)

    def memory_operands(self, thread: Thread, operation, model) -> list:
        """The operands that are memory, ``(position, Memory)``; ``Incomplete`` when the
        row names an mbarrier and none is known."""
        env = thread.env
        memories = [
            (position, env[operand])
            for position, operand in enumerate(operation.operands)
            if isinstance(env.get(operand), Memory)
        ]
        if "barrier" in model.roles and not memories:
            raise Incomplete(
                f"{self.lines.describe_operation(operation)}: its mbarrier comes from an "
                "operation the check does not model"
            )
        return memories

    def skip(self, thread: Thread, operation, model) -> None:
        """Nothing the check needs (a partition is one thread)."""

    def fence(self, thread: Thread, operation, model) -> None:
        thread.fence()

    def init_barrier(self, thread: Thread, operation, model) -> None:
        memories = self.memory_operands(thread, operation, model)
        self.barriers.init(thread, operation, memories[0][1])

    def invalidate_barrier(self, thread: Thread, operation, model) -> None:
        memories = self.memory_operands(thread, operation, model)
        self.barriers.invalidate(thread, operation, memories[0][1])

    def wait_barrier(self, thread: Thread, operation, model):
        memories = self.memory_operands(thread, operation, model)
        return self.barriers.wait(thread, operation, memories[0])

    def arrive(self, thread: Thread, operation, model) -> None:
        memories = self.memory_operands(thread, operation, model)
        if model.sync == "commit":
            where = f"{self.lines.location_text(operation)} ({thread.name})"
            self.log.commits.setdefault(thread.name, where)
        self.barriers.arrive(thread, operation, model.sync, memories[0])

    def store_wait(self, thread: Thread, operation, model) -> None:
        pendings = operation.attribute_int("pendings") or 0
        where = f"{self.lines.location_text(operation)} ({thread.name})"
        self.log.store_waits.setdefault(thread.name, where)
        thread.retire(thread.stores, pendings, f"TMA store_wait({pendings}) at {where}")

    def dot_wait(self, thread: Thread, operation, model) -> None:
        pendings = operation.attribute_int("pendings") or 0
        where = self.lines.location_text(operation)
        thread.retire(thread.dots, pendings, f"warpgroup_mma_wait({pendings}) at {where}")
        for result, operand in zip(operation.results, operation.operands, strict=False):
            thread.env[result] = thread.env.get(operand)

    def access(self, thread: Thread, operation, model) -> None:
        """An operation that reads and writes memory: its accesses, and where an
        asynchronous one completes. Its results (a loaded tensor, a token) are data: the
        printer reuses names in sibling regions, so a name may still hold another region's
        memory descriptor."""
        env = thread.env
        memories = self.memory_operands(thread, operation, model)
        for result in operation.results:
            env[result] = values.DATA
        data, barriers = operand_roles(model, operation, env, memories)
        if not is_issued(model, operation, env, barriers):
            return
        what = model.what
        agent = None
        if is_asynchronous(model, operation):
            completes_at = None
            if model.completion == "mbarrier" and barriers:
                completes_at = barrier_key(barriers[0][1])
            pipeline = tcgen05_pipeline(data)
            after = thread.tcgen05_after(model.pipeline, pipeline)
            agent = self.scheduler.new_agent(thread, what, model.completion, completes_at, after)
            if completes_at is not None:
                agent.waited = dict(thread.waited)
        for number, (_, memory, role) in enumerate(data):
            # An MMA's operands other than its accumulator (the third) are its operand reads.
            operand = model.pipeline == "mma" and number != 2
            for kind in ("read", "write") if role == "readwrite" else (role,):
                self.log.record(thread, memory, kind, operation, what, agent, model.proxy, operand)
        if agent is None:
            return
        if model.completion == "mbarrier" and barriers:
            count = sum(
                units(memory.region, memory.type, memory.type.shape) for _, memory, _ in data
            )
            source = f"{what} at {self.lines.location_text(operation)} ({thread.name})"
            self.barriers.barrier(barriers[0][1]).transact(
                agent.clock, source, count, agent.component, agent
            )
        elif model.completion == "store_wait":
            thread.stores.append(agent)
        elif model.completion == "dot_wait":
            thread.dots.append(agent)
            for result in operation.results:
                env[result] = None
        elif model.completion == "tcgen05":
            thread.tcgen05_issued(model.pipeline, pipeline, agent)
            operands = operation.operands
            for position, memory, _ in barriers:
                barrier_predicate = (
                    env.get(operands[position + 1]) if position + 1 < len(operands) else 1
                )
                if isinstance(barrier_predicate, int) and not barrier_predicate:
                    continue
                self.barriers.barrier(memory).arrive(
                    join(agent.clock, thread.tcgen05_clock),
                    f"{self.lines.describe_operation(operation)} ({thread.name})",
                    owner=agent.component,
                    agent=agent,
                )


# The handling of each sync kind of the op table's rows ("" is an access).
KIND_HANDLERS = {
    "none": Execution.skip,
    "fence": Execution.fence,
    "init": Execution.init_barrier,
    "inval": Execution.invalidate_barrier,
    "wait": Execution.wait_barrier,
    "arrive": Execution.arrive,
    "expect": Execution.arrive,
    "commit": Execution.arrive,
    "store_wait": Execution.store_wait,
    "dot_wait": Execution.dot_wait,
    "": Execution.access,
}

# Operation name -> handler(execution, thread, operation).
HANDLERS = {
    **values.SCALAR_HANDLERS,
    "scf.for": Execution.run_for,
    "scf.if": Execution.run_if,
    "scf.while": Execution.run_while,
    "scf.yield": Execution.end_region,
    "scf.condition": Execution.end_region,
    "tt.return": Execution.end_region,
    "ttg.warp_specialize": Execution.run_warp_specialize,
    **dict.fromkeys(VIEW_HANDLERS, Execution.view),
    "ttg.local_alloc": Execution.allocate,
    "ttng.tmem_alloc": Execution.allocate,
    **dict.fromkeys(ops.modelled_operations(), Execution.modelled),
}
