"""Buffer groups at starts of their own through the JIT door (docs/planner.md, "What stays
above the ideal"): where the group-by-group layout puts a user's buffers at starts no one
view's slots hold, Triton 3.6, 3.7 and 3.9 give it a view per buffer group (here per
buffer), each at its own start, one chosen at run time by ``scf.if`` on the index
("selected_rows" with ``View.group_starts``; each group's view the backing's rows from its
start on 3.9, ``View.group_form`` "sliced_rows", the backing's row there on 3.6 and 3.7,
"indexed_row"); 3.8 keeps whole views, a larger region."""

import re

import pytest
import tlx
from _helpers import SM90, compile_kernel
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
SIGNATURE = {"out": "*fp32", "index": "i32"}
OWN_STARTS = tlx.compat.GROUP_STRIDE_VIEW_FORM != "slots"
STARTS = (0, 8192, 10240, 12288)
pytestmark = pytest.mark.usefixtures("always_compile")


@tlx.jit
def own_starts(out, index):
    """shared(u2: i8 2x128, u0: i8 64x128, u1: 4 x i8 16x128): ideal 14 KiB with u1 at 0, 8,
    10 and 12 KiB. Every buffer of u1 is written and read in a loop with a runtime index,
    then u1[index] and u1[2]."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    u0 = tlx.local_alloc((64, 128), ttgl.int8, 1, reuse=spec)
    u1 = tlx.local_alloc((16, 128), ttgl.int8, 4, reuse=spec)
    u2 = tlx.local_alloc((2, 128), ttgl.int8, 1, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(u2, u0, u1, group_type=SHARED))
    total = 0.0
    for i in range(4):
        u1_i = tlx.local_view(u1, i)
        u1_i.store((ttgl.full((16, 128), 1, ttgl.int32, ROWS) * i).to(ttgl.int8))
        total += ttgl.sum(ttgl.sum(u1_i.load(ROWS).to(ttgl.float32), 1), 0)
    u1_index = tlx.local_view(u1, index)
    total += ttgl.sum(ttgl.sum(u1_index.load(ROWS).to(ttgl.float32), 1), 0)
    u1_2 = tlx.local_view(u1, 2)
    total += ttgl.sum(ttgl.sum(u1_2.load(ROWS).to(ttgl.float32), 1), 0)
    ttgl.store(out, total)


def _plan():
    (spec_plan,) = tlx.kernel_plans(
        tlx.ASTSource(fn=own_starts, signature=SIGNATURE, constexprs={}), target=SM90
    )
    return spec_plan


def test_the_region_is_the_ideal_where_the_triton_writes_a_view_per_buffer():
    spec_plan = _plan()
    plan = spec_plan.plan
    assert plan.ok and plan.ideal_bytes == 14 * 1024
    u1 = plan.views[1]
    if not OWN_STARTS:
        assert plan.size_bytes > plan.ideal_bytes
        assert not any(view.group_starts for view in plan.views)
        return
    assert plan.size_bytes == plan.ideal_bytes
    assert u1.form == "selected_rows" and u1.group_starts == STARTS
    assert u1.group_form == tlx.compat.OFFSET_VIEW_FORM
    assert tuple(u1.start_of(i) for i in range(4)) == STARTS
    assert "per buffer from rows 0, 64, 80, 96 (selected_rows)" in spec_plan.describe()


def test_each_use_chooses_its_buffers_view_at_run_time_and_the_kernel_compiles():
    """u1[i] in the loop and u1[index] choose among u1's four views (the backing's 16 rows
    from rows 0, 64, 80 and 96 on 3.9; the backing's row 0, 64, 80 or 96, a constant index,
    on 3.6 and 3.7) by scf.if; u1[2] folds to its own view; the PTX stores."""
    compiled = compile_kernel(own_starts, signature=SIGNATURE, target=SM90)
    ttgir = compiled.asm["ttgir"]
    if tlx.compat.OFFSET_VIEW_FORM == "indexed_row":
        starts = re.findall(
            r"ttg\.memdesc_index %\w+\[%c(\d+)_i32\] : !ttg\.memdesc<112x128xi8", ttgir
        )
        assert "memdesc_subslice" not in ttgir, ttgir
    else:
        starts = re.findall(
            r"ttg\.memdesc_subslice %\w+\[(\d+), 0\] : !ttg\.memdesc<112x128xi8", ttgir
        )
    assert "st.shared" in compiled.asm["ptx"]
    if not OWN_STARTS:
        assert starts == [], ttgir
        return
    assert sorted(set(starts)) == ["0", "64", "80", "96"], ttgir
    assert re.search(r"scf\.if %\w+ -> \(!ttg\.memdesc<1x16x128xi8", ttgir), ttgir


@pytest.mark.parametrize("index", [0, 1, 3])
def test_the_hazard_check_follows_each_buffers_view(index):
    """tlx.check_hazards reads u1[index] through the view the index chooses: every access
    maps to a buffer of the plan, and the kernel (one thread of control) is clean."""
    report = tlx.check_hazards(
        tlx.ASTSource(fn=own_starts, signature=SIGNATURE, constexprs={}),
        SM90,
        values={"index": index},
    )
    assert report.result == "clean" and not report.unmodelled, report.describe()


@gluon.jit
def _store_u1(u1, index):
    tlx.local_view(u1, index).store(ttgl.full((16, 128), 1, ttgl.int8, ROWS))


@gluon.jit
def _load_u0(u0, out):
    tile = tlx.local_view(u0, 0).load(ROWS).to(ttgl.float32)
    ttgl.store(out, ttgl.sum(ttgl.sum(tile, 1), 0))


@tlx.jit
def racing_buffers(out, index):
    """own_starts' tree: one partition writes u1[index] (a runtime index), the other reads
    u0, with nothing between them. At the ideal (3.6, 3.7, 3.9) u1[0] shares u0's first
    2 KiB; u1[1], u1[2] and u1[3] lie after it."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    u0 = tlx.local_alloc((64, 128), ttgl.int8, 1, reuse=spec)
    u1 = tlx.local_alloc((16, 128), ttgl.int8, 4, reuse=spec)
    u2 = tlx.local_alloc((2, 128), ttgl.int8, 1, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(u2, u0, u1, group_type=SHARED))
    ttgl.warp_specialize([(_store_u1, (u1, index)), (_load_u0, (u0, out))], [4], [80])


