// stock-triton: 3.6
// Syntax only Triton 3.6 prints (and only it parses): the TMEM subslice
// offset is `N` and the subslice's layout narrows blockN; tensor
// descriptors wrap a tensor type.
// RUN: triton-opt %s | FileCheck %s
// RUN: triton-opt %s | triton-opt | FileCheck %s
// RUN: triton-opt %s --mlir-print-op-generic | triton-opt | FileCheck %s

// CHECK: #[[NVMMA:shared]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
// CHECK: #[[ACC:tmem]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
// CHECK: #[[HALF:tmem1]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
// CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32}
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @tmem_kernel
  // CHECK-SAME: %{{.+}}: !tt.tensordesc<tensor<64x64xf16, #[[NVMMA]]>>
  tt.func public @tmem_kernel(%desc: !tt.tensordesc<tensor<64x64xf16, #shared>>, %i: i32) {
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %view = ttg.memdesc_index %acc[%i] : !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: ttng.tmem_subslice %{{.+}} {N = 32 : i32} : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #[[HALF]], #ttng.tensor_memory, mutable, 128x64>
    %slice = ttng.tmem_subslice %view {N = 32 : i32} : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem1, #ttng.tensor_memory, mutable, 128x64>
    tt.return
  }
}
