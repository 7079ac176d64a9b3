"""A free group stride through the JIT door: where a buffer group ends at no multiple of a
user's buffer size, Triton 3.6 and 3.7 take that user's view per buffer group
(``compat.GROUP_STRIDE_VIEW_FORM`` "runtime_row": the backing's row where the group starts,
indexed at run time, reinterpreted to the group's slots), Triton 3.9 each group's view at
its start, one chosen at run time by ``scf.if`` on the group ("selected_rows";
docs/planner.md, "Views at a byte offset"), so the region is the ideal; 3.8 keeps whole
slots between groups."""

import re

import pytest
import tlx
from _helpers import SM90, compile_kernel
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
SIGNATURE = {"out": "*fp32", "index": "i32"}
FORM = tlx.compat.GROUP_STRIDE_VIEW_FORM
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
    if FORM == "slots":
        # 3.8: no view per group, and the groups sit whole slots apart.
        assert not any(view.per_group for view in plan.views)
        assert plan.size_bytes > plan.ideal_bytes
        return
    assert plan.size_bytes == plan.ideal_bytes == num * 5120
    assert b_view.form == w_view.form == FORM
    assert b_view.group_stride == w_view.group_stride == 5120
    assert [b_view.start_of(i) for i in range(num)] == [1024 + 5120 * i for i in range(num)]
    assert [w_view.start_of(i) for i in range(num)] == [5120 * i for i in range(num)]
    assert a_view.form == "slots" and [a_view.start_of(i) for i in range(num)] == [
        5120 * i for i in range(num)
    ]
    program = b_view.index_program
    if FORM == "runtime_row":
        # The row of b's group: 40 rows a group, from row 8.
        assert [program.evaluate_row(i) for i in range(num)] == [8 + 40 * i for i in range(num)]
    else:
        # Where the view of each of b's groups starts; the program computes the group.
        assert program.group is not None
        assert b_view.group_view_starts(num) == tuple(1024 + 5120 * i for i in range(num))


def test_each_use_indexes_the_group_row_at_run_time_and_the_kernel_compiles():
    compiled = compile_kernel(free_stride, signature=SIGNATURE, target=SM90, NUM=3)
    ttgir = compiled.asm["ttgir"]
    rows = re.findall(
        r"ttg\.memdesc_index %\w+\[(%[\w#]+)\] : !ttg\.memdesc<120x128xi8[^>]*> -> "
        r"!ttg\.memdesc<128xi8",
        ttgir,
    )
    if FORM != "runtime_row":
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


def test_each_use_chooses_its_group_view_at_run_time_and_the_kernel_compiles():
    """selected_rows: b[i] in the loop and b[index] each choose among the views of b's
    three groups (the backing's 32 rows from rows 8, 48 and 88) by scf.if on the group,
    the views built in the branches; the PTX adds each group's start, 1024 + 5120 g, on its
    branch. w[2] folds to its group's view (rows 80..96)."""
    compiled = compile_kernel(free_stride, signature=SIGNATURE, target=SM90, NUM=3)
    ttgir = compiled.asm["ttgir"]
    starts = re.findall(
        r"ttg\.memdesc_subslice %\w+\[(\d+), 0\] : !ttg\.memdesc<120x128xi8[^>]*> -> "
        r"!ttg\.memdesc<(\d+)x128xi8",
        ttgir,
    )
    if FORM != "selected_rows":
        assert not re.search(r"scf\.if %\w+ -> \(!ttg\.memdesc", ttgir), ttgir
        return
    assert starts == [("8", "32"), ("48", "32"), ("88", "32")] * 2 + [("80", "16")], ttgir
    assert len(re.findall(r"scf\.if %\w+ -> \(!ttg\.memdesc<1x16x128xf16", ttgir)) == 4
    ptx = compiled.asm["ptx"]
    for start in (1024, 6144, 11264):
        assert len(re.findall(rf"add\.s32\s+%r\d+, %r\d+, {start};", ptx)) >= 2, (start, ptx)


def test_the_report_shows_the_view_of_each_group():
    (spec_plan,) = tlx.kernel_plans(
        tlx.ASTSource(fn=free_stride, signature=SIGNATURE, constexprs={"NUM": 3}), target=SM90
    )
    text, picture = spec_plan.describe(), spec_plan.to_svg()
    if FORM == "slots":
        assert "per group" not in text and "_row" not in picture
        return
    assert f"per group from row 40 i + 8 ({FORM})" in text, text
    assert f"b[2]: bytes 11264 .. 15360, buffer group 2, view from bytes 11264 ({FORM})" in (
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


@gluon.jit
def _store_b(b, index):
    tlx.local_view(b, index).store(ttgl.full((16, 128), 1.0, ttgl.float16, ROWS))


@gluon.jit
def _load_w(w, out):
    tile = tlx.local_view(w, 2).load(ROWS).to(ttgl.float32)
    ttgl.store(out, ttgl.sum(ttgl.sum(tile, 1), 0))


@tlx.jit
def racing_groups(out, index):
    """free_stride's tree of three buffers each: one partition writes b[index] (a runtime
    index), the other reads w[2], with nothing between them. Where the free stride places
    them (3.6, 3.7, 3.9), b[2] (bytes 11264 .. 15360) shares bytes with w[2] (10240 ..
    12288); b[0] and b[1] do not."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    w = tlx.local_alloc((32, 32), ttgl.float16, 3, reuse=spec)
    a = tlx.local_alloc((32, 32), ttgl.int8, 3, reuse=spec)
    b = tlx.local_alloc((16, 128), ttgl.float16, 3, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(w, tlx.reuse_group(a, b, group_type=DISTINCT), group_type=SHARED)
    )
    ttgl.warp_specialize([(_store_b, (b, index)), (_load_w, (w, out))], [4], [80])


@pytest.mark.parametrize("index", [0, 1, 2])
def test_the_hazard_check_finds_the_race_of_the_group_a_runtime_index_chooses(index):
    """The check follows b[index] to the view of the group the index chooses (its row, or
    the branch of its group): it reports a race exactly where the plan puts b[index] over
    w[2] (b[2] with a view per group), at the bytes they share."""
    source = tlx.ASTSource(fn=racing_groups, signature=SIGNATURE, constexprs={})
    (spec_plan,) = tlx.kernel_plans(source, target=SM90)
    w_view, _, b_view = spec_plan.plan.views
    b_start, w_start = b_view.start_of(index), w_view.start_of(2)
    shared = (max(b_start, w_start), min(b_start + 4096, w_start + 2048))
    if FORM != "slots":
        assert (shared[0] < shared[1]) == (index == 2)
    report = tlx.check_hazards(source, SM90, values={"index": index})
    assert not report.unmodelled, report.describe()
    if shared[0] >= shared[1]:
        assert report.result == "clean", report.describe()
        return
    assert report.result == "hazards", report.describe()
    text = report.describe()
    assert f'"b"[{index}]' in text and '"w"[2]' in text, text
    assert f"bytes {shared[0]} .. {shared[1]}" in text, text
