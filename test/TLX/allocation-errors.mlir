// RUN: triton-opt %s --tlx-storage-alias-allocation --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Every problem allocation reports; the module is left as it was.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @spec_without_size() {
    // expected-error @below {{has no size and buffer_shape yet: run --tlx-storage-alias-size-definition first}}
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
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
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
  tt.func @buffer_shape_does_not_match_size() {
    // expected-error @below {{buffer_shape [128, 128] of i8 does not hold the spec's 32768 bytes}}
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 128, 128>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_not_an_integer() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{attribute 'buffer_offset' must be an integer, got "zero"}}
    %a = tlx.storage_alias_local_alloc %s {buffer_offset = "zero"} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_not_whole_buffers() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-error @below {{starts at offset 100 bytes, which is not a whole number of its 8192-byte buffers}}
    %a = tlx.storage_alias_local_alloc %s {buffer_group_stride = 16384 : i64, buffer_offset = 100 : i64, group_size = 1 : i64} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @placement_outside_the_region() {
    %s = tlx.storage_alias_spec storage = smem, size = 16384 {buffer_shape = array<i64: 128, 128>} : !tlx.storage_alias_spec<smem, 16384>
    // expected-error @below {{index 1 maps to slot 3, outside its view of 2 slots}}
    %a = tlx.storage_alias_local_alloc %s {buffer_group_stride = 16384 : i64, buffer_offset = 8192 : i64, group_size = 1 : i64} : !tlx.storage_alias_spec<smem, 16384> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#blocked = #ttg.blocked<{sizePerThread = [1, 1, 1], threadsPerWarp = [1, 1, 32], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @unsupported_user() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    // expected-note @below {{the buffer comes from here}}
    %a = tlx.storage_alias_local_alloc %s {buffer_group_stride = 16384 : i64, buffer_offset = 8192 : i64, group_size = 1 : i64} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
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
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s {buffer_group_stride = 16384 : i64, buffer_offset = 8192 : i64, group_size = 1 : i64} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
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
    %s = tlx.storage_alias_spec storage = smem, size = 32768 {buffer_shape = array<i64: 256, 128>} : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @below {{moves the aliased buffer}}
    %r = ttg.memdesc_reinterpret %a : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<2x64x64xf32, #shared, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

#tmem = #ttng.tensor_memory_encoding<colStride = 1>
module {
  tt.func @tmem_encoding_without_block() {
    %s = tlx.storage_alias_spec storage = tmem, size = 65536 {buffer_shape = array<i64: 128, 128>} : !tlx.storage_alias_spec<tmem, 65536>
    // expected-error @below {{the TMEM encoding #ttng.tensor_memory_encoding<colStride = 1> has no blockM and blockN to size the backing allocation with}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem, 65536> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}
