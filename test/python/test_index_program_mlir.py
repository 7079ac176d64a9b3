"""The MLIR door emits the planner's index program, and nothing else.

On random reuse trees (test_planner_properties.scenarios), a module with one
``ttg.memdesc_index`` per user at a runtime index is lowered by
``triton-opt --tlx-storage-alias-lowering`` under each release's rules (views at
byte offsets in both forms); the arith the pass emitted is then evaluated for every
buffer index of every user and must give the planner's slot (``View.slot_of``), which
``View.index_program`` computes too, and the byte where the pass cut the backing for
the view plus that slot must be the buffer's start (``View.start_of``): a view per buffer
group at the row the pass computed (runtime_row) or on the branch of the ``scf.if`` chain
the index takes (selected_rows). The Python door's counterpart is
test_index_program_properties.py.
"""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess

import footprint
import pytest
from _helpers import find_triton_opt
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_planner_properties import Scenario, scenarios, tree_order, unshared_end
from tlx.planner import (
    Buffer,
    Group,
    Layout,
    LayoutKind,
    Spec,
    Storage,
    group_stride_form_of,
    plan,
)

TRITON_OPT = find_triton_opt()
pytestmark = pytest.mark.skipif(TRITON_OPT is None, reason="triton-opt is not built")

_ELEMENT_TYPES = {8: "i8", 16: "f16", 32: "f32"}


def memdesc(buffer: Buffer, shape=None) -> str:
    shape = buffer.shape if shape is None else shape
    element = _ELEMENT_TYPES[buffer.element_bits]
    layout = buffer.layout
    if buffer.storage is Storage.TMEM:
        column_stride = 32 // buffer.element_bits if layout.unpacked else 1
        encoding = (
            f"#ttng.tensor_memory_encoding<blockM = {layout.block_m}, blockN = {shape[-1]}, "
            f"colStride = {column_stride}>"
        )
        space = "#ttng.tensor_memory"
    else:
        if layout.kind is LayoutKind.NVMMA_SHARED:
            encoding = (
                f"#ttg.nvmma_shared<{{swizzlingByteWidth = {layout.swizzle_bytes}, "
                f"transposed = false, elementBitWidth = {buffer.element_bits}}}>"
            )
        else:
            rank = len(buffer.shape) - 1
            order = ", ".join(str(d) for d in reversed(range(rank)))
            encoding = (
                f"#ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [{order}]}}>"
            )
        space = "#ttg.shared_memory"
    dims = "x".join(str(d) for d in shape)
    return f"!ttg.memdesc<{dims}x{element}, {encoding}, {space}, mutable>"


def module_text(scenario) -> str:
    storage = scenario.spec.storage.value
    spec_type = f"!tlx.storage_alias_spec<{storage}>"
    lines = [f"    %s = tlx.storage_alias_spec storage = {storage} : {spec_type}"]
    for index, buffer in enumerate(scenario.buffers):
        lines.append(
            f"    %u{index} = tlx.storage_alias_local_alloc %s : {spec_type} -> {memdesc(buffer)}"
        )
    groups = []

    def group(element: Group) -> tuple[str, str]:
        operands = []
        for child in element.children:
            if isinstance(child, int):
                operands.append((f"%u{child}", memdesc(scenario.buffers[child])))
            else:
                operands.append(group(child))
        name = f"%g{len(groups)}"
        groups.append(name)
        kind = element.kind
        size = "" if element.group_size == 1 else f", group_size = {element.group_size}"
        lines.append(
            f"    {name} = tlx.reuse_group({', '.join(o for o, _ in operands)}) "
            f"group_kind = {kind}{size} : ({', '.join(t for _, t in operands)}) "
            f"-> !tlx.reuse_group<{kind}>"
        )
        return name, f"!tlx.reuse_group<{kind}>"

    root, root_type = group(scenario.tree)
    lines.append(f"    tlx.set_buffer_overlap(%s, {root}) : ({spec_type}, {root_type}) -> ()")
    for index, buffer in enumerate(scenario.buffers):
        lines.append(
            f"    %v{index} = ttg.memdesc_index %u{index}[%i] : {memdesc(buffer)} -> "
            f"{memdesc(buffer, buffer.shape[1:])}"
        )
    body = "\n".join(lines)
    return (
        'module attributes {"ttg.num-warps" = 4 : i32} {\n'
        f"  tt.func @indices(%i: i32) {{\n{body}\n    tt.return\n  }}\n}}\n"
    )


