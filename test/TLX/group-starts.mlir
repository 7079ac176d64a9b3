// RUN: triton-opt %s --tlx-storage-alias-lowering="whole-views=false offset-form=sliced_rows" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=LOWERED
// RUN: triton-opt %s --tlx-storage-alias-size-definition="whole-views=false offset-form=sliced_rows" --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" --tlx-storage-alias-allocation --tlx-rewrite-local-alias | FileCheck %s --check-prefix=LOWERED
// RUN: triton-opt %s --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" | FileCheck %s --check-prefix=PLACED
// RUN: triton-opt %s --test-print-tlx-plan="whole-views=false offset-form=sliced_rows" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: triton-opt %s --tlx-storage-alias-lowering="whole-views=false offset-form=indexed_row" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=ROW
// RUN: triton-opt %s --tlx-storage-alias-size-definition="whole-views=false offset-form=indexed_row" --tlx-buffer-offset-calculation="whole-views=false offset-form=indexed_row" --tlx-storage-alias-allocation --tlx-rewrite-local-alias | FileCheck %s --check-prefix=ROW
// RUN: triton-opt %s --tlx-buffer-offset-calculation="whole-views=false offset-form=indexed_row" | FileCheck %s --check-prefix=ROW-PLACED
// RUN: triton-opt %s --test-print-tlx-plan="whole-views=false offset-form=indexed_row" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROW-PRINT
// RUN: triton-opt %s --test-print-tlx-plan="whole-views=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE-PRINT

// Groups at starts of their own (docs/planner.md, "What stays above the
// ideal"): shared(u2: 256 B, u0: 8 KiB, u1: 4 x 2 KiB) reaches its ideal,
// 14 KiB, with u1's buffers at 0, 8, 10 and 12 KiB (slots 0, 4, 5, 6 of
// 2 KiB, which no one view writes). The Triton that writes sliced_rows (3.9)
// gives u1 a view per buffer, each at its start, one chosen at run time by an
// scf.if chain on the index (a constant index takes its own view), as the
// Python door emits it. The Triton that writes indexed_row (3.6, 3.7) does
// the same with each view the backing's row at its start (indexed_row group
// views, the placement's groupForm); 3.8 (whole views) puts every buffer in
// bytes of its own: 24 KiB.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
!u0 = !ttg.memdesc<1x64x128xi8, #shared, #ttg.shared_memory, mutable>
!u1 = !ttg.memdesc<4x16x128xi8, #shared, #ttg.shared_memory, mutable>
!u2 = !ttg.memdesc<1x2x128xi8, #shared, #ttg.shared_memory, mutable>
module {
  tt.func @own_starts(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("starts")
    %u0 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !u0 loc("u0")
    %u1 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !u1 loc("u1")
    %u2 = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !u2 loc("u2")
    %g = tlx.reuse_group(%u2, %u0, %u1) group_kind = shared : (!u2, !u0, !u1) -> !tlx.reuse_group<shared>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<shared>) -> ()
    %c2 = arith.constant 2 : i32
    %x = ttg.memdesc_index %u1[%i] : !u1 -> !ttg.memdesc<16x128xi8, #shared, #ttg.shared_memory, mutable>
    %y = ttg.memdesc_index %u1[%c2] : !u1 -> !ttg.memdesc<16x128xi8, #shared, #ttg.shared_memory, mutable>
    tt.return
  }
}

// LOWERED-LABEL: tt.func @own_starts
// LOWERED-DAG: %[[C0:.*]] = arith.constant 0 : i32
// LOWERED-DAG: %[[C1:.*]] = arith.constant 1 : i32
// LOWERED-DAG: %[[C2:.*]] = arith.constant 2 : i32
// LOWERED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<112x128xi8
// LOWERED-NOT: ttg.memdesc_reinterpret %[[BACKING]] : {{.*}} -> !ttg.memdesc<4x16x128xi8
// LOWERED: %[[IS0:.*]] = arith.cmpi eq, %arg0, %[[C0]] : i32
// LOWERED-NEXT: %[[U1:.*]] = scf.if %[[IS0]] -> (!ttg.memdesc<1x16x128xi8, #shared1, #smem, mutable>) {
// LOWERED-NEXT: %[[ROWS0:.*]] = ttg.memdesc_subslice %[[BACKING]][0, 0] : !ttg.memdesc<112x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<16x128xi8, #shared, #smem, mutable, 112x128>
// LOWERED-NEXT: %[[VIEW0:.*]] = ttg.memdesc_reinterpret %[[ROWS0]] : {{.*}} -> !ttg.memdesc<1x16x128xi8
// LOWERED-NEXT: scf.yield %[[VIEW0]]
// LOWERED-NEXT: } else {
// LOWERED-NEXT: arith.cmpi eq, %arg0, %[[C1]] : i32
// LOWERED-NEXT: scf.if
// LOWERED-NEXT: ttg.memdesc_subslice %[[BACKING]][64, 0]
// LOWERED: arith.cmpi eq, %arg0, %[[C2]] : i32
// LOWERED-NEXT: scf.if
// LOWERED-NEXT: ttg.memdesc_subslice %[[BACKING]][80, 0]
// LOWERED: } else {
// LOWERED-NEXT: ttg.memdesc_subslice %[[BACKING]][96, 0]
// LOWERED: ttg.memdesc_index %[[U1]][%[[C0]]] : !ttg.memdesc<1x16x128xi8, #shared1, #smem, mutable> -> !ttg.memdesc<16x128xi8
// LOWERED-NEXT: %[[ROWS2:.*]] = ttg.memdesc_subslice %[[BACKING]][80, 0]
// LOWERED-NEXT: %[[VIEW2:.*]] = ttg.memdesc_reinterpret %[[ROWS2]] : {{.*}} -> !ttg.memdesc<1x16x128xi8
// LOWERED-NEXT: ttg.memdesc_index %[[VIEW2]][%[[C0]]]

// PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStarts = [0, 8192, 10240, 12288], groupForm = sliced_rows>}

// PRINT: storage_alias_spec "starts": smem region 14336 bytes, ideal 14336 bytes, padding 0 bytes, each buffer group at its own width, a view per buffer group where no one view fits, views at byte offsets
// PRINT: buffer "u1": offset 0, size 2048, stride 2048 bytes, slot 0 of 1 slots, form selected_rows, groups at 0, 8192, 10240, 12288 bytes, group views sliced_rows

// ROW-LABEL: tt.func @own_starts
// ROW-DAG: %[[C0:.*]] = arith.constant 0 : i32
// ROW-DAG: %[[C1:.*]] = arith.constant 1 : i32
// ROW-DAG: %[[C2:.*]] = arith.constant 2 : i32
// ROW-DAG: %[[R64:.*]] = arith.constant 64 : i32
// ROW-DAG: %[[R80:.*]] = arith.constant 80 : i32
// ROW-DAG: %[[R96:.*]] = arith.constant 96 : i32
// ROW: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<112x128xi8
// ROW-NOT: ttg.memdesc_subslice
// ROW: %[[IS0:.*]] = arith.cmpi eq, %arg0, %[[C0]] : i32
// ROW-NEXT: %[[U1:.*]] = scf.if %[[IS0]] -> (!ttg.memdesc<1x16x128xi8, #shared1, #smem, mutable>) {
// ROW-NEXT: %[[ROW0:.*]] = ttg.memdesc_index %[[BACKING]][%[[C0]]] : !ttg.memdesc<112x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128xi8, #shared, #smem, mutable>
// ROW-NEXT: %[[VIEW0:.*]] = ttg.memdesc_reinterpret %[[ROW0]] : !ttg.memdesc<128xi8, #shared, #smem, mutable> -> !ttg.memdesc<1x16x128xi8
// ROW-NEXT: scf.yield %[[VIEW0]]
// ROW-NEXT: } else {
// ROW-NEXT: arith.cmpi eq, %arg0, %[[C1]] : i32
// ROW-NEXT: scf.if
// ROW-NEXT: ttg.memdesc_index %[[BACKING]][%[[R64]]]
// ROW: arith.cmpi eq, %arg0, %[[C2]] : i32
// ROW-NEXT: scf.if
// ROW-NEXT: ttg.memdesc_index %[[BACKING]][%[[R80]]]
// ROW: } else {
// ROW-NEXT: ttg.memdesc_index %[[BACKING]][%[[R96]]]
// ROW: ttg.memdesc_index %[[U1]][%[[C0]]] : !ttg.memdesc<1x16x128xi8, #shared1, #smem, mutable> -> !ttg.memdesc<16x128xi8
// ROW-NEXT: %[[ROW2:.*]] = ttg.memdesc_index %[[BACKING]][%[[R80]]]
// ROW-NEXT: %[[VIEW2:.*]] = ttg.memdesc_reinterpret %[[ROW2]] : {{.*}} -> !ttg.memdesc<1x16x128xi8
// ROW-NEXT: ttg.memdesc_index %[[VIEW2]][%[[C0]]]
// ROW-NOT: ttg.memdesc_subslice

// ROW-PLACED: {placement = #tlx.placement<slots = 1, period = 1, scale = 0, offset = 0, step = 1, form = selected_rows, groupStarts = [0, 8192, 10240, 12288], groupForm = indexed_row>}

// ROW-PRINT: storage_alias_spec "starts": smem region 14336 bytes, ideal 14336 bytes, padding 0 bytes, each buffer group at its own width, a view per buffer group where no one view fits, views at byte offsets
// ROW-PRINT: buffer "u1": offset 0, size 2048, stride 2048 bytes, slot 0 of 1 slots, form selected_rows, groups at 0, 8192, 10240, 12288 bytes, group views indexed_row

// WHOLE-PRINT: storage_alias_spec "starts": smem region 24576 bytes, ideal 14336 bytes, padding 10240 bytes, every buffer in bytes of its own
// WHOLE-PRINT-NOT: groups at
