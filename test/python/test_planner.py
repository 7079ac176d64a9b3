"""Unit tests of the storage alias planner (tlx.planner over tlx._planner): one
test per rule and per diagnostic, with the expected numbers worked out by hand.
The views, the memory map and the plan report are in test_planner_report.py, the
Python layer and the binding in test_planner_python.py."""

import pytest
from _planner_helpers import (
    FA_TREE,
    SMEM,
    TMEM,
    TMEM_LAYOUT,
    TMEM_LAYOUT_64,
    UNPACKED,
    A,
    B,
    C,
    fa_buffers,
    nvmma,
    only_error,
    slots,
    tmem,
)
from tlx.planner import (
    Buffer,
    Layout,
    LayoutFamily,
    LayoutKind,
    Spec,
    buffer_size,
    distinct,
    plan,
    required_alignment,
    shared,
)

# --- Rule 1: buffer sizes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "buffer, expected",
    [
        (Buffer("a", (2, 64, 64), 16), 8192),
        (Buffer("rank1", (4,), 32), 4),
        (Buffer("fp4", (2, 3, 5), 4), 8),  # 15 elements x 4 bits = 60 bits -> 8 bytes
        (Buffer("small_multiple", (2, 3, 128), 8), 384),
    ],
)
def test_smem_buffer_size_is_bytes_of_one_buffer(buffer, expected):
    assert buffer_size(buffer) == expected


@pytest.mark.parametrize(
    "buffer, expected",
    [
        (tmem("f32", (2, 128, 128), 32), 128),
        (tmem("f16_packed", (2, 128, 128), 16), 64),
        (tmem("f16_unpacked", (2, 128, 128), 16, UNPACKED), 128),
        (tmem("fp8_packed", (2, 128, 32), 8), 8),
        (tmem("one_f16_column", (2, 128, 1), 16), 1),
        (tmem("two_row_blocks", (2, 256, 64), 32), 128),
        (tmem("m64", (2, 64, 64), 32, TMEM_LAYOUT_64), 64),
    ],
)
def test_tmem_buffer_size_is_32_bit_columns(buffer, expected):
    assert buffer_size(buffer) == expected


@pytest.mark.parametrize(
    "layout, expected",
    [
        (Layout(), 128),
        (nvmma(0), 128),
        (nvmma(32), 256),
        (nvmma(64), 512),
        (nvmma(128), 1024),
    ],
)
def test_smem_alignment_is_128_bytes_times_max_phase(layout, expected):
    assert required_alignment(Buffer("x", (2, 64, 64), 16, SMEM, layout)) == expected


def test_tmem_alignment_is_one_column():
    assert required_alignment(tmem("t", (2, 128, 64), 32)) == 1


# --- Rules 3-6: trees, strides, regions, views --------------------------------------------------


def test_flash_attention_tmem_plan():
    # distinct: p's 4 slices at 0..63, alpha at 64, l at 65, m at 66 (67 columns);
    # shared with qk's 128 columns -> 128 columns per group, 2 groups -> 256 columns.
    result = plan(Spec("qk_alias", TMEM), fa_buffers(), FA_TREE)
    assert result.ok and not result.diagnostics
    assert result.region_size == 256 and result.layout == "group-major"
    assert result.backing_shape == result.backing_block == (128, 256)
    assert result.backing_element_bits == 32
    assert result.size_bytes == 128 * 256 * 4
    assert result.alignment == 1
    assert result.ideal_bytes == 128 * 256 * 4 and result.padding_bytes == 0
    qk, p, alpha, l_, m = result.views
    assert (qk.offset, qk.scale, qk.slots, qk.shape) == (0, 1, 2, (2, 128, 128))
    assert qk.identity_index
    assert (p.offset, p.group_size, p.period, p.scale, p.offset_slots, p.step) == (
        0,
        4,
        4,
        8,
        0,
        1,
    )
    assert p.slots == 16
    assert slots(p, 8) == [0, 1, 2, 3, 8, 9, 10, 11]
    assert [(v.offset, v.scale, v.offset_slots, v.slots) for v in (alpha, l_, m)] == [
        (64, 128, 64, 256),
        (65, 128, 65, 256),
        (66, 128, 66, 256),
    ]
    assert slots(alpha, 2) == [64, 192]


