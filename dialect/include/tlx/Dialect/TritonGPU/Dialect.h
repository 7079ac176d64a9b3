//===- Dialect.h - The `ttg` memory subset ----------------------*- C++ -*-===//
//
// mlir::triton::gpu: TritonGPUDialect, MemDescType, SharedMemorySpaceAttr,
// the shared memory and warp specialization ops, and the verbatim attribute
// and type that keep every other `ttg` attribute (layouts) and type.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONGPU_DIALECT_H
#define TLX_DIALECT_TRITONGPU_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tlx/Dialect/TritonGPU/TritonGPUDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUTypeDefs.h.inc"

namespace mlir::triton::gpu {

/// `!ttg.async.token` (a verbatim type: TLX only passes tokens along).
Type getAsyncTokenType(MLIRContext *context);

/// True if `type` is `!ttg.async.token`.
bool isAsyncToken(Type type);

/// The resource of every shared memory allocation's memory effects.
struct SharedMemory : public SideEffects::Resource::Base<SharedMemory> {
  StringRef getName() final { return "<SharedMemory>"; }
};

} // namespace mlir::triton::gpu

#define GET_OP_CLASSES
#include "tlx/Dialect/TritonGPU/TritonGPUOps.h.inc"

#endif // TLX_DIALECT_TRITONGPU_DIALECT_H
