//===- StorageAliasLowering.cpp - The three steps in order ---------------===//
//
// Does what size definition, offset calculation and allocation do in turn,
// without the attributes they pass on to one another: every spec is planned
// once, allocation is analyzed from the plans, and the IR changes only when
// every spec of the module has been planned and analyzed without error. So
// an error in any step, for any spec, leaves the module exactly as it came
// in, and the diagnostics are those of the three steps in order.
//
//===----------------------------------------------------------------------===//

#include "StorageAliasAllocation.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASLOWERING
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

/// One spec with its plan.
struct PlannedSpec {
  SpecUses *uses;
  planner::Plan plan;
};

struct StorageAliasLoweringPass
    : mlir::tlx::impl::TLXStorageAliasLoweringBase<StorageAliasLoweringPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowerStorageAliases(getOperation(), wholeViews)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::lowerStorageAliases(ModuleOp module, bool wholeViews) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(ops->specs);

  // Size definition: its errors, for every spec.
  SmallVector<PlannedSpec> planned;
  planned.reserve(ops->specs.size());
  bool valid = true;
  for (SpecUses &uses : ops->specs) {
    FailureOr<PlannerInput> input = toPlannerInput(uses, wholeViews);
    if (failed(input)) {
      valid = false;
      continue;
    }
    planner::Plan plan =
        planner::plan(input->spec, input->buffers, input->tree);
    if (failed(reportPlannerDiagnostics(uses, plan.diagnostics,
                                        PlanWarnings::Skip)))
      valid = false;
    planned.push_back(PlannedSpec{&uses, std::move(plan)});
  }
  if (!valid)
    return failure();

  // Offset calculation: the placement warnings (a plan with errors stopped
  // size definition already).
  for (PlannedSpec &spec : planned)
    (void)reportPlannerDiagnostics(*spec.uses, spec.plan.diagnostics,
                                   PlanWarnings::Report);
  // Offset calculation erases the trees; allocation need not follow them.
  SmallVector<ReuseGroupOp> deadGroups = reuseGroupsToErase(ops->reuseGroups);
  llvm::SmallPtrSet<Operation *, 16> erasedUsers;
  for (ReuseGroupOp group : deadGroups)
    erasedUsers.insert(group);

  // Allocation, from the plans.
  AllocationAnalysis analysis(module.getContext(), erasedUsers);
  for (PlannedSpec &spec : planned) {
    auto userView = [&](size_t index) -> FailureOr<planner::View> {
      return spec.plan.views[index];
    };
    if (failed(
            analysis.analyzeSpec(*spec.uses, backingOf(spec.plan), userView)))
      valid = false;
  }
  if (!valid)
    return failure();

  // What size definition and offset calculation erase.
  SmallVector<Operation *> obsolete(unused.begin(), unused.end());
  for (PlannedSpec &spec : planned)
    llvm::append_range(obsolete, spec.uses->overlaps);
  llvm::append_range(obsolete, deadGroups);
  analysis.apply(obsolete);
  return success();
}
