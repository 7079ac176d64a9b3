//===- ModulePlan.h - Every storage alias plan of a module ------*- C++ -*-===//
//
// The module's storage alias ops collected once and every spec planned once
// by the planner, with its failures reported once: what the lowering steps,
// the combined lowering and --test-print-tlx-plan read, as Triton's passes
// read its ModuleAllocation.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_ANALYSIS_MODULEPLAN_H
#define TLX_ANALYSIS_MODULEPLAN_H

#include "tlx/Analysis/PlannerBridge.h"

namespace mlir::tlx {

/// One spec of a module: its ops (held by the ModulePlan) and its plan.
struct PlannedSpec {
  SpecUses &uses;
  planner::Plan plan;
  /// The names diagnostics and the debug trace use.
  std::string name() const;
  std::vector<std::string> userNames() const;
};

class ModulePlan {
public:
  /// What the plans amount to (the passes' statistics, and the debug trace).
  struct Totals {
    int64_t specs = 0;
    /// Bytes the buffers would take beyond their regions' ideal footprint if
    /// none shared (planner::sharedBytes).
    int64_t sharedBytes = 0;
    /// Bytes of the regions beyond their ideal footprint.
    int64_t paddingBytes = 0;
  };

  /// Collects the storage alias ops of `module`, sets aside the specs
  /// without users (with a warning) and plans every other spec. Every error,
  /// of every spec, is reported before it fails; with PlanWarnings::Report
  /// the plans' warnings follow, once every spec is planned. Under
  /// -debug-only=tlx-storage-alias-plan each plan is printed as the
  /// planner's memory map, then the totals. `wholeViews` and
  /// `offsetForm`: the Triton's rules (toPlannerInput). `totals`, when
  /// given, receives the totals.
  static FailureOr<ModulePlan> build(ModuleOp module, bool wholeViews,
                                     planner::ViewForm offsetForm,
                                     PlanWarnings warnings,
                                     Totals *totals = nullptr);

  ModuleOp module() const { return planned; }
  /// The planned specs, in program order.
  MutableArrayRef<PlannedSpec> specs() { return plannedSpecs; }
  ArrayRef<PlannedSpec> specs() const { return plannedSpecs; }
  /// The specs without users: the steps erase them once they succeed.
  ArrayRef<StorageAliasSpecOp> unusedSpecs() const { return unused; }
  /// Every tlx.reuse_group and tlx.reuse_phases of the module, in
  /// pre-order.
  ArrayRef<Operation *> reuseGroups() const { return groups; }

private:
  ModuleOp planned;
  /// Every spec's ops; a std::vector keeps their addresses when the plan
  /// moves.
  std::vector<SpecUses> specUses;
  std::vector<PlannedSpec> plannedSpecs;
  SmallVector<StorageAliasSpecOp> unused;
  SmallVector<Operation *> groups;
};

} // namespace mlir::tlx

#endif // TLX_ANALYSIS_MODULEPLAN_H
