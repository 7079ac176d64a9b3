"""``tlx.check_hazards``: the races on a kernel's specs, found before running.

Two buffers of one spec may share bytes; the planner guarantees the layout, the
kernel's barriers must guarantee that one is dead before its alias is written.
The check joins two sources and re-derives neither:

* which units (SMEM bytes, TMEM columns) each buffer index occupies: the plan's
  extents (``planner.buffer_extents``), as ``tlx.kernel_plans`` returns them
  (``memory``);
* who reads and writes them and in what order: the kernel's TTGIR as stock
  Triton produced it for the target (the Gluon pipeline, run on the CPU), executed
  abstractly for one CTA (``ttgir`` reads it, ``ops`` says what each operation does,
  ``execution`` runs it): integer scalars that decide loop trips, buffer indices and
  mbarrier phases are computed with small concrete values (``values``), every
  partition of a ``ttg.warp_specialize`` is a thread, and happens-before is tracked
  with vector clocks, as dynamic race detectors do (``scheduling``). An asynchronous
  operation (TMA copy, ``warpgroup_mma``, ``tcgen05``) is its own clock component,
  joined where it completes (an mbarrier phase, a wait, a commit).

Every pair of accesses to overlapping units of one spec (of two buffers that share
them, two buffer indices, or one buffer index), at least one a write, that
happens-before does not order is a ``Hazard`` (``accesses``). A wait on an mbarrier
phase by its parity that happens-before does not tell from the phase two before or
after it is an ``AmbiguousWait``. docs/hazards.md says what is and is not modelled.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

from .. import planner
from .execution import Execution
from .report import CLEAN, DEADLOCK, HAZARDS, INCOMPLETE, HazardReport, Incomplete
from .ttgir import parse_module
from .values import INTEGER_SIGNATURES


def kernel_ttgir(src, target, options=None):
    """(TTGIR text, spec plans) of a ``tlx.ASTSource`` for ``target``: Triton's front
    end, then its Gluon TTGIR pipeline for the target, on the CPU. Each spec's
    backing allocation and views carry the spec's and buffer's names
    (``tlx.spec``, ``tlx.buffer`` attributes)."""
    from ..api._jit import front_end

    module, trace, backend, options = front_end(
        src, target, options, "tlx.check_hazards", name_views=True
    )
    backend.gluon_to_ttgir(module, {}, options, backend._parse_arch(options.arch))
    return module.str(), trace.spec_plans


# The most executions one order of the partitions runs: one per choice of a timing (which
# of several blocked waits passes early; whether a wait passes on the phase before), and
# the most orders of the partitions a kernel whose timings differ is executed in
# (docs/hazards.md, "Which timings are executed").
TIMINGS = 16
ORDERS = 24
EXECUTIONS = 64  # in all orders together


def _unique(found) -> tuple:
    """``found`` without repeats across executions: one of each, whatever the order of
    the executions (the least by its text, with the fewest occurrences an execution met)."""
    seen: dict = {}
    for item in found:
        key = dataclasses.replace(item, occurrences=1)
        if key in seen:
            seen[key] = min(seen[key], item.occurrences)
        else:
            seen[key] = item.occurrences
    return tuple(
        dataclasses.replace(key, occurrences=count)
        for key, count in sorted(seen.items(), key=lambda found: found[0].describe())
    )


def _rank(found) -> tuple:
    """Which of a pair's hazards to keep, ``found`` (the choices of its execution's timing,
    hazard): one that names the missing ordering over one that says only that neither access
    is ordered, then one of a timing of the fewest choices (waits passed early, completions
    landed late: the plainest account), then the least by its text. Every order of the
    partitions makes the same executions, so the one kept does not depend on the order
    given."""
    choices, hazard = found
    return (hazard.missing.startswith("neither is ordered"), choices, hazard.describe())


def _unique_hazards(found) -> tuple:
    """Hazards without repeats: one per pair of accesses, met in either order (another
    order of the partitions meets the later one first), the first by ``_rank``; ``found``
    yields (the choices of its execution's timing, hazard)."""
    pairs: dict = {}
    for execution, hazard in found:
        key = frozenset((hazard.first, hazard.second))
        kept = pairs.get(key)
        if kept is None or _rank((execution, hazard)) < _rank(kept):
            count = min(hazard.occurrences, kept[1].occurrences if kept else hazard.occurrences)
            pairs[key] = (execution, dataclasses.replace(hazard, occurrences=count))
        else:
            count = min(hazard.occurrences, kept[1].occurrences)
            pairs[key] = (kept[0], dataclasses.replace(kept[1], occurrences=count))
    return tuple(
        sorted(
            (hazard for _, hazard in pairs.values()),
            key=lambda h: (h.first.line, h.second.line, h.first.buffer, h.second.buffer, h.missing),
        )
    )


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
    partition_order=(),
    timings: int = TIMINGS,
    access_log=None,
) -> HazardReport:
    """The hazard check of a TTGIR module's text whose specs ``spec_plans`` planned;
    ``integer_arguments`` names the kernel's integer parameters (for messages);
    ``partition_order`` permutes the turns of the partitions (the kernel's thread first,
    then those ``warp_specialize`` lists): ``(2, 0, 1)`` gives the default partition the
    third turn. The verdict does not depend on it. Each choice of a timing is executed
    (which of several blocked waits passes early; whether a wait whose phase before is
    not ordered before it passes on the phase before that; whether an asynchronous
    completion lands after a later arrival on its barrier), up to ``timings`` executions;
    past that a kernel with nothing found is not proved (``incomplete``). ``access_log``
    (default ``AccessLog``) is the class each execution records its accesses with:
    tlx.suggest's records every pair of buffers as if they shared units
    (language/tlx/suggest/pairs.py)."""
    started = time.perf_counter()
    values = dict(values or {})
    module = parse_module(text)
    # The kernel is the public function (functions Triton did not inline are private).
    functions = sorted(module.functions.values(), key=lambda f: "tt.func public" not in f.text)
    function = functions[0] if functions else None

    def execute(order, choices, deferred):
        execution = Execution(
            module,
            spec_plans,
            values,
            tuple(program_id),
            tuple(num_programs),
            budget,
            integer_arguments,
            order,
            choices,
            deferred,
        )
        if access_log is not None:
            execution.log = access_log(execution.lines, execution.barriers.barriers)
        blocked: list[str] = []
        if function is None:
            execution.unmodelled["no function"] = "the module has no function"
        else:
            try:
                blocked = execution.run(function)
            except Incomplete as why:
                execution.unmodelled["incomplete"] = str(why)
        return execution, blocked

    def explore(order) -> bool:
        """Executes every timing of ``order`` (depth first over the choices each
        execution made, and over the asynchronous completions it found may land late),
        up to ``timings``; True when timings remain."""
        pending: list[tuple[frozenset, tuple[int, ...]]] = [(frozenset(), ())]
        landed_late = {frozenset()}
        runs = 0
        while pending and runs < timings and len(executions) < EXECUTIONS:
            deferred, choices = pending.pop()
            execution, blocked = execute(order, choices, deferred)
            executions.append((execution, blocked))
            runs += 1
            made = execution.scheduler.made
            for point in range(len(choices), len(made)):
                prefix = tuple(pick for pick, _ in made[:point])
                pending.extend((deferred, (*prefix, other)) for other in range(1, made[point][1]))
            for key in execution.barriers.suspect_keys():
                late = deferred | {key}
                if late not in landed_late:
                    landed_late.add(late)
                    pending.append((late, ()))
        return bool(pending)

    executions: list = []
    unexplored = explore(tuple(partition_order))
    first = executions[0][0]
    if any(execution.timing_dependent() for execution, _ in executions):
        # The timings differ (a wait may pass early): which phase a wait takes, and which
        # arrivals make a phase, depend on the order the partitions run in as well. Every
        # order is executed, so that what is reported does not depend on the one given.
        threads = len(first.scheduler.threads)
        given = tuple(partition_order)[:threads]
        for order in itertools.islice(itertools.permutations(range(threads)), ORDERS):
            if order != given and (given or order != tuple(range(threads))):
                unexplored = explore(order) or unexplored
    unmodelled = {}
    for execution, _ in executions:
        unmodelled.update(execution.unmodelled)
    hazards = _unique_hazards(
        (execution.choices_made(), hazard)
        for execution, _ in executions
        for hazard in execution.log.report_hazards()
    )
    ambiguous_waits = _unique(w for e, _ in executions for w in e.barriers.report_ambiguous_waits())
    barrier_races = _unique(r for e, _ in executions for r in e.barriers.report_barrier_races())
    if unexplored and not (hazards or ambiguous_waits or barrier_races):
        # A race found is a race; without one, the timings not executed leave it unproved.
        unmodelled["timings"] = (
            f"not proved: the waits that may pass early, the completions that may land late "
            f"and the branches on data make more than {timings} executions, "
            "and the check executed that many"
        )
    blocked = tuple(dict.fromkeys(line for _, lines in executions for line in lines))
    result = CLEAN
    if blocked:
        result = DEADLOCK
    if hazards or ambiguous_waits or barrier_races:
        result = HAZARDS
    if unmodelled:
        # What an unmodelled operation orders is unknown: the hazards listed may be its.
        result = INCOMPLETE
    return HazardReport(
        kernel or (function.text.split("@")[1].split("(")[0] if function else "?"),
        target,
        result,
        hazards,
        tuple(unmodelled.values()),
        blocked,
        sum(execution.operations for execution, _ in executions),
        first.log.count,
        time.perf_counter() - started,
        values,
        ambiguous_waits=ambiguous_waits,
        barrier_races=barrier_races,
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
    partition_order=(),
) -> HazardReport:
    """The races on the SMEM and TMEM of a ``@tlx.jit`` kernel's specs: between buffers
    that share bytes, and within one buffer index.

    Takes what ``tlx.kernel_plans`` takes (``src`` a ``tlx.ASTSource``, ``target`` a
    ``GPUTarget`` for sm_90a or sm_100a, ``options`` the compile options) and
    ``values``: the kernel's integer arguments by name (``{"K": 256}``; what loop
    trips, buffer indices and phases depend on; small values keep the check fast).
    ``program_id``/``num_programs`` place the one CTA executed in the grid. Runs on
    the CPU; returns a ``HazardReport`` (``describe()`` prints it). ``partition_order``:
    as ``check_ttgir``'s."""
    cta = {"values": values, "program_id": program_id, "num_programs": num_programs}
    (report,) = check_hazards_at(
        src, target, options, ctas=[cta], budget=budget, partition_order=partition_order
    )
    return report


