// stock-triton: 3.9
// Syntax only Triton 3.9 prints (and only it parses): the TMEM subslice
// offset is `offset`, the subslice keeps the TMEM layout, tmem_load may
// reduce, tensor descriptors are `!tt.tensordesc<shape x type, layout>`.
// RUN: triton-opt %s | FileCheck %s
// RUN: triton-opt %s | triton-opt | FileCheck %s
// RUN: triton-opt %s --mlir-print-op-generic | triton-opt | FileCheck %s

// CHECK: #[[LINEAR:linear]] = #ttg.linear<{register = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = {{\[\[}}32, 0], [64, 0]], block = []}>
// CHECK: #[[NVMMA:shared]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
// CHECK: #[[ACC:tmem]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
// CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:103", "ttg.threads-per-warp" = 32 : i32, "ttng.two-ctas" = false}
#linear = #ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[32, 0], [64, 0]], block = []}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:103", "ttg.threads-per-warp" = 32 : i32, "ttng.two-ctas" = false} {
  // CHECK-LABEL: tt.func public @tmem_kernel
  // CHECK-SAME: %{{.+}}: !tt.tensordesc<64x64xf16, #[[NVMMA]]>
  tt.func public @tmem_kernel(%desc: !tt.tensordesc<64x64xf16, #shared>, %i: i32) {
    // CHECK: %[[ACC_BUF:.+]] = ttng.tmem_alloc
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %view = ttg.memdesc_index %acc[%i] : !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: ttng.tmem_subslice %{{.+}} {offset = 32 : i32} : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #[[ACC]], #ttng.tensor_memory, mutable, 128x64>
    %slice = ttng.tmem_subslice %view {offset = 32 : i32} : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem, #ttng.tensor_memory, mutable, 128x64>
    // CHECK: %{{.+}}, %{{.+}} = ttng.tmem_load %{{.+}} {redOp = #ttng.redOp<min>} : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #[[LINEAR]]>, tensor<128xf32, #ttg.slice<{dim = 1, parent = #[[LINEAR]]}>>
    %result, %red = ttng.tmem_load %view {redOp = #ttng.redOp<min>} : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #linear>, tensor<128xf32, #ttg.slice<{dim = 1, parent = #linear}>>
    tt.return
  }
}
