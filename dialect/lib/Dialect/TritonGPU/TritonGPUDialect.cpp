//===- TritonGPUDialect.cpp - The `ttg` memory subset ---------------------===//

#include "tlx/Dialect/TritonGPU/Dialect.h"
#include "tlx/Dialect/TypeSpellingCache.h"
#include "tlx/Dialect/Verbatim.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <charconv>
#include <iterator>

using namespace mlir;
using namespace mlir::triton::gpu;

static ParseResult parseOffsetList(OpAsmParser &parser,
                                   DenseI32ArrayAttr &offsets);
static void printOffsetList(OpAsmPrinter &printer, Operation *op,
                            DenseI32ArrayAttr offsets);

#include "tlx/Dialect/TritonGPU/TritonGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUAttrDefs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUTypeDefs.cpp.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUOps.cpp.inc"

namespace {

/// The alias Triton prints for a layout: `#blocked`, `#linear`, `#mma`,
/// `#shared`; empty for layouts Triton prints inline (`#ttg.slice`,
/// `#ttg.dot_op`, ...).
StringRef layoutAlias(StringRef mnemonic) {
  if (mnemonic == "blocked" || mnemonic == "linear")
    return mnemonic;
  if (mnemonic == "nvidia_mma" || mnemonic == "amd_mfma" ||
      mnemonic == "amd_wmma")
    return "mma";
  if (mnemonic.ends_with("_shared") || mnemonic == "shared_linear")
    return "shared";
  return {};
}

/// The alias Triton prints for a `ttg` attribute: `#smem` for the shared
/// memory space, layoutAlias for a layout.
StringRef tritonGPUAlias(Attribute attr) {
  if (isa<SharedMemorySpaceAttr>(attr))
    return "smem";
  if (auto verbatim = dyn_cast<VerbatimAttr>(attr))
    return layoutAlias(verbatim.getSymbol());
  return {};
}

} // namespace

void TritonGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tlx/Dialect/TritonGPU/TritonGPUAttrDefs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tlx/Dialect/TritonGPU/TritonGPUTypeDefs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tlx/Dialect/TritonGPU/TritonGPUOps.cpp.inc"
      >();
  addInterfaces<tlx::verbatim::AliasInterface<tritonGPUAlias>>();
  allowUnknownOperations();
}

Attribute TritonGPUDialect::parseAttribute(DialectAsmParser &parser,
                                           Type type) const {
  return tlx::verbatim::parseAttribute<VerbatimAttr>(parser, type,
                                                     generatedAttributeParser);
}

void TritonGPUDialect::printAttribute(Attribute attr,
                                      DialectAsmPrinter &printer) const {
  tlx::verbatim::printAttribute<VerbatimAttr>(attr, printer,
                                              generatedAttributePrinter);
}

Type TritonGPUDialect::parseType(DialectAsmParser &parser) const {
  return tlx::TypeSpellingCache::parse(*this, parser, [&]() -> Type {
    StringRef mnemonic;
    Type type;
    if (generatedTypeParser(parser, &mnemonic, type).has_value())
      return type;
    return tlx::verbatim::parseAfterMnemonic<VerbatimType>(parser, mnemonic);
  });
}

void TritonGPUDialect::printType(Type type, DialectAsmPrinter &printer) const {
  if (failed(generatedTypePrinter(type, printer)))
    tlx::verbatim::print(printer, cast<VerbatimType>(type));
}

Type mlir::triton::gpu::getAsyncTokenType(MLIRContext *context) {
  return VerbatimType::get(context, "async.token", "", {}, {});
}

bool mlir::triton::gpu::isAsyncToken(Type type) {
  auto verbatim = dyn_cast<VerbatimType>(type);
  return verbatim && verbatim.getSymbol() == "async.token" &&
         verbatim.getBody().empty();
}

//===----------------------------------------------------------------------===//
// MemDescType
//===----------------------------------------------------------------------===//

Type MemDescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  Attribute memorySpace;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(encoding) || parser.parseComma() ||
      parser.parseAttribute(memorySpace))
    return {};
  bool mutableMemory = false;
  SmallVector<int64_t> allocShape(shape);
  if (succeeded(parser.parseOptionalComma())) {
    bool allocShapeFollows = true;
    if (succeeded(parser.parseOptionalKeyword("mutable"))) {
      mutableMemory = true;
      allocShapeFollows = succeeded(parser.parseOptionalComma());
    }
    if (allocShapeFollows) {
      allocShape.clear();
      if (parser.parseDimensionList(allocShape, /*allowDynamic=*/false,
                                    /*withTrailingX=*/false))
        return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return MemDescType::get(parser.getContext(), shape, elementType, encoding,
                          memorySpace, mutableMemory, allocShape);
}

namespace {

/// Appends `dims` joined by `x` to `text`.
void appendDims(SmallVectorImpl<char> &text, ArrayRef<int64_t> dims) {
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (index)
      text.push_back('x');
    char digits[24];
    std::to_chars_result end =
        std::to_chars(std::begin(digits), std::end(digits), dim);
    text.append(std::begin(digits), end.ptr);
  }
}

} // namespace

