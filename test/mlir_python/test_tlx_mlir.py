"""tlx_mlir in process: the dialects and passes of triton-opt in MLIR's Python bindings.
A module built with the generated op classes is planned and lowered by a PassManager,
its plan read through BackingAttr and PlacementAttr, and the result compared with what
triton-opt makes of the same text; every module of test/TLX is lowered both ways."""

import re
import subprocess

import pytest
from _tlx_mlir import NOT_BUILT, REPOSITORY, TLX_MLIR_BUILT, triton_opt

if not TLX_MLIR_BUILT:
    pytest.skip(NOT_BUILT, allow_module_level=True)

from tlx_mlir import ir, passmanager, register_dialects  # noqa: E402
from tlx_mlir.dialects import tlx, tt  # noqa: E402

SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
SHARED1 = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
PLAN = "builtin.module(tlx-storage-alias-size-definition,tlx-buffer-offset-calculation)"
LOWER = "builtin.module(tlx-storage-alias-lowering)"


def memdesc(shape, element, layout):
    dims = "x".join(str(d) for d in shape)
    return ir.Type.parse(f"!ttg.memdesc<{dims}x{element}, {layout}, #ttg.shared_memory, mutable>")


def build_shared_of_distinct():
    """tt.func @ring: a spec, three users a, b, c and the tree shared(distinct(a, b), c),
    with the generated builders (test/TLX/offset-calculation.mlir writes it by hand)."""
    module = ir.Module.create()
    module.operation.attributes["ttg.num-warps"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(32), 4
    )
    with ir.InsertionPoint(module.body):
        function = tt.FuncOp("ring", ir.TypeAttr.get(ir.FunctionType.get([], [])))
    with ir.InsertionPoint(function.regions[0].blocks.append()):
        spec_type = ir.Type.parse("!tlx.storage_alias_spec<smem>")
        spec = tlx.storage_alias_spec(spec_type, tlx.StorageKind.smem)
        a_type = memdesc((2, 32, 64), "f16", SHARED)
        b_type = memdesc((2, 64), "f32", SHARED1)
        c_type = memdesc((2, 64, 64), "f32", SHARED)
        a = tlx.storage_alias_local_alloc(a_type, spec)
        b = tlx.storage_alias_local_alloc(b_type, spec)
        c = tlx.storage_alias_local_alloc(c_type, spec)
        ab = tlx.reuse_group(
            ir.Type.parse("!tlx.reuse_group<distinct>"), [a, b], tlx.ReuseGroupKind.distinct
        )
        root = tlx.reuse_group(
            ir.Type.parse("!tlx.reuse_group<shared>"), [ab, c], tlx.ReuseGroupKind.shared
        )
        tlx.set_buffer_overlap(spec, root)
        tt.return_([])
    assert module.operation.verify()
    return module


def run_pipeline(pipeline, module):
    passmanager.PassManager.parse(pipeline).run(module.operation)


def run_triton_opt(pipeline, text):
    result = subprocess.run(
        [triton_opt(), f"--pass-pipeline={pipeline}", "-"],
        input=text,
        capture_output=True,
        text=True,
    )
    # triton-opt ends its output with an empty line.
    return result.returncode, printed(result.stdout)


def printed(module):
    """The module's text, without the trailing newlines whose number differs."""
    return str(module).rstrip("\n")


def ops(module, name):
    return [
        op for op in module.body.operations[0].regions[0].blocks[0].operations if op.name == name
    ]


def test_every_context_knows_the_dialects_and_pipelines_know_the_passes():
    with ir.Context() as context:
        for dialect in ("tlx", "tt", "ttg", "ttng", "arith", "scf", "cf", "func", "gpu"):
            assert context.dialects[dialect] is not None
        for name in (
            "tlx-storage-alias-size-definition",
            "tlx-buffer-offset-calculation",
            "tlx-storage-alias-allocation",
            "tlx-storage-alias-lowering",
            "tlx-rewrite-local-alias",
            "cse",
            "canonicalize",
        ):
            passmanager.PassManager.parse(f"builtin.module({name})")
        with pytest.raises(ValueError, match="tlx-no-such-pass"):
            passmanager.PassManager.parse("builtin.module(tlx-no-such-pass)")


