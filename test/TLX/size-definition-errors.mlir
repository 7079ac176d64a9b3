// RUN: triton-opt %s --tlx-storage-alias-size-definition --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Every problem size definition reports, at the op it is about. Buffers and
// specs without a name location are named by their file:line:col.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @explicit_size_too_small() {
    // expected-error-re @below {{buffer_size_bytes=16384 of spec "size-definition-errors.mlir:{{[0-9]+}}:{{[0-9]+}}" is too small: the plan needs 32768 bytes}}
    %s = tlx.storage_alias_spec storage = smem, size = 16384 : !tlx.storage_alias_spec<smem, 16384>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 16384> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @overlap_given_twice() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    // expected-note @below {{first given here}}
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    // expected-error @below {{tlx.set_buffer_overlap is given twice for storage_alias_spec}}
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// -----

// A tree without users is its spec's overlap (implicit overlap): no verifier
// sees it, and the size definition reports a buffer in it twice.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @duplicate_element_in_an_implicit_tree() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // expected-note @below {{first appearance here}}
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    // expected-error @below {{appears twice in the overlap tree}}
    %root = tlx.reuse_group(%ab, %a) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @overlap_definition_not_a_reuse_group(%g: !tlx.reuse_group<shared>) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @below {{the overlap definition must be a tlx.reuse_group or tlx.reuse_phases result}}
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @spec_used_by_another_op() {
    // expected-note @below {{the spec is defined here}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-error @below {{uses a tlx.storage_alias_spec; only tlx.storage_alias_local_alloc and tlx.set_buffer_overlap may}}
    "test.use"(%s) : (!tlx.storage_alias_spec<smem>) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @spec_not_from_a_spec_op(%s: !tlx.storage_alias_spec<smem>) {
    // expected-error @below {{the storage alias operand must be a tlx.storage_alias_spec result}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @buffer_count_not_a_multiple_of_group_size() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    // expected-error @below {{has 3 buffers, which is not a multiple of group_size 2 (the product of its reuse groups)}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<3x64x64xf32, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a) group_kind = shared, group_size = 2 : (!ttg.memdesc<3x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// -----

#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
module {
  tt.func @tmem_over_512_columns() {
    // expected-error @below {{needs 1024 columns of tensor memory (640 rounded up to a power of two), more than the 512 columns TMEM has}}
    %s = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<5x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @smem_over_the_limit() {
    // expected-error @below {{needs 262144 bytes of shared memory, more than the target's limit of 232448 bytes}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x128x128xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

// The limit is the target's: sm_80 gives a CTA 163 KiB.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {ttg.target = "cuda:80"} {
  tt.func @smem_over_the_sm80_limit() {
    // expected-error @below {{needs 196608 bytes of shared memory, more than the target's limit of 166912 bytes}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<3x128x128xf32, #shared, #smem, mutable>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @element_type_without_size() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    // expected-error-re @below {{buffer "size-definition-errors.mlir:{{[0-9]+}}:10" has element type 'index', which has no size in memory (expected an integer, float or !tt.ptr element type)}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64xindex, #shared, #smem, mutable>
    %t = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    // expected-error @below {{has element type '!tt.tensordesc<tensor<16xf16>>', which has no size in memory}}
    %d = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x!tt.tensordesc<tensor<16xf16>>, #shared, #smem, mutable>
    tt.return
  }
}

// -----

// Tensor memory exists on Blackwell only: a TMEM spec in a module compiled
// for sm_90a is an error at the spec, naming the target.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
module attributes {ttg.target = "cuda:90"} {
  tt.func @tmem_on_hopper() {
    // expected-error-re @below {{spec "{{.*}}": tensor memory (tmem) needs a Blackwell target (sm_100a or newer), but the kernel is compiled for sm_90a}}
    %s = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

// The buffers of a spec share one backing allocation: a TMEM tile split over
// the CTA pair cannot share it with one that is not.
#split = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1, CGALayout = [[1, 0]], twoCTAs = true>
#whole = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
module attributes {"ttg.num-ctas" = 2 : i32, ttg.target = "cuda:100"} {
  tt.func @mixed_cta_split() {
    %s = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<256x128xf32, #split, #ttng.tensor_memory, mutable>
    // expected-error-re @below {{buffer "{{.*}}" is split over 1 x 1 CTAs but buffer "{{.*}}" over 2 x 1; the buffers of spec "{{.*}}" share one allocation and must be split alike}}
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<1x128x64xf32, #whole, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

// Shared memory split over the CTAs of a cluster is not aliased.
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = [[1, 0]]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 2 : i32, ttg.target = "cuda:100"} {
  tt.func @smem_cta_split() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    // expected-error-re @below {{buffer "{{.*}}" is split over 2 x 1 CTAs; aliasing shared memory split over the CTAs of a cluster is not supported (only TMEM tiles may be split)}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x256x64xf16, #nvmma, #smem, mutable>
    tt.return
  }
}
