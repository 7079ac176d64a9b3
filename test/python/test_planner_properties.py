"""Property tests of the storage alias planner over random reuse trees.

Random buffers (shapes among powers of two and small multiples of them, 8/16/32-bit
elements, swizzled/NVMMA/TMEM layouts) are arranged in random trees up to three
groups deep, with group sizes and index-aligned buffer counts (each leaf has 1 to 4
buffer groups). For every plan the tests check, from the views alone and with their
own reading of the slot formula and the tree, what the semantics promise: buffers of
different groups and of distinct siblings never share a byte, distinct siblings keep
their order and shared siblings start together in every group, every buffer index
maps to an aligned slot inside the region; the plan is no larger than the simpler
layouts, equals the ideal footprint on trees that allow it, honours explicit sizes,
and a well-formed tree fails only by not fitting. The plan report's extents and
segments map exactly the bytes the views say, and every piece of advice names
buffers that do share bytes under a ``shared`` node and adds up its totals.
"""

import math
from dataclasses import dataclass

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from tlx.planner import (
    TMEM_COLUMNS,
    Buffer,
    Group,
    Layout,
    LayoutFamily,
    LayoutKind,
    PhaseUse,
    Plan,
    Spec,
    Storage,
    View,
    advise_splits,
    buffer_extents,
    buffer_size,
    check_phase_lifetimes,
    plan,
    required_alignment,
    sharing_segments,
    storage_budget,
)

# The layout of a plan in which nothing shares, as sharing would cost bytes.
UNSHARED_LAYOUT = "every buffer in bytes of its own"
# The only errors a well-formed tree may get: it does not fit.
TOO_LARGE = ("over_smem_limit", "too_many_columns")
SMEM_ROW_BYTES = 128

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
            count = draw(st.integers(1, groups)) * group_size
            buffers.append(draw(make_buffer(f"b{len(buffers)}", count)))
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
    whole_views = draw(st.booleans())
    # Triton 3.8 needs whole views and has no view at a byte offset; the others may.
    offset_form = "slots" if whole_views else draw(st.sampled_from(("slots", "sliced_rows")))
    spec = Spec("spec", storage, whole_views=whole_views, offset_form=offset_form)
    return Scenario(spec, ordered, renumber(tree))


# --- An independent reading of the tree and the views -----------------------------------------


def leaves(element):
    if isinstance(element, int):
        return [element]
    return [leaf for child in element.children for leaf in leaves(child)]


def group_sizes(element, product=1, out=None):
    """{leaf: K}, the group sizes along each leaf's path multiplied."""
    out = {} if out is None else out
    if isinstance(element, int):
        out[element] = product
        return out
    for child in element.children:
        group_sizes(child, product * element.group_size, out)
    return out


