// An error in the second spec fails the whole lowering and leaves the module,
// the first spec included, as it was: nothing is sized, placed, allocated,
// aliased or re-indexed, whichever step finds the error.
//
// RUN: not triton-opt %s --split-input-file --tlx-storage-alias-lowering --mlir-print-ir-after-failure 2>&1 | FileCheck %s

// The second spec's explicit size is too small: size definition fails before
// it changes anything, so the module is printed exactly as it came in.
// CHECK: error: buffer_size_bytes=16384 of spec "lowering-errors.mlir:{{[0-9]+}}:{{[0-9]+}}" is too small: the plan needs 32768 bytes
// CHECK: IR Dump After TLXStorageAliasLowering Failed
// CHECK: %[[S:.*]] = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
// CHECK: %[[A:.*]] = tlx.storage_alias_local_alloc %[[S]] : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: %[[B:.*]] = tlx.storage_alias_local_alloc %[[S]] : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: tlx.reuse_group(%[[A]], %[[B]]) group_kind = distinct
// CHECK: tlx.set_buffer_overlap(%[[S]], %{{.*}})
// CHECK: ttg.memdesc_index %[[B]][%{{.*}}] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: tlx.storage_alias_spec storage = smem, size = 16384 : !tlx.storage_alias_spec<smem, 16384>
// CHECK-NOT: ttg.local_alloc
// CHECK-NOT: tlx.local_alias
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @two_specs(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %t = tlx.storage_alias_spec storage = smem, size = 16384 : !tlx.storage_alias_spec<smem, 16384>
    %c = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem, 16384> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

// The second spec's buffer is used whole by a local_load, which allocation
// cannot re-index: only the last step finds it, after the first two have
// sized and placed both specs, yet the module is printed exactly as it came
// in (every spec is planned and analyzed before the IR changes).
// CHECK: error: 'ttg.local_load' op uses the aliased buffer
// CHECK: IR Dump After TLXStorageAliasLowering Failed
// CHECK: %[[S:.*]] = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
// CHECK: %[[A:.*]] = tlx.storage_alias_local_alloc %[[S]] : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: %[[B:.*]] = tlx.storage_alias_local_alloc %[[S]] : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: tlx.reuse_group(%[[A]], %[[B]]) group_kind = distinct
// CHECK: tlx.set_buffer_overlap(%[[S]], %{{.*}})
// CHECK: ttg.memdesc_index %[[B]][%arg0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
// CHECK: tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
// CHECK-NOT: buffer_offset
// CHECK-NOT: ttg.local_alloc
// CHECK-NOT: tlx.local_alias
// CHECK: tlx.set_buffer_overlap
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#blocked = #ttg.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [1, 1, 32], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @two_specs(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %t = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %c = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %d = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %h = tlx.reuse_group(%c, %d) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%t, %h) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %v = ttg.local_load %d : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> tensor<2x64x64xf16, #blocked>
    tt.return
  }
}
