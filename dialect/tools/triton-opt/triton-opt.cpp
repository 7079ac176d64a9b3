//===- triton-opt.cpp - The TLX optimizer driver --------------------------===//
//
// mlir-opt with the `tlx` dialect, the Triton memory subset (`tt`, `ttg`,
// `ttng`; unknown ops of those dialects pass through in generic form), the
// upstream dialects Triton prints, MLIR's core passes, the TLX storage alias
// passes, and the test passes (--test-tlx-encoding, --test-print-tlx-plan).
//
//===----------------------------------------------------------------------===//

#include "DebugOnlyOption.h"
#include "TestEncodingPass.h"
#include "TestPrintPlanPass.h"
#include "tlx/Dialect/Registration.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::tlx::registerDebugOnlyOption();
  mlir::registerTransformsPasses();
  mlir::tlx::registerTestEncodingPass();
  mlir::tlx::registerTestPrintPlanPass();
  mlir::tlx::registerTLXPasses();
  mlir::DialectRegistry registry;
  mlir::tlx::registerDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "TLX storage aliasing optimizer driver\n", registry));
}
