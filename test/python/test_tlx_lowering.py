"""TLX inside Gluon kernels, compiled on the CPU by stock Triton for sm_90a and
sm_100a: one backing allocation per spec of the planned size and alignment,
views of the planned types, rewritten buffer indices, metadata.shared.

Expected numbers are worked out by hand in each test (not asked of the
planner), so the tests check the planner and the lowering together."""

import re

import pytest
import tlx
from _helpers import SM90, SM100, compile_kernel, constant_slots, fill, fill_tmem
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
pytestmark = pytest.mark.usefixtures("always_compile")


def backings(ttgir):
    """(rows of the [rows, 128] x i8 backing, alignment) of each SMEM backing."""
    pattern = r"ttg\.local_alloc \{alignment = (\d+) : i32\} : \(\) -> !ttg\.memdesc<(\d+)x128xi8,"
    return [(int(rows), int(alignment)) for alignment, rows in re.findall(pattern, ttgir)]


def view_types(ttgir):
    """name -> shape/element text of each view (``4x64x64xf16``)."""
    pattern = (
        r"%(\w+) = ttg\.memdesc_reinterpret %\w+ : !ttg\.memdesc<[^>]*> -> !ttg\.memdesc<([^,]+),"
    )
    return dict(re.findall(pattern, ttgir))


@tlx.jit
def shared_f32_f16(i):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    fill(a.index(1))
    fill(tlx.local_view(b, 1))
    fill(b.index(i))


@pytest.mark.parametrize("target", [SM90, SM100], ids=["sm90a", "sm100a"])
def test_shared_group_of_two_element_types(target):
    # a: 2 x 16 KiB, b: 2 x 8 KiB sharing each buffer index: stride 16 KiB,
    # region 32 KiB; b's view has 4 slots of 8 KiB and b[i] is slot 2 * i.
    compiled = compile_kernel(shared_f32_f16, {"i": "i32"}, target)
    ttgir = compiled.asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert view_types(ttgir) == {"a": "2x64x64xf32", "b": "4x64x64xf16"}
    assert constant_slots(ttgir, "a") == [1]
    assert constant_slots(ttgir, "b") == [2]
    assert re.search(r"arith\.muli %i, %c2_i32", ttgir)
    assert compiled.metadata.shared == 32768
    assert compiled.asm["cubin"]


@tlx.jit
def shared_of_distinct(i):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    c = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, tlx.reuse_group(b, c, group_type=DISTINCT)))
    fill(a.index(i))
    fill(b.index(1))
    fill(c.index(i))


def test_nested_shared_of_distinct():
    # Per buffer index: a (16 KiB) shares with [b (8 KiB) | c (8 KiB)]; c starts
    # 8 KiB in, so c[i] is slot 2 * i + 1 of 8 KiB slots.
    ttgir = compile_kernel(shared_of_distinct, {"i": "i32"}).asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert view_types(ttgir)["b"] == "4x64x64xf16"
    assert constant_slots(ttgir, "b") == [2]
    assert re.search(r"(%\w+) = arith\.muli %i, %c2_i32.*\n.*arith\.addi \1, %c1_i32", ttgir)


@tlx.jit
def distinct_of_shared():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((32, 64), ttgl.float16, 2, reuse=spec)
    b = tlx.local_alloc((32, 32), ttgl.float32, 2, reuse=spec)
    c = tlx.local_alloc((32, 64), ttgl.bfloat16, 2, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(tlx.reuse_group(a, b, group_type=SHARED), c, group_type=DISTINCT)
    )
    fill(a.index(1))
    fill(b.index(1))
    fill(c.index(0))
    fill(c.index(1))


def test_nested_distinct_of_shared():
    # Per buffer index: [a | b] (4 KiB each, shared) then c (4 KiB): stride
    # 8 KiB, region 16 KiB; c[i] is slot 2 * i + 1.
    compiled = compile_kernel(distinct_of_shared)
    ttgir = compiled.asm["ttgir"]
    assert backings(ttgir) == [(128, 1024)]
    assert constant_slots(ttgir, "a") == [2]
    assert constant_slots(ttgir, "b") == [2]
    assert constant_slots(ttgir, "c") == [1, 3]
    assert compiled.metadata.shared == 16384


@tlx.jit
def sub_tiles(i):
    spec = tlx.storage_alias_spec()
    qk = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    p = tlx.local_alloc((64, 32), ttgl.float16, 4, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(qk, tlx.reuse_group(p, group_size=2)))
    fill(qk.index(1))
    fill(p.index(3))
    fill(p.index(i))