def test_smem_shared_of_distinct_and_buffer():
    # distinct(a, b): a at 0 (8192), b at 8192 (4096); shared with c (16384):
    # 16384 per group, 2 groups, group-major.
    result = plan(Spec("s"), [A, B, C], shared(distinct(0, 1), 2))
    assert result.ok and not result.diagnostics
    assert result.size_bytes == 32768 and result.layout == "group-major"
    assert result.backing_shape == (256, 128)
    assert result.padding_bytes == 32768 - 2 * 16384
    a, b, c = result.views
    assert (a.offset, a.scale, a.offset_slots, a.slots) == (0, 2, 0, 4)
    assert (b.offset, b.scale, b.offset_slots, b.slots) == (8192, 4, 2, 8)
    assert (c.offset, c.scale, c.slots) == (0, 1, 2)
    assert slots(b, 2) == [2, 6]


def test_child_major_packs_a_distinct_whose_sizes_do_not_line_up():
    # shared(a, b) needs 8192 per group and c (16384) must start at a multiple of
    # its own size: group-major needs 32768 per group. Child-major, the two pairs
    # take [0, 16384) and c's buffers follow: the ideal, 2 x (8192 + 16384).
    result = plan(Spec("s"), [A, B, C], distinct(shared(0, 1), 2))
    assert result.ok and result.layout == "child-major at 1 of 2 reuse groups"
    assert result.size_bytes == result.ideal_bytes == 49152
    assert result.padding_bytes == 0
    a, b, c = result.views
    assert slots(a, 2) == [0, 1] and slots(b, 2) == [0, 2]
    assert (c.offset, c.offset_slots) == (16384, 1)
    assert slots(c, 2) == [1, 2]
    group_major = plan(Spec("s"), [A, B, C], distinct(shared(0, 1), 2), LayoutFamily.GROUP_MAJOR)
    assert group_major.size_bytes == 65536 and group_major.layout == "group-major"


def test_the_gemm_ring_and_the_f32_f16_pair_reach_the_ideal():
    a = Buffer("a", (4, 128, 64), 16, SMEM, nvmma(128))  # 16 KiB
    b = Buffer("b", (4, 64, 256), 16, SMEM, nvmma(128))  # 32 KiB
    ring = plan(Spec("ring", capability=90), [a, b], distinct(0, 1))
    assert ring.ok and ring.size_bytes == ring.ideal_bytes == 196608
    assert [slots(view, 4) for view in ring.views] == [[0, 1, 2, 3], [2, 3, 4, 5]]
    assert ring.alignment == 1024
    old = plan(Spec("ring", capability=90), [a, b], distinct(0, 1), LayoutFamily.GROUP_MAJOR)
    assert old.size_bytes == 262144 and not old.ok
    f32 = Buffer("f32", (2, 64, 64), 32)
    f16 = Buffer("f16", (2, 64, 64), 16)
    pair = plan(Spec("pair"), [f32, f16], distinct(0, 1))
    assert pair.size_bytes == pair.ideal_bytes == 49152


def test_nvmma_128_byte_swizzle_buffer_starts_1024_aligned():
    x = Buffer("x", (2, 4, 128), 8)  # 512 bytes, 128-byte alignment
    y = Buffer("y", (2, 4, 64), 16, SMEM, nvmma(128))  # 512 bytes, 1024-byte alignment
    result = plan(Spec("s"), [x, y], distinct(0, 1))
    assert result.ok and result.layout == "child-major"
    view_x, view_y = result.views
    assert view_y.alignment == 1024 and result.alignment == 1024
    assert view_y.offset == 1024  # after x's two buffers, 1024-aligned
    # y's buffers are 1024 bytes apart: slot step 2 of 512 bytes.
    assert slots(view_y, 2) == [2, 4]
    assert slots(view_x, 2) == [0, 1]
    assert result.size_bytes == 2560