_ARITH = re.compile(r"(%[\w.]+) = arith\.(constant|divui|remui|muli|addi|cmpi eq,) (.*?) : i32")
_INDEX = re.compile(r"ttg\.memdesc_index (%[\w.]+)\[(%[\w.]+)\]")
_BACKING = re.compile(r"(%[\w.]+) = (?:ttg\.local_alloc|ttng\.tmem_alloc) ")
_ALIAS_OF = re.compile(r"(%[\w.]+) = tlx\.local_alias (%[\w.]+) ")
_SUBSLICE = re.compile(r"(%[\w.]+) = ttg\.memdesc_subslice (%[\w.]+)\[(\d+), 0\]")
_ROW = re.compile(r"(%[\w.]+) = ttg\.memdesc_index (%[\w.]+)\[(%[\w.]+)\]")
_OPERATIONS = {
    "divui": lambda a, b: a // b,
    "remui": lambda a, b: a % b,
    "muli": lambda a, b: a * b,
    "addi": lambda a, b: a + b,
    "cmpi eq,": lambda a, b: int(a == b),
}
_IF = re.compile(r"(%[\w.]+) = scf\.if (%[\w.]+) -> ")
_YIELD = re.compile(r"scf\.yield (%[\w.]+)")


def choices(lowered: str) -> dict[str, tuple[str, list]]:
    """Each ``scf.if`` result of ``lowered``: (its condition, [what its then block yields,
    what its else block yields])."""
    found = {}
    regions = []  # per open region: the scf.if it is a branch of, or None
    for line in lowered.splitlines():
        text = line.strip()
        closed = regions.pop() if text.startswith("}") else None
        if (match := _YIELD.match(text)) and regions and regions[-1] is not None:
            found[regions[-1]][1].append(match.group(1))
        if text.endswith("{"):
            if match := _IF.match(text):
                found[match.group(1)] = (match.group(2), [])
                regions.append(match.group(1))
            else:
                regions.append(closed if text.startswith("} else") else None)
    return found


ROW_BYTES = 128


def emitted_views(lowered: str, count: int):
    """For each user's memdesc_index of the lowered function, in order: (a function of the
    buffer index that evaluates the slot arithmetic the pass emitted for it, a function of
    the buffer index that gives the byte of the backing its view starts at, as the pass cut
    it: the backing itself 0; memdesc_subslice from row r or memdesc_index of row r, r a
    constant or computed from the index for a view per buffer group, 128 r, or the view an
    scf.if chain chooses by the index)."""
    argument = re.search(r"tt\.func @indices\((%[\w.]+): i32\)", lowered).group(1)
    definitions = {name: (op, operands) for name, op, operands in _ARITH.findall(lowered)}
    backings = set(_BACKING.findall(lowered))
    subslices = {name: int(row) for name, source, row in _SUBSLICE.findall(lowered)}
    rows = {name: row for name, source, row in _ROW.findall(lowered) if source in backings}
    aliases = dict(_ALIAS_OF.findall(lowered))
    chosen = choices(lowered)

    def evaluate(value: str, index: int) -> int:
        if value == argument:
            return index
        op, operands = definitions[value]
        if op == "constant":
            return int(operands)
        lhs, rhs = (operand.strip() for operand in operands.split(","))
        return _OPERATIONS[op](evaluate(lhs, index), evaluate(rhs, index))

    def view_start(view: str, index: int) -> int:
        if view in chosen:
            condition, (then_view, else_view) = chosen[view]
            return view_start(then_view if evaluate(condition, index) else else_view, index)
        source = aliases[view]
        if source in backings:
            return 0
        if source in subslices:
            return ROW_BYTES * subslices[source]
        return ROW_BYTES * evaluate(rows[source], index)

    # A row of a backing (a view at a byte offset) is no user's index.
    uses = [(view, value) for view, value in _INDEX.findall(lowered) if view not in backings]
    assert len(uses) == count
    return [
        (
            lambda i, value=value: evaluate(value, i),
            lambda i, view=view: view_start(view, i),
        )
        for view, value in uses
    ]


def lowering_spec(scenario, whole_views: bool, offset_form: str):
    """The spec triton-opt plans ``scenario`` with under ``whole_views`` and ``offset_form``
    (a view per buffer group with indexed_row: Triton 3.6, 3.7)."""
    return dataclasses.replace(
        scenario.spec,
        whole_views=whole_views,
        offset_form=offset_form,
        group_stride_form=group_stride_form_of("slots" if whole_views else offset_form),
    )


