"""Property tests of the storage alias planner over random reuse trees.

Random buffers (shapes among powers of two and small multiples of them, 8/16/32-bit
elements, swizzled/NVMMA/TMEM layouts) are arranged in random trees up to three
groups deep, with group sizes consistent with the buffer counts. For every plan the
tests check, from the views alone, what the semantics promise: distinct siblings
never share a byte, shared siblings start together, every buffer index maps to an
aligned slot inside the region, explicit sizes are honoured, and the only way a
well-formed tree fails is by not fitting.
"""

import math
from dataclasses import dataclass

from hypothesis import event, given, settings
from hypothesis import strategies as st
from tlx.planner import (
    Buffer,
    Group,
    Layout,
    LayoutKind,
    Plan,
    Spec,
    Storage,
    View,
    buffer_size,
    plan,
)

# Messages of the only errors a well-formed tree may get: it does not fit.
TOO_LARGE = ("more than the target's limit", "more than the 512 columns TMEM has")

SMEM_DIMS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
TMEM_M = (64, 128, 256)
TMEM_N = (1, 2, 4, 8, 16, 32, 64, 128)
MAX_DEPTH = 3
MAX_GROUP_SIZE_PRODUCT = 8


@dataclass(frozen=True)
class Scenario:
    spec: Spec
    buffers: tuple[Buffer, ...]
    tree: Group


@st.composite
def smem_buffers(draw, name, count):
    dims = draw(st.lists(st.sampled_from(SMEM_DIMS), min_size=0, max_size=2))
    bits = draw(st.sampled_from((8, 16, 32)))
    swizzle = draw(st.sampled_from((None, 0, 32, 64, 128)))
    layout = Layout() if swizzle is None else Layout(LayoutKind.NVMMA_SHARED, swizzle)
    return Buffer(name, (count, *dims), bits, Storage.SMEM, layout)


@st.composite
def tmem_buffers(draw, name, count):
    m = draw(st.sampled_from(TMEM_M))
    n = draw(st.sampled_from(TMEM_N))
    bits = draw(st.sampled_from((8, 16, 32)))
    block_m = draw(st.sampled_from((64, 128))) if m <= 64 else 128
    layout = Layout(LayoutKind.TENSOR_MEMORY, block_m=block_m, unpacked=draw(st.booleans()))
    return Buffer(name, (count, m, n), bits, Storage.TMEM, layout)


@st.composite
def scenarios(draw, storage=None):
    """A spec, its buffers and a well-formed tree over them (buffer indices in a
    random order; sometimes one extra buffer the tree leaves out)."""
    storage = storage or draw(st.sampled_from(Storage))
    make_buffer = smem_buffers if storage is Storage.SMEM else tmem_buffers
    groups = draw(st.integers(1, 4))
    buffers = []

    def node(depth, group_size):
        if depth > 0 and (depth == MAX_DEPTH or draw(st.booleans())):
            buffers.append(draw(make_buffer(f"b{len(buffers)}", groups * group_size)))
            return len(buffers) - 1
        sizes = [g for g in (1, 2, 3, 4) if group_size * g <= MAX_GROUP_SIZE_PRODUCT]
        own_size = draw(st.sampled_from(sizes))
        kind = draw(st.sampled_from(("shared", "distinct")))
        width = draw(st.integers(1, 3))
        children = tuple(node(depth + 1, group_size * own_size) for _ in range(width))
        return Group(kind, children, own_size)

    tree = node(0, 1)
    if draw(st.integers(0, 4)) == 0:
        buffers.append(draw(make_buffer("outside", draw(st.integers(1, 4)))))
    order = draw(st.permutations(range(len(buffers))))
    position = {old: new for new, old in enumerate(order)}

    def renumber(element):
        if isinstance(element, int):
            return position[element]
        return Group(element.kind, tuple(renumber(c) for c in element.children), element.group_size)

    ordered = tuple(buffers[old] for old in order)
    return Scenario(Spec("spec", storage), ordered, renumber(tree))


def leaves(element):
    if isinstance(element, int):
        return [element]
    return [leaf for child in element.children for leaf in leaves(child)]


def groups_of(element):
    if isinstance(element, Group):
        yield element
        for child in element.children:
            yield from groups_of(child)


