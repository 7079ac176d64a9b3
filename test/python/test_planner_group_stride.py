"""The free group stride (issue 46; docs/planner.md, "Views at a byte offset" and "What
stays above the ideal"): where the Triton writes a view per buffer group (``runtime_row``,
Triton 3.6 and 3.7; ``selected_rows``, 3.9: ``Spec.group_stride_form``), buffer group 0 is
laid out alone and
repeated at its end rounded to every alignment, and a user whose buffer groups are then no
whole number of its slots apart gets a view per group: buffer i's view starts at
``base + group_stride * (i // period)``. Checked here with the tests' own reading of such a
view: soundness over random trees, the index program's row or group, never larger than the plan
without it or than the buffers unshared, the ideal on the issue's examples and on every
equal-count tree of the bench, and no change where the plan was at its ideal.
"""

import random
from dataclasses import replace

import footprint
import pytest
from hypothesis import event, given, settings
from test_planner_properties import (
    SMEM_ROW_BYTES,
    Scenario,
    group_sizes,
    leaves,
    lowest_common_ancestor,
    scenarios,
    tree_order,
    unshared_end,
)
from tlx.planner import (
    Buffer,
    Group,
    Spec,
    Storage,
    buffer_size,
    group_stride_form_of,
    group_stride_view_form,
    plan,
)

KIB = 1024
# Each form of a view per buffer group, with the offset form of the releases that write it.
PER_GROUP = {
    "runtime_row": {"offset_form": "indexed_row", "group_stride_form": "runtime_row"},
    "selected_rows": {"offset_form": "sliced_rows", "group_stride_form": "selected_rows"},
}


