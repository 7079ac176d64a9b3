"""Unit tests of what the planner reports about a plan: views rebuilt from
placements and their self-check, the memory map (``describe``), diagnostics as
data, buffer extents, strides, sharing segments, storage budgets and split advice."""

import dataclasses

import pytest
from _planner_helpers import (
    FA_TREE,
    SMEM,
    TMEM,
    A,
    B,
    fa_buffers,
    nvmma,
    slots,
)
from tlx.planner import (
    TMEM_COLUMNS,
    Buffer,
    Placement,
    Spec,
    Storage,
    Stride,
    advise_splits,
    buffer_extents,
    buffer_stride,
    check_view,
    describe,
    distinct,
    over_storage_budget,
    plan,
    shared,
    sharing_segments,
    smem_limit_for_target,
    storage_budget,
    view_of,
)

# --- Views rebuilt from placements, and the self-check -------------------------------------------


def test_view_of_a_placement_matches_the_plan():
    result = plan(Spec("qk_alias", TMEM), fa_buffers(), FA_TREE)
    for buffer, view in zip(fa_buffers(), result.views, strict=True):
        rebuilt = view_of(buffer, view.placement)
        assert dataclasses.replace(rebuilt, group_size=view.group_size) == view
        assert check_view(rebuilt, buffer, 0, 256) == ()


