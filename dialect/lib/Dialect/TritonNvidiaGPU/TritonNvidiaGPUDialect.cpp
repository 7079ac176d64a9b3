//===- TritonNvidiaGPUDialect.cpp - The `ttng` tensor memory subset -------===//

#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"
#include "tlx/Dialect/TypeSpellingCache.h"
#include "tlx/Dialect/Verbatim.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::triton::nvidia_gpu;

static ParseResult
parseBufferAndToken(OpAsmParser &parser, OpAsmParser::UnresolvedOperand &buffer,
                    std::optional<OpAsmParser::UnresolvedOperand> &dependency,
                    Type &dependencyType, Type &tokenType);
static void printBufferAndToken(OpAsmPrinter &printer, Operation *op,
                                Value buffer, Value dependency,
                                Type dependencyType, Type tokenType);

#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUAttrDefs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUTypeDefs.cpp.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUOps.cpp.inc"

namespace {

/// The alias Triton prints for a TMEM layout: `#tmem`, `#tmem_scales`.
StringRef tensorMemoryAlias(Attribute attr) {
  auto verbatim = dyn_cast<VerbatimAttr>(attr);
  if (!verbatim)
    return {};
  return llvm::StringSwitch<StringRef>(verbatim.getSymbol())
      .Case("tensor_memory_encoding", "tmem")
      .Case("tensor_memory_scales_encoding", "tmem_scales")
      .Default({});
}

} // namespace

void TritonNvidiaGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUAttrDefs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUTypeDefs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUOps.cpp.inc"
      >();
  addInterfaces<tlx::verbatim::AliasInterface<tensorMemoryAlias>>();
  allowUnknownOperations();
}

Attribute TritonNvidiaGPUDialect::parseAttribute(DialectAsmParser &parser,
                                                 Type type) const {
  return tlx::verbatim::parseAttribute<VerbatimAttr>(parser, type,
                                                     generatedAttributeParser);
}

void TritonNvidiaGPUDialect::printAttribute(Attribute attr,
                                            DialectAsmPrinter &printer) const {
  tlx::verbatim::printAttribute<VerbatimAttr>(attr, printer,
                                              generatedAttributePrinter);
}

Type TritonNvidiaGPUDialect::parseType(DialectAsmParser &parser) const {
  return tlx::TypeSpellingCache::parse(*this, parser, [&]() -> Type {
    return tlx::verbatim::parse<VerbatimType>(parser);
  });
}

void TritonNvidiaGPUDialect::printType(Type type,
                                       DialectAsmPrinter &printer) const {
  tlx::verbatim::print(printer, cast<VerbatimType>(type));
}

//===----------------------------------------------------------------------===//
// Tensor memory ops
//===----------------------------------------------------------------------===//

/// `%buffer`, `%buffer[]` or `%buffer[%dep]` (Triton's syntax): the
/// brackets stand for the token result, the operand inside for the
/// dependency.
static ParseResult
parseBufferAndToken(OpAsmParser &parser, OpAsmParser::UnresolvedOperand &buffer,
                    std::optional<OpAsmParser::UnresolvedOperand> &dependency,
                    Type &dependencyType, Type &tokenType) {
  if (parser.parseOperand(buffer))
    return failure();
  if (failed(parser.parseOptionalLSquare()))
    return success();
  Type token = triton::gpu::getAsyncTokenType(parser.getContext());
  tokenType = token;
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult hasDependency = parser.parseOptionalOperand(operand);
  if (hasDependency.has_value()) {
    if (failed(*hasDependency))
      return failure();
    dependency = operand;
    dependencyType = token;
  }
  return parser.parseRSquare();
}

static void printBufferAndToken(OpAsmPrinter &printer, Operation *,
                                Value buffer, Value dependency, Type,
                                Type tokenType) {
  printer << buffer;
  if (!tokenType)
    return;
  printer << "[";
  if (dependency)
    printer << dependency;
  printer << "]";
}

void TMEMAllocOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  OpResult buffer = getOperation()->getOpResult(0);
  effects.emplace_back(MemoryEffects::Allocate::get(), buffer,
                       TensorMemory::get());
  if (getSrc())
    effects.emplace_back(MemoryEffects::Write::get(), buffer,
                         TensorMemory::get());
}

LogicalResult TMEMSubSliceOp::verify() {
  bool hasOffset = (*this)->hasAttrOfType<IntegerAttr>("offset");
  bool hasN = (*this)->hasAttrOfType<IntegerAttr>("N");
  if (hasOffset == hasN)
    return emitOpError("needs its column offset as exactly one integer "
                       "attribute: 'offset' (Triton 3.9) or 'N' (Triton 3.6)");
  return success();
}

int64_t TMEMSubSliceOp::getColumnOffset() {
  auto offset = (*this)->getAttrOfType<IntegerAttr>("offset");
  if (!offset)
    offset = (*this)->getAttrOfType<IntegerAttr>("N");
  return offset.getInt();
}
