//===- Passes.td - TLX storage alias passes ----------------*- tablegen -*-===//
//
// The storage alias lowering (docs/mlir.md): three steps that
// each run alone and keep their state in the IR, the pass that runs them in
// order, and the rewrite of tlx.local_alias into stock Triton IR. Every size,
// offset and slot comes from the planner (tlx/Planner/Planner.h); the passes
// translate IR to planner structs and back.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PASSES
#define TLX_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

// The option of every pass that plans. Its default follows the Triton of the
// environment (tlx/Transforms/TritonRelease.h), so that a TLX_DUMP_ALIAS_IR
// module plans as the kernel did.
def WholeViewsOption
    : Option<"wholeViews", "whole-views", "bool",
             /*default=*/"::mlir::tlx::defaultWholeViews()",
             "Round every region so that each view covers it in whole "
             "slots, as Triton 3.8's memdesc_reinterpret needs (false: "
             "Triton 3.6, 3.7 and 3.9 accept a view smaller than its "
             "source). Default: what the Triton of the environment needs "
             "(TLX_TRITON_VERSION, else the Triton of TLX_PYTHON, of the "
             "python3 beside triton-opt or of the first python3 on PATH); "
             "true where no Triton is found, as whole views are valid on "
             "every release. The first lines of triton-opt --help say which "
             "applies">;

// How a view at a byte offset is written, where whole-views is false (under
// whole views, Triton 3.8's rules, every view is of the whole region).
def OffsetFormOption
    : Option<"offsetForm", "offset-form", "::tlx::planner::ViewForm",
             /*default=*/"::mlir::tlx::defaultOffsetForm()",
             "How a view that starts at a byte offset is written "
             "(docs/planner.md, \"Views at a byte offset\"): sliced_rows "
             "(Triton 3.9), indexed_row (Triton 3.6, 3.7) or slots (none: "
             "every buffer at a multiple of its size). With sliced_rows or "
             "indexed_row a user's buffer groups may also be any multiple "
             "of its alignment apart, a view per group: selected_rows or "
             "runtime_row (planner::groupStrideFormOf). Ignored under "
             "whole-views. Default: what the Triton of the environment "
             "writes, found as for whole-views; slots where none is found",
             [{::llvm::cl::values(
                 clEnumValN(::tlx::planner::ViewForm::Slots, "slots",
                            "no view at a byte offset"),
                 clEnumValN(::tlx::planner::ViewForm::SlicedRows,
                            "sliced_rows",
                            "memdesc_subslice of the backing's rows"),
                 clEnumValN(::tlx::planner::ViewForm::IndexedRow,
                            "indexed_row",
                            "memdesc_index of the backing's row"))}]>;

def TLXStorageAliasSizeDefinition
    : Pass<"tlx-storage-alias-size-definition", "mlir::ModuleOp"> {
  let summary = "Compute or validate the size of every tlx.storage_alias_spec";
  let description = [{
    Plans every spec from its tlx.storage_alias_local_alloc users and, when
    present, the tree given to tlx.set_buffer_overlap. An unsized spec gets
    the planned size (its type becomes `!tlx.storage_alias_spec<smem, N>` and
    `buffer_size_bytes = N`); an explicit size is validated (too small is an
    error that states the bytes needed; larger is kept). Every spec gets
    `backing`, the recipe of its backing allocation (#tlx.backing: shape,
    what one CTA holds of it, element bits, alignment, region size). A spec
    without users gets a warning and is erased. The planner's placement
    warnings (a user left out of the tree, counts that look like forgotten
    sub-tiles) are reported by --tlx-buffer-offset-calculation only, so that
    the pipeline reports them once.
  }];
  let statistics = [
    Statistic<"specsPlanned", "specs-planned", "Storage alias specs planned">,
    Statistic<"bytesShared", "bytes-shared",
              "Bytes the planned buffers would add if none shared">,
    Statistic<"paddingBytes", "padding-bytes",
              "Bytes of the planned regions beyond their ideal footprint">
  ];
  let options = [WholeViewsOption, OffsetFormOption];
}

def TLXBufferOffsetCalculation
    : Pass<"tlx-buffer-offset-calculation", "mlir::ModuleOp"> {
  let summary = "Place every storage alias user inside its spec's region";
  let description = [{
    Plans every spec and records on each tlx.storage_alias_local_alloc its
    `placement` (#tlx.placement): its view has `slots` buffers of its own
    type from the region's start, and its coefficients give buffer i's slot
    (docs/planner.md, "The slot of a buffer"). Then erases
    tlx.set_buffer_overlap and the tlx.reuse_group ops left without uses.
    Without tlx.set_buffer_overlap every user sits at offset 0, its buffers
    one after the other.
  }];
  let statistics = [
    Statistic<"specsPlanned", "specs-planned", "Storage alias specs planned">,
    Statistic<"bytesShared", "bytes-shared",
              "Bytes the planned buffers would add if none shared">,
    Statistic<"paddingBytes", "padding-bytes",
              "Bytes of the planned regions beyond their ideal footprint">
  ];
  let options = [WholeViewsOption, OffsetFormOption];
}

def TLXStorageAliasAllocation
    : Pass<"tlx-storage-alias-allocation", "mlir::ModuleOp"> {
  let summary = "Materialize one backing allocation per storage_alias_spec";
  let description = [{
    Needs each spec's `backing` (--tlx-storage-alias-size-definition) and
    each user's `placement` with no tlx.set_buffer_overlap left
    (--tlx-buffer-offset-calculation), and emits them: each spec becomes one
    ttg.local_alloc of `[N / 128, 128] x i8` with `alignment` (SMEM) or one
    ttng.tmem_alloc of `[rows, columns] x i32` (TMEM), and each user a
    tlx.local_alias of the backing with `slots` buffers of its type. Every
    ttg.memdesc_index reached from a user (also through
    ttg.memdesc_reinterpret, tlx.local_alias and ttg.warp_specialize
    captures) is rewritten to the slot of the placement: a constant folds, a
    runtime index gets the planner's index program; the types
    of reinterpreted views and partition arguments follow. A user written as
    one TMEM [M, N] tile becomes its slot of the view and keeps its type. Any
    other use of a user's buffers, a view that changes their memory space,
    or one that changes their buffer size while they are not contiguous from
    the region's start, is an error. Every problem is reported before the IR
    changes. A user with a view per buffer group becomes the backing, and
    each index takes its group's view: at the group's row computed from the
    index (runtime_row), or chosen by scf.if on the group among the groups'
    views (selected_rows).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
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
  let statistics = [
    Statistic<"specsPlanned", "specs-planned", "Storage alias specs planned">,
    Statistic<"bytesShared", "bytes-shared",
              "Bytes the planned buffers would add if none shared">,
    Statistic<"paddingBytes", "padding-bytes",
              "Bytes of the planned regions beyond their ideal footprint">
  ];
  let options = [WholeViewsOption, OffsetFormOption];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect"];
}

def TLXRewriteLocalAlias : Pass<"tlx-rewrite-local-alias", "mlir::ModuleOp"> {
  let summary = "Rewrite tlx.local_alias into ttg.memdesc_reinterpret";
  let description = [{
    Turns every tlx.local_alias into the stock Triton op with the same source
    and result type, so that the output parses with stock Triton.
  }];
}

#endif // TLX_TRANSFORMS_PASSES
