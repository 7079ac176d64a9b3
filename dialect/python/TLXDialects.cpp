//===- TLXDialects.cpp - The _tlxDialects module of tlx_mlir --------------===//
//
// The attributes the storage alias passes record, as classes of MLIR's
// Python bindings (tlx_mlir.dialects.tlx), read through their C API
// (tlx-c/Dialects.h).
//
//===----------------------------------------------------------------------===//

#include "tlx-c/Dialects.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <vector>

using mlir::python::nanobind_adaptors::mlir_attribute_subclass;

namespace {

std::vector<int64_t> backingDims(MlirAttribute attr,
                                 int64_t (*dim)(MlirAttribute, intptr_t)) {
  std::vector<int64_t> dims;
  for (intptr_t i = 0, e = tlxBackingGetRank(attr); i < e; ++i)
    dims.push_back(dim(attr, i));
  return dims;
}

} // namespace

NB_MODULE(_tlxDialects, m) {
  m.doc() = "The attributes of the tlx dialect";
  // The plan's recipe as the passes record it (tlx/Dialect/TLX/TLXDialect.td):
  // BackingAttr(op.attributes["backing"]).region_size, ...
  mlir_attribute_subclass(m, "BackingAttr", tlxAttributeIsABacking)
      .def_property_readonly(
          "shape",
          [](MlirAttribute self) {
            return backingDims(self, tlxBackingGetShape);
          },
          "The backing allocation's shape.")
      .def_property_readonly(
          "block",
          [](MlirAttribute self) {
            return backingDims(self, tlxBackingGetBlock);
          },
          "What one CTA holds of the backing allocation.")
      .def_property_readonly("element_bits", tlxBackingGetElementBits,
                             "The bits of one element (8: SMEM bytes, 32: "
                             "TMEM words).")
      .def_property_readonly("alignment", tlxBackingGetAlignment,
                             "The allocation's alignment in bytes.")
      .def_property_readonly("region_size", tlxBackingGetRegionSize,
                             "The region's size in the plan's unit (bytes, "
                             "or TMEM columns).");
  mlir_attribute_subclass(m, "PlacementAttr", tlxAttributeIsAPlacement)
      .def_property_readonly("slots", tlxPlacementGetSlots,
                             "Buffers of the user's type in its view.")
      .def_property_readonly("period", tlxPlacementGetPeriod)
      .def_property_readonly("scale", tlxPlacementGetScale)
      .def_property_readonly("offset", tlxPlacementGetOffset,
                             "The slot of buffer 0.")
      .def_property_readonly("step", tlxPlacementGetStep)
      .def_property_readonly("base", tlxPlacementGetBase,
                             "Where the view starts in the region (bytes).")
      .def_property_readonly(
          "form", [](MlirAttribute self) { return tlxPlacementGetForm(self); },
          "How the view is written: slots, sliced_rows, indexed_row, "
          "runtime_row or selected_rows.")
      .def_property_readonly("group_stride", tlxPlacementGetGroupStride,
                             "runtime_row, selected_rows: bytes between the "
                             "starts of two buffer groups' views.");
}
