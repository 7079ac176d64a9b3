//===- DebugOnlyOption.h - -debug-only on a release LLVM --------*- C++ -*-===//

#ifndef TLX_TOOLS_TRITON_OPT_DEBUG_ONLY_OPTION_H
#define TLX_TOOLS_TRITON_OPT_DEBUG_ONLY_OPTION_H

namespace mlir::tlx {

/// Registers -debug-only=TYPE[,TYPE...] when the LLVM triton-opt links has
/// none (a build without assertions, as Debian's): it turns on the
/// LLVM_DEBUG output of those debug types in the files compiled to keep it
/// (dialect/lib/Analysis).
void registerDebugOnlyOption();

} // namespace mlir::tlx

#endif // TLX_TOOLS_TRITON_OPT_DEBUG_ONLY_OPTION_H
