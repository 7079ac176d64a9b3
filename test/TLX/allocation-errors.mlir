// RUN: triton-opt %s --tlx-storage-alias-allocation --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Every problem allocation reports; the module is left as it was.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @spec_without_size() {
    // expected-error @below {{has no backing yet: run --tlx-storage-alias-size-definition first}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @overlap_not_calculated() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    // expected-error @below {{tlx.set_buffer_overlap is still present: run --tlx-buffer-offset-calculation before allocation}}
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem, 32768>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @malformed_backing() {
    // expected-error @below {{has a malformed backing #tlx.backing<shape = [32768], block = [32768], elementBits = 16, alignment = 128, regionSize = 32768>: expected a 2-D shape and block, 8 or 32 element bits and a positive alignment and region}}
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [32768], block = [32768], elementBits = 16, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_missing() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error-re @below {{buffer "{{.*}}" has no placement yet: run --tlx-buffer-offset-calculation first}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_breaks_alignment() {
    %s = tlx.storage_alias_spec storage = smem, size = 4096 {backing = #tlx.backing<shape = [32, 128], block = [32, 128], elementBits = 8, alignment = 1024, regionSize = 4096>} : !tlx.storage_alias_spec<smem, 4096>
    // expected-error @below {{index 0 starts at 512 bytes, which breaks its 1024-byte alignment}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 8, period = 1, scale = 2, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem, 4096> -> !ttg.memdesc<2x4x64xf16, #nvmma, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_view_larger_than_the_region() {
    %s = tlx.storage_alias_spec storage = smem, size = 16384 {backing = #tlx.backing<shape = [128, 128], block = [128, 128], elementBits = 8, alignment = 128, regionSize = 16384>} : !tlx.storage_alias_spec<smem, 16384>
    // expected-error @below {{has 4 slots of 8192 bytes, more than the region of 16384 bytes}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 16384> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_buffers_collide() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{index 2 maps to slot 1, which another of its buffers already occupies}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 2, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_with_zero_period() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{has slot coefficients period=0, scale=1, offset=0, step=1 and 4 slots; period and step must be at least 1, the others non-negative and the slots positive}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 0, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_outside_the_region() {
    %s = tlx.storage_alias_spec storage = smem, size = 16384 {backing = #tlx.backing<shape = [128, 128], block = [128, 128], elementBits = 8, alignment = 128, regionSize = 16384>} : !tlx.storage_alias_spec<smem, 16384>
    // expected-error @below {{index 1 maps to slot 3, outside its view of 2 slots}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 2, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem, 16384> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#blocked = #ttg.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [1, 1, 32], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @unsupported_user() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-note @below {{the buffer comes from here}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 2, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // expected-error @below {{uses the aliased buffer}}
    %v = ttg.local_load %a : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> tensor<2x64x64xf16, #blocked>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @reinterpret_changes_buffer_size() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 4, period = 1, scale = 2, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // expected-error @below {{changes the buffer size of}}
    %r = ttg.memdesc_reinterpret %a : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<4x32x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @reinterpret_changes_memory_space() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @below {{moves the aliased buffer}}
    %r = ttg.memdesc_reinterpret %a : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<2x64x64xf32, #shared, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

#tmem = #ttng.tensor_memory_encoding<colStride = 1>
module {
  tt.func @tmem_encoding_without_block() {
    %s = tlx.storage_alias_spec storage = tmem, size = 65536 {backing = #tlx.backing<shape = [128, 128], block = [128, 128], elementBits = 32, alignment = 1, regionSize = 128>} : !tlx.storage_alias_spec<tmem, 65536>
    // expected-error @below {{the TMEM encoding #ttng.tensor_memory_encoding<colStride = 1> has no blockM and blockN to size the backing allocation with}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<tmem, 65536> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_views_that_overlap() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{buffer groups are 4096 bytes apart, less than the view of one group spans (1 slots of 8192 bytes)}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = runtime_row, groupStride = 4096>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_stride_without_its_form() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{starts at 0 bytes with groups 8192 bytes apart and scale 0 in the form slots; a view per buffer group (runtime_row or selected_rows, and only they) starts at a multiple of 128 bytes of SMEM, its groups a positive multiple of 128 bytes apart (selected_rows: or each at a multiple of 128 bytes of its own, the first at the view's start), scale 0}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, groupStride = 8192>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

// Groups at starts of their own are written selected_rows only, each at a row.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_starts_without_selected_rows() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{starts at 0 bytes with groups 0 bytes apart and scale 0 in the form runtime_row and groups of their own; a view per buffer group}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = runtime_row, groupStarts = [0, 16384, 8192, 24576]>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_starts_off_a_row() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{in the form selected_rows and groups of their own; a view per buffer group}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStarts = [0, 16384, 8200, 24576]>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

// Each group's view of selected_rows is written as a view at a byte offset
// (groupForm sliced_rows or indexed_row); no other form has group views.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @selected_rows_without_group_form() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{in the form selected_rows has group views in the form slots; selected_rows writes each group's view sliced_rows or indexed_row, every other form none (slots)}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStarts = [0, 16384, 8192, 24576]>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_form_of_runtime_row() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{in the form runtime_row has group views in the form indexed_row; selected_rows writes}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = runtime_row, groupStride = 8192, groupForm = indexed_row>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @group_starts_for_other_groups() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{has 3 group starts for 4 buffers in groups of 1}}
    %a = tlx.storage_alias_local_alloc %s {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStarts = [0, 16384, 8192], groupForm = sliced_rows>} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
