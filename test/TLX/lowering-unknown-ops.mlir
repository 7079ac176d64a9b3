// RUN: triton-opt %s --tlx-storage-alias-lowering | FileCheck %s

// An op triton-opt does not know (kept in generic form) may be isolated from
// above in the Triton that defines it: an index defined inside its region
// gets its slot constants at the top of that region, not of the function.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  // b sits at slot 2 * j + 1.
  // CHECK-LABEL: tt.func @index_inside_unknown_op
  // CHECK-NOT: arith.constant
  // CHECK: tlx.local_alias
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias
  // CHECK-NEXT: "ttg.future_op"() ({
  // CHECK-NEXT: ^bb0(%[[J:.*]]: i32):
  // CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: %[[JS:.*]] = arith.muli %[[J]], %[[TWO]] : i32
  // CHECK-NEXT: %[[SLOT:.*]] = arith.addi %[[JS]], %[[ONE]] : i32
  // CHECK-NEXT: ttg.memdesc_index %[[B]][%[[SLOT]]]
  // CHECK-NEXT: "ttg.future_yield"() : () -> ()
  tt.func @index_inside_unknown_op() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %ab) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    "ttg.future_op"() ({
    ^bb0(%j: i32):
      %bj = ttg.memdesc_index %b[%j] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      "ttg.future_yield"() : () -> ()
    }) : () -> ()
    tt.return
  }
}
