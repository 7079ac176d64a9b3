"""Unit tests of the storage alias planner (tlx.planner over tlx._planner): one
test per rule and per diagnostic, with the expected numbers worked out by hand."""

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tlx.planner import (
    Buffer,
    Diagnostic,
    ElementKind,
    Group,
    Layout,
    LayoutKind,
    Plan,
    Spec,
    Storage,
    View,
    buffer_size,
    check_view,
    cta_split_of_cga_bases,
    describe,
    distinct,
    has_buffer_dimension,
    has_tensor_memory,
    plan,
    required_alignment,
    shared,
    smem_limit_for_target,
    storage_unavailable,
    stored_element_bits,
    target_name,
    view_from_placement,
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
    # shared with qk's 128 columns -> stride 128, 2 groups -> 256 columns.
    result = plan(Spec("qk_alias", TMEM), fa_buffers(), FA_TREE)
    assert result.ok and not result.diagnostics
    assert result.region_size == 256
    assert result.backing_shape == (128, 256)
    assert result.size_bytes == 128 * 256 * 4
    assert result.alignment == 1
    assert result.padding_bytes == 0
    qk, p, alpha, l_, m = result.views
    assert (qk.offset, qk.bytes_between_buffer_groups, qk.scale, qk.slots) == (0, 128, 1, 2)
    assert qk.identity_index
    assert (p.offset, p.group_size, p.scale, p.offset_slots, p.slots) == (0, 4, 8, 0, 16)
    assert slots(p, 8) == [0, 1, 2, 3, 8, 9, 10, 11]
    assert [(v.offset, v.scale, v.offset_slots, v.slots) for v in (alpha, l_, m)] == [
        (64, 128, 64, 256),
        (65, 128, 65, 256),
        (66, 128, 66, 256),
    ]
    assert slots(alpha, 2) == [64, 192]


def test_smem_shared_of_distinct_and_buffer():
    # distinct(a, b): a at 0 (8192), b at 8192 (4096); shared with c (16384):
    # unit 16384 -> stride 16384, 2 groups.
    result = plan(Spec("s"), [A, B, C], shared(distinct(0, 1), 2))
    assert result.ok and not result.diagnostics
    assert result.size_bytes == 32768
    assert result.backing_shape == (256, 128)
    assert result.padding_bytes == 0
    a, b, c = result.views
    assert (a.offset, a.scale, a.offset_slots, a.slots) == (0, 2, 0, 4)
    assert (b.offset, b.scale, b.offset_slots, b.slots) == (8192, 4, 2, 8)
    assert (c.offset, c.scale, c.slots) == (0, 1, 2)
    assert slots(b, 2) == [2, 6]


def test_smem_distinct_of_shared_and_buffer_aligns_to_buffer_size():
    # shared(a, b) needs 8192; c (16384) must start at a multiple of its own size:
    # 16384, unit 32768. Ideal packing is 8192 + 16384 per group -> 16384 bytes padding.
    result = plan(Spec("s"), [A, B, C], distinct(shared(0, 1), 2))
    assert result.ok
    assert result.size_bytes == 65536
    assert result.padding_bytes == 65536 - 2 * (8192 + 16384)
    a, b, c = result.views
    assert (a.offset, a.bytes_between_buffer_groups) == (0, 32768)
    assert (b.offset, c.offset) == (0, 16384)
    assert (c.scale, c.offset_slots, c.slots) == (2, 1, 4)


def test_nvmma_128_byte_swizzle_buffer_at_nonzero_offset_is_1024_aligned():
    x = Buffer("x", (2, 4, 128), 8)  # 512 bytes, 128-byte alignment
    y = Buffer("y", (2, 4, 64), 16, SMEM, nvmma(128))  # 512 bytes, 1024-byte alignment
    result = plan(Spec("s"), [x, y], distinct(0, 1))
    assert result.ok
    _, view_y = result.views
    assert view_y.alignment == 1024
    assert view_y.offset == 1024  # not 512: the swizzle needs 1024
    assert (view_y.offset_slots, view_y.scale) == (2, 4)
    assert result.views[0].bytes_between_buffer_groups == 2048
    assert result.alignment == 1024
    assert result.size_bytes == 4096
    assert result.padding_bytes == 4096 - 2 * 1024


def test_stride_is_a_whole_number_of_every_buffer_size():
    x = Buffer("x", (2, 3, 128), 8)  # 384 bytes
    y = Buffer("y", (2, 4, 128), 8)  # 512 bytes
    result = plan(Spec("s"), [x, y], shared(0, 1))
    assert result.ok
    # unit 512 rounded up to lcm(384, 512, 128) = 1536.
    assert result.views[0].bytes_between_buffer_groups == 1536
    assert result.size_bytes == 3072
    assert [v.slots for v in result.views] == [8, 6]
    assert [v.scale for v in result.views] == [4, 3]


def test_group_size_makes_consecutive_buffers_one_group():
    b4 = Buffer("b4", (4, 64, 32), 32)  # 8192 bytes
    result = plan(Spec("s"), [A, b4], shared(0, shared(1, group_size=2)))
    assert result.ok
    a, b = result.views
    assert b.group_size == 2
    assert a.bytes_between_buffer_groups == b.bytes_between_buffer_groups == 16384
    assert slots(b, 4) == [0, 1, 2, 3]
    assert slots(a, 2) == [0, 2]
    assert result.size_bytes == 32768
    # Groups of 2 buffers 2 slots apart at offset 0: slot(i) == i, nothing to rewrite.
    assert (b.scale, b.offset_slots) == (2, 0) and b.identity_index
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


def test_without_tree_every_buffer_sits_at_offset_zero():
    result = plan(Spec("s"), [A, C])
    assert result.ok and not result.diagnostics
    assert result.size_bytes == 32768  # max(2 x 8192, 2 x 16384)
    for view, size in zip(result.views, (8192, 16384), strict=True):
        assert (view.offset, view.bytes_between_buffer_groups, view.group_size) == (0, size, 1)
        assert view.identity_index
    assert [v.slots for v in result.views] == [4, 2]
    assert result.padding_bytes == 0


def test_without_tree_region_is_rounded_to_every_view():
    x = Buffer("x", (1, 3, 128), 8)  # 384 bytes
    y = Buffer("y", (1, 4, 128), 8)  # 512 bytes
    result = plan(Spec("s"), [x, y])
    assert result.ok
    assert result.size_bytes == 1536  # lcm(384, 512)
    assert result.padding_bytes == 1536 - 512


def test_smem_region_is_a_multiple_of_128_bytes():
    tiny = Buffer("tiny", (1, 16), 16)  # 32 bytes
    result = plan(Spec("s"), [tiny])
    assert result.size_bytes == 128
    assert result.backing_shape == (1, 128)
    assert result.views[0].slots == 4
    assert result.padding_bytes == 96


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


def test_two_versus_four_buffers_names_both_and_suggests_group_size():
    c4 = Buffer("c", (4, 128, 64), 16)
    error = only_error(plan(Spec("s"), [A, c4], shared(0, 1)))
    assert error.buffer == 1
    assert error.message == (
        'buffers "a" (2 buffers) and "c" (4 buffers) cannot share buffer groups in spec "s": '
        'group "c" with group_size=2 or give them equal counts'
    )


def test_group_count_mismatch_counts_groups_under_group_size():
    p = Buffer("p", (8, 16, 16), 16)
    alpha = Buffer("alpha", (4, 16), 32)
    error = only_error(plan(Spec("s"), [p, alpha], distinct(shared(0, group_size=4), 1)))
    assert error.message == (
        'buffers "p" (8 buffers = 2 groups of 4) and "alpha" (4 buffers) cannot share buffer '
        'groups in spec "s": group "alpha" with group_size=2 or give them equal counts'
    )


def test_group_count_mismatch_without_a_whole_ratio():
    e = Buffer("e", (3, 64, 64), 16)
    error = only_error(plan(Spec("s"), [A, e], distinct(0, 1)))
    assert error.message.endswith('cannot share buffer groups in spec "s": give them equal counts')


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
    assert (c.offset, c.bytes_between_buffer_groups, c.group_size) == (0, 16384, 1)
    assert result.size_bytes == 32768  # the tree needs 2 x 16384, c needs 2 x 16384


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
        'the region of 64 columns is not a whole number of buffer "odd"\'s 48-column buffers'
    )


