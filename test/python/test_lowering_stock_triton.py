"""End to end: the MLIR half's storage alias lowering produces stock Triton IR.

`triton-opt --tlx-storage-alias-lowering --tlx-rewrite-local-alias` runs in a subprocess
(this process never loads LLVM/MLIR 22); the installed stock Triton then parses and
verifies its output and compiles it to a cubin: the SMEM kernel for sm_90a and sm_100a, the
TMEM kernel for sm_100a. Skipped when triton-opt is not built.
"""

# The kernels are TTGIR, one op per line; ops outside the memory subset the MLIR half
# models are written in generic form, which it passes through.
# ruff: noqa: E501

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
from _helpers import REPOSITORY, find_triton_opt  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402
from triton._C.libtriton import nvidia as triton_nvidia  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

TRITON_OPT = find_triton_opt()
pytestmark = pytest.mark.skipif(
    TRITON_OPT is None,
    reason="triton-opt is not built: run `ninja -C build` (or scripts/install.sh) to test the "
    "MLIR half's lowering against stock Triton",
)

# shared(distinct(a, b), c) in SMEM: a (NVMMA, 8192 B, 1024-byte alignment) at 0, b (8192 B)
# at 8192, c (16384 B) at 0; stride 16384, region 32768 bytes. a[i] -> slot 2i, b[i] -> 2i + 1,
# c keeps its indices.
SMEM_KERNEL = """\
#blocked = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}}>
#nvmma = #ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}}>
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:{capability}", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @smem_kernel(%ptr: !tt.ptr<f16>, %idx: i32) attributes {{noinline = false}} {{
    %rows = arith.constant dense<64> : tensor<64x1xi32, #blocked>
    %c1_i32 = arith.constant 1 : i32
    %spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #nvmma, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #nvmma, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%ab, %c) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %offs_m = "tt.make_range"() <{{end = 64 : i32, start = 0 : i32}}> : () -> tensor<64xi32, #ttg.slice<{{dim = 1, parent = #blocked}}>>
    %offs_n = "tt.make_range"() <{{end = 64 : i32, start = 0 : i32}}> : () -> tensor<64xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>>
    %m = "tt.expand_dims"(%offs_m) <{{axis = 1 : i32}}> : (tensor<64xi32, #ttg.slice<{{dim = 1, parent = #blocked}}>>) -> tensor<64x1xi32, #blocked>
    %m_rows = arith.muli %m, %rows : tensor<64x1xi32, #blocked>
    %base = "tt.splat"(%ptr) : (!tt.ptr<f16>) -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %row_ptrs = "tt.addptr"(%base, %m_rows) : (tensor<64x1x!tt.ptr<f16>, #blocked>, tensor<64x1xi32, #blocked>) -> tensor<64x1x!tt.ptr<f16>, #blocked>
    %n = "tt.expand_dims"(%offs_n) <{{axis = 0 : i32}}> : (tensor<64xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>>) -> tensor<1x64xi32, #blocked>
    %row_ptrs_b = "tt.broadcast"(%row_ptrs) : (tensor<64x1x!tt.ptr<f16>, #blocked>) -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %n_b = "tt.broadcast"(%n) : (tensor<1x64xi32, #blocked>) -> tensor<64x64xi32, #blocked>
    %ptrs = "tt.addptr"(%row_ptrs_b, %n_b) : (tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>) -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %x = "tt.load"(%ptrs) <{{operandSegmentSizes = array<i32: 1, 0, 0>}}> : (tensor<64x64x!tt.ptr<f16>, #blocked>) -> tensor<64x64xf16, #blocked>
    %a_i = ttg.memdesc_index %a[%idx] : !ttg.memdesc<2x64x64xf16, #nvmma, #smem, mutable> -> !ttg.memdesc<64x64xf16, #nvmma, #smem, mutable>
    ttg.local_store %x, %a_i : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #nvmma, #smem, mutable>
    %next = arith.addi %idx, %c1_i32 : i32
    %b_i = ttg.memdesc_index %b[%next] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_store %x, %b_i : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %y = ttg.local_load %a_i : !ttg.memdesc<64x64xf16, #nvmma, #smem, mutable> -> tensor<64x64xf16, #blocked>
    %z = ttg.local_load %b_i : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
    %sum = arith.addf %y, %z : tensor<64x64xf16, #blocked>
    %wide = arith.extf %sum : tensor<64x64xf16, #blocked> to tensor<64x64xf32, #blocked>
    %c_i = ttg.memdesc_index %c[%idx] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    ttg.local_store %wide, %c_i : tensor<64x64xf32, #blocked> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    %back = ttg.local_load %c_i : !ttg.memdesc<64x64xf32, #shared, #smem, mutable> -> tensor<64x64xf32, #blocked>
    %narrow = arith.truncf %back : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    "tt.store"(%ptrs, %narrow) : (tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xf16, #blocked>) -> ()
    tt.return
  }}
}}
"""