def intervals(view: View, count: int) -> list[tuple[int, int]]:
    """Byte (column) ranges of every buffer, from the documented placement."""
    k = view.group_size
    starts = (
        (i // k) * view.bytes_between_buffer_groups + view.offset + (i % k) * view.buffer_size
        for i in range(count)
    )
    return sorted((start, start + view.buffer_size) for start in starts)


def disjoint(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> bool:
    merged = sorted([(s, e, 0) for s, e in first] + [(s, e, 1) for s, e in second])
    furthest = {0: -1, 1: -1}
    for start, end, side in merged:
        if start < furthest[1 - side]:
            return False
        furthest[side] = max(furthest[side], end)
    return True


def assert_views_sound(result: Plan, buffers):
    """Every index maps to an aligned slot inside the region, consistently with
    the byte placement, and every view covers the region exactly."""
    region = result.region_size
    if result.storage is Storage.SMEM:
        assert region == result.size_bytes and region % 128 == 0
        assert result.backing_shape == (region // 128, 128)
    else:
        rows, columns = result.backing_shape
        assert columns == region and 32 <= columns <= 512 and columns & (columns - 1) == 0
        assert result.size_bytes == rows * columns * 4
    for buffer, view in zip(buffers, result.views, strict=True):
        size = buffer_size(buffer)
        assert view.buffer_size == size
        assert view.slots * size == region
        assert view.offset % size == 0 and view.bytes_between_buffer_groups % size == 0
        assert view.offset % view.alignment == 0
        assert result.alignment % view.alignment == 0
        count = buffer.shape[0]
        assert count % view.group_size == 0
        for index in range(count):
            slot = view.slot_of(index)
            assert 0 <= slot < view.slots, (buffer.name, index, slot)
        placed = intervals(view, count)
        assert [start // size for start, _ in placed] == sorted(
            view.slot_of(i) for i in range(count)
        )


def start_of(element, views, buffers):
    return min(views[leaf].offset for leaf in leaves(element))


def end_of_first_group(element, views, buffers):
    return max(
        views[leaf].offset + views[leaf].group_size * views[leaf].buffer_size
        for leaf in leaves(element)
    )


def assert_tree_semantics(result: Plan, scenario: Scenario):
    views, buffers = result.views, scenario.buffers
    buffer_intervals = {
        leaf: intervals(views[leaf], buffers[leaf].shape[0]) for leaf in leaves(scenario.tree)
    }
    for leaf in buffer_intervals:
        assert views[leaf].bytes_between_buffer_groups % views[leaf].alignment == 0
    for group in groups_of(scenario.tree):
        children = group.children
        if group.kind == "shared":
            starts = {start_of(child, views, buffers) for child in children}
            assert len(starts) == 1, "shared children must start together"
            continue
        # distinct: in the order written, and no byte shared at any buffer index.
        for before, after in zip(children, children[1:], strict=False):
            assert end_of_first_group(before, views, buffers) <= start_of(after, views, buffers)
        for i, first in enumerate(children):
            for second in children[i + 1 :]:
                for a in leaves(first):
                    for b in leaves(second):
                        assert disjoint(buffer_intervals[a], buffer_intervals[b]), (a, b)


def assert_only_too_large(result: Plan):
    for error in result.errors:
        assert any(reason in error.message for reason in TOO_LARGE), error.message
    if result.errors and result.storage is Storage.SMEM:
        assert result.size_bytes > Spec("limit").smem_limit_bytes
    elif result.errors:
        assert result.region_size > 512


@settings(max_examples=2000, deadline=None)
@given(scenarios())
def test_every_well_formed_tree_gets_a_sound_plan(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    assert_only_too_large(result)
    event(f"{scenario.spec.storage.value}: {'planned' if result.ok else 'too large'}")
    if not result.ok:
        return
    assert_views_sound(result, scenario.buffers)
    assert_tree_semantics(result, scenario)
    in_tree = set(leaves(scenario.tree))
    for index, view in enumerate(result.views):
        if index not in in_tree:
            assert (view.offset, view.group_size) == (0, 1)
            assert view.bytes_between_buffer_groups == view.buffer_size
    assert len(result.warnings) == len(scenario.buffers) - len(in_tree)


@settings(max_examples=300, deadline=None)
@given(scenarios(), st.integers(1, 3), st.booleans())
def test_explicit_sizes_are_honoured(scenario, factor, smaller):
    needed = plan(scenario.spec, scenario.buffers, scenario.tree)
    if not needed.ok:
        return
    if smaller:
        explicit = needed.size_bytes * factor // 4
    elif needed.storage is Storage.SMEM:
        explicit = needed.size_bytes * factor  # a multiple of every view
    else:
        explicit = needed.size_bytes * 2 ** (factor - 1)  # still a power of two of columns
    spec = Spec("spec", scenario.spec.storage, explicit_size_bytes=explicit)
    result = plan(spec, scenario.buffers, scenario.tree)
    if smaller:
        assert any(
            "is too small" in e.message and str(needed.size_bytes) in e.message
            for e in result.errors
        )
        return
    assert_only_too_large(result)
    if result.ok:
        assert result.size_bytes == explicit
        assert result.padding_bytes == needed.padding_bytes + explicit - needed.size_bytes
        assert_views_sound(result, scenario.buffers)
        for kept, first in zip(result.views, needed.views, strict=True):
            assert (kept.offset, kept.bytes_between_buffer_groups) == (
                first.offset,
                first.bytes_between_buffer_groups,
            )


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_without_a_tree_every_buffer_starts_at_zero(scenario):
    result = plan(scenario.spec, scenario.buffers)
    assert_only_too_large(result)
    assert not result.warnings
    if not result.ok:
        return
    assert_views_sound(result, scenario.buffers)
    largest = max(b.shape[0] * buffer_size(b) for b in scenario.buffers)
    assert result.region_size >= largest
    for view in result.views:
        assert (view.offset, view.group_size, view.scale) == (0, 1, 1)


@settings(max_examples=300, deadline=None)
@given(scenarios(Storage.SMEM))
def test_padding_is_the_region_minus_an_ideal_packing(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    if not result.ok:
        return
    in_tree = set(leaves(scenario.tree))
    groups = {
        b.shape[0] // result.views[i].group_size
        for i, b in enumerate(scenario.buffers)
        if i in in_tree
    }
    (group_count,) = groups

    def ideal(element):
        if isinstance(element, int):
            return result.views[element].group_size * buffer_size(scenario.buffers[element])
        needs = [ideal(child) for child in element.children]
        return max(needs) if element.kind == "shared" else sum(needs)

    outside = [
        b.shape[0] * buffer_size(b) for i, b in enumerate(scenario.buffers) if i not in in_tree
    ]
    packing = max([ideal(scenario.tree) * group_count, *outside])
    assert result.padding_bytes == result.size_bytes - packing
    assert result.padding_bytes >= 0
    assert math.gcd(result.size_bytes, 128) == 128
