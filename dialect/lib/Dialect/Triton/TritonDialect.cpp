//===- TritonDialect.cpp - The `tt` memory subset -------------------------===//

#include "tlx/Dialect/Triton/Dialect.h"
#include "tlx/Dialect/TypeSpellingCache.h"
#include "tlx/Dialect/Verbatim.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::triton;

#include "tlx/Dialect/Triton/TritonDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/Triton/TritonAttrDefs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/Triton/TritonTypeDefs.cpp.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/Triton/TritonOps.cpp.inc"

void TritonDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tlx/Dialect/Triton/TritonAttrDefs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tlx/Dialect/Triton/TritonTypeDefs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tlx/Dialect/Triton/TritonOps.cpp.inc"
      >();
  allowUnknownOperations();
}

Attribute TritonDialect::parseAttribute(DialectAsmParser &parser, Type) const {
  return tlx::verbatim::parse<VerbatimAttr>(parser);
}

void TritonDialect::printAttribute(Attribute attr,
                                   DialectAsmPrinter &printer) const {
  tlx::verbatim::print(printer, cast<VerbatimAttr>(attr));
}

Type TritonDialect::parseType(DialectAsmParser &parser) const {
  return tlx::TypeSpellingCache::parse(*this, parser, [&]() -> Type {
    return tlx::verbatim::parse<VerbatimType>(parser);
  });
}

void TritonDialect::printType(Type type, DialectAsmPrinter &printer) const {
  tlx::verbatim::print(printer, cast<VerbatimType>(type));
}

//===----------------------------------------------------------------------===//
// FuncOp
//===----------------------------------------------------------------------===//

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  tlx::TypeSpellingCache types(parser);
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto function = cast<FuncOp>((*this)->getParentOp());
  ArrayRef<Type> results = function.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError("returns ")
           << getNumOperands() << " value(s) but the enclosing function @"
           << function.getName() << " returns " << results.size();
  for (auto [index, operand, expected] :
       llvm::enumerate(getOperandTypes(), results))
    if (operand != expected)
      return emitOpError("value #")
             << index << " has type " << operand << " but function @"
             << function.getName() << " returns " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("calls @")
           << getCallee() << ", which is not a tt.func in scope";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getNumOperands())
    return emitOpError("passes ")
           << getNumOperands() << " operand(s) but @" << getCallee()
           << " takes " << type.getNumInputs();
  for (auto [index, operand, expected] :
       llvm::enumerate(getOperandTypes(), type.getInputs()))
    if (operand != expected)
      return emitOpError("operand #")
             << index << " has type " << operand << " but @" << getCallee()
             << " takes " << expected;
  if (type.getNumResults() != getNumResults())
    return emitOpError("has ")
           << getNumResults() << " result(s) but @" << getCallee()
           << " returns " << type.getNumResults();
  for (auto [index, result, expected] :
       llvm::enumerate(getResultTypes(), type.getResults()))
    if (result != expected)
      return emitOpError("result #")
             << index << " has type " << result << " but @" << getCallee()
             << " returns " << expected;
  return success();
}
