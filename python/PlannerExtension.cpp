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
  py::enum_<LayoutFamily>(m, "LayoutFamily")
      .value("GROUP_MAJOR", LayoutFamily::GroupMajor)
      .value("NODE_BY_NODE", LayoutFamily::NodeByNode)
      .value("BEST", LayoutFamily::Best);
  py::enum_<PaddingKind>(m, "PaddingKind")
      .value("ALIGNED_START", PaddingKind::AlignedStart)
      .value("LAYOUT", PaddingKind::Layout)
      .value("REGION_ROUNDING", PaddingKind::RegionRounding)
      .value("EXPLICIT_SIZE", PaddingKind::ExplicitSize)
      .value("UNSHARED", PaddingKind::Unshared);
  py::enum_<IndexOpcode>(m, "IndexOpcode")
      .value("DIVIDE_UNSIGNED", IndexOpcode::DivideUnsigned)
      .value("REMAINDER_UNSIGNED", IndexOpcode::RemainderUnsigned)
      .value("MULTIPLY", IndexOpcode::Multiply)
      .value("ADD", IndexOpcode::Add);
  py::enum_<IndexOperand::Kind>(m, "IndexOperandKind")
      .value("BUFFER_INDEX", IndexOperand::Kind::BufferIndex)
      .value("CONSTANT", IndexOperand::Kind::Constant)
      .value("RESULT", IndexOperand::Kind::Result);
  py::enum_<ViewForm>(m, "ViewForm")
      .value("SLOTS", ViewForm::Slots)
      .value("SLICED_ROWS", ViewForm::SlicedRows)
      .value("INDEXED_ROW", ViewForm::IndexedRow)
      .value("RUNTIME_ROW", ViewForm::RuntimeRow)
      .value("SELECTED_ROWS", ViewForm::SelectedRows);
  py::enum_<BackingKind>(m, "BackingKind")
      .value("SHARED_BYTES", BackingKind::SharedBytes)
      .value("TENSOR_MEMORY_WORDS", BackingKind::TensorMemoryWords);
  py::enum_<DiagnosticKind>(m, "DiagnosticKind")
      .value("NO_BUFFERS", DiagnosticKind::NoBuffers)
      .value("STORAGE_UNAVAILABLE", DiagnosticKind::StorageUnavailable)
      .value("BAD_SHAPE", DiagnosticKind::BadShape)
      .value("BAD_ELEMENT_BITS", DiagnosticKind::BadElementBits)
      .value("STORAGE_MISMATCH", DiagnosticKind::StorageMismatch)
      .value("LAYOUT_STORAGE_MISMATCH", DiagnosticKind::LayoutStorageMismatch)
      .value("BAD_TMEM_SHAPE", DiagnosticKind::BadTmemShape)
      .value("BAD_BLOCK_M", DiagnosticKind::BadBlockM)
      .value("BAD_SWIZZLE", DiagnosticKind::BadSwizzle)
      .value("BAD_CTA_SPLIT", DiagnosticKind::BadCtaSplit)
      .value("SMEM_CTA_SPLIT", DiagnosticKind::SmemCtaSplit)
      .value("CTA_SPLIT_MISMATCH", DiagnosticKind::CtaSplitMismatch)
      .value("TREE_INDEX_OUT_OF_RANGE", DiagnosticKind::TreeIndexOutOfRange)
      .value("DUPLICATE_TREE_ELEMENT", DiagnosticKind::DuplicateTreeElement)
      .value("BAD_GROUP_SIZE", DiagnosticKind::BadGroupSize)
      .value("EMPTY_GROUP", DiagnosticKind::EmptyGroup)
      .value("COUNT_NOT_MULTIPLE_OF_GROUP_SIZE",
             DiagnosticKind::CountNotMultipleOfGroupSize)
      .value("FORGOTTEN_SUB_TILES", DiagnosticKind::ForgottenSubTiles)
      .value("NOT_IN_TREE", DiagnosticKind::NotInTree)
      .value("BAD_EXPLICIT_SIZE", DiagnosticKind::BadExplicitSize)
      .value("EXPLICIT_SIZE_TOO_SMALL", DiagnosticKind::ExplicitSizeTooSmall)
      .value("EXPLICIT_SIZE_NOT_USABLE", DiagnosticKind::ExplicitSizeNotUsable)
      .value("TOO_MANY_COLUMNS", DiagnosticKind::TooManyColumns)
      .value("OVER_SMEM_LIMIT", DiagnosticKind::OverSmemLimit)
      .value("UNSOUND_VIEW", DiagnosticKind::UnsoundView)
      .value("OVER_STORAGE_BUDGET", DiagnosticKind::OverStorageBudget)
      .value("NO_OVERLAP_TREE", DiagnosticKind::NoOverlapTree)
      .value("PHASES_DISAGREE", DiagnosticKind::PhasesDisagree)
      .value("PHASE_LIFETIME_OVERLAP", DiagnosticKind::PhaseLifetimeOverlap)
      .value("EXPLICIT_SIZE_MISALIGNED",
             DiagnosticKind::ExplicitSizeMisaligned);
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
      .def_readwrite("capability", &Spec::capability)
      .def_readwrite("whole_views", &Spec::wholeViews)
      .def_readwrite("offset_form", &Spec::offsetForm)
      .def_readwrite("group_stride_form", &Spec::groupStrideForm);
}

