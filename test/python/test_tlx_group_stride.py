"""A free group stride through the JIT door: where a buffer group ends at no multiple of a
user's buffer size, Triton 3.6 and 3.7 take that user's view per buffer group
(``compat.GROUP_STRIDE_VIEW_FORM`` "runtime_row": the backing's row where the group starts,
indexed at run time, reinterpreted to the group's slots; docs/planner.md, "Views at a byte
offset"), so the region is the ideal; other releases keep whole slots between groups."""

import re

import pytest
import tlx
from _helpers import SM90, compile_kernel
from triton.experimental.gluon import language as ttgl

SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
SIGNATURE = {"out": "*fp32", "index": "i32"}
pytestmark = pytest.mark.usefixtures("always_compile")


@tlx.jit
def free_stride(out, index, NUM: ttgl.constexpr):
    """shared(w: f16 32x32, distinct(a: i8 32x32, b: f16 16x128)) of NUM buffers each:
    5 KiB groups, 1.25 of b's 4 KiB buffers and 2.5 of w's 2 KiB ones. Every buffer of
    b is written and read in a loop with a runtime index, then b[index]."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    w = tlx.local_alloc((32, 32), ttgl.float16, NUM, reuse=spec)
    a = tlx.local_alloc((32, 32), ttgl.int8, NUM, reuse=spec)
    b = tlx.local_alloc((16, 128), ttgl.float16, NUM, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(w, tlx.reuse_group(a, b, group_type=DISTINCT), group_type=SHARED)
    )
    total = 0.0
    for i in range(NUM):
        b_i = tlx.local_view(b, i)
        b_i.store(ttgl.full((16, 128), 1.0, ttgl.float16, ROWS) * i)
        total += ttgl.sum(ttgl.sum(b_i.load(ROWS).to(ttgl.float32), 1), 0)
    b_index = tlx.local_view(b, index)
    total += ttgl.sum(ttgl.sum(b_index.load(ROWS).to(ttgl.float32), 1), 0)
    w_1 = tlx.local_view(w, NUM - 1)
    total += ttgl.sum(ttgl.sum(w_1.load(ROWS).to(ttgl.float32), 1), 0)
    ttgl.store(out, total)


def _plan(num):
    (spec_plan,) = tlx.kernel_plans(
        tlx.ASTSource(fn=free_stride, signature=SIGNATURE, constexprs={"NUM": num}), target=SM90
    )
    return spec_plan.plan


@pytest.mark.parametrize("num", [2, 3])
def test_the_region_is_the_ideal_where_the_triton_writes_a_view_per_group(num):
    plan = _plan(num)
    assert plan.ok
    w_view, a_view, b_view = plan.views
    if tlx.compat.GROUP_STRIDE_VIEW_FORM == "slots":
        # 3.8 and 3.9: no view per group, and the groups sit whole slots apart.
        assert "runtime_row" not in {view.form for view in plan.views}
        assert plan.size_bytes > plan.ideal_bytes
        return
    assert plan.size_bytes == plan.ideal_bytes == num * 5120
    assert b_view.form == w_view.form == "runtime_row"
    assert b_view.group_stride == w_view.group_stride == 5120
    assert [b_view.start_of(i) for i in range(num)] == [1024 + 5120 * i for i in range(num)]
    assert [w_view.start_of(i) for i in range(num)] == [5120 * i for i in range(num)]
    assert a_view.form == "slots" and [a_view.start_of(i) for i in range(num)] == [
        5120 * i for i in range(num)
    ]
    # The row of b's group: 40 rows a group, from row 8.
    assert [b_view.index_program.evaluate_row(i) for i in range(num)] == [
        8 + 40 * i for i in range(num)
    ]


def test_each_use_indexes_the_group_row_at_run_time_and_the_kernel_compiles():
    compiled = compile_kernel(free_stride, signature=SIGNATURE, target=SM90, NUM=3)
    ttgir = compiled.asm["ttgir"]
    rows = re.findall(
        r"ttg\.memdesc_index %\w+\[(%[\w#]+)\] : !ttg\.memdesc<120x128xi8[^>]*> -> "
        r"!ttg\.memdesc<128xi8",
        ttgir,
    )
    if tlx.compat.GROUP_STRIDE_VIEW_FORM == "slots":
        assert rows == [], ttgir
        assert "st.shared" in compiled.asm["ptx"]
        return
    # b[i] in the loop and b[index]: the group's row, 40 index + 8, computed at run time;
    # each reinterpreted to the group's one 16x128 slot.
    assert len(rows) >= 2, ttgir
    assert re.search(r"arith\.muli %\w+, %c40_i32", ttgir), ttgir
    assert re.search(r"arith\.addi %\w+, %c8_i32", ttgir), ttgir
    assert re.search(
        r"ttg\.memdesc_reinterpret %\w+ : !ttg\.memdesc<128xi8[^>]*> -> "
        r"!ttg\.memdesc<1x16x128xf16",
        ttgir,
    ), ttgir
    ptx = compiled.asm["ptx"]
    assert "st.shared" in ptx and re.search(r"mad\.lo\.s32\s+%r\d+, %r\d+, 5120,", ptx), ptx


def test_the_report_shows_the_view_of_each_group():
    (spec_plan,) = tlx.kernel_plans(
        tlx.ASTSource(fn=free_stride, signature=SIGNATURE, constexprs={"NUM": 3}), target=SM90
    )
    text, picture = spec_plan.describe(), spec_plan.to_svg()
    if tlx.compat.GROUP_STRIDE_VIEW_FORM == "slots":
        assert "runtime_row" not in text and "runtime_row" not in picture
        return
    assert "per group from row 40 i + 8 (runtime_row)" in text, text
    assert "b[2]: bytes 11264 .. 15360, buffer group 2, view from bytes 11264 (runtime_row)" in (
        picture
    )


def test_the_hazard_check_follows_each_group_view_to_its_buffer():
    """tlx.check_hazards reads a view per buffer group at the group's row: every access
    maps to a buffer of the plan (an unknown one makes the check incomplete)."""
    report = tlx.check_hazards(
        tlx.ASTSource(fn=free_stride, signature=SIGNATURE, constexprs={"NUM": 3}),
        SM90,
        values={"index": 2},
    )
    assert report.result == "clean" and not report.unmodelled, report.describe()