CTA_FIELDS = ("values", "program_id", "num_programs")


def check_hazards_at(
    src, target, options=None, *, ctas, budget: int = 2_000_000, partition_order=()
) -> tuple[HazardReport, ...]:
    """``check_hazards`` at each CTA of ``ctas``, a dict a CTA of ``check_hazards``'s
    ``values``, ``program_id`` and ``num_programs`` (each optional): one report a CTA, in
    order. The kernel's TTGIR, which no CTA changes, is made once, which is most of a
    small check's time (``HazardReport.ttgir_seconds``)."""
    ctas = list(ctas)
    if not ctas:
        raise ValueError("check_hazards_at: ctas is empty; give at least one CTA to check")
    for number, cta in enumerate(ctas):
        unknown = sorted(set(cta) - set(CTA_FIELDS))
        if unknown:
            raise ValueError(
                f"check_hazards_at: CTA {number} has {', '.join(map(repr, unknown))}; a CTA "
                f"takes {', '.join(CTA_FIELDS)}"
            )
    started = time.perf_counter()
    text, spec_plans = kernel_ttgir(src, target, options)
    ttgir_seconds = time.perf_counter() - started
    integer_arguments = tuple(
        param.name for param in src.fn.params if src.signature.get(param.name) in INTEGER_SIGNATURES
    )
    return tuple(
        dataclasses.replace(
            check_ttgir(
                text,
                spec_plans,
                kernel=src.fn.__name__,
                target=planner.target_name(target.arch),
                budget=budget,
                partition_order=partition_order,
                integer_arguments=integer_arguments,
                **cta,
            ),
            ttgir_seconds=ttgir_seconds,
        )
        for cta in ctas
    )
