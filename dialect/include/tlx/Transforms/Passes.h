//===- Passes.h - TLX storage alias passes ----------------------*- C++ -*-===//
//
// The storage alias lowering pipeline (see Passes.td for what each pass does
// and which attributes it leaves in the IR): the function of each step and
// of the combined pass. The steps that plan read the module's plan
// (tlx/Analysis/ModulePlan.h).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PASSES_H
#define TLX_TRANSFORMS_PASSES_H

#include "tlx/Analysis/ModulePlan.h"
#include "tlx/Transforms/TritonRelease.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tlx {

/// Step 1: sizes every planned tlx.storage_alias_spec (type,
/// buffer_size_bytes, #tlx.backing) and erases the specs without users.
/// Succeeds: a plan that was made can be recorded.
LogicalResult defineStorageAliasSizes(ModulePlan &plan);

/// Step 2: records #tlx.placement on every tlx.storage_alias_local_alloc,
/// then erases the specs without users, tlx.set_buffer_overlap and the dead
/// tlx.reuse_group ops. Succeeds: a plan that was made can be recorded.
LogicalResult calculateBufferOffsets(ModulePlan &plan);

/// Step 3: one backing allocation per spec, one tlx.local_alias per user,
/// every reachable ttg.memdesc_index rewritten, from the #tlx.backing and
/// #tlx.placement attributes steps 1 and 2 recorded. Leaves the module
/// untouched on failure.
LogicalResult allocateStorageAliases(ModuleOp module);

/// Steps 1 to 3 in one go from `plan`, with the same result and
/// diagnostics: changes the IR only when allocation succeeds for every
/// spec, so that the module is untouched on failure.
LogicalResult lowerStorageAliases(ModulePlan &plan);

#define GEN_PASS_DECL
#include "tlx/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tlx/Transforms/Passes.h.inc"

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_PASSES_H