def check_placement(buffer, region, **coefficients):
    placement = dict(slots=region // 8192, period=1, scale=1, offset_slots=0, step=1)
    placement.update(coefficients)
    view = view_of(buffer, Placement(**placement))
    return [(d.kind, d.buffer, d.message) for d in check_view(view, buffer, 0, region)]


@pytest.mark.parametrize(
    "region, coefficients, message",
    [
        (
            16384,
            dict(slots=4),
            'the view of buffer "a" has 4 slots of 8192 bytes, more than the region of 16384 bytes',
        ),
        (
            16384,
            dict(offset_slots=1),
            'buffer "a" index 1 maps to slot 2, outside its view of 2 slots',
        ),
        (
            32768,
            dict(scale=0),
            'buffer "a" index 1 maps to slot 0, which another of its buffers already occupies',
        ),
        (
            32768,
            dict(period=0),
            'buffer "a" has slot coefficients period=0, scale=1, offset=0, '
            "step=1 and 4 slots; period and step must be at least 1, the others non-negative and "
            "the slots positive",
        ),
        (
            32768,
            dict(form="runtime_row"),
            'the view of buffer "a" starts at 0 bytes with groups 0 bytes apart and scale 1 in '
            "the form runtime_row; a view per buffer group (runtime_row or selected_rows, and "
            "only they) starts at a multiple of 128 bytes of SMEM, its groups a positive "
            "multiple of 128 bytes apart (selected_rows: or each at a multiple of 128 bytes of "
            "its own, the first at the view's start), scale 0",
        ),
        (
            32768,
            dict(
                slots=1,
                scale=0,
                form="selected_rows",
                group_starts=(0, 8192, 16384),
                group_form="indexed_row",
            ),
            'the view of buffer "a" has 3 group starts for 2 buffers in groups of 1',
        ),
        (
            32768,
            dict(slots=1, scale=0, form="selected_rows", group_starts=(0, 8192)),
            'the view of buffer "a" in the form selected_rows has group views in the form '
            "slots; selected_rows writes each group's view sliced_rows or indexed_row, every "
            "other form none (slots)",
        ),
        (
            32768,
            dict(slots=1, base=1024, form="sliced_rows", group_form="sliced_rows"),
            'the view of buffer "a" in the form sliced_rows has group views in the form '
            "sliced_rows; selected_rows writes each group's view sliced_rows or indexed_row, "
            "every other form none (slots)",
        ),
        (
            32768,
            dict(slots=1, scale=0, form="runtime_row", group_stride=4096),
            'the views of buffer "a"\'s buffer groups are 4096 bytes apart, less than the view '
            "of one group spans (1 slots of 8192 bytes)",
        ),
    ],
)
def test_check_view_reports_each_violation(region, coefficients, message):
    assert check_placement(A, region, **coefficients) == [("unsound_view", 0, message)]


def test_check_view_reports_broken_alignment():
    y = Buffer("y", (2, 4, 64), 16, SMEM, nvmma(128))  # 512 bytes, 1024-byte alignment
    view = view_of(y, Placement(slots=8, period=1, scale=2, offset_slots=1, step=1))
    (problem,) = check_view(view, y, 3, 4096)
    assert problem.buffer == 3
    assert problem.message == (
        'buffer "y" index 0 starts at 512 bytes, which breaks its 1024-byte alignment'
    )


def test_check_view_reports_a_buffer_without_size():
    bad = Buffer("bad", (2, 64), 0)
    view = view_of(bad, Placement(slots=1, period=1, scale=1, offset_slots=0, step=1))
    (problem,) = check_view(view, bad, 0, 128)
    assert problem.message == 'buffer "bad" has no size (shape [2, 64], element_bits=0)'


def test_slot_of_follows_the_index_map():
    view = view_of(
        Buffer("v", (8, 4), 32), Placement(slots=16, period=4, scale=8, offset_slots=2, step=1)
    )
    assert slots(view, 8) == [2, 3, 4, 5, 10, 11, 12, 13]
    spread = dataclasses.replace(view, step=2, period=2, scale=1)
    assert slots(spread, 4) == [2, 4, 3, 5]


# --- describe ------------------------------------------------------------------------------------


def test_describe_renders_a_memory_map():
    buffers = fa_buffers()
    text = plan(Spec("qk_alias", TMEM), buffers, FA_TREE).describe(buffers)
    lines = text.splitlines()
    assert lines[0] == (
        "tmem region: 256 columns x 128 rows = 131072 bytes (ideal 131072, padding 0), "
        "group-major, backing [128, 256] x i32, alignment 1 byte"
    )
    assert lines[1].split() == [
        *("buffer", "offset", "size", "stride", "slot", "of", "buffer", "i", "slots")
    ]
    assert lines[2].split() == ['"qk"', "0", "128", "128", "i", "2"]
    # p: four 16-column slices per group, then 64 columns on to the next group.
    assert lines[3].split() == [
        *('"p"', "0", "16", "16,", "80", "every", "4", "8", "(i", "/", "4)", "+", "(i", "%", "4)")
    ] + ["16"]
    assert lines[4].split() == ['"alpha"', "64", "1", "128", "128", "i", "+", "64", "256"]
    assert lines[7] == "  (offset, size and stride in columns)"
    # Then where buffers share columns, group by group.
    assert lines[8].split() == ["columns", "group", "shared", "by"]
    assert lines[9].split() == ["0", "..", "16", "0", '"qk"[0]', '"p"[0]']
    assert lines[13].split() == ["64", "..", "65", "0", '"qk"[0]', '"alpha"[0]']
    assert lines[16].split() == ["128", "..", "144", "1", '"qk"[1]', '"p"[4]']
    assert len(lines) == 8 + 1 + 2 * 7


def test_describe_lists_diagnostics_of_a_failed_plan():
    e = Buffer("e", (2, 64), 0)
    result = plan(Spec("s"), [A, e], shared(0, 1))
    text = describe(result, [A, e], "s")
    assert text.startswith("smem region: not planned\n")
    assert text.splitlines()[-1] == 'error: buffer "e" has element_bits=0; it must be positive'


def test_diagnostics_are_data():
    big = Buffer("big", (4, 128, 128), 32)
    (error,) = plan(Spec("s"), [big]).errors
    assert (error.kind, error.buffer, error.buffers, error.numbers) == (
        "over_smem_limit",
        -1,
        (),
        (262144, 232448),
    )
    assert error.template == (
        "spec {spec} needs 262144 bytes of shared memory, more than the target's limit of "
        "232448 bytes"
    )
    assert error.format("other", ["x"]).startswith('spec "other" needs')


# --- the plan report: extents, strides, segments, advice -----------------------------------------


def test_extents_place_every_buffer_of_every_user():
    buffers = fa_buffers()
    result = plan(Spec("qk_alias", TMEM), buffers, FA_TREE)
    extents = buffer_extents(result, buffers)
    assert len(extents) == 2 + 8 + 2 + 2 + 2
    p_slices = [(e.index, e.buffer_group, e.start, e.end) for e in extents if e.user == 1]
    assert p_slices[:5] == [(0, 0, 0, 16), (1, 0, 16, 32), (2, 0, 32, 48), (3, 0, 48, 64)] + [
        (4, 1, 128, 144)
    ]
    alpha = [(e.buffer_group, e.start, e.end) for e in extents if e.user == 2]
    assert alpha == [(0, 64, 65), (1, 192, 193)]


def test_stride_is_even_or_says_where_it_jumps():
    buffers = fa_buffers()
    views = plan(Spec("qk_alias", TMEM), buffers, FA_TREE).views
    assert buffer_stride(views[0]) == Stride(128, 128, 1) and buffer_stride(views[0]).even
    p_stride = buffer_stride(views[1])
    assert p_stride == Stride(16, 80, 4) and not p_stride.even


def test_segments_cut_the_region_where_occupants_change():
    buffers = [A, B]
    result = plan(Spec("s"), buffers, shared(0, 1))
    extents = buffer_extents(result, buffers)
    segments = sharing_segments(result, extents)
    # a (2 x 8192 bytes) and b (2 x 4096) share the start of each group's bytes.
    assert [(s.start, s.end, s.buffer_group, len(s.occupants)) for s in segments] == [
        (0, 4096, 0, 2),
        (4096, 8192, 0, 1),
        (8192, 12288, 1, 2),
        (12288, 16384, 1, 1),
    ]


def test_segments_show_padding_and_mixed_groups():
    small = Buffer("small", (1, 4), 8)  # 4 bytes; a starts at a multiple of its 8192
    result = plan(Spec("s"), [small, A], distinct(0, 1))
    segments = sharing_segments(result, buffer_extents(result, [small, A]))
    assert (segments[1].start, segments[1].end, segments[1].buffer_group) == (4, 8192, -1)
    assert segments[1].occupants == ()
    # "outside" is not in the tree: at offset 0, its buffer 1 (group 1) overlaps a[0]
    # (group 0), a stretch of mixed groups.
    outside = Buffer("outside", (2, 64, 64), 16)
    buffers = [small, A, outside]
    result = plan(Spec("s"), buffers, distinct(0, 1))
    extents = buffer_extents(result, buffers)
    mixed = [s for s in sharing_segments(result, extents) if s.buffer_group == -1 and s.occupants]
    assert mixed and {extents[i].user for i in mixed[0].occupants} == {1, 2}


def test_storage_budget_is_the_targets():
    assert storage_budget(Storage.SMEM, 90) == smem_limit_for_target(90) == 232448
    assert storage_budget(Storage.TMEM, 100) == TMEM_COLUMNS == 512
    assert storage_budget(Storage.TMEM, 90) == 0


def test_ctas_sharing_an_sm_share_its_storage():
    # 228 KiB an SM on sm_90a and sm_100a, less 1 KiB reserved for each CTA; 164 KiB on sm_80.
    assert storage_budget(Storage.SMEM, 90, 1) == 227 * 1024
    assert storage_budget(Storage.SMEM, 90, 2) == 113 * 1024
    assert storage_budget(Storage.SMEM, 100, 3) == 76 * 1024 - 1024
    assert storage_budget(Storage.SMEM, 80, 2) == 82 * 1024 - 1024
    assert storage_budget(Storage.TMEM, 100, 2) == TMEM_COLUMNS // 2
    assert storage_budget(Storage.TMEM, 90, 2) == 0
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="ctas_per_sm must be a positive int"):
            storage_budget(Storage.SMEM, 90, bad)


