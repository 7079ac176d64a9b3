"""Unit tests of the storage alias planner (tlx.planner over tlx._planner): one
test per rule and per diagnostic, with the expected numbers worked out by hand."""

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tlx import _planner as _native
from tlx import planner
from tlx.planner import (
    TMEM_COLUMNS,
    Buffer,
    Diagnostic,
    ElementKind,
    Group,
    Layout,
    LayoutFamily,
    LayoutKind,
    Placement,
    Plan,
    Spec,
    Storage,
    Stride,
    View,
    advise_splits,
    buffer_extents,
    buffer_size,
    buffer_stride,
    check_view,
    cta_split_of_cga_bases,
    describe,
    distinct,
    has_buffer_dimension,
    has_tensor_memory,
    over_storage_budget,
    plan,
    required_alignment,
    shared,
    sharing_segments,
    smem_limit_for_target,
    storage_budget,
    storage_unavailable,
    stored_element_bits,
    target_name,
    view_of,
)

SMEM = Storage.SMEM
TMEM = Storage.TMEM
TMEM_LAYOUT = Layout(LayoutKind.TENSOR_MEMORY)
TMEM_LAYOUT_64 = Layout(LayoutKind.TENSOR_MEMORY, block_m=64)
UNPACKED = Layout(LayoutKind.TENSOR_MEMORY, unpacked=True)


def nvmma(swizzle_bytes):
    return Layout(LayoutKind.NVMMA_SHARED, swizzle_bytes=swizzle_bytes)


def tmem(name, shape, bits, layout=TMEM_LAYOUT):
    return Buffer(name, shape, bits, TMEM, layout)


def only_error(result: Plan) -> Diagnostic:
    assert len(result.errors) == 1, result.diagnostics
    return result.errors[0]


def slots(view: View, count: int) -> list[int]:
    return [view.slot_of(i) for i in range(count)]


# Buffers used by several SMEM tests (sizes per buffer in the comments).
A = Buffer("a", (2, 64, 64), 16)  # 8192 bytes
B = Buffer("b", (2, 32, 32), 32)  # 4096 bytes
C = Buffer("c", (2, 128, 64), 16)  # 16384 bytes


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


def fa_buffers():
    """Seed 001's Flash Attention TMEM buffers: 2 MMA groups, 4 P slices."""
    return [
        tmem("qk", (2, 128, 128), 32),  # 128 columns
        tmem("p", (2 * 4, 128, 32), 16),  # 16 columns (f16 packed)
        tmem("alpha", (2, 128, 1), 32),  # 1 column
        tmem("l", (2, 128, 1), 32),
        tmem("m", (2, 128, 1), 32),
    ]


FA_TREE = shared(0, distinct(shared(1, group_size=4), 2, 3, 4))


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


# --- Python layer --------------------------------------------------------------------------------


def test_group_kind_must_be_shared_or_distinct():
    with pytest.raises(ValueError, match='reuse group kind must be "shared" or "distinct"'):
        Group("overlapping", (0, 1))


@pytest.mark.parametrize("child", ["a", 1.0, True])
def test_group_children_must_be_indices_or_groups(child):
    with pytest.raises(TypeError, match="reuse group children must be buffer indices"):
        Group("shared", (0, child))


def test_inputs_are_normalised():
    buffer = Buffer("a", [2, 64], 16, "smem")
    assert buffer.shape == (2, 64) and buffer.storage is SMEM
    assert Spec("t", "tmem").storage is TMEM
    assert Group("shared", [0, 1]).children == (0, 1)
    assert hash(buffer) == hash(Buffer("a", (2, 64), 16))


PACKAGE_DIR = Path(__file__).resolve().parents[2] / "language" / "tlx"


def run_isolated_planner(package, code):
    """Runs `code` in a fresh interpreter that finds only `package` (a copy of
    parts of language/tlx) as `tlx`, whatever else is installed."""
    (package / "__init__.py").write_text("")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(package.parent)},
        cwd=package.parent,
    )


def test_missing_extension_raises_import_error_with_build_hint(tmp_path):
    package = tmp_path / "tlx"
    package.mkdir()
    shutil.copy(PACKAGE_DIR / "planner.py", package)
    completed = run_isolated_planner(package, "import tlx.planner")
    assert completed.returncode != 0
    assert "ImportError: the planner extension tlx._planner is not built" in completed.stderr
    assert "pip install --no-build-isolation -e ." in completed.stderr
    assert "-DTLX_BUILD_MLIR=OFF" in completed.stderr


