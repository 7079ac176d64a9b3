//===- Verbatim.td - Attributes and types kept as written --*- tablegen -*-===//
//
// Triton's dialects have many attributes (layouts) and types that TLX never
// interprets: `#ttg.blocked<...>`, `#ttg.nvmma_shared<...>`,
// `#ttng.tensor_memory_encoding<...>`, `!tt.ptr<f32>`, and whatever a later
// Triton adds. Each of `tt`, `ttg` and `ttng` keeps them in one verbatim
// attribute and one verbatim type that store the text after the dialect
// prefix. Attributes and types nested in that text (`parent = #blocked`) are
// parsed and kept as real values, so that aliases resolve and print again.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_VERBATIM_TD
#define TLX_DIALECT_VERBATIM_TD

include "mlir/IR/AttrTypeBase.td"

defvar VerbatimParameters = (ins
  StringRefParameter<"the mnemonic after the dialect prefix, e.g. "
                     "`nvmma_shared`">:$symbol,
  StringRefParameter<"the text after the mnemonic as written, with "
                     "\\x01 for each nested attribute and \\x02 for each "
                     "nested type">:$body,
  ArrayRefParameter<"::mlir::Attribute",
                    "the nested attributes, in order">:$nestedAttributes,
  ArrayRefParameter<"::mlir::Type", "the nested types, in order">:$nestedTypes
);

/// A dialect of the Triton subset: it parses and prints the attributes and
/// types it defines (if any) with their generated parsers and printers, and
/// keeps every other one as its verbatim attribute or type.
class VerbatimDialect : Dialect {
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 0;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

class VerbatimAttrDef<Dialect dialect> : AttrDef<dialect, "Verbatim"> {
  let summary = "A " # dialect.name # " attribute TLX keeps as written";
  let attrName = dialect.name # ".verbatim";
  let parameters = VerbatimParameters;
}

class VerbatimTypeDef<Dialect dialect> : TypeDef<dialect, "Verbatim"> {
  let summary = "A " # dialect.name # " type TLX keeps as written";
  let typeName = dialect.name # ".verbatim";
  let parameters = VerbatimParameters;
}

#endif // TLX_DIALECT_VERBATIM_TD
