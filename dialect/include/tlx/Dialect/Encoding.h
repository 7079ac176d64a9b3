//===- Encoding.h - Reading Triton layouts kept verbatim --------*- C++ -*-===//
//
// Triton's layouts (`#ttg.nvmma_shared<{swizzlingByteWidth = 128, ...}>`,
// `#ttg.swizzled_shared<{vec = 4, ..., order = [1, 0]}>`,
// `#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>`,
// `#ttg.blocked<...>`, ...) are kept as written. These helpers read the
// `key = value` entries of such an attribute; entries of nested attributes
// (`parent = #blocked`) are not searched.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_ENCODING_H
#define TLX_DIALECT_ENCODING_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::triton {

/// The mnemonic of a `tt`, `ttg` or `ttng` attribute kept verbatim
/// ("nvmma_shared", "swizzled_shared", "tensor_memory_encoding", "blocked",
/// ...); empty for any other attribute.
StringRef encodingName(Attribute encoding);

/// The integer entry `key` (`swizzlingByteWidth`, `blockM`, `blockN`,
/// `colStride`, `maxPhase`, ...); nullopt when absent or not an integer.
std::optional<int64_t> encodingInt(Attribute encoding, StringRef key);

/// The boolean entry `key` (`transposed`, `unpacked`, `twoCTAs`, ...);
/// nullopt when absent or not `true`/`false`.
std::optional<bool> encodingBool(Attribute encoding, StringRef key);

/// The integer list entry `key` (`order = [1, 0]`); nullopt when absent or
/// not a flat list of integers.
std::optional<SmallVector<int64_t>> encodingIntArray(Attribute encoding,
                                                     StringRef key);

/// The entry `key` as a list of integer lists (`CGALayout = [[1, 0]]`);
/// nullopt when absent or not of that form.
std::optional<SmallVector<SmallVector<int64_t>>>
encodingIntArrays(Attribute encoding, StringRef key);

/// Parses an attribute from its full text, e.g.
/// "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>".
/// Returns a null attribute (after emitting the parser's diagnostic) when
/// the text does not parse.
Attribute parseEncoding(MLIRContext *context, StringRef text);

} // namespace mlir::triton

#endif // TLX_DIALECT_ENCODING_H
