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
                                        planner::ViewForm offsetForm,
                                        PlanWarnings warnings, Totals *totals) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  ModulePlan result;
  result.planned = module;
  result.unused = takeSpecsWithoutUsers(ops->specs);
  result.groups = std::move(ops->reuseGroups);
  result.specUses = std::move(ops->specs);
  result.plannedSpecs.reserve(result.specUses.size());
  // The totals need each spec's buffers, which are dropped once it is planned
  // (keeping every spec's input alive cost the lowering cache misses).
  bool count = totals != nullptr;
  LLVM_DEBUG(count = true);
  Totals counted;
  bool valid = true;
  for (SpecUses &uses : result.specUses) {
    FailureOr<PlannerInput> input =
        toPlannerInput(uses, wholeViews, offsetForm);
    if (failed(input)) {
      valid = false;
      continue;
    }
    planner::Plan plan = planInput(*input);
    if (failed(reportPlannerDiagnostics(uses, plan.diagnostics,
                                        PlanWarnings::Skip)))
      valid = false;
    else if (!plan.phases.empty() &&
             failed(checkPhaseLifetimes(uses, plan, input->buffers)))
      valid = false;
    if (count) {
      ++counted.specs;
      counted.sharedBytes += planner::sharedBytes(plan, input->buffers);
      counted.paddingBytes += plan.paddingBytes;
    }
    result.plannedSpecs.push_back(PlannedSpec{uses, std::move(plan)});
    LLVM_DEBUG({
      const PlannedSpec &planned = result.plannedSpecs.back();
      for (auto [buffer, name] :
           llvm::zip_equal(input->buffers, planned.userNames()))
        buffer.name = name;
      llvm::dbgs() << "[" DEBUG_TYPE "] storage_alias_spec \"" << planned.name()
                   << "\":\n"
                   << planner::describe(planned.plan, input->buffers,
                                        planned.name());
    });
  }
  if (!valid)
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << counted.specs
                          << " specs planned, " << counted.sharedBytes
                          << " bytes shared, " << counted.paddingBytes
                          << " padding bytes\n");
  if (totals)
    *totals = counted;
  if (warnings == PlanWarnings::Report)
    for (PlannedSpec &spec : result.plannedSpecs) {
      (void)reportPlannerDiagnostics(spec.uses, spec.plan.diagnostics,
                                     PlanWarnings::Report);
      // Triton 3.8's rules: say which trees another release packs tighter.
      if (spec.plan.offsetViewsRegion != 0)
        spec.uses.spec.emitRemark()
            << "storage_alias_spec \"" << spec.name() << "\" needs "
            << spec.plan.regionSize
            << " bytes with views of the whole region (whole-views, Triton "
               "3.8's rules); views at byte offsets (whole-views=false on "
               "Triton 3.6, 3.7 and 3.9) would need "
            << spec.plan.offsetViewsRegion;
    }
  return result;
}