# distinct(acc, s) in TMEM: acc (64 columns) at 0, s (32 columns) at 64; stride 128 columns,
# region 256 columns x 128 rows. acc[i] -> slot 2i, s[i] -> 4i + 2.
TMEM_KERNEL = """\
#acc_regs = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#s_regs = #ttg.blocked<{sizePerThread = [1, 32], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @tmem_kernel(%ptr: !tt.ptr<f32>, %idx: i32) attributes {noinline = false} {
    %true = arith.constant true
    %ones = arith.constant dense<1.0> : tensor<128x64xf32, #acc_regs>
    %halves = arith.constant dense<0.5> : tensor<128x32xf32, #s_regs>
    %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %s = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    %root = tlx.reuse_group(%acc, %s) group_kind = distinct : (!ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<2x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<distinct>) -> ()
    %acc_i = ttg.memdesc_index %acc[%idx] : !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    ttng.tmem_store %ones, %acc_i, %true : tensor<128x64xf32, #acc_regs> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %s_i = ttg.memdesc_index %s[%idx] : !ttg.memdesc<2x128x32xf32, #tmem1, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    ttng.tmem_store %halves, %s_i, %true : tensor<128x32xf32, #s_regs> -> !ttg.memdesc<128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    %acc_v = ttng.tmem_load %acc_i : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #acc_regs>
    %s_v = ttng.tmem_load %s_i : !ttg.memdesc<128x32xf32, #tmem1, #ttng.tensor_memory, mutable> -> tensor<128x32xf32, #s_regs>
    %acc_sum = "tt.reduce"(%acc_v) <{axis = 1 : i32}> ({
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      "tt.reduce.return"(%t) : (f32) -> ()
    }) : (tensor<128x64xf32, #acc_regs>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %s_sum = "tt.reduce"(%s_v) <{axis = 1 : i32}> ({
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      "tt.reduce.return"(%t) : (f32) -> ()
    }) : (tensor<128x32xf32, #s_regs>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #s_regs}>>
    %s_sum_acc = "ttg.convert_layout"(%s_sum) : (tensor<128xf32, #ttg.slice<{dim = 1, parent = #s_regs}>>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %total = arith.addf %acc_sum, %s_sum_acc : tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %offs = "tt.make_range"() <{end = 128 : i32, start = 0 : i32}> : () -> tensor<128xi32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %base = "tt.splat"(%ptr) : (!tt.ptr<f32>) -> tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %ptrs = "tt.addptr"(%base, %offs) : (tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>, tensor<128xi32, #ttg.slice<{dim = 1, parent = #acc_regs}>>) -> tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    "tt.store"(%ptrs, %total) : (tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>, tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>) -> ()
    tt.return
  }
}
"""


def lower(source: str, directory: Path) -> Path:
    """Runs the lowering and the local_alias rewrite; returns the .ttgir it wrote."""
    source_path = directory / "kernel.mlir"
    source_path.write_text(source)
    return lower_file(source_path, directory)


