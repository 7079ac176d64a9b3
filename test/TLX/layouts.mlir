// RUN: triton-opt %s --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,WHOLE
// RUN: triton-opt %s --tlx-storage-alias-lowering="whole-views=false" 2>&1 | FileCheck %s --check-prefixes=CHECK,PART
// RUN: triton-opt %s --tlx-storage-alias-size-definition --tlx-buffer-offset-calculation --tlx-storage-alias-allocation 2>&1 | FileCheck %s --check-prefixes=CHECK,WHOLE

// Each layout the planner chooses among (docs/planner.md), and the slot
// arithmetic of each: the region is the smallest that honours the tree.
// whole-views=false (Triton 3.6, 3.7, 3.9) lets a view stop short of the
// region's end; by default every view covers it (Triton 3.8).

// Under a shared node, qk has 2 buffer groups and p 4: the plan is made
// (index-aligned: p's buffers 2 and 3 share bytes with no qk buffer), with a
// warning that suggests group_size.
// CHECK: warning: buffers "{{.*}}" (2 buffer groups) and "{{.*}}" (4 buffer groups) share bytes in spec "{{.*}}": if "{{.*}}" holds 2 sub-tiles of each "{{.*}}" buffer, group them with group_size=2 (as written, buffer i of "{{.*}}" shares bytes with buffer i of "{{.*}}", and its buffers 2 .. 3 with none)

#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
  // The A/B ring of a 128x256x64 bf16 GEMM with 4 stages, child-major: a0..a3
  // (16 KiB each) then b0..b3 (32 KiB each) in exactly 196608 bytes, where
  // every buffer group together would need 262144. a[i] is slot i, b[i] slot
  // i + 2 of views that cover the region.
  // CHECK-LABEL: tt.func @gemm_ring
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK: %[[B_SLOT:.*]] = arith.addi %[[I]], %[[TWO]] : i32
  // CHECK: %[[RING:.*]] = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<1536x128xi8
  // CHECK: %[[A:.*]] = tlx.local_alias %[[RING]] : {{.*}} -> !ttg.memdesc<12x128x64xbf16
  // CHECK: %[[B:.*]] = tlx.local_alias %[[RING]] : {{.*}} -> !ttg.memdesc<6x64x256xbf16
  // CHECK: ttg.memdesc_index %[[A]][%[[I]]]
  // CHECK: ttg.memdesc_index %[[B]][%[[B_SLOT]]]
  tt.func @gemm_ring(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x128x64xbf16, #nvmma, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x64x256xbf16, #nvmma, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<4x128x64xbf16, #nvmma, #smem, mutable>, !ttg.memdesc<4x64x256xbf16, #nvmma, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<4x128x64xbf16, #nvmma, #smem, mutable> -> !ttg.memdesc<128x64xbf16, #nvmma, #smem, mutable>
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<4x64x256xbf16, #nvmma, #smem, mutable> -> !ttg.memdesc<64x256xbf16, #nvmma, #smem, mutable>
    ttg.local_dealloc %ai : !ttg.memdesc<128x64xbf16, #nvmma, #smem, mutable>
    ttg.local_dealloc %bi : !ttg.memdesc<64x256xbf16, #nvmma, #smem, mutable>
    tt.return
  }
  // distinct(a: 2 x 16 KiB, b: 2 x 8 KiB), child-major: 49152 bytes (the
  // ideal), b[i] at slot i + 4 of 8 KiB.
  // CHECK-LABEL: tt.func @f32_f16_pair
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<384x128xi8
  // CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<3x64x64xf32
  // CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<6x64x64xf16
  tt.func @f32_f16_pair(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %bi : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }
  // A one-buffer tile c shares bytes with buffer group 0 of a two-stage
  // distinct(a, b) (index-aligned counts), group-major: a[i] and b[i] are
  // 4096-byte halves of each 8192-byte group, c covers group 0; 16384 bytes.
  // b[i] is slot 2 i + 1.
  // CHECK-LABEL: tt.func @group_major
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK: %[[SCALED:.*]] = arith.muli %[[I]], %[[TWO]] : i32
  // CHECK: %[[SLOT:.*]] = arith.addi %[[SCALED]], %[[ONE]] : i32
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
  // CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<4x32x64xf16
  // CHECK: %[[B:.*]] = tlx.local_alias {{.*}} -> !ttg.memdesc<4x32x64xf16
  // CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<2x64x64xf16
  // CHECK: ttg.memdesc_index %[[B]][%[[SLOT]]]
  tt.func @group_major(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%c, %ab) group_kind = shared : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %bi : !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    tt.return
  }
  // distinct(a: 3 x 2 KiB, b: 2 x 4 KiB), periodic: every two buffer groups
  // hold a0 a1 b0 b1, then a2 follows; a[i] is slot 6 (i / 2) + (i % 2).
  // Without whole views the region is the ideal 14336 bytes (7 slots of a, 3
  // of b); with them, 16384.
  // CHECK-LABEL: tt.func @periodic
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-DAG: %[[SIX:.*]] = arith.constant 6 : i32
  // CHECK: %[[PERIOD:.*]] = arith.divui %[[I]], %[[TWO]] : i32
  // CHECK: %[[WITHIN:.*]] = arith.remui %[[I]], %[[TWO]] : i32
  // CHECK: %[[SCALED:.*]] = arith.muli %[[PERIOD]], %[[SIX]] : i32
  // CHECK: %[[SLOT:.*]] = arith.addi %[[SCALED]], %[[WITHIN]] : i32
  // WHOLE: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
  // WHOLE: %[[A:.*]] = tlx.local_alias {{.*}} -> !ttg.memdesc<8x16x64xf16
  // WHOLE: tlx.local_alias {{.*}} -> !ttg.memdesc<4x32x64xf16
  // PART: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<112x128xi8
  // PART: %[[A:.*]] = tlx.local_alias {{.*}} -> !ttg.memdesc<7x16x64xf16
  // PART: tlx.local_alias {{.*}} -> !ttg.memdesc<3x32x64xf16
  // CHECK: ttg.memdesc_index %[[A]][%[[SLOT]]]
  tt.func @periodic(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<3x16x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<3x16x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<3x16x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<16x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %ai : !ttg.memdesc<16x64xf16, #shared, #smem, mutable>
    tt.return
  }
  // Each buffer group at its own width (index-aligned counts: groups 2 and 3
  // hold only p): qk at 0 and 16384, p at 0, 16384, 32768 and 40960 (slot
  // 5 (i / 3) + 2 (i % 3) of 8192 bytes), 49152 bytes, the ideal; spacing
  // every group as group 0 would end p's last buffer at 57344.
  // CHECK-LABEL: tt.func @forgotten_sub_tiles
  // CHECK: %[[REGION:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<384x128xi8
  // CHECK: tlx.local_alias %[[REGION]] {{.*}} -> !ttg.memdesc<3x64x64xf32
  // CHECK: tlx.local_alias %[[REGION]] {{.*}} -> !ttg.memdesc<6x64x64xf16
  tt.func @forgotten_sub_tiles() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %qk = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %p = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%qk, %p) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}