void MemDescType::print(AsmPrinter &printer) const {
  // Printed on every op that uses a buffer: the text around the element
  // type, layout and memory space goes out in as few writes as possible.
  raw_ostream &os = printer.getStream();
  SmallString<32> text("<");
  appendDims(text, getShape());
  if (!getShape().empty())
    text.push_back('x');
  os << text;
  printer.printType(getElementType());
  os << ", ";
  printer.printAttribute(getEncoding());
  os << ", ";
  printer.printAttribute(getMemorySpace());
  text.clear();
  if (getMutableMemory())
    text.append(StringRef(", mutable"));
  if (getAllocShape() != getShape()) {
    text.append(StringRef(", "));
    appendDims(text, getAllocShape());
  }
  text.push_back('>');
  os << text;
}

MemDescType MemDescType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                                   Type elementType) const {
  return MemDescType::get(shape.value_or(getShape()), elementType,
                          getEncoding(), getMemorySpace(), getMutableMemory(),
                          shape.value_or(getAllocShape()));
}

//===----------------------------------------------------------------------===//
// Memory descriptor ops
//===----------------------------------------------------------------------===//

void LocalAllocOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // An immutable buffer is a value (Triton lets CSE and DCE treat it so until
  // its offset is assigned); a mutable one is a new allocation.
  if (!getType().getMutableMemory())
    return;
  OpResult buffer = getOperation()->getOpResult(0);
  effects.emplace_back(MemoryEffects::Allocate::get(), buffer,
                       SharedMemory::get());
  if (getSrc())
    effects.emplace_back(MemoryEffects::Write::get(), buffer,
                         SharedMemory::get());
}

LogicalResult MemDescIndexOp::verify() {
  MemDescType source = getSrc().getType();
  MemDescType result = getResult().getType();
  if (source.getShape().empty() ||
      result.getShape() != source.getShape().drop_front()) {
    InFlightDiagnostic diag = emitOpError("result shape [");
    llvm::interleaveComma(result.getShape(), diag);
    diag << "] must be the source shape [";
    llvm::interleaveComma(source.getShape(), diag);
    return diag << "] without its leading (buffer) dimension";
  }
  if (result.getElementType() != source.getElementType())
    return emitOpError("result element type ")
           << result.getElementType() << " must be the source element type "
           << source.getElementType();
  return success();
}

static ParseResult parseOffsetList(OpAsmParser &parser,
                                   DenseI32ArrayAttr &offsets) {
  SmallVector<int32_t> values;
  if (parser.parseCommaSeparatedList([&]() -> ParseResult {
        int32_t value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      }))
    return failure();
  offsets = parser.getBuilder().getDenseI32ArrayAttr(values);
  return success();
}

static void printOffsetList(OpAsmPrinter &printer, Operation *,
                            DenseI32ArrayAttr offsets) {
  llvm::interleaveComma(offsets.asArrayRef(), printer);
}

//===----------------------------------------------------------------------===//
// WarpSpecializeOp
//===----------------------------------------------------------------------===//

WarpSpecializePartitionsOp WarpSpecializeOp::getPartitionOp() {
  Block &holder = getPartitionOpHolder().front();
  if (!llvm::hasSingleElement(holder))
    return {};
  return dyn_cast<WarpSpecializePartitionsOp>(holder.front());
}

RegionRange WarpSpecializeOp::getPartitionRegions() {
  WarpSpecializePartitionsOp partitions = getPartitionOp();
  if (!partitions)
    return RegionRange();
  return partitions.getPartitionRegions();
}

