//===- Dialect.h - The `tt` memory subset -----------------------*- C++ -*-===//
//
// mlir::triton: TritonDialect, FuncOp, ReturnOp, CallOp, and the verbatim
// attribute and type that keep every other `tt` attribute and type.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITON_DIALECT_H
#define TLX_DIALECT_TRITON_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tlx/Dialect/Triton/TritonDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/Triton/TritonAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/Triton/TritonTypeDefs.h.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/Triton/TritonOps.h.inc"

#endif // TLX_DIALECT_TRITON_DIALECT_H
