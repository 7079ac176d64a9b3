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
  SmallVector<int64_t> backingShape;
};

void applySize(const SpecSize &size) {
  StorageAliasSpecOp spec = size.spec;
  Builder builder(spec.getContext());
  spec.getResult().setType(StorageAliasSpecType::get(
      spec.getContext(), spec.getStorage(), size.sizeBytes));
  spec.setBufferSizeBytesAttr(builder.getI64IntegerAttr(size.sizeBytes));
  spec.setBufferShapeAttr(builder.getDenseI64ArrayAttr(size.backingShape));
}

struct StorageAliasSizeDefinitionPass
    : mlir::tlx::impl::TLXStorageAliasSizeDefinitionBase<
          StorageAliasSizeDefinitionPass> {
  void runOnOperation() override {
    if (failed(defineStorageAliasSizes(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::defineStorageAliasSizes(ModuleOp module) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  SmallVector<SpecSize> sizes;
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(ops->specs);
  bool valid = true;
  for (SpecUses &uses : ops->specs) {
    FailureOr<planner::Plan> plan =
        planStorageAliasSpec(uses, PlanWarnings::Skip);
    if (failed(plan)) {
      valid = false;
      continue;
    }
    sizes.push_back(SpecSize{uses.spec, plan->sizeBytes,
                             llvm::to_vector(plan->backingBlock)});
  }
  if (!valid)
    return failure();
  for (StorageAliasSpecOp spec : unused)
    spec.erase();
  for (const SpecSize &size : sizes)
    applySize(size);
  return success();
}
