//===- TestPrintPlanPass.cpp - Remarks of the module's plan ---------------===//
//
// --test-print-tlx-plan: builds the module's plan (ModulePlan) as the
// lowering does and remarks it without changing the IR: at each spec its
// region, layout and backing; at each tlx.storage_alias_local_alloc its
// buffer's offset, size, stride and index program. Lit tests check the plan
// through these remarks (test/TLX/print-plan.mlir).
//
//===----------------------------------------------------------------------===//

#include "TestPrintPlanPass.h"

#include "tlx/Analysis/ModulePlan.h"
#include "tlx/Transforms/TritonRelease.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tlx;

namespace {

std::string unitName(const planner::Plan &plan) {
  return plan.storage == planner::Storage::Smem ? "bytes" : "columns";
}

std::string strideText(const planner::View &view) {
  planner::Stride stride = planner::bufferStride(view);
  if (stride.even())
    return std::to_string(stride.withinPeriod);
  return std::to_string(stride.withinPeriod) + " within " +
         std::to_string(stride.period) + ", then " +
         std::to_string(stride.afterPeriod);
}

struct TestPrintPlanPass
    : public PassWrapper<TestPrintPlanPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintPlanPass)

  TestPrintPlanPass() = default;
  TestPrintPlanPass(const TestPrintPlanPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "test-print-tlx-plan"; }
  StringRef getDescription() const override {
    return "Remark every storage alias plan of the module";
  }

  Option<bool> wholeViews{
      *this, "whole-views",
      llvm::cl::desc("Plan as --tlx-storage-alias-lowering's whole-views "
                     "(the same default)"),
      llvm::cl::init(defaultWholeViews())};
  Option<::tlx::planner::ViewForm> offsetForm{
      *this, "offset-form",
      llvm::cl::desc("Plan as --tlx-storage-alias-lowering's offset-form "
                     "(the same default)"),
      llvm::cl::init(defaultOffsetForm()),
      llvm::cl::values(
          clEnumValN(::tlx::planner::ViewForm::Slots, "slots", ""),
          clEnumValN(::tlx::planner::ViewForm::SlicedRows, "sliced_rows", ""),
          clEnumValN(::tlx::planner::ViewForm::IndexedRow, "indexed_row", ""))};

  void runOnOperation() override {
    FailureOr<ModulePlan> plan = ModulePlan::build(
        getOperation(), wholeViews, offsetForm, PlanWarnings::Report);
    if (failed(plan))
      return signalPassFailure();
    for (const PlannedSpec &spec : plan->specs())
      remark(spec);
  }

  void remark(const PlannedSpec &spec) {
    const planner::Plan &plan = spec.plan;
    std::string units = unitName(plan);
    StorageAliasSpecOp specOp = spec.uses.spec;
    InFlightDiagnostic remark = specOp.emitRemark();
    remark << "storage_alias_spec \"" << spec.name() << "\": "
           << (plan.storage == planner::Storage::Smem ? "smem" : "tmem")
           << " region " << plan.regionSize << " " << units;
    if (plan.storage == planner::Storage::Tmem)
      remark << " (" << plan.sizeBytes << " bytes)";
    remark << ", ideal " << plan.idealBytes << " bytes, padding "
           << plan.paddingBytes << " bytes, " << plan.layout << ", backing ["
           << llvm::join(
                  llvm::map_range(plan.backingShape,
                                  [](int64_t n) { return llvm::itostr(n); }),
                  ", ")
           << "] x i" << plan.backingElementBits << ", alignment "
           << plan.alignment;
    if (plan.offsetViewsRegion != 0)
      remark << ", " << plan.offsetViewsRegion
             << " bytes with views at byte offsets";
    remark.report();
    std::vector<std::string> names = spec.userNames();
    // Each phase's map: its buffers and, per buffer, those of the phase it
    // shares units with.
    for (auto [phase, members] : llvm::enumerate(plan.phases)) {
      InFlightDiagnostic phaseRemark = specOp.emitRemark();
      phaseRemark << "phase " << phase << ":";
      for (int member : members)
        phaseRemark << " \"" << names[member] << "\"";
    }
    for (auto [user, view, name] :
         llvm::zip_equal(spec.uses.allocs, plan.views, names))
      StorageAliasLocalAllocOp(user).emitRemark()
          << "buffer \"" << name << "\": offset " << view.offset << ", size "
          << view.bufferSize << ", stride " << strideText(view) << " " << units
          << ", slot " << planner::indexFormula(planner::indexProgramOf(view))
          << " of " << view.slots() << " slots, form "
          << ::tlx::planner::viewFormName(view.form)
          << (view.base != 0 ? " from " + std::to_string(view.base) : "")
          << (view.groupStride != 0
                  ? ", groups " + std::to_string(view.groupStride) + " " +
                        units + " apart"
                  : "")
          << (view.groupStarts.empty()
                  ? ""
                  : ", groups at " +
                        llvm::join(llvm::map_range(view.groupStarts,
                                                   [](int64_t start) {
                                                     return llvm::itostr(start);
                                                   }),
                                   ", ") +
                        " " + units)
          << (view.groupForm != ::tlx::planner::ViewForm::Slots
                  ? std::string(", group views ") +
                        ::tlx::planner::viewFormName(view.groupForm)
                  : "");
  }
};

} // namespace

void mlir::tlx::registerTestPrintPlanPass() {
  PassRegistration<TestPrintPlanPass>();
}
