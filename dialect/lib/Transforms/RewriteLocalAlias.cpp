//===- RewriteLocalAlias.cpp - tlx.local_alias -> stock Triton -----------===//

#include "tlx/Dialect/TLX/Dialect.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tlx;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXREWRITELOCALALIAS
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

struct RewriteLocalAliasPass
    : mlir::tlx::impl::TLXRewriteLocalAliasBase<RewriteLocalAliasPass> {
  void runOnOperation() override {
    SmallVector<LocalAliasOp> aliases;
    getOperation().walk([&](LocalAliasOp alias) { aliases.push_back(alias); });
    for (LocalAliasOp alias : aliases) {
      OpBuilder builder(alias);
      auto reinterpret = triton::gpu::MemDescReinterpretOp::create(
          builder, alias.getLoc(), alias.getResult().getType(), alias.getSrc());
      alias.getResult().replaceAllUsesWith(reinterpret.getResult());
      alias.erase();
    }
  }
};

} // namespace
