"""The Python door emits the planner's index program, and nothing else.

On random reuse trees (the strategies of ``test_planner_properties``), for every
buffer of every view, the slot that ``_semantic._slot_arithmetic`` (the emitter
the lowering uses for a runtime buffer index) computes, run on a builder that
evaluates integers instead of building IR, is the planner's ``View.slot_of``; so
is ``IndexProgram.evaluate``. An identity view emits no operation at all.
"""

from hypothesis import given, settings
from test_planner_properties import scenarios
from tlx.api import _semantic
from tlx.planner import plan


class EvaluatingBuilder:
    """The builder calls ``_slot_arithmetic`` makes, on Python ints; counts what it
    would emit."""

    def __init__(self):
        self.operations = 0
        self.constants = 0

    def get_int32(self, value):
        assert 0 <= value < 2**31
        self.constants += 1
        return value

    def _emit(self, value):
        self.operations += 1
        return value

    def create_udiv(self, lhs, rhs):
        return self._emit(lhs // rhs)

    def create_urem(self, lhs, rhs):
        return self._emit(lhs % rhs)

    def create_mul(self, lhs, rhs):
        return self._emit(lhs * rhs)

    def create_add(self, lhs, rhs):
        return self._emit(lhs + rhs)


def buffer_indices(buffer, view):
    return range(buffer.shape[0]) if view.indexed else range(1)


@settings(max_examples=1000, deadline=None)
@given(scenarios())
def test_the_emitted_index_is_the_planners_slot(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    for buffer, view in zip(scenario.buffers, result.views, strict=True):
        program = view.index_program
        for index in buffer_indices(buffer, view):
            builder = EvaluatingBuilder()
            slot = view.slot_of(index)
            assert _semantic._slot_arithmetic(builder, index, view) == slot
            assert program.evaluate(index) == slot
            # One operation per step of the program; each constant once.
            assert builder.operations == len(program.operations)
            constants = {
                operand.value
                for operation in program.operations
                for operand in (operation.lhs, operation.rhs)
                if operand.kind == "constant"
            }
            if program.result.kind == "constant":
                constants.add(program.result.value)
            assert builder.constants == len(constants)
        if view.identity_index:
            assert program.operations == () and program.result.kind == "buffer_index"