def test_register_dialects_makes_a_bare_context_know_them():
    text = "%s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>"
    # MLIR's Context as the extension defines it, before the site initializers of
    # _mlir_libs/__init__.py wrap it with the registry they fill.
    from tlx_mlir._mlir_libs._mlir import ir as extension_ir

    context = extension_ir._Context()
    with pytest.raises(ir.MLIRError, match="Dialect `tt. not found"):
        ir.Module.parse(f"tt.func @f() {{\n{text}\ntt.return\n}}", context)
    register_dialects(context)
    register_dialects(context)
    module = ir.Module.parse(f"tt.func @f() {{\n{text}\ntt.return\n}}", context)
    assert "tlx.storage_alias_spec storage = smem" in str(module)


def test_a_module_built_with_the_op_classes_is_planned_as_triton_opt_plans_it():
    with ir.Context(), ir.Location.unknown():
        module = build_shared_of_distinct()
        text = str(module)
        run_pipeline(PLAN, module)

        (spec,) = ops(module, "tlx.storage_alias_spec")
        backing = tlx.BackingAttr(spec.attributes["backing"])
        assert spec.attributes["buffer_size_bytes"].value == 32768
        assert str(spec.result.type) == "!tlx.storage_alias_spec<smem, 32768>"
        assert (backing.shape, backing.block) == ([256, 128], [256, 128])
        assert (backing.element_bits, backing.region_size) == (8, 32768)
        assert backing.alignment == 128
        placements = [
            tlx.PlacementAttr(op.attributes["placement"])
            for op in ops(module, "tlx.storage_alias_local_alloc")
        ]
        # a: 4096-byte buffers at slots 4 * i; b: 256-byte buffers at 64 * i + 16
        # (past a's 4096 bytes); c: the whole region per buffer.
        assert [(p.slots, p.scale, p.offset, p.period, p.step) for p in placements] == [
            (8, 4, 0, 1, 1),
            (128, 64, 16, 1, 1),
            (2, 1, 0, 1, 1),
        ]
        assert [(p.base, p.form) for p in placements] == [(0, "slots")] * 3
        assert not ops(module, "tlx.reuse_group") and not ops(module, "tlx.set_buffer_overlap")

        assert run_triton_opt(PLAN, text) == (0, printed(module))


def test_a_placement_at_a_byte_offset_reads_back_its_base_and_form():
    """test/TLX/offset-views.mlir's first module: b's view starts at byte 1536."""
    text = (REPOSITORY / "test" / "TLX" / "offset-views.mlir").read_text()
    text = re.split(r"^// -----$", text, flags=re.MULTILINE)[0]
    with ir.Context():
        module = ir.Module.parse(text)
        run_pipeline(
            "builtin.module(tlx-buffer-offset-calculation{whole-views=false "
            "offset-form=sliced_rows})",
            module,
        )
        placements = [
            tlx.PlacementAttr(op.attributes["placement"])
            for op in ops(module, "tlx.storage_alias_local_alloc")
        ]
        assert [(p.slots, p.offset, p.base, p.form) for p in placements] == [
            (9, 0, 0, "slots"),
            (3, 0, 1536, "sliced_rows"),
        ]


