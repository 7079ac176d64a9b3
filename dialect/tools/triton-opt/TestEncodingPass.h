//===- TestEncodingPass.h - Exercises the layout helpers --------*- C++ -*-===//

#ifndef TLX_TOOLS_TRITON_OPT_TEST_ENCODING_PASS_H
#define TLX_TOOLS_TRITON_OPT_TEST_ENCODING_PASS_H

namespace mlir::tlx {

/// Registers --test-tlx-encoding (tests of tlx/Dialect/Encoding.h).
void registerTestEncodingPass();

} // namespace mlir::tlx

#endif // TLX_TOOLS_TRITON_OPT_TEST_ENCODING_PASS_H
