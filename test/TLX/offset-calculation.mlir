// RUN: triton-opt %s --tlx-buffer-offset-calculation --verify-diagnostics | FileCheck %s

// Offset calculation records where the planner puts each user as its
// #tlx.placement: a view of `slots` buffers of the user's type from the
// region's start, in which buffer i is slot
//   scale * (i / period) + offset + step * (i % period),
// then erases tlx.set_buffer_overlap and the reuse groups. It runs without
// size definition: the spec stays unsized.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
#tmem_1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32} {

  // Without set_buffer_overlap every user sits at offset 0, its buffers one
  // after the other; each view covers the 32768-byte region.
  // CHECK-LABEL: tt.func @no_overlap
  // CHECK: tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
  // CHECK: {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32
  // CHECK: {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16
  tt.func @no_overlap() {
    // expected-warning-re @below {{has 2 buffers and no overlap tree: every buffer starts at offset 0 ("{{.*}}:28:10" and "{{.*}}:29:10" all share bytes)}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // shared(distinct(a, b), c), group-major: a at 0, b right after a at 4096
  // (slot 16 of 256 bytes), c at 0; 16384 bytes between buffer groups (a's
  // scale 4, b's 64).
  // CHECK-LABEL: tt.func @shared_of_distinct
  // CHECK: {placement = #tlx.placement<slots = 8, period = 1, scale = 4, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16
  // CHECK: {placement = #tlx.placement<slots = 128, period = 1, scale = 64, offset = 16, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64xf32
  // CHECK: {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32
  // CHECK-NOT: tlx.reuse_group
  // CHECK-NOT: tlx.set_buffer_overlap
  // CHECK: tt.return
  tt.func @shared_of_distinct() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%ab, %c) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }

  // distinct(shared(a, b), c), child-major: the pairs a and b take slots 0
  // and 1 (8192 bytes each), c's two buffers follow from 16384 (slot 4 of
  // 4096 bytes): 24576 bytes, the ideal.
  // CHECK-LABEL: tt.func @distinct_of_shared
  // CHECK: {placement = #tlx.placement<slots = 3, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16
  // CHECK: {placement = #tlx.placement<slots = 3, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf32
  // CHECK: {placement = #tlx.placement<slots = 6, period = 1, scale = 1, offset = 4, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x16x64xf32
  tt.func @distinct_of_shared() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf32, #shared, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x16x64xf32, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x32x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %root = tlx.reuse_group(%ab, %c) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x16x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    tt.return
  }

  // A 128-byte NVMMA swizzle needs 1024-byte alignment: child-major, x's two
  // buffers (512 bytes) take [0, 1024) and y's (1024 bytes) follow from 1024.
  // CHECK-LABEL: tt.func @nvmma_alignment
  // CHECK: {placement = #tlx.placement<slots = 6, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x4x64xf16
  // CHECK: {placement = #tlx.placement<slots = 3, period = 1, scale = 1, offset = 1, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x8x64xf16
  tt.func @nvmma_alignment() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x4x64xf16, #shared, #smem, mutable>
    %y = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>
    %root = tlx.reuse_group(%x, %y) group_kind = distinct : (!ttg.memdesc<2x4x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    tt.return
  }

  // The Flash Attention tree of tutorials/blackwell_flash_attention.py, in columns: qk at 0; the 4 slices of
  // p (16 columns each) contiguous from 0 (period 4 = group_size); alpha, l,
  // m at 64, 65, 66; 128 columns between buffer groups.
  // CHECK-LABEL: tt.func @flash_attention_tmem
  // CHECK: {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x128xf32
  // CHECK: {placement = #tlx.placement<slots = 16, period = 4, scale = 8, offset = 0, step = 1>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<8x128x32xf16
  // CHECK: {placement = #tlx.placement<slots = 256, period = 1, scale = 128, offset = 64, step = 1>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32
  // CHECK: {placement = #tlx.placement<slots = 256, period = 1, scale = 128, offset = 65, step = 1>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32
  // CHECK: {placement = #tlx.placement<slots = 256, period = 1, scale = 128, offset = 66, step = 1>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32
  // CHECK-NOT: tlx.reuse_group
  // CHECK-NOT: tlx.set_buffer_overlap
  // CHECK: tt.return
  tt.func @flash_attention_tmem() {
    %s = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %qk = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %p = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable>
    %alpha = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %l = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %m = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %gp = tlx.reuse_group(%p) group_kind = shared, group_size = 4 : (!ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<shared>
    %rest = tlx.reuse_group(%gp, %alpha, %l, %m) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%qk, %rest) group_kind = shared : (!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }

  // A user left out of the tree is placed alone at offset 0, with a warning.
  // CHECK-LABEL: tt.func @user_outside_the_tree
  // CHECK: {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32
  // CHECK: {placement = #tlx.placement<slots = 8, period = 1, scale = 1, offset = 0, step = 1>} : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16
  tt.func @user_outside_the_tree() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    // expected-warning @below {{is not in the overlap tree of spec}}
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }

  // A reuse group that was never given to a spec is erased too.
  // CHECK-LABEL: tt.func @dangling_reuse_group
  // CHECK-NOT: tlx.reuse_group
  // CHECK: tt.return
  tt.func @dangling_reuse_group() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tt.return
  }
}
