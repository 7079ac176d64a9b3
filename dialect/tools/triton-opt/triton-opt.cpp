//===- triton-opt.cpp - The TLX optimizer driver --------------------------===//
//
// mlir-opt with the `tlx` dialect, the Triton memory subset (`tt`, `ttg`,
// `ttng`; unknown ops of those dialects pass through in generic form), the
// upstream dialects Triton prints, MLIR's core passes and, when built, the
// TLX storage alias passes, and --test-tlx-encoding (a test of the layout
// helpers).
//
//===----------------------------------------------------------------------===//

#include "TestEncodingPass.h"
#include "tlx/Dialect/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#ifdef TLX_HAVE_TRANSFORMS
#include "tlx/Transforms/Passes.h"
#endif

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::tlx::registerTestEncodingPass();
#ifdef TLX_HAVE_TRANSFORMS
  mlir::tlx::registerTLXPasses();
#endif
  mlir::DialectRegistry registry;
  mlir::tlx::registerDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "TLX storage aliasing optimizer driver\n", registry));
}