@pytest.mark.parametrize(
    ("offset_form", "form"), [("indexed_row", "runtime_row"), ("sliced_rows", "selected_rows")]
)
def test_a_placement_per_buffer_group_reads_back_its_stride(offset_form, form):
    """test/TLX/group-stride.mlir's first module with indexed_row (Triton 3.6, 3.7) and
    sliced_rows (3.9): w and b are a view per buffer group, 5120 bytes apart."""
    text = (REPOSITORY / "test" / "TLX" / "group-stride.mlir").read_text()
    text = re.split(r"^// -----$", text, flags=re.MULTILINE)[0]
    with ir.Context():
        module = ir.Module.parse(text)
        run_pipeline(
            "builtin.module(tlx-buffer-offset-calculation{whole-views=false "
            f"offset-form={offset_form}}})",
            module,
        )
        placements = [
            tlx.PlacementAttr(op.attributes["placement"])
            for op in ops(module, "tlx.storage_alias_local_alloc")
        ]
        assert [(p.slots, p.base, p.form, p.group_stride) for p in placements] == [
            (1, 0, form, 5120),
            (15, 0, "slots", 0),
            (1, 1024, form, 5120),
        ]


def test_a_module_built_with_the_op_classes_lowers_as_with_triton_opt():
    with ir.Context(), ir.Location.unknown():
        module = build_shared_of_distinct()
        text = str(module)
        run_pipeline(LOWER, module)
        lowered = printed(module)
    assert "tlx.storage_alias_spec" not in lowered
    assert "ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8" in lowered
    assert lowered.count("tlx.local_alias") == 3
    assert run_triton_opt(LOWER, text) == (0, lowered)


def test_a_failing_lowering_raises_and_leaves_the_module_as_it_was():
    with ir.Context(), ir.Location.unknown():
        module = build_shared_of_distinct()
        (spec,) = ops(module, "tlx.storage_alias_spec")
        spec.attributes["buffer_size_bytes"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 16384
        )
        spec.result.set_type(ir.Type.parse("!tlx.storage_alias_spec<smem, 16384>"))
        text = str(module)
        with pytest.raises(ir.MLIRError) as raised:
            run_pipeline(LOWER, module)
        message = "is too small: the plan needs 32768 bytes"
        assert any(message in str(d.message) for d in raised.value.error_diagnostics)
        assert str(module) == text
    code, _ = run_triton_opt(LOWER, text)
    assert code != 0


def tlx_modules():
    """Every module of test/TLX (each part of a --split-input-file test), with its name."""
    modules = []
    for path in sorted((REPOSITORY / "test" / "TLX").glob("*.mlir")):
        parts = re.split(r"^// -----$", path.read_text(), flags=re.MULTILINE)
        modules += [(f"{path.stem}#{i}", part) for i, part in enumerate(parts)]
    return modules


@pytest.mark.parametrize(
    "pipeline",
    [
        LOWER,
        "builtin.module(tlx-storage-alias-lowering{whole-views=false},tlx-rewrite-local-alias)",
        "builtin.module(tlx-storage-alias-lowering{whole-views=false offset-form=sliced_rows},"
        "tlx-rewrite-local-alias)",
        "builtin.module(tlx-storage-alias-lowering{whole-views=false offset-form=indexed_row},"
        "tlx-rewrite-local-alias)",
    ],
    ids=["lowering", "stock-triton-ir", "sliced-rows", "indexed-row"],
)
@pytest.mark.parametrize(("name", "text"), tlx_modules(), ids=[n for n, _ in tlx_modules()])
def test_every_module_of_test_tlx_lowers_as_with_triton_opt(name, text, pipeline):
    triton_opt_parses = run_triton_opt("builtin.module()", text)[0] == 0
    code, expected = run_triton_opt(pipeline, text)
    with ir.Context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError:
            assert not triton_opt_parses, f"{name}: triton-opt parses it, tlx_mlir does not"
            return
        assert triton_opt_parses, f"{name}: tlx_mlir parses it, triton-opt does not"
        if code != 0:
            # triton-opt refuses it (an error test): so does the PassManager, and the
            # module is left as it came in.
            before = str(module)
            with pytest.raises(ir.MLIRError):
                run_pipeline(pipeline, module)
            assert str(module) == before
            return
        run_pipeline(pipeline, module)
        assert printed(module) == expected
