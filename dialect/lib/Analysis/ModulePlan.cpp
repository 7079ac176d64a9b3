//===- ModulePlan.cpp - Every storage alias plan of a module --------------===//

#include "tlx/Analysis/ModulePlan.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tlx-storage-alias-plan"

using namespace mlir;
using namespace mlir::tlx;

std::string PlannedSpec::name() const {
  return nameForDiagnostics(uses.spec, "storage_alias_spec");
}

std::vector<std::string> PlannedSpec::userNames() const {
  std::vector<std::string> names;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs))
    names.push_back(userName(alloc, index));
  return names;
}

FailureOr<ModulePlan> ModulePlan::build(ModuleOp module, bool wholeViews,
                                        PlanWarnings warnings) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  ModulePlan result;
  result.planned = module;
  result.unused = takeSpecsWithoutUsers(ops->specs);
  result.groups = std::move(ops->reuseGroups);
  result.plannedSpecs.reserve(ops->specs.size());
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
    result.plannedSpecs.push_back(
        PlannedSpec{std::move(uses), std::move(*input), std::move(plan)});
    LLVM_DEBUG({
      const PlannedSpec &planned = result.plannedSpecs.back();
      std::vector<planner::Buffer> named = planned.input.buffers;
      for (auto [buffer, name] : llvm::zip_equal(named, planned.userNames()))
        buffer.name = name;
      llvm::dbgs() << "[" DEBUG_TYPE "] storage_alias_spec \"" << planned.name()
                   << "\":\n"
                   << planner::describe(planned.plan, named, planned.name());
    });
  }
  if (!valid)
    return failure();
  LLVM_DEBUG({
    Totals totals = result.totals();
    llvm::dbgs() << "[" DEBUG_TYPE "] " << totals.specs << " specs planned, "
                 << totals.sharedBytes << " bytes shared, "
                 << totals.paddingBytes << " padding bytes\n";
  });
  if (warnings == PlanWarnings::Report)
    for (PlannedSpec &spec : result.plannedSpecs)
      (void)reportPlannerDiagnostics(spec.uses, spec.plan.diagnostics,
                                     PlanWarnings::Report);
  return result;
}

ModulePlan::Totals ModulePlan::totals() const {
  Totals totals;
  for (const PlannedSpec &spec : plannedSpecs) {
    ++totals.specs;
    totals.sharedBytes += planner::sharedBytes(spec.plan, spec.input.buffers);
    totals.paddingBytes += spec.plan.paddingBytes;
  }
  return totals;
}
