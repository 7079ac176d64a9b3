//===- TritonGPUOps.td - Python op classes of TritonGPU ---*- tablegen -*-===//
//
// The input of mlir-tblgen -gen-python-op-bindings for the op classes of
// tlx_mlir.dialects (dialect/python/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_MLIR_PYTHON_TRITONGPUOPS_TD
#define TLX_MLIR_PYTHON_TRITONGPUOPS_TD

include "tlx/Dialect/TritonGPU/TritonGPUOps.td"

#endif // TLX_MLIR_PYTHON_TRITONGPUOPS_TD