def lower_file(source_path: Path, directory: Path) -> Path:
    """Lowers `source_path` into `directory`; returns the .ttgir it wrote."""
    result = subprocess.run(
        [
            str(TRITON_OPT),
            str(source_path),
            "--tlx-storage-alias-lowering",
            "--tlx-rewrite-local-alias",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    lowered = directory / f"{source_path.stem}.ttgir"
    lowered.write_text(result.stdout)
    return lowered


def parse_with_stock_triton(path: Path) -> None:
    context = ir.context()
    ir.load_dialects(context)
    triton_nvidia.load_dialects(context)
    assert ir.parse_mlir_module(str(path), context).verify()


def compile_to_cubin(path: Path, capability: int, monkeypatch, directory: Path):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(directory / "cache"))
    compiled = triton.compile(str(path), target=GPUTarget("cuda", capability, 32))
    assert compiled.asm["cubin"]
    return compiled


@pytest.mark.parametrize("capability", [90, 100])
def test_smem_lowering_compiles_with_stock_triton(tmp_path, monkeypatch, capability):
    lowered = lower(SMEM_KERNEL.format(capability=capability), tmp_path)
    text = lowered.read_text()
    assert "tlx." not in text
    assert "ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<256x128xi8" in text
    assert re.search(r"-> !ttg\.memdesc<4x64x64xf16, #shared\d*, #smem, mutable>", text)
    assert text.count("ttg.memdesc_reinterpret") == 3
    parse_with_stock_triton(lowered)
    compiled = compile_to_cubin(lowered, capability, monkeypatch, tmp_path)
    assert compiled.metadata.shared >= 32768


def test_tmem_lowering_compiles_with_stock_triton(tmp_path, monkeypatch):
    lowered = lower(TMEM_KERNEL, tmp_path)
    text = lowered.read_text()
    assert "tlx." not in text
    assert "ttng.tmem_alloc : () -> !ttg.memdesc<128x256xi32" in text
    assert "blockM = 128, blockN = 256, colStride = 1" in text
    assert "!ttg.memdesc<8x128x32xf32" in text
    parse_with_stock_triton(lowered)
    compile_to_cubin(lowered, 100, monkeypatch, tmp_path)


@pytest.mark.parametrize("offset_form", ["sliced_rows", "indexed_row"])
def test_views_at_byte_offsets_parse_with_the_triton_that_writes_them(tmp_path, offset_form):
    """test/TLX/offset-views.mlir lowered in each form: the installed Triton parses and
    verifies the form it writes (tlx.compat.VIEW_FORMS); 3.8 writes none."""
    from tlx import planner

    version = tuple(int(part) for part in triton.__version__.split(".")[:2])
    if planner.offset_view_form(*version) != offset_form:
        pytest.skip(f"Triton {triton.__version__} does not write {offset_form}")
    source = REPOSITORY / "test" / "TLX" / "offset-views.mlir"
    result = subprocess.run(
        [
            str(TRITON_OPT),
            str(source),
            "--split-input-file",
            f"--tlx-storage-alias-lowering=whole-views=false offset-form={offset_form}",
            "--tlx-rewrite-local-alias",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = [module for module in result.stdout.split("// -----") if module.strip()]
    assert len(modules) == 2
    for number, module in enumerate(modules):
        lowered = tmp_path / f"offsets{number}.ttgir"
        lowered.write_text(module)
        assert ("memdesc_subslice" if offset_form == "sliced_rows" else "128xi8") in module
        parse_with_stock_triton(lowered)


def test_lit_lowering_examples_parse_with_stock_triton(tmp_path):
    """The lowering lit test (constant, argument and computed indices, group_size, TMEM,
    warp_specialize captures, reinterpret chains, nested aliases) lowers to stock IR."""
    lowered = lower_file(REPOSITORY / "test" / "TLX" / "lowering.mlir", tmp_path)
    assert "tlx." not in lowered.read_text()
    parse_with_stock_triton(lowered)


# distinct(acc, s) in TMEM with acc written as one [128, 64] tile (no buffer dimension): acc
# becomes slot 0 of a [2, 128, 64] view and keeps its type, s (32 columns) sits at column 64.
TMEM_SINGLE_BUFFER_KERNEL = """\
#acc_regs = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @tmem_single_buffer(%ptr: !tt.ptr<f32>) attributes {noinline = false} {
    %true = arith.constant true
    %ones = arith.constant dense<1.0> : tensor<128x64xf32, #acc_regs>
    %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %s = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<1x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    %root = tlx.reuse_group(%acc, %s) group_kind = distinct : (!ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<1x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<distinct>) -> ()
    ttng.tmem_store %ones, %acc, %true : tensor<128x64xf32, #acc_regs> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %acc_v = ttng.tmem_load %acc : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #acc_regs>
    %sum = "tt.reduce"(%acc_v) <{axis = 1 : i32}> ({
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      "tt.reduce.return"(%t) : (f32) -> ()
    }) : (tensor<128x64xf32, #acc_regs>) -> tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %offs = "tt.make_range"() <{end = 128 : i32, start = 0 : i32}> : () -> tensor<128xi32, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %base = "tt.splat"(%ptr) : (!tt.ptr<f32>) -> tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    %ptrs = "tt.addptr"(%base, %offs) : (tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>, tensor<128xi32, #ttg.slice<{dim = 1, parent = #acc_regs}>>) -> tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>
    "tt.store"(%ptrs, %sum) : (tensor<128x!tt.ptr<f32>, #ttg.slice<{dim = 1, parent = #acc_regs}>>, tensor<128xf32, #ttg.slice<{dim = 1, parent = #acc_regs}>>) -> ()
    tt.return
  }
}
"""


def test_tmem_single_buffer_lowering_compiles_with_stock_triton(tmp_path, monkeypatch):
    lowered = lower(TMEM_SINGLE_BUFFER_KERNEL, tmp_path)
    text = lowered.read_text()
    assert "tlx." not in text
    assert "ttng.tmem_alloc : () -> !ttg.memdesc<128x128xi32" in text
    assert re.search(
        r"-> !ttg\.memdesc<2x128x64xf32, #tmem\d*, #ttng\.tensor_memory, mutable>", text
    )
    parse_with_stock_triton(lowered)
    compile_to_cubin(lowered, 100, monkeypatch, tmp_path)


# test/TLX/group-stride.mlir's tree, shared(w: f16 32x32, distinct(a: i8 32x32, b: f16
# 16x128)) of 3 buffers, in a kernel that writes b[idx] and w[idx] and reads them back: with
# offset-form indexed_row, b and w are a view per buffer group (runtime_row); with sliced_rows
# too (selected_rows).
GROUP_STRIDE_KERNEL = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
!w = !ttg.memdesc<3x32x32xf16, #shared, #smem, mutable>
!a = !ttg.memdesc<3x32x32xi8, #shared, #smem, mutable>
!b = !ttg.memdesc<3x16x128xf16, #shared, #smem, mutable>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @group_stride(%ptr: !tt.ptr<f16>, %idx: i32) attributes {noinline = false} {
    %ones = arith.constant dense<1.0> : tensor<16x128xf16, #blocked>
    %twos = arith.constant dense<2.0> : tensor<32x32xf16, #blocked>
    %spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %w = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !w
    %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !a
    %b = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !b
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!a, !b) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%w, %ab) group_kind = shared : (!w, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %b_i = ttg.memdesc_index %b[%idx] : !b -> !ttg.memdesc<16x128xf16, #shared, #smem, mutable>
    ttg.local_store %ones, %b_i : tensor<16x128xf16, #blocked> -> !ttg.memdesc<16x128xf16, #shared, #smem, mutable>
    %x = ttg.local_load %b_i : !ttg.memdesc<16x128xf16, #shared, #smem, mutable> -> tensor<16x128xf16, #blocked>
    %w_i = ttg.memdesc_index %w[%idx] : !w -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    ttg.local_store %twos, %w_i : tensor<32x32xf16, #blocked> -> !ttg.memdesc<32x32xf16, #shared, #smem, mutable>
    %y = ttg.local_load %w_i : !ttg.memdesc<32x32xf16, #shared, #smem, mutable> -> tensor<32x32xf16, #blocked>
    %offs = "tt.make_range"() <{end = 128 : i32, start = 0 : i32}> : () -> tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %n = "tt.expand_dims"(%offs) <{axis = 0 : i32}> : (tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>>) -> tensor<1x128xi32, #blocked>
    %n_b = "tt.broadcast"(%n) : (tensor<1x128xi32, #blocked>) -> tensor<16x128xi32, #blocked>
    %base = "tt.splat"(%ptr) : (!tt.ptr<f16>) -> tensor<16x128x!tt.ptr<f16>, #blocked>
    %ptrs = "tt.addptr"(%base, %n_b) : (tensor<16x128x!tt.ptr<f16>, #blocked>, tensor<16x128xi32, #blocked>) -> tensor<16x128x!tt.ptr<f16>, #blocked>
    "tt.store"(%ptrs, %x) : (tensor<16x128x!tt.ptr<f16>, #blocked>, tensor<16x128xf16, #blocked>) -> ()
    %offs_w = "tt.make_range"() <{end = 32 : i32, start = 0 : i32}> : () -> tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %m = "tt.expand_dims"(%offs_w) <{axis = 0 : i32}> : (tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>>) -> tensor<1x32xi32, #blocked>
    %m_b = "tt.broadcast"(%m) : (tensor<1x32xi32, #blocked>) -> tensor<32x32xi32, #blocked>
    %base_w = "tt.splat"(%ptr) : (!tt.ptr<f16>) -> tensor<32x32x!tt.ptr<f16>, #blocked>
    %ptrs_w = "tt.addptr"(%base_w, %m_b) : (tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xi32, #blocked>) -> tensor<32x32x!tt.ptr<f16>, #blocked>
    "tt.store"(%ptrs_w, %y) : (tensor<32x32x!tt.ptr<f16>, #blocked>, tensor<32x32xf16, #blocked>) -> ()
    tt.return
  }
}
"""


def installed_group_stride_forms():
    """(the offset form, the group stride form) the installed Triton writes; skips where
    it writes no view per buffer group (3.8)."""
    from tlx import planner

    version = tuple(int(part) for part in triton.__version__.split(".")[:2])
    form = planner.group_stride_view_form(*version)
    if form == "slots":
        pytest.skip(f"Triton {triton.__version__} writes no view per buffer group")
    return planner.offset_view_form(*version), form


def test_a_view_per_buffer_group_compiles_with_the_triton_that_writes_it(tmp_path, monkeypatch):
    """A free group stride lowered with the installed Triton's offset form parses, verifies
    and compiles on it (tlx.compat.VIEW_FORMS): runtime_row (3.6, 3.7), the backing's row at
    a runtime index reinterpreted to the group's slots, its PTX multiplying the index by the
    5120-byte stride; selected_rows (3.9), each group's rows chosen by scf.if, its PTX adding
    each group's start on its branch (b from 1024, w from 0)."""
    offset_form, form = installed_group_stride_forms()
    source = tmp_path / "group_stride.mlir"
    source.write_text(GROUP_STRIDE_KERNEL)
    result = subprocess.run(
        [
            str(TRITON_OPT),
            str(source),
            f"--tlx-storage-alias-lowering=whole-views=false offset-form={offset_form}",
            "--tlx-rewrite-local-alias",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lowered = tmp_path / "group_stride.ttgir"
    lowered.write_text(result.stdout)
    rows = re.findall(r"ttg\.memdesc_index %\w+\[%\w+\] : !ttg\.memdesc<120x128xi8", result.stdout)
    choices = re.findall(r"scf\.if %\w+ -> \(!ttg\.memdesc", result.stdout)
    assert (len(rows), len(choices)) == ((2, 0) if form == "runtime_row" else (0, 4)), result.stdout
    parse_with_stock_triton(lowered)
    ptx = compile_to_cubin(lowered, 90, monkeypatch, tmp_path).asm["ptx"]
    if form == "runtime_row":
        assert re.search(r"mad\.lo\.s32\s+%r\d+, %r\d+, 5120,", ptx), ptx
        return
    for start in (1024, 6144, 11264, 5120, 10240):
        assert re.search(rf"add\.s32\s+%r\d+, %r\d+, {start};", ptx), (start, ptx)


def test_the_group_stride_lit_examples_parse_with_the_triton_that_writes_them(tmp_path):
    """test/TLX/group-stride.mlir (indices at run time and constant, a warp_specialize
    capture) lowered with the installed Triton's offset form: it parses and verifies each
    module with its view per buffer group."""
    offset_form, form = installed_group_stride_forms()
    result = subprocess.run(
        [
            str(TRITON_OPT),
            str(REPOSITORY / "test" / "TLX" / "group-stride.mlir"),
            "--split-input-file",
            f"--tlx-storage-alias-lowering=whole-views=false offset-form={offset_form}",
            "--tlx-rewrite-local-alias",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = [module for module in result.stdout.split("// -----") if module.strip()]
    assert len(modules) == 2
    per_group = "memdesc<128xi8" if form == "runtime_row" else "scf.if"
    for number, module in enumerate(modules):
        assert per_group in module and "tlx." not in module
        lowered = tmp_path / f"group_stride{number}.ttgir"
        lowered.write_text(module)
        parse_with_stock_triton(lowered)


def test_the_group_starts_lit_example_parses_with_the_triton_that_writes_it(tmp_path):
    """test/TLX/group-starts.mlir lowered with the installed Triton's offset form: u1 is a
    view per buffer, each at its own start, chosen by scf.if (docs/planner.md, "What stays
    above the ideal"): the backing's rows from there on 3.9 (sliced_rows), its row there
    on 3.6 and 3.7 (indexed_row); it parses and verifies."""
    offset_form, form = installed_group_stride_forms()
    result = subprocess.run(
        [
            str(TRITON_OPT),
            str(REPOSITORY / "test" / "TLX" / "group-starts.mlir"),
            f"--tlx-storage-alias-lowering=whole-views=false offset-form={offset_form}",
            "--tlx-rewrite-local-alias",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "tlx." not in result.stdout
    subslices = re.findall(r"ttg\.memdesc_subslice %\w+\[(\d+), 0\]", result.stdout)
    rows = re.findall(
        r"ttg\.memdesc_index %\w+\[%c(\d+)_i32\] : !ttg\.memdesc<112x128xi8", result.stdout
    )
    assert "scf.if" in result.stdout, result.stdout
    if offset_form == "sliced_rows":
        assert subslices == ["0", "64", "80", "96", "80"] and rows == [], result.stdout
    else:
        assert subslices == [] and rows == ["0", "64", "80", "96", "80"], result.stdout
    lowered = tmp_path / "group_starts.ttgir"
    lowered.write_text(result.stdout)
    parse_with_stock_triton(lowered)