void bindOutputs(py::module_ &m) {
  py::class_<Diagnostic>(m, "Diagnostic")
      .def(py::init<>())
      .def_readwrite("severity", &Diagnostic::severity)
      .def_readwrite("kind", &Diagnostic::kind)
      .def_readwrite("buffer", &Diagnostic::buffer)
      .def_readwrite("buffers", &Diagnostic::buffers)
      .def_readwrite("numbers", &Diagnostic::numbers)
      .def_readwrite("message", &Diagnostic::message);
  py::class_<View>(m, "View")
      .def(py::init<>())
      .def_readwrite("buffer_size", &View::bufferSize)
      .def_readwrite("alignment", &View::alignment)
      .def_readwrite("group_size", &View::groupSize)
      .def_readwrite("offset", &View::offset)
      .def_readwrite("base", &View::base)
      .def_readwrite("form", &View::form)
      .def_readwrite("period", &View::period)
      .def_readwrite("scale", &View::scale)
      .def_readwrite("offset_slots", &View::offsetSlots)
      .def_readwrite("step", &View::step)
      .def_readwrite("shape", &View::shape)
      .def_readwrite("indexed", &View::indexed)
      .def_readwrite("group_stride", &View::groupStride)
      .def_readwrite("group_starts", &View::groupStarts)
      .def_readwrite("group_form", &View::groupForm)
      .def("per_group", &View::perGroup,
           "Whether each buffer group is a view of its own.");
  py::class_<IndexOperand>(m, "IndexOperand")
      .def(py::init<>())
      .def_readwrite("kind", &IndexOperand::kind)
      .def_readwrite("value", &IndexOperand::value);
  py::class_<IndexOperation>(m, "IndexOperation")
      .def(py::init<>())
      .def_readwrite("opcode", &IndexOperation::opcode)
      .def_readwrite("lhs", &IndexOperation::lhs)
      .def_readwrite("rhs", &IndexOperation::rhs);
  py::class_<IndexProgram>(m, "IndexProgram")
      .def(py::init<>())
      .def_readwrite("operations", &IndexProgram::operations)
      .def_readwrite("result", &IndexProgram::result)
      .def_readwrite("row", &IndexProgram::row)
      .def_readwrite("group", &IndexProgram::group);
  py::class_<Placement>(m, "Placement")
      .def(py::init<>())
      .def_readwrite("slots", &Placement::slots)
      .def_readwrite("period", &Placement::period)
      .def_readwrite("scale", &Placement::scale)
      .def_readwrite("offset_slots", &Placement::offsetSlots)
      .def_readwrite("step", &Placement::step)
      .def_readwrite("base", &Placement::base)
      .def_readwrite("form", &Placement::form)
      .def_readwrite("group_stride", &Placement::groupStride)
      .def_readwrite("group_starts", &Placement::groupStarts)
      .def_readwrite("group_form", &Placement::groupForm);
  py::class_<Padding>(m, "Padding")
      .def(py::init<>())
      .def_readwrite("kind", &Padding::kind)
      .def_readwrite("buffers", &Padding::buffers)
      .def_readwrite("bytes", &Padding::bytes)
      .def_readwrite("reason", &Padding::reason);
  py::class_<Plan>(m, "Plan")
      .def(py::init<>())
      .def_readwrite("storage", &Plan::storage)
      .def_readwrite("size_bytes", &Plan::sizeBytes)
      .def_readwrite("region_size", &Plan::regionSize)
      .def_readwrite("backing_kind", &Plan::backingKind)
      .def_readwrite("backing_element_bits", &Plan::backingElementBits)
      .def_readwrite("backing_shape", &Plan::backingShape)
      .def_readwrite("backing_block", &Plan::backingBlock)
      .def_readwrite("alignment", &Plan::alignment)
      .def_readwrite("ideal_bytes", &Plan::idealBytes)
      .def_readwrite("padding_bytes", &Plan::paddingBytes)
      .def_readwrite("padding", &Plan::padding)
      .def_readwrite("layout", &Plan::layout)
      .def_readwrite("offset_views_region", &Plan::offsetViewsRegion)
      .def_readwrite("views", &Plan::views)
      .def_readwrite("phases", &Plan::phases)
      .def_readwrite("diagnostics", &Plan::diagnostics);
  py::class_<PhaseOverlap>(m, "PhaseOverlap")
      .def(py::init<>())
      .def_readwrite("first", &PhaseOverlap::first)
      .def_readwrite("second", &PhaseOverlap::second);
  py::class_<PhaseUse>(m, "PhaseUse")
      .def(py::init<>())
      .def_readwrite("sequence", &PhaseUse::sequence)
      .def_readwrite("position", &PhaseUse::position);
}

