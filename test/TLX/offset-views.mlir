// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=false offset-form=sliced_rows" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=SLICED
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=false offset-form=indexed_row" --tlx-rewrite-local-alias | FileCheck %s --check-prefix=INDEXED
// RUN: triton-opt %s --split-input-file --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" | FileCheck %s --check-prefix=PLACED
// RUN: triton-opt %s --split-input-file --test-print-tlx-plan="whole-views=false offset-form=indexed_row" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=true offset-form=sliced_rows" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-lowering="whole-views=true offset-form=sliced_rows" 2>/dev/null | FileCheck %s --check-prefix=WHOLE
// RUN: triton-opt %s --split-input-file --tlx-storage-alias-size-definition="whole-views=false offset-form=sliced_rows" --tlx-buffer-offset-calculation="whole-views=false offset-form=sliced_rows" --tlx-storage-alias-allocation --tlx-rewrite-local-alias | FileCheck %s --check-prefix=SLICED

// Views at byte offsets (docs/planner.md, "Views at a byte offset"): a buffer
// that need not start at a multiple of its size starts at its alignment, in
// the form the Triton writes it (offset-form: sliced_rows on 3.9,
// indexed_row on 3.6 and 3.7), as the Python door emits it; under whole views
// (Triton 3.8's rules) every view is of the whole region, and a remark says
// what views at byte offsets would need.

// 1. An offset buffer: distinct(a: bf16 32x8, b: f16 32x16), 3 buffers each,
// is 3 x 512 + 3 x 1024 bytes with b from byte 1536; whole slots put b at a
// multiple of 1024 (5120 bytes).

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
!a = !ttg.memdesc<3x32x8xbf16, #shared, #ttg.shared_memory, mutable>
!b = !ttg.memdesc<3x32x16xf16, #shared, #ttg.shared_memory, mutable>
module {
  tt.func @offset_buffer(%i: i32) {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("pair")
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !a loc("a")
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !b loc("b")
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!a, !b) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    %x = ttg.memdesc_index %b[%i] : !b -> !ttg.memdesc<32x16xf16, #shared, #ttg.shared_memory, mutable>
    tt.return
  }
}

// SLICED-LABEL: tt.func @offset_buffer
// SLICED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<36x128xi8
// SLICED: ttg.memdesc_reinterpret %[[BACKING]] : !ttg.memdesc<36x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<9x32x8xbf16
// SLICED: %[[ROWS:.*]] = ttg.memdesc_subslice %[[BACKING]][12, 0] : !ttg.memdesc<36x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<24x128xi8, #shared, #smem, mutable, 36x128>
// SLICED: %[[B:.*]] = ttg.memdesc_reinterpret %[[ROWS]] : !ttg.memdesc<24x128xi8, #shared, #smem, mutable, 36x128> -> !ttg.memdesc<3x32x16xf16
// SLICED: ttg.memdesc_index %[[B]][%arg0]

// INDEXED-LABEL: tt.func @offset_buffer
// INDEXED: %[[ROW:.*]] = arith.constant 12 : i32
// INDEXED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<36x128xi8
// INDEXED: %[[BYTES:.*]] = ttg.memdesc_index %[[BACKING]][%[[ROW]]] : !ttg.memdesc<36x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128xi8, #shared, #smem, mutable>
// INDEXED: %[[B:.*]] = ttg.memdesc_reinterpret %[[BYTES]] : !ttg.memdesc<128xi8, #shared, #smem, mutable> -> !ttg.memdesc<3x32x16xf16
// INDEXED: ttg.memdesc_index %[[B]][%arg0]

// PLACED-LABEL: tt.func @offset_buffer
// PLACED: placement = #tlx.placement<slots = 9, period = 1, scale = 1, offset = 0, step = 1>}
// PLACED: placement = #tlx.placement<slots = 3, period = 1, scale = 1, offset = 0, step = 1, base = 1536, form = sliced_rows>}

// PRINT: storage_alias_spec "pair": smem region 4608 bytes, ideal 4608 bytes, padding 0 bytes, child-major, views at byte offsets
// PRINT: buffer "a": offset 0, size 512, stride 512 bytes, slot i of 9 slots, form slots
// PRINT: buffer "b": offset 1536, size 1024, stride 1024 bytes, slot i of 3 slots, form indexed_row from 1536

// REMARK: storage_alias_spec "pair" needs 5120 bytes with views of the whole region (whole-views, Triton 3.8's rules); views at byte offsets (whole-views=false on Triton 3.6, 3.7 and 3.9) would need 4608
// WHOLE-LABEL: tt.func @offset_buffer
// WHOLE: ttg.local_alloc {alignment = 128 : i32} : () -> !ttg.memdesc<40x128xi8
// WHOLE-NOT: memdesc_subslice
// WHOLE: tt.return

// -----

// 2. A moved alignment: a 128-byte tile, then an 8 KiB tile whose 128-byte
// swizzle wants 1024-byte alignment. It starts at byte 1024, a multiple of
// its alignment but not of its size; the backing takes the alignment.

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
!small = !ttg.memdesc<2x1x64xf16, #shared, #ttg.shared_memory, mutable>
!tile = !ttg.memdesc<2x64x64xf16, #nvmma, #ttg.shared_memory, mutable>
module {
  tt.func @moved_alignment() {
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem> loc("moved")
    %a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !small loc("small")
    %b = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem> -> !tile loc("tile")
    %g = tlx.reuse_group(%a, %b) group_kind = distinct : (!small, !tile) -> !tlx.reuse_group<distinct>
    tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>, !tlx.reuse_group<distinct>) -> ()
    tt.return
  }
}

// SLICED-LABEL: tt.func @moved_alignment
// SLICED: %[[BACKING:.*]] = ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<136x128xi8
// SLICED: %[[ROWS:.*]] = ttg.memdesc_subslice %[[BACKING]][8, 0] : !ttg.memdesc<136x128xi8, #shared, #smem, mutable> -> !ttg.memdesc<128x128xi8, #shared, #smem, mutable, 136x128>
// SLICED: ttg.memdesc_reinterpret %[[ROWS]] : {{.*}} -> !ttg.memdesc<2x64x64xf16, #shared2, #smem, mutable>

// INDEXED-LABEL: tt.func @moved_alignment
// INDEXED: ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<136x128xi8

// PLACED-LABEL: tt.func @moved_alignment
// PLACED: placement = #tlx.placement<slots = 2, period = 1, scale = 1, offset = 0, step = 1, base = 1024, form = sliced_rows>}

// PRINT: storage_alias_spec "moved": smem region 17408 bytes, ideal 16640 bytes, padding 768 bytes
// PRINT: buffer "tile": offset 1024, size 8192, stride 8192 bytes, slot i of 2 slots, form indexed_row from 1024

// REMARK: storage_alias_spec "moved" needs 24576 bytes with views of the whole region
// WHOLE-LABEL: tt.func @moved_alignment
// WHOLE: ttg.local_alloc {alignment = 1024 : i32} : () -> !ttg.memdesc<192x128xi8
