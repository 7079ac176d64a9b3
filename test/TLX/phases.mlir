// RUN: triton-opt %s --split-input-file --cse --canonicalize --tlx-storage-alias-lowering --verify-diagnostics | FileCheck %s
// RUN: triton-opt %s --split-input-file --tlx-buffer-offset-calculation --verify-diagnostics | FileCheck %s --check-prefix=OFFSETS

// Implicit overlap and phases (docs/semantics.md): a tlx.reuse_group (or
// tlx.reuse_phases) without users whose leaves are all users of one spec is
// that spec's overlap, and survives --cse and --canonicalize; phases give
// one place per buffer valid in every phase, and uses of buffers of
// different phases that share bytes must not interleave in program order
// (through scf regions) within one sequence of control: the kernel, or one
// warp_specialize region (its default region or a partition).

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // distinct(a, b) without set_buffer_overlap: 4 buffers of 8192 bytes,
  // group-major (a0 b0 a1 b1).
  // CHECK-LABEL: tt.func @implicit_tree
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<256x128xi8
  // CHECK-NOT: tlx.reuse_group
  // OFFSETS-LABEL: tt.func @implicit_tree
  // OFFSETS: placement = #tlx.placement<slots = 4, period = 1, scale = 2, offset = 0, step = 1>
  // OFFSETS: placement = #tlx.placement<slots = 4, period = 1, scale = 2, offset = 1, step = 1>
  // OFFSETS-NOT: tlx.reuse_group
  tt.func @implicit_tree() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // set_buffer_overlap wins over a tree without users (shared: 16384 bytes).
  // CHECK-LABEL: tt.func @explicit_wins
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
  tt.func @explicit_wins() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %unused = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %g = tlx.reuse_group(%a, %b) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func @two_unrelated_trees() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    // expected-note @below {{the other tree}}
    %g1 = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    // expected-error-re @below {{storage_alias_spec "{{.*}}" has two overlap trees and no tlx.set_buffer_overlap: this tlx.reuse_group and the one at phases.mlir:{{[0-9]+}}:{{[0-9]+}} are both over its buffers alone}}
    %g2 = tlx.reuse_group(%b, %a) group_kind = shared : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // The fused MLP's pattern: per hidden chunk, phase 0 (x, w1: 2 stages each,
  // into h) then phase 1 (h, w2: 3 stages), the output tile y after the loop;
  // h and y are in both phases and sit apart (first), the phases share the
  // rest: (2 + max(4, 3)) x 8192 bytes.
  // CHECK-LABEL: tt.func @fused_mlp
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<384x128xi8
  // CHECK-NOT: tlx.reuse_phases
  // OFFSETS-LABEL: tt.func @fused_mlp
  // OFFSETS-COUNT-5: placement = #tlx.placement<slots = 6
  tt.func @fused_mlp(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %w1 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %h = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %w2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>
    %y = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %p0 = tlx.reuse_group(%h, %y, %x, %w1) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p1 = tlx.reuse_group(%h, %y, %w2) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<distinct>) -> !tlx.reuse_phases
    tlx.set_buffer_overlap(%s, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
    scf.for %chunk = %c0 to %n step %c1 : i32 {
      scf.for %k = %c0 to %c2 step %c1 : i32 {
        %xk = ttg.memdesc_index %x[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %xv = ttg.local_load %xk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
        %wk = ttg.memdesc_index %w1[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %wv = ttg.local_load %wk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
        %h0 = ttg.memdesc_index %h[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        ttg.local_store %xv, %h0 : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      }
      scf.for %j = %c0 to %c3 step %c1 : i32 {
        %wj = ttg.memdesc_index %w2[%j] : !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %wv = ttg.local_load %wj : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
        %h0 = ttg.memdesc_index %h[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %hv = ttg.local_load %h0 : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      }
    }
    %y0 = ttg.memdesc_index %y[%c0] : !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %yv = ttg.local_load %y0 : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // Phases without set_buffer_overlap (implicit), and interleaved uses in a
  // loop: x of phase 0 around w2 of phase 1, which takes x's bytes.
  tt.func @interleaved(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %w2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %p0 = tlx.reuse_group(%x) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p1 = tlx.reuse_group(%w2) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<distinct>) -> !tlx.reuse_phases
    scf.for %k = %c0 to %n step %c1 : i32 {
      // expected-note @below {{a use of buffer "phases.mlir:}}
      %xk = ttg.memdesc_index %x[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      // expected-error-re @below {{buffer "phases.mlir:{{[0-9]+}}:{{[0-9]+}}" (phase 1) is used between two uses of buffer "phases.mlir:{{[0-9]+}}:{{[0-9]+}}" (phase 0) of spec "{{.*}}", whose bytes it shares}}
      %wk = ttg.memdesc_index %w2[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %wv = ttg.local_load %wk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      // expected-note @below {{a use of buffer "phases.mlir:}}
      %xv = ttg.local_load %xk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
    }
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // A warp-specialized kernel: the default region and each partition are a
  // sequence of control of their own, each using x (phase 0) then w2
  // (phase 1). Across them there is no program order (the kernel's barriers
  // order them: docs/hazards.md), so though pre-order puts the loader's x
  // between the default region's x and w2, the phases are accepted.
  // CHECK-LABEL: tt.func @phases_per_partition
  // CHECK: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
  // CHECK: ttg.warp_specialize
  tt.func @phases_per_partition(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("x")
    %w2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("w2")
    %p0 = tlx.reuse_group(%x) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p1 = tlx.reuse_group(%w2) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<distinct>) -> !tlx.reuse_phases
    tlx.set_buffer_overlap(%s, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
    ttg.warp_specialize(%x, %w2, %n) attributes {requestedRegisters = array<i32: 48, 48>}
    default {
      scf.for %k = %c0 to %n step %c1 : i32 {
        %xk = ttg.memdesc_index %x[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %xv = ttg.local_load %xk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
        %wk = ttg.memdesc_index %w2[%k] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
        %wv = ttg.local_load %wk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      }
      ttg.warp_yield
    }
    partition0(%ax: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %aw: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %m: i32) num_warps(4) {
      %xk = ttg.memdesc_index %ax[%m] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %xv = ttg.local_load %xk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      %wk = ttg.memdesc_index %aw[%m] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %wv = ttg.local_load %wk : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      ttg.warp_return
    }
    partition1(%bx: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %bw: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %m: i32) num_warps(4) {
      %xk = ttg.memdesc_index %bx[%m] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %wk = ttg.memdesc_index %bw[%m] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.warp_return
    } : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, i32) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // Within one partition the rule holds: partition0 uses w2 (phase 1)
  // between two uses of x (phase 0), through the op's captures; the default
  // region's own, ordered uses are not blamed.
  tt.func @interleaved_in_a_partition(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    %x = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("x")
    %w2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> loc("w2")
    %p0 = tlx.reuse_group(%x) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p1 = tlx.reuse_group(%w2) group_kind = distinct : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<distinct>, !tlx.reuse_group<distinct>) -> !tlx.reuse_phases
    tlx.set_buffer_overlap(%s, %phases) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_phases) -> ()
    ttg.warp_specialize(%x, %w2, %i) attributes {requestedRegisters = array<i32: 48>}
    default {
      %x0 = ttg.memdesc_index %x[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %w0 = ttg.memdesc_index %w2[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      ttg.warp_yield
    }
    partition0(%ax: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %aw: !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, %j: i32) num_warps(4) {
      // expected-note @below {{a use of buffer "x" before it}}
      %xj = ttg.memdesc_index %ax[%j] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      // expected-error @below {{buffer "w2" (phase 1) is used between two uses of buffer "x" (phase 0) of spec "spec", whose bytes it shares}}
      %wj = ttg.memdesc_index %aw[%j] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
      %wv = ttg.local_load %wj : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      // expected-note @below {{a use of buffer "x" after it}}
      %xv = ttg.local_load %xj : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
      ttg.warp_return
    } : (!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>, i32) -> ()
    tt.return
  }
}

// -----

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  // c shares the bytes of distinct(a, b) in phase 0 and of distinct(b, a) in
  // phase 1: a, b and c are in both phases, and no one place suits both.
  tt.func @phases_disagree() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    // expected-error-re @below {{buffer "phases.mlir:{{[0-9]+}}:{{[0-9]+}}" is in phases 0 and 1 of spec "spec", which, each planned alone, put it at different places; and the buffers of several phases cannot be set apart either: "phases.mlir:{{[0-9]+}}:{{[0-9]+}}" shares bytes with another buffer in phase 0}}
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %c = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>
    %ab = tlx.reuse_group(%a, %b) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %ba = tlx.reuse_group(%b, %a) group_kind = distinct : (!ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %p0 = tlx.reuse_group(%ab, %c) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %p1 = tlx.reuse_group(%ba, %c) group_kind = shared : (!tlx.reuse_group<distinct>, !ttg.memdesc<1x64x64xf16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %phases = tlx.reuse_phases(%p0, %p1) : (!tlx.reuse_group<shared>, !tlx.reuse_group<shared>) -> !tlx.reuse_phases
    tt.return
  }
}
