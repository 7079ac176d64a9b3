//===- TritonNvidiaGPUOps.td - ttng tensor memory ops ------*- tablegen -*-===//
//
// Syntax checked against what stock Triton 3.6 and 3.9 print. An optional
// `!ttg.async.token` result is printed as `[...]` after the buffer (holding
// the dependency operand, when there is one).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONNVIDIAGPU_OPS_TD
#define TLX_DIALECT_TRITONNVIDIAGPU_OPS_TD

include "tlx/Dialect/TritonNvidiaGPU/TritonNvidiaGPUDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// The memory effects of tensor memory allocations name it.
def TTNG_TensorMemory : Resource<"::mlir::triton::nvidia_gpu::TensorMemory">;

def TTNG_TMEMAllocOp : TTNG_Op<"tmem_alloc",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Allocates a buffer in tensor memory";
  let description = [{
    `ttng.tmem_alloc : () -> !ttg.memdesc<128x64xf32, #tmem,
    #ttng.tensor_memory, mutable>`, optionally with an initial value and a
    `!ttg.async.token` result. Each result is a new allocation.
  }];
  let arguments = (ins Optional<AnyRankedTensor>:$src);
  let results = (outs TTG_MemDescType:$result,
                      Optional<TTG_AsyncToken>:$token);
  let assemblyFormat = [{
    ($src^)? attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result), [{
      build($_builder, $_state, result, ::mlir::Type(), ::mlir::Value());
    }]>
  ];
}

def TTNG_TMEMLoadOp : TTNG_Op<"tmem_load", [AttrSizedResultSegments]> {
  let summary = "Loads a tensor from tensor memory";
  let description = [{
    `%r = ttng.tmem_load %a : !ttg.memdesc<...> -> tensor<...>`; with a
    token: `%r, %t = ttng.tmem_load %a[%dep] : ...`. Triton 3.9 may add a
    reduction (`{redOp = ...}`) whose result type follows the tensor type.
  }];
  let arguments = (ins TTG_MemDescType:$src, Optional<TTG_AsyncToken>:$dep);
  let results = (outs AnyRankedTensor:$result,
                      Optional<TTG_AsyncToken>:$token,
                      Optional<AnyRankedTensor>:$red);
  let assemblyFormat = [{
    custom<BufferAndToken>($src, $dep, type($dep), type($token)) attr-dict
    `:` qualified(type($src)) `->` type($result) (`,` type($red)^)?
  }];
}

def TTNG_TMEMStoreOp : TTNG_Op<"tmem_store"> {
  let summary = "Stores a tensor into tensor memory";
  let description = [{
    `ttng.tmem_store %x, %a, %pred : tensor<...> -> !ttg.memdesc<...>`;
    with a token: `%t = ttng.tmem_store %x, %a[%dep], %pred : ...`.
  }];
  let arguments = (ins
    TTG_MemDescType:$dst,
    Optional<TTG_AsyncToken>:$dep,
    AnyRankedTensor:$src,
    I1:$pred
  );
  let results = (outs Optional<TTG_AsyncToken>:$token);
  let assemblyFormat = [{
    $src `,` custom<BufferAndToken>($dst, $dep, type($dep), type($token)) `,`
    $pred attr-dict `:` type($src) `->` qualified(type($dst))
  }];
}

def TTNG_TMEMSubSliceOp : TTNG_Op<"tmem_subslice", [Pure]> {
  let summary = "A view of a range of columns of a tensor memory buffer";
  let description = [{
    `ttng.tmem_subslice %a {offset = 32 : i32} : ... -> ...`. The column
    offset is `offset` in Triton 3.9 and `N` in Triton 3.6; both are kept
    as written.
  }];
  let arguments = (ins TTG_MemDescType:$src);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The first column of the view, whichever Triton spelling it has.
    int64_t getColumnOffset();
  }];
}

#endif // TLX_DIALECT_TRITONNVIDIAGPU_OPS_TD
