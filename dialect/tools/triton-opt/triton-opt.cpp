//===- triton-opt.cpp - The TLX optimizer driver --------------------------===//
//
// mlir-opt with the `tlx` dialect, the Triton memory subset (`tt`, `ttg`,
// `ttng`; unknown ops of those dialects pass through in generic form), the
// upstream dialects Triton prints, MLIR's core passes, the TLX storage alias
// passes, and the test passes (--test-tlx-encoding, --test-print-tlx-plan).
// The passes' whole-views default follows the Triton of the environment
// triton-opt is started from; --help says which it is.
//
//===----------------------------------------------------------------------===//

#include "DebugOnlyOption.h"
#include "TestEncodingPass.h"
#include "TestPrintPlanPass.h"
#include "tlx/Dialect/Registration.h"
#include "tlx/Transforms/Passes.h"
#include "tlx/Transforms/TritonRelease.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace {

/// The directory triton-opt was started from, as invoked (a venv's
/// bin/triton-opt may be a link to the build's): the passes look for the
/// environment's python3 there first (tlx/Transforms/TritonRelease.h).
std::string invokedDirectory(llvm::StringRef argv0) {
  if (argv0.contains('/'))
    return llvm::sys::path::parent_path(argv0).str();
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(argv0))
    return llvm::sys::path::parent_path(*found).str();
  return "";
}

/// The header of --help: with the whole-views default and why, looked up
/// only when help is asked for (it runs a Python).
std::string helpHeader(int argc, char **argv) {
  std::string header = "TLX storage aliasing optimizer driver\n";
  for (llvm::StringRef argument : llvm::ArrayRef(argv + 1, argc - 1))
    if (argument.starts_with("--help") || argument.starts_with("-help"))
      return header + mlir::tlx::describeWholeViewsDefault() + "\n";
  return header;
}

} // namespace

int main(int argc, char **argv) {
  mlir::tlx::setToolDirectory(invokedDirectory(argv[0]));
  mlir::tlx::registerDebugOnlyOption();
  mlir::registerTransformsPasses();
  mlir::tlx::registerTestEncodingPass();
  mlir::tlx::registerTestPrintPlanPass();
  mlir::tlx::registerTLXPasses();
  mlir::DialectRegistry registry;
  mlir::tlx::registerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, helpHeader(argc, argv), registry));
}
