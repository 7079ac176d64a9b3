// Every verifier error of the tlx dialect, one case each.
// RUN: triton-opt %s --split-input-file --verify-diagnostics

// expected-error @below {{storage kind smemCluster is not supported for storage_alias_spec (use smem or tmem)}}
tt.func @cluster_type(%spec: !tlx.storage_alias_spec<smemCluster>) {
  tt.return
}

// -----

// expected-error @below {{buffer_size_bytes must be positive, got 0}}
tt.func @empty_type(%spec: !tlx.storage_alias_spec<smem, 0>) {
  tt.return
}

// -----

tt.func @cluster_spec() {
  // expected-error @below {{'tlx.storage_alias_spec' op storage kind smemCluster is not supported for storage_alias_spec (use smem or tmem)}}
  %spec = tlx.storage_alias_spec storage = smemCluster : !tlx.storage_alias_spec<smem>
  tt.return
}

// -----

tt.func @negative_size() {
  // expected-error @below {{'tlx.storage_alias_spec' op buffer_size_bytes must be positive, got -4}}
  %spec = tlx.storage_alias_spec storage = smem, size = -4 : !tlx.storage_alias_spec<smem>
  tt.return
}

// -----

tt.func @storage_mismatch() {
  // expected-error @below {{'tlx.storage_alias_spec' op result type '!tlx.storage_alias_spec<smem>' has storage smem but the op has storage = tmem}}
  %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<smem>
  tt.return
}

// -----

tt.func @size_missing_in_type() {
  // expected-error @below {{'tlx.storage_alias_spec' op result type '!tlx.storage_alias_spec<smem>' has no size but the op has size = 1024}}
  %spec = tlx.storage_alias_spec storage = smem, size = 1024 : !tlx.storage_alias_spec<smem>
  tt.return
}

// -----

tt.func @size_missing_in_op() {
  // expected-error @below {{'tlx.storage_alias_spec' op result type '!tlx.storage_alias_spec<smem, 1024>' has size 1024 but the op has no size}}
  %spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem, 1024>
  tt.return
}

// -----

tt.func @size_differs() {
  // expected-error @below {{'tlx.storage_alias_spec' op result type '!tlx.storage_alias_spec<tmem, 2048>' has size 2048 but the op has size = 1024}}
  %spec = tlx.storage_alias_spec storage = tmem, size = 1024 : !tlx.storage_alias_spec<tmem, 2048>
  tt.return
}

// -----

