//===- TLXOps.td - The `tlx` storage aliasing operations ---*- tablegen -*-===//

#ifndef TLX_DIALECT_TLX_OPS_TD
#define TLX_DIALECT_TLX_OPS_TD

include "tlx/Dialect/TLX/TLXDialect.td"
include "tlx/Dialect/TritonGPU/TritonGPUDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TLX_StorageAliasSpecOp : TLX_Op<"storage_alias_spec",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Defines a storage region that allocations alias as peers";
  let description = [{
    ```
    %s = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>
    %t = tlx.storage_alias_spec storage = tmem, size = 16384
           : !tlx.storage_alias_spec<tmem, 16384>
    ```
    The storage alias lowering sizes the region (from the users, or
    validates `size`), records `backing` (the recipe of the backing
    allocation) and replaces the spec by one real allocation. Each spec is an
    allocation of its own (an Allocate effect on its result in shared or
    tensor memory, as `ttg.local_alloc` has): CSE never merges two specs, and
    a spec without users is erased as dead.
  }];
  let arguments = (ins
    TLX_StorageKindAttr:$storage,
    OptionalAttr<I64Attr>:$buffer_size_bytes,
    OptionalAttr<TLX_BackingAttr>:$backing
  );
  let results = (outs TLX_StorageAliasSpecType:$result);
  let assemblyFormat = [{
    `storage` `=` `` $storage (`,` `size` `=` $buffer_size_bytes^)? attr-dict
    `:` qualified(type($result))
  }];
  let builders = [
    OpBuilder<(ins "StorageKind":$storage), [{
      build($_builder, $_state,
            StorageAliasSpecType::get($_builder.getContext(), storage,
                                      std::nullopt),
            storage, ::mlir::IntegerAttr(), BackingAttr());
    }]>,
    OpBuilder<(ins "StorageKind":$storage, "int64_t":$bufferSizeBytes), [{
      build($_builder, $_state,
            StorageAliasSpecType::get($_builder.getContext(), storage,
                                      bufferSizeBytes),
            storage, $_builder.getI64IntegerAttr(bufferSizeBytes),
            BackingAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def TLX_StorageAliasLocalAllocOp : TLX_Op<"storage_alias_local_alloc",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "An allocation that lives in a storage alias spec's region";
  let description = [{
    `%a = tlx.storage_alias_local_alloc %s : !tlx.storage_alias_spec<smem>
    -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>`. The storage
    alias lowering replaces it by a `tlx.local_alias` of the backing
    allocation. Each result is an allocation of its own (an Allocate effect
    on it): CSE never merges two users of a spec. A user without any use,
    not even in an overlap tree, is dead and erased, as an unused
    `ttg.local_alloc` is; the plan is then made without it.
  }];
  let arguments = (ins
    TLX_StorageAliasSpecType:$storage_alias,
    OptionalAttr<TLX_PlacementAttr>:$placement
  );
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $storage_alias attr-dict `:` qualified(type($storage_alias)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

// What a reuse group tree or phases do: they define the overlap of the spec
// whose buffers they hold (docs/semantics.md, "Implicit overlap"), even with no
// user. A write to this resource keeps them from being erased as dead (or two
// of them merged) by --canonicalize and --cse before the storage alias
// lowering reads them.
def TLX_OverlapDefinition
    : Resource<"::mlir::tlx::OverlapDefinitionResource">;

def TLX_ReuseGroupOp : TLX_Op<"reuse_group",
    [MemoryEffects<[MemWrite<TLX_OverlapDefinition>]>]> {
  let summary = "A node of the reuse group tree of a storage alias spec";
  let description = [{
    `%g = tlx.reuse_group(%a, %b) group_kind = shared, group_size = 2 :
    (!ttg.memdesc<...>, !tlx.reuse_group<distinct>) -> !tlx.reuse_group<shared>`.
    Elements are buffers (`!ttg.memdesc`) or nested groups; `shared`
    children share bytes at each buffer index, `distinct` children never
    overlap; `group_size` K makes K consecutive buffers one logical group
    (printed only when it is not 1). A tree none of whose nodes is used by
    a tlx.set_buffer_overlap, whose leaves are all users of one spec, is that
    spec's overlap (the largest such tree; two unrelated ones are an error).
  }];
  let arguments = (ins
    Variadic<AnyTypeOf<[TTG_MemDescType, TLX_ReuseGroupType]>>:$elements,
    TLX_ReuseGroupKindAttr:$group_kind,
    DefaultValuedAttr<I64Attr, "1">:$group_size
  );
  let results = (outs TLX_ReuseGroupType:$result);
  let assemblyFormat = [{
    `(` $elements `)` `group_kind` `=` `` $group_kind
    (`,` `group_size` `=` $group_size^)? attr-dict `:`
    functional-type($elements, $result)
  }];
  let hasVerifier = 1;
}

def TLX_ReusePhasesOp : TLX_Op<"reuse_phases",
    [MemoryEffects<[MemWrite<TLX_OverlapDefinition>]>]> {
  let summary = "The reuse group trees of a spec's phases, one per phase";
  let description = [{
    `%p = tlx.reuse_phases(%t0, %t1) : (!tlx.reuse_group<distinct>,
    !tlx.reuse_group<distinct>) -> !tlx.reuse_phases`: two or more trees,
    phase 0, 1, ... in operand order. Inside a phase its tree means what it
    means alone; a buffer of one phase may take bytes of buffers of other
    phases; a buffer in several phases has one place valid in all of them.
    Give it to tlx.set_buffer_overlap, or leave it without users over one
    spec's buffers (implicit overlap).
  }];
  let arguments = (ins Variadic<TLX_ReuseGroupType>:$trees);
  let results = (outs TLX_ReusePhasesType:$result);
  let assemblyFormat = [{
    `(` $trees `)` attr-dict `:` functional-type($trees, $result)
  }];
  let hasVerifier = 1;
}

def TLX_SetBufferOverlapOp : TLX_Op<"set_buffer_overlap"> {
  let summary = "Gives a storage alias spec its reuse group tree or phases";
  let description = [{
    `tlx.set_buffer_overlap(%s, %g) : (!tlx.storage_alias_spec<smem>,
    !tlx.reuse_group<shared>) -> ()`, or with a `!tlx.reuse_phases`.
    The verifier checks the leaves of each tree (of each phase): every one is
    a tlx.storage_alias_local_alloc result of this spec, and none appears
    twice in one tree. The storage alias lowering checks them again, as it
    does for a tree without users (implicit overlap), which no verifier sees.
  }];
  let arguments = (ins
    TLX_StorageAliasSpecType:$storage_alias_spec,
    AnyTypeOf<[TLX_ReuseGroupType, TLX_ReusePhasesType]>:$overlap_def
  );
  let assemblyFormat = [{
    `(` $storage_alias_spec `,` $overlap_def `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TLX_LocalAliasOp : TLX_Op<"local_alias", [Pure]> {
  let summary = "Views a buffer with another type, at its start";
  let description = [{
    `%v = tlx.local_alias %x : !ttg.memdesc<...> -> !ttg.memdesc<...>`:
    source and result are in the same memory space.
    `--tlx-rewrite-local-alias` turns it into `ttg.memdesc_reinterpret`.
  }];
  let arguments = (ins TTG_MemDescType:$src);
  let results = (outs TTG_MemDescType:$result);
  let assemblyFormat = [{
    $src attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // TLX_DIALECT_TLX_OPS_TD
