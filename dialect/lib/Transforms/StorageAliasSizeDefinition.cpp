//===- StorageAliasSizeDefinition.cpp - Step 1: region sizes -------------===//
//
// Gives every tlx.storage_alias_spec the size the planner computes from its
// users and overlap tree (or validates the explicit one) and the shape of its
// backing allocation.
//
//===----------------------------------------------------------------------===//

#include "PlannerBridge.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASSIZEDEFINITION
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct SpecSize {
  StorageAliasSpecOp spec;
  int64_t sizeBytes;
  BackingRecipe backing;
};

void applySize(const SpecSize &size) {
  StorageAliasSpecOp spec = size.spec;
  Builder builder(spec.getContext());
  spec.getResult().setType(StorageAliasSpecType::get(
      spec.getContext(), spec.getStorage(), size.sizeBytes));
  spec.setBufferSizeBytesAttr(builder.getI64IntegerAttr(size.sizeBytes));
  spec.setBackingAttr(backingAttrOf(spec.getContext(), size.backing));
}

struct StorageAliasSizeDefinitionPass
    : mlir::tlx::impl::TLXStorageAliasSizeDefinitionBase<
          StorageAliasSizeDefinitionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(defineStorageAliasSizes(getOperation(), wholeViews)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::defineStorageAliasSizes(ModuleOp module,
                                                 bool wholeViews) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  SmallVector<SpecSize> sizes;
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(ops->specs);
  bool valid = true;
  for (SpecUses &uses : ops->specs) {
    FailureOr<planner::Plan> plan =
        planStorageAliasSpec(uses, PlanWarnings::Skip, wholeViews);
    if (failed(plan)) {
      valid = false;
      continue;
    }
    sizes.push_back(SpecSize{uses.spec, plan->sizeBytes, backingOf(*plan)});
  }
  if (!valid)
    return failure();
  for (StorageAliasSpecOp spec : unused)
    spec.erase();
  for (const SpecSize &size : sizes)
    applySize(size);
  return success();
}
