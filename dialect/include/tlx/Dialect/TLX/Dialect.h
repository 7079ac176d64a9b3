//===- Dialect.h - The `tlx` storage aliasing dialect -----------*- C++ -*-===//
//
// mlir::tlx: TLXDialect, the StorageKind and ReuseGroupKind enums and
// attributes, StorageAliasSpecType, ReuseGroupType and the ops
// StorageAliasSpecOp, StorageAliasLocalAllocOp, ReuseGroupOp,
// SetBufferOverlapOp and LocalAliasOp.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TLX_DIALECT_H
#define TLX_DIALECT_TLX_DIALECT_H

#include "tlx/Dialect/TritonGPU/Dialect.h"

#include "tlx/Dialect/TLX/TLXEnums.h.inc"

#include "tlx/Dialect/TLX/TLXDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TLX/TLXAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TLX/TLXTypeDefs.h.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/TLX/TLXOps.h.inc"

#endif // TLX_DIALECT_TLX_DIALECT_H
