"""The MLIR door emits the planner's index program, and nothing else.

On random reuse trees (test_planner_properties.scenarios), a module with one
``ttg.memdesc_index`` per user at a runtime index is lowered by
``triton-opt --tlx-storage-alias-lowering`` under each release's rules (views at
byte offsets in both forms); the arith the pass emitted is then evaluated for every
buffer index of every user and must give the planner's slot (``View.slot_of``), which
``View.index_program`` computes too, and the byte where the pass cut the backing for
the view plus that slot must be the buffer's start (``View.start_of``). The Python door's
counterpart is test_index_program_properties.py.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess

import pytest
from _helpers import find_triton_opt
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_planner_properties import scenarios, tree_order, unshared_end
from tlx.planner import Buffer, Group, LayoutKind, Storage, plan

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


_ARITH = re.compile(r"(%[\w.]+) = arith\.(constant|divui|remui|muli|addi) (.*?) : i32")
_INDEX = re.compile(r"ttg\.memdesc_index (%[\w.]+)\[(%[\w.]+)\]")
_BACKING = re.compile(r"(%[\w.]+) = (?:ttg\.local_alloc|ttng\.tmem_alloc) ")
_ALIAS = re.compile(r"tlx\.local_alias (%[\w.]+) ")
_SUBSLICE = re.compile(r"(%[\w.]+) = ttg\.memdesc_subslice (%[\w.]+)\[(\d+), 0\]")
_ROW = re.compile(r"(%[\w.]+) = ttg\.memdesc_index (%[\w.]+)\[(%[\w.]+)\]")
_OPERATIONS = {
    "divui": lambda a, b: a // b,
    "remui": lambda a, b: a % b,
    "muli": lambda a, b: a * b,
    "addi": lambda a, b: a + b,
}
ROW_BYTES = 128


def emitted_slots(lowered: str, count: int):
    """For each user's memdesc_index of the lowered function, in order: a function of
    the buffer index that evaluates the arith the pass emitted for it."""
    argument = re.search(r"tt\.func @indices\((%[\w.]+): i32\)", lowered).group(1)
    definitions = {name: (op, operands) for name, op, operands in _ARITH.findall(lowered)}
    backings = set(_BACKING.findall(lowered))

    def evaluate(value: str, index: int) -> int:
        if value == argument:
            return index
        op, operands = definitions[value]
        if op == "constant":
            return int(operands)
        lhs, rhs = (operand.strip() for operand in operands.split(","))
        return _OPERATIONS[op](evaluate(lhs, index), evaluate(rhs, index))

    # A row of a backing (a view at a byte offset, indexed_row) is no user's index.
    indices = [value for source, value in _INDEX.findall(lowered) if source not in backings]
    assert len(indices) == count
    return [lambda i, value=value: evaluate(value, i) for value in indices]


def emitted_bases(lowered: str) -> list[int]:
    """For each user's view, in order: the byte of the backing it starts at, as the
    pass cut it (the backing itself: 0; memdesc_subslice from row r or memdesc_index
    of row r: 128 r)."""
    definitions = {name: operands for name, _, operands in _ARITH.findall(lowered)}
    backings = set(_BACKING.findall(lowered))
    rows = {name: int(row) for name, source, row in _SUBSLICE.findall(lowered)}
    rows.update(
        (name, int(definitions[row]))
        for name, source, row in _ROW.findall(lowered)
        if source in backings
    )
    return [
        0 if source in backings else ROW_BYTES * rows[source] for source in _ALIAS.findall(lowered)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(("sliced_rows", "indexed_row")))
def test_the_mlir_door_emits_the_planners_slot_for_every_buffer_index(scenario, form):
    """Each buffer starts where the planner says, views at byte offsets included: the
    view's start as the pass cut the backing plus the slot its arithmetic computes."""
    assume(all(len(buffer.shape) > 1 for buffer in scenario.buffers))
    offset_form = "slots" if scenario.spec.offset_form == "slots" else form
    spec = dataclasses.replace(scenario.spec, offset_form=offset_form)
    result = plan(spec, scenario.buffers, scenario.tree)
    assume(result.ok)
    whole_views = "true" if scenario.spec.whole_views else "false"
    lowered = subprocess.run(
        [
            str(TRITON_OPT),
            f"--tlx-storage-alias-lowering=whole-views={whole_views} offset-form={offset_form}",
            "-",
        ],
        input=module_text(scenario),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    slots = emitted_slots(lowered, len(scenario.buffers))
    bases = emitted_bases(lowered)
    if scenario.spec.storage is Storage.SMEM and offset_form != "slots":
        # Sharing never costs bytes: the backing the pass allocated, against the
        # same buffers unshared.
        rows = int(re.search(r"ttg\.local_alloc .*memdesc<(\d+)x128xi8", lowered).group(1))
        order = tree_order(scenario.tree)
        order += [index for index in range(len(scenario.buffers)) if index not in order]
        assert rows * ROW_BYTES <= unshared_end(scenario.buffers, order)
    views = zip(scenario.buffers, result.views, slots, bases, strict=True)
    for buffer, view, emitted, base in views:
        program = view.index_program
        assert base == view.base
        assert view.form == "slots" or view.form == offset_form
        for index in range(buffer.shape[0]):
            assert emitted(index) == view.slot_of(index) == program.evaluate(index)
            if buffer.storage is Storage.SMEM:
                assert base + emitted(index) * view.buffer_size == view.start_of(index)