def test_group_size_sub_tiles():
    # qk: 16 KiB per buffer; p: 4 KiB slices, 2 per qk buffer, contiguous:
    # p[i] is slot 4 * (i // 2) + i % 2 of 4 KiB slots.
    ttgir = compile_kernel(sub_tiles, {"i": "i32"}).asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert view_types(ttgir)["p"] == "8x64x32xf16"
    assert constant_slots(ttgir, "p") == [5]
    assert re.search(r"arith\.divui %i, %c2_i32", ttgir)
    assert re.search(r"arith\.remui %i, %c2_i32", ttgir)
    assert re.search(r"arith\.muli %\w+, %c4_i32", ttgir)


@tlx.jit
def sub_tiles_filling_the_group(i):
    spec = tlx.storage_alias_spec()
    qk = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    p = tlx.local_alloc((64, 64), ttgl.float16, 4, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(qk, tlx.reuse_group(p, group_size=2)))
    fill(p.index(i))


def test_group_size_that_fills_the_group_needs_no_index_arithmetic():
    # p: two 8 KiB slices per 16 KiB qk buffer, so p[i] is slot i: the runtime
    # index goes to memdesc_index untouched.
    ttgir = compile_kernel(sub_tiles_filling_the_group, {"i": "i32"}).asm["ttgir"]
    assert view_types(ttgir)["p"] == "4x64x64xf16"
    assert not re.search(r"arith\.(divui|remui|muli|addi)", ttgir)
    assert re.search(r"ttg\.memdesc_index %\w+\[%i\]", ttgir)


@tlx.jit
def sized_with_padding(SIZE: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, buffer_size_bytes=SIZE)
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    fill(a.index(1))


def test_explicit_size_is_kept_as_padding():
    compiled = compile_kernel(sized_with_padding, SIZE=65536)
    ttgir = compiled.asm["ttgir"]
    assert backings(ttgir) == [(512, 1024)]
    assert view_types(ttgir) == {"a": "8x64x64xf16"}
    assert constant_slots(ttgir, "a") == [1]
    assert compiled.metadata.shared == 65536


@tlx.jit
def without_overlap(i):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 3, reuse=spec)
    fill(a.index(i))
    fill(b.index(i))


@pytest.mark.filterwarnings("ignore:.*no overlap tree")  # a spec without a tree on purpose
def test_without_set_buffer_overlap_every_buffer_starts_at_zero():
    # Sealed by the first use; a needs 32 KiB, b 24 KiB: region 32 KiB and
    # both index maps are the identity (no arithmetic on i).
    compiled = compile_kernel(without_overlap, {"i": "i32"})
    ttgir = compiled.asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert view_types(ttgir) == {"a": "2x64x64xf32", "b": "4x64x64xf16"}
    assert re.search(r"ttg\.memdesc_index %a\[%i\]", ttgir)
    assert re.search(r"ttg\.memdesc_index %b\[%i\]", ttgir)
    assert "arith.muli %i" not in ttgir
    assert compiled.metadata.shared == 32768


@tlx.jit
def plain_and_legacy_reuse():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)
    b = tlx.local_alloc((64, 64), ttgl.float16, 4, reuse=a)
    fill(a.index(1))
    fill(b.index(3))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy reuse= under test
def test_plain_alloc_and_legacy_reuse_alias_at_offset_zero():
    compiled = compile_kernel(plain_and_legacy_reuse)
    ttgir = compiled.asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert view_types(ttgir) == {"a": "2x64x64xf32", "b": "4x64x64xf16"}
    assert constant_slots(ttgir, "b") == [3]
    assert compiled.metadata.shared == 32768


@tlx.jit
def legacy_reuse_of_unsealed_spec_user():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=a)
    fill(a.index(1))
    fill(b.index(1))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy reuse= under test
@pytest.mark.filterwarnings("ignore:.*no overlap tree")  # a spec without a tree on purpose
def test_legacy_reuse_of_an_unsealed_spec_joins_the_spec():
    # b is larger than its "owner" a: the spec grows to b's 32 KiB.
    compiled = compile_kernel(legacy_reuse_of_unsealed_spec_user)
    assert backings(compiled.asm["ttgir"]) == [(256, 1024)]
    assert compiled.metadata.shared == 32768


@tlx.jit
def swizzled_default_layout():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((4, 4), ttgl.float32, 2, reuse=spec)
    fill(a.index(1))


def test_small_tile_gets_a_row_major_layout_and_128_byte_alignment():
    ttgir = compile_kernel(swizzled_default_layout).asm["ttgir"]
    # Two 64-byte buffers, each starting 128-byte aligned: slots 0 and 2.
    assert backings(ttgir) == [(2, 128)]
    assert view_types(ttgir) == {"a": "4x4x4xf32"}
    assert constant_slots(ttgir, "a") == [2]
    assert re.search(
        r"#ttg\.swizzled_shared<\{vec = 1, perPhase = 1, maxPhase = 1, order = \[1, 0\]", ttgir
    )


@gluon.jit
def fill_each(buffer, n):
    for j in range(n):
        fill(buffer.index(j % 2))


@tlx.jit
def loop_and_call(n):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b))
    for j in range(n):
        fill(b.index(j % 2))
    fill_each(b, n)
    for k in ttgl.static_range(2):
        fill(a.index(k))


