// RUN: triton-opt %s --tlx-storage-alias-size-definition | FileCheck %s
// RUN: triton-opt %s --tlx-storage-alias-lowering --tlx-rewrite-local-alias | FileCheck %s --check-prefix=LOWERED

// Every Triton element type with a size is planned at the width Triton
// stores it with: pointers 64 bits, i1 one byte, fp8 one byte, fp4 half a
// byte. Each spec has one user of 4 x [16, 16] elements; the region is its
// 4 x 256 elements, rounded up to 128 bytes.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {ttg.target = "cuda:90"} {
  // CHECK-LABEL: tt.func @element_types
  tt.func @element_types(%i: i32) {
    // CHECK: tlx.storage_alias_spec storage = smem, size = 8192 {{.*}} : !tlx.storage_alias_spec<smem, 8192>
    %ptr_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %ptr = tlx.storage_alias_local_alloc %ptr_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16x!tt.ptr<f16>, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 1024 {{.*}} : !tlx.storage_alias_spec<smem, 1024>
    %bool_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %bool = tlx.storage_alias_local_alloc %bool_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xi1, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 1024 {{.*}} : !tlx.storage_alias_spec<smem, 1024>
    %e4m3_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %e4m3 = tlx.storage_alias_local_alloc %e4m3_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xf8E4M3FN, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 1024 {{.*}} : !tlx.storage_alias_spec<smem, 1024>
    %e5m2_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %e5m2 = tlx.storage_alias_local_alloc %e5m2_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xf8E5M2, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 1024 {{.*}} : !tlx.storage_alias_spec<smem, 1024>
    %b15_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %b15 = tlx.storage_alias_local_alloc %b15_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xf8E4M3B11FNUZ, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 512 {{.*}} : !tlx.storage_alias_spec<smem, 512>
    %e2m1_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %e2m1 = tlx.storage_alias_local_alloc %e2m1_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xf4E2M1FN, #shared, #smem, mutable>
    // CHECK: tlx.storage_alias_spec storage = smem, size = 2048 {{.*}} : !tlx.storage_alias_spec<smem, 2048>
    %half_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %half = tlx.storage_alias_local_alloc %half_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<4x16x16xf16, #shared, #smem, mutable>
    // A pointer buffer shares bytes with a 64-bit one, slot for slot.
    // CHECK: tlx.storage_alias_spec storage = smem, size = 16384 {{.*}} : !tlx.storage_alias_spec<smem, 16384>
    %mixed_spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %pointers = tlx.storage_alias_local_alloc %mixed_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<8x16x16x!tt.ptr<f32>, #shared, #smem, mutable>
    %words = tlx.storage_alias_local_alloc %mixed_spec : !tlx.storage_alias_spec<smem> -> !ttg.memdesc<8x16x16xi64, #shared, #smem, mutable>
    %g = tlx.reuse_group(%pointers, %words) group_kind = shared : (!ttg.memdesc<8x16x16x!tt.ptr<f32>, #shared, #smem, mutable>, !ttg.memdesc<8x16x16xi64, #shared, #smem, mutable>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%mixed_spec, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    // LOWERED: %[[MIXED:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<128x128xi8
    // LOWERED: ttg.memdesc_reinterpret %[[MIXED]] : {{.*}} -> !ttg.memdesc<8x16x16x!tt.ptr<f32>, #shared1, #smem, mutable>
    // LOWERED: ttg.memdesc_reinterpret %[[MIXED]] : {{.*}} -> !ttg.memdesc<8x16x16xi64, #shared1, #smem, mutable>
    %p = ttg.memdesc_index %pointers[%i] : !ttg.memdesc<8x16x16x!tt.ptr<f32>, #shared, #smem, mutable> -> !ttg.memdesc<16x16x!tt.ptr<f32>, #shared, #smem, mutable>
    %w = ttg.memdesc_index %words[%i] : !ttg.memdesc<8x16x16xi64, #shared, #smem, mutable> -> !ttg.memdesc<16x16xi64, #shared, #smem, mutable>
    ttg.local_dealloc %p : !ttg.memdesc<16x16x!tt.ptr<f32>, #shared, #smem, mutable>
    ttg.local_dealloc %w : !ttg.memdesc<16x16xi64, #shared, #smem, mutable>
    tt.return
  }
}
