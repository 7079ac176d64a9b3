//===- BufferOffsetCalculation.cpp - Step 2: placements ------------------===//
//
// Records where the plan places each tlx.storage_alias_local_alloc
// (#tlx.placement), then drops the overlap definitions that are now encoded
// in those attributes.
//
//===----------------------------------------------------------------------===//

#include "PlanningPass.h"
#include "tlx/Analysis/ModulePlan.h"
#include "tlx/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXBUFFEROFFSETCALCULATION
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct BufferOffsetCalculationPass
    : mlir::tlx::impl::TLXBufferOffsetCalculationBase<
          BufferOffsetCalculationPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runOnModulePlan(getOperation(), wholeViews, offsetForm,
                               PlanWarnings::Report, calculateBufferOffsets,
                               {specsPlanned, bytesShared, paddingBytes})))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::calculateBufferOffsets(ModulePlan &plan) {
  for (StorageAliasSpecOp spec : plan.unusedSpecs())
    spec.erase();
  SmallVector<Operation *> deadGroups = reuseGroupsToErase(plan.reuseGroups());
  for (PlannedSpec &planned : plan.specs()) {
    for (auto [alloc, view] :
         llvm::zip_equal(planned.uses.allocs, planned.plan.views))
      alloc.setPlacementAttr(placementAttrOf(alloc.getContext(), view));
    for (SetBufferOverlapOp overlap : planned.uses.overlaps)
      overlap.erase();
  }
  for (Operation *group : deadGroups)
    group->erase();
  return success();
}
