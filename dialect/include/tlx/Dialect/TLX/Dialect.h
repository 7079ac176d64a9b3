//===- Dialect.h - The `tlx` storage aliasing dialect -----------*- C++ -*-===//
//
// mlir::tlx: TLXDialect, the StorageKind and ReuseGroupKind enums and
// attributes, StorageAliasSpecType, ReuseGroupType, ReusePhasesType and the
// ops StorageAliasSpecOp, StorageAliasLocalAllocOp, ReuseGroupOp,
// ReusePhasesOp, SetBufferOverlapOp and LocalAliasOp; the name diagnostics
// give an op's value.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TLX_DIALECT_H
#define TLX_DIALECT_TLX_DIALECT_H

#include "tlx/Dialect/TritonGPU/Dialect.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/Twine.h"

#include <string>

#include "tlx/Dialect/TLX/TLXEnums.h.inc"

#include "tlx/Dialect/TLX/TLXDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TLX/TLXAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TLX/TLXTypeDefs.h.inc"

namespace mlir::tlx {
/// What tlx.reuse_group and tlx.reuse_phases write: the overlap of the spec
/// whose buffers they hold (TLXOps.td says why it is modelled).
struct OverlapDefinitionResource
    : public SideEffects::Resource::Base<OverlapDefinitionResource> {
  StringRef getName() final { return "<OverlapDefinition>"; }
};
} // namespace mlir::tlx

#define GET_OP_CLASSES
#include "tlx/Dialect/TLX/TLXOps.h.inc"

namespace mlir::tlx {
/// The name diagnostics use for the value `op` defines: the name of a
/// NameLoc (Python variables), else "file:line:col", else `fallback`.
std::string nameForDiagnostics(Operation *op, const Twine &fallback);
} // namespace mlir::tlx

#endif // TLX_DIALECT_TLX_DIALECT_H