def slot(view: View, index: int) -> int:
    return (
        view.scale * (index // view.period) + view.offset_slots + view.step * (index % view.period)
    )


def placed(result: Plan, buffers, sizes):
    """[(start, end, leaf, group)] of every buffer of every user."""
    out = []
    for leaf, (buffer, view) in enumerate(zip(buffers, result.views, strict=True)):
        k = sizes.get(leaf, 1)
        for index in range(buffer.shape[0]):
            start = view.base + slot(view, index) * view.buffer_size
            out.append((start, start + view.buffer_size, leaf, index // k))
    return out


def lowest_common_ancestor(tree, a, b):
    node = tree
    while True:
        below = [c for c in node.children if a in leaves(c) and b in leaves(c)]
        if not below or isinstance(below[0], int):
            return node
        node = below[0]


def ranges(element, group, buffers):
    """(start, end) of `element`'s buffers of `group`, or None."""
    inside = [(s, e) for s, e, leaf, g in buffers if g == group and leaf in leaves(element)]
    if not inside:
        return None
    return min(s for s, _ in inside), max(e for _, e in inside)


def assert_views_sound(result: Plan, buffers, whole_views):
    region = result.region_size
    if result.storage is Storage.SMEM:
        assert region == result.size_bytes and region % SMEM_ROW_BYTES == 0
        assert result.backing_shape == (region // SMEM_ROW_BYTES, SMEM_ROW_BYTES)
    else:
        rows, columns = result.backing_shape
        assert columns == region and 32 <= columns <= TMEM_COLUMNS
        assert columns & (columns - 1) == 0
        assert result.size_bytes == rows * columns * 4
    for buffer, view in zip(buffers, result.views, strict=True):
        size = buffer_size(buffer)
        assert view.buffer_size == size
        assert view.shape == (view.slots, *buffer.shape[1:])
        assert view.base + view.slots * size <= region
        assert view.base % SMEM_ROW_BYTES == 0 and view.base % view.alignment == 0
        assert (view.base == 0) == (view.form == "slots")
        if whole_views:
            assert view.slots * size == region
        assert result.alignment % view.alignment == 0 or result.storage is Storage.TMEM
        for index in range(buffer.shape[0]):
            assert 0 <= slot(view, index) < view.slots, (buffer.name, index)
            assert slot(view, index) == view.slot_of(index)
            assert (view.base + slot(view, index) * size) % view.alignment == 0
            assert view.start_of(index) == view.base + slot(view, index) * size


def assert_tree_semantics(result: Plan, scenario: Scenario):
    sizes = group_sizes(scenario.tree)
    buffers = placed(result, scenario.buffers, sizes)
    in_tree = set(sizes)
    ordered = sorted(b for b in buffers if b[2] in in_tree)
    for i, first in enumerate(ordered):
        for second in ordered[i + 1 :]:
            if second[0] >= first[1]:
                break
            assert first[2] != second[2], f"two buffers of user {first[2]} overlap"
            assert first[3] == second[3], f"groups {first[3]} and {second[3]} overlap"
            common = lowest_common_ancestor(scenario.tree, first[2], second[2])
            assert common.kind == "shared", (first, second)
    groups = max(b[3] for b in buffers) + 1
    unshared = UNSHARED_LAYOUT in result.layout

    def walk(element):
        if isinstance(element, int):
            return
        for group in range(groups):
            present = [r for r in (ranges(c, group, buffers) for c in element.children) if r]
            if element.kind == "shared":
                if unshared:
                    continue  # nothing shares: sharing would have cost bytes
                # Children with all their buffers in this group start together.
                complete = [
                    ranges(c, group, buffers)
                    for c in element.children
                    if all(group < scenario.buffers[x].shape[0] // sizes[x] for x in leaves(c))
                ]
                assert len({start for start, _ in complete}) <= 1, "shared children start apart"
            else:
                for before, after in zip(present, present[1:], strict=False):
                    assert before[1] <= after[0], "distinct children out of order"
        for child in element.children:
            walk(child)

    walk(scenario.tree)


def ideal_footprint(scenario: Scenario) -> int:
    """Rule 6 of Planner.h, read independently: per buffer group shared = max,
    distinct = sum, starts 128-byte aligned (SMEM), summed over the groups."""
    unit = SMEM_ROW_BYTES if scenario.spec.storage is Storage.SMEM else 1
    sizes = group_sizes(scenario.tree)

    def round_up(value):
        return -(-value // unit) * unit

    def extent(element, group):
        if isinstance(element, int):
            buffer = scenario.buffers[element]
            if group >= buffer.shape[0] // sizes[element]:
                return 0
            return sizes[element] * round_up(buffer_size(buffer))
        parts = [extent(child, group) for child in element.children]
        parts = [p for p in parts if p]
        if element.kind == "shared":
            return max(parts, default=0)
        total = 0
        for part in parts:
            total = round_up(total) + part
        return total

    groups = max(scenario.buffers[leaf].shape[0] // k for leaf, k in sizes.items())
    total = sum(round_up(extent(scenario.tree, group)) for group in range(groups))
    outside = [
        b.shape[0] * round_up(buffer_size(b))
        for i, b in enumerate(scenario.buffers)
        if i not in sizes
    ]
    return max([total, *outside])


def assert_only_too_large(result: Plan):
    for error in result.errors:
        assert error.kind in TOO_LARGE, error.message
    if result.errors and result.storage is Storage.SMEM:
        assert result.size_bytes > Spec("limit").smem_limit_bytes
    elif result.errors:
        assert result.region_size > TMEM_COLUMNS


def in_bytes(result: Plan, units: int) -> int:
    if result.storage is Storage.SMEM:
        return units
    return units * result.backing_block[0] * 4


# --- Properties ------------------------------------------------------------------------------


@settings(max_examples=2000, deadline=None)
@given(scenarios())
def test_every_well_formed_tree_gets_a_sound_plan(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    assert_only_too_large(result)
    event(f"{scenario.spec.storage.value}: {result.layout}")
    if not result.ok:
        return
    assert_views_sound(result, scenario.buffers, scenario.spec.whole_views)
    assert_tree_semantics(result, scenario)
    in_tree = set(leaves(scenario.tree))
    for index, view in enumerate(result.views):
        if index not in in_tree:
            # At offset 0, its buffers one after the other, each aligned.
            assert (view.offset, view.offset_slots, view.period) == (0, 0, 1)
            assert view.scale * view.buffer_size == math.lcm(view.buffer_size, view.alignment)
    not_in_tree = [w for w in result.warnings if w.kind == "not_in_tree"]
    assert len(not_in_tree) == len(scenario.buffers) - len(in_tree)
    assert {w.kind for w in result.warnings} <= {"not_in_tree", "forgotten_sub_tiles"}


@settings(max_examples=1000, deadline=None)
@given(scenarios())
def test_the_plan_is_no_larger_than_the_simpler_layouts(scenario):
    best = plan(scenario.spec, scenario.buffers, scenario.tree)
    node_by_node = plan(scenario.spec, scenario.buffers, scenario.tree, LayoutFamily.NODE_BY_NODE)
    group_major = plan(scenario.spec, scenario.buffers, scenario.tree, LayoutFamily.GROUP_MAJOR)
    assert best.size_bytes <= node_by_node.size_bytes <= group_major.size_bytes
    # Nothing a simpler layout fits is rejected.
    assert best.ok or not (node_by_node.ok or group_major.ok)
    event("smaller than group-major" if best.size_bytes < group_major.size_bytes else "same")


@settings(max_examples=1000, deadline=None)
@given(scenarios())
def test_padding_is_the_region_minus_the_ideal_footprint(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    if not result.ok:
        return
    assert result.ideal_bytes == in_bytes(result, ideal_footprint(scenario))
    assert result.padding_bytes == result.size_bytes - result.ideal_bytes >= 0
    assert all(share.bytes > 0 for share in result.padding)
    assert sum(share.bytes for share in result.padding) >= result.padding_bytes


@st.composite
def packable_scenarios(draw):
    """Trees whose ideal a layout reaches: a distinct node of leaves, or of shared
    pairs of leaves, whose sizes are powers of two of at least 128 bytes, written
    largest first, every leaf with the same number of buffer groups."""
    groups = draw(st.integers(1, 4))
    exponents = sorted(draw(st.lists(st.integers(7, 15), min_size=1, max_size=4)), reverse=True)
    buffers, children = [], []
    for exponent in exponents:
        buffers.append(Buffer(f"b{len(buffers)}", (groups, 2**exponent), 8))
        if draw(st.booleans()):
            smaller = draw(st.integers(7, exponent))
            buffers.append(Buffer(f"b{len(buffers)}", (groups, 2**smaller), 8))
            children.append(Group("shared", (len(buffers) - 2, len(buffers) - 1)))
        else:
            children.append(len(buffers) - 1)
    spec = Spec("spec", whole_views=draw(st.booleans()))
    return Scenario(spec, tuple(buffers), Group("distinct", tuple(children)))


@settings(max_examples=500, deadline=None)
@given(packable_scenarios())
def test_the_plan_reaches_the_ideal_where_the_tree_allows_it(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    assert_only_too_large(result)
    ideal = ideal_footprint(scenario)
    assert result.ideal_bytes == ideal
    if scenario.spec.whole_views:
        # Whole views round the region to a multiple of the largest buffer.
        largest = max(buffer_size(buffer) for buffer in scenario.buffers)
        assert result.size_bytes == -(-ideal // largest) * largest
    else:
        assert result.size_bytes == ideal
        assert result.padding_bytes == 0 and result.padding == ()
    event(result.layout)


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
    spec = Spec(
        "spec",
        scenario.spec.storage,
        explicit_size_bytes=explicit,
        whole_views=scenario.spec.whole_views,
        offset_form=scenario.spec.offset_form,
    )
    result = plan(spec, scenario.buffers, scenario.tree)
    if smaller:
        assert any(
            e.kind == "explicit_size_too_small"
            and e.numbers[1] == needed.region_size
            or e.kind == "explicit_size_too_small"
            and e.numbers[0] == explicit
            or e.kind == "explicit_size_misaligned"
            and e.numbers[1:] == (explicit, needed.region_size)
            for e in result.errors
        )
        return
    assert_only_too_large(result)
    if result.ok:
        assert result.size_bytes == explicit
        assert result.padding_bytes == needed.padding_bytes + explicit - needed.size_bytes
        assert_views_sound(result, scenario.buffers, scenario.spec.whole_views)
        for kept, first in zip(result.views, needed.views, strict=True):
            assert kept.placement.offset_slots == first.placement.offset_slots
            assert (kept.scale, kept.step, kept.period) == (first.scale, first.step, first.period)


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_without_a_tree_every_buffer_starts_at_zero(scenario):
    result = plan(scenario.spec, scenario.buffers)
    assert_only_too_large(result)
    # Two or more buffers without a tree and without an explicit size: one warning
    # naming them all (they all start at offset 0).
    expected = ["no_overlap_tree"] if len(scenario.buffers) > 1 else []
    assert [w.kind for w in result.warnings] == expected
    if expected:
        assert result.warnings[0].buffers == tuple(range(len(scenario.buffers)))
    if not result.ok:
        return
    assert_views_sound(result, scenario.buffers, scenario.spec.whole_views)
    largest = max(b.shape[0] * buffer_size(b) for b in scenario.buffers)
    assert result.region_size >= largest
    for view in result.views:
        assert (view.offset, view.offset_slots, view.period) == (0, 0, 1)
        assert view.scale * view.buffer_size == math.lcm(view.buffer_size, view.alignment)


@settings(max_examples=500, deadline=None)
@given(scenarios())
def test_extents_and_segments_map_the_region(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    if not result.ok:
        return
    extents = buffer_extents(result, scenario.buffers)
    expected = placed(result, scenario.buffers, group_sizes(scenario.tree))
    assert [(e.start, e.end, e.user, e.buffer_group) for e in extents] == expected
    assert [e.index for e in extents] == [i for b in scenario.buffers for i in range(b.shape[0])]
    segments = sharing_segments(result, extents)
    # They tile the region, from 0 to its end, and each is what covers it.
    assert segments[0].start == 0 and segments[-1].end == result.region_size
    for before, after in zip(segments, segments[1:], strict=False):
        assert before.end == after.start and before.occupants != after.occupants
    for segment in segments:
        assert segment.start < segment.end
        covering = [
            i for i, e in enumerate(extents) if e.start <= segment.start and segment.end <= e.end
        ]
        assert list(segment.occupants) == covering
        assert all(
            not (e.start < segment.end and segment.start < e.end) or i in covering
            for i, e in enumerate(extents)
        )
        groups = {extents[i].buffer_group for i in segment.occupants}
        assert segment.buffer_group == (groups.pop() if len(groups) == 1 else -1)
        # Buffer groups mix only where a buffer outside the tree sits.
        outside = set(range(len(scenario.buffers))) - set(leaves(scenario.tree))
        if segment.buffer_group == -1 and covering:
            assert any(extents[i].user in outside for i in covering)


def element_at(tree, path):
    for child in path:
        tree = tree.children[child]
    return tree


@settings(max_examples=300, deadline=None)
@given(scenarios(), st.integers(0, 100000))
def test_advice_names_buffers_that_share_and_adds_up(scenario, other_units):
    result = plan(scenario.spec, scenario.buffers, scenario.tree)
    splits = advise_splits(scenario.spec, scenario.buffers, scenario.tree, other_units)
    if not result.ok:
        assert splits == ()
        return
    extents = buffer_extents(result, scenario.buffers)
    budget = storage_budget(scenario.spec.storage, scenario.spec.capability)
    for split in splits:
        node = element_at(scenario.tree, split.shared_node)
        assert node.kind == "shared" and len(node.children) > 1
        # The buffers of one child of the node, or of one child of a distinct child.
        candidates = [leaves(child) for child in node.children]
        candidates += [
            leaves(grandchild)
            for child in node.children
            if isinstance(child, Group) and child.kind == "distinct" and len(child.children) > 1
            for grandchild in child.children
        ]
        assert list(split.buffers) in candidates
        # Every buffer it names shares bytes with one of the split's buffers now.
        assert split.shared_with and not set(split.shared_with) & set(split.buffers)
        for other in split.shared_with:
            assert any(
                a.user == other and b.user in split.buffers and a.start < b.end and b.start < a.end
                for a in extents
                for b in extents
            )
        assert split.budget_units == budget
        own = split.own_region_units if split.own_region else 0
        assert split.total_units == other_units + split.region_units + own
        assert split.fits == (split.total_units <= budget)
        assert ("need not share" in split.message) == split.fits


# --- Phases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhasedScenario:
    spec: Spec
    buffers: tuple[Buffer, ...]
    phases: tuple[Group, ...]
    # Buffers of several phases, and whether each shares bytes with nothing in any phase.
    multi_phase: tuple[int, ...]
    apart: bool


def renumbered(element, offset):
    if isinstance(element, int):
        return element + offset
    children = tuple(renumbered(c, offset) for c in element.children)
    return Group(element.kind, children, element.group_size)


@st.composite
def phased_scenarios(draw):
    """Two or three phases, each a well-formed tree over buffers of its own, plus
    buffers written into several phases: beside the phase's tree (distinct: they
    share with nothing) or, sometimes, shared with it."""
    storage = draw(st.sampled_from(Storage))
    make_buffer = smem_buffers if storage is Storage.SMEM else tmem_buffers
    whole_views = draw(st.booleans())
    buffers = []
    trees = []
    for _ in range(draw(st.integers(2, 3))):
        scenario = draw(scenarios(storage))
        trees.append(renumbered(scenario.tree, len(buffers)))
        buffers.extend(scenario.buffers)
    multi = []
    for _ in range(draw(st.integers(0, 2))):
        multi.append(len(buffers))
        buffers.append(draw(make_buffer(f"m{len(multi)}", draw(st.integers(1, 2)))))
    apart = not multi or draw(st.integers(0, 3)) > 0
    phases = []
    for tree in trees:
        members = [m for m in multi if draw(st.booleans())]
        if len(multi) and not members:
            members = multi[:1]
        kind = "distinct" if apart else "shared"
        phases.append(Group(kind, (*members, tree)) if members else tree)
    in_several = tuple(m for m in multi if sum(m in leaves(phase) for phase in phases) > 1)
    spec = Spec("spec", storage, whole_views=whole_views)
    return PhasedScenario(spec, tuple(buffers), tuple(phases), in_several, apart)


def without(element, removed):
    if isinstance(element, int):
        return None if element in removed else element
    kept = tuple(c for c in (without(c, removed) for c in element.children) if c is not None)
    return Group(element.kind, kept, element.group_size) if kept else None


@settings(max_examples=500, deadline=None)
@given(phased_scenarios())
def test_phases_get_one_place_per_buffer_valid_in_every_phase(scenario):
    result = plan(scenario.spec, scenario.buffers, scenario.phases)
    for error in result.errors:
        # Buffers that share bytes in a phase may not find one place for all.
        assert error.kind in TOO_LARGE or (error.kind == "phases_disagree" and not scenario.apart)
    event(f"{scenario.spec.storage.value}: {result.layout.split(' (')[0]}")
    if not result.ok:
        return
    assert result.phases == tuple(tuple(leaves(phase)) for phase in scenario.phases)
    # Every view inside the region, and (one view per buffer) a buffer of several
    # phases at one place: inside each phase, its tree holds for that place.
    assert_views_sound(result, scenario.buffers, scenario.spec.whole_views)
    # Planned alone, every phase's tree holds whole; with the buffers of several
    # phases set apart (placed first), it holds for the rest of each phase.
    alone = result.layout.startswith("each phase alone")
    removed = () if alone else scenario.multi_phase
    for phase in scenario.phases:
        rest = without(phase, removed)
        if rest is not None:
            assert_tree_semantics(result, Scenario(scenario.spec, scenario.buffers, rest))
    # A buffer of several phases that shares bytes with nothing in them shares with
    # no buffer of any of them (buffers of the other phases may take its bytes).
    if scenario.apart and scenario.multi_phase:
        extents = buffer_extents(result, scenario.buffers)
        for m in scenario.multi_phase:
            mates = {
                leaf for phase in scenario.phases if m in leaves(phase) for leaf in leaves(phase)
            }
            mine = [(e.start, e.end) for e in extents if e.user == m]
            others = [(e.start, e.end) for e in extents if e.user != m and e.user in mates]
            assert not any(s < oe and os < e for s, e in mine for os, oe in others)


@settings(max_examples=300, deadline=None)
@given(phased_scenarios())
def test_phases_are_no_larger_than_their_union_as_distinct_trees(scenario):
    if not scenario.apart:
        return
    result = plan(scenario.spec, scenario.buffers, scenario.phases)
    removed = set(scenario.multi_phase)
    rests = [r for r in (without(phase, removed) for phase in scenario.phases) if r is not None]
    union = plan(scenario.spec, scenario.buffers, Group("distinct", (*sorted(removed), *rests)))
    if union.ok:
        assert result.ok
        assert result.size_bytes <= union.size_bytes


# x (phase 0) and w2 (phase 1) share all their bytes: only their order apart.
PHASED_BUFFERS = (Buffer("x", (2, 64, 64), 16), Buffer("w2", (2, 64, 64), 16))
PHASED_PLAN = plan(Spec("s"), PHASED_BUFFERS, [Group("distinct", (0,)), Group("distinct", (1,))])


@st.composite
def phase_uses(draw):
    """Uses of x and w2 in up to three sequences of control, at distinct positions."""
    count = draw(st.integers(2, 12))
    positions = draw(st.permutations(range(1, count + 1)))
    users = draw(st.lists(st.sampled_from((0, 1)), min_size=count, max_size=count))
    sequences = draw(st.lists(st.integers(0, 2), min_size=count, max_size=count))
    uses = ([], [])
    for position, user, sequence in zip(positions, users, sequences, strict=True):
        uses[user].append(PhaseUse(sequence, position))
    return uses


@settings(max_examples=500, deadline=None)
@given(phase_uses())
def test_the_lifetime_check_is_one_verdict_per_sequence_of_control(uses):
    assert PHASED_PLAN.ok
    problems = check_phase_lifetimes(PHASED_PLAN, PHASED_BUFFERS, uses)
    # One error per sequence in which both are used and their spans meet;
    # the order across sequences never matters.
    meeting = []
    for sequence in sorted({use.sequence for found in uses for use in found}):
        x, w2 = ([u.position for u in found if u.sequence == sequence] for found in uses)
        if x and w2 and not (max(x) < min(w2) or max(w2) < min(x)):
            meeting.append(sequence)
    assert len(problems) == len(meeting)
    for problem, sequence in zip(problems, meeting, strict=True):
        in_between, before, after = problem.numbers[:3]
        later, earlier = problem.buffers
        # The use in between lies strictly between two uses of the other buffer,
        # all three in that sequence.
        assert before < in_between < after
        assert PhaseUse(sequence, in_between) in uses[later]
        assert PhaseUse(sequence, before) in uses[earlier]
        assert PhaseUse(sequence, after) in uses[earlier]


def tree_order(element) -> list[int]:
    """The buffers in the order the tree writes them."""
    if isinstance(element, int):
        return [element]
    return [leaf for child in element.children for leaf in tree_order(child)]


def unshared_end(buffers, order) -> int:
    """The same buffers each in bytes of their own, one after the other in ``order``,
    every user's first buffer at its alignment and the others a slot of its view
    apart (``lcm(size, alignment)``, what one view can write), rounded to 128-byte
    rows."""
    end = 0
    for index in order:
        size, alignment = buffer_size(buffers[index]), required_alignment(buffers[index])
        alignment = math.lcm(alignment, SMEM_ROW_BYTES)
        start = -(-end // alignment) * alignment
        end = start + (buffers[index].shape[0] - 1) * math.lcm(size, alignment) + size
    return -(-end // SMEM_ROW_BYTES) * SMEM_ROW_BYTES


@settings(max_examples=1000, deadline=None)
@given(scenarios(Storage.SMEM), st.sampled_from(("sliced_rows", "indexed_row")))
def test_sharing_never_costs_bytes(scenario, offset_form):
    """With views at byte offsets, every plan of every tree (index-aligned counts,
    group sizes, sizes that are not multiples of their alignment, buffers outside the
    tree) is no larger than the same buffers unshared (issue 46): where the tree's
    layout would be, nothing shares."""
    spec = Spec("spec", whole_views=False, offset_form=offset_form)
    result = plan(spec, scenario.buffers, scenario.tree)
    assume(result.ok)
    order = tree_order(scenario.tree)
    order += [index for index in range(len(scenario.buffers)) if index not in order]
    assert result.size_bytes <= unshared_end(scenario.buffers, order)
    assert_views_sound(result, scenario.buffers, whole_views=False)
    assert_tree_semantics(result, scenario)
    event(result.layout)


@st.composite
def tile_trees(draw):
    """SMEM tiles of equal buffer counts whose sizes are multiples of their alignment
    (rows of 128 bytes or more, 8 rows or more, any swizzle), under nested ``distinct``
    nodes whose ``shared`` nodes share buffers, in the order the tree writes them."""
    count = draw(st.integers(1, 4))
    buffers = []

    def leaf():
        rows = draw(st.sampled_from((8, 16, 32, 64, 128)))
        row_bytes = draw(st.sampled_from((128, 256, 512)))
        swizzle = draw(st.sampled_from((None, 32, 64, 128)))
        layout = Layout() if swizzle is None else Layout(LayoutKind.NVMMA_SHARED, swizzle)
        buffers.append(Buffer(f"b{len(buffers)}", (count, rows, row_bytes), 8, layout=layout))
        return len(buffers) - 1

    def node(depth):
        if depth == 2 or draw(st.booleans()):
            if draw(st.booleans()):
                return leaf()
            return Group("shared", tuple(leaf() for _ in range(draw(st.integers(1, 3)))))
        return Group("distinct", tuple(node(depth + 1) for _ in range(draw(st.integers(1, 3)))))

    tree = node(0)
    return buffers, tree if isinstance(tree, Group) else Group("distinct", (tree,))


@settings(max_examples=300, deadline=None)
@given(tile_trees())
def test_sharing_never_costs_bytes_with_views_at_offsets(case):
    """With views at byte offsets, a plan of equal buffer counts whose shared nodes
    share buffers and whose buffer sizes are multiples of their alignment (every tile of
    a kernel) is never larger than the same buffers unshared (issue 46; the others may
    still be: docs/planner.md, "Views at a byte offset")."""
    buffers, tree = case
    spec = Spec("spec", whole_views=False, offset_form="sliced_rows")
    result = plan(spec, buffers, tree)
    assume(result.ok)
    assert result.size_bytes <= unshared_end(buffers, tree_order(tree))
    assert_views_sound(result, buffers, whole_views=False)
