//===- Registration.h - The dialects triton-opt understands -----*- C++ -*-===//

#ifndef TLX_DIALECT_REGISTRATION_H
#define TLX_DIALECT_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tlx {

/// Registers `tlx`, the Triton memory subset (`tt`, `ttg`, `ttng`) and the
/// upstream dialects Triton prints in TTGIR: arith, scf, cf, func, math, gpu
/// (Triton 3.6 prints `gpu.barrier`) and ub.
void registerDialects(DialectRegistry &registry);

} // namespace mlir::tlx

#endif // TLX_DIALECT_REGISTRATION_H
