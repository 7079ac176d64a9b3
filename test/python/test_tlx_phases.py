"""Implicit overlap (a reuse_group over one spec's buffers is its overlap), phases
(``tlx.reuse_phases``: one tree per phase, one place per buffer) with their lifetime
check, and the deprecated ``reuse=buffer``, in the JIT world (issue 20)."""

import inspect
import os
import re
import subprocess
import warnings

import pytest
import tlx
from _helpers import SM90, compile_kernel, fill, find_triton_opt
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
ROW_MAJOR = ttgl.constexpr(ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
pytestmark = pytest.mark.usefixtures("always_compile")


def plans_of(kernel, **constexprs):
    source = tlx.ASTSource(fn=kernel, signature={}, constexprs=constexprs)
    return tlx.kernel_plans(source, target=SM90)


def line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    matches = [first + n for n, line in enumerate(lines) if text in line]
    assert len(matches) == 1, f"{text!r} is on lines {matches}"
    return matches[0]


def where(kernel, text: str) -> str:
    return f"{os.path.basename(__file__)}:{line_of(kernel, text)}"


# --- Implicit overlap ------------------------------------------------------------------------


@tlx.jit
def implicit_tree():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    tlx.reuse_group(a, b, group_type=DISTINCT)  # the overlap, without set_buffer_overlap
    fill(a.index(0))
    fill(b.index(1))


@tlx.jit
def explicit_tree():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    fill(a.index(0))
    fill(b.index(1))


def test_a_tree_over_one_spec_is_its_overlap_without_set_buffer_overlap():
    (implicit,) = plans_of(implicit_tree)
    (explicit,) = plans_of(explicit_tree)
    assert implicit.tree == explicit.tree
    assert implicit.plan == explicit.plan
    assert implicit.plan.size_bytes == 4 * 8192  # distinct: nothing shares
    assert implicit.overlap_source == f"tlx.reuse_group at {where(implicit_tree, 'the overlap')}"
    assert f"overlap from tlx.reuse_group at {where(implicit_tree, 'the overlap')}" in (
        implicit.describe()
    )
    assert explicit.overlap_source.startswith("set_buffer_overlap at")
    ttgir = compile_kernel(implicit_tree).asm["ttgir"]
    assert "32x128xi8" not in ttgir and "256x128xi8" in ttgir


@tlx.jit
def largest_tree_wins():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    c = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    inner = tlx.reuse_group(a, b, group_type=DISTINCT)
    tlx.reuse_group(c, inner)  # c shares the bytes of a and b
    fill(a.index(0))


def test_a_subtree_is_part_of_the_largest_tree():
    (record,) = plans_of(largest_tree_wins)
    assert record.tree.kind == "shared" and record.tree.children[0] == 2
    assert record.plan.size_bytes == 2 * 8192


@tlx.jit
def two_unrelated_trees():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    tlx.reuse_group(a, b, group_type=DISTINCT)  # first tree
    tlx.reuse_group(b, a)  # second tree
    fill(a.index(0))


def test_two_unrelated_trees_over_one_spec_are_an_error_naming_both():
    with pytest.raises(CompilationError) as raised:
        plans_of(two_unrelated_trees)
    message = str(raised.value)
    assert "two overlap trees and no set_buffer_overlap" in message
    assert f"tlx.reuse_group at {where(two_unrelated_trees, 'first tree')}" in message
    assert f"tlx.reuse_group at {where(two_unrelated_trees, 'second tree')}" in message


@tlx.jit
def explicit_wins():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    tlx.reuse_group(a, b)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    fill(a.index(0))


def test_set_buffer_overlap_wins_over_other_trees():
    (record,) = plans_of(explicit_wins)
    assert record.tree.kind == "distinct" and record.plan.size_bytes == 2 * 8192


@tlx.jit
def tree_after_first_use():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    fill(a.index(0))
    tlx.reuse_group(a, b, group_type=DISTINCT)  # too late


def test_a_tree_after_the_first_use_is_an_error():
    with pytest.raises(CompilationError, match="already sealed by the first use"):
        plans_of(tree_after_first_use)


@tlx.jit
def no_tree():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    fill(a.index(0))
    fill(b.index(0))


def test_several_buffers_without_a_tree_warn_that_all_start_at_offset_zero():
    with pytest.warns(tlx.TLXWarning, match="every buffer starts at offset 0") as caught:
        plans_of(no_tree)
    (warning,) = [w for w in caught if "offset 0" in str(w.message)]
    assert '"a" and "b"' in str(warning.message)
    assert warning.filename == __file__


# --- Phases ----------------------------------------------------------------------------------

BLOCK = ttgl.constexpr(64)


@tlx.jit
def fused_phases(H_IN_BOTH: ttgl.constexpr, Y_IN_BOTH: ttgl.constexpr, EXPLICIT: ttgl.constexpr):
    # The fused MLP's pattern: per hidden chunk, phase 0 runs the X/W1 ring into H,
    # phase 1 H and the W2 ring into Y; the output tile is used after the loop.
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    w1 = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    h = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    w2 = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 3, reuse=spec, layout=ROW_MAJOR)
    y = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    if H_IN_BOTH and Y_IN_BOTH:
        phases = tlx.reuse_phases(
            tlx.reuse_group(h, y, x, w1, group_type=DISTINCT),
            tlx.reuse_group(h, y, w2, group_type=DISTINCT),
        )
    elif H_IN_BOTH:
        phases = tlx.reuse_phases(
            tlx.reuse_group(h, x, w1, group_type=DISTINCT),
            tlx.reuse_group(h, w2, y, group_type=DISTINCT),
        )
    else:
        phases = tlx.reuse_phases(
            tlx.reuse_group(x, w1, group_type=DISTINCT),
            tlx.reuse_group(h, w2, y, group_type=DISTINCT),
        )
    if EXPLICIT:
        spec.set_buffer_overlap(phases)
    else:
        fill(x.index(0))  # seals the spec in its own block (the loop is another)
    for _chunk in range(4):
        for k in range(2):
            fill(x.index(k))
            fill(w1.index(k))
        if H_IN_BOTH:
            fill(h.index(0))
        for n in range(3):
            fill(w2.index(n))
        if H_IN_BOTH:
            fill(h.index(0))
    fill(y.index(0))


