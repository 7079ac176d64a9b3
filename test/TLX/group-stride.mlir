// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=false offset-form=indexed_row" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=ROW
// RUN: triton-opt %s --split-input-file --tlx-buffer-offset-calculation="whole-views=false offset-form=indexed_row" | FileCheck %s --check-prefix=PLACED
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-size-definition="whole-views=false offset-form=indexed_row" --tlx-buffer-offset-calculation="whole-views=false offset-form=indexed_row" --tlx-storage-alias-allocation --tlx-rewrite-local-alias | FileCheck %s --check-prefix=ROW
// RUN: triton-opt %s --split-input-file --test-print-tlx-plan="whole-views=false offset-form=indexed_row" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=false offset-form=sliced_rows" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=SELECTED
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-size-definition="whole-views=false offset-form=sliced_rows" --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" --tlx-storage-alias-allocation --tlx-rewrite-local-alias | FileCheck %s --check-prefix=SELECTED
// RUN: triton-opt %s --split-input-file --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" | FileCheck %s --check-prefix=SELECTED-PLACED
// RUN: triton-opt %s --split-input-file --test-print-tlx-plan="whole-views=false offset-form=sliced_rows" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SELECTED-PRINT

// A free group stride (docs/planner.md, "Views at a byte offset"): where a
// buffer group ends at no multiple of a user's buffer size, the Triton that
// writes indexed_row (3.6, 3.7) also writes a view per buffer group
// (runtime_row): the backing's row where buffer i's group starts, computed
// from i, reinterpreted to the group's slots, then the slot, as the Python
// door emits it. shared(w: f16 32x32, distinct(a: i8 32x32, b: f16 16x128)),
// 3 buffers each: 5 KiB groups (2.5 of w's buffers, 1.25 of b's), 15 KiB in
// all. The Triton that writes sliced_rows (3.9) writes the same plan as a view
// per buffer group chosen at run time (selected_rows): each group's rows from
// its start, reinterpreted to the group's slots, in its own branch of an
// scf.if chain on the group (the index itself: period 1); a constant index
// takes its group's view. Then the same user captured by ttg.warp_specialize.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
!w = !ttg.memdesc<3x32x32xf16, #shared, #ttg.shared_memory, mutable>
!a = !ttg.memdesc<3x32x32xi8, #shared, #ttg.shared_memory, mutable>
!b = !ttg.memdesc<3x16x128xf16, #shared, #ttg.shared_memory, mutable>
module {
  tt.func @free_stride(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("stride")
    %w = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !w loc("w")
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !a loc("a")
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !b loc("b")
    %d = tlx.reuse_group(%a, %b) group_kind = distinct : (!a, !b) -> !tlx.reuse_group<distinct>
    %g = tlx.reuse_group(%w, %d) group_kind = shared : (!w, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %c2 = arith.constant 2 : i32
    %x = ttg.memdesc_index %b[%i] : !b -> !ttg.memdesc<16x128xf16, #shared, #ttg.shared_memory, mutable>
    %y = ttg.memdesc_index %w[%c2] : !w -> !ttg.memdesc<32x32xf16, #shared, #ttg.shared_memory, mutable>
    %z = ttg.memdesc_index %a[%i] : !a -> !ttg.memdesc<32x32xi8, #shared, #ttg.shared_memory, mutable>
    tt.return
  }
}

// ROW-LABEL: tt.func @free_stride
// ROW-DAG: %[[C40:.*]] = arith.constant 40 : i32
// ROW-DAG: %[[C8:.*]] = arith.constant 8 : i32
// ROW-DAG: %[[C0:.*]] = arith.constant 0 : i32
// ROW-DAG: %[[C80:.*]] = arith.constant 80 : i32
// ROW-DAG: %[[C5:.*]] = arith.constant 5 : i32
// ROW-DAG: %[[SLOT:.*]] = arith.muli %arg0, %[[C5]] : i32
// ROW-DAG: %[[SCALED:.*]] = arith.muli %arg0, %[[C40]] : i32
// ROW-DAG: %[[ROW:.*]] = arith.addi %[[SCALED]], %[[C8]] : i32
// ROW: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<120x128xi8
// ROW-NOT: ttg.memdesc_reinterpret %[[BACKING]] : {{.*}} -> !ttg.memdesc<{{.*}}xf16
// ROW: %[[A:.*]] = ttg.memdesc_reinterpret %[[BACKING]] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<15x32x32xi8
// ROW: %[[BYTES:.*]] = ttg.memdesc_index %[[BACKING]][%[[ROW]]] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128xi8, #shared, #smem, mutable>
// ROW: %[[GROUP:.*]] = ttg.memdesc_reinterpret %[[BYTES]] : !ttg.memdesc<128xi8, #shared, #smem, mutable> -> !ttg.memdesc<1x16x128xf16, #shared1, #smem, mutable>
// ROW: ttg.memdesc_index %[[GROUP]][%[[C0]]] : !ttg.memdesc<1x16x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<16x128xf16
// ROW: %[[WBYTES:.*]] = ttg.memdesc_index %[[BACKING]][%[[C80]]] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128xi8, #shared, #smem, mutable>
// ROW: %[[WGROUP:.*]] = ttg.memdesc_reinterpret %[[WBYTES]] : !ttg.memdesc<128xi8, #shared, #smem, mutable> -> !ttg.memdesc<1x32x32xf16
// ROW: ttg.memdesc_index %[[WGROUP]][%[[C0]]]
// ROW: ttg.memdesc_index %[[A]][%[[SLOT]]]

// PLACED-LABEL: tt.func @free_stride
// PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = runtime_row, groupStride = 5120>}
// PLACED: {placement = #tlx.placement<slots = 15, period = 1, scale = 5, offset = 0, step = 1>}
// PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, base = 1024, form = runtime_row, groupStride = 5120>}

// PRINT: storage_alias_spec "stride": smem region 15360 bytes, ideal 15360 bytes, padding 0 bytes, buffer group 0 repeated every 5120 bytes
// PRINT: buffer "w": offset 0, size 2048, stride 5120 bytes, slot 0 of 1 slots, form runtime_row, groups 5120 bytes apart
// PRINT: buffer "b": offset 1024, size 4096, stride 5120 bytes, slot 0 of 1 slots, form runtime_row from 1024, groups 5120 bytes apart

// SELECTED-LABEL: tt.func @free_stride
// SELECTED-DAG: %[[C0:.*]] = arith.constant 0 : i32
// SELECTED-DAG: %[[C1:.*]] = arith.constant 1 : i32
// SELECTED-DAG: %[[C5:.*]] = arith.constant 5 : i32
// SELECTED-DAG: %[[SLOT:.*]] = arith.muli %arg0, %[[C5]] : i32
// SELECTED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<120x128xi8
// SELECTED-NOT: ttg.memdesc_reinterpret %[[BACKING]] : {{.*}} -> !ttg.memdesc<{{.*}}xf16
// SELECTED: %[[A:.*]] = ttg.memdesc_reinterpret %[[BACKING]] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<15x32x32xi8
// SELECTED: %[[IS0:.*]] = arith.cmpi eq, %arg0, %[[C0]] : i32
// SELECTED-NEXT: %[[B:.*]] = scf.if %[[IS0]] -> (!ttg.memdesc<1x16x128xf16, #shared1, #smem, mutable>) {
// SELECTED-NEXT: %[[ROWS0:.*]] = ttg.memdesc_subslice %[[BACKING]][8, 0] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<32x128xi8, #shared, #smem, mutable, 120x128>
// SELECTED-NEXT: %[[VIEW0:.*]] = ttg.memdesc_reinterpret %[[ROWS0]] : {{.*}} -> !ttg.memdesc<1x16x128xf16
// SELECTED-NEXT: scf.yield %[[VIEW0]]
// SELECTED-NEXT: } else {
// SELECTED-NEXT: %[[IS1:.*]] = arith.cmpi eq, %arg0, %[[C1]] : i32
// SELECTED-NEXT: %[[REST:.*]] = scf.if %[[IS1]]
// SELECTED-NEXT: ttg.memdesc_subslice %[[BACKING]][48, 0]
// SELECTED: } else {
// SELECTED-NEXT: ttg.memdesc_subslice %[[BACKING]][88, 0]
// SELECTED: scf.yield %[[REST]]
// SELECTED-NEXT: }
// SELECTED-NEXT: ttg.memdesc_index %[[B]][%[[C0]]] : !ttg.memdesc<1x16x128xf16, #shared1, #smem, mutable> -> !ttg.memdesc<16x128xf16
// SELECTED-NEXT: %[[WROWS:.*]] = ttg.memdesc_subslice %[[BACKING]][80, 0] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<16x128xi8, #shared, #smem, mutable, 120x128>
// SELECTED-NEXT: %[[W:.*]] = ttg.memdesc_reinterpret %[[WROWS]] : {{.*}} -> !ttg.memdesc<1x32x32xf16
// SELECTED-NEXT: ttg.memdesc_index %[[W]][%[[C0]]]
// SELECTED-NEXT: ttg.memdesc_index %[[A]][%[[SLOT]]]

// SELECTED-PLACED-LABEL: tt.func @free_stride
// SELECTED-PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStride = 5120, groupForm = sliced_rows>}
// SELECTED-PLACED: {placement = #tlx.placement<slots = 15, period = 1, scale = 5, offset = 0, step = 1>}
// SELECTED-PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, base = 1024, form = selected_rows, groupStride = 5120, groupForm = sliced_rows>}

// SELECTED-PRINT: storage_alias_spec "stride": smem region 15360 bytes, ideal 15360 bytes, padding 0 bytes, buffer group 0 repeated every 5120 bytes
// SELECTED-PRINT: buffer "w": offset 0, size 2048, stride 5120 bytes, slot 0 of 1 slots, form selected_rows, groups 5120 bytes apart, group views sliced_rows
// SELECTED-PRINT: buffer "b": offset 1024, size 4096, stride 5120 bytes, slot 0 of 1 slots, form selected_rows from 1024, groups 5120 bytes apart, group views sliced_rows

// -----

// Captured by ttg.warp_specialize: a user with a view per buffer group is the
// backing itself, so the partition argument takes the backing's type and the
// index inside the partition becomes the group's row, its view and the slot
// there (the partition is isolated from above: constants of its own).

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
!w = !ttg.memdesc<3x32x32xf16, #shared, #ttg.shared_memory, mutable>
!a = !ttg.memdesc<3x32x32xi8, #shared, #ttg.shared_memory, mutable>
!b = !ttg.memdesc<3x16x128xf16, #shared, #ttg.shared_memory, mutable>
module {
  tt.func @captured(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %w = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !w
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !a
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !b
    %d = tlx.reuse_group(%a, %b) group_kind = distinct : (!a, !b) -> !tlx.reuse_group<distinct>
    %g = tlx.reuse_group(%w, %d) group_kind = shared : (!w, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    ttg.warp_specialize(%b, %i) attributes {requestedRegisters = array<i32: 48>}
    default {
      ttg.warp_yield
    }
    partition0(%arg0: !b, %j: i32) num_warps(4) {
      %bj = ttg.memdesc_index %arg0[%j] : !b -> !ttg.memdesc<16x128xf16, #shared, #ttg.shared_memory, mutable>
      ttg.warp_return
    } : (!b, i32) -> ()
    tt.return
  }
}

// ROW-LABEL: tt.func @captured
// ROW: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<120x128xi8, #shared, #smem, mutable>
// ROW: ttg.warp_specialize(%[[BACKING]], %arg0)
// ROW: partition0(%[[ARG:.*]]: !ttg.memdesc<120x128xi8, #shared, #smem, mutable>, %[[J:.*]]: i32) num_warps(4) {
// ROW-DAG: %[[C40:.*]] = arith.constant 40 : i32
// ROW-DAG: %[[C8:.*]] = arith.constant 8 : i32
// ROW-DAG: %[[C0:.*]] = arith.constant 0 : i32
// ROW: %[[SCALED:.*]] = arith.muli %[[J]], %[[C40]] : i32
// ROW: %[[ROW:.*]] = arith.addi %[[SCALED]], %[[C8]] : i32
// ROW: %[[BYTES:.*]] = ttg.memdesc_index %[[ARG]][%[[ROW]]] : !ttg.memdesc<120x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128xi8, #shared, #smem, mutable>
// ROW: %[[GROUP:.*]] = ttg.memdesc_reinterpret %[[BYTES]] : !ttg.memdesc<128xi8, #shared, #smem, mutable> -> !ttg.memdesc<1x16x128xf16, #shared1, #smem, mutable>
// ROW: ttg.memdesc_index %[[GROUP]][%[[C0]]]
// ROW: } : (!ttg.memdesc<120x128xi8, #shared, #smem, mutable>, i32) -> ()

// SELECTED-LABEL: tt.func @captured
// SELECTED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<120x128xi8, #shared, #smem, mutable>
// SELECTED: ttg.warp_specialize(%[[BACKING]], %arg0)
// SELECTED: partition0(%[[ARG:.*]]: !ttg.memdesc<120x128xi8, #shared, #smem, mutable>, %[[J:.*]]: i32) num_warps(4) {
// SELECTED: %[[IS0:.*]] = arith.cmpi eq, %[[J]], %{{.*}} : i32
// SELECTED-NEXT: %[[B:.*]] = scf.if %[[IS0]]
// SELECTED-NEXT: ttg.memdesc_subslice %[[ARG]][8, 0]
// SELECTED: ttg.memdesc_subslice %[[ARG]][48, 0]
// SELECTED: ttg.memdesc_subslice %[[ARG]][88, 0]
// SELECTED: ttg.memdesc_index %[[B]][%{{.*}}] : !ttg.memdesc<1x16x128xf16
// SELECTED: } : (!ttg.memdesc<120x128xi8, #shared, #smem, mutable>, i32) -> ()