# --- Views rebuilt from placements, and the self-check -------------------------------------------


def test_view_from_placement_matches_the_plan():
    result = plan(Spec("qk_alias", TMEM), fa_buffers(), FA_TREE)
    for buffer, view in zip(fa_buffers(), result.views, strict=True):
        rebuilt = view_from_placement(
            buffer, view.offset, view.bytes_between_buffer_groups, view.group_size, 256
        )
        assert rebuilt == view
        assert check_view(rebuilt, buffer, 0, 256) == ()


WHOLE = "which is not a whole number of its 8192-byte buffers"


@pytest.mark.parametrize(
    "offset, stride, group_size, region, message",
    [
        (100, 16384, 1, 32768, f'buffer "a" starts at offset 100 bytes, {WHOLE}'),
        (0, 10000, 1, 32768, f'buffer "a" has buffer groups 10000 bytes apart, {WHOLE}'),
        (
            0,
            8192,
            1,
            10000,
            'the region of 10000 bytes is not a whole number of buffer "a"\'s 8192-byte buffers',
        ),
        (
            0,
            16384,
            4,
            32768,
            'buffer "a" has 2 buffers, which is not a multiple of its group_size 4',
        ),
        (8192, 16384, 1, 16384, 'buffer "a" index 1 maps to slot 3, outside its view of 2 slots'),
        (-8192, 8192, 1, 16384, 'buffer "a" index 0 maps to slot -1, outside its view of 2 slots'),
    ],
)
def test_check_view_reports_each_violation(offset, stride, group_size, region, message):
    view = view_from_placement(A, offset, stride, group_size, region)
    assert check_view(view, A, 0, region) == (Diagnostic("error", 0, message),)


