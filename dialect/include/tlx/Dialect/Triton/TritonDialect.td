//===- TritonDialect.td - The `tt` memory subset -----------*- tablegen -*-===//
//
// The parts of Triton's `tt` dialect that TLX storage aliasing works with,
// in Triton's exact textual syntax. Every other `tt` operation passes
// through in generic form; every `tt` attribute and type (`!tt.ptr<f32>`,
// `!tt.tensordesc<...>`) is kept verbatim.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITON_DIALECT_TD
#define TLX_DIALECT_TRITON_DIALECT_TD

include "mlir/IR/OpBase.td"
include "tlx/Dialect/Verbatim.td"

def Triton_Dialect : VerbatimDialect {
  let name = "tt";
  let cppNamespace = "::mlir::triton";
  let summary = "The memory subset of Triton's `tt` dialect";
}

def TT_VerbatimAttr : VerbatimAttrDef<Triton_Dialect>;
def TT_VerbatimType : VerbatimTypeDef<Triton_Dialect>;

class TT_Op<string mnemonic, list<Trait> traits = []>
    : Op<Triton_Dialect, mnemonic, traits>;

#endif // TLX_DIALECT_TRITON_DIALECT_TD
