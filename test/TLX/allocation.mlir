// RUN: triton-opt %s --tlx-storage-alias-allocation | FileCheck %s

// Allocation alone emits what the first two steps leave in the IR: the
// spec's #tlx.backing (shape, block, element bits, alignment, region) and
// each user's #tlx.placement (slots and slot coefficients).

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
module attributes {"ttg.num-warps" = 4 : i32} {

  // The backing is [N / 128, 128] x i8 with a rank-1 byte layout and the
  // recipe's alignment (1024 for the 128-byte NVMMA swizzle).
  // CHECK-DAG: #[[BYTES:[a-z0-9_]+]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
  // CHECK-DAG: #[[SHARED:[a-z0-9_]+]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
  // CHECK-DAG: #[[NVMMA:[a-z0-9_]+]] = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
  // CHECK-DAG: #[[WORDS:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1>
  // CHECK-DAG: #[[TMEM_P:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>
  // CHECK-DAG: #[[TMEM:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
  // CHECK-LABEL: tt.func @smem_backing
  // CHECK-SAME: (%[[I:.*]]: i32)
  // The slot arithmetic follows the definition of i, its constants first:
  // x: slot 4 * i, y: slot 2 * i + 1.
  // CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : i32
  // CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: %[[XS:.*]] = arith.muli %[[I]], %[[FOUR]] : i32
  // CHECK-NEXT: %[[YS:.*]] = arith.muli %[[I]], %[[TWO]] : i32
  // CHECK-NEXT: %[[YS1:.*]] = arith.addi %[[YS]], %[[ONE]] : i32
  // CHECK-NEXT: %[[BACKING:.*]] = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<32x128xi8, #[[BYTES]], #smem, mutable>
  // CHECK-NEXT: %[[X:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<32x128xi8, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<8x4x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: %[[Y:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<32x128xi8, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<4x8x64xf16, #[[NVMMA]], #smem, mutable>
  // CHECK-NEXT: ttg.memdesc_index %[[X]][%[[XS]]] : !ttg.memdesc<8x4x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<4x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: ttg.memdesc_index %[[Y]][%[[YS1]]] : !ttg.memdesc<4x8x64xf16, #[[NVMMA]], #smem, mutable> -> !ttg.memdesc<8x64xf16, #[[NVMMA]], #smem, mutable>
  // CHECK-NEXT: tt.return
  tt.func @smem_backing(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem, size = 4096 {backing = #tlx.backing<shape = [32, 128], block = [32, 128], elementBits = 8, alignment = 1024, regionSize = 4096>} : !tlx.storage_alias_spec<smem, 4096>
    %x = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 8, period = 1, scale = 4, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 4096> -> !ttg.memdesc<2x4x64xf16, #shared, #smem, mutable>
    %y = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 2, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem, 4096> -> !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>
    %xi = ttg.memdesc_index %x[%i] : !ttg.memdesc<2x4x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<4x64xf16, #shared, #smem, mutable>
    %yi = ttg.memdesc_index %y[%i] : !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable> -> !ttg.memdesc<8x64xf16, #nvmma, #smem, mutable>
    tt.return
  }

  // Placements that are identities (every user at offset 0, its buffers
  // one after the other) keep the indices.
  // CHECK-LABEL: tt.func @identity_placement
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-NEXT: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8, #[[BYTES]], #smem, mutable>
  // CHECK-NEXT: %[[A:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<2x64x64xf32, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: ttg.memdesc_index %[[A]][%[[I]]]
  // CHECK-NEXT: ttg.memdesc_index %[[B]][%[[I]]]
  // CHECK-NEXT: tt.return
  tt.func @identity_placement(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // A reinterpreted view the plan did not know raises the alignment: x
  // (swizzled, 128-byte alignment) is also seen through a 128-byte NVMMA
  // swizzle, so the backing is aligned to 1024 bytes.
  // CHECK-LABEL: tt.func @reinterpreted_view_alignment
  // CHECK-NEXT: %[[BACKING:.*]] = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<64x128xi8, #[[BYTES]], #smem, mutable>
  // CHECK-NEXT: %[[X:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<8x8x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK-NEXT: ttg.memdesc_reinterpret %[[X]] : !ttg.memdesc<8x8x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<8x8x64xf16, #[[NVMMA]], #smem, mutable>
  tt.func @reinterpreted_view_alignment() {
    %s = tlx.storage_alias_spec storage = smem, size = 8192 {backing = #tlx.backing<shape = [64, 128], block = [64, 128], elementBits = 8, alignment = 128, regionSize = 8192>} : !tlx.storage_alias_spec<smem, 8192>
    %x = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 8, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 8192> -> !ttg.memdesc<2x8x64xf16, #shared, #smem, mutable>
    %n = ttg.memdesc_reinterpret %x : !ttg.memdesc<2x8x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>
    tt.return
  }

  // TMEM: one ttng.tmem_alloc of [rows, columns] x i32 whose encoding copies a
  // 32-bit user's (same spelling as the input) with blockM/blockN of the
  // backing. p is unpacked f16 (colStride 2): 64 columns per buffer.
  // CHECK-LABEL: tt.func @tmem_backing
  // CHECK-NEXT: %[[BACKING:.*]] = ttng.tmem_alloc : () -> !ttg.memdesc<128x256xi32, #[[WORDS]], #ttng.tensor_memory, mutable>
  // CHECK-NEXT: tlx.local_alias %[[BACKING]] : !ttg.memdesc<128x256xi32, #[[WORDS]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<4x128x64xf16, #[[TMEM_P]], #ttng.tensor_memory, mutable>
  // CHECK-NEXT: tlx.local_alias %[[BACKING]] : !ttg.memdesc<128x256xi32, #[[WORDS]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<4x128x64xf32, #[[TMEM]], #ttng.tensor_memory, mutable>
  // CHECK-NEXT: tt.return
  tt.func @tmem_backing() {
    %s = tlx.storage_alias_spec storage = tmem, size = 131072 {backing = #tlx.backing<shape = [128, 256], block = [128, 256], elementBits = 32, alignment = 1, regionSize = 256>} : !tlx.storage_alias_spec<tmem, 131072>
    %p = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<tmem, 131072> -> !ttg.memdesc<2x128x64xf16, #tmem_p, #ttng.tensor_memory, mutable>
    %acc = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<tmem, 131072> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}
