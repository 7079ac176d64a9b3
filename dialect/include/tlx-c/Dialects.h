//===- Dialects.h - C API of the tlx dialects and passes ----------*- C -*-===//
//
// What MLIR's Python bindings need to know of this project (the tlx_mlir
// package, dialect/python): the dialects triton-opt registers and the storage
// alias passes. Built into the package's one MLIR library (TLXPythonCAPI).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_C_DIALECTS_H
#define TLX_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Inserts `tlx`, the Triton memory subset (`tt`, `ttg`, `ttng`) and the
/// upstream dialects Triton prints (tlx/Dialect/Registration.h).
MLIR_CAPI_EXPORTED void tlxRegisterDialects(MlirDialectRegistry registry);

/// Registers MLIR's core passes (cse, canonicalize, ...) and the storage alias
/// passes (tlx/Transforms/Passes.td) with MLIR's pass registry, as triton-opt
/// does, so that pass pipelines name them. Idempotent.
MLIR_CAPI_EXPORTED void tlxRegisterPasses(void);

/// `#tlx.backing` (on a sized tlx.storage_alias_spec): the backing
/// allocation's shape, what one CTA holds of it, the bits of one element, its
/// alignment in bytes and the region's size in the plan's unit.
MLIR_CAPI_EXPORTED bool tlxAttributeIsABacking(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t tlxBackingGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxBackingGetShape(MlirAttribute attr, intptr_t dim);
MLIR_CAPI_EXPORTED int64_t tlxBackingGetBlock(MlirAttribute attr, intptr_t dim);
MLIR_CAPI_EXPORTED int64_t tlxBackingGetElementBits(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxBackingGetAlignment(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxBackingGetRegionSize(MlirAttribute attr);

/// `#tlx.placement` (on a placed tlx.storage_alias_local_alloc): the view's
/// buffer count and the coefficients of buffer i's slot (docs/planner.md),
/// where the view starts (bytes), its form ("slots", "sliced_rows",
/// "indexed_row", "runtime_row", "selected_rows": a null-terminated static
/// string) and, for a view per buffer group (runtime_row, selected_rows),
/// how far apart its groups start.
MLIR_CAPI_EXPORTED bool tlxAttributeIsAPlacement(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetSlots(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetPeriod(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetScale(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetOffset(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetStep(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetBase(MlirAttribute attr);
MLIR_CAPI_EXPORTED const char *tlxPlacementGetForm(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t tlxPlacementGetGroupStride(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif // TLX_C_DIALECTS_H