def test_advice_for_the_flash_attention_tmem_tree():
    # Seed 001's example at HEAD_DIM=64: qk_storage takes 256 columns, the O
    # accumulators 128 more; alpha alone in a region of its own takes 32.
    buffers = fa_buffers()
    spec = Spec("qk_alias", TMEM, capability=100)
    splits = {split.buffers: split for split in advise_splits(spec, buffers, FA_TREE, 128)}
    alpha = splits[(2,)]
    assert alpha.shared_node == () and alpha.shared_with == (0,)
    assert alpha.own_region and (alpha.region_units, alpha.own_region_units) == (256, 32)
    assert (alpha.total_units, alpha.budget_units, alpha.left_units) == (416, 512, 96)
    assert alpha.fits
    assert alpha.message == (
        '"alpha" need not share with "qk": in a region of their own (32 columns) beside spec '
        '"qk_alias" (256 columns), the kernel would use 416 of 512 columns, 96 left'
    )
    # qk itself cannot leave: beside the rest, the region doubles to 512 columns.
    qk = splits[(0,)]
    assert not qk.fits and qk.total_units == 640 and qk.left_units == -128
    assert qk.message.startswith('"qk" must share with "p", "alpha", "l" and "m": beside them')
    # At HEAD_DIM=128 the O accumulators take 256 columns: nothing may leave.
    assert not any(split.fits for split in advise_splits(spec, buffers, FA_TREE, 256))