def test_checking_several_ctas_at_once_reports_each_as_alone():
    """tlx.check_hazards_at, the four indices at once from one TTGIR, reports what
    tlx.check_hazards reports for each alone: the race where the index chooses one (the
    test below), in order."""
    source = tlx.ASTSource(fn=racing_buffers, signature=SIGNATURE, constexprs={})
    ctas = [{"values": {"index": index}} for index in range(4)]
    together = tlx.check_hazards_at(source, SM90, ctas=ctas)
    alone = [tlx.check_hazards(source, SM90, **cta) for cta in ctas]
    assert [report.result for report in together] == [report.result for report in alone]
    assert [report.hazards for report in together] == [report.hazards for report in alone]
    assert [report.values for report in together] == [cta["values"] for cta in ctas]
    assert len({report.ttgir_seconds for report in together}) == 1
    if OWN_STARTS:
        assert [report.result for report in together] == ["hazards", "clean", "clean", "clean"]


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_the_hazard_check_finds_the_race_of_the_buffer_a_runtime_index_chooses(index):
    """The check follows u1[index] to the view its index chooses: a race exactly where the
    plan puts u1[index] over u0, at the bytes they share."""
    source = tlx.ASTSource(fn=racing_buffers, signature=SIGNATURE, constexprs={})
    (spec_plan,) = tlx.kernel_plans(source, target=SM90)
    u0_view, u1_view, _ = spec_plan.plan.views
    u1_start, u0_start = u1_view.start_of(index), u0_view.start_of(0)
    shared = (max(u1_start, u0_start), min(u1_start + 2048, u0_start + 8192))
    if OWN_STARTS:
        assert (shared[0] < shared[1]) == (index == 0)
    report = tlx.check_hazards(source, SM90, values={"index": index})
    assert not report.unmodelled, report.describe()
    if shared[0] >= shared[1]:
        assert report.result == "clean", report.describe()
        return
    assert report.result == "hazards", report.describe()
    text = report.describe()
    assert f'"u1"[{index}]' in text and '"u0"[0]' in text, text
    assert f"bytes {shared[0]} .. {shared[1]}" in text, text
