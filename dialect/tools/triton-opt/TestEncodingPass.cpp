//===- TestEncodingPass.cpp - Exercises the layout helpers ----------------===//
//
// --test-tlx-encoding="keys=blockM,blockN,order": for every value whose type
// carries a layout (a !ttg.memdesc, or a ranked tensor with an encoding),
// remarks what tlx/Dialect/Encoding.h reads from it; every string in the
// module attribute `test.parse_encoding` goes through parseEncoding and is
// remarked back. The lit test test/TLX/ops-encoding.mlir checks the remarks.
//
//===----------------------------------------------------------------------===//

#include "TestEncodingPass.h"

#include "tlx/Dialect/Encoding.h"
#include "tlx/Dialect/TritonGPU/Dialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// The layout of a value's type, or null.
Attribute layoutOf(Type type) {
  if (auto memdesc = dyn_cast<triton::gpu::MemDescType>(type))
    return memdesc.getEncoding();
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getEncoding();
  return {};
}

struct TestEncodingPass
    : public PassWrapper<TestEncodingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestEncodingPass)

  TestEncodingPass() = default;
  TestEncodingPass(const TestEncodingPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "test-tlx-encoding"; }
  StringRef getDescription() const override {
    return "Remark what the layout helpers of tlx/Dialect/Encoding.h read";
  }

  ListOption<std::string> keys{*this, "keys",
                               llvm::cl::desc("Layout entries to read")};

  void describe(Value value, Location loc) {
    Attribute layout = layoutOf(value.getType());
    if (!layout)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "layout '" << triton::encodingName(layout) << "'";
    for (const std::string &key : keys) {
      os << " " << key << "=";
      if (std::optional<int64_t> integer = triton::encodingInt(layout, key))
        os << *integer;
      else if (std::optional<bool> flag = triton::encodingBool(layout, key))
        os << (*flag ? "true" : "false");
      else if (std::optional<SmallVector<int64_t>> list =
                   triton::encodingIntArray(layout, key)) {
        os << "[";
        llvm::interleaveComma(*list, os);
        os << "]";
      } else if (std::optional<SmallVector<SmallVector<int64_t>>> lists =
                     triton::encodingIntArrays(layout, key)) {
        os << "[";
        llvm::interleaveComma(*lists, os, [&](ArrayRef<int64_t> list) {
          os << "[";
          llvm::interleaveComma(list, os);
          os << "]";
        });
        os << "]";
      } else
        os << "none";
    }
    emitRemark(loc) << text;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            describe(argument, op->getLoc());
      for (Value result : op->getResults())
        describe(result, op->getLoc());
    });
    auto texts = module->getAttrOfType<ArrayAttr>("test.parse_encoding");
    if (!texts)
      return;
    for (auto text : texts.getAsRange<StringAttr>()) {
      Attribute parsed =
          triton::parseEncoding(module.getContext(), text.getValue());
      if (parsed)
        emitRemark(module.getLoc())
            << "parsed '" << triton::encodingName(parsed) << "': " << parsed;
      else
        emitRemark(module.getLoc()) << "does not parse: " << text.getValue();
    }
  }
};

} // namespace

void mlir::tlx::registerTestEncodingPass() {
  PassRegistration<TestEncodingPass>();
}