void bindReport(py::module_ &m) {
  py::class_<Extent>(m, "Extent")
      .def(py::init<>())
      .def_readwrite("user", &Extent::user)
      .def_readwrite("index", &Extent::index)
      .def_readwrite("buffer_group", &Extent::bufferGroup)
      .def_readwrite("start", &Extent::start)
      .def_readwrite("end", &Extent::end);
  py::class_<Stride>(m, "Stride")
      .def(py::init<>())
      .def_readwrite("within_period", &Stride::withinPeriod)
      .def_readwrite("after_period", &Stride::afterPeriod)
      .def_readwrite("period", &Stride::period);
  py::class_<Segment>(m, "Segment")
      .def(py::init<>())
      .def_readwrite("start", &Segment::start)
      .def_readwrite("end", &Segment::end)
      .def_readwrite("buffer_group", &Segment::bufferGroup)
      .def_readwrite("occupants", &Segment::occupants);
  py::class_<Split>(m, "Split")
      .def(py::init<>())
      .def_readwrite("shared_node", &Split::sharedNode)
      .def_readwrite("buffers", &Split::buffers)
      .def_readwrite("shared_with", &Split::sharedWith)
      .def_readwrite("own_region", &Split::ownRegion)
      .def_readwrite("region_units", &Split::regionUnits)
      .def_readwrite("own_region_units", &Split::ownRegionUnits)
      .def_readwrite("total_units", &Split::totalUnits)
      .def_readwrite("budget_units", &Split::budgetUnits)
      .def_readwrite("message", &Split::message);
  m.def("buffer_extents", &bufferExtents, py::arg("plan"), py::arg("buffers"),
        "Every buffer of every user of a plan: units [start, end).");
  m.def("buffer_stride", &bufferStride, py::arg("view"),
        "The distance between consecutive buffers of a view.");
  m.def("sharing_segments", &sharingSegments, py::arg("plan"),
        py::arg("extents"), "The region cut where its occupants change.");
  m.def("storage_budget", &storageBudget, py::arg("storage"),
        py::arg("capability"), py::arg("ctas_per_sm") = 1,
        "SMEM bytes or TMEM columns one CTA has on the target.");
  m.def("over_storage_budget", &overStorageBudget, py::arg("storage"),
        py::arg("capability"), py::arg("used_units"),
        py::arg("ctas_per_sm") = 1,
        "The error when a kernel's regions of a storage exceed the budget.");
  m.def("advise_splits", &adviseSplits, py::arg("spec"), py::arg("buffers"),
        py::arg("tree"), py::arg("other_regions_units"),
        "What the kernel would use if buffers stopped sharing.");
}

