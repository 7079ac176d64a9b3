// RUN: triton-opt %s --test-print-tlx-plan -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: triton-opt %s --test-print-tlx-plan -debug-only=tlx-storage-alias-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAP

// The plan of a spec with phases as --test-print-tlx-plan remarks it and as
// the planner's memory map prints it: one line per buffer (one place, valid
// in every phase), then each phase's buffers. The fused MLP: h and y in both
// phases sit apart, the X/W1 ring of phase 0 and the W2 ring of phase 1 share
// bytes (48 KiB; 64 KiB as one distinct tree).

// REMARK: remark: {{.*}}storage_alias_spec "spec": smem region 49152 bytes
// REMARK: remark: {{.*}}phase 0: "h" "y" "x" "w1"
// REMARK: remark: {{.*}}phase 1: "h" "y" "w2"
// REMARK: remark: {{.*}}buffer "x": offset 16384
// REMARK: remark: {{.*}}buffer "w1": offset 32768
// REMARK: remark: {{.*}}buffer "h": offset 0
// REMARK: remark: {{.*}}buffer "w2": offset 16384
// REMARK: remark: {{.*}}buffer "y": offset 8192

// MAP: storage_alias_spec "spec":
// MAP-NEXT: smem region: 49152 bytes (ideal 49152, padding 0)
// MAP: "w2" 16384 8192 8192 i + 2 6
// MAP: phase 0: "h" "y" "x" "w1"
// MAP-NEXT: phase 1: "h" "y" "w2"

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @fused_mlp() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("x")
    %w1 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("w1")
    %h = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> loc("h")
    %w2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable> loc("w2")
    %y = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> loc("y")
    %p0 = tlx.reuse_group(%h, %y, %x, %w1) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p1 = tlx.reuse_group(%h, %y, %w2) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<distinct>) -> !tlx.reuse_phases
    tlx.set_buffer_overlap(%s, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
    tt.return
  }
}