def test_group_major_period_is_a_whole_number_of_every_buffer_size():
    x = Buffer("x", (2, 3, 128), 8)  # 384 bytes
    y = Buffer("y", (2, 4, 128), 8)  # 512 bytes
    result = plan(Spec("s"), [x, y], shared(0, 1))
    assert result.ok
    # 512 per group rounded up to lcm(384, 512, 128) = 1536.
    assert result.size_bytes == 3072
    assert [v.slots for v in result.views] == [8, 6]
    assert [v.scale for v in result.views] == [4, 3]


def test_group_size_makes_consecutive_buffers_one_group():
    b4 = Buffer("b4", (4, 64, 32), 32)  # 8192 bytes
    result = plan(Spec("s"), [A, b4], shared(0, shared(1, group_size=2)))
    assert result.ok
    a, b = result.views
    assert b.group_size == 2
    assert slots(b, 4) == [0, 1, 2, 3]
    assert slots(a, 2) == [0, 2]
    assert result.size_bytes == 32768
    # Groups of 2 buffers 2 slots apart at offset 0: slot(i) == i, nothing to rewrite.
    assert b.identity_index
    assert not a.identity_index


def test_nested_group_sizes_multiply():
    p = Buffer("p", (8, 16, 16), 16)  # 512 bytes
    q = Buffer("q", (2, 16, 64), 16)  # 2048 bytes
    tree = shared(1, shared(shared(0, group_size=2), group_size=2))
    result = plan(Spec("s"), [p, q], tree)
    assert result.ok
    assert result.views[0].group_size == 4
    assert slots(result.views[0], 8) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert result.views[0].identity_index


def test_counts_are_index_aligned():
    # A one-buffer tile shares bytes with buffer group 0 of a two-stage ring.
    epilogue = Buffer("epilogue", (1, 64, 64), 16)  # 8192 bytes
    a = Buffer("a", (2, 32, 64), 16)  # 4096 bytes
    b = Buffer("b", (2, 32, 64), 16)
    result = plan(Spec("s"), [epilogue, a, b], shared(0, distinct(1, 2)))
    assert result.ok and not result.diagnostics
    assert result.size_bytes == result.ideal_bytes == 16384
    assert slots(result.views[0], 1) == [0]
    assert slots(result.views[1], 2) == [0, 2] and slots(result.views[2], 2) == [1, 3]


def test_counts_that_look_like_forgotten_sub_tiles_warn():
    c4 = Buffer("c", (4, 128, 64), 16)
    result = plan(Spec("s"), [A, c4], shared(0, 1))
    assert result.ok
    (warning,) = result.warnings
    assert (warning.kind, warning.buffer, warning.buffers, warning.numbers) == (
        "forgotten_sub_tiles",
        1,
        (0, 1),
        (2, 4, 2),
    )
    assert warning.message == (
        'buffers "a" (2 buffer groups) and "c" (4 buffer groups) share bytes in spec "s": if '
        '"c" holds 2 sub-tiles of each "a" buffer, group them with group_size=2 (as written, '
        'buffer i of "c" shares bytes with buffer i of "a", and its buffers 2 .. 3 with none)'
    )
    # One buffer, or counts that are not multiples, or group_size: no warning.
    e = Buffer("e", (3, 64, 64), 16)
    assert not plan(Spec("s"), [A, e], shared(0, 1)).warnings
    assert not plan(Spec("s"), [A, c4], shared(0, shared(1, group_size=2))).warnings