def start(view, index: int) -> tuple[int, int, int]:
    """(where buffer ``index`` starts, where its view starts, its slot), read from the view's
    fields (docs/planner.md, "The slot of a buffer"): a view per buffer group starts at its
    group's start."""
    slot = (
        view.scale * (index // view.period) + view.offset_slots + view.step * (index % view.period)
    )
    view_start = view.base
    if view.group_starts:  # groups at starts of their own (selected_rows)
        view_start = view.group_starts[index // view.period]
    elif view.form in PER_GROUP:
        view_start += view.group_stride * (index // view.period)
    return view_start + slot * view.buffer_size, view_start, slot


def assert_sound(result, scenario: Scenario):
    """Every buffer inside the region at its alignment, every view inside the region, a
    view per group only in a per-group form (groups whole rows apart, one group's slots),
    the index program's row where the group's view starts (runtime_row) or its group, whose
    view starts there (selected_rows), and no two buffers of the tree
    sharing a byte unless a ``shared`` node lets them in one buffer group."""
    region = result.region_size
    sizes = group_sizes(scenario.tree)
    placed = []
    for user, (buffer, view) in enumerate(zip(scenario.buffers, result.views, strict=True)):
        size = buffer_size(buffer)
        per_group = view.form in PER_GROUP
        own_starts = bool(view.group_starts)
        assert per_group == (view.group_stride != 0 or own_starts) == view.per_group
        if own_starts:  # only selected_rows, which writes each group's view at its start
            assert view.form == "selected_rows" and view.group_stride == 0
            assert view.group_starts[0] == view.base
            assert len(view.group_starts) == -(-buffer.shape[0] // view.period)
        if per_group:
            assert view.group_stride % SMEM_ROW_BYTES == 0 and view.scale == 0
            assert view.slots == view.step * (view.period - 1) + 1
            assert own_starts or view.group_stride >= view.slots * size
        program = view.index_program
        assert (program.row is not None) == (view.form == "runtime_row")
        assert (program.group is not None) == (view.form == "selected_rows")
        group_starts = view.group_view_starts(buffer.shape[0])
        assert len(group_starts) == (-(-buffer.shape[0] // view.period) if per_group else 1)
        for index in range(buffer.shape[0]):
            begin, view_start, slot = start(view, index)
            assert begin == view.start_of(index) and view_start == view.view_start_of(index)
            assert 0 <= slot < view.slots
            assert view_start % SMEM_ROW_BYTES == 0
            assert view_start + view.slots * size <= region
            assert begin % view.alignment == 0 and begin + size <= region
            assert program.evaluate(index) == slot
            if view.form == "runtime_row":
                assert program.evaluate_row(index) * SMEM_ROW_BYTES == view_start
            if view.form == "selected_rows":
                assert group_starts[index // view.period] == view_start
            if user in sizes:  # a buffer outside the tree sits at offset 0 (a warning)
                placed.append((begin, begin + size, user, index // sizes[user]))
    placed.sort()
    for i, first in enumerate(placed):
        for second in placed[i + 1 :]:
            if second[0] >= first[1]:
                break
            assert first[2] != second[2], f"two buffers of user {first[2]} overlap"
            assert first[3] == second[3], f"groups {first[3]} and {second[3]} overlap"
            assert lowest_common_ancestor(scenario.tree, first[2], second[2]).kind == "shared"


def test_the_rule_follows_the_releases_that_write_a_view_per_group():
    versions = ((3, 6), (3, 7), (3, 8), (3, 9))
    forms = {version: group_stride_view_form(*version) for version in versions}
    assert forms == {
        (3, 6): "runtime_row",
        (3, 7): "runtime_row",
        (3, 8): "slots",
        (3, 9): "selected_rows",
    }
    for form, rules in PER_GROUP.items():
        assert group_stride_form_of(rules["offset_form"]) == form
    assert group_stride_form_of("slots") == "slots"


def tile(name: str, count: int, size: int) -> Buffer:
    """``count`` buffers of ``size`` bytes (rows of 128 bytes, 8-bit elements)."""
    return Buffer(name, (count, size // 128, 128), 8)


# shared(u0: 16 KiB, distinct(u1: 512 B, u2: 4 KiB) x 4) (docs/planner.md): 18 KiB groups,
# 4.5 of u2's slots; shared(w: 2 KiB, distinct(a: 1 KiB, b: 4 KiB)) (test_tlx_group_stride.py,
# test/TLX/group-stride.mlir): 5 KiB groups.
EXAMPLES = (
    (
        (tile("u0", 2, 16 * KIB), tile("u1", 8, 512), tile("u2", 8, 4 * KIB)),
        Group("shared", (0, Group("distinct", (1, 2), 4))),
        18 * KIB,
    ),
    (
        (tile("w", 3, 2 * KIB), tile("a", 3, KIB), tile("b", 3, 4 * KIB)),
        Group("shared", (0, Group("distinct", (1, 2)))),
        5 * KIB,
    ),
)


@pytest.mark.parametrize("form", sorted(PER_GROUP))
@pytest.mark.parametrize(("buffers", "tree", "stride"), EXAMPLES)
def test_the_examples_reach_their_ideal_with_a_view_per_group(buffers, tree, stride, form):
    spec = Spec("spec", whole_views=False, **PER_GROUP[form])
    result = plan(spec, buffers, tree)
    groups = buffers[0].shape[0]
    assert result.ok and result.size_bytes == result.ideal_bytes == groups * stride
    assert result.layout == f"buffer group 0 repeated every {stride} bytes"
    assert form in {view.form for view in result.views}
    assert {view.group_stride for view in result.views if view.form == form} == {stride}
    assert_sound(result, Scenario(spec, buffers, tree))
    # Without the form the groups sit whole slots apart: larger.
    without = replace(spec, group_stride_form="slots")
    assert plan(without, buffers, tree).size_bytes > result.size_bytes


@pytest.mark.parametrize("form", sorted(PER_GROUP))
@settings(max_examples=500, deadline=None)
@given(scenarios(Storage.SMEM))
def test_free_stride_plans_are_sound_and_never_larger(form, scenario: Scenario):
    """Over random trees (index-aligned counts, group sizes, buffers outside the tree):
    every plan with the form is sound by the tests' own reading, no larger than the plan
    without it (and the same plan where that one is at its ideal) nor than the buffers
    unshared."""
    spec = replace(scenario.spec, whole_views=False, **PER_GROUP[form])
    result = plan(spec, scenario.buffers, scenario.tree)
    without = plan(replace(spec, group_stride_form="slots"), scenario.buffers, scenario.tree)
    per_group = any(view.form == form for view in result.views)
    event("a view per group" if per_group else "no view per group")
    assert result.size_bytes <= without.size_bytes
    if not result.ok:
        assert not without.ok  # only a region too large fails a well-formed tree
        return
    assert_sound(result, replace(scenario, spec=spec))
    # A buffer outside the tree starts at 0 after the layout of the tree, which is what
    # the form may shrink: where that buffer is the longest, the region is its end either way.
    inside = set(leaves(scenario.tree))
    all_inside = all(index in inside for index in range(len(scenario.buffers)))
    if all_inside and without.size_bytes == without.ideal_bytes:
        assert result.views == without.views
    order = tree_order(scenario.tree)
    order += [index for index in range(len(scenario.buffers)) if index not in order]
    assert result.size_bytes <= unshared_end(scenario.buffers, order)
    if per_group and all_inside:
        assert result.size_bytes < without.size_bytes


# bench/footprint.py's rules with a view per buffer group: 3.9's and 3.6's.
BENCH_RULES = (footprint.RULES[2], footprint.GROUP_STRIDE_RULES)


@pytest.mark.parametrize("rules", BENCH_RULES, ids=("selected_rows", "runtime_row"))
@pytest.mark.parametrize("index_aligned", (False, True))
def test_the_bench_trees_reach_the_aligned_ideal_with_equal_counts(index_aligned, rules):
    """bench/footprint.py's trees under 3.9's and 3.6's rules: every equal-count tree at
    the ideal with alignment counted, none larger than without the form (its "without a
    free group stride" line), and more at the ideal than without it."""
    rng = random.Random(1)
    cases = [footprint.random_tree(rng, index_aligned, rules) for _ in range(300)]
    at_ideal = at_ideal_before = 0
    for case in cases:
        result = plan(case.spec, case.buffers, case.tree)
        before = plan(
            replace(case.spec, group_stride_form="slots"), case.buffers, case.tree
        ).size_bytes
        bound = max(result.ideal_bytes, footprint.aligned_ideal_bytes(case))
        assert result.size_bytes <= before
        at_ideal += result.size_bytes <= bound
        at_ideal_before += before <= bound
        if not index_aligned:
            assert result.size_bytes <= bound, case
    assert at_ideal > at_ideal_before


@pytest.mark.parametrize("rules", BENCH_RULES, ids=("selected_rows", "runtime_row"))
def test_every_kernel_of_the_bench_keeps_its_plan(rules):
    """The GEMM ring and every tutorial kernel's spec (bench/footprint.py lists them) are at
    their ideal already: the form changes none of their plans."""
    for case in [footprint.gemm_ring(rules), *footprint.tutorial_cases(rules)]:
        result = plan(case.spec, case.buffers, case.tree)
        without = plan(replace(case.spec, group_stride_form="slots"), case.buffers, case.tree)
        assert result == without, case.name
        assert result.size_bytes == result.ideal_bytes, case.name


# Groups at starts of their own (View.group_starts; docs/planner.md, "What stays above the
# ideal"): where the group-by-group layout puts a user's buffers at starts no one view's slots
# hold, Triton 3.6, 3.7 and 3.9 give it a view per buffer group (a view per buffer with group
# size 1), each at its own start, written as a view at a byte offset (View.group_form: 3.9's
# sliced_rows, 3.6 and 3.7's indexed_row). shared(u2: 256 B, u0: 8 KiB, u1: 4 x 2 KiB): ideal
# 14 KiB, u1 at 0, 8, 10 and 12 KiB (slots 0, 4, 5, 6 of 2 KiB, which no view writes:
# 16.25 KiB without).
OWN_STARTS = (
    (tile("u0", 1, 8 * KIB), tile("u1", 4, 2 * KIB), tile("u2", 1, 256)),
    Group("shared", (2, 0, 1)),
)


@pytest.mark.parametrize("form", sorted(PER_GROUP))
def test_starts_no_view_writes_get_a_view_per_buffer(form):
    buffers, tree = OWN_STARTS
    spec = Spec("spec", whole_views=False, **PER_GROUP[form])
    result = plan(spec, buffers, tree)
    assert result.ok and result.ideal_bytes == 14 * KIB
    assert result.size_bytes == 14 * KIB
    assert "a view per buffer group where no one view fits" in result.layout
    view = result.views[1]
    assert view.form == "selected_rows" and view.period == 1 and view.slots == 1
    assert view.group_form == spec.offset_form
    assert all(other.group_form == "slots" for other in (result.views[0], result.views[2]))
    assert view.group_starts == (0, 8 * KIB, 10 * KIB, 12 * KIB)
    assert [view.start_of(index) for index in range(4)] == list(view.group_starts)
    assert view.index_program.group is not None and view.index_program.row is None
    assert [view.index_program.evaluate(index) for index in range(4)] == [0] * 4
    assert_sound(result, Scenario(spec, buffers, tree))
    # Without a view per buffer group, larger.
    without = replace(spec, group_stride_form="slots")
    assert plan(without, buffers, tree).size_bytes == 16 * KIB + 256


def test_the_bench_trees_with_index_aligned_counts_take_views_per_buffer():
    """bench/footprint.py's index-aligned trees under 3.9's and 3.6's rules: views at starts
    of their own place every one at the aligned ideal, the same region under both (only the
    group views' form differs), and more than without a view per buffer group."""
    rng = random.Random(1)
    rules = BENCH_RULES[0]
    cases = [footprint.random_tree(rng, True, rules) for _ in range(300)]
    gained = 0
    for case in cases:
        result = plan(case.spec, case.buffers, case.tree)
        runtime = plan(replace(case.spec, **PER_GROUP["runtime_row"]), case.buffers, case.tree)
        without = plan(replace(case.spec, group_stride_form="slots"), case.buffers, case.tree)
        bound = max(result.ideal_bytes, footprint.aligned_ideal_bytes(case))
        assert result.size_bytes == runtime.size_bytes <= bound, case
        assert result.size_bytes <= without.size_bytes, case
        gained += without.size_bytes > bound
        for view, other in zip(result.views, runtime.views, strict=True):
            assert view.group_starts == other.group_starts, case
            if view.group_starts:
                assert (view.group_form, other.group_form) == ("sliced_rows", "indexed_row")
    assert gained > 0
