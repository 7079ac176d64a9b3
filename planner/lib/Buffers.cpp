//===- Buffers.cpp - Sizes, alignment, targets and buffer checks ---------===//
//
// Rules 1 and 2 of tlx/Planner/Planner.h, what targets and Triton releases
// have, the checks of one buffer, and the text helpers diagnostics are built
// with.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>

namespace tlx::planner {
namespace detail {
namespace {

/// One NVMMA swizzle phase spans 16 bytes of a 128-byte row.
constexpr int64_t kNvmmaPhaseBytes = 16;

bool hasValidShape(const Buffer &buffer) {
  return !buffer.shape.empty() &&
         std::all_of(buffer.shape.begin(), buffer.shape.end(),
                     [](int64_t dim) { return dim > 0; });
}

/// TMEM rows one CTA holds of one buffer (M of [num, M, N] or [M, N],
/// divided by the CTA split).
int64_t tmemBufferRows(const Buffer &buffer) {
  const std::vector<int64_t> &shape = buffer.shape;
  int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  return ceilDiv(rows, std::max<int64_t>(buffer.layout.ctaSplitM, 1));
}

/// TMEM columns (elements) one CTA holds of one buffer.
int64_t tmemBufferColumns(const Buffer &buffer) {
  int64_t columns = buffer.shape.size() >= 2 ? buffer.shape.back() : 1;
  return ceilDiv(columns, std::max<int64_t>(buffer.layout.ctaSplitN, 1));
}

bool isCtaSplit(const Layout &layout) {
  return layout.ctaSplitM != 1 || layout.ctaSplitN != 1;
}

std::string splitText(const Layout &layout) {
  return std::to_string(layout.ctaSplitM) + " x " +
         std::to_string(layout.ctaSplitN);
}

std::string layoutKindName(LayoutKind kind) {
  switch (kind) {
  case LayoutKind::NvmmaShared:
    return "nvmma_shared";
  case LayoutKind::SwizzledShared:
    return "swizzled_shared";
  case LayoutKind::TensorMemory:
    return "tensor_memory";
  }
  return "unknown";
}

/// Checks one buffer on its own and against the spec's storage.
void validateBuffer(const Spec &spec, const Buffer &buffer, int index,
                    std::vector<Diagnostic> &diagnostics) {
  // Messages are built only when a check fails: planning stays cheap.
  auto label = [&] { return "buffer " + bufferRef(index); };
  auto fail = [&](DiagnosticKind kind, std::vector<int64_t> numbers,
                  std::string message) {
    diagnostics.push_back(
        error(kind, index, {index}, std::move(numbers), std::move(message)));
  };
  if (buffer.shape.empty())
    fail(DiagnosticKind::BadShape, {},
         label() + " has shape []; it needs a leading buffer dimension");
  else if (!hasValidShape(buffer))
    fail(DiagnosticKind::BadShape, buffer.shape,
         label() + " has shape " + shapeText(buffer.shape) +
             "; every dimension must be positive");
  if (buffer.elementBits <= 0)
    fail(DiagnosticKind::BadElementBits, {buffer.elementBits},
         label() + " has element_bits=" + std::to_string(buffer.elementBits) +
             "; it must be positive");
  if (buffer.storage != spec.storage)
    fail(DiagnosticKind::StorageMismatch, {},
         label() + " is in " + storageName(buffer.storage) + " but spec " +
             specRef() + " is " + storageName(spec.storage));

  bool tmem = buffer.storage == Storage::Tmem;
  const Layout &layout = buffer.layout;
  if (tmem != (layout.kind == LayoutKind::TensorMemory))
    fail(DiagnosticKind::LayoutStorageMismatch, {},
         label() + " is in " + storageName(buffer.storage) + " but has a " +
             layoutKindName(layout.kind) + " layout; " +
             (tmem ? "TMEM buffers need a tensor_memory layout"
                   : "SMEM buffers need a shared memory layout"));
  if (tmem && buffer.shape.size() != 2 && buffer.shape.size() != 3)
    fail(DiagnosticKind::BadTmemShape, buffer.shape,
         "TMEM " + label() + " has shape " + shapeText(buffer.shape) +
             "; expected [num, M, N] or one [M, N] buffer");
  if (tmem && layout.blockM != kTmemHalfLanes && layout.blockM != kTmemLanes)
    fail(DiagnosticKind::BadBlockM, {layout.blockM},
         "TMEM " + label() + " has blockM=" + std::to_string(layout.blockM) +
             "; expected 64 or 128");
  if (layout.ctaSplitM < 1 || layout.ctaSplitN < 1)
    fail(DiagnosticKind::BadCtaSplit, {layout.ctaSplitM, layout.ctaSplitN},
         label() + " has a CTA split of " + splitText(layout) +
             "; both must be at least 1");
  else if (!tmem && isCtaSplit(layout))
    fail(DiagnosticKind::SmemCtaSplit, {layout.ctaSplitM, layout.ctaSplitN},
         label() + " is split over " + splitText(layout) +
             " CTAs; aliasing shared memory split over the CTAs of a "
             "cluster is not supported (only TMEM tiles may be split)");
  else if (tmem && buffer.shape.size() >= 2 && hasValidShape(buffer) &&
           (buffer.shape[buffer.shape.size() - 2] % layout.ctaSplitM != 0 ||
            buffer.shape.back() % layout.ctaSplitN != 0))
    fail(DiagnosticKind::BadCtaSplit, {layout.ctaSplitM, layout.ctaSplitN},
         "TMEM " + label() + " has shape " + shapeText(buffer.shape) +
             ", which its CTA split of " + splitText(layout) +
             " does not divide");
  int64_t swizzle = layout.swizzleBytes;
  if (layout.kind == LayoutKind::NvmmaShared && swizzle != 0 && swizzle != 32 &&
      swizzle != 64 && swizzle != 128)
    fail(DiagnosticKind::BadSwizzle, {swizzle},
         label() + " has an nvmma_shared layout with a " +
             std::to_string(swizzle) +
             "-byte swizzle; expected 0, 32, 64 or 128");
}

} // namespace

std::string number(int64_t value) {
  return value >= kSaturated ? "more than 2^62" : std::to_string(value);
}

std::string storageName(Storage storage) {
  return storage == Storage::Smem ? "smem" : "tmem";
}

std::string unitName(Storage storage) {
  return storage == Storage::Smem ? "bytes" : "columns";
}

std::string amount(int64_t value, Storage storage) {
  std::string unit = unitName(storage);
  if (value == 1)
    unit.pop_back();
  return number(value) + " " + unit;
}

std::string sized(int64_t value, Storage storage) {
  return number(value) + (storage == Storage::Smem ? "-byte" : "-column");
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string bufferRef(int index) {
  return "{buffer:" + std::to_string(index) + "}";
}

Diagnostic error(DiagnosticKind kind, int buffer, std::vector<int> buffers,
                 std::vector<int64_t> numbers, std::string message) {
  return {
      Severity::Error,   kind, buffer, std::move(buffers), std::move(numbers),
      std::move(message)};
}

Diagnostic warning(DiagnosticKind kind, int buffer, std::vector<int> buffers,
                   std::vector<int64_t> numbers, std::string message) {
  return {
      Severity::Warning, kind, buffer, std::move(buffers), std::move(numbers),
      std::move(message)};
}

bool hasError(const std::vector<Diagnostic> &diagnostics) {
  return std::any_of(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

int64_t bufferCount(const Buffer &buffer) {
  if (!hasValidShape(buffer))
    return 0;
  return hasBufferDimension(buffer) ? buffer.shape.front() : 1;
}

void validateBuffers(const Spec &spec, const std::vector<Buffer> &buffers,
                     std::vector<Diagnostic> &diagnostics) {
  for (size_t i = 0; i < buffers.size(); ++i)
    validateBuffer(spec, buffers[i], static_cast<int>(i), diagnostics);
  // One backing allocation holds every user: they split over CTAs alike.
  for (size_t i = 1; i < buffers.size(); ++i) {
    const Layout &first = buffers.front().layout;
    const Layout &layout = buffers[i].layout;
    if (layout.ctaSplitM == first.ctaSplitM &&
        layout.ctaSplitN == first.ctaSplitN)
      continue;
    int index = static_cast<int>(i);
    diagnostics.push_back(error(
        DiagnosticKind::CtaSplitMismatch, index, {index, 0},
        {layout.ctaSplitM, layout.ctaSplitN, first.ctaSplitM, first.ctaSplitN},
        "buffer " + bufferRef(index) + " is split over " + splitText(layout) +
            " CTAs but buffer " + bufferRef(0) + " over " + splitText(first) +
            "; the buffers of spec " + specRef() +
            " share one allocation and must be split alike"));
  }
}

} // namespace detail

using namespace detail;

std::array<int64_t, 2>
ctaSplitOfCgaBases(const std::vector<std::vector<int64_t>> &bases) {
  std::array<int64_t, 2> split = {1, 1};
  for (const std::vector<int64_t> &basis : bases)
    for (size_t dim = 0; dim < split.size() && dim < basis.size(); ++dim)
      if (basis[dim] != 0)
        split[dim] *= 2;
  return split;
}

int64_t storedElementBits(ElementKind kind, int64_t bitWidth) {
  constexpr int64_t kPointerBits = 64;
  constexpr int64_t kByteBits = 8;
  if (kind == ElementKind::Pointer)
    return kPointerBits;
  // Triton keeps booleans in memory as bytes.
  if (kind == ElementKind::Integer && bitWidth == 1)
    return kByteBits;
  return bitWidth;
}

bool hasBufferDimension(const Buffer &buffer) {
  return buffer.storage != Storage::Tmem || buffer.shape.size() != 2;
}

int64_t bufferSize(const Buffer &buffer) {
  if (buffer.elementBits <= 0 || !hasValidShape(buffer))
    return 0;
  const std::vector<int64_t> &shape = buffer.shape;
  if (buffer.storage == Storage::Smem) {
    int64_t bits = buffer.elementBits;
    for (size_t i = 1; i < shape.size(); ++i)
      bits = satMul(bits, shape[i]);
    return ceilDiv(bits, 8);
  }
  int64_t rows = tmemBufferRows(buffer);
  int64_t columns = tmemBufferColumns(buffer);
  if (buffer.elementBits < kTmemColumnBits && !buffer.layout.unpacked)
    columns = ceilDiv(satMul(columns, buffer.elementBits), kTmemColumnBits);
  if (rows > kTmemLanes)
    columns = satMul(columns, ceilDiv(rows, kTmemLanes));
  return columns;
}

int64_t requiredAlignment(const Buffer &buffer) {
  if (buffer.storage == Storage::Tmem)
    return 1;
  if (buffer.layout.kind != LayoutKind::NvmmaShared)
    return kSmemMinAlignment;
  int64_t maxPhase = buffer.layout.swizzleBytes / kNvmmaPhaseBytes;
  return std::max(kSmemMinAlignment, kSmemMinAlignment * maxPhase);
}

int64_t smemLimitForTarget(int capability) {
  // CUDA programming guide, "Technical Specifications per Compute Capability":
  // the most shared memory one thread block may opt into.
  constexpr int64_t KiB = 1024;
  switch (capability) {
  case 80:
  case 87:
    return 163 * KiB;
  case 86:
  case 89:
  case 120:
    return 99 * KiB;
  default:
    return 227 * KiB;
  }
}

bool needsWholeViews(int major, int minor) { return major == 3 && minor == 8; }

// Measured on each wheel (tlx.compat.VIEW_FORMS): 3.9 reinterprets a
// subslice within its rows but refuses a result larger than an indexed
// row; 3.6 and 3.7 reinterpret an indexed row to any size but assert on a
// subslice of the rank-1 backing; 3.8 does neither.
ViewForm offsetViewForm(int major, int minor) {
  if (major > 3 || (major == 3 && minor >= 9))
    return ViewForm::SlicedRows;
  if (major == 3 && (minor == 6 || minor == 7))
    return ViewForm::IndexedRow;
  return ViewForm::Slots;
}

// Measured on each wheel (tlx.compat.VIEW_FORMS "runtime_row",
// "selected_rows", test/python/test_group_stride_forms.py): 3.6 and 3.7
// reinterpret a row indexed at run time to a group's slots; 3.9 refuses a
// result larger than its source but takes each group's sliced view chosen
// by scf.if; 3.8 keeps the byte size and has no view at a byte offset.
ViewForm groupStrideViewForm(int major, int minor) {
  return groupStrideFormOf(offsetViewForm(major, minor));
}

ViewForm groupStrideFormOf(ViewForm offsetForm) {
  switch (offsetForm) {
  case ViewForm::IndexedRow:
    return ViewForm::RuntimeRow;
  case ViewForm::SlicedRows:
    return ViewForm::SelectedRows;
  default:
    return ViewForm::Slots;
  }
}

const char *viewFormName(ViewForm form) {
  switch (form) {
  case ViewForm::Slots:
    return "slots";
  case ViewForm::SlicedRows:
    return "sliced_rows";
  case ViewForm::IndexedRow:
    return "indexed_row";
  case ViewForm::RuntimeRow:
    return "runtime_row";
  case ViewForm::SelectedRows:
    return "selected_rows";
  }
  return "slots";
}

bool hasTensorMemory(int capability) {
  // sm_100a, sm_101a (renamed sm_110a) and sm_103a; sm_120a has none.
  return capability == 0 || (capability >= 100 && capability < 120);
}

std::string targetName(int capability) {
  if (capability == 0)
    return "an unknown target";
  return "sm_" + std::to_string(capability) + "a";
}

std::string storageUnavailable(Storage storage, int capability) {
  if (storage != Storage::Tmem || hasTensorMemory(capability))
    return "";
  return "tensor memory (tmem) needs a Blackwell target (sm_100a or "
         "newer), but the kernel is compiled for " +
         targetName(capability);
}

std::string formatDiagnostic(const Diagnostic &diagnostic,
                             const std::string &specName,
                             const std::vector<std::string> &bufferNames) {
  const std::string &message = diagnostic.message;
  std::string text;
  text.reserve(message.size());
  static const std::string bufferPrefix = "{buffer:";
  for (size_t at = 0; at < message.size();) {
    if (message.compare(at, 6, "{spec}") == 0) {
      text += "\"" + specName + "\"";
      at += 6;
      continue;
    }
    if (message.compare(at, bufferPrefix.size(), bufferPrefix) == 0) {
      size_t close = message.find('}', at);
      int index = std::stoi(message.substr(at + bufferPrefix.size()));
      bool named = index >= 0 &&
                   static_cast<size_t>(index) < bufferNames.size() &&
                   !bufferNames[index].empty();
      text += "\"" +
              (named ? bufferNames[index] : "#" + std::to_string(index)) + "\"";
      at = close + 1;
      continue;
    }
    text += message[at++];
  }
  return text;
}

} // namespace tlx::planner
