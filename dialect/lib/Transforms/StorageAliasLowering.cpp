//===- StorageAliasLowering.cpp - The three steps in order ---------------===//
//
// Runs size definition, offset calculation and allocation on a copy of the
// module and takes the result only when all three succeed: an error in any
// step, for any spec, leaves the module exactly as it came in.
//
//===----------------------------------------------------------------------===//

#include "tlx/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/OwningOpRef.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASLOWERING
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct StorageAliasLoweringPass
    : mlir::tlx::impl::TLXStorageAliasLoweringBase<StorageAliasLoweringPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OwningOpRef<ModuleOp> lowered = module.clone();
    if (failed(defineStorageAliasSizes(*lowered)) ||
        failed(calculateBufferOffsets(*lowered)) ||
        failed(allocateStorageAliases(*lowered)))
      return signalPassFailure();
    module.getBodyRegion().takeBody(lowered->getBodyRegion());
  }
};

} // namespace