#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
tt.func @alloc_in_other_storage() {
  %spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
  // expected-error @below {{'tlx.storage_alias_local_alloc' op allocates in memory space #ttng.tensor_memory (tmem) but its storage_alias_spec has storage smem}}
  %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
tt.func @alloc_in_unknown_memory_space() {
  %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
  // expected-error @below {{'tlx.storage_alias_local_alloc' op allocates in memory space #ttg.cluster_shared_memory but its storage_alias_spec has storage tmem}}
  %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x64x64xf32, #shared, #ttg.cluster_shared_memory, mutable>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @immutable_alloc() {
  %spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
  // expected-error @below {{'tlx.storage_alias_local_alloc' op result '!ttg.memdesc<2x64x64xf32, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, #ttg.shared_memory>' must be mutable}}
  %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem>
  tt.return
}

// -----

tt.func @empty_group() {
  // expected-error @below {{'tlx.reuse_group' op must have at least one element}}
  %g = tlx.reuse_group() group_kind = shared : () -> !tlx.reuse_group<shared>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @one_phase(%a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) {
  %g = tlx.reuse_group(%a) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error @below {{'tlx.reuse_phases' op needs two or more trees, one per phase, got 1 (a kernel with one phase gives its tlx.reuse_group alone)}}
  %p = tlx.reuse_phases(%g) : (!tlx.reuse_group<shared>) -> !tlx.reuse_phases
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @phase_not_a_tree(%g: !tlx.reuse_group<shared>, %a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) {
  %h = tlx.reuse_group(%a) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error @below {{'tlx.reuse_phases' op phase 0 must be a tlx.reuse_group result}}
  %p = tlx.reuse_phases(%g, %h) : (!tlx.reuse_group<shared>, !tlx.reuse_group<shared>) -> !tlx.reuse_phases
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @zero_group_size(%a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) {
  // expected-error @below {{'tlx.reuse_group' op group_size must be at least 1, got 0}}
  %g = tlx.reuse_group(%a) group_kind = shared, group_size = 0 : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @group_kind_mismatch(%a: !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) {
  // expected-error @below {{'tlx.reuse_group' op result type '!tlx.reuse_group<shared>' does not match group_kind = distinct}}
  %g = tlx.reuse_group(%a) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
tt.func @alias_across_memories(%a: !ttg.memdesc<32768xi8, #shared, #smem, mutable>) {
  // expected-error @below {{'tlx.local_alias' op source memory space #ttg.shared_memory and result memory space #ttng.tensor_memory must be the same}}
  %v = tlx.local_alias %a : !ttg.memdesc<32768xi8, #shared, #smem, mutable> -> !ttg.memdesc<1x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  tt.return
}

// -----

// The leaves of a tree given to tlx.set_buffer_overlap: its verifier reports
// the reference TLX's structural errors (duplicate leaves, a leaf of another
// spec, a leaf that is not a tlx.storage_alias_local_alloc) with the
// reference's text for duplicates. The lowering checks them again
// (test/TLX/lowering-tree-errors.mlir).
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @duplicate_leaf() {
  %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
  %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> loc("a")
  %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  // expected-note @below {{first appearance here}}
  %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
  // expected-note @below {{second appearance here}}
  %root = tlx.reuse_group(%ab, %a) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error @below {{'tlx.set_buffer_overlap' op reuse_group tree contains duplicate elements: buffer "a" appears twice in the tree of storage_alias_spec "spec"}}
  tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
  tt.return
}

// -----

// A buffer may be in several phases, but only once in each.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @duplicate_leaf_in_a_phase() {
  %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
  %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> loc("a")
  %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("b")
  %p0 = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
  // expected-note @below {{first appearance here}}
  // expected-note @below {{second appearance here}}
  %p1 = tlx.reuse_group(%b, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<shared>) -> !tlx.reuse_phases
  // expected-error @below {{reuse_group tree contains duplicate elements: buffer "b" appears twice in the tree of phase 1 of storage_alias_spec "spec"}}
  tlx.set_buffer_overlap(%s, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @leaf_of_another_spec() {
  %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
  %t = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("other")
  %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> loc("a")
  // expected-note-re @below {{buffer "invalid-tlx.mlir:{{[0-9]+}}:8" is allocated here}}
  %b = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  // expected-note @below {{the buffer is element 1 of this tlx.reuse_group}}
  %g = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error-re @below {{'tlx.set_buffer_overlap' op reuse_group tree holds buffer "invalid-tlx.mlir:{{[0-9]+}}:8" of storage_alias_spec "other", not of storage_alias_spec "spec" that this tlx.set_buffer_overlap gives the tree to}}
  tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @leaf_not_a_storage_alias_local_alloc() {
  %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
  %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // expected-note @below {{the element is defined here}}
  %b = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  // expected-note @below {{the tlx.reuse_group is here}}
  %g = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error @below {{'tlx.set_buffer_overlap' op reuse_group tree element 1 of a tlx.reuse_group is a ttg.local_alloc result, not a tlx.storage_alias_local_alloc of storage_alias_spec "spec" (only a spec's buffers share its region)}}
  tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
  tt.return
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
tt.func @leaf_a_block_argument(%b: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) {
  %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
  %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // expected-note @below {{the tlx.reuse_group is here}}
  %g = tlx.reuse_group(%b, %a) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // expected-error @below {{reuse_group tree element 0 of a tlx.reuse_group is a block argument, not a tlx.storage_alias_local_alloc of storage_alias_spec "spec"}}
  tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
  tt.return
}
