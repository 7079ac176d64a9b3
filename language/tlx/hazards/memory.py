"""Which units (SMEM bytes, TMEM columns) each ``!ttg.memdesc`` value of the kernel occupies.

An allocation is a ``Region``: a spec's backing allocation carries its plan's extents, the
units of each buffer index as ``planner.buffer_extents`` gives them (the numbers of the plan
report). A ``Memory`` is a value of ``!ttg.memdesc`` type: units of a region, and, once a
spec's buffer is indexed, which buffer index it is. ``Memories`` makes them: allocations, and
views (``memdesc_index``, sub-slices, transposes, reshapes, reinterprets), one handler per view
operation in ``VIEW_HANDLERS``. Where a layout makes a sub-tile's bytes hard to follow, a view
counts more units, never fewer (docs/hazards.md, "What the check proves").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import planner
from .report import Incomplete, SourceLines
from .ttgir import MemDescType


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
    type: MemDescType
    origin: int  # where its alloc tile starts
    intervals: tuple[tuple[int, int], ...]
    buffer: str | None = None
    index: int | None = None
    view: object = None  # (user position, planner.View) of a spec's buffer
    derived: bool = False  # transposed, reshaped or reinterpreted: sub-slices are whole


def tmem_columns(memory_type: MemDescType, elements: int) -> int:
    """The 32-bit TMEM columns ``elements`` of a row of ``memory_type`` take (an offset of
    0 elements is column 0)."""
    stride = memory_type.encoding_int("colStride", 1)
    if "unpacked = true" in memory_type.encoding:
        stride = 32 // memory_type.element_bits
    return math.ceil(elements * memory_type.element_bits * stride / 32)


def units(region: Region, memory_type: MemDescType, shape) -> int:
    """The units a tile of ``shape`` occupies: bytes of SMEM, columns of TMEM."""
    if region.storage == "tmem":
        columns = shape[-1] if shape else 1
        return max(1, tmem_columns(memory_type, columns)) * max(
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


def overlap(first, second) -> tuple[int, int] | None:
    """The first range of units two interval lists share, or None."""
    best = None
    for a_start, a_end in first:
        for b_start, b_end in second:
            start, end = max(a_start, b_start), min(a_end, b_end)
            if start < end and (best is None or start < best[0]):
                best = (start, end)
    return best


def _index_of_slot(view, slot: int, view_start: int, count: int) -> int | None:
    """The buffer index at ``slot`` of the view that starts at ``view_start`` (a view per
    buffer group, ``runtime_row`` or ``selected_rows``, repeats its slots in every group)."""
    per_group = view.per_group
    for index in range(count if per_group else view.slots):
        if view.slot_of(index) != slot:
            continue
        if not per_group or view.view_start_of(index) == view_start:
            return index
    return None


def _subslice_offsets(text: str) -> tuple[int, ...]:
    start = text.find("[")
    end = text.find("]", start)
    return tuple(int(part) for part in text[start + 1 : end].split(",") if part.strip())


class Memories:
    """Makes the ``Memory`` of each allocation and view. ``scalar(thread, name, operation,
    what)`` reads an integer operand (a buffer index); ``unmodelled(operation, why)`` notes a
    view the check does not follow."""

    def __init__(self, lines: SourceLines, spec_plans, scalar, unmodelled):
        self.module = lines.module
        self.describe_operation = lines.describe_operation
        self.specs = {spec_plan.name: spec_plan for spec_plan in spec_plans}
        self.scalar = scalar
        self.unmodelled = unmodelled
        # (view, slot, where the view starts) -> buffer index
        self.slot_indices: dict[tuple, int | None] = {}

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
        size = units(region, memory_type, memory_type.shape)
        return Memory(region, memory_type, 0, ((0, size),))

    def view(self, operation, source: Memory, thread) -> Memory | None:
        """The memory of a view operation's result, ``source`` its operand's."""
        result_type = self.module.memdesc(operation.text)
        if result_type is None or source is None:
            return None
        return VIEW_HANDLERS[operation.name](self, operation, source, result_type, thread)

    def index(self, operation, source: Memory, result_type, thread) -> Memory:
        """``memdesc_index``: slot ``s`` of a spec's buffer is its buffer index ``i`` with
        ``slot_of(i) == s``, at the plan's extent; of any other memory, the s-th tile."""
        region = source.region
        slot = self.scalar(thread, operation.operands[1], operation, "buffer index")
        if source.view is not None:
            user, view = source.view
            spec_plan = region.spec_plan
            key = (id(view), slot, source.origin)
            index = self.slot_indices.get(key)
            if index is None:
                count = spec_plan.buffers[user].shape[0]
                index = self.slot_indices[key] = _index_of_slot(view, slot, source.origin, count)
            start, end = region.extents.get((user, index), (None, None))
            if start is None:
                raise Incomplete(
                    f"{self.describe_operation(operation)}: slot {slot} of "
                    f'"{spec_plan.buffers[user].name}" is no buffer of its plan'
                )
            return Memory(
                region, result_type, start, ((start, end),), spec_plan.buffers[user].name, index
            )
        stride = units(region, source.type, source.type.alloc_shape[1:])
        start = source.origin + slot * stride
        return Memory(
            region,
            result_type,
            start,
            ((start, start + units(region, result_type, result_type.shape)),),
            source.buffer,
            source.index,
        )

    def reinterpret(self, operation, source: Memory, result_type, thread) -> Memory | None:
        """``memdesc_reinterpret``: a spec's backing allocation seen as one of its buffers
        (named by the ``tlx.buffer`` attribute), or a reinterpreted tile of the same units."""
        region = source.region
        buffer_name = operation.string_attribute("tlx.buffer")
        spec_plan = region.spec_plan
        if buffer_name is not None and spec_plan is not None:
            user = next((i for i, b in enumerate(spec_plan.buffers) if b.name == buffer_name), None)
            if user is None:
                self.unmodelled(
                    operation,
                    f' (the view of "{buffer_name}", a reuse=buffered_tensor user that '
                    "joined its spec after sealing, is not checked)",
                )
            else:
                view = spec_plan.plan.views[user]
                if not view.indexed:
                    start, end = region.extents[(user, 0)]
                    return Memory(region, result_type, start, ((start, end),), buffer_name, 0)
                # A view per buffer group starts where its source does: the group's
                # row (runtime_row) or its rows (selected_rows).
                origin = source.intervals[0][0] if view.per_group else 0
                return Memory(region, result_type, origin, source.intervals, view=(user, view))
        size = units(region, result_type, result_type.shape)
        return Memory(
            region,
            result_type,
            source.origin,
            ((source.origin, source.origin + size),) if source.buffer is None else source.intervals,
            source.buffer,
            source.index,
            derived=True,
        )

    def subslice(self, operation, source: Memory, result_type, thread) -> Memory:
        region = source.region
        offsets = _subslice_offsets(operation.text)
        if region.storage == "tmem":
            column = offsets[-1] if offsets else 0
            start = source.origin + tmem_columns(source.type, column)
            size = units(region, result_type, result_type.shape)
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

    def tmem_subslice(self, operation, source: Memory, result_type, thread) -> Memory:
        """``ttng.tmem_subslice``: Triton 3.6 prints its column as ``N``, 3.9 as ``offset``."""
        region = source.region
        column = operation.attribute_int("N")
        if column is None:
            column = operation.attribute_int("offset") or 0
        start = source.origin + tmem_columns(source.type, column)
        size = units(region, result_type, result_type.shape)
        return Memory(
            region, result_type, start, ((start, start + size),), source.buffer, source.index
        )

    def same_units(self, operation, source: Memory, result_type, thread) -> Memory:
        """``memdesc_trans``, ``memdesc_reshape``: the same units, sub-slices of it whole."""
        return Memory(
            region=source.region,
            type=result_type,
            origin=source.origin,
            intervals=source.intervals,
            buffer=source.buffer,
            index=source.index,
            derived=True,
        )


# Views: the result is (part of) the operand's memory. One row per view operation.
VIEW_HANDLERS = {
    "ttg.memdesc_index": Memories.index,
    "ttg.memdesc_reinterpret": Memories.reinterpret,
    "ttg.memdesc_subslice": Memories.subslice,
    "ttng.tmem_subslice": Memories.tmem_subslice,
    "ttg.memdesc_trans": Memories.same_units,
    "ttg.memdesc_reshape": Memories.same_units,
}
