// RUN: env TLX_TRITON_VERSION=3.8 triton-opt %s --test-print-tlx-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: env TLX_TRITON_VERSION=3.9.0 triton-opt %s --test-print-tlx-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=PART
// RUN: env TLX_TRITON_VERSION=3.6.0 triton-opt %s --tlx-storage-alias-lowering | FileCheck %s --check-prefix=PART-IR
// RUN: env TLX_TRITON_VERSION=3.8.0 triton-opt %s --tlx-storage-alias-size-definition | FileCheck %s --check-prefix=WHOLE-IR
// RUN: env TLX_TRITON_VERSION=none triton-opt %s --test-print-tlx-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: env TLX_TRITON_VERSION=3.9 triton-opt %s --test-print-tlx-plan=whole-views=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: env TLX_TRITON_VERSION=3.8 triton-opt %s --test-print-tlx-plan=whole-views=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PART
// RUN: env TLX_TRITON_VERSION=3.8 triton-opt %s --tlx-storage-alias-lowering=whole-views=false | FileCheck %s --check-prefix=PART-IR
// RUN: env TLX_TRITON_VERSION=3.9 triton-opt %s --tlx-buffer-offset-calculation=whole-views=true | FileCheck %s --check-prefix=WHOLE-SLOTS
// RUN: env TLX_TRITON_VERSION=3.9 triton-opt --help | FileCheck %s --check-prefix=HELP-PART
// RUN: env TLX_TRITON_VERSION=none triton-opt --help | FileCheck %s --check-prefix=HELP-NONE
// RUN: env TLX_TRITON_VERSION=three triton-opt %s --test-print-tlx-plan -o /dev/null 2>&1 | FileCheck %s --check-prefixes=BAD,WHOLE

// The whole-views default of the passes that plan follows the Triton of the
// environment (TLX_TRITON_VERSION here; docs/mlir.md says where else it is
// found): whole views for Triton 3.8, whose memdesc_reinterpret keeps the
// byte size, views smaller than the region for 3.6, 3.7 and 3.9, and whole
// views where no Triton is found (valid on every release). An explicit
// whole-views wins. The module is the README's example (as in
// test/TLX/print-plan.mlir): 8448 bytes, 12288 with whole views.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
  tt.func @share_bytes() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("spec")
    %words = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x32x32xi32, #shared, #smem, mutable> loc("words")
    %halves = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x32x32xi16, #shared, #smem, mutable> loc("halves")
    %flags = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<2x4x32xi8, #shared, #smem, mutable> loc("flags")
    %pairs = tlx.reuse_group(%halves) group_kind = shared, group_size = 2 : (!ttg.memdesc<4x32x32xi16, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    %tail = tlx.reuse_group(%pairs, %flags) group_kind = distinct : (!tlx.reuse_group<shared>, !ttg.memdesc<2x4x32xi8, #shared, #smem, mutable>) -> !tlx.reuse_group<distinct>
    %root = tlx.reuse_group(%words, %tail) group_kind = shared : (!ttg.memdesc<2x32x32xi32, #shared, #smem, mutable>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %root) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    tt.return
  }
}

// BAD: warning: TLX_TRITON_VERSION=three is not a Triton version (3.8, 3.9.0, ...) or `none`; planning as where no Triton is found
// WHOLE: storage_alias_spec "spec": smem region 12288 bytes, ideal 8448 bytes, padding 3840 bytes
// PART: storage_alias_spec "spec": smem region 8448 bytes, ideal 8448 bytes, padding 0 bytes

// PART-IR: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<66x128xi8
// WHOLE-IR: tlx.storage_alias_spec storage = smem, size = 12288
// WHOLE-SLOTS: placement = #tlx.placement<slots = 3,

// HELP-PART: OVERVIEW: TLX storage aliasing optimizer driver
// HELP-PART-NEXT: The storage alias passes' whole-views default is false and offset-form sliced_rows, as Triton 3.9 (from TLX_TRITON_VERSION) needs.
// HELP-PART: --offset-form{{.*}}Default: what the Triton of the environment writes
// HELP-PART: --whole-views{{.*}}Default: what the Triton of the environment needs
// HELP-NONE: The storage alias passes' whole-views default is true: no Triton found (TLX_TRITON_VERSION, TLX_PYTHON, python3 beside triton-opt or on PATH), and whole views are valid on every Triton release.