def test_planner_imports_without_triton(tmp_path):
    package = tmp_path / "tlx"
    package.mkdir()
    shutil.copy(PACKAGE_DIR / "planner.py", package)
    for extension in PACKAGE_DIR.glob("_planner*"):
        shutil.copy(extension, package)
    code = "import sys, tlx.planner; assert 'triton' not in sys.modules, 'triton imported'"
    completed = run_isolated_planner(package, code)
    assert completed.returncode == 0, completed.stderr


def test_tmem_exists_on_blackwell_only():
    assert [has_tensor_memory(cc) for cc in (0, 80, 90, 100, 103, 110, 120)] == [
        True,
        False,
        False,
        True,
        True,
        True,
        False,
    ]
    assert [target_name(cc) for cc in (0, 90, 100)] == ["an unknown target", "sm_90a", "sm_100a"]
    t = Buffer("t", (2, 128, 64), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    assert plan(Spec("t", TMEM, capability=100), [t]).ok
    assert [d.message for d in plan(Spec("t", TMEM, capability=90), [t]).errors] == [
        'spec "t": tensor memory (tmem) needs a Blackwell target (sm_100a or newer), but the '
        "kernel is compiled for sm_90a"
    ]
    assert storage_unavailable(Storage.SMEM, 90) == ""


def test_stored_element_bits():
    assert stored_element_bits(ElementKind.POINTER, 0) == 64
    assert stored_element_bits(ElementKind.INTEGER, 1) == 8
    assert stored_element_bits(ElementKind.FLOAT, 8) == 8
    assert stored_element_bits(ElementKind.FLOAT, 4) == 4
    assert stored_element_bits(ElementKind.INTEGER, 16) == 16
    fp4 = Buffer("fp4", (2, 16, 16), stored_element_bits(ElementKind.FLOAT, 4))
    assert buffer_size(fp4) == 128


def test_a_tmem_tile_without_buffer_dimension_is_one_buffer():
    acc = Buffer("acc", (128, 128), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=128))
    assert not has_buffer_dimension(acc)
    assert has_buffer_dimension(Buffer("a", (128, 128), 32))
    p = Buffer("p", (1, 128, 64), 16, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    result = plan(Spec("t", TMEM), [acc, p], distinct(0, 1))
    assert result.ok, result.diagnostics
    assert buffer_size(acc) == 128
    assert [view.offset for view in result.views] == [0, 128]
    assert result.region_size == 256 and result.views[0].slots == 2


def test_smem_limit_is_the_targets():
    assert [smem_limit_for_target(cc) for cc in (80, 86, 90, 100, 120)] == [
        166912,
        101376,
        232448,
        232448,
        101376,
    ]
    big = Buffer("big", (3, 128, 128), 32)  # 196608 bytes
    assert plan(Spec("s"), [big]).ok
    sm80 = plan(Spec("s", capability=80), [big])
    assert Spec("s", capability=80).smem_limit_bytes == 166912
    assert [d.message for d in sm80.errors] == [
        'spec "s" needs 196608 bytes of shared memory, more than the target\'s limit of '
        "166912 bytes"
    ]


def test_a_tile_split_over_ctas_is_sized_per_cta():
    assert cta_split_of_cga_bases([[1, 0]]) == (2, 1)
    assert cta_split_of_cga_bases([[0, 1], [0, 2]]) == (1, 4)
    assert cta_split_of_cga_bases([[0, 0]]) == (1, 1)
    pair = Layout(LayoutKind.TENSOR_MEMORY, block_n=128, cta_split_m=2)
    acc = Buffer("acc", (256, 128), 32, TMEM, pair)
    assert buffer_size(acc) == 128
    assert buffer_size(dataclasses.replace(acc, layout=Layout(LayoutKind.TENSOR_MEMORY))) == 256
    result = plan(Spec("t", TMEM), [acc])
    assert result.ok and result.region_size == 128
    assert result.backing_block == (128, 128) and result.backing_shape == (256, 128)


def test_buffers_of_one_spec_split_alike():
    pair = Layout(LayoutKind.TENSOR_MEMORY, block_n=128, cta_split_m=2)
    acc = Buffer("acc", (256, 128), 32, TMEM, pair)
    lone = Buffer("lone", (1, 128, 64), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    error = only_error(plan(Spec("t", TMEM), [acc, lone]))
    assert error.buffer == 1
    assert error.message == (
        'buffer "lone" is split over 1 x 1 CTAs but buffer "acc" over 2 x 1; the buffers of '
        'spec "t" share one allocation and must be split alike'
    )
    odd = Buffer("odd", (1, 98, 64), 32, TMEM, dataclasses.replace(pair, cta_split_m=4))
    assert "does not divide" in only_error(plan(Spec("t", TMEM), [odd])).message
    split_smem = Buffer("a", (2, 256, 64), 16, SMEM, Layout(cta_split_m=2))
    assert "shared memory split over the CTAs" in only_error(plan(Spec("s"), [split_smem])).message


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


NATIVE_STRUCTS = [
    (Layout, _native.Layout),
    (Buffer, _native.Buffer),
    (Group, _native.Group),
    (Spec, _native.Spec),
    (View, _native.View),
    (Placement, _native.Placement),
    (Diagnostic, _native.Diagnostic),
    (Plan, _native.Plan),
    (Stride, _native.Stride),
]


@pytest.mark.parametrize(("python", "native"), NATIVE_STRUCTS)
def test_each_struct_is_defined_once_by_the_binding(python, native):
    bound = [name for name, value in vars(native).items() if isinstance(value, property)]
    names = [field.name for field in dataclasses.fields(python)]
    # Group keeps the positional order Group(kind, children, group_size); Diagnostic
    # adds the planner's raw text.
    expected = ["kind", "children", "group_size"] if python is Group else bound
    assert names[: len(bound)] == expected
    assert names[len(bound) :] == (["template"] if python is Diagnostic else [])


def test_value_types_are_frozen_hashable_and_round_trip_through_the_planner():
    spec = Spec("ring", capability=90)
    buffers = [Buffer("a", (4, 128, 64), 16, layout=nvmma(128)), Buffer("b", (4, 64, 256), 16)]
    result = plan(spec, buffers, distinct(0, 1))
    assert result == plan(spec, buffers, distinct(0, 1))
    assert hash(result) == hash(plan(spec, buffers, distinct(0, 1)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.size_bytes = 0
    # Defaults come from the native structs; strings and lists become enums and tuples.
    assert Buffer("x", [2, 8], 8, "smem") == Buffer("x", (2, 8), 8, Storage.SMEM, Layout())
    assert Spec("s").whole_views is True and Spec("s").explicit_size_bytes is None
    assert result.backing_kind == "shared_bytes"
    assert describe(result, buffers) == _native.describe(
        planner._to_native(result), planner._to_native(tuple(buffers)), ""
    )
    view = result.views[1]
    assert view_of(buffers[1], view.placement) == view


def test_the_lifetime_check_of_phases_holds_within_each_sequence_of_control():
    # x (phase 0) and w2 (phase 1) share bytes.
    x, w2 = Buffer("x", (2, 64, 64), 16), Buffer("w2", (2, 64, 64), 16)
    phased = plan(Spec("s"), [x, w2], [distinct(0), distinct(1)])
    assert phased.ok
    assert planner.phase_overlaps(phased, [x, w2]) == (planner.PhaseOverlap(0, 1),)

    def check(x_uses, w2_uses):
        uses = [[planner.PhaseUse(s, p) for s, p in found] for found in (x_uses, w2_uses)]
        return planner.check_phase_lifetimes(phased, [x, w2], uses, "s")

    # Two partitions (sequences 1 and 2) each use x then w2; their positions
    # interleave, but across sequences there is no order to check.
    assert check([(1, 1), (2, 3)], [(1, 2), (2, 4)]) == ()
    # Within sequence 2, w2 (position 5) falls between two uses of x.
    (problem,) = check([(1, 1), (2, 3), (2, 6)], [(1, 2), (2, 5)])
    assert problem.kind == "phase_lifetime_overlap"
    assert problem.buffers == (1, 0)
    assert problem.numbers == (5, 3, 6, 1, 0)
    assert problem.message.startswith(
        'buffer "w2" (phase 1) is used between two uses of buffer "x" (phase 0) of spec "s"'
    )
    # A buffer used in one sequence only never meets the other there.
    assert check([(0, 1), (0, 3)], [(1, 2)]) == ()
