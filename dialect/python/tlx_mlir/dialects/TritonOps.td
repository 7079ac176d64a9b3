//===- TritonOps.td - Python op classes of Triton ---*- tablegen -*-===//
//
// The input of mlir-tblgen -gen-python-op-bindings for the op classes of
// tlx_mlir.dialects (dialect/python/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_MLIR_PYTHON_TRITONOPS_TD
#define TLX_MLIR_PYTHON_TRITONOPS_TD

include "tlx/Dialect/Triton/TritonOps.td"

#endif // TLX_MLIR_PYTHON_TRITONOPS_TD
