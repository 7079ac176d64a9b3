//===- PlanningPass.h - What every pass that plans does ---------*- C++ -*-===//
//
// Size definition, offset calculation and the combined lowering each build
// the module's plan, apply it, and count it in the statistics Passes.td
// declares for them (specs-planned, bytes-shared, padding-bytes).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PLANNINGPASS_H
#define TLX_TRANSFORMS_PLANNINGPASS_H

#include "tlx/Analysis/ModulePlan.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/Statistic.h"

namespace mlir::tlx {

/// The statistics of a pass that plans.
struct PlanStatistics {
  Pass::Statistic &specsPlanned;
  Pass::Statistic &bytesShared;
  Pass::Statistic &paddingBytes;
};

/// Builds the plan of `module` (ModulePlan::build), runs `step` on it and
/// counts it. An LLVM built without statistics (Debian's) counts nothing,
/// and the totals are then not computed; -debug-only=tlx-storage-alias-plan
/// prints them in any build.
inline LogicalResult
runOnModulePlan(ModuleOp module, bool wholeViews, planner::ViewForm offsetForm,
                PlanWarnings warnings,
                function_ref<LogicalResult(ModulePlan &)> step,
                PlanStatistics statistics) {
#if LLVM_ENABLE_STATS
  ModulePlan::Totals totals;
  ModulePlan::Totals *counted = &totals;
#else
  ModulePlan::Totals *counted = nullptr;
#endif
  FailureOr<ModulePlan> plan =
      ModulePlan::build(module, wholeViews, offsetForm, warnings, counted);
  if (failed(plan) || failed(step(*plan)))
    return failure();
#if LLVM_ENABLE_STATS
  statistics.specsPlanned += totals.specs;
  statistics.bytesShared += totals.sharedBytes;
  statistics.paddingBytes += totals.paddingBytes;
#else
  (void)statistics;
#endif
  return success();
}

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_PLANNINGPASS_H
