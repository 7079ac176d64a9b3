// Every tlx op and type prints and parses back to itself, in custom and in
// generic form.
// RUN: triton-opt %s | FileCheck %s
// RUN: triton-opt %s | triton-opt | FileCheck %s
// RUN: triton-opt %s --mlir-print-op-generic | triton-opt | FileCheck %s
// RUN: triton-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: triton-opt --help | FileCheck %s --check-prefix=HELP

// DIALECTS: arith
// DIALECTS: cf
// DIALECTS: func
// DIALECTS: gpu
// DIALECTS: math
// DIALECTS: scf
// DIALECTS: tlx
// DIALECTS: tt
// DIALECTS: ttg
// DIALECTS: ttng
// DIALECTS: ub
// HELP: Available Dialects: {{.*}}tlx, tt, ttg, ttng

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
#tmem1 = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>

// CHECK-LABEL: tt.func @specs
tt.func @specs() {
  // CHECK-NEXT: tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
  %smem = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
  // CHECK-NEXT: tlx.storage_alias_spec storage = tmem, size = 16384 : !tlx.storage_alias_spec<tmem, 16384>
  %tmem = tlx.storage_alias_spec storage = tmem, size = 16384 : !tlx.storage_alias_spec<tmem, 16384>
  // CHECK-NEXT: tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 1024, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
  %sized = tlx.storage_alias_spec storage = smem, size = 32768 {backing = #tlx.backing<shape = [256, 128], block = [256, 128], elementBits = 8, alignment = 1024, regionSize = 32768>} : !tlx.storage_alias_spec<smem, 32768>
  tt.return
}

// CHECK-LABEL: tt.func @flash_attention_tree
tt.func @flash_attention_tree() {
  // CHECK-NEXT: %[[SPEC:.+]] = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
  %spec = tlx.storage_alias_spec storage = tmem : !tlx.storage_alias_spec<tmem>
  // CHECK-NEXT: %[[QK:.+]] = tlx.storage_alias_local_alloc %[[SPEC]] : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  %qk = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  // CHECK-NEXT: %[[P:.+]] = tlx.storage_alias_local_alloc %[[SPEC]] {placement = #tlx.placement<slots = 8, period = 2, scale = 4, offset = 1, step = 2>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<4x128x32xf16, #tmem1, #ttng.tensor_memory, mutable>
  %p = tlx.storage_alias_local_alloc %spec {placement = #tlx.placement<slots = 8, period = 2, scale = 4, offset = 1, step = 2>} : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<4x128x32xf16, #tmem1, #ttng.tensor_memory, mutable>
  // CHECK-NEXT: %[[ALPHA:.+]] = tlx.storage_alias_local_alloc %[[SPEC]] : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem, #ttng.tensor_memory, mutable>
  %alpha = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<tmem> -> !ttg.memdesc<2x128x1xf32, #tmem, #ttng.tensor_memory, mutable>
  // CHECK-NEXT: %[[SLICES:.+]] = tlx.reuse_group(%[[P]]) group_kind = shared, group_size = 2 : (!ttg.memdesc<4x128x32xf16, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<shared>
  %slices = tlx.reuse_group(%p) group_kind = shared, group_size = 2 : (!ttg.memdesc<4x128x32xf16, #tmem1, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<shared>
  // CHECK-NEXT: %[[DISTINCT:.+]] = tlx.reuse_group(%[[SLICES]], %[[ALPHA]]) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x128x1xf32, #tmem, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
  %distinct = tlx.reuse_group(%slices, %alpha) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x128x1xf32, #tmem, #ttng.tensor_memory, mutable>) -> !tlx.reuse_group<distinct>
  // group_size = 1 is the default and is not printed.
  // CHECK-NEXT: %[[ROOT:.+]] = tlx.reuse_group(%[[QK]], %[[DISTINCT]]) group_kind = shared : (!ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
  %root = tlx.reuse_group(%qk, %distinct) group_kind = shared, group_size = 1 : (!ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
  // CHECK-NEXT: tlx.set_buffer_overlap(%[[SPEC]], %[[ROOT]]) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<shared>) -> ()
  tlx.set_buffer_overlap(%spec, %root) : (!tlx.storage_alias_spec<tmem>, !tlx.reuse_group<shared>) -> ()
  tt.return
}

// Phases: one tree per phase, given to set_buffer_overlap as a
// !tlx.reuse_phases.
// CHECK-LABEL: tt.func @phases
tt.func @phases(%spec: !tlx.storage_alias_spec<smem>) {
  // CHECK: tlx.storage_alias_local_alloc
  %a = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // CHECK-NEXT: tlx.storage_alias_local_alloc
  %b = tlx.storage_alias_local_alloc %spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // CHECK-NEXT: %[[P0:.+]] = tlx.reuse_group
  %p0 = tlx.reuse_group(%a) group_kind = distinct : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
  // CHECK-NEXT: %[[P1:.+]] = tlx.reuse_group
  %p1 = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
  // CHECK-NEXT: %[[PHASES:.+]] = tlx.reuse_phases(%[[P0]], %[[P1]]) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<shared>) -> !tlx.reuse_phases
  %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<shared>) -> !tlx.reuse_phases
  // CHECK-NEXT: tlx.set_buffer_overlap(%{{.+}}, %[[PHASES]]) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
  tlx.set_buffer_overlap(%spec, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
  tt.return
}

// CHECK-LABEL: tt.func @aliases
// CHECK-SAME: (%[[BUFFER:.+]]: !ttg.memdesc<32768xi8, #shared, #smem, mutable>, %[[TMEM:.+]]: !ttg.memdesc<128x128xi32, #tmem, #ttng.tensor_memory, mutable>)
tt.func @aliases(%buffer: !ttg.memdesc<32768xi8, #shared, #smem, mutable>, %tmem_buffer: !ttg.memdesc<128x128xi32, #tmem, #ttng.tensor_memory, mutable>) {
  // CHECK-NEXT: tlx.local_alias %[[BUFFER]] : !ttg.memdesc<32768xi8, #shared, #smem, mutable> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  %a = tlx.local_alias %buffer : !ttg.memdesc<32768xi8, #shared, #smem, mutable> -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
  // CHECK-NEXT: tlx.local_alias %[[TMEM]] : !ttg.memdesc<128x128xi32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  %b = tlx.local_alias %tmem_buffer : !ttg.memdesc<128x128xi32, #tmem, #ttng.tensor_memory, mutable> -> !ttg.memdesc<2x128x64xf32, #tmem, #ttng.tensor_memory, mutable>
  tt.return
}

// CHECK-LABEL: tt.func @types
// CHECK-SAME: !tlx.storage_alias_spec<smem>, %{{.+}}: !tlx.storage_alias_spec<tmem, 4096>, %{{.+}}: !tlx.reuse_group<shared>, %{{.+}}: !tlx.reuse_group<distinct>
tt.func @types(%a: !tlx.storage_alias_spec<smem>, %b: !tlx.storage_alias_spec<tmem, 4096>, %c: !tlx.reuse_group<shared>, %d: !tlx.reuse_group<distinct>) {
  tt.return
}