def test_periodic_layout_when_counts_differ():
    a = Buffer("a", (3, 16, 64), 16)  # 2048 bytes
    b = Buffer("b", (2, 32, 64), 16)  # 4096 bytes
    result = plan(Spec("s", whole_views=False), [a, b], distinct(0, 1))
    assert result.ok
    assert result.layout == "child-major, repeating every 2 buffer groups"
    assert result.size_bytes == result.ideal_bytes == 14336
    view_a, view_b = result.views
    assert (view_a.period, view_a.scale, view_a.step) == (2, 6, 1)
    assert slots(view_a, 3) == [0, 1, 6]
    assert slots(view_b, 2) == [1, 2]
    assert [v.slots for v in result.views] == [7, 3]
    node_by_node = plan(
        Spec("s", whole_views=False), [a, b], distinct(0, 1), LayoutFamily.NODE_BY_NODE
    )
    assert node_by_node.size_bytes == 16384
    # Triton 3.8's whole views round the region to a multiple of 4096.
    assert plan(Spec("s"), [a, b], distinct(0, 1)).size_bytes == 16384


def test_padding_names_the_buffer_that_must_start_at_its_size():
    small = Buffer("small", (1, 4, 128), 8)  # 512 bytes
    big = Buffer("big", (1, 128, 64), 16)  # 16384 bytes
    result = plan(Spec("s"), [small, big], distinct(0, 1))
    assert result.size_bytes == 32768 and result.ideal_bytes == 16896
    assert result.padding_bytes == 32768 - 16896
    (hole,) = result.padding
    assert (hole.kind, hole.buffers, hole.bytes) == ("aligned_start", (1, 0), 15872)
    assert hole.reason == (
        'buffer "big" starts at a multiple of its 16384-byte size after buffer "small" ends '
        "elsewhere"
    )
    x = Buffer("x", (1, 3, 128), 8)  # 384 bytes
    y = Buffer("y", (1, 4, 128), 8)  # 512 bytes
    (rounding,) = plan(Spec("s"), [x, y]).padding
    assert (rounding.kind, rounding.bytes) == ("region_rounding", 1024)
    assert "whole slots (Triton 3.8" in rounding.reason


def test_without_tree_every_buffer_sits_at_offset_zero():
    result = plan(Spec("s"), [A, C])
    # The warning names every buffer: forgetting the tree stacks them at offset 0.
    (warning,) = result.diagnostics
    assert (warning.severity, warning.kind) == ("warning", "no_overlap_tree")
    assert warning.buffers == (0, 1) and warning.numbers == (2,)
    assert "every buffer starts at offset 0" in warning.message
    assert '"a"' in warning.message and '"c"' in warning.message
    # An explicit size says it is meant; one buffer has nothing to share.
    assert not plan(Spec("s", explicit_size_bytes=32768), [A, C]).diagnostics
    assert not plan(Spec("s"), [A]).diagnostics
    assert result.size_bytes == 32768  # max(2 x 8192, 2 x 16384)
    for view in result.views:
        assert view.offset == 0 and view.identity_index
    assert [v.slots for v in result.views] == [4, 2]
    assert result.padding_bytes == 0


def test_without_tree_region_is_rounded_to_every_view():
    x = Buffer("x", (1, 3, 128), 8)  # 384 bytes
    y = Buffer("y", (1, 4, 128), 8)  # 512 bytes
    result = plan(Spec("s"), [x, y])
    assert result.ok
    assert result.size_bytes == 1536  # lcm(384, 512)
    assert result.padding_bytes == 1536 - 512
    assert plan(Spec("s", whole_views=False), [x, y]).size_bytes == 512


def test_smem_region_is_a_multiple_of_128_bytes():
    tiny = Buffer("tiny", (1, 16), 16)  # 32 bytes
    result = plan(Spec("s"), [tiny])
    assert result.size_bytes == 128
    assert result.backing_shape == (1, 128)
    assert result.views[0].slots == 4
    assert result.padding_bytes == 0  # the ideal rounds starts to 128 bytes too


