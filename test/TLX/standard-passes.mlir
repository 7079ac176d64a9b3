// The plan does not depend on which standard passes ran before the lowering.
// Specs and their users are allocations (an Allocate effect on each result):
// CSE never merges two specs with the same attributes, or two users of one
// spec with the same type; LICM never hoists them out of a loop; symbol DCE
// removes only what no one calls.
// RUN: triton-opt %s --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,KEPT,HELPER
// RUN: triton-opt %s --cse --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,DEAD,HELPER
// RUN: triton-opt %s --canonicalize --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,DEAD,HELPER
// RUN: triton-opt %s --loop-invariant-code-motion --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,KEPT,HELPER
// RUN: triton-opt %s --symbol-dce --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,KEPT,NOHELPER
// RUN: triton-opt %s --canonicalize --cse --loop-invariant-code-motion --symbol-dce --canonicalize --tlx-storage-alias-lowering 2>&1 | FileCheck %s --check-prefixes=CHECK,DEAD,NOHELPER
// RUN: triton-opt %s --symbol-dce --cse --tlx-storage-alias-size-definition --cse --tlx-buffer-offset-calculation --canonicalize --tlx-storage-alias-allocation 2>&1 | FileCheck %s --check-prefixes=CHECK,DEAD,NOHELPER
//
// A user with no use at all (not indexed, not in the overlap tree) is dead
// code, as an unused ttg.local_alloc is: CSE and canonicalize erase it, with
// every trace of it (no view, no warning, the region sized without it).
// Without those passes it keeps its place (offset 0, with a warning).

// The diagnostics come first (stderr is not buffered).
// KEPT: standard-passes.mlir:{{[0-9]+}}:13: warning: buffer "{{.*}}" is not in the overlap tree of spec "{{.*}}"; placed at offset 0
// DEAD-NOT: warning:
// DEAD: module

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {

  // Two specs with the same attributes stay two backings of 48 KiB each:
  // distinct(a: 2 x 16 KiB, b: 2 x 8 KiB) in each.
  // CHECK-LABEL: tt.func @two_specs
  // CHECK: %[[S0:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<384x128xi8
  // CHECK: %[[S1:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<384x128xi8
  // CHECK: %[[A:.*]] = tlx.local_alias %[[S0]] : {{.*}} -> !ttg.memdesc<3x64x64xf32
  // CHECK: %[[B:.*]] = tlx.local_alias %[[S0]] : {{.*}} -> !ttg.memdesc<6x64x64xf16
  // CHECK: %[[C:.*]] = tlx.local_alias %[[S1]] : {{.*}} -> !ttg.memdesc<3x64x64xf32
  // CHECK: %[[D:.*]] = tlx.local_alias %[[S1]] : {{.*}} -> !ttg.memdesc<6x64x64xf16
  // CHECK-DAG: ttg.memdesc_index %[[A]]
  // CHECK-DAG: ttg.memdesc_index %[[B]]
  // CHECK-DAG: ttg.memdesc_index %[[C]]
  // CHECK-DAG: ttg.memdesc_index %[[D]]
  // CHECK: tt.return
  tt.func @two_specs(%i: i32, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s0 = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %s1 = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s0 : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s0 : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s1 : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %d = tlx.storage_alias_local_alloc %s1 : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g0 = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %g1 = tlx.reuse_group(%c, %d) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s0, %g0) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    tlx.set_buffer_overlap(%s1, %g1) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    // The loop-invariant indices may be hoisted; they are rewritten wherever
    // they end up.
    scf.for %k = %c0 to %n step %c1 : i32 {
      %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
      %bk = ttg.memdesc_index %b[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %ci = ttg.memdesc_index %c[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
      %dk = ttg.memdesc_index %d[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.local_dealloc %ai : !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
      ttg.local_dealloc %bk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.local_dealloc %ci : !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
      ttg.local_dealloc %dk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    }
    tt.return
  }

  // A user without any use: kept at offset 0 with a warning (the region is
  // its 4 x 16 KiB), or erased as dead code with every trace of it (the
  // region is e's 2 x 8 KiB).
  // CHECK-LABEL: tt.func @dead_user
  // KEPT: %[[S:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<512x128xi8
  // KEPT: tlx.local_alias %[[S]] : {{.*}} -> !ttg.memdesc<8x64x64xf16
  // KEPT: tlx.local_alias %[[S]] : {{.*}} -> !ttg.memdesc<4x64x64xf32
  // DEAD: %[[S:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
  // DEAD: tlx.local_alias %[[S]] : {{.*}} -> !ttg.memdesc<2x64x64xf16
  // DEAD-NOT: tlx.local_alias
  // CHECK: tt.return
  tt.func @dead_user(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %e = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %dead = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x64x64xf32, #shared, #smem, mutable>
    %g = tlx.reuse_group(%e) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %ei = ttg.memdesc_index %e[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %ei : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // A private function nobody calls: symbol DCE removes it with its spec.
  // HELPER: tt.func private @unused_helper
  // HELPER: ttg.local_alloc
  // NOHELPER-NOT: @unused_helper
  tt.func private @unused_helper(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_dealloc %ai : !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
