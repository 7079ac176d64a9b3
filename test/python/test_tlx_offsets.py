"""Views at byte offsets through the JIT door: a buffer that need not start at a multiple
of its size is placed at its alignment (docs/planner.md, "Views at a byte offset"), in the
form the installed Triton takes (``compat.OFFSET_VIEW_FORM``), and the kernel compiles."""

import re
import warnings

import pytest
import tlx
from _helpers import SM90, compile_kernel
from triton.compiler.errors import CompilationError
from triton.experimental.gluon import language as ttgl

DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
pytestmark = pytest.mark.usefixtures("always_compile")


@tlx.jit
def distinct_pair(out, index, NUM: ttgl.constexpr):
    """distinct(a: bf16 32x8, b: f16 32x16) of NUM buffers each: the issue's smallest
    tree that whole-slot views made larger than no sharing."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((32, 8), ttgl.bfloat16, NUM, reuse=spec)
    b = tlx.local_alloc((32, 16), ttgl.float16, NUM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    b_i = tlx.local_view(b, index)
    b_i.store(ttgl.full((32, 16), 1.0, ttgl.float16, ROWS))
    a_0 = tlx.local_view(a, 0)
    a_0.store(ttgl.full((32, 8), 2.0, ttgl.bfloat16, ROWS))
    total = ttgl.sum(ttgl.sum(b_i.load(ROWS).to(ttgl.float32), 1), 0)
    total += ttgl.sum(ttgl.sum(a_0.load(ROWS).to(ttgl.float32), 1), 0)
    ttgl.store(out, total)


@pytest.mark.parametrize("num", [1, 3])
def test_the_issue_tree_is_no_larger_than_no_sharing(num):
    plans = tlx.kernel_plans(
        tlx.ASTSource(
            fn=distinct_pair, signature={"out": "*fp32", "index": "i32"}, constexprs={"NUM": num}
        ),
        target=SM90,
    )
    (spec_plan,) = plans
    plan = spec_plan.plan
    assert plan.ok
    if tlx.compat.OFFSET_VIEW_FORM == "slots":
        # Triton 3.8: whole slots only, b at a multiple of 1024 bytes.
        assert plan.size_bytes > num * 1536
        return
    assert plan.size_bytes == plan.ideal_bytes == num * 1536
    a_view, b_view = plan.views
    assert a_view.form == "slots" and a_view.base == 0
    assert b_view.form == tlx.compat.OFFSET_VIEW_FORM and b_view.base == num * 512
    assert [b_view.start_of(i) for i in range(num)] == [num * 512 + 1024 * i for i in range(num)]


@pytest.mark.parametrize("num", [1, 3])
def test_an_offset_view_compiles_in_this_triton_form(num):
    compiled = compile_kernel(
        distinct_pair, signature={"out": "*fp32", "index": "i32"}, target=SM90, NUM=num
    )
    ttgir = compiled.asm["ttgir"]
    form = tlx.compat.OFFSET_VIEW_FORM
    subslices = re.findall(r"ttg\.memdesc_subslice %\w+\[(\d+), 0\]", ttgir)
    if form == "sliced_rows":
        assert subslices == [str(num * 512 // 128)]
    else:
        assert subslices == []
    assert "st.shared" in compiled.asm["ptx"]


NVMMA = ttgl.constexpr(ttgl.NVMMASharedLayout(128, 8, rank=2))


@tlx.jit
def misaligned_in_explicit_size():
    """distinct(a: 128 bytes, b: 1 KiB with a 128-byte swizzle) in 1152 bytes: b fits
    after a at 128-byte alignment, but its layout wants 1024."""
    spec = tlx.storage_alias_spec(buffer_size_bytes=1152)
    a = tlx.local_alloc((1, 128), ttgl.int8, 1, reuse=spec)
    b = tlx.local_alloc((8, 128), ttgl.int8, 1, reuse=spec, layout=NVMMA)  # the swizzled one
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    tlx.local_view(a, 0).store(ttgl.full((1, 128), 1, ttgl.int8, ROWS))  # seals


def test_an_alignment_no_offset_inside_the_explicit_size_honours_is_an_error():
    with pytest.raises(CompilationError) as caught:
        compile_kernel(misaligned_in_explicit_size, None, SM90)
    message = caught.value.error_message
    if tlx.compat.OFFSET_VIEW_FORM == "slots":
        # Triton 3.8: b starts at a multiple of its 1 KiB size whatever its alignment.
        assert "is too small: the plan needs 2048 bytes" in message, message
        return
    for fragment in ('buffer "b"', "1024-byte alignment", "buffer_size_bytes=1152", "2048 bytes"):
        assert fragment in message, message


def test_the_report_and_the_picture_show_where_a_view_starts():
    (spec_plan,) = tlx.kernel_plans(
        tlx.ASTSource(
            fn=distinct_pair, signature={"out": "*fp32", "index": "i32"}, constexprs={"NUM": 3}
        ),
        target=SM90,
    )
    form = tlx.compat.OFFSET_VIEW_FORM
    text, picture = spec_plan.describe(), spec_plan.to_svg()
    if form == "slots":
        assert "view" not in text.splitlines()[2] and "view from" not in picture
        return
    assert f"from 1536 ({form})" in text and "whole region" in text
    assert f"b[0]: bytes 1536 .. 2560, buffer group 0, view from bytes 1536 ({form})" in picture


def _offset_view_warnings(num):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_kernel(
            distinct_pair, signature={"out": "*fp32", "index": "i32"}, target=SM90, NUM=num
        )
    messages = [str(w.message) for w in caught if issubclass(w.category, tlx.TLXWarning)]
    return [m for m in messages if "views at byte offsets" in m]


def test_triton_38_rules_warn_where_views_at_byte_offsets_would_plan_smaller(monkeypatch):
    """Under 3.8's rules (no view at a byte offset) the smaller region another release
    would plan is a TLXWarning naming the spec and both sizes, once a spec (a tuner compiles
    it once per configuration); elsewhere none is said."""
    monkeypatch.setattr(tlx.api._sealing, "_TOLD_OFFSET_VIEWS", set())
    said = _offset_view_warnings(3)
    if tlx.compat.OFFSET_VIEW_FORM != "slots":
        assert said == [], said
        return
    (message,) = said
    assert "storage_alias_spec" in message and "needs 5120 bytes" in message, message
    assert message.endswith("would need 4608"), message
    assert _offset_view_warnings(3) == []
