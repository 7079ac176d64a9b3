// Every verifier and parser error of the Triton memory subset, one case
// each.
// RUN: triton-opt %s --split-input-file --verify-diagnostics

tt.func @return_count() -> i32 {
  // expected-error @below {{'tt.return' op returns 0 value(s) but the enclosing function @return_count returns 1}}
  tt.return
}

// -----

tt.func @return_type(%x: i64) -> i32 {
  // expected-error @below {{'tt.return' op value #0 has type 'i64' but function @return_type returns 'i32'}}
  tt.return %x : i64
}

// -----

tt.func @call_unknown() {
  // expected-error @below {{'tt.call' op calls @missing, which is not a tt.func in scope}}
  tt.call @missing() : () -> ()
  tt.return
}

// -----

tt.func private @callee(%x: i32) -> i32
tt.func @call_operand_count() {
  // expected-error @below {{'tt.call' op passes 0 operand(s) but @callee takes 1}}
  %r = tt.call @callee() : () -> i32
  tt.return
}

// -----

tt.func private @callee(%x: i32) -> i32
tt.func @call_operand_type(%x: i64) {
  // expected-error @below {{'tt.call' op operand #0 has type 'i64' but @callee takes 'i32'}}
  %r = tt.call @callee(%x) : (i64) -> i32
  tt.return
}

// -----

tt.func private @callee(%x: i32) -> i32
tt.func @call_result_count(%x: i32) {
  // expected-error @below {{'tt.call' op has 0 result(s) but @callee returns 1}}
  tt.call @callee(%x) : (i32) -> ()
  tt.return
}

// -----

tt.func private @callee(%x: i32) -> i32
tt.func @call_result_type(%x: i32) {
  // expected-error @below {{'tt.call' op result #0 has type 'i64' but @callee returns 'i32'}}
  %r = tt.call @callee(%x) : (i32) -> i64
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @index_shape(%a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, %i: i32) {
  // expected-error @below {{'ttg.memdesc_index' op result shape [64, 32] must be the source shape [2, 64, 64] without its leading (buffer) dimension}}
  %v = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x32xf32, #shared, #smem, mutable>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @index_element_type(%a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, %i: i32) {
  // expected-error @below {{'ttg.memdesc_index' op result element type 'f16' must be the source element type 'f32'}}
  %v = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
  tt.return
}

// -----

tt.func @partition_numbering() {
  ttg.warp_specialize()
  default {
    ttg.warp_yield
  }
  partition0() num_warps(1) {
    ttg.warp_return
  }
  // expected-error @below {{expected 'partition1', got 'partition2'}}
  partition2() num_warps(1) {
    ttg.warp_return
  } : () -> ()
  tt.return
}

// -----

tt.func @partition_argument_count(%x: i32) {
  // expected-error @below {{'ttg.warp_specialize' op partition #0 has 0 argument(s) but there are 1 capture(s)}}
  ttg.warp_specialize(%x)
  default {
    ttg.warp_yield
  }
  partition0() num_warps(1) {
    ttg.warp_return
  } : (i32) -> ()
  tt.return
}

// -----

tt.func @partition_argument_type(%x: i32) {
  // expected-error @below {{'ttg.warp_specialize' op partition #0 argument #0 has type 'i64' but capture #0 has type 'i32'}}
  ttg.warp_specialize(%x)
  default {
    ttg.warp_yield
  }
  partition0(%arg: i64) num_warps(1) {
    ttg.warp_return
  } : (i32) -> ()
  tt.return
}

// -----

tt.func @default_yield_types(%x: i64) {
  // expected-error @below {{'ttg.warp_specialize' op default region yields ('i64') but the op returns ('i32')}}
  %r = ttg.warp_specialize()
  default {
    ttg.warp_yield %x : i64
  } : () -> i32
  tt.return
}

// -----

tt.func @partition_warp_counts() {
  // expected-error @below {{'ttg.warp_specialize' op has 1 partition region(s) but partitionNumWarps lists 2 warp count(s)}}
  "ttg.warp_specialize"() <{partitionNumWarps = array<i32: 1, 2>}> ({
    "ttg.warp_yield"() : () -> ()
  }, {
    "ttg.warp_specialize.partitions"() ({
      "ttg.warp_return"() : () -> ()
    }) : () -> ()
  }) : () -> ()
  tt.return
}

// -----

tt.func @default_terminator() {
  // expected-error @below {{'ttg.warp_specialize' op default region must end with ttg.warp_yield}}
  "ttg.warp_specialize"() <{partitionNumWarps = array<i32>}> ({
    "ttg.unknown_terminator"() : () -> ()
  }, {
    "ttg.warp_specialize.partitions"() : () -> ()
  }) : () -> ()
  tt.return
}

// -----

tt.func @partition_holder() {
  // expected-error @below {{'ttg.warp_specialize' op second region must hold exactly one ttg.warp_specialize.partitions op}}
  "ttg.warp_specialize"() <{partitionNumWarps = array<i32>}> ({
    "ttg.warp_yield"() : () -> ()
  }, {
    "ttg.unknown_terminator"() : () -> ()
  }) : () -> ()
  tt.return
}

// -----

#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
tt.func @subslice_without_offset(%a: !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>) {
  // expected-error @below {{'ttng.tmem_subslice' op needs its column offset as exactly one integer attribute: 'offset' (Triton 3.9) or 'N' (Triton 3.6)}}
  %s = ttng.tmem_subslice %a : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem, #ttng.tensor_memory, mutable, 128x64>
  tt.return
}

// -----

#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
tt.func @subslice_with_both_offsets(%a: !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>) {
  // expected-error @below {{'ttng.tmem_subslice' op needs its column offset as exactly one integer attribute: 'offset' (Triton 3.9) or 'N' (Triton 3.6)}}
  %s = ttng.tmem_subslice %a {N = 32 : i32, offset = 32 : i32} : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem, #ttng.tensor_memory, mutable, 128x64>
  tt.return
}

// -----

// expected-error @below {{unexpected character '%' in the body of a Triton attribute or type}}
tt.func @verbatim_body(%a: tensor<4xf32, #ttg.blocked<{order = %x}>>) {
  tt.return
}