def test_tmem_rows_are_64_when_every_user_is_64_rows_with_block_m_64():
    t = tmem("t", (2, 64, 64), 32, TMEM_LAYOUT_64)
    result = plan(Spec("t", TMEM), [t])
    assert result.ok
    assert result.backing_shape == (64, 128)
    assert result.size_bytes == 64 * 128 * 4


def test_tmem_rows_are_128_when_any_user_needs_them():
    small = tmem("small", (2, 64, 64), 32, TMEM_LAYOUT_64)
    full = tmem("full", (2, 128, 16), 32)
    assert plan(Spec("t", TMEM), [small, full]).backing_shape == (128, 128)


def test_tmem_columns_are_a_power_of_two_of_at_least_32():
    one = tmem("one", (1, 128, 8), 32)
    assert plan(Spec("t", TMEM), [one]).backing_shape == (128, 32)
    three = tmem("three", (3, 128, 32), 32)  # 96 columns
    result = plan(Spec("t", TMEM), [three])
    assert result.backing_shape == (128, 128)
    assert result.padding_bytes == (128 - 96) * 128 * 4
    (rounding,) = result.padding
    assert rounding.kind == "region_rounding" and rounding.bytes == result.padding_bytes


# --- Explicit sizes and limits -------------------------------------------------------------------


def test_explicit_size_larger_than_needed_is_kept():
    result = plan(Spec("s", explicit_size_bytes=65536), [A, C])
    assert result.ok
    assert result.size_bytes == 65536
    assert [v.slots for v in result.views] == [8, 4]
    assert result.padding_bytes == 65536 - 32768


def test_explicit_size_too_small_states_the_bytes_needed():
    error = only_error(plan(Spec("s", explicit_size_bytes=16384), [A, C]))
    assert error.buffer == -1
    assert error.message == (
        'buffer_size_bytes=16384 of spec "s" is too small: the plan needs 32768 bytes'
    )


def test_explicit_size_must_be_positive():
    error = only_error(plan(Spec("s", explicit_size_bytes=0), [A]))
    assert error.message == 'buffer_size_bytes of spec "s" must be positive, got 0'


def test_explicit_size_must_be_a_multiple_of_128_bytes():
    d = Buffer("d", (1, 32), 16)  # 64 bytes
    error = only_error(plan(Spec("s", explicit_size_bytes=192), [d]))
    assert "buffer_size_bytes=192" in error.message
    assert "not a multiple of 128 bytes" in error.message


def test_explicit_size_must_be_whole_buffers_of_every_view():
    x = Buffer("x", (1, 3, 128), 8)  # 384 bytes
    error = only_error(plan(Spec("s", explicit_size_bytes=1024), [x]))
    assert error.buffer == 0
    assert error.message == (
        'buffer_size_bytes=1024 of spec "s" is not a whole number of buffer "x"\'s '
        "384-byte buffers; its view must cover the region exactly"
    )


def test_smem_over_the_limit_states_both_numbers():
    big = Buffer("big", (4, 128, 128), 32)  # 4 x 65536 bytes
    error = only_error(plan(Spec("s"), [big]))
    assert error.message == (
        'spec "s" needs 262144 bytes of shared memory, more than the target\'s limit of '
        "232448 bytes"
    )
    three = Buffer("three", (3, 128, 128), 32)  # 196608 bytes
    assert plan(Spec("s"), [three]).ok


def test_plan_over_the_limit_still_reports_its_layout():
    big = Buffer("big", (4, 128, 128), 32)
    result = plan(Spec("s"), [big])
    assert not result.ok
    assert result.size_bytes == 262144 and len(result.views) == 1


def test_tmem_over_512_columns():
    qk = tmem("qk", (3, 128, 256), 32)  # 768 columns
    error = only_error(plan(Spec("t", TMEM), [qk]))
    assert error.message == (
        'spec "t" needs 1024 columns of tensor memory (768 rounded up to a power of two), '
        "more than the 512 columns TMEM has"
    )