def test_advice_skips_children_the_layout_already_separates():
    # b (a 128-byte buffer) fits after a's 16 KiB in each group? No: shared
    # children start together, so b always overlaps a.
    buffers = [A, B]
    splits = advise_splits(Spec("s", capability=90), buffers, shared(0, 1))
    assert {split.buffers for split in splits} == {(0,), (1,)}
    # A child whose buffers share nothing gets no advice: flags after the halves.
    words = Buffer("words", (2, 32, 32), 32)
    halves = Buffer("halves", (4, 32, 32), 16)
    flags = Buffer("flags", (2, 4, 32), 8)
    tree = shared(0, distinct(shared(1, group_size=2), 2))
    splits = advise_splits(Spec("s", capability=90), [words, halves, flags], tree)
    assert (2,) not in {split.buffers for split in splits}
    assert (1,) in {split.buffers for split in splits}


def test_no_advice_for_a_failed_plan():
    big = Buffer("big", (4, 128, 256), 32)
    assert advise_splits(Spec("s", capability=90), [big, A], shared(0, 1)) == ()


def test_regions_within_the_budget_are_no_error():
    assert over_storage_budget(SMEM, 90, 232448) is None
    assert over_storage_budget(TMEM, 100, TMEM_COLUMNS) is None
    assert over_storage_budget(SMEM, 90, 0) is None


def test_regions_over_the_budget_are_the_planners_error_with_both_numbers():
    error = over_storage_budget(SMEM, 90, 245760)
    assert (error.severity, error.kind, error.buffer) == ("error", "over_storage_budget", -1)
    assert error.numbers == (245760, 232448)
    assert error.message == (
        "the kernel's smem regions take 245760 bytes, 13312 bytes more than the 232448 bytes "
        "one CTA has on sm_90a"
    )
    tmem_error = over_storage_budget(TMEM, 100, 640)
    assert tmem_error.numbers == (640, 512)
    assert "640 columns, 128 columns more than the 512 columns" in tmem_error.message
    # A target without tensor memory has none to spare.
    hopper = over_storage_budget(TMEM, 90, 128)
    assert hopper.numbers == (128, 0)
    assert hopper.message == "the kernel's tmem regions take 128 columns, but sm_90a has no tmem"


def test_regions_over_a_share_of_the_sm_name_the_ctas_sharing_it():
    # 120 KiB fits one CTA of sm_90a, not each of two.
    assert over_storage_budget(SMEM, 90, 120 * 1024) is None
    error = over_storage_budget(SMEM, 90, 120 * 1024, 2)
    assert error.numbers == (122880, 115712)
    assert error.message == (
        "the kernel's smem regions take 122880 bytes, 7168 bytes more than the 115712 bytes "
        "one CTA has on sm_90a when 2 CTAs share an SM"
    )
    assert over_storage_budget(TMEM, 100, 256, 2) is None
    assert over_storage_budget(TMEM, 100, 257, 2).numbers == (257, 256)
    with pytest.raises(ValueError, match="got 0"):
        over_storage_budget(SMEM, 90, 1, 0)
