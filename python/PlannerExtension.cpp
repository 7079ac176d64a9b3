//===- PlannerExtension.cpp - pybind11 module tlx._planner ----------------===//
//
// Exposes the storage alias planner (tlx/Planner/Planner.h) to Python. The
// field names are the snake_case names of language/tlx/planner.py, which
// wraps these native objects in frozen dataclasses; use that module, not
// this one. Links no MLIR.
//
//===----------------------------------------------------------------------===//

#include "tlx/Planner/Planner.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace tlx::planner;

namespace {

void bindEnums(py::module_ &m) {
  py::enum_<Storage>(m, "Storage")
      .value("SMEM", Storage::Smem)
      .value("TMEM", Storage::Tmem);
  py::enum_<LayoutKind>(m, "LayoutKind")
      .value("NVMMA_SHARED", LayoutKind::NvmmaShared)
      .value("SWIZZLED_SHARED", LayoutKind::SwizzledShared)
      .value("TENSOR_MEMORY", LayoutKind::TensorMemory);
  py::enum_<ElementKind>(m, "ElementKind")
      .value("INTEGER", ElementKind::Integer)
      .value("FLOAT", ElementKind::Float)
      .value("POINTER", ElementKind::Pointer);
  py::enum_<GroupKind>(m, "GroupKind")
      .value("SHARED", GroupKind::Shared)
      .value("DISTINCT", GroupKind::Distinct);
  py::enum_<Severity>(m, "Severity")
      .value("ERROR", Severity::Error)
      .value("WARNING", Severity::Warning);
}

void bindInputs(py::module_ &m) {
  py::class_<Layout>(m, "Layout")
      .def(py::init<>())
      .def_readwrite("kind", &Layout::kind)
      .def_readwrite("swizzle_bytes", &Layout::swizzleBytes)
      .def_readwrite("block_m", &Layout::blockM)
      .def_readwrite("block_n", &Layout::blockN)
      .def_readwrite("unpacked", &Layout::unpacked)
      .def_readwrite("cta_split_m", &Layout::ctaSplitM)
      .def_readwrite("cta_split_n", &Layout::ctaSplitN);
  py::class_<Buffer>(m, "Buffer")
      .def(py::init<>())
      .def_readwrite("name", &Buffer::name)
      .def_readwrite("shape", &Buffer::shape)
      .def_readwrite("element_bits", &Buffer::elementBits)
      .def_readwrite("storage", &Buffer::storage)
      .def_readwrite("layout", &Buffer::layout);
  py::class_<Group>(m, "Group")
      .def(py::init<>())
      .def_readwrite("kind", &Group::kind)
      .def_readwrite("group_size", &Group::groupSize)
      .def_readwrite("children", &Group::children);
  py::class_<Spec>(m, "Spec")
      .def(py::init<>())
      .def_readwrite("name", &Spec::name)
      .def_readwrite("storage", &Spec::storage)
      .def_readwrite("explicit_size_bytes", &Spec::explicitSizeBytes)
      .def_readwrite("capability", &Spec::capability);
}

void bindOutputs(py::module_ &m) {
  py::class_<Diagnostic>(m, "Diagnostic")
      .def(py::init<>())
      .def_readwrite("severity", &Diagnostic::severity)
      .def_readwrite("buffer", &Diagnostic::buffer)
      .def_readwrite("message", &Diagnostic::message);
  py::class_<View>(m, "View")
      .def(py::init<>())
      .def_readwrite("buffer_size", &View::bufferSize)
      .def_readwrite("offset", &View::offset)
      .def_readwrite("bytes_between_buffer_groups",
                     &View::bytesBetweenBufferGroups)
      .def_readwrite("group_size", &View::groupSize)
      .def_readwrite("scale", &View::scale)
      .def_readwrite("offset_slots", &View::offsetSlots)
      .def_readwrite("slots", &View::slots)
      .def_readwrite("alignment", &View::alignment)
      .def("identity_index", &View::identityIndex);
  py::class_<Plan>(m, "Plan")
      .def(py::init<>())
      .def_readwrite("storage", &Plan::storage)
      .def_readwrite("size_bytes", &Plan::sizeBytes)
      .def_readwrite("region_size", &Plan::regionSize)
      .def_readwrite("backing_shape", &Plan::backingShape)
      .def_readwrite("backing_block", &Plan::backingBlock)
      .def_readwrite("alignment", &Plan::alignment)
      .def_readwrite("padding_bytes", &Plan::paddingBytes)
      .def_readwrite("views", &Plan::views)
      .def_readwrite("diagnostics", &Plan::diagnostics);
}

void bindFunctions(py::module_ &m) {
  m.def("buffer_size", &bufferSize, py::arg("buffer"),
        "Bytes (SMEM) or 32-bit columns (TMEM) of one buffer.");
  m.def("required_alignment", &requiredAlignment, py::arg("buffer"),
        "Alignment the buffer needs (bytes for SMEM, columns for TMEM).");
  m.def("smem_limit_for_target", &smemLimitForTarget, py::arg("capability"),
        "Shared memory one CTA may use on a CUDA target (227 KiB if unknown).");
  m.def("cta_split_of_cga_bases", &ctaSplitOfCgaBases, py::arg("bases"),
        "The CTA split (along M, along N) of a 2-D CGA layout's bases.");
  m.def("has_tensor_memory", &hasTensorMemory, py::arg("capability"),
        "Whether a CUDA target has tensor memory (true if unknown: 0).");
  m.def("target_name", &targetName, py::arg("capability"),
        "sm_90a, sm_100a, ... for a compute capability.");
  m.def("storage_unavailable", &storageUnavailable, py::arg("storage"),
        py::arg("capability"),
        "Why the storage cannot be used on the target; empty when it can.");
  m.def("stored_element_bits", &storedElementBits, py::arg("kind"),
        py::arg("bit_width"),
        "Bits one element occupies in memory (pointers 64, i1 8).");
  m.def("has_buffer_dimension", &hasBufferDimension, py::arg("buffer"),
        "False for a TMEM buffer written as one [M, N] tile.");
  m.def("plan", &plan, py::arg("spec"), py::arg("buffers"),
        py::arg("tree") = std::nullopt,
        "Plans one storage alias spec; problems are in Plan.diagnostics.");
  m.def("slot_of", &slotOf, py::arg("view"), py::arg("index"),
        "The slot buffer `index` occupies in the view.");
  m.def("view_from_placement", &viewFromPlacement, py::arg("buffer"),
        py::arg("offset"), py::arg("stride"), py::arg("group_size"),
        py::arg("region_size"), "Rebuilds a view from a placement.");
  m.def("check_view", &checkView, py::arg("view"), py::arg("buffer"),
        py::arg("buffer_index"), py::arg("region_size"),
        "The planner's self-check of one view; empty when sound.");
  m.def("describe", &describe, py::arg("plan"), py::arg("buffers"),
        "A memory map of the plan, one line per buffer.");
}

} // namespace

PYBIND11_MODULE(_planner, m) {
  m.doc() = "TLX storage alias planner (native half of tlx.planner).";
  bindEnums(m);
  bindInputs(m);
  bindOutputs(m);
  bindFunctions(m);
}