@pytest.mark.parametrize("h_in_both, y_in_both", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("explicit", [True, False])
def test_the_fused_mlp_pattern_is_planned_and_accepted(h_in_both, y_in_both, explicit):
    (record,) = plans_of(fused_phases, H_IN_BOTH=h_in_both, Y_IN_BOTH=y_in_both, EXPLICIT=explicit)
    plan = record.plan
    assert plan.ok and len(plan.phases) == 2 and len(record.phases) == 2
    tile = 8192
    # Phase 0 (x, w1: 4 tiles) and phase 1 (w2: 3 tiles) share bytes; h and y of
    # both phases are apart.
    both = (1 if h_in_both else 0) + (1 if y_in_both else 0)
    assert plan.size_bytes == (both + max(4, 3 + 2 - both)) * tile
    text = record.describe()
    assert 'phase 0: "' in text and 'phase 1: "' in text
    # The picture has one lane per phase, and each buffer's lane names its phases.
    svg = record.to_svg()
    assert "phase 0 shares" in svg and "phase 1 shares" in svg
    assert "x (phase 0)" in svg and "w2 (phase 1)" in svg
    if h_in_both:
        assert "h (phase 0, 1)" in svg
    compile_kernel(fused_phases, H_IN_BOTH=h_in_both, Y_IN_BOTH=y_in_both, EXPLICIT=explicit)


def test_the_dump_of_phases_gives_triton_opt_the_same_plan(tmp_path, capfd):
    triton_opt = find_triton_opt()
    if triton_opt is None:
        pytest.skip("triton-opt is not built (build/bin/triton-opt) and not on PATH")
    os.environ["TLX_DUMP_ALIAS_IR"] = "1"
    try:
        (record,) = plans_of(fused_phases, H_IN_BOTH=True, Y_IN_BOTH=True, EXPLICIT=True)
    finally:
        del os.environ["TLX_DUMP_ALIAS_IR"]
    dump = capfd.readouterr().err
    start = dump.index("// TLX storage alias specs")
    module = tmp_path / "dump.mlir"
    module.write_text(dump[start : dump.index("\n}\n", start) + 3])
    assert "tlx.reuse_phases(" in module.read_text()
    result = subprocess.run(
        [str(triton_opt), str(module), "--test-print-tlx-plan", "-o", os.devnull],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"smem region {record.plan.size_bytes} bytes" in result.stderr
    # The dump's values have no names: buffers are named by their file:line:col.
    name = r'"dump\.mlir:\d+:\d+"'
    assert re.search(rf"phase 0:( {name}){{4}}\n", result.stderr)
    assert re.search(rf"phase 1:( {name}){{3}}\n", result.stderr)


@tlx.jit
def interleaved_phases():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    w2 = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_phases(tlx.reuse_group(x), tlx.reuse_group(w2)))
    for k in range(2):
        fill(x.index(k))  # x first
        fill(w2.index(k))  # w2 in between
        fill(x.index(k))  # x again


def test_interleaved_uses_of_buffers_of_two_phases_are_an_error_at_both_lines():
    with pytest.raises(CompilationError) as raised:
        plans_of(interleaved_phases)
    message = str(raised.value)
    assert '"w2" (phase 1) is used between two uses of buffer "x" (phase 0)' in message
    assert f"is used at {where(interleaved_phases, 'w2 in between')}" in message
    assert f"at {where(interleaved_phases, 'x first')}" in message
    assert f"at {where(interleaved_phases, 'x again')}" in message


@tlx.jit
def use_buffer(buf, k: ttgl.constexpr):
    fill(buf.index(k))


@tlx.jit
def phases_through_helpers(INTERLEAVE: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    w2 = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_phases(tlx.reuse_group(x), tlx.reuse_group(w2)))
    use_buffer(x, 0)
    if INTERLEAVE:
        use_buffer(w2, 0)  # helper in between
        use_buffer(x, 1)
    else:
        use_buffer(x, 1)
        use_buffer(w2, 0)  # one helper instance serves x and w2


def test_the_lifetime_check_sees_buffers_passed_to_helpers():
    # x and w2 have one type and one place: the helper gets an instance per
    # buffer, and its uses count at each call.
    (record,) = plans_of(phases_through_helpers, INTERLEAVE=False)
    assert record.plan.views[0] == record.plan.views[1]
    with pytest.raises(CompilationError) as raised:
        plans_of(phases_through_helpers, INTERLEAVE=True)
    message = str(raised.value)
    assert '"w2" (phase 1) is used between two uses of buffer "x" (phase 0)' in message
    # The lines are those of the index calls inside the helper.
    assert f"is used at {where(use_buffer, 'fill(buf.index(k))')}" in message


@tlx.jit
def use_x(x, k: ttgl.constexpr):
    fill(x.index(k))  # x in a helper


@tlx.jit
def use_x_again(x, k: ttgl.constexpr):
    fill(x.index(k))  # x again in a helper


@tlx.jit
def use_w2(w2, k: ttgl.constexpr):
    fill(w2.index(k))  # w2 in a helper


@gluon.jit
def x_then_w2(x, w2):
    use_x(x, 0)
    use_x(x, 1)
    use_w2(w2, 0)


@gluon.jit
def w2_between_xs(x, w2):
    use_x(x, 0)
    use_w2(w2, 0)
    use_x_again(x, 1)


@tlx.jit
def phases_in_partitions(INTERLEAVE: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    w2 = tlx.local_alloc((BLOCK, BLOCK), ttgl.bfloat16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_phases(tlx.reuse_group(x), tlx.reuse_group(w2)))
    if INTERLEAVE:
        ttgl.warp_specialize([(x_then_w2, (x, w2)), (w2_between_xs, (x, w2))], [4], [80])
    else:
        ttgl.warp_specialize([(x_then_w2, (x, w2)), (x_then_w2, (x, w2))], [4], [80])


def test_each_warp_specialize_partition_may_use_phase_0_then_phase_1():
    # The default partition and the worker each use x then w2 through helpers;
    # in the IR the worker's x follows the default partition's w2, but the
    # partitions run concurrently: each is checked on its own.
    (record,) = plans_of(phases_in_partitions, INTERLEAVE=False)
    assert record.plan.ok


def test_interleaved_uses_within_one_partition_are_an_error_at_the_helpers_lines():
    with pytest.raises(CompilationError) as raised:
        plans_of(phases_in_partitions, INTERLEAVE=True)
    message = str(raised.value)
    assert '"w2" (phase 1) is used between two uses of buffer "x" (phase 0)' in message
    # Each use keeps the line of its own index call, inside the helper called.
    assert f"is used at {where(use_w2, 'w2 in a helper')}" in message
    assert "between the uses of" in message
    assert f"at {where(use_x, 'x in a helper')} and at {where(use_x_again, 'x again')}" in message


@tlx.jit
def one_phase_only():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    tlx.reuse_phases(tlx.reuse_group(x))
    fill(x.index(0))


def test_reuse_phases_needs_two_trees():
    with pytest.raises(CompilationError, match="needs two or more trees"):
        plans_of(one_phase_only)


@tlx.jit
def set_twice_with_phases():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    w = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_phases(tlx.reuse_group(x), tlx.reuse_group(w)))
    spec.set_buffer_overlap(tlx.reuse_group(x, w))


def test_set_buffer_overlap_stays_once_per_spec():
    with pytest.raises(CompilationError, match="set_buffer_overlap is called twice"):
        plans_of(set_twice_with_phases)


@tlx.jit
def phases_disagree():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    c = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    # c shares bytes with a in phase 0 and with b in phase 1, but a and b are
    # ordered differently: no one place for c.
    tlx.reuse_phases(
        tlx.reuse_group(tlx.reuse_group(a, b, group_type=DISTINCT), c),
        tlx.reuse_group(tlx.reuse_group(b, a, group_type=DISTINCT), c),
    )
    fill(c.index(0))


def test_a_buffer_of_several_phases_without_one_place_is_an_error():
    with pytest.raises(CompilationError) as raised:
        plans_of(phases_disagree)
    message = str(raised.value)
    assert 'buffer "a" is in phases 0 and 1 of spec "spec", which, each planned alone' in message
    assert '"a" shares bytes with another buffer in phase 0' in message


# --- Legacy reuse=buffer ---------------------------------------------------------------------


@tlx.jit
def legacy_reuse():
    q = tlx.local_alloc((64, 64), ttgl.float16, 1, layout=ROW_MAJOR)
    o = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=q, layout=ROW_MAJOR)  # legacy
    fill(o.index(0))


