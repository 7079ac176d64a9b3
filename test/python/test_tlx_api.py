"""The TLX API's values, types and defaults (no IR checks: test_tlx_lowering)."""

import ast
import re
import subprocess
import sys

import pytest
import tlx
from _helpers import REPOSITORY, ROWS, compile_kernel
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction
from triton.experimental.gluon.language.nvidia import blackwell

TMEM = ttgl.constexpr(tlx.storage_kind.tmem)
ROW_MAJOR = ttgl.constexpr(ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
LANGUAGE_DIR = REPOSITORY / "language"
pytestmark = pytest.mark.usefixtures("always_compile")


def test_enumerations_name_their_values():
    assert [kind.value for kind in tlx.storage_kind] == ["smem", "tmem", "smemCluster"]
    assert [kind.value for kind in tlx.reuse_group_type] == ["shared", "distinct"]


def test_spec_type_equality_and_mangling():
    smem = tlx.storage_alias_spec_type(tlx.storage_kind.smem)
    sized = tlx.storage_alias_spec_type(tlx.storage_kind.smem, 16384)
    tmem = tlx.storage_alias_spec_type(tlx.storage_kind.tmem, 16384)
    assert smem == tlx.storage_alias_spec_type(tlx.storage_kind.smem)
    assert hash(sized) == hash(tlx.storage_alias_spec_type(tlx.storage_kind.smem, 16384))
    assert len({smem, sized, tmem}) == 3
    assert len({smem.mangle(), sized.mangle(), tmem.mangle()}) == 3
    assert all(re.fullmatch(r"\w+", t.mangle()) for t in (smem, sized, tmem))
    assert repr(sized) == "storage_alias_spec_type<smem, 16384>"


def test_group_type_equality_and_mangling():
    shared = tlx.reuse_group_ir_type(tlx.reuse_group_type.shared)
    distinct = tlx.reuse_group_ir_type(tlx.reuse_group_type.distinct)
    assert shared == tlx.reuse_group_ir_type(tlx.reuse_group_type.shared)
    assert shared != distinct and shared.mangle() != distinct.mangle()


def test_spec_value_is_immutable_and_shows_its_fields():
    spec = tlx.storage_alias_spec._of_type(tlx.storage_alias_spec_type(tlx.storage_kind.tmem, 8192))
    assert repr(spec) == "storage_alias_spec(storage=tmem, buffer_size_bytes=8192)"
    assert spec.storage is tlx.storage_kind.tmem and spec.buffer_size_bytes == 8192
    with pytest.raises(AttributeError):
        spec.storage = tlx.storage_kind.smem
    with pytest.raises(AttributeError):
        spec.buffer_size_bytes = 1


@tlx.jit
def print_spec(SIZE: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=TMEM, buffer_size_bytes=SIZE)
    ttgl.static_print(spec)


def test_spec_inside_a_kernel(capfd):
    with pytest.warns(tlx.TLXWarning, match="no buffers|no users"):
        compile_kernel(print_spec, target=GPUTarget("cuda", 100, 32), SIZE=65536)
    assert "storage_alias_spec(storage=tmem, buffer_size_bytes=65536)" in capfd.readouterr().out


@tlx.jit
def assign_storage():
    spec = tlx.storage_alias_spec()
    spec.storage = TMEM


def test_spec_fields_cannot_be_assigned_in_a_kernel():
    with pytest.raises(CompilationError):
        compile_kernel(assign_storage)


def test_buffer_type_equality_and_mangling():
    layout = ttgl.NVMMASharedLayout(128, 16, rank=2)
    view = tlx.planner.View(8192, 1024, 1, 0, 0, "slots", 2, 1, 0, 1, (2, 64, 64))
    smem = tlx.storage_kind.smem
    first = tlx.buffered_tensor_type(ttgl.float16, (2, 64, 64), layout, smem, view)
    second = tlx.buffered_tensor_type(ttgl.float16, (2, 64, 64), layout, smem, view)
    other = tlx.buffered_tensor_type(ttgl.float16, (4, 64, 64), layout, smem, view)
    assert first == second and hash(first) == hash(second)
    assert first != other and first.mangle() != other.mangle()
    assert re.fullmatch(r"\w+", first.mangle())
    # Triton mangles a call's argument types in the caller: an unsealed buffer is refused
    # there, at the call, with its reason.
    unsealed = tlx.buffered_tensor_type(ttgl.float16, (2, 64, 64), layout, smem, None)
    with pytest.raises(tlx.TLXError, match="before its spec is sealed"):
        unsealed.mangle()


def test_default_layouts():
    nvmma = tlx.default_layout((64, 64), ttgl.float16, tlx.storage_kind.smem)
    assert isinstance(nvmma, ttgl.NVMMASharedLayout) and nvmma.swizzle_byte_width == 128
    narrow = tlx.default_layout((64, 16), ttgl.float16, tlx.storage_kind.smem)
    assert isinstance(narrow, ttgl.NVMMASharedLayout) and narrow.swizzle_byte_width == 32
    column = tlx.default_layout((128, 1), ttgl.float32, tlx.storage_kind.smem)
    assert column == ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    vector = tlx.default_layout((256,), ttgl.float32, tlx.storage_kind.smem)
    assert vector == ttgl.SwizzledSharedLayout(1, 1, 1, [0])
    tmem = tlx.default_layout((128, 64), ttgl.float32, tlx.storage_kind.tmem)
    assert isinstance(tmem, blackwell.TensorMemoryLayout)
    assert tuple(tmem.block) == (128, 64) and tmem.col_stride == 1
    half_height = tlx.default_layout((64, 32), ttgl.float16, tlx.storage_kind.tmem)
    assert tuple(half_height.block) == (64, 32)


@tlx.jit
def explicit_layout():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, layout=ROW_MAJOR)
    a.index(1).store(ttgl.full([64, 64], 0, ttgl.float16, ROWS))


