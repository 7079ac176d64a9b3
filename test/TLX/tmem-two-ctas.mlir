// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering | FileCheck %s
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-size-definition --tlx-buffer-offset-calculation --tlx-storage-alias-allocation | FileCheck %s

// 2-CTA tensor memory: an accumulator of a cta_group::2 MMA is a [256, N]
// tile of which each CTA of the pair holds [128, N], i.e. N columns, not 2N.
// Triton 3.6 and 3.7 write the split as CTASplitM, later versions as a CGA
// layout. distinct(acc: [256, 128] f32, bias: 1 x [256, 64] f32): acc at
// column 0, bias at column 128; the region is 256 columns per CTA, and the
// backing spans the pair: 256 x 256 i32 with the users' split.

// CHECK: #[[BACKING:tmem[0-9]*]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1, CTASplitM = 2, twoCTAs = true>
// CHECK: tt.func @cta_split_triton36
// CHECK: ttng.tmem_alloc : () -> !ttg.memdesc<256x256xi32, #[[BACKING]], #ttng.tensor_memory, mutable>
// CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<2x256x128xf32
// CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<4x256x64xf32
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1, CTASplitM = 2, twoCTAs = true>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1, CTASplitM = 2, twoCTAs = true>
module attributes {"ttg.num-ctas" = 2 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  tt.func @cta_split_triton36(%i: i32) {
    %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<256x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %bias = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable>
    %root = tlx.reuse_group(%acc, %bias) group_kind = distinct : (!ttg.memdesc<256x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<distinct>) -> ()
    %b = ttg.memdesc_index %bias[%i] : !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable> -> !ttg.memdesc<256x64xf32, #tmem1, #ttng.tensor_memory, mutable>
    tt.return
  }
}

// -----

// CHECK: #[[BACKING:tmem[0-9]*]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1, CGALayout = {{\[\[}}1, 0]], twoCTAs = true>
// CHECK: tt.func @cga_layout_triton39
// CHECK: ttng.tmem_alloc : () -> !ttg.memdesc<256x256xi32, #[[BACKING]], #ttng.tensor_memory, mutable>
// CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<2x256x128xf32
// CHECK: tlx.local_alias {{.*}} -> !ttg.memdesc<4x256x64xf32
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1, CGALayout = [[1, 0]], twoCTAs = true>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1, CGALayout = [[1, 0]], twoCTAs = true>
module attributes {"ttg.num-ctas" = 2 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  tt.func @cga_layout_triton39(%i: i32) {
    %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<256x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %bias = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable>
    %root = tlx.reuse_group(%acc, %bias) group_kind = distinct : (!ttg.memdesc<256x128xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<distinct>) -> ()
    %b = ttg.memdesc_index %bias[%i] : !ttg.memdesc<1x256x64xf32, #tmem1, #ttng.tensor_memory, mutable> -> !ttg.memdesc<256x64xf32, #tmem1, #ttng.tensor_memory, mutable>
    tt.return
  }
}
