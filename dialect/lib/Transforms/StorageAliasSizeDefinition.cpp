//===- StorageAliasSizeDefinition.cpp - Step 1: region sizes -------------===//
//
// Gives every tlx.storage_alias_spec the size of its plan (or validates the
// explicit one) and the recipe of its backing allocation.
//
//===----------------------------------------------------------------------===//

#include "PlanningPass.h"
#include "tlx/Analysis/ModulePlan.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASSIZEDEFINITION
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct StorageAliasSizeDefinitionPass
    : mlir::tlx::impl::TLXStorageAliasSizeDefinitionBase<
          StorageAliasSizeDefinitionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runOnModulePlan(getOperation(), wholeViews, offsetForm,
                               PlanWarnings::Skip, defineStorageAliasSizes,
                               {specsPlanned, bytesShared, paddingBytes})))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::defineStorageAliasSizes(ModulePlan &plan) {
  for (StorageAliasSpecOp spec : plan.unusedSpecs())
    spec.erase();
  for (PlannedSpec &planned : plan.specs()) {
    StorageAliasSpecOp spec = planned.uses.spec;
    int64_t sizeBytes = planned.plan.sizeBytes;
    spec.getResult().setType(StorageAliasSpecType::get(
        spec.getContext(), spec.getStorage(), sizeBytes));
    spec.setBufferSizeBytesAttr(
        Builder(spec.getContext()).getI64IntegerAttr(sizeBytes));
    spec.setBackingAttr(
        backingAttrOf(spec.getContext(), backingOf(planned.plan)));
  }
  return success();
}
