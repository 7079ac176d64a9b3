// RUN: triton-opt %s --tlx-storage-alias-lowering | FileCheck %s
// RUN: triton-opt %s --tlx-storage-alias-size-definition --tlx-buffer-offset-calculation --tlx-storage-alias-allocation | FileCheck %s
// RUN: triton-opt %s --tlx-storage-alias-lowering --tlx-rewrite-local-alias | FileCheck %s --check-prefix=STOCK

// The whole lowering: one backing allocation per spec, one tlx.local_alias per
// user whose leading dimension covers the region, and every buffer index
// rewritten to slot(i) = scale * (i / K) + offset + (i % K), through
// reinterprets, nested aliases and warp_specialize captures. The three steps
// run one after the other give the same result. After
// --tlx-rewrite-local-alias no tlx op is left (stock Triton IR).
// STOCK: module
// STOCK-NOT: tlx.
// STOCK: ttg.memdesc_reinterpret
// STOCK-NOT: tlx.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
#tmem_1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {

  // CHECK-DAG: #[[BYTES:[a-z0-9_]+]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
  // CHECK-DAG: #[[SHARED:[a-z0-9_]+]] = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
  // CHECK-DAG: #[[WORDS:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 256, colStride = 1>
  // CHECK-DAG: #[[TMEM_QK:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
  // CHECK-DAG: #[[TMEM_P:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
  // CHECK-DAG: #[[TMEM_1:[a-z0-9_]+]] = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>

  // shared(distinct(a, b), c), region 32768 bytes: a (4096 B) slots 4 * i,
  // b (256 B) slots 64 * i + 16, c (16384 B) keeps its indices. Slot
  // constants sit once at the top of the function (4 serves as a's scale and
  // as slot 4 of a[1]); the arithmetic for an index value follows its
  // definition, once per view shape, so that it dominates every use.
  // CHECK-LABEL: tt.func @smem_indices
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : i32
  // CHECK-DAG: %[[SIXTEEN:.*]] = arith.constant 16 : i32
  // CHECK-DAG: %[[SIXTY_FOUR:.*]] = arith.constant 64 : i32
  // Function argument index of a -> 4 * i; of b -> 64 * i + 16.
  // CHECK: %[[AI:.*]] = arith.muli %[[I]], %[[FOUR]] : i32
  // CHECK-NEXT: %[[BI:.*]] = arith.muli %[[I]], %[[SIXTY_FOUR]] : i32
  // CHECK-NEXT: %[[BI16:.*]] = arith.addi %[[BI]], %[[SIXTEEN]] : i32
  // CHECK-NOT: tlx.storage_alias_spec
  // CHECK: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8, #[[BYTES]], #smem, mutable>
  // CHECK: %[[A:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<256x128xi8, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<8x32x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: %[[B:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<256x128xi8, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<128x64xf32, #[[BYTES]], #smem, mutable>
  // CHECK: %[[C:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<256x128xi8, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<2x64x64xf32, #[[SHARED]], #smem, mutable>
  // CHECK-NOT: tlx.reuse_group
  // CHECK-NOT: tlx.set_buffer_overlap
  // Constant index 1 of a -> slot 4.
  // CHECK: ttg.memdesc_index %[[A]][%[[FOUR]]] : !ttg.memdesc<8x32x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<32x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: ttg.memdesc_index %[[A]][%[[AI]]]
  // CHECK: ttg.memdesc_index %[[B]][%[[BI16]]] : !ttg.memdesc<128x64xf32, #[[BYTES]], #smem, mutable> -> !ttg.memdesc<64xf32, #[[BYTES]], #smem, mutable>
  // Computed index i + 1 of b -> 64 * (i + 1) + 16, right after i + 1.
  // CHECK: %[[J:.*]] = arith.addi %[[I]], %{{.*}} : i32
  // CHECK-NEXT: %[[BJ:.*]] = arith.muli %[[J]], %[[SIXTY_FOUR]] : i32
  // CHECK-NEXT: %[[BJ16:.*]] = arith.addi %[[BJ]], %[[SIXTEEN]] : i32
  // CHECK: ttg.memdesc_index %[[B]][%[[BJ16]]]
  // Constant index 0 of b -> slot 16.
  // CHECK: ttg.memdesc_index %[[B]][%[[SIXTEEN]]]
  // c keeps its index.
  // CHECK: ttg.memdesc_index %[[C]][%[[I]]] : !ttg.memdesc<2x64x64xf32, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<64x64xf32, #[[SHARED]], #smem, mutable>
  tt.func @smem_indices(%i: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x32x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64xf32, #shared1, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%ab, %c) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %a1 = ttg.memdesc_index %a[%c1] : !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    %ai = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x32x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64xf32, #shared1, #smem, mutable>
    %j = arith.addi %i, %c1 : i32
    %bj = ttg.memdesc_index %b[%j] : !ttg.memdesc<2x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64xf32, #shared1, #smem, mutable>
    %b0 = ttg.memdesc_index %b[%c0] : !ttg.memdesc<2x64xf32, #shared1, #smem, mutable> -> !ttg.memdesc<64xf32, #shared1, #smem, mutable>
    %ci = ttg.memdesc_index %c[%i] : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
    tt.return
  }

  // The Flash Attention tree of tutorials/blackwell_flash_attention.py in TMEM: one 128 x 256 i32 backing;
  // qk keeps its indices, p (group_size 4, 16 columns) maps i to
  // 8 * (i / 4) + i % 4, alpha (1 column at 64) maps i to 128 * i + 64.
  // CHECK-LABEL: tt.func @flash_attention_tmem
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK-DAG: %[[S9:.*]] = arith.constant 9 : i32
  // CHECK-DAG: %[[K:.*]] = arith.constant 4 : i32
  // CHECK-DAG: %[[EIGHT:.*]] = arith.constant 8 : i32
  // CHECK-DAG: %[[STRIDE:.*]] = arith.constant 128 : i32
  // CHECK-DAG: %[[OFF:.*]] = arith.constant 64 : i32
  // CHECK: %[[GROUP:.*]] = arith.divui %[[I]], %[[K]] : i32
  // CHECK-NEXT: %[[WITHIN:.*]] = arith.remui %[[I]], %[[K]] : i32
  // CHECK-NEXT: %[[SCALED:.*]] = arith.muli %[[GROUP]], %[[EIGHT]] : i32
  // CHECK-NEXT: %[[PSLOT:.*]] = arith.addi %[[SCALED]], %[[WITHIN]] : i32
  // CHECK-NEXT: %[[AS:.*]] = arith.muli %[[I]], %[[STRIDE]] : i32
  // CHECK-NEXT: %[[ASLOT:.*]] = arith.addi %[[AS]], %[[OFF]] : i32
  // CHECK: %[[BACKING:.*]] = ttng.tmem_alloc : () -> !ttg.memdesc<128x256xi32, #[[WORDS]], #ttng.tensor_memory, mutable>
  // CHECK: %[[QK:.*]] = tlx.local_alias %[[BACKING]] : !ttg.memdesc<128x256xi32, #[[WORDS]], #ttng.tensor_memory, mutable> -> !ttg.memdesc<2x128x128xf32, #[[TMEM_QK]], #ttng.tensor_memory, mutable>
  // CHECK: %[[P:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<16x128x32xf16, #[[TMEM_P]], #ttng.tensor_memory, mutable>
  // CHECK: %[[ALPHA:.*]] = tlx.local_alias %[[BACKING]] : {{.*}} -> !ttg.memdesc<256x128x1xf32, #[[TMEM_1]], #ttng.tensor_memory, mutable>
  // CHECK: ttg.memdesc_index %[[QK]][%[[I]]]
  // CHECK: ttg.memdesc_index %[[P]][%[[PSLOT]]]
  // CHECK: ttg.memdesc_index %[[ALPHA]][%[[ASLOT]]]
  // Constant index 5 of p -> 8 * 1 + 1 = 9.
  // CHECK: ttg.memdesc_index %[[P]][%[[S9]]]
  tt.func @flash_attention_tmem(%i: i32) {
    %c5 = arith.constant 5 : i32
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
    %qki = ttg.memdesc_index %qk[%i] : !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %pi = ttg.memdesc_index %p[%i] : !ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf16, #tmem_p, #ttng.tensor_memory, mutable>
    %alphai = ttg.memdesc_index %alpha[%i] : !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>
    %p5 = ttg.memdesc_index %p[%c5] : !ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable> -> !ttg.memdesc<128x32xf16, #tmem_p, #ttng.tensor_memory, mutable>
    tt.return
  }

  // Captured by ttg.warp_specialize: the partition argument takes the view's
  // type and the index inside the partition is rewritten too. b sits at slot
  // 2 * i + 1 (distinct(a, b), both 8192 bytes, stride 16384). The partition
  // is isolated from above: it gets constants of its own.
  // CHECK-LABEL: tt.func @warp_specialize_capture
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK: %[[IS:.*]] = arith.muli %[[I]]
  // CHECK-NEXT: %[[ISLOT:.*]] = arith.addi %[[IS]]
  // CHECK: tlx.local_alias
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias %{{.*}} -> !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: ttg.warp_specialize(%[[B]], %[[I]])
  // CHECK: default {
  // CHECK-NEXT: ttg.memdesc_index %[[B]][%[[ISLOT]]]
  // CHECK: ttg.warp_yield
  // CHECK: partition0(%[[ARG:.*]]: !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>, %[[J:.*]]: i32) num_warps(4) {
  // CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK: %[[JS:.*]] = arith.muli %[[J]], %[[TWO]] : i32
  // CHECK-NEXT: %[[JSLOT:.*]] = arith.addi %[[JS]], %[[ONE]] : i32
  // CHECK: ttg.memdesc_index %[[ARG]][%[[JSLOT]]] : !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: ttg.warp_return
  // CHECK: } : (!ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>, i32) -> ()
  tt.func @warp_specialize_capture(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %root = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    ttg.warp_specialize(%b, %i) attributes {requestedRegisters = array<i32: 48>}
    default {
      %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.warp_yield
    }
    partition0(%arg0: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %j: i32) num_warps(4) {
      %bj = ttg.memdesc_index %arg0[%j] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, i32) -> ()
    tt.return
  }

  // A chain of reinterprets that keep the buffer size (8192 bytes) carries
  // the view: each result gets the expanded leading dimension, the index at
  // the end of the chain is rewritten (b at slot 2 * i + 1).
  // CHECK-LABEL: tt.func @reinterpret_chain
  // CHECK: %[[SLOT:.*]] = arith.constant 3 : i32
  // CHECK: tlx.local_alias
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias %{{.*}} -> !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: %[[R1:.*]] = ttg.memdesc_reinterpret %[[B]] : !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<4x64x64xi16, #[[SHARED]], #smem, mutable>
  // CHECK: %[[R2:.*]] = ttg.memdesc_reinterpret %[[R1]] : !ttg.memdesc<4x64x64xi16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<4x32x64xf32, #[[SHARED]], #smem, mutable>
  // CHECK: ttg.memdesc_index %[[R2]][%[[SLOT]]] : !ttg.memdesc<4x32x64xf32, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<32x64xf32, #[[SHARED]], #smem, mutable>
  tt.func @reinterpret_chain() {
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %root = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %r1 = ttg.memdesc_reinterpret %b : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<2x64x64xi16, #shared, #smem, mutable>
    %r2 = ttg.memdesc_reinterpret %r1 : !ttg.memdesc<2x64x64xi16, #shared, #smem, mutable> -> !ttg.memdesc<2x32x64xf32, #shared, #smem, mutable>
    %x = ttg.memdesc_index %r2[%c1] : !ttg.memdesc<2x32x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    tt.return
  }

  // A nested tlx.local_alias (the legacy reuse of a buffered tensor) may
  // change the buffer size while its source's buffers are contiguous from the
  // region's start: its view then covers the region in its own buffers
  // (32768 bytes / 4096 = 8 slots) and its indices stay.
  // CHECK-LABEL: tt.func @nested_local_alias
  // CHECK-SAME: (%[[I:.*]]: i32)
  // CHECK: %[[A:.*]] = tlx.local_alias %{{.*}} -> !ttg.memdesc<2x64x64xf32, #[[SHARED]], #smem, mutable>
  // CHECK: %[[N:.*]] = tlx.local_alias %[[A]] : !ttg.memdesc<2x64x64xf32, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<8x32x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: ttg.memdesc_index %[[N]][%[[I]]] : !ttg.memdesc<8x32x64xf16, #[[SHARED]], #smem, mutable> -> !ttg.memdesc<32x64xf16, #[[SHARED]], #smem, mutable>
  tt.func @nested_local_alias(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    %n = tlx.local_alias %a : !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> -> !ttg.memdesc<4x32x64xf16, #shared, #smem, mutable>
    %x = ttg.memdesc_index %n[%i] : !ttg.memdesc<4x32x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // Several uses of one buffer, with local_load/local_store on the indexed
  // buffers: every index is rewritten, the loads and stores keep their types.
  // CHECK-LABEL: tt.func @several_uses
  // CHECK-DAG: %[[S1:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[S3:.*]] = arith.constant 3 : i32
  // CHECK: tlx.local_alias
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias %{{.*}} -> !ttg.memdesc<4x64x64xf16, #[[SHARED]], #smem, mutable>
  // CHECK: %[[X:.*]] = ttg.memdesc_index %[[B]][%[[S1]]]
  // CHECK: ttg.local_load %[[X]] : !ttg.memdesc<64x64xf16, #[[SHARED]], #smem, mutable> -> tensor<64x64xf16, #blocked>
  // CHECK: %[[Y:.*]] = ttg.memdesc_index %[[B]][%[[S3]]]
  // CHECK: ttg.local_store %{{.*}}, %[[Y]] : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #[[SHARED]], #smem, mutable>
  tt.func @several_uses() {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %root = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %x = ttg.memdesc_index %b[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %v = ttg.local_load %x : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
    %y = ttg.memdesc_index %b[%c1] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_store %v, %y : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }

  // One loop counter indexes buffers of two specs in both branches of an
  // scf.if: b and d both sit at slot 2 * i + 1, computed once at the top of
  // the loop body (right after i is defined), which dominates both branches;
  // its constants sit at the top of the function.
  // CHECK-LABEL: tt.func @shared_slot_arithmetic
  // CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
  // CHECK: tlx.local_alias
  // CHECK-NEXT: %[[B:.*]] = tlx.local_alias
  // CHECK-NEXT: ttg.local_alloc
  // CHECK-NEXT: tlx.local_alias
  // CHECK-NEXT: %[[D:.*]] = tlx.local_alias
  // CHECK-NEXT: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
  // CHECK-NEXT: %[[IS:.*]] = arith.muli %[[I]], %[[TWO]] : i32
  // CHECK-NEXT: %[[SLOT:.*]] = arith.addi %[[IS]], %[[ONE]] : i32
  // CHECK-NEXT: scf.if
  // CHECK-NEXT: ttg.memdesc_index %[[B]][%[[SLOT]]]
  // CHECK-NEXT: } else {
  // CHECK-NEXT: ttg.memdesc_index %[[D]][%[[SLOT]]]
  // CHECK-NEXT: ttg.memdesc_index %[[B]][%[[SLOT]]]
  tt.func @shared_slot_arithmetic(%n: i32, %flag: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %ab) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %t = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %c = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %d = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %cd = tlx.reuse_group(%c, %d) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%t, %cd) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    scf.for %i = %c0 to %n step %c1  : i32 {
      scf.if %flag {
        %bi = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      } else {
        %di = ttg.memdesc_index %d[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %bi2 = ttg.memdesc_index %b[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      }
    }
    tt.return
  }
}
