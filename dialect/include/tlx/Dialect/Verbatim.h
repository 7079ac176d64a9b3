//===- Verbatim.h - Attributes and types kept as written --------*- C++ -*-===//
//
// The parser and printer behind the verbatim attribute and type of `tt`,
// `ttg` and `ttng` (tlx/Dialect/Verbatim.td). The body after the mnemonic is
// kept character for character, except that each nested attribute or type
// (`#blocked`, `#ttg.blocked<...>`, `!tt.ptr<f32>`) is parsed into a real
// value and replaced by a marker, so aliases resolve on input and are
// printed again on output. The dialects of the Triton subset parse and print
// their verbatim attributes and types, and print Triton's aliases, with the
// helpers below.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_VERBATIM_H
#define TLX_DIALECT_VERBATIM_H

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

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

/// Parses the rest of a verbatim attribute or type (VerbatimT: the
/// VerbatimAttr or VerbatimType of `tt`, `ttg` or `ttng`) whose mnemonic the
/// parser has just consumed; null (after a diagnostic) when it does not parse.
template <typename VerbatimT>
VerbatimT parseAfterMnemonic(DialectAsmParser &parser, StringRef mnemonic) {
  FailureOr<Body> body = parseBody(parser, mnemonic);
  if (failed(body))
    return {};
  return VerbatimT::get(parser.getContext(), mnemonic, body->text,
                        body->nestedAttributes, body->nestedTypes);
}

/// Parses a verbatim attribute or type, mnemonic first.
template <typename VerbatimT> VerbatimT parse(DialectAsmParser &parser) {
  StringRef mnemonic;
  if (parser.parseKeyword(&mnemonic))
    return {};
  return parseAfterMnemonic<VerbatimT>(parser, mnemonic);
}

/// Prints a verbatim attribute or type as written, mnemonic first.
template <typename VerbatimT>
void print(DialectAsmPrinter &printer, VerbatimT verbatim) {
  printer << verbatim.getSymbol();
  printBody(printer, verbatim.getBody(), verbatim.getNestedAttributes(),
            verbatim.getNestedTypes());
}

/// A dialect's parseAttribute: one of its ODS attributes (`generatedParser`
/// is the generatedAttributeParser of its .cpp.inc), else a verbatim one.
template <typename VerbatimAttrT, typename GeneratedParser>
Attribute parseAttribute(DialectAsmParser &parser, Type type,
                         GeneratedParser generatedParser) {
  StringRef mnemonic;
  Attribute attr;
  if (generatedParser(parser, &mnemonic, type, attr).has_value())
    return attr;
  return parseAfterMnemonic<VerbatimAttrT>(parser, mnemonic);
}

/// A dialect's printAttribute: the ODS printer, else the verbatim text.
template <typename VerbatimAttrT, typename GeneratedPrinter>
void printAttribute(Attribute attr, DialectAsmPrinter &printer,
                    GeneratedPrinter generatedPrinter) {
  if (failed(generatedPrinter(attr, printer)))
    print(printer, cast<VerbatimAttrT>(attr));
}

/// Prints the aliases Triton prints for the attributes of a dialect (`#smem`,
/// `#blocked`, `#shared`, `#tmem`, ...): `aliasOf` names the alias of an
/// attribute, empty for one Triton prints inline.
template <StringRef (*aliasOf)(Attribute)>
struct AliasInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    StringRef alias = aliasOf(attr);
    if (alias.empty())
      return AliasResult::NoAlias;
    os << alias;
    return AliasResult::FinalAlias;
  }
};

} // namespace mlir::tlx::verbatim

#endif // TLX_DIALECT_VERBATIM_H
