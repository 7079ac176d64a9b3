//===- TritonNvidiaGPUDialect.td - The `ttng` memory subset *- tablegen -*-===//
//
// Blackwell tensor memory (TMEM) of Triton's `ttng` dialect. TMEM layouts
// (`#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>`)
// are verbatim attributes; read them with tlx/Dialect/Encoding.h.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_TD
#define TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_TD

include "tlx/Dialect/TritonGPU/TritonGPUDialect.td"

def TritonNvidiaGPU_Dialect : VerbatimDialect {
  let name = "ttng";
  let cppNamespace = "::mlir::triton::nvidia_gpu";
  let summary = "The tensor memory subset of Triton's `ttng` dialect";
}

def TTNG_VerbatimAttr : VerbatimAttrDef<TritonNvidiaGPU_Dialect>;
def TTNG_VerbatimType : VerbatimTypeDef<TritonNvidiaGPU_Dialect>;

def TTNG_TensorMemorySpaceAttr : AttrDef<TritonNvidiaGPU_Dialect, "TensorMemorySpace"> {
  let mnemonic = "tensor_memory";
  let summary = "The memory space of tensor memory (TMEM) descriptors";
}

class TTNG_Op<string mnemonic, list<Trait> traits = []>
    : Op<TritonNvidiaGPU_Dialect, mnemonic, traits>;

#endif // TLX_DIALECT_TRITONNVIDIAGPU_DIALECT_TD