def test_check_view_reports_broken_alignment():
    y = Buffer("y", (2, 4, 64), 16, SMEM, nvmma(128))  # 512 bytes, 1024-byte alignment
    view = view_from_placement(y, 512, 2048, 1, 4096)
    (problem,) = check_view(view, y, 3, 4096)
    assert problem.buffer == 3
    assert problem.message == (
        'buffer "y" starts at offset 512 bytes, which breaks its 1024-byte alignment'
    )


def test_check_view_reports_a_group_wider_than_the_stride():
    p = Buffer("p", (4, 64, 32), 32)  # 8192 bytes
    view = view_from_placement(p, 0, 8192, 2, 32768)
    (problem,) = check_view(view, p, 0, 32768)
    assert problem.message == (
        'buffer "p" puts 2 buffers of 8192 bytes in each buffer group, but its groups are '
        "8192 bytes apart"
    )


def test_check_view_reports_a_view_that_does_not_cover_the_region():
    view = dataclasses.replace(view_from_placement(A, 0, 8192, 1, 32768), slots=3)
    (problem,) = check_view(view, A, 0, 32768)
    assert problem.message == (
        'the view of buffer "a" has 3 slots of 8192 bytes, which does not cover the region of '
        "32768 bytes"
    )


def test_check_view_reports_a_buffer_without_size():
    bad = Buffer("bad", (2, 64), 0)
    (problem,) = check_view(view_from_placement(bad, 0, 0, 1, 128), bad, 0, 128)
    assert problem.message == 'buffer "bad" has no size (shape [2, 64], element_bits=0)'


def test_slot_of_follows_the_index_map():
    view = View(
        buffer_size=16,
        offset=32,
        bytes_between_buffer_groups=128,
        group_size=4,
        scale=8,
        offset_slots=2,
        slots=16,
        alignment=1,
    )
    assert slots(view, 8) == [2, 3, 4, 5, 10, 11, 12, 13]


# --- describe ------------------------------------------------------------------------------------


def test_describe_renders_a_memory_map():
    buffers = fa_buffers()
    text = plan(Spec("qk_alias", TMEM), buffers, FA_TREE).describe(buffers)
    lines = text.splitlines()
    assert lines[0] == (
        "tmem region: 256 columns x 128 rows = 131072 bytes, backing [128, 256] x i32, "
        "alignment 1 column, padding 0 bytes"
    )
    assert lines[1].split() == ["buffer", "offset", "size", "stride", "group_size", "slots"]
    assert lines[2].split() == ['"qk"', "0", "128", "128", "1", "2"]
    assert lines[3].split() == ['"p"', "0", "16", "128", "4", "16"]
    assert lines[4].split() == ['"alpha"', "64", "1", "128", "1", "256"]
    assert lines[-1] == "  (offset, size and stride in columns)"


def test_describe_lists_diagnostics_of_a_failed_plan():
    c4 = Buffer("c", (4, 128, 64), 16)
    result = plan(Spec("s"), [A, c4], shared(0, 1))
    text = describe(result, [A, c4])
    assert text.startswith("smem region: not planned\n")
    assert text.splitlines()[-1].startswith('error: buffers "a" (2 buffers) and "c"')


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