def test_legacy_reuse_warns_at_the_users_line_with_the_spec_code():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (record,) = plans_of(legacy_reuse)
        ttgir = compile_kernel(legacy_reuse).asm["ttgir"]
    (warning, *_) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert (warning.filename, warning.lineno) == (__file__, line_of(legacy_reuse, "# legacy"))
    text = str(warning.message)
    assert "local_alloc(..., reuse=q)" in text and "deprecated" in text
    assert "q_o_spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)" in text
    assert "o = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=q_o_spec)" in text
    assert "tlx.reuse_group(q, o)" in text and "docs/migration.md" in text
    # The behaviour is unchanged: o joins q's region at offset 0.
    (joined,) = record.joined
    assert joined.plan.views[0].offset == 0
    assert len(re.findall(r"ttg\.local_alloc", ttgir)) == 1


@tlx.jit
def phase_inside_another():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    w = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    inner = tlx.reuse_group(x)
    tlx.reuse_group(inner, w)
    tlx.reuse_phases(inner, tlx.reuse_group(w))


@tlx.jit
def phase_of_a_buffer():
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    w = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=spec, layout=ROW_MAJOR)
    tlx.reuse_phases(x, tlx.reuse_group(w))


def test_reuse_phases_takes_trees_of_their_own():
    with pytest.raises(CompilationError, match="which is already part of tlx.reuse_group at"):
        plans_of(phase_inside_another)
    with pytest.raises(CompilationError, match="takes tlx.reuse_group trees, got buffered_tensor"):
        plans_of(phase_of_a_buffer)
