// RUN: triton-opt %s --test-print-tlx-plan=whole-views=false -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: triton-opt %s --test-print-tlx-plan=whole-views=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: triton-opt %s --test-print-tlx-plan=whole-views=false -debug-only=tlx-storage-alias-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: triton-opt %s --tlx-storage-alias-lowering=whole-views=false -debug-only=tlx-storage-alias-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOTALS

// --test-print-tlx-plan remarks the module's plan (ModulePlan) as the
// lowering makes it: each spec's region, each buffer's offset, size, stride
// and index program. -debug-only=tlx-storage-alias-plan prints the planner's
// memory map of each spec and what the passes count: specs, shared bytes and
// padding.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
#tmem_p = #ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>
#tmem_1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 1, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  tt.func @plans() {
    // The README's example: halves share the bytes of the words two by two,
    // the flags follow them all (child-major: 8448 bytes, the ideal).
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    %words = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x32xi32, #shared, #smem, mutable> loc("words")
    %halves = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x32x32xi16, #shared, #smem, mutable> loc("halves")
    %flags = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x4x32xi8, #shared, #smem, mutable> loc("flags")
    %pairs = tlx.reuse_group(%halves) group_kind = shared, group_size = 2 : (!ttg.memdesc<4x32x32xi16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %tail = tlx.reuse_group(%pairs, %flags) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x4x32xi8, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%words, %tail) group_kind = shared : (!ttg.memdesc<2x32x32xi32, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()

    // TMEM in columns: P's four slices of each QK tile, then alpha, l and m
    // (the Blackwell attention tree): P's buffers step 16 columns within a
    // tile and 80 to the next one.
    %t = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem> loc("qk_storage")
    %qk = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable> loc("qk")
    %p = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable> loc("p")
    %alpha = tlx.storage_alias_local_alloc %t : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable> loc("alpha")
    %gp = tlx.reuse_group(%p) group_kind = shared, group_size = 4 : (!ttg.memdesc<8x128x32xf16, #tmem_p, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<shared>
    %rest = tlx.reuse_group(%gp, %alpha) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x128x1xf32, #tmem_1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
    %qk_root = tlx.reuse_group(%qk, %rest) group_kind = shared : (!ttg.memdesc<2x128x128xf32, #tmem, #ttng.tensor_memory, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%t, %qk_root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<shared>) -> ()

    // Without set_buffer_overlap every user starts at offset 0.
    %n = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("no_tree")
    %a = tlx.storage_alias_local_alloc %n : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("a")
    %b = tlx.storage_alias_local_alloc %n : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x32x64xf16, #shared, #smem, mutable> loc("b")
    tt.return
  }
}

// REMARK: remark: loc("spec"): storage_alias_spec "spec": smem region 8448 bytes, ideal 8448 bytes, padding 0 bytes, child-major at 2 of 3 reuse groups, backing [66, 128] x i8, alignment 128
// REMARK-NEXT: remark: loc("words"): buffer "words": offset 0, size 4096, stride 4096 bytes, slot i of 2 slots
// REMARK-NEXT: remark: loc("halves"): buffer "halves": offset 0, size 2048, stride 2048 bytes, slot i of 4 slots
// REMARK-NEXT: remark: loc("flags"): buffer "flags": offset 8192, size 128, stride 128 bytes, slot i + 64 of 66 slots
// REMARK-NEXT: remark: loc("qk_storage"): storage_alias_spec "qk_storage": tmem region 256 columns (131072 bytes), ideal 131072 bytes, padding 0 bytes, group-major, backing [128, 256] x i32, alignment 1
// REMARK-NEXT: remark: loc("qk"): buffer "qk": offset 0, size 128, stride 128 columns, slot i of 2 slots
// REMARK-NEXT: remark: loc("p"): buffer "p": offset 0, size 16, stride 16 within 4, then 80 columns, slot 8 (i / 4) + (i % 4) of 16 slots
// REMARK-NEXT: remark: loc("alpha"): buffer "alpha": offset 64, size 1, stride 128 columns, slot 128 i + 64 of 256 slots
// REMARK-NEXT: remark: loc("no_tree"): storage_alias_spec "no_tree": smem region 16384 bytes, ideal 16384 bytes, padding 0 bytes, every user at offset 0, backing [128, 128] x i8, alignment 128
// REMARK-NEXT: remark: loc("a"): buffer "a": offset 0, size 8192, stride 8192 bytes, slot i of 2 slots
// REMARK-NEXT: remark: loc("b"): buffer "b": offset 0, size 4096, stride 4096 bytes, slot i of 4 slots

// With whole views (Triton 3.8) the first region covers 96 rows of words.
// WHOLE: remark: loc("spec"): storage_alias_spec "spec": smem region 12288 bytes, ideal 8448 bytes, padding 3840 bytes
// WHOLE: remark: loc("words"): buffer "words": offset 0, size 4096, stride 4096 bytes, slot i of 3 slots

// TRACE: [tlx-storage-alias-plan] storage_alias_spec "spec":
// TRACE-NEXT: smem region: 8448 bytes (ideal 8448, padding 0), child-major at 2 of 3 reuse groups, backing [66, 128] x i8, alignment 128 bytes
// TRACE: "flags" 8192 128 128 i + 64 66
// TRACE: [tlx-storage-alias-plan] storage_alias_spec "qk_storage":
// TRACE: [tlx-storage-alias-plan] storage_alias_spec "no_tree":

// What the pass statistics count (specs-planned, bytes-shared,
// padding-bytes; -mlir-pass-statistics shows them where LLVM is built with
// statistics) ends the trace. Bytes shared: words 8192 + halves 8192 + flags
// 256 - 8448 occupied = 8192; qk 2 x 128 columns + p 8 x 16 + alpha 2 x 1,
// 386 columns in 256, 130 columns of 512 bytes; a 16384 + b 16384 in 16384.
// TOTALS: [tlx-storage-alias-plan] 3 specs planned, 91136 bytes shared, 0 padding bytes
