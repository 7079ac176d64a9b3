// RUN: triton-opt %s --tlx-rewrite-local-alias | FileCheck %s

// tlx.local_alias becomes the stock ttg.memdesc_reinterpret with the same
// source and result types; its users follow.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#bytes = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#words = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
// CHECK-DAG: #[[SHARED:[a-z0-9_]+]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
// CHECK-DAG: #[[TMEM:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32} {
  // CHECK-LABEL: tt.func @smem
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-NEXT: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8, #{{.*}}, #smem, mutable>
  // CHECK-NEXT: %[[A:.*]] = ttg.memdesc_reinterpret %[[BACKING]] : !ttg.memdesc<256x128xi8, #{{.*}}, #smem, mutable> -> !ttg.memdesc<4x64x64xf32, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: %[[N:.*]] = ttg.memdesc_reinterpret %[[A]] : !ttg.memdesc<4x64x64xf32, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<8x64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: ttg.memdesc_index %[[N]][%[[I]]] : !ttg.memdesc<8x64x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NOT: tlx.local_alias
  tt.func @smem(%i: i32) {
    %backing = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8, #bytes, #smem, mutable>
    %a = tlx.local_alias %backing : !ttg.memdesc<256x128xi8, #bytes, #smem, mutable> -> !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>
    %n = tlx.local_alias %a : !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<8x64x64xf16, #shared, #smem, mutable>
    %x = ttg.memdesc_index %n[%i] : !ttg.memdesc<8x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // CHECK-LABEL: tt.func @tmem
  // CHECK-NEXT: %[[BACKING:.*]] = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xi32, #{{.*}}, #ttng.tensor_memory, mutable>
  // CHECK-NEXT: ttg.memdesc_reinterpret %[[BACKING]] : !ttg.memdesc<128x128xi32, #{{.*}}, #ttng.tensor_memory, mutable> -> !ttg.memdesc<2x128x64xf32, #[[TMEM]], #ttng.tensor_memory, mutable>
  // CHECK-NOT: tlx.local_alias
  tt.func @tmem() {
    %backing = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xi32, #words, #ttng.tensor_memory, mutable>
    %a = tlx.local_alias %backing : !ttg.memdesc<128x128xi32, #words, #ttng.tensor_memory, mutable> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}