def assert_lowered_as_planned(scenario, whole_views: bool, offset_form: str) -> None:
    """Lowers ``scenario`` with triton-opt under ``whole_views`` and ``offset_form`` and
    checks every buffer index of every user against the planner's plan of the same rules."""
    spec = lowering_spec(scenario, whole_views, offset_form)
    result = plan(spec, scenario.buffers, scenario.tree)
    assert result.ok, result.errors
    lowered = subprocess.run(
        [
            str(TRITON_OPT),
            f"--tlx-storage-alias-lowering=whole-views={str(whole_views).lower()} "
            f"offset-form={offset_form}",
            "--mlir-print-unique-ssa-ids",
            "-",
        ],
        input=module_text(scenario),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    emitted_uses = emitted_views(lowered, len(scenario.buffers))
    if scenario.spec.storage is Storage.SMEM and offset_form != "slots":
        # Sharing never costs bytes: the backing the pass allocated, against the
        # same buffers unshared.
        rows = int(re.search(r"ttg\.local_alloc .*memdesc<(\d+)x128xi8", lowered).group(1))
        order = tree_order(scenario.tree)
        order += [index for index in range(len(scenario.buffers)) if index not in order]
        assert rows * ROW_BYTES <= unshared_end(scenario.buffers, order)
    views = zip(scenario.buffers, result.views, emitted_uses, strict=True)
    for buffer, view, (emitted, view_start) in views:
        program = view.index_program
        # Groups at starts of their own (View.group_starts) are selected_rows whatever the
        # offset form: each group's view is written in it (group_form).
        if view.group_starts:
            assert (view.form, view.group_form) == ("selected_rows", offset_form)
        else:
            assert view.form in ("slots", offset_form, spec.group_stride_form)
        for index in range(buffer.shape[0]):
            assert emitted(index) == view.slot_of(index) == program.evaluate(index)
            assert view_start(index) == view.view_start_of(index)
            if buffer.storage is Storage.SMEM:
                start = view_start(index) + emitted(index) * view.buffer_size
                assert start == view.start_of(index)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(("sliced_rows", "indexed_row")))
def test_the_mlir_door_emits_the_planners_slot_for_every_buffer_index(scenario, form):
    """Each buffer starts where the planner says, views at byte offsets included: the
    view's start as the pass cut the backing plus the slot its arithmetic computes."""
    assume(all(len(buffer.shape) > 1 for buffer in scenario.buffers))
    offset_form = "slots" if scenario.spec.offset_form == "slots" else form
    spec = lowering_spec(scenario, scenario.spec.whole_views, offset_form)
    assume(plan(spec, scenario.buffers, scenario.tree).ok)
    assert_lowered_as_planned(scenario, scenario.spec.whole_views, offset_form)


@pytest.mark.parametrize("offset_form", ["indexed_row", "sliced_rows"])
def test_the_mlir_door_emits_groups_at_starts_of_their_own_as_planned(offset_form):
    """What hypothesis found: b0's 18 buffers in groups of 6 with b1 and b2 beside each
    group; the groups start at rows 0, 12 and 18 (View.group_starts), which no one stride
    gives, so b0's view is selected_rows, each group's view written in the offset form."""
    buffers = tuple(
        Buffer(name, (count, 1), 8, Storage.SMEM, Layout())
        for name, count in (("b0", 18), ("b1", 6), ("b2", 6), ("outside", 1))
    )
    shared_pair = Group("shared", (Group("shared", (0,)), Group("distinct", (1, 2))), 2)
    scenario = Scenario(
        Spec("spec", whole_views=False, offset_form="sliced_rows"),
        buffers,
        Group("shared", (shared_pair,), 3),
    )
    result = plan(lowering_spec(scenario, False, offset_form), buffers, scenario.tree)
    assert result.ok, result.errors
    assert (result.views[0].form, result.views[0].group_form) == ("selected_rows", offset_form)
    assert result.views[0].group_starts == (0, 1536, 2304)
    assert_lowered_as_planned(scenario, whole_views=False, offset_form=offset_form)


def free_stride_trees(count: int) -> list:
    """The first ``count`` bench trees (bench/footprint.py, equal and index-aligned
    counts) whose plan under Triton 3.6's rules has a view per buffer group."""
    rng = random.Random(46)
    found = []
    while len(found) < count:
        case = footprint.random_tree(rng, len(found) % 2 == 1, footprint.GROUP_STRIDE_RULES)
        result = plan(case.spec, case.buffers, case.tree)
        if result.ok and "runtime_row" in {view.form for view in result.views}:
            found.append(case)
    return found


@pytest.mark.parametrize("offset_form", ["indexed_row", "sliced_rows"])
@pytest.mark.parametrize("case", free_stride_trees(24), ids=lambda case: case.name)
def test_the_mlir_door_emits_a_view_per_buffer_group_as_planned(case, offset_form):
    """Trees whose groups end at no multiple of a user's size: with indexed_row the pass
    takes each buffer at its group's row, computed from the index as the planner's
    program says (``IndexProgram.row``), with sliced_rows at the view of its group that
    an scf.if chain on the group (``IndexProgram.group``) chooses; then at its slot."""
    assert_lowered_as_planned(case, whole_views=False, offset_form=offset_form)
