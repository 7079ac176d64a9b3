//===- Dialects.cpp - C API of the tlx dialects and passes ----------------===//

#include "tlx-c/Dialects.h"
#include "tlx/Dialect/Registration.h"
#include "tlx/Dialect/TLX/Dialect.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Transforms/Passes.h"

void tlxRegisterDialects(MlirDialectRegistry registry) {
  mlir::tlx::registerDialects(*unwrap(registry));
}

void tlxRegisterPasses(void) {
  // MLIR's pass registry asserts on a second registration of one name.
  static const bool registered = [] {
    // What triton-opt registers (tools/triton-opt/triton-opt.cpp) but its
    // test passes: MLIR's core passes and the storage alias passes.
    mlir::registerTransformsPasses();
    mlir::tlx::registerTLXPasses();
    return true;
  }();
  (void)registered;
}

using mlir::tlx::BackingAttr;
using mlir::tlx::PlacementAttr;

bool tlxAttributeIsABacking(MlirAttribute attr) {
  return mlir::isa<BackingAttr>(unwrap(attr));
}

intptr_t tlxBackingGetRank(MlirAttribute attr) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getShape().size();
}

int64_t tlxBackingGetShape(MlirAttribute attr, intptr_t dim) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getShape()[dim];
}

int64_t tlxBackingGetBlock(MlirAttribute attr, intptr_t dim) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getBlock()[dim];
}

int64_t tlxBackingGetElementBits(MlirAttribute attr) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getElementBits();
}

int64_t tlxBackingGetAlignment(MlirAttribute attr) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getAlignment();
}

int64_t tlxBackingGetRegionSize(MlirAttribute attr) {
  return mlir::cast<BackingAttr>(unwrap(attr)).getRegionSize();
}

bool tlxAttributeIsAPlacement(MlirAttribute attr) {
  return mlir::isa<PlacementAttr>(unwrap(attr));
}

int64_t tlxPlacementGetSlots(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getSlots();
}

int64_t tlxPlacementGetPeriod(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getPeriod();
}

int64_t tlxPlacementGetScale(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getScale();
}

int64_t tlxPlacementGetOffset(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getOffset();
}

int64_t tlxPlacementGetStep(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getStep();
}

int64_t tlxPlacementGetBase(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getBase();
}

int64_t tlxPlacementGetGroupStride(MlirAttribute attr) {
  return mlir::cast<PlacementAttr>(unwrap(attr)).getGroupStride();
}

const char *tlxPlacementGetForm(MlirAttribute attr) {
  return ::tlx::planner::viewFormName(static_cast<::tlx::planner::ViewForm>(
      mlir::cast<PlacementAttr>(unwrap(attr)).getForm()));
}