def test_an_explicit_layout_wins():
    ttgir = compile_kernel(explicit_layout).asm["ttgir"]
    assert "nvmma_shared" not in ttgir
    assert re.search(r"-> !ttg\.memdesc<2x64x64xf16, #shared1, #smem, mutable>", ttgir)
    # No swizzle: 128-byte alignment is enough.
    assert "ttg.local_alloc {alignment = 128 : i32}" in ttgir


def test_jit_is_gluon_jit_with_tlx_lowering():
    @tlx.jit(noinline=True)
    def kernel():
        pass

    assert isinstance(kernel, tlx.JITFunction) and isinstance(kernel, GluonJITFunction)
    assert kernel.noinline
    tlx_source = tlx.ASTSource(fn=kernel, signature={}, constexprs={})
    gluon_source = GluonASTSource(fn=kernel, signature={}, constexprs={})
    assert isinstance(tlx_source, GluonASTSource)
    assert tlx_source.hash() != gluon_source.hash()


@gluon.jit
def gluon_helper_with_tlx(buffer):
    view = tlx.local_view(buffer, 0)
    view.store(ttgl.full([64, 64], 0, ttgl.float16, ROWS))


@tlx.jit
def kernel_calling_gluon_helper():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    gluon_helper_with_tlx(a)


def test_gluon_helpers_of_a_tlx_kernel_may_use_tlx():
    assert "ttg.local_store" in compile_kernel(kernel_calling_gluon_helper).asm["ttgir"]


def test_import_loads_no_mlir_library():
    probe = (
        "import tlx, tlx.planner\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'libMLIR' not in maps and 'libLLVM' not in maps, 'MLIR loaded'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, env={"PYTHONPATH": str(LANGUAGE_DIR)})


def test_the_builtins_check_their_arguments_and_semantic_only_emits():
    """The API layer checks arguments once, at the builtins (tlx/api/_core.py with
    _checks.py): tlx/api/_semantic.py, which they call, raises nothing itself."""
    source = (LANGUAGE_DIR / "tlx" / "api" / "_semantic.py").read_text()
    raises = [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Raise)]
    assert raises == []