def test_sealed_buffers_are_used_in_loops_and_passed_to_functions():
    ttgir = compile_kernel(loop_and_call, {"n": "i32"}).asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert constant_slots(ttgir, "a") == [0, 1]
    assert len(re.findall(r"scf\.for", ttgir)) == 2
    assert len(re.findall(r"arith\.muli %\w+, %c2_i32", ttgir)) == 2


@tlx.jit
def sealed_in_static_range():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    for k in ttgl.static_range(2):
        fill(a.index(k))


def test_sealing_inside_static_range_is_in_the_spec_block():
    ttgir = compile_kernel(sealed_in_static_range).asm["ttgir"]
    assert backings(ttgir) == [(128, 1024)]
    assert constant_slots(ttgir, "a") == [0, 1]


@gluon.jit
def fill_first(a, b):
    fill(a.index(0))
    fill(b.index(1))


@gluon.jit
def fill_second(a, b):
    fill(a.index(1))
    fill(b.index(0))


@tlx.jit
def partitions():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.bfloat16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    ttgl.warp_specialize([(fill_first, (a, b)), (fill_second, (a, b))], [4], [80])


def test_warp_specialize_partitions_capture_the_views():
    ttgir = compile_kernel(partitions, target=SM100).asm["ttgir"]
    assert backings(ttgir) == [(256, 1024)]
    assert re.search(r"ttg\.warp_specialize\(%a, %b\)", ttgir)
    # b[1] is slot 3, b[0] slot 1 (b sits after a in each 16 KiB group).
    assert constant_slots(ttgir, "b") == [3]
    assert re.search(r"ttg\.memdesc_index %arg\d+\[%c1_i32\]", ttgir)


@tlx.jit
def flash_attention_tmem(NUM_MMA_SLICES: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk = tlx.local_alloc((128, 128), ttgl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    p = tlx.local_alloc(
        (128, 128 // NUM_MMA_SLICES),
        ttgl.float16,
        2 * NUM_MMA_SLICES,
        tlx.storage_kind.tmem,
        reuse=spec,
    )
    alpha = tlx.local_alloc((128, 1), ttgl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    row_sum = tlx.local_alloc((128, 1), ttgl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    row_max = tlx.local_alloc((128, 1), ttgl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            qk,
            tlx.reuse_group(
                tlx.reuse_group(p, group_size=NUM_MMA_SLICES),
                alpha,
                row_sum,
                row_max,
                group_type=DISTINCT,
            ),
        )
    )
    fill_tmem(qk.index(1))
    fill_tmem(p.index(5))
    fill_tmem(alpha.index(1))
    fill_tmem(row_max.index(0))


def test_tmem_flash_attention_plan():
    # Seed 001's example with 4 slices: qk 128 columns per buffer; p 16
    # columns per f16 slice (packed), 4 slices = 64 columns; alpha, l, m one
    # column each after p: region 2 x 128 = 256 columns of 128 rows.
    compiled = compile_kernel(flash_attention_tmem, target=SM100, NUM_MMA_SLICES=4)
    ttgir = compiled.asm["ttgir"]
    assert re.findall(r"ttng\.tmem_alloc : \(\) -> !ttg\.memdesc<(\d+x\d+)xi32", ttgir) == [
        "128x256"
    ]
    tmem_views = dict(
        re.findall(
            r"%(\w+) = ttg\.memdesc_reinterpret %\w+ : [^>]*> -> !ttg\.memdesc<([^,]+),", ttgir
        )
    )
    # row_max's view has alpha's type, so Triton's CSE makes them one value.
    assert tmem_views == {"qk": "2x128x128xf32", "p": "16x128x32xf16", "alpha": "256x128x1xf32"}
    # p[5] = group 1, slice 1: slot 8 * 1 + 1; alpha[1] = column 128 + 64;
    # row_max[0] = column 66.
    assert constant_slots(ttgir, "p") == [9]
    assert constant_slots(ttgir, "alpha") == [192, 66]
    assert compiled.metadata.tmem_size == 256


@tlx.jit
def two_specs_only_shared(i):
    first = tlx.storage_alias_spec()
    second = tlx.storage_alias_spec(buffer_size_bytes=8192)
    a = tlx.local_alloc((32, 64), ttgl.float16, 2, reuse=first)
    b = tlx.local_alloc((32, 32), ttgl.float16, 2, reuse=second)
    fill(a.index(i))
    fill(b.index(i))
    fill(a.index(0))


def test_one_backing_allocation_per_spec():
    compiled = compile_kernel(two_specs_only_shared, {"i": "i32"})
    # b's 64-byte rows get a 64-byte swizzle: 512-byte alignment.
    assert sorted(backings(compiled.asm["ttgir"])) == [(64, 512), (64, 1024)]
    assert compiled.metadata.shared == 16384
