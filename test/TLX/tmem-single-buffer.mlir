// RUN: triton-opt %s --tlx-storage-alias-lowering | FileCheck %s
// RUN: triton-opt %s --tlx-storage-alias-size-definition --tlx-buffer-offset-calculation --tlx-storage-alias-allocation | FileCheck %s
// RUN: triton-opt %s --tlx-storage-alias-size-definition --tlx-buffer-offset-calculation | FileCheck %s --check-prefix=PLACED

// A TMEM user written as one [M, N] tile, with no buffer dimension (the
// usual shape of an accumulator), is one buffer. It keeps its type: it
// becomes its slot of a view with a buffer dimension, so its uses (loads,
// stores, MMAs) need no rewrite.
// distinct(acc: [128, 64] f32, s: 1 x [128, 32] f32): acc at column 0, s at
// column 64; the region is 128 columns (96 rounded up to a power of two).

#acc_regs = #ttg.blocked<{sizePerThread = [1, 64], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  // PLACED: tlx.storage_alias_spec storage = tmem, size = 65536 {backing = #tlx.backing<shape = [128, 128], block = [128, 128], elementBits = 32, alignment = 1, regionSize = 128>}
  // PLACED: tlx.storage_alias_local_alloc {{.*}} {placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1>} {{.*}} -> !ttg.memdesc<128x64xf32
  // PLACED: tlx.storage_alias_local_alloc {{.*}} {placement = #tlx.placement<slots = 4, period = 1, scale = 1, offset = 2, step = 1>} {{.*}} -> !ttg.memdesc<1x128x32xf32

  // CHECK-LABEL: tt.func @accumulator
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK: %[[BACKING:.*]] = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xi32
  // CHECK: %[[VIEW:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<2x128x64xf32, #{{.*}}, #ttng.tensor_memory, mutable>
  // CHECK: %[[ACC:.*]] = ttg.memdesc_index %[[VIEW]][%[[ZERO]]] : !ttg.memdesc<2x128x64xf32, {{.*}}> -> !ttg.memdesc<128x64xf32, #{{.*}}, #ttng.tensor_memory, mutable>
  // CHECK: %[[S:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<4x128x32xf32
  // CHECK: ttng.tmem_store %{{.*}}, %[[ACC]], %{{.*}} : tensor<128x64xf32, #{{.*}}> -> !ttg.memdesc<128x64xf32
  // CHECK: ttg.memdesc_index %[[S]][%[[TWO]]]
  // CHECK: ttng.tmem_load %[[ACC]] : !ttg.memdesc<128x64xf32
  tt.func @accumulator(%x: tensor<128x64xf32, #acc_regs>) {
    %true = arith.constant true
    %c0 = arith.constant 0 : i32
    %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
    %acc = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %s = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<1x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    %root = tlx.reuse_group(%acc, %s) group_kind = distinct : (!ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.memdesc<1x128x32xf32, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<distinct>) -> ()
    ttng.tmem_store %x, %acc, %true : tensor<128x64xf32, #acc_regs> -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %s0 = ttg.memdesc_index %s[%c0] : !ttg.memdesc<1x128x32xf32, #tmem1, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf32, #tmem1, #ttng.tensor_memory, mutable>
    %y = ttng.tmem_load %acc : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #acc_regs>
    tt.return
  }
}
