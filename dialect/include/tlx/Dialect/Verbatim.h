//===- Verbatim.h - Attributes and types kept as written --------*- C++ -*-===//
//
// The parser and printer behind the verbatim attribute and type of `tt`,
// `ttg` and `ttng` (tlx/Dialect/Verbatim.td). The body after the mnemonic is
// kept character for character, except that each nested attribute or type
// (`#blocked`, `#ttg.blocked<...>`, `!tt.ptr<f32>`) is parsed into a real
// value and replaced by a marker, so aliases resolve on input and are
// printed again on output.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_VERBATIM_H
#define TLX_DIALECT_VERBATIM_H

#include "mlir/IR/DialectImplementation.h"

#include <string>

namespace mlir::tlx::verbatim {

/// Stands for the next nested attribute in a verbatim body.
inline constexpr char kNestedAttributeMarker = '\x01';
/// Stands for the next nested type in a verbatim body.
inline constexpr char kNestedTypeMarker = '\x02';

/// The body of a verbatim attribute or type, as parsed.
struct Body {
  std::string text;
  SmallVector<Attribute> nestedAttributes;
  SmallVector<Type> nestedTypes;
};

/// Parses the rest of the dialect symbol being parsed (the text
/// DialectAsmParser::getFullSymbolSpec() returns) after its mnemonic, which
/// the parser has just consumed.
FailureOr<Body> parseBody(DialectAsmParser &parser, StringRef mnemonic);

/// Prints a body parsed by parseBody (after its mnemonic).
void printBody(DialectAsmPrinter &printer, StringRef text,
               ArrayRef<Attribute> nestedAttributes,
               ArrayRef<Type> nestedTypes);

} // namespace mlir::tlx::verbatim

#endif // TLX_DIALECT_VERBATIM_H