def test_tmem_explicit_size_larger_than_needed_is_kept():
    result = plan(Spec("t", TMEM, explicit_size_bytes=128 * 512 * 4), fa_buffers(), FA_TREE)
    assert result.ok
    assert result.backing_shape == (128, 512)
    assert result.views[0].slots == 4
    assert result.padding_bytes == 256 * 128 * 4


def test_tmem_explicit_size_too_small_states_the_bytes_needed():
    error = only_error(plan(Spec("t", TMEM, explicit_size_bytes=65536), fa_buffers(), FA_TREE))
    assert error.message == (
        'buffer_size_bytes=65536 of spec "t" is too small: the plan needs 131072 bytes '
        "(256 columns x 128 rows x 4 bytes)"
    )


def test_tmem_explicit_size_must_be_a_power_of_two_of_columns():
    spec = Spec("t", TMEM, explicit_size_bytes=128 * 257 * 4)
    error = only_error(plan(spec, fa_buffers(), FA_TREE))
    assert error.message == (
        'buffer_size_bytes=131584 of spec "t" is not a power-of-two number of TMEM columns '
        "of 128 rows x 4 bytes; use 262144 bytes"
    )


def test_tmem_explicit_size_over_512_columns():
    spec = Spec("t", TMEM, explicit_size_bytes=128 * 1024 * 4)
    error = only_error(plan(spec, fa_buffers(), FA_TREE))
    assert error.message == (
        'spec "t" needs 1024 columns of tensor memory, more than the 512 columns TMEM has'
    )


# --- Tree diagnostics ----------------------------------------------------------------------------


def test_buffer_count_not_a_multiple_of_group_size():
    p = Buffer("p", (6, 16, 16), 16)
    error = only_error(plan(Spec("s"), [p], shared(shared(0, group_size=4))))
    assert error.buffer == 0
    assert error.message == (
        'buffer "p" has 6 buffers, which is not a multiple of group_size 4 (the product of '
        "its reuse groups)"
    )


def test_empty_group():
    error = only_error(plan(Spec("s"), [A], shared(0, shared())))
    assert error.message == 'a reuse_group in the overlap tree of spec "s" has no children'


@pytest.mark.parametrize("group_size", [0, -2])
def test_group_size_below_one(group_size):
    error = only_error(plan(Spec("s"), [A], shared(0, group_size=group_size)))
    assert error.message == (
        f'a reuse_group in the overlap tree of spec "s" has group_size={group_size}; '
        "it must be at least 1"
    )


def test_buffer_used_twice_in_the_tree():
    error = only_error(plan(Spec("s"), [A, B], distinct(0, shared(1, 0))))
    assert error.buffer == 0
    assert error.message == 'buffer "a" appears more than once in the overlap tree of spec "s"'


@pytest.mark.parametrize("index", [2, -1])
def test_buffer_index_out_of_range(index):
    error = only_error(plan(Spec("s"), [A, B], shared(0, 1, index)))
    assert error.message == (
        f'the overlap tree of spec "s" names buffer index {index}, but the spec has 2 buffers'
    )


def test_buffer_outside_the_tree_is_a_warning_and_sits_at_offset_zero():
    result = plan(Spec("s"), [A, B, C], distinct(0, 1))
    assert result.ok
    (warning,) = result.warnings
    assert warning.buffer == 2
    assert warning.message == (
        'buffer "c" is not in the overlap tree of spec "s"; placed at offset 0'
    )
    c = result.views[2]
    assert (c.offset, c.group_size) == (0, 1) and c.identity_index
    assert result.size_bytes == 32768  # the tree needs 2 x 12288, c needs 2 x 16384


