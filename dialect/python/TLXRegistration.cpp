//===- TLXRegistration.cpp - The _tlxRegistration module of tlx_mlir ------===//
//
// The dialects and the passes of triton-opt for MLIR's Python bindings,
// through their C API (tlx-c/Dialects.h). Imported while MLIR's `ir` module
// initializes (tlx_mlir/_mlir_libs/_site_initialize_0.py), so it uses no
// class of `ir` (TLXDialects.cpp has the attribute classes).
//
//===----------------------------------------------------------------------===//

#include "tlx-c/Dialects.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

namespace nb = nanobind;

NB_MODULE(_tlxRegistration, m) {
  m.doc() = "The tlx dialects and storage alias passes for MLIR's Python "
            "bindings";
  m.def(
      "insert_dialects",
      [](MlirDialectRegistry registry) { tlxRegisterDialects(registry); },
      nb::arg("registry"),
      "Inserts tlx, tt, ttg, ttng and the upstream dialects Triton prints "
      "into `registry`.");
  m.def("register_passes", &tlxRegisterPasses,
        "Registers MLIR's core passes and the storage alias passes, so that "
        "PassManager.parse knows them.");
}
