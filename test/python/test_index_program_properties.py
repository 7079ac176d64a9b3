"""The Python door emits the planner's index program, and nothing else.

On random reuse trees (the strategies of ``test_planner_properties``), for every
buffer of every view, the slot that ``_semantic._slot_arithmetic`` (the emitter
the lowering uses for a runtime buffer index) computes, run on a builder that
evaluates integers instead of building IR, is the planner's ``View.slot_of``; so
is ``IndexProgram.evaluate``; for a view per buffer group the row it computes is where the
buffer's group starts (``runtime_row``), or the group it computes chooses the view that
starts there (``selected_rows``: ``View.group_view_starts``). An identity view emits no
operation at all.
"""

from dataclasses import replace

import pytest
from hypothesis import event, given, settings
from test_planner_properties import SMEM_ROW_BYTES, Scenario, scenarios
from tlx.api import _semantic
from tlx.planner import Buffer, Group, Spec, Storage, plan


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


def assert_emits_the_planners_program(result, scenario) -> None:
    for buffer, view in zip(scenario.buffers, result.views, strict=True):
        program = view.index_program
        for index in buffer_indices(buffer, view):
            builder = EvaluatingBuilder()
            slot = view.slot_of(index)
            emitted_slot, emitted_row, emitted_group = _semantic._slot_arithmetic(
                builder, index, view
            )
            assert emitted_slot == slot
            assert program.evaluate(index) == slot
            # A view per buffer group: the backing row where the buffer's group starts.
            if view.form == "runtime_row":
                assert emitted_row * SMEM_ROW_BYTES == view.view_start_of(index)
                assert emitted_row == program.evaluate_row(index)
            else:
                assert emitted_row is None and program.row is None
            # Or the group whose view starts there, among the views of every group.
            if view.form == "selected_rows":
                starts = view.group_view_starts(buffer.shape[0])
                assert emitted_group == index // view.period
                assert starts[emitted_group] == view.view_start_of(index)
                assert starts[emitted_group] % SMEM_ROW_BYTES == 0
            else:
                assert emitted_group is None and program.group is None
            # One operation per step of the program; each constant once.
            assert builder.operations == len(program.operations)
            results = [program.result] + [
                operand for operand in (program.row, program.group) if operand is not None
            ]
            constants = {
                operand.value
                for operation in program.operations
                for operand in (operation.lhs, operation.rhs)
                if operand.kind == "constant"
            } | {operand.value for operand in results if operand.kind == "constant"}
            assert builder.constants == len(constants)
        if view.identity_index:
            assert program.operations == () and program.result.kind == "buffer_index"


@settings(max_examples=1000, deadline=None)
@given(scenarios())
def test_the_emitted_index_is_the_planners_slot(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    assert_emits_the_planners_program(result, scenario)


@pytest.mark.parametrize(
    ("offset_form", "group_stride_form"),
    [("indexed_row", "runtime_row"), ("sliced_rows", "selected_rows")],
)
@settings(max_examples=500, deadline=None)
@given(scenarios(Storage.SMEM))
def test_the_emitted_row_or_group_of_a_view_per_group_is_the_planners(
    offset_form, group_stride_form, scenario
):
    """Under Triton 3.6's and 3.9's rules (views at byte offsets, a view per buffer group
    where that is smaller): the row the emitter computes is where the buffer's group starts,
    or the group it computes chooses the view that starts there."""
    spec = replace(
        scenario.spec,
        whole_views=False,
        offset_form=offset_form,
        group_stride_form=group_stride_form,
    )
    result = plan(spec, scenario.buffers, scenario.tree)
    event("a view per group" if group_stride_form in {v.form for v in result.views} else "none")
    event("groups at starts of their own" if any(v.group_starts for v in result.views) else "-")
    assert_emits_the_planners_program(result, scenario)


def test_the_emitted_group_of_a_view_per_buffer_chooses_its_own_start():
    """shared(u2: 256 B, u0: 8 KiB, u1: 4 x 2 KiB) under 3.9's rules: u1's buffers at
    starts no one view writes, each a view of its own (docs/planner.md, "What stays above
    the ideal"); the group emitted for each index chooses the view at its start."""
    buffers = (
        Buffer("u0", (1, 64, 128), 8),
        Buffer("u1", (4, 16, 128), 8),
        Buffer("u2", (1, 2, 128), 8),
    )
    tree = Group("shared", (2, 0, 1))
    spec = Spec(
        "spec", whole_views=False, offset_form="sliced_rows", group_stride_form="selected_rows"
    )
    result = plan(spec, buffers, tree)
    assert result.views[1].group_starts == (0, 8192, 10240, 12288)
    assert_emits_the_planners_program(result, Scenario(spec, buffers, tree))