def test_buffer_outside_the_tree_must_still_fit():
    big = Buffer("big", (3, 128, 64), 16)  # 3 x 16384 bytes
    result = plan(Spec("s"), [A, B, big], distinct(0, 1))
    assert result.size_bytes == 49152
    assert result.views[2].slots == 3


def test_spec_without_buffers_is_a_warning():
    result = plan(Spec("empty"), [])
    assert result.ok
    assert [d.message for d in result.warnings] == ['spec "empty" has no buffers']
    assert result.views == ()


# --- Buffer diagnostics --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "buffer, message",
    [
        (Buffer("a", (), 16), 'buffer "a" has shape []; it needs a leading buffer dimension'),
        (
            Buffer("a", (2, 0, 64), 16),
            'buffer "a" has shape [2, 0, 64]; every dimension must be positive',
        ),
        (
            Buffer("a", (0, 64), 16),
            'buffer "a" has shape [0, 64]; every dimension must be positive',
        ),
        (Buffer("a", (2, 64), 0), 'buffer "a" has element_bits=0; it must be positive'),
        (Buffer("a", (2, 64), -8), 'buffer "a" has element_bits=-8; it must be positive'),
        (
            Buffer("a", (2, 64), 16, SMEM, TMEM_LAYOUT),
            'buffer "a" is in smem but has a tensor_memory layout; SMEM buffers need a shared '
            "memory layout",
        ),
        (
            Buffer("a", (2, 64), 16, SMEM, nvmma(48)),
            'buffer "a" has an nvmma_shared layout with a 48-byte swizzle; expected 0, 32, 64 '
            "or 128",
        ),
    ],
)
def test_invalid_smem_buffer(buffer, message):
    result = plan(Spec("s"), [buffer])
    assert [(d.buffer, d.message) for d in result.errors] == [(0, message)]
    assert result.views == ()


@pytest.mark.parametrize(
    "buffer, message",
    [
        (
            Buffer("t", (2, 128, 64), 32, TMEM),
            'buffer "t" is in tmem but has a swizzled_shared layout; TMEM buffers need a '
            "tensor_memory layout",
        ),
        (
            tmem("t", (64,), 32),
            'TMEM buffer "t" has shape [64]; expected [num, M, N] or one [M, N] buffer',
        ),
        (
            tmem("t", (2, 2, 128, 64), 32),
            'TMEM buffer "t" has shape [2, 2, 128, 64]; expected [num, M, N] or one [M, N] buffer',
        ),
        (
            tmem("t", (2, 128, 64), 32, Layout(LayoutKind.TENSOR_MEMORY, block_m=32)),
            'TMEM buffer "t" has blockM=32; expected 64 or 128',
        ),
    ],
)
def test_invalid_tmem_buffer(buffer, message):
    result = plan(Spec("t", TMEM), [buffer])
    assert [(d.buffer, d.message) for d in result.errors] == [(0, message)]


def test_storage_mismatch_between_spec_and_buffer():
    t = tmem("t", (2, 128, 64), 32)
    error = only_error(plan(Spec("s", SMEM), [A, t]))
    assert error.buffer == 1
    assert error.message == 'buffer "t" is in tmem but spec "s" is smem'


def test_unnamed_buffer_is_named_by_index():
    error = only_error(plan(Spec("s"), [A, Buffer("", (2, 64), 0)]))
    assert error.message == 'buffer "#1" has element_bits=0; it must be positive'


def test_tree_and_buffer_errors_are_reported_together():
    result = plan(Spec("s"), [Buffer("a", (2, 64), 0), B], distinct(0, 1, 1))
    assert len(result.errors) == 2


def test_tmem_buffer_whose_columns_do_not_divide_the_region():
    odd = tmem("odd", (1, 128, 48), 32)  # 48 columns; the region rounds to 64
    error = only_error(plan(Spec("t", TMEM), [odd]))
    assert error.message == (
        'the region of 64 columns is not a whole number of buffer "odd"\'s 48-column buffers '
        "(a view must cover the region exactly)"
    )
