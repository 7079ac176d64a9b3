"""``tlx.kernel_plans``: the plans tlx made for a kernel's specs, as the compiled
kernel allocates them, without compiling it."""

import dataclasses
import inspect
import os
import re

import pytest
import tlx
from _helpers import (
    SM90,
    SM100,
    TMEM_ROWS,
    compile_kernel,
    constant_slots,
    fill,
    fill_tmem,
)
from tlx import planner
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon._runtime import GluonASTSource

TMEM = ttgl.constexpr(tlx.storage_kind.tmem)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
ROW_MAJOR = ttgl.constexpr(ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
SM80 = GPUTarget("cuda", 80, 32)
# The backing allocation of an SMEM spec: [n, 128] x i8 with the plan's alignment.
SMEM_BACKING = re.compile(
    r"ttg\.local_alloc \{alignment = (\d+) : i32\} : \(\) -> !ttg\.memdesc<(\d+)x128xi8"
)
TMEM_BACKING = re.compile(r"%(\w+) = ttng\.tmem_alloc : \(\) -> !ttg\.memdesc<(\d+)x(\d+)xi32")
pytestmark = pytest.mark.usefixtures("always_compile")


def plans_of(kernel, signature=None, target=SM90, **constexprs):
    source = tlx.ASTSource(fn=kernel, signature=signature or {}, constexprs=constexprs)
    return tlx.kernel_plans(source, target=target)


def line_in_file(kernel, text: str) -> int:
    """The line number in this file of ``kernel``'s line containing ``text``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    matches = [first + n for n, line in enumerate(lines) if text in line]
    assert len(matches) == 1, f"{text!r} is on lines {matches}"
    return matches[0]


def smem_backings(ttgir: str) -> list[tuple[int, int]]:
    """(bytes, alignment) of every SMEM backing allocation."""
    return [(int(rows) * 128, int(alignment)) for alignment, rows in SMEM_BACKING.findall(ttgir)]


def view_shapes(ttgir: str) -> dict[str, list[int]]:
    """{view name: [slots, *shape]} of every memdesc_reinterpret."""
    return {
        name: [int(dim) for dim in shape.split("x")]
        for name, shape in re.findall(
            r"%(\w+) = ttg\.memdesc_reinterpret %\w+ : [^>]*> -> !ttg\.memdesc<([\dx]+)x[a-z]",
            ttgir,
        )
    }


@tlx.jit
def one_spec():
    spec = tlx.storage_alias_spec()  # the spec
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 4, reuse=spec)
    c = tlx.local_alloc((32, 64), ttgl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(  # the tree
        tlx.reuse_group(
            a, tlx.reuse_group(tlx.reuse_group(b, group_size=2), c, group_type=DISTINCT)
        )
    )
    fill(a.index(1))
    fill(b.index(3))
    fill(c.index(1))


def test_the_plan_is_the_one_the_ttgir_allocates():
    (spec,) = plans_of(one_spec)
    compiled = compile_kernel(one_spec)
    ttgir = compiled.asm["ttgir"]
    plan = spec.plan
    assert plan.ok and spec.allocated and not spec.private
    assert smem_backings(ttgir) == [(plan.size_bytes, plan.alignment)]
    assert spec.backing_alignment == plan.alignment
    assert compiled.metadata.shared == plan.size_bytes
    shapes = view_shapes(ttgir)
    for buffer, view in zip(spec.buffers, plan.views, strict=True):
        assert shapes[buffer.name] == [view.slots, *buffer.shape[1:]]
    b_view = plan.views[1]
    assert constant_slots(ttgir, "b") == [b_view.slot_of(3)]
    # What was passed to the planner, and its answer.
    assert [buffer.name for buffer in spec.buffers] == ["a", "b", "c"]
    assert [buffer.shape for buffer in spec.buffers] == [(2, 64, 64), (4, 64, 64), (2, 32, 64)]
    assert spec.tree == planner.shared(0, planner.distinct(planner.shared(1, group_size=2), 2))
    assert planner.plan(spec.spec, spec.buffers, spec.tree) == plan
    assert spec.spec == planner.Spec(
        "spec",
        planner.Storage.SMEM,
        None,
        90,
        whole_views=tlx.compat.NEEDS_WHOLE_VIEWS,
        offset_form=tlx.compat.OFFSET_VIEW_FORM,
        group_stride_form=tlx.compat.GROUP_STRIDE_VIEW_FORM,
    )


def test_the_record_names_its_spec_and_source_line():
    (spec,) = plans_of(one_spec)
    line = line_in_file(one_spec, "# the spec")
    assert spec.name == "spec" and spec.storage is tlx.storage_kind.smem
    assert (spec.file_name, spec.line) == (__file__, line)
    assert spec.description == f'storage_alias_spec "spec" (created at test_tlx_plans.py:{line})'
    tree_line = line_in_file(one_spec, "# the tree")
    assert spec.sealed_by == f"set_buffer_overlap at test_tlx_plans.py:{tree_line}"
    assert spec.describe() == (
        f"{spec.description}, sealed by {spec.sealed_by}\n{spec.plan.describe(spec.buffers)}"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.plan = None


def test_plan_without_aliasing_places_every_buffer_after_the_other():
    (spec,) = plans_of(one_spec)
    unaliased = spec.plan_without_aliasing()
    # a: 2 x 16 KiB, b: 4 x 8 KiB, c: 2 x 4 KiB, one after the other (72 KiB; where
    # views must be whole, rounded up to whole buffers of a).
    assert unaliased.ok
    assert [view.offset for view in unaliased.views] == [0, 32768, 65536]
    assert unaliased.ideal_bytes == 73728
    whole = tlx.compat.NEEDS_WHOLE_VIEWS
    assert unaliased.size_bytes == (81920 if whole else 73728)
    assert unaliased.size_bytes > spec.plan.size_bytes


@tlx.jit
def helper_with_a_spec():
    inner = tlx.storage_alias_spec()
    x = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=inner)
    fill(x.index(0))


@tlx.jit
def several_specs():
    smem = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=smem)
    tmem = tlx.storage_alias_spec(storage=TMEM)
    qk = tlx.local_alloc((128, 128), ttgl.float32, 1, TMEM, reuse=tmem)
    p = tlx.local_alloc((128, 128), ttgl.float16, 1, TMEM, reuse=tmem)
    own = tlx.local_alloc((32, 32), ttgl.float32, 1)
    unused = tlx.storage_alias_spec(buffer_size_bytes=65536)
    never_used = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=unused)  # noqa: F841
    fill(a.index(1))
    fill_tmem(qk.index(0))
    p.index(0).store(ttgl.full([128, 128], 0, ttgl.float16, TMEM_ROWS))
    fill(own.index(0))
    helper_with_a_spec()


@pytest.mark.filterwarnings("ignore:.*no overlap tree")  # a spec without a tree on purpose
def test_several_specs_in_creation_order():
    plans = plans_of(several_specs, target=SM100)
    assert [spec.name for spec in plans] == ["smem", "tmem", "own_region", "unused", "inner"]
    assert [spec.storage.value for spec in plans] == ["smem", "tmem", "smem", "smem", "smem"]
    assert [spec.private for spec in plans] == [False, False, True, False, False]
    assert [spec.allocated for spec in plans] == [True, True, True, False, True]
    assert all(spec.plan.ok for spec in plans)
    smem, tmem, own, unused, inner = plans
    assert own.description.startswith('the region of buffer "own" (tlx.local_alloc at ')
    assert own.sealed_by.startswith("tlx.local_alloc at test_tlx_plans.py:")
    assert inner.sealed_by.startswith('the first use of buffer "x" at test_tlx_plans.py:')
    # Never sealed: allocates nothing, but its plan was checked (explicit size kept).
    assert unused.sealed_by is None and unused.backing_alignment == 0
    assert unused.plan.size_bytes == 65536
    assert "never sealed: allocates nothing" in unused.describe()
    assert unused.plan_without_aliasing().size_bytes == 64 * 64 * 2
    # Without a tree every buffer starts at offset 0.
    assert tmem.tree is None and [view.offset for view in tmem.plan.views] == [0, 0]

    ttgir = compile_kernel(several_specs, target=SM100).asm["ttgir"]
    allocated_smem = [spec for spec in plans if spec.allocated and spec.storage.value == "smem"]
    assert sorted(smem_backings(ttgir)) == sorted(
        (spec.plan.size_bytes, spec.plan.alignment) for spec in allocated_smem
    )
    assert TMEM_BACKING.findall(ttgir) == [("tmem", "128", str(tmem.plan.region_size))]


@tlx.jit
def legacy_join():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, layout=ROW_MAJOR)
    fill(a.index(1))
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=a)  # joins
    fill(b.index(0))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy reuse= under test
def test_a_buffer_joining_a_sealed_spec_is_recorded():
    (region,) = plans_of(legacy_join)
    (joined,) = region.joined
    assert [buffer.name for buffer in region.buffers] == ["a"]
    assert joined.buffer.name == "b"
    assert (joined.file_name, joined.line) == (__file__, line_in_file(legacy_join, "# joins"))
    assert joined.spec.explicit_size_bytes == region.plan.size_bytes
    assert joined.plan.views[0].offset == 0
    assert planner.plan(joined.spec, [joined.buffer]) == joined.plan
    # b's NVMMA layout needs more alignment than a's row-major one: the backing gets it.
    assert region.plan.alignment == 128 and region.backing_alignment == joined.plan.alignment
    ttgir = compile_kernel(legacy_join).asm["ttgir"]
    assert smem_backings(ttgir) == [(region.plan.size_bytes, region.backing_alignment)]
    assert "joined after sealing (reuse of a buffer) at test_tlx_plans.py:" in region.describe()


@tlx.jit
def alloc_in_a_loop(n):
    for _ in range(n):
        a = tlx.local_alloc((64, 64), ttgl.float16, 1)
        fill(a.index(0))


def test_a_loop_body_traced_twice_records_its_spec_once():
    (spec,) = plans_of(alloc_in_a_loop, {"n": "i32"})
    assert spec.name == "a_region"


@tlx.jit
def no_specs():
    buffer = ttgl.allocate_shared_memory(ttgl.float16, [64, 64], ROW_MAJOR)
    fill(buffer)


def test_a_kernel_without_specs_has_no_plans():
    assert plans_of(no_specs) == ()


@tlx.jit
def explicit_size_too_small():
    spec = tlx.storage_alias_spec(buffer_size_bytes=16384)
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    fill(a.index(0))


@tlx.jit
def unused_spec_too_small():
    spec = tlx.storage_alias_spec(buffer_size_bytes=1024)
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)  # noqa: F841


@pytest.mark.parametrize(
    ("kernel", "needed"), [(explicit_size_too_small, 32768), (unused_spec_too_small, 16384)]
)
def test_planner_errors_raise_the_compilation_error(kernel, needed):
    with pytest.raises(CompilationError, match=f"the plan needs {needed} bytes") as planned:
        plans_of(kernel)
    with pytest.raises(CompilationError) as compiled:
        compile_kernel(kernel)
    assert planned.value.error_message == compiled.value.error_message
    assert planned.value.node.lineno == compiled.value.node.lineno


@tlx.jit
def region_of_192_kib():
    a = tlx.local_alloc((128, 128), ttgl.float32, 3)
    fill(a.index(0))


def test_the_target_decides_the_limit():
    (sm90,) = plans_of(region_of_192_kib)
    assert sm90.plan.size_bytes == 196608 and sm90.spec.smem_limit_bytes == 232448
    assert sm90.spec.capability == 90
    with pytest.raises(CompilationError, match="more than the target's limit of 166912 bytes"):
        plans_of(region_of_192_kib, target=SM80)


def test_only_a_tlx_source_has_plans():
    with pytest.raises(TypeError, match="tlx.kernel_plans expects a tlx.ASTSource"):
        tlx.kernel_plans(GluonASTSource(fn=one_spec, signature={}), target=SM90)


def test_kernel_plans_neither_reads_nor_writes_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    plans_of(one_spec)
    assert os.listdir(tmp_path) == []
    compile_kernel(one_spec)
    assert os.listdir(tmp_path)


@tlx.jit
def element_types():
    spec = tlx.storage_alias_spec()
    words = tlx.local_alloc((16, 16), ttgl.int64, 2, reuse=spec)
    e4m3 = tlx.local_alloc((16, 16), ttgl.float8e4nv, 2, reuse=spec)
    e5m2 = tlx.local_alloc((16, 16), ttgl.float8e5, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(words, e4m3, e5m2, group_type=DISTINCT))


def test_element_types_are_planned_at_the_width_triton_stores():
    (spec,) = plans_of(element_types)
    bits = {buffer.name: buffer.element_bits for buffer in spec.buffers}
    assert bits == {"words": 64, "e4m3": 8, "e5m2": 8}
    sizes = [view.buffer_size for view in spec.plan.views]
    assert sizes == [2048, 256, 256]


@tlx.jit
def gemm_ring_and_pair():
    ring = tlx.storage_alias_spec()
    a = tlx.local_alloc((128, 64), ttgl.bfloat16, 4, reuse=ring)
    b = tlx.local_alloc((64, 256), ttgl.bfloat16, 4, reuse=ring)
    ring.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    pair = tlx.storage_alias_spec()
    wide = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=pair, layout=ROW_MAJOR)
    narrow = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=pair, layout=ROW_MAJOR)
    pair.set_buffer_overlap(tlx.reuse_group(wide, narrow, group_type=DISTINCT))
    fill(b.index(3))
    fill(narrow.index(1))


def test_the_gemm_ring_and_the_f32_f16_pair_are_planned_at_their_ideal():
    ring, pair = plans_of(gemm_ring_and_pair)
    assert ring.plan.size_bytes == ring.plan.ideal_bytes == 196608
    assert pair.plan.size_bytes == pair.plan.ideal_bytes == 49152
    assert ring.plan.layout == pair.plan.layout == "child-major"
    compiled = compile_kernel(gemm_ring_and_pair)
    ttgir = compiled.asm["ttgir"]
    assert smem_backings(ttgir) == [(196608, 1024), (49152, 128)]
    # b[3] is slot 5 of 32 KiB (after a's four 16 KiB buffers); narrow[1] slot 5 of 8 KiB.
    assert constant_slots(ttgir, "b") == [5] and constant_slots(ttgir, "narrow") == [5]