ParseResult WarpSpecializeOp::parse(OpAsmParser &parser,
                                    OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> captures;
  SMLoc capturesLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(captures, OpAsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.parseKeyword("default"))
    return failure();

  Region *defaultRegion = result.addRegion();
  if (parser.parseRegion(*defaultRegion))
    return failure();

  SmallVector<std::unique_ptr<Region>> partitionRegions;
  SmallVector<int32_t> partitionNumWarps;
  StringRef keyword;
  while (succeeded(parser.parseOptionalKeyword(&keyword))) {
    std::string expected =
        "partition" + std::to_string(partitionRegions.size());
    if (keyword != expected)
      return parser.emitError(parser.getCurrentLocation())
             << "expected '" << expected << "', got '" << keyword << "'";
    SmallVector<OpAsmParser::Argument> arguments;
    int32_t numWarps;
    auto region = std::make_unique<Region>();
    if (parser.parseArgumentList(arguments, OpAsmParser::Delimiter::Paren,
                                 /*allowType=*/true) ||
        parser.parseKeyword("num_warps") || parser.parseLParen() ||
        parser.parseInteger(numWarps) || parser.parseRParen() ||
        parser.parseRegion(*region, arguments, /*enableNameShadowing=*/true))
      return failure();
    partitionRegions.push_back(std::move(region));
    partitionNumWarps.push_back(numWarps);
  }

  FunctionType type;
  if (parser.parseColonType(type) ||
      parser.resolveOperands(captures, type.getInputs(), capturesLoc,
                             result.operands))
    return failure();
  result.addTypes(type.getResults());
  result.addAttribute(
      getPartitionNumWarpsAttrName(result.name),
      parser.getBuilder().getDenseI32ArrayAttr(partitionNumWarps));

  OperationState partitionsState(
      result.location, WarpSpecializePartitionsOp::getOperationName());
  for (std::unique_ptr<Region> &region : partitionRegions)
    partitionsState.addRegion(std::move(region));
  Block *holder = new Block();
  result.addRegion()->push_back(holder);
  holder->push_back(Operation::create(partitionsState));
  return success();
}

void WarpSpecializeOp::print(OpAsmPrinter &printer) {
  printer << "(" << getExplicitCaptures() << ")";
  printer.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {getPartitionNumWarpsAttrName().getValue()});
  printer.printNewline();
  printer << "default ";
  printer.printRegion(getDefaultRegion(), /*printEntryBlockArgs=*/false);
  for (auto [index, region, numWarps] :
       llvm::enumerate(getPartitionRegions(), getPartitionNumWarps())) {
    printer.printNewline();
    printer << "partition" << index << "(";
    llvm::interleaveComma(
        region->getArguments(), printer,
        [&](BlockArgument argument) { printer.printRegionArgument(argument); });
    printer << ") num_warps(" << numWarps << ") ";
    printer.printRegion(*region, /*printEntryBlockArgs=*/false);
  }
  printer << " : ";
  printer.printFunctionalType(getExplicitCaptures().getTypes(),
                              getResultTypes());
}

LogicalResult WarpSpecializeOp::verifyRegions() {
  WarpSpecializePartitionsOp partitions = getPartitionOp();
  if (!partitions)
    return emitOpError("second region must hold exactly one "
                       "ttg.warp_specialize.partitions op");
  size_t numPartitions = partitions.getPartitionRegions().size();
  if (numPartitions != getPartitionNumWarps().size())
    return emitOpError("has ")
           << numPartitions << " partition region(s) but partitionNumWarps "
           << "lists " << getPartitionNumWarps().size() << " warp count(s)";

  for (auto [partitionIndex, region] :
       llvm::enumerate(partitions.getPartitionRegions())) {
    Block &entry = region.front();
    if (entry.getNumArguments() != getExplicitCaptures().size())
      return emitOpError("partition #")
             << partitionIndex << " has " << entry.getNumArguments()
             << " argument(s) but there are " << getExplicitCaptures().size()
             << " capture(s)";
    for (auto [argumentIndex, argument, capture] : llvm::enumerate(
             entry.getArgumentTypes(), getExplicitCaptures().getTypes()))
      if (argument != capture)
        return emitOpError("partition #")
               << partitionIndex << " argument #" << argumentIndex
               << " has type " << argument << " but capture #" << argumentIndex
               << " has type " << capture;
  }

  Block &defaultBlock = getDefaultRegion().front();
  auto yield = defaultBlock.empty()
                   ? WarpYieldOp()
                   : dyn_cast<WarpYieldOp>(defaultBlock.back());
  if (!yield)
    return emitOpError("default region must end with ttg.warp_yield");
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes())) {
    InFlightDiagnostic diag = emitOpError("default region yields (");
    llvm::interleaveComma(yield.getValues().getTypes(), diag);
    diag << ") but the op returns (";
    llvm::interleaveComma(getResultTypes(), diag);
    return diag << ")";
  }
  return success();
}
