//===- StorageAliasLowering.cpp - The three steps in order ---------------===//
//
// Does what size definition, offset calculation and allocation do in turn,
// without the attributes they pass on to one another: allocation is analyzed
// from the module's plan, and the IR changes only when every spec has been
// planned and analyzed without error. So an error in any step, for any spec,
// leaves the module exactly as it came in, and the diagnostics are those of
// the three steps in order.
//
//===----------------------------------------------------------------------===//

#include "PlanningPass.h"
#include "StorageAliasAllocation.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASLOWERING
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct StorageAliasLoweringPass
    : mlir::tlx::impl::TLXStorageAliasLoweringBase<StorageAliasLoweringPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(runOnModulePlan(getOperation(), wholeViews, offsetForm,
                               PlanWarnings::Report, lowerStorageAliases,
                               {specsPlanned, bytesShared, paddingBytes})))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::lowerStorageAliases(ModulePlan &plan) {
  // Offset calculation erases the trees; allocation need not follow them.
  SmallVector<Operation *> deadGroups = reuseGroupsToErase(plan.reuseGroups());
  llvm::SmallPtrSet<Operation *, 16> erasedUsers;
  for (Operation *group : deadGroups)
    erasedUsers.insert(group);

  bool valid = true;
  AllocationAnalysis analysis(plan.module().getContext(), erasedUsers);
  for (PlannedSpec &spec : plan.specs()) {
    auto userView = [&](size_t index) -> FailureOr<planner::View> {
      return spec.plan.views[index];
    };
    if (failed(analysis.analyzeSpec(spec.uses, backingOf(spec.plan), userView)))
      valid = false;
  }
  if (!valid)
    return failure();

  // What size definition and offset calculation erase.
  SmallVector<Operation *> obsolete(plan.unusedSpecs().begin(),
                                    plan.unusedSpecs().end());
  for (PlannedSpec &spec : plan.specs())
    llvm::append_range(obsolete, spec.uses.overlaps);
  llvm::append_range(obsolete, deadGroups);
  analysis.apply(obsolete);
  return success();
}
