//===- TritonGPUDialect.td - The `ttg` memory subset -------*- tablegen -*-===//
//
// The memory descriptor type, the shared memory space and the verbatim
// attribute/type of Triton's `ttg` dialect. Layouts (`#ttg.blocked`,
// `#ttg.nvmma_shared`, `#ttg.swizzled_shared`, ...) are verbatim attributes;
// read them with the helpers of tlx/Dialect/Encoding.h.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONGPU_DIALECT_TD
#define TLX_DIALECT_TRITONGPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "tlx/Dialect/Verbatim.td"

def TritonGPU_Dialect : VerbatimDialect {
  let name = "ttg";
  let cppNamespace = "::mlir::triton::gpu";
  let summary = "The memory subset of Triton's `ttg` dialect";
}

def TTG_VerbatimAttr : VerbatimAttrDef<TritonGPU_Dialect>;
def TTG_VerbatimType : VerbatimTypeDef<TritonGPU_Dialect>;

def TTG_SharedMemorySpaceAttr : AttrDef<TritonGPU_Dialect, "SharedMemorySpace"> {
  let mnemonic = "shared_memory";
  let summary = "The memory space of shared memory (SMEM) descriptors";
}

def TTG_MemDescType : TypeDef<TritonGPU_Dialect, "MemDesc",
                              [ShapedTypeInterface]> {
  let mnemonic = "memdesc";
  let summary = "A descriptor of a buffer in shared or tensor memory";
  let description = [{
    `!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>`: shape, element
    type, layout (encoding), memory space, whether the memory may be written,
    and the shape of the allocation the descriptor is a view of (printed
    last when it differs from the shape, e.g. after a subslice).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::Attribute":$encoding,
    "::mlir::Attribute":$memorySpace,
    "bool":$mutableMemory,
    ArrayRefParameter<"int64_t">:$allocShape
  );
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        "::mlir::Attribute":$encoding, "::mlir::Attribute":$memorySpace,
        CArg<"bool", "false">:$mutableMemory), [{
      return $_get(elementType.getContext(), shape, elementType, encoding,
                   memorySpace, mutableMemory, shape);
    }]>,
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        "::mlir::Attribute":$encoding, "::mlir::Attribute":$memorySpace,
        "bool":$mutableMemory, "::llvm::ArrayRef<int64_t>":$allocShape), [{
      return $_get(elementType.getContext(), shape, elementType, encoding,
                   memorySpace, mutableMemory, allocShape);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// ShapedTypeInterface: the same descriptor with another shape (the
    /// allocation shape follows the new shape) or element type.
    MemDescType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                          ::mlir::Type elementType) const;
    bool hasRank() const { return true; }
  }];
}

/// `!ttg.async.token`: kept verbatim, but operands and results of this type
/// need not spell it (`ttg.local_load %a token %t`).
def TTG_AsyncToken : Type<
    CPred<"::mlir::triton::gpu::isAsyncToken($_self)">, "!ttg.async.token">,
  BuildableType<"::mlir::triton::gpu::getAsyncTokenType($_builder.getContext())">;

class TTG_Op<string mnemonic, list<Trait> traits = []>
    : Op<TritonGPU_Dialect, mnemonic, traits>;

#endif // TLX_DIALECT_TRITONGPU_DIALECT_TD
