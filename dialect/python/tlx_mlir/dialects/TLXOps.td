//===- TLXOps.td - Python op classes of TLX ---*- tablegen -*-===//
//
// The input of mlir-tblgen -gen-python-op-bindings for the op classes of
// tlx_mlir.dialects (dialect/python/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_MLIR_PYTHON_TLXOPS_TD
#define TLX_MLIR_PYTHON_TLXOPS_TD

include "tlx/Dialect/TLX/TLXOps.td"

#endif // TLX_MLIR_PYTHON_TLXOPS_TD
