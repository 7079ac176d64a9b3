//===- TLXDialect.td - The `tlx` dialect, enums and types --*- tablegen -*-===//
//
// Storage aliasing (docs/semantics.md): a storage alias spec is a region
// of SMEM or TMEM that several allocations alias as equal peers; a reuse
// group tree says which of them share bytes at each buffer index (`shared`)
// and which must not overlap (`distinct`).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TLX_DIALECT_TD
#define TLX_DIALECT_TLX_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TLX_Dialect : Dialect {
  let name = "tlx";
  let cppNamespace = "::mlir::tlx";
  let summary = "TLX storage aliasing";
  let dependentDialects = ["::mlir::triton::gpu::TritonGPUDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 0;
  let extraClassDeclaration = [{
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

def TLX_StorageKind : I32EnumAttr<"StorageKind", "on-chip storage kind", [
    I32EnumAttrCase<"smem", 0>,
    I32EnumAttrCase<"tmem", 1>,
    I32EnumAttrCase<"smemCluster", 2>
  ]> {
  let cppNamespace = "::mlir::tlx";
  let genSpecializedAttr = 0;
}

def TLX_StorageKindAttr : EnumAttr<TLX_Dialect, TLX_StorageKind,
                                   "storage_kind">;

def TLX_ReuseGroupKind : I32EnumAttr<"ReuseGroupKind",
    "how the children of a reuse group relate", [
    I32EnumAttrCase<"shared", 0>,
    I32EnumAttrCase<"distinct", 1>
  ]> {
  let cppNamespace = "::mlir::tlx";
  let genSpecializedAttr = 0;
}

def TLX_ReuseGroupKindAttr : EnumAttr<TLX_Dialect, TLX_ReuseGroupKind,
                                      "reuse_group_kind">;

// planner::ViewForm: how a front door writes a user's view of the region.
def TLX_ViewForm : I32EnumAttr<"ViewForm",
    "how a view of a storage alias region is written", [
    I32EnumAttrCase<"slots", 0>,
    I32EnumAttrCase<"sliced_rows", 1>,
    I32EnumAttrCase<"indexed_row", 2>,
    I32EnumAttrCase<"runtime_row", 3>,
    I32EnumAttrCase<"selected_rows", 4>
  ]> {
  let cppNamespace = "::mlir::tlx";
  let genSpecializedAttr = 0;
}

def TLX_StorageAliasSpecType : TypeDef<TLX_Dialect, "StorageAliasSpec"> {
  let mnemonic = "storage_alias_spec";
  let summary = "A region of SMEM or TMEM that allocations alias as peers";
  let description = [{
    `!tlx.storage_alias_spec<smem>`, or with an explicit size in bytes
    `!tlx.storage_alias_spec<tmem, 16384>`.
  }];
  let parameters = (ins
    "StorageKind":$storage,
    OptionalParameter<"std::optional<int64_t>">:$bufferSizeBytes
  );
  let assemblyFormat = "`<` $storage (`,` $bufferSizeBytes^)? `>`";
  let genVerifyDecl = 1;
}

def TLX_ReuseGroupType : TypeDef<TLX_Dialect, "ReuseGroup"> {
  let mnemonic = "reuse_group";
  let summary = "A node of a reuse group tree";
  let description = [{ `!tlx.reuse_group<shared>` or `!tlx.reuse_group<distinct>`. }];
  let parameters = (ins "ReuseGroupKind":$groupKind);
  let assemblyFormat = "`<` $groupKind `>`";
}

def TLX_ReusePhasesType : TypeDef<TLX_Dialect, "ReusePhases"> {
  let mnemonic = "reuse_phases";
  let summary = "The reuse group trees of a spec's phases, one per phase";
  let description = [{ `!tlx.reuse_phases`: what `tlx.reuse_phases` makes. }];
}

def TLX_BackingAttr : AttrDef<TLX_Dialect, "Backing"> {
  let mnemonic = "backing";
  let summary = "The backing allocation the planner gives a storage alias spec";
  let description = [{
    `#tlx.backing<shape = [1536, 128], block = [1536, 128], elementBits = 8,
    alignment = 1024, regionSize = 196608>`: the allocation's shape, what one
    CTA holds of it, the bits of one element (8: a `ttg.local_alloc` of
    bytes; 32: a `ttng.tmem_alloc` of 32-bit words), its alignment in bytes
    and the region's size in the plan's unit (bytes, or TMEM columns).
    Recorded by --tlx-storage-alias-size-definition, read by
    --tlx-storage-alias-allocation.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    ArrayRefParameter<"int64_t">:$block,
    "int64_t":$elementBits,
    "int64_t":$alignment,
    "int64_t":$regionSize
  );
  let assemblyFormat = [{
    `<` `shape` `=` `[` $shape `]` `,` `block` `=` `[` $block `]` `,`
    `elementBits` `=` $elementBits `,` `alignment` `=` $alignment `,`
    `regionSize` `=` $regionSize `>`
  }];
}

def TLX_PlacementAttr : AttrDef<TLX_Dialect, "Placement"> {
  let mnemonic = "placement";
  let summary = "Where the planner places a storage alias user";
  let description = [{
    `#tlx.placement<slots = 12, period = 1, scale = 1, offset = 4, step = 1>`:
    the user's view has `slots` buffers of its own type from the region's
    start, and these coefficients give its buffer i's slot of it
    (docs/planner.md, "The slot of a buffer"). A view from a byte offset adds
    where it starts and how it is written: `base = 512, form = sliced_rows`
    (docs/planner.md, "Views at a byte offset"); a view per buffer group
    adds how far apart its groups are: `base = 1024, form = runtime_row,
    groupStride = 5120` (or `form = selected_rows`), or where each group's
    view starts when they are no common stride apart (`form = selected_rows,
    groupStarts = [0, 8192, 3072]`); a selected_rows view adds how each
    group's view is written, as a view at a byte offset (`groupForm =
    sliced_rows` on Triton 3.9, `groupForm = indexed_row` on 3.6 and 3.7).
    Recorded by
    --tlx-buffer-offset-calculation, read by --tlx-storage-alias-allocation.
  }];
  let parameters = (ins
    "int64_t":$slots,
    "int64_t":$period,
    "int64_t":$scale,
    "int64_t":$offset,
    "int64_t":$step,
    DefaultValuedParameter<"int64_t", "0">:$base,
    DefaultValuedParameter<"ViewForm", "ViewForm::slots">:$form,
    DefaultValuedParameter<"int64_t", "0">:$groupStride,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$groupStarts,
    DefaultValuedParameter<"ViewForm", "ViewForm::slots">:$groupForm
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

class TLX_Op<string mnemonic, list<Trait> traits = []>
    : Op<TLX_Dialect, mnemonic, traits>;

#endif // TLX_DIALECT_TLX_DIALECT_TD