void bindFunctions(py::module_ &m) {
  m.attr("TMEM_COLUMNS") = kTmemColumns;
  m.attr("TMEM_LANES") = kTmemLanes;
  m.def("buffer_size", &bufferSize, py::arg("buffer"),
        "Bytes (SMEM) or 32-bit columns (TMEM) of one buffer.");
  m.def("required_alignment", &requiredAlignment, py::arg("buffer"),
        "Alignment the buffer needs (bytes for SMEM, columns for TMEM).");
  m.def("smem_limit_for_target", &smemLimitForTarget, py::arg("capability"),
        "Shared memory one CTA may use on a CUDA target (227 KiB if unknown).");
  m.def("cta_split_of_cga_bases", &ctaSplitOfCgaBases, py::arg("bases"),
        "The CTA split (along M, along N) of a 2-D CGA layout's bases.");
  m.def("needs_whole_views", &needsWholeViews, py::arg("major"),
        py::arg("minor"),
        "Whether Triton major.minor needs whole views (Spec.whole_views).");
  m.def("offset_view_form", &offsetViewForm, py::arg("major"), py::arg("minor"),
        "The form of a view at a byte offset on Triton major.minor "
        "(Spec.offset_form).");
  m.def("group_stride_view_form", &groupStrideViewForm, py::arg("major"),
        py::arg("minor"),
        "The form of a view whose buffer groups are any multiple of its "
        "alignment apart on Triton major.minor (Spec.group_stride_form).");
  m.def("group_stride_form_of", &groupStrideFormOf, py::arg("offset_form"),
        "The group stride form of the Triton whose offset form is "
        "offset_form (what triton-opt's passes plan with).");
  m.def("view_start", &viewStart, py::arg("view"), py::arg("index"),
        "Where the view that holds buffer index starts in the region.");
  m.def("group_view_starts", &groupViewStarts, py::arg("view"),
        py::arg("count"),
        "Where the view of each buffer group of a user of count buffers "
        "starts (a view per buffer group; else its base).");
  m.def("buffer_start", &bufferStart, py::arg("view"), py::arg("index"),
        "Where buffer index of the view starts in the region, in units.");
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
        py::arg("tree") = std::nullopt, py::arg("family") = LayoutFamily::Best,
        "Plans one storage alias spec; problems are in Plan.diagnostics.");
  m.def("plan_phases", &planPhases, py::arg("spec"), py::arg("buffers"),
        py::arg("phases"), py::arg("family") = LayoutFamily::Best,
        "Plans a spec whose buffers are used in phases, one tree each.");
  m.def("phase_overlaps", &phaseOverlaps, py::arg("plan"), py::arg("buffers"),
        "Users of different phases only whose buffers share units.");
  m.def("check_phase_lifetimes", &checkPhaseLifetimes, py::arg("plan"),
        py::arg("buffers"), py::arg("uses"),
        "The lifetime check between phases, from each user's uses.");
  m.def("slot_of", &slotOf, py::arg("view"), py::arg("index"),
        "The slot buffer `index` occupies in the view.");
  m.def("index_program_of", &indexProgramOf, py::arg("view"),
        "The view's slot arithmetic with the identity steps dropped.");
  m.def("evaluate_index_program", &evaluateIndexProgram, py::arg("program"),
        py::arg("index"), "What an index program computes for an index.");
  m.def("evaluate_index_program_row", &evaluateIndexProgramRow,
        py::arg("program"), py::arg("index"),
        "The backing row an index program's `row` gives for an index.");
  m.def("placement_of", &placementOf, py::arg("view"),
        "The slot coefficients of a view.");
  m.def("view_of", &viewOf, py::arg("buffer"), py::arg("placement"),
        "The view of a buffer a placement gives.");
  m.def("check_view", &checkView, py::arg("view"), py::arg("buffer"),
        py::arg("buffer_index"), py::arg("region_size"),
        "The planner's self-check of one view; empty when sound.");
  m.def("format_diagnostic", &formatDiagnostic, py::arg("diagnostic"),
        py::arg("spec_name"), py::arg("buffer_names"),
        "A diagnostic's message with the spec and buffers named.");
  m.def("describe", &describe, py::arg("plan"), py::arg("buffers"),
        py::arg("spec_name") = "",
        "A memory map of the plan, one line per buffer.");
}

} // namespace

PYBIND11_MODULE(_planner, m) {
  m.doc() = "TLX storage alias planner (native half of tlx.planner).";
  bindEnums(m);
  bindInputs(m);
  bindOutputs(m);
  bindReport(m);
  bindFunctions(m);
}
