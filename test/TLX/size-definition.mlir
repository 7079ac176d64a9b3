// RUN: triton-opt %s --tlx-storage-alias-size-definition --verify-diagnostics | FileCheck %s

// Size definition gives every storage_alias_spec the planner's region size
// (type, buffer_size_bytes) and the recipe of its backing (#tlx.backing), and
// keeps the users and overlap trees for the next step.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
#tmem_1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
#tmem_half = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32} {

  // Without set_buffer_overlap the region is the largest user:
  // max(2 x 64x64xf32 = 32768, 2 x 64x64xf16 = 16384) = 32768 bytes = [256, 128] x i8.
  // CHECK-LABEL: tt.func @max_of_users
  // CHECK: tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
  // CHECK: tlx.storage_alias_local_alloc %{{.*}} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // CHECK: tlx.storage_alias_local_alloc %{{.*}} : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
  tt.func @max_of_users() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // An explicit size that is large enough is kept (padding).
  // CHECK-LABEL: tt.func @explicit_size_kept
  // CHECK: tlx.storage_alias_spec storage = smem, size = 65536 {backing = #tlx.backing<shape = [512, 128], block = [512, 128], elementBits = 8, alignment = 128, regionSize = 65536>} : !tlx.storage_alias_spec<smem, 65536>
  tt.func @explicit_size_kept() {
    %s = tlx.storage_alias_spec storage = smem, size = 65536 : !tlx.storage_alias_spec<smem, 65536>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 65536> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }

  // An explicit size equal to the need is valid too.
  // CHECK-LABEL: tt.func @explicit_size_exact
  // CHECK: tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
  tt.func @explicit_size_exact() {
    %s = tlx.storage_alias_spec storage = smem, size = 32768 : !tlx.storage_alias_spec<smem, 32768>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem, 32768> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    tt.return
  }

  // shared(distinct(a, b), c): a (4096 B) then b (256 B) fit in c (16384 B):
  // stride 16384, 2 buffer groups -> 32768 bytes.
  // CHECK-LABEL: tt.func @shared_of_distinct
  // CHECK: tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>}
  // CHECK: tlx.reuse_group
  // CHECK: tlx.reuse_group
  // CHECK: tlx.set_buffer_overlap
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

  // distinct(shared(a, b), c): the shared pair (8192 B) then c (4096 B) =
  // 12288 B per buffer group. Group-major, c's buffers would have to start
  // at multiples of 8192 (16384 per group, 32768 in all); child-major, the
  // pairs take [0, 16384) and c's two buffers follow: the ideal 24576 bytes.
  // CHECK-LABEL: tt.func @distinct_of_shared
  // CHECK: tlx.storage_alias_spec storage = smem, size = 24576 {backing = #tlx.backing<shape = [192, 128], block = [192, 128], elementBits = 8, alignment = 128, regionSize = 24576>}
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

  // group_size: 4 halves of p (8192 B each) = 2 groups of 2 share with qk
  // (16384 B each): stride 16384 -> 32768 bytes.
  // CHECK-LABEL: tt.func @group_size
  // CHECK: tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 128, regionSize = 32768>}
  tt.func @group_size() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %qk = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %p = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>
    %gp = tlx.reuse_group(%p) group_kind = shared, group_size = 2 : (!ttg.memdesc<4x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %root = tlx.reuse_group(%qk, %gp) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !tlx.reuse_group<shared>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }

  // distinct(x, y) with y in a 128-byte NVMMA swizzle (1024-byte alignment):
  // child-major, x's two buffers (512 B each) take [0, 1024) and y's two
  // (1024 B each, 1024-aligned) follow: 3072 bytes, aligned to 1024.
  // CHECK-LABEL: tt.func @nvmma_alignment
  // CHECK: tlx.storage_alias_spec storage = smem, size = 3072 {backing = #tlx.backing<shape = [24, 128], block = [24, 128], elementBits = 8, alignment = 1024, regionSize = 3072>}
  tt.func @nvmma_alignment() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x4x64xf16, #shared, #smem, mutable>
    %y = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>
    %root = tlx.reuse_group(%x, %y) group_kind = distinct : (!ttg.memdesc<2x4x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x8x64xf16, #nvmma, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    tt.return
  }

  // The Flash Attention tree of tutorials/blackwell_flash_attention.py: shared(qk, distinct(group(p, 4),
  // alpha, l, m)). qk: 128 columns; 4 packed f16 slices of p: 4 x 16 = 64
  // columns, then alpha, l, m (1 column each) -> stride 128 columns, 2 groups
  // -> 256 columns x 128 rows x 4 bytes = 131072 bytes.
  // CHECK-LABEL: tt.func @flash_attention_tmem
  // CHECK: tlx.storage_alias_spec storage = tmem, size = 131072 {backing = #tlx.backing<shape = [128, 256], block = [128, 256], elementBits = 32, alignment = 1, regionSize = 256>} : !tlx.storage_alias_spec<tmem, 131072>
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

  // TMEM users that all have 64 rows and blockM = 64 get a 64-row backing:
  // 2 x 64 columns = 128 columns x 64 rows x 4 bytes = 32768 bytes.
  // CHECK-LABEL: tt.func @tmem_half_rows
  // CHECK: tlx.storage_alias_spec storage = tmem, size = 32768 {backing = #tlx.backing<shape = [64, 128], block = [64, 128], elementBits = 32, alignment = 1, regionSize = 128>}
  tt.func @tmem_half_rows() {
    %s = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x64x64xf32, #tmem_half, #ttng.tensor_memory, mutable>
    tt.return
  }

  // A spec without users gets a warning and is erased.
  // CHECK-LABEL: tt.func @spec_without_users
  // CHECK-NOT: tlx.storage_alias_spec
  // CHECK: tt.return
  tt.func @spec_without_users() {
    // expected-warning @below {{has no tlx.storage_alias_local_alloc users; it is erased}}
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    tt.return
  }
}
