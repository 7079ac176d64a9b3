//===- Dialect.h - The `ttng` tensor memory subset --------------*- C++ -*-===//
//
// mlir::triton::nvidia_gpu: TritonNvidiaGPUDialect, TensorMemorySpaceAttr,
// the tensor memory ops, and the verbatim attribute and type that keep every
// other `ttng` attribute (TMEM layouts) and type.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_H
#define TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_H

#include "tlx/Dialect/TritonGPU/Dialect.h"

#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUAttrDefs.h.inc"

namespace mlir::triton::nvidia_gpu {

/// The resource of every tensor memory allocation's memory effects.
struct TensorMemory : public SideEffects::Resource::Base<TensorMemory> {
  StringRef getName() final { return "<TensorMemory>"; }
};

} // namespace mlir::triton::nvidia_gpu

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUTypeDefs.h.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUOps.h.inc"

#endif // TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_H
