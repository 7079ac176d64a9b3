//===- TritonNvidiaGPUOps.td - Python op classes of TritonNvidiaGPU ---*- tablegen -*-===//
//
// The input of mlir-tblgen -gen-python-op-bindings for the op classes of
// tlx_mlir.dialects (dialect/python/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_MLIR_PYTHON_TRITONNVIDIAGPUOPS_TD
#define TLX_MLIR_PYTHON_TRITONNVIDIAGPUOPS_TD

include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUOps.td"

#endif // TLX_MLIR_PYTHON_TRITONNVIDIAGPUOPS_TD
