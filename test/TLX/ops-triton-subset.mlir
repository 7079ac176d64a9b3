// The Triton memory subset round-trips in Triton's own syntax: TTGIR as
// stock Triton 3.6 and 3.9 print it (unknown ops in generic form).
// test/python/test_stock_triton_parses.py feeds the output to stock Triton.
// RUN: triton-opt %s --split-input-file | FileCheck %s
// RUN: triton-opt %s --split-input-file | triton-opt --split-input-file | FileCheck %s
// RUN: triton-opt %s --split-input-file --mlir-print-op-generic | triton-opt --split-input-file | FileCheck %s

// CHECK: #[[BLOCKED:blocked]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[BLOCKED1:blocked1]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[NVMMA:shared]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
// CHECK: #[[SWIZZLED:shared1]] = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
// CHECK: #[[TRANSPOSED:shared2]] = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
// CHECK: #[[BYTES:shared3]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
// CHECK: #smem = #ttg.shared_memory
// CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#shared2 = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]}>
#shared3 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @smem_kernel
  // CHECK-SAME: (%[[PTR:.+]]: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %[[OUT:.+]]: !tt.ptr<f32>, %[[I:.+]]: i32, %[[TOKEN:.+]]: !ttg.async.token)
  // CHECK-SAME: attributes {noinline = false}
  tt.func public @smem_kernel(%ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out: !tt.ptr<f32>, %i: i32, %token: !ttg.async.token) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c2_i32 = arith.constant 2 : i32
    // CHECK: %[[A:.+]] = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #[[NVMMA]], #smem, mutable>
    %a = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // CHECK: %[[B:.+]] = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<3x64x64xf32, #[[SWIZZLED]], #smem, mutable>
    %b = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<3x64x64xf32, #shared1, #smem, mutable>
    // CHECK: "tt.make_range"() <{end = 64 : i32, start = 0 : i32}> : () -> tensor<64xi32, #ttg.slice<{dim = 0, parent = #[[BLOCKED]]}>>
    %range = "tt.make_range"() <{end = 64 : i32, start = 0 : i32}> : () -> tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %row = "tt.expand_dims"(%range) <{axis = 0 : i32}> : (tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>) -> tensor<1x64xi32, #blocked>
    %offsets = "tt.broadcast"(%row) : (tensor<1x64xi32, #blocked>) -> tensor<64x64xi32, #blocked>
    // CHECK: "tt.splat"(%[[PTR]]) : (!tt.ptr<f32>) -> tensor<64x64x!tt.ptr<f32>, #[[BLOCKED]]>
    %base = "tt.splat"(%ptr) : (!tt.ptr<f32>) -> tensor<64x64x!tt.ptr<f32>, #blocked>
    %ptrs = "tt.addptr"(%base, %offsets) : (tensor<64x64x!tt.ptr<f32>, #blocked>, tensor<64x64xi32, #blocked>) -> tensor<64x64x!tt.ptr<f32>, #blocked>
    // CHECK: %[[X:.+]] = "tt.load"(%{{.+}}) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<64x64x!tt.ptr<f32>, #[[BLOCKED]]>) -> tensor<64x64xf32, #[[BLOCKED]]>
    %x = "tt.load"(%ptrs) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<64x64x!tt.ptr<f32>, #blocked>) -> tensor<64x64xf32, #blocked>
    // CHECK: %[[C:.+]] = ttg.local_alloc %[[X]] : (tensor<64x64xf32, #[[BLOCKED]]>) -> !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable>
    %c = ttg.local_alloc %x : (tensor<64x64xf32, #blocked>) -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
    // CHECK: %[[B_I:.+]] = ttg.memdesc_index %[[B]][%[[I]]] : !ttg.memdesc<3x64x64xf32, #[[SWIZZLED]], #smem, mutable> -> !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable>
    %b_i = ttg.memdesc_index %b[%i] : !ttg.memdesc<3x64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
    // CHECK: ttg.local_store %[[X]], %[[B_I]] : tensor<64x64xf32, #[[BLOCKED]]> -> !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable>
    ttg.local_store %x, %b_i : tensor<64x64xf32, #blocked> -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
    // CHECK: gpu.barrier
    gpu.barrier
    %b_2 = ttg.memdesc_index %b[%c2_i32] : !ttg.memdesc<3x64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
    // CHECK: tt.call @helper(%{{.+}}, %[[OUT]]) : (!ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable>, !tt.ptr<f32>) -> ()
    tt.call @helper(%b_2, %out) : (!ttg.memdesc<64x64xf32, #shared1, #smem, mutable>, !tt.ptr<f32>) -> ()
    // CHECK: ttg.local_load %[[B_I]] : !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable> -> tensor<64x64xf32, #[[BLOCKED]]>
    %y = ttg.local_load %b_i : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> -> tensor<64x64xf32, #blocked>
    // CHECK: ttg.local_load %[[B_I]] token %[[TOKEN]] : !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable> -> tensor<64x64xf32, #[[BLOCKED]]>
    %y_token = ttg.local_load %b_i token %token : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> -> tensor<64x64xf32, #blocked>
    // CHECK: %[[SLICE:.+]] = ttg.memdesc_subslice %[[B_I]][0, 32] : !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable> -> !ttg.memdesc<64x32xf32, #[[SWIZZLED]], #smem, mutable, 64x64>
    %slice = ttg.memdesc_subslice %b_i[0, 32] : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x32xf32, #shared1, #smem, mutable, 64x64>
    // CHECK: ttg.local_load %[[SLICE]] : !ttg.memdesc<64x32xf32, #[[SWIZZLED]], #smem, mutable, 64x64> -> tensor<64x32xf32, #[[BLOCKED]]>
    %z = ttg.local_load %slice : !ttg.memdesc<64x32xf32, #shared1, #smem, mutable, 64x64> -> tensor<64x32xf32, #blocked>
    // CHECK: ttg.memdesc_trans %[[B_I]] {order = array<i32: 1, 0>} : !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable> -> !ttg.memdesc<64x64xf32, #[[TRANSPOSED]], #smem, mutable>
    %t = ttg.memdesc_trans %b_i {order = array<i32: 1, 0>} : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared2, #smem, mutable>
    // CHECK: ttg.memdesc_reinterpret %[[B]] : !ttg.memdesc<3x64x64xf32, #[[SWIZZLED]], #smem, mutable> -> !ttg.memdesc<3x64x64xi32, #[[SWIZZLED]], #smem, mutable>
    %r = ttg.memdesc_reinterpret %b : !ttg.memdesc<3x64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<3x64x64xi32, #shared1, #smem, mutable>
    // CHECK: ttg.memdesc_reinterpret %[[A]] : !ttg.memdesc<2x64x64xf16, #[[NVMMA]], #smem, mutable> -> !ttg.memdesc<16384xi8, #[[BYTES]], #smem, mutable>
    %bytes = ttg.memdesc_reinterpret %a : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<16384xi8, #shared3, #smem, mutable>
    // CHECK: "ttg.convert_layout"(%{{.+}}) : (tensor<64x64xf32, #[[BLOCKED]]>) -> tensor<64x64xf32, #[[BLOCKED1]]>
    %converted = "ttg.convert_layout"(%y) : (tensor<64x64xf32, #blocked>) -> tensor<64x64xf32, #blocked1>
    %back = "ttg.convert_layout"(%converted) : (tensor<64x64xf32, #blocked1>) -> tensor<64x64xf32, #blocked>
    %sum = arith.addf %back, %y_token : tensor<64x64xf32, #blocked>
    // CHECK: ttg.local_dealloc %[[C]] : !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable>
    ttg.local_dealloc %c : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
    "tt.store"(%ptrs, %sum) : (tensor<64x64x!tt.ptr<f32>, #blocked>, tensor<64x64xf32, #blocked>) -> ()
    // CHECK: tt.return
    tt.return
  }
  // CHECK-LABEL: tt.func private @helper
  // CHECK-SAME: (%{{.+}}: !ttg.memdesc<64x64xf32, #[[SWIZZLED]], #smem, mutable> {tt.constancy = 1 : i64}, %{{.+}}: !tt.ptr<f32>) attributes {noinline = true}
  tt.func private @helper(%smem: !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> {tt.constancy = 1 : i64}, %ptr: !tt.ptr<f32>) attributes {noinline = true} {
    tt.return
  }
  // CHECK-LABEL: tt.func public @ws_kernel
  tt.func public @ws_kernel(%ptr: !tt.ptr<f32>, %out: !tt.ptr<f32>) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    // CHECK: %[[SMEM:.+]] = ttg.local_alloc
    %smem = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf32, #shared1, #smem, mutable>
    // CHECK: %[[WS:.+]] = ttg.warp_specialize(%[[SMEM]], %{{.+}}) attributes {requestedRegisters = array<i32: 48>}
    // CHECK-NEXT: default {
    // CHECK-NEXT: ttg.memdesc_index %[[SMEM]]
    // CHECK-NEXT: ttg.local_load
    // CHECK-NEXT: ttg.warp_yield %{{.+}} : i32
    // CHECK-NEXT: }
    // CHECK-NEXT: partition0(%[[ARG:.+]]: !ttg.memdesc<2x64x64xf32, #[[SWIZZLED]], #smem, mutable>, %{{.+}}: !tt.ptr<f32>) num_warps(1) {
    // CHECK-NEXT: arith.constant 1 : i32
    // CHECK-NEXT: ttg.memdesc_index %[[ARG]]
    // CHECK-NEXT: ttg.warp_return
    // CHECK-NEXT: } : (!ttg.memdesc<2x64x64xf32, #[[SWIZZLED]], #smem, mutable>, !tt.ptr<f32>) -> i32
    %result = ttg.warp_specialize(%smem, %ptr) attributes {requestedRegisters = array<i32: 48>}
    default {
      %view = ttg.memdesc_index %smem[%c0_i32] : !ttg.memdesc<2x64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
      %value = ttg.local_load %view : !ttg.memdesc<64x64xf32, #shared1, #smem, mutable> -> tensor<64x64xf32, #blocked>
      ttg.warp_yield %c0_i32 : i32
    }
    partition0(%arg2: !ttg.memdesc<2x64x64xf32, #shared1, #smem, mutable>, %arg3: !tt.ptr<f32>) num_warps(1) {
      %c1_i32 = arith.constant 1 : i32
      %view = ttg.memdesc_index %arg2[%c1_i32] : !ttg.memdesc<2x64x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared1, #smem, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<2x64x64xf32, #shared1, #smem, mutable>, !tt.ptr<f32>) -> i32
    // CHECK: ttg.warp_specialize()
    // CHECK-NEXT: default {
    // CHECK-NEXT: ttg.warp_yield
    // CHECK-NEXT: }
    // CHECK-NEXT: partition0() num_warps(2) {
    // CHECK-NEXT: ttg.warp_return
    // CHECK-NEXT: }
    // CHECK-NEXT: partition1() num_warps(4) {
    // CHECK-NEXT: ttg.warp_return
    // CHECK-NEXT: } : () -> ()
    ttg.warp_specialize()
    default {
      ttg.warp_yield
    }
    partition0() num_warps(2) {
      ttg.warp_return
    }
    partition1() num_warps(4) {
      ttg.warp_return
    } : () -> ()
    // CHECK: tt.return %[[WS]] : i32
    tt.return %result : i32
  }
}

// -----

// CHECK: #[[REG:blocked]] = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
// CHECK: #[[ACC:tmem]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
// CHECK: #[[P:tmem1]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
// CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32}
#blocked = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: tt.func public @tmem_kernel
  tt.func public @tmem_kernel(%x: tensor<128x64xf32, #blocked>, %i: i32) {
    %true = arith.constant true
    %c1_i32 = arith.constant 1 : i32
    // CHECK: %[[ACC_BUF:.+]] = ttng.tmem_alloc : () -> !ttg.memdesc<2x128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable>
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: %[[P_BUF:.+]] = ttng.tmem_alloc : () -> !ttg.memdesc<128x64xf16, #[[P]], #ttng.tensor_memory, mutable>
    %p = ttng.tmem_alloc : () -> !ttg.memdesc<128x64xf16, #tmem1, #ttng.tensor_memory, mutable>
    // CHECK: %[[VIEW:.+]] = ttg.memdesc_index %[[ACC_BUF]][%{{.+}}] : !ttg.memdesc<2x128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable>
    %view = ttg.memdesc_index %acc[%i] : !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: ttng.tmem_store %{{.+}}, %[[VIEW]], %{{.+}} : tensor<128x64xf32, #[[REG]]> -> !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable>
    ttng.tmem_store %x, %view, %true : tensor<128x64xf32, #blocked> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: ttng.tmem_load %[[VIEW]] : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #[[REG]]>
    %y = ttng.tmem_load %view : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #blocked>
    %half = arith.truncf %y : tensor<128x64xf32, #blocked> to tensor<128x64xf16, #blocked>
    // CHECK: ttng.tmem_store %{{.+}}, %[[P_BUF]], %{{.+}} : tensor<128x64xf16, #[[REG]]> -> !ttg.memdesc<128x64xf16, #[[P]], #ttng.tensor_memory, mutable>
    ttng.tmem_store %half, %p, %true : tensor<128x64xf16, #blocked> -> !ttg.memdesc<128x64xf16, #tmem1, #ttng.tensor_memory, mutable>
    // CHECK: ttng.tmem_alloc %{{.+}} : (tensor<128x64xf32, #[[REG]]>) -> !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory>
    %init = ttng.tmem_alloc %x : (tensor<128x64xf32, #blocked>) -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory>
    tt.return
  }
  // CHECK-LABEL: tt.func public @tmem_tokens
  tt.func public @tmem_tokens(%x: tensor<128x64xf32, #blocked>, %i: i32) {
    %true = arith.constant true
    // CHECK: %[[BUF:.+]], %[[TOKEN:.+]] = ttng.tmem_alloc : () -> (!ttg.memdesc<2x128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable>, !ttg.async.token)
    %acc, %token = ttng.tmem_alloc : () -> (!ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %view = ttg.memdesc_index %acc[%i] : !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: %[[STORED:.+]] = ttng.tmem_store %{{.+}}, %[[VIEW:.+]][%[[TOKEN]]], %{{.+}} : tensor<128x64xf32, #[[REG]]> -> !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable>
    %stored = ttng.tmem_store %x, %view[%token], %true : tensor<128x64xf32, #blocked> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    // CHECK: %{{.+}}, %{{.+}} = ttng.tmem_load %[[VIEW]][%[[STORED]]] : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #[[REG]]>
    %y, %loaded = ttng.tmem_load %view[%stored] : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #blocked>
    // CHECK: %{{.+}}, %{{.+}} = ttng.tmem_load %[[VIEW]][] : !ttg.memdesc<128x64xf32, #[[ACC]], #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #[[REG]]>
    %z, %fresh = ttng.tmem_load %view[] : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #blocked>
    tt.return
  }
}
