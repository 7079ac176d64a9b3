// RUN: triton-opt %s --split-input-file --verify-diagnostics --tlx-storage-alias-lowering="whole-views=false offset-form=indexed_row"
// RUN: triton-opt %s --split-input-file --verify-diagnostics --tlx-storage-alias-lowering="whole-views=false offset-form=sliced_rows"

// A user whose buffer groups are each a view of their own (runtime_row with
// indexed_row, selected_rows with sliced_rows: test/TLX/group-stride.mlir) has
// no one view of all its buffers: viewing it as a whole before indexing it is
// an error, and the module is left as it came in.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
!w = !ttg.memdesc<3x32x32xf16, #shared, #ttg.shared_memory, mutable>
!a = !ttg.memdesc<3x32x32xi8, #shared, #ttg.shared_memory, mutable>
!b = !ttg.memdesc<3x16x128xf16, #shared, #ttg.shared_memory, mutable>
!b2 = !ttg.memdesc<3x16x128xbf16, #shared, #ttg.shared_memory, mutable>
module {
  tt.func @viewed_whole(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("stride")
    %w = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !w loc("w")
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !a loc("a")
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !b loc("b")
    %d = tlx.reuse_group(%a, %b) group_kind = distinct : (!a, !b) -> !tlx.reuse_group<distinct>
    %g = tlx.reuse_group(%w, %d) group_kind = shared : (!w, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    // expected-error-re @below {{views the aliased buffer "b" as a whole, but its buffer groups are 5120 bytes apart, no multiple of its buffer size: each group is a view of its own ({{runtime_row|selected_rows}}); index the buffer before viewing it}}
    %v = ttg.memdesc_reinterpret %b : !b -> !b2
    %x = ttg.memdesc_index %v[%i] : !b2 -> !ttg.memdesc<16x128xbf16, #shared, #ttg.shared_memory, mutable>
    tt.return
  }
}
