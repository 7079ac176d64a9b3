"""The lifetime check of phases, on the traced IR.

Buffers of different phases of one spec may share bytes (``tlx.reuse_phases``);
only the order of their uses keeps them apart. When a kernel's tracing is done,
this module numbers every use of a buffer in the order of the IR, within each
sequence of control (the kernel, and each ``warp_specialize`` region), and asks the
planner (``planner.check_phase_lifetimes``) whether uses of such buffers
interleave; an error points at the use in between (docs/semantics.md, "Phases").
"""

from __future__ import annotations

import itertools

from .. import planner
from .._errors import compilation_error
from ._state import AllocationState

# Ops that make a memory descriptor of another one: their results are uses of
# the same buffer.
_VIEW_OPS = ("ttg.memdesc_", "ttng.tmem_subslice")


def _uses_in_program_order(module, buffer_uses):
    """{user: [(sequence, position, location)]}: every op of ``module``'s kernel that
    reads a memory descriptor of a user (its view, or one buffer indexing made, or
    one derived from those), numbered in the order of the IR (nested ops in their
    order, a loop's body once; an op with regions is not a use itself: the ops inside
    are). An op that reads buffers of several users (an MMA) is a use of each. A call
    is expanded into the uses of the function it calls (a helper, a
    warp_specialize partition), in their order, at each call. ``sequence`` is the
    sequence of control a use is in: the kernel outside ``ttg.warp_specialize``, its
    default region, or one of its partitions (they run concurrently)."""
    derived = dict(buffer_uses)
    # The walk visits the ops of a block in order, and nested ops before the op
    # that holds them: each region's steps, in order, are ("use", user,
    # location), ("call", callee) and ("nested", op name, region ids).
    steps_of: dict[int, list] = {}
    body_of: dict[str, int] = {}

    def visit(op):
        name = op.get_name()
        block = op.get_block()
        if block is None:
            return
        steps = steps_of.setdefault(block.get_parent().id(), [])
        regions = [op.get_region(i).id() for i in range(op.get_num_regions())]
        if name == "tt.func":
            body_of[op.get_str_attr("sym_name")] = regions[0]
            return
        if regions:
            steps.append(("nested", name, regions))
            return
        found = []
        for i in range(op.get_num_operands()):
            operand = op.get_operand(i)
            entry = derived.get(operand.id())
            # The type guards against the id of a value Triton erased while
            # tracing being reused by another value.
            if entry is not None and entry[2] == str(operand.get_type()):
                found.append(entry)
        if found:
            # Buffer indexing's own op is at the line of its index call.
            results = [op.get_result(i) for i in range(op.get_num_results())]
            made = [derived.get(result.id()) for result in results]
            located = next((entry[1] for entry in made if entry is not None), None)
            for user, location, _ in found:
                steps.append(("use", user, located or location))
            if name.startswith(_VIEW_OPS):
                user, location, _ = found[0]
                for result in results:
                    derived.setdefault(result.id(), (user, location, str(result.get_type())))
        if name == "tt.call":
            # Buffer types mangle their buffer: each buffer gets its own
            # instance of a helper, whose uses are its own.
            steps.append(("call", op.get_flat_symbol_ref_attr("callee")))

    module.walk(visit)

    uses: dict[AllocationState, list] = {}
    position = 0
    sequences = itertools.count()

    def expand(region, sequence, calling):
        nonlocal position
        for step in steps_of.get(region, ()):
            if step[0] == "use":
                position += 1
                uses.setdefault(step[1], []).append((sequence, position, step[2]))
            elif step[0] == "call":
                callee = step[1]
                if callee in body_of and callee not in calling:
                    expand(body_of[callee], sequence, calling | {callee})
            elif step[1].startswith("ttg.warp_specialize"):
                # The default region and each partition run concurrently.
                for nested in step[2]:
                    expand(nested, next(sequences), calling)
            else:
                for nested in step[2]:
                    expand(nested, sequence, calling)

    entry = module.get_entry_func_name()
    if entry in body_of:
        expand(body_of[entry], next(sequences), frozenset({entry}))
    return uses


def check_phase_lifetimes(specs, module, buffer_uses) -> None:
    """The lifetime check of phases (``planner.check_phase_lifetimes``) from the
    traced IR's order within each sequence of control: an error at the use in
    between, naming both buffers and the lines of the three uses."""
    uses = _uses_in_program_order(module, buffer_uses)
    for spec in specs:
        of_user = [uses.get(user, ()) for user in spec.users]
        where = {position: location for found in of_user for _, position, location in found}
        phase_uses = [
            [
                planner.PhaseUse(sequence=sequence, position=position)
                for sequence, position, _ in found
            ]
            for found in of_user
        ]
        problems = planner.check_phase_lifetimes(
            spec.plan, spec.planned_buffers, phase_uses, spec.name
        )
        if not problems:
            continue
        problem = problems[0]
        in_between, before, after = (where[n] for n in problem.numbers[:3])
        later, earlier = (spec.users[b] for b in problem.buffers)
        message = (
            f"{spec.describe()}: {problem.message}. {later.describe()} is used at {in_between}, "
            f"between the uses of {earlier.describe()} at {before} and at {after}"
        )
        raise compilation_error(in_between, message)
