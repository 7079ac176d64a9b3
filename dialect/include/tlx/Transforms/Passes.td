//===- Passes.td - TLX storage alias passes ----------------*- tablegen -*-===//
//
// The storage alias lowering (DESIGN.md section 2, "Passes"): three steps that
// each run alone and keep their state in the IR, the pass that runs them in
// order, and the rewrite of tlx.local_alias into stock Triton IR. Every size,
// offset and slot comes from the planner (tlx/Planner/Planner.h); the passes
// translate IR to planner structs and back.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PASSES
#define TLX_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TLXStorageAliasSizeDefinition
    : Pass<"tlx-storage-alias-size-definition", "mlir::ModuleOp"> {
  let summary = "Compute or validate the size of every tlx.storage_alias_spec";
  let description = [{
    Plans every spec from its tlx.storage_alias_local_alloc users and, when
    present, the tree given to tlx.set_buffer_overlap. An unsized spec gets
    the planned size (its type becomes `!tlx.storage_alias_spec<smem, N>` and
    `buffer_size_bytes = N`); an explicit size is validated (too small is an
    error that states the bytes needed; larger is kept). Every spec gets
    `buffer_shape`, the shape of the backing allocation one CTA holds:
    `[N / 128, 128]` bytes for SMEM, `[rows, columns]` of 32-bit words for
    TMEM (a TMEM backing split over CTAs spans the users' split). A spec without
    users gets a warning and is erased. The planner's placement warnings (a
    user left out of the tree) are reported by --tlx-buffer-offset-calculation
    only, so that the pipeline reports them once.
  }];
}

def TLXBufferOffsetCalculation
    : Pass<"tlx-buffer-offset-calculation", "mlir::ModuleOp"> {
  let summary = "Place every storage alias user inside its spec's region";
  let description = [{
    Plans every spec and records the placement of each
    tlx.storage_alias_local_alloc as integer attributes, in the storage's
    unit (bytes for SMEM, 32-bit columns for TMEM):
      `buffer_offset`        start of buffer 0 in the region,
      `buffer_group_stride`  distance between consecutive buffer groups,
      `group_size`           K consecutive buffers that form one group,
    so that buffer i sits at (i / K) * buffer_group_stride + buffer_offset +
    (i % K) * buffer size. Then erases tlx.set_buffer_overlap and the
    tlx.reuse_group ops left without uses. Without tlx.set_buffer_overlap every
    user sits at offset 0 with its own buffer size as stride.
  }];
}

def TLXStorageAliasAllocation
    : Pass<"tlx-storage-alias-allocation", "mlir::ModuleOp"> {
  let summary = "Materialize one backing allocation per storage_alias_spec";
  let description = [{
    Needs the spec sizes (--tlx-storage-alias-size-definition) and no
    tlx.set_buffer_overlap left (--tlx-buffer-offset-calculation). Replaces
    each spec by one ttg.local_alloc of `[N / 128, 128] x i8` with
    `alignment` (SMEM) or one ttng.tmem_alloc of `[rows, columns] x i32`
    (TMEM), and each user by a tlx.local_alias of the backing whose leading
    dimension covers the whole region. Every ttg.memdesc_index reached from a
    user (also through ttg.memdesc_reinterpret, tlx.local_alias and
    ttg.warp_specialize captures) is rewritten to the slot the planner gives:
    slot(i) = scale * (i / K) + offset + (i % K); the types of reinterpreted
    views and partition arguments follow. Any other use of a user's buffers,
    a view that changes their memory space, or one that changes their buffer
    size while they do not start at offset 0 with their own stride, is an
    error. Every problem is reported before the IR changes.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TLXStorageAliasLowering
    : Pass<"tlx-storage-alias-lowering", "mlir::ModuleOp"> {
  let summary = "Size definition, offset calculation and allocation, in order";
  let description = [{
    Does what the three storage alias steps do in order, with the same
    result and diagnostics, planning every spec once: every spec is planned
    and its allocation checked before the IR changes, so that when any step
    fails, for any spec, the pass fails and the module is left exactly as it
    came in.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TLXRewriteLocalAlias : Pass<"tlx-rewrite-local-alias", "mlir::ModuleOp"> {
  let summary = "Rewrite tlx.local_alias into ttg.memdesc_reinterpret";
  let description = [{
    Turns every tlx.local_alias into the stock Triton op with the same source
    and result type, so that the output parses with stock Triton.
  }];
}

#endif // TLX_TRANSFORMS_PASSES
