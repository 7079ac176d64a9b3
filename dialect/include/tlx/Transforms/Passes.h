//===- Passes.h - TLX storage alias passes ----------------------*- C++ -*-===//
//
// The storage alias lowering pipeline (see Passes.td for what each pass does
// and which attributes it leaves in the IR): the function of each step and
// of the combined pass.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PASSES_H
#define TLX_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tlx {

/// Step 1: sizes every tlx.storage_alias_spec (type, buffer_size_bytes,
/// #tlx.backing) and erases specs without users. Emits diagnostics and
/// leaves the module untouched on failure. `wholeViews`: see the passes'
/// `whole-views` option.
LogicalResult defineStorageAliasSizes(ModuleOp module, bool wholeViews);

/// Step 2: records #tlx.placement on every tlx.storage_alias_local_alloc,
/// then erases tlx.set_buffer_overlap and dead tlx.reuse_group ops. Leaves
/// the module untouched on failure.
LogicalResult calculateBufferOffsets(ModuleOp module, bool wholeViews);

/// Step 3: one backing allocation per spec, one tlx.local_alias per user,
/// every reachable ttg.memdesc_index rewritten. Leaves the module untouched
/// on failure.
LogicalResult allocateStorageAliases(ModuleOp module);

/// Steps 1 to 3 in one go, with the same result and diagnostics: plans every
/// spec once and changes the IR only when every step succeeds for every
/// spec, so that the module is untouched on failure.
LogicalResult lowerStorageAliases(ModuleOp module, bool wholeViews);

#define GEN_PASS_DECL
#include "tlx/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tlx/Transforms/Passes.h.inc"

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_PASSES_H
