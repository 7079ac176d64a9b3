// RUN: triton-opt %s --tlx-storage-alias-lowering="whole-views=false offset-form=sliced_rows" --split-input-file --verify-diagnostics

// An explicit buffer_size_bytes the buffers would fit at 128-byte alignment,
// but not with the 1024 bytes one layout's 128-byte swizzle wants, at any
// offset: the error names the buffer, its alignment and the bytes (the
// planner's explicit_size_misaligned, docs/diagnostics.md).

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 8}>
!small = !ttg.memdesc<1x1x128xi8, #shared, #ttg.shared_memory, mutable>
!tile = !ttg.memdesc<1x8x128xi8, #nvmma, #ttg.shared_memory, mutable>
module {
  tt.func @misaligned() {
    %s = tlx.storage_alias_spec storage = smem, size = 1152 : !tlx.storage_alias_spec<smem, 1152> loc("spec")
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 1152> -> !small
    // expected-error-re @below {{buffer "offset-views-errors.mlir:{{[0-9]+}}:{{[0-9]+}}" needs a 1024-byte alignment (its layout's swizzle), which no offset inside buffer_size_bytes=1152 of spec "spec" honours: the buffers would fit it at 128-byte alignment, but the plan needs 2048 bytes}}
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 1152> -> !tile
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!small, !tile) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem, 1152>, !tlx.reuse_group<distinct>) -> ()
    tt.return
  }
}
