//===- TestPrintPlanPass.h - Remarks of the module's plan -------*- C++ -*-===//

#ifndef TLX_TOOLS_TRITON_OPT_TEST_PRINT_PLAN_PASS_H
#define TLX_TOOLS_TRITON_OPT_TEST_PRINT_PLAN_PASS_H

namespace mlir::tlx {

/// Registers --test-print-tlx-plan (the module's plan, tlx/Analysis/
/// ModulePlan.h, as remarks).
void registerTestPrintPlanPass();

} // namespace mlir::tlx

#endif // TLX_TOOLS_TRITON_OPT_TEST_PRINT_PLAN_PASS_H
