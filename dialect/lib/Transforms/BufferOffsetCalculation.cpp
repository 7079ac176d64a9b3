//===- BufferOffsetCalculation.cpp - Step 2: placements ------------------===//
//
// Records where the planner places each tlx.storage_alias_local_alloc
// (#tlx.placement), then drops the overlap definitions that are now encoded
// in those attributes.
//
//===----------------------------------------------------------------------===//

#include "PlannerBridge.h"
#include "tlx/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXBUFFEROFFSETCALCULATION
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct SpecPlacement {
  SpecUses *uses;
  std::vector<planner::View> views;
};

struct BufferOffsetCalculationPass
    : mlir::tlx::impl::TLXBufferOffsetCalculationBase<
          BufferOffsetCalculationPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(calculateBufferOffsets(getOperation(), wholeViews)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::calculateBufferOffsets(ModuleOp module,
                                                bool wholeViews) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  SmallVector<SpecPlacement> placements;
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(ops->specs);
  bool valid = true;
  for (SpecUses &uses : ops->specs) {
    FailureOr<planner::Plan> plan =
        planStorageAliasSpec(uses, PlanWarnings::Report, wholeViews);
    if (failed(plan)) {
      valid = false;
      continue;
    }
    placements.push_back(SpecPlacement{&uses, std::move(plan->views)});
  }
  if (!valid)
    return failure();
  for (StorageAliasSpecOp spec : unused)
    spec.erase();
  SmallVector<ReuseGroupOp> deadGroups = reuseGroupsToErase(ops->reuseGroups);
  for (const SpecPlacement &placement : placements) {
    for (auto [alloc, view] :
         llvm::zip_equal(placement.uses->allocs, placement.views))
      alloc.setPlacementAttr(placementAttrOf(alloc.getContext(), view));
    for (SetBufferOverlapOp overlap : placement.uses->overlaps)
      overlap.erase();
  }
  for (ReuseGroupOp group : deadGroups)
    group.erase();
  return success();
}
