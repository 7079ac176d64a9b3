//===- TritonGPUOps.td - ttg memory and warp operations ----*- tablegen -*-===//
//
// Syntax checked against what stock Triton 3.6 and 3.9 print.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TRITONGPU_OPS_TD
#define TLX_DIALECT_TRITONGPU_OPS_TD

include "tlx/Dialect/TritonGPU/TritonGPUDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// The memory effects of allocations name it, so that passes tell shared
/// memory apart from other memory (Triton models its allocations the same).
def TTG_SharedMemory : Resource<"::mlir::triton::gpu::SharedMemory">;

def TTG_LocalAllocOp : TTG_Op<"local_alloc",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Allocates a buffer in shared memory";
  let description = [{
    `ttg.local_alloc : () -> !ttg.memdesc<...>`, or with an initial value
    `ttg.local_alloc %x : (tensor<...>) -> !ttg.memdesc<...>`; the optional
    `alignment` (bytes) is printed in the attribute dictionary. A mutable
    result is a new allocation (never merged by CSE; erased when unused); an
    immutable one holds a value and has no effects, as in Triton.
  }];
  let arguments = (ins
    Optional<AnyRankedTensor>:$src,
    OptionalAttr<I32Attr>:$alignment
  );
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    ($src^)? attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result), [{
      build($_builder, $_state, result, ::mlir::Value(),
            ::mlir::IntegerAttr());
    }]>
  ];
}

def TTG_LocalDeallocOp : TTG_Op<"local_dealloc"> {
  let summary = "Frees a buffer allocated by ttg.local_alloc";
  let arguments = (ins TTG_MemDescType:$src);
  let assemblyFormat = "$src attr-dict `:` qualified(type($src))";
}

def TTG_LocalLoadOp : TTG_Op<"local_load"> {
  let summary = "Loads a tensor from a shared memory buffer";
  let arguments = (ins
    TTG_MemDescType:$src,
    Optional<TTG_AsyncToken>:$token
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src (`token` $token^)? attr-dict `:` qualified(type($src)) `->`
    type($result)
  }];
}

def TTG_LocalStoreOp : TTG_Op<"local_store"> {
  let summary = "Stores a tensor into a shared memory buffer";
  let arguments = (ins AnyRankedTensor:$src, TTG_MemDescType:$dst);
  let assemblyFormat = [{
    $src `,` $dst attr-dict `:` type($src) `->` qualified(type($dst))
  }];
}

def TTG_MemDescIndexOp : TTG_Op<"memdesc_index", [Pure]> {
  let summary = "Selects one buffer along the leading dimension";
  let description = [{
    `ttg.memdesc_index %a[%i] : !ttg.memdesc<2x64x64xf32, ...> ->
    !ttg.memdesc<64x64xf32, ...>`: the result drops the leading (buffer)
    dimension of the source.
  }];
  let arguments = (ins TTG_MemDescType:$src, I32:$index);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src `[` $index `]` attr-dict `:` qualified(type($src)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def TTG_MemDescSubsliceOp : TTG_Op<"memdesc_subslice", [Pure]> {
  let summary = "A view of a static sub-block of a buffer";
  let arguments = (ins TTG_MemDescType:$src, DenseI32ArrayAttr:$offsets);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src `[` custom<OffsetList>($offsets) `]` attr-dict `:`
    qualified(type($src)) `->` qualified(type($result))
  }];
}

def TTG_MemDescReinterpretOp : TTG_Op<"memdesc_reinterpret", [Pure]> {
  let summary = "Views a buffer with another shape, element type or layout";
  let arguments = (ins TTG_MemDescType:$src);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
}

def TTG_MemDescTransOp : TTG_Op<"memdesc_trans", [Pure]> {
  let summary = "A transposed view of a buffer";
  let arguments = (ins TTG_MemDescType:$src, DenseI32ArrayAttr:$order);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
}

def TTG_WarpSpecializeOp : TTG_Op<"warp_specialize"> {
  let summary = "Runs a default region and worker partitions in parallel";
  let description = [{
    ```
    %r = ttg.warp_specialize(%a, %b) attributes {requestedRegisters = ...}
    default {
      ...
      ttg.warp_yield %v : i32
    }
    partition0(%arg2: !ttg.memdesc<...>, %arg3: !tt.ptr<f32>) num_warps(1) {
      ...
      ttg.warp_return
    } : (!ttg.memdesc<...>, !tt.ptr<f32>) -> i32
    ```
    The default region runs in the warps of the parent and may use any value
    in scope; it yields the results. Each partition is isolated from above:
    its block arguments receive the captures (the operands of this op). The
    partitions live in the single `ttg.warp_specialize.partitions` op of the
    second region. The captures are operands of this op, as Triton 3.6 has
    them in generic form (3.9 moves them to the partitions op); the custom
    form above, the only one TLX prints, is the same in both.
  }];
  let arguments = (ins
    Variadic<AnyType>:$explicitCaptures,
    DenseI32ArrayAttr:$partitionNumWarps
  );
  let results = (outs Variadic<AnyType>:$defaultResults);
  let regions = (region SizedRegion<1>:$defaultRegion,
                        SizedRegion<1>:$partitionOpHolder);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The op holding the partition regions; null only in IR that fails
    /// verification.
    WarpSpecializePartitionsOp getPartitionOp();
    /// The partition regions, in order (partition0, partition1, ...).
    ::mlir::RegionRange getPartitionRegions();
  }];
}

def TTG_WarpSpecializePartitionsOp
    : TTG_Op<"warp_specialize.partitions", [IsolatedFromAbove, Terminator,
                                            HasParent<"WarpSpecializeOp">]> {
  let summary = "Holds the worker partitions of a ttg.warp_specialize";
  let regions = (region VariadicRegion<SizedRegion<1>>:$partitionRegions);
  let assemblyFormat = "$partitionRegions attr-dict";
}

def TTG_WarpYieldOp : TTG_Op<"warp_yield", [Pure, Terminator, ReturnLike,
                                            HasParent<"WarpSpecializeOp">]> {
  let summary = "Ends the default region of a ttg.warp_specialize";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def TTG_WarpReturnOp : TTG_Op<"warp_return", [Pure, Terminator, ReturnLike,
    HasParent<"WarpSpecializePartitionsOp">]> {
  let summary = "Ends a partition of a ttg.warp_specialize";
  let assemblyFormat = "attr-dict";
}

#endif // TLX_DIALECT_TRITONGPU_OPS_TD
