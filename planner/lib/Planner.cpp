//===- Planner.cpp - plan(): checks, layout, region and recipe -----------===//
//
// Puts the rules of tlx/Planner/Planner.h together: checks the buffers and
// the tree, asks the layout search (Layout.cpp) where every buffer goes,
// sizes the region and the backing allocation, accounts for the padding,
// and checks every view it hands out.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <variant>

namespace tlx::planner {
namespace detail {
namespace {

/// Beyond this many buffers, the padding is not split into holes (that
/// enumerates every buffer).
constexpr int64_t kMaxAccountedBuffers = 4096;

/// What the layout needs: the end of its last buffer and the ideal
/// footprint, in the plan's unit.
struct Need {
  int64_t end = 0;
  int64_t ideal = 0;
  /// Where the tree's layout ended when every buffer got bytes of its own
  /// instead (Arrangement::sharedEnd); 0 otherwise.
  int64_t sharedEnd = 0;
};

/// A user placed outside any tree: at offset 0, its buffers one after the
/// other, each at its alignment.
View viewAlone(const Buffer &buffer) {
  View view;
  view.bufferSize = bufferSize(buffer);
  view.alignment = requiredAlignment(buffer);
  if (view.bufferSize > 0)
    view.scale = lcm(view.bufferSize, view.alignment) / view.bufferSize;
  return view;
}

/// TMEM rows: 64 when every user has M <= 64 per CTA and blockM 64, else
/// 128.
int64_t tmemRows(const std::vector<Buffer> &buffers) {
  bool half =
      !buffers.empty() &&
      std::all_of(buffers.begin(), buffers.end(), [](const Buffer &buffer) {
        const std::vector<int64_t> &shape = buffer.shape;
        int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
        return ceilDiv(rows, std::max<int64_t>(buffer.layout.ctaSplitM, 1)) <=
                   kTmemHalfLanes &&
               buffer.layout.blockM == kTmemHalfLanes;
      });
  return half ? kTmemHalfLanes : kTmemLanes;
}

std::string explicitLabel(int64_t explicitBytes) {
  return "buffer_size_bytes=" + std::to_string(explicitBytes) + " of spec " +
         specRef();
}

/// Validates an explicit SMEM size against the minimal region; returns the
/// region to use.
int64_t explicitSmemRegion(const Spec &spec, int64_t explicitBytes,
                           int64_t minimal, const std::vector<View> &views,
                           std::optional<int> misaligned,
                           std::vector<Diagnostic> &diagnostics) {
  if (explicitBytes < minimal && misaligned) {
    int index = *misaligned;
    int64_t alignment = views[index].alignment;
    diagnostics.push_back(
        error(DiagnosticKind::ExplicitSizeMisaligned, index, {index},
              {alignment, explicitBytes, minimal},
              "buffer " + bufferRef(index) + " needs a " +
                  sized(alignment, Storage::Smem) +
                  " alignment (its layout's swizzle), which no offset inside " +
                  explicitLabel(explicitBytes) +
                  " honours: the buffers would fit "
                  "it at 128-byte alignment, but the plan needs " +
                  amount(minimal, Storage::Smem)));
    return minimal;
  }
  if (explicitBytes < minimal) {
    diagnostics.push_back(error(
        DiagnosticKind::ExplicitSizeTooSmall, -1, {}, {explicitBytes, minimal},
        explicitLabel(explicitBytes) + " is too small: the plan needs " +
            amount(minimal, Storage::Smem)));
    return minimal;
  }
  bool usable = true;
  if (explicitBytes % kSmemRowBytes != 0) {
    diagnostics.push_back(error(
        DiagnosticKind::ExplicitSizeNotUsable, -1, {},
        {explicitBytes, kSmemRowBytes},
        explicitLabel(explicitBytes) +
            " is not a multiple of 128 bytes (the backing is [n, 128] x i8)"));
    usable = false;
  }
  for (size_t i = 0; spec.wholeViews && i < views.size(); ++i) {
    int64_t size = views[i].bufferSize;
    if (size <= 0 || explicitBytes % size == 0)
      continue;
    int index = static_cast<int>(i);
    diagnostics.push_back(error(
        DiagnosticKind::ExplicitSizeNotUsable, index, {index},
        {explicitBytes, size},
        explicitLabel(explicitBytes) + " is not a whole number of buffer " +
            bufferRef(index) + "'s " + sized(size, Storage::Smem) +
            " buffers; its view must cover the region exactly"));
    usable = false;
  }
  return usable ? explicitBytes : minimal;
}

/// Validates an explicit TMEM size (bytes = rows x columns x 4); returns the
/// columns to use.
int64_t explicitTmemColumns(int64_t explicitBytes, int64_t minimalColumns,
                            int64_t rows,
                            std::vector<Diagnostic> &diagnostics) {
  int64_t rowBytes = rows * kTmemColumnBytes;
  int64_t minimalBytes = satMul(minimalColumns, rowBytes);
  if (explicitBytes < minimalBytes) {
    diagnostics.push_back(
        error(DiagnosticKind::ExplicitSizeTooSmall, -1, {},
              {explicitBytes, minimalBytes, minimalColumns, rows},
              explicitLabel(explicitBytes) + " is too small: the plan needs " +
                  number(minimalBytes) + " bytes (" + number(minimalColumns) +
                  " columns x " + std::to_string(rows) + " rows x 4 bytes)"));
    return minimalColumns;
  }
  int64_t columns = explicitBytes / rowBytes;
  if (explicitBytes % rowBytes != 0 || !isPowerOfTwo(columns)) {
    int64_t usable =
        satMul(nextPowerOfTwo(ceilDiv(explicitBytes, rowBytes)), rowBytes);
    diagnostics.push_back(error(
        DiagnosticKind::ExplicitSizeNotUsable, -1, {}, {explicitBytes, usable},
        explicitLabel(explicitBytes) +
            " is not a power-of-two number of TMEM columns of " +
            std::to_string(rows) + " rows x 4 bytes; use " + number(usable) +
            " bytes"));
    return minimalColumns;
  }
  return columns;
}

/// Rule 5 for SMEM: fills the region and the backing of `plan`.
void sizeSmemRegion(const Spec &spec, int64_t minimal, bool hasExplicit,
                    std::optional<int> misaligned, Plan &plan) {
  int64_t region =
      hasExplicit ? explicitSmemRegion(spec, *spec.explicitSizeBytes, minimal,
                                       plan.views, misaligned, plan.diagnostics)
                  : minimal;
  int64_t limit = smemLimitForTarget(spec.capability);
  if (region > limit)
    plan.diagnostics.push_back(
        error(DiagnosticKind::OverSmemLimit, -1, {}, {region, limit},
              std::string("spec ") + specRef() + " needs " +
                  amount(region, Storage::Smem) +
                  " of shared memory, more than the target's limit of " +
                  std::to_string(limit) + " bytes"));
  plan.regionSize = region;
  plan.sizeBytes = region;
  plan.backingKind = BackingKind::SharedBytes;
  plan.backingElementBits = 8;
  plan.backingShape = {region / kSmemRowBytes, kSmemRowBytes};
  plan.backingBlock = plan.backingShape;
  plan.alignment = kSmemMinAlignment;
  for (const View &view : plan.views)
    plan.alignment = std::max(plan.alignment, view.alignment);
}

/// Rule 5 for TMEM: fills the region and the backing of `plan`.
void sizeTmemRegion(const Spec &spec, const std::vector<Buffer> &buffers,
                    int64_t minimalColumns, int64_t end, bool hasExplicit,
                    Plan &plan) {
  int64_t rows = tmemRows(buffers);
  int64_t columns =
      hasExplicit ? explicitTmemColumns(*spec.explicitSizeBytes, minimalColumns,
                                        rows, plan.diagnostics)
                  : minimalColumns;
  if (columns > kTmemColumns) {
    std::string rounded =
        !hasExplicit && end != columns
            ? " (" + number(end) + " rounded up to a power of two)"
            : "";
    plan.diagnostics.push_back(
        error(DiagnosticKind::TooManyColumns, -1, {}, {columns, kTmemColumns},
              std::string("spec ") + specRef() + " needs " +
                  amount(columns, Storage::Tmem) + " of tensor memory" +
                  rounded + ", more than the 512 columns TMEM has"));
  }
  for (size_t i = 0; spec.wholeViews && i < plan.views.size(); ++i) {
    int64_t size = plan.views[i].bufferSize;
    if (size <= 0 || columns % size == 0)
      continue;
    int index = static_cast<int>(i);
    plan.diagnostics.push_back(
        error(DiagnosticKind::UnsoundView, index, {index}, {columns, size},
              "the region of " + amount(columns, Storage::Tmem) +
                  " is not a whole number of buffer " + bufferRef(index) +
                  "'s " + sized(size, Storage::Tmem) +
                  " buffers (a view must cover the region exactly)"));
  }
  plan.regionSize = columns;
  plan.sizeBytes = satMul(columns, rows * kTmemColumnBytes);
  plan.backingKind = BackingKind::TensorMemoryWords;
  plan.backingElementBits = kTmemColumnBits;
  plan.backingBlock = {rows, columns};
  plan.backingShape = plan.backingBlock;
  if (!buffers.empty())
    plan.backingShape = {satMul(rows, buffers.front().layout.ctaSplitM),
                         satMul(columns, buffers.front().layout.ctaSplitN)};
  plan.alignment = 1;
}

/// Bytes of `units` of the plan's unit (TMEM: columns of every row).
int64_t bytesOf(const Plan &plan, int64_t units) {
  if (plan.storage == Storage::Smem)
    return units;
  return satMul(units, plan.backingBlock.front() * kTmemColumnBytes);
}

/// The holes between buffers, each attributed to the buffer after it (which
/// had to start at a multiple of its size or alignment), summed per pair of
/// buffers around them, in the plan's unit.
std::vector<Padding> holes(const Plan &plan,
                           const std::vector<Buffer> &buffers) {
  struct Interval {
    int64_t start, end;
    int buffer;
  };
  std::vector<Interval> intervals;
  int64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    total = satAdd(total, bufferCount(buffers[i]));
  if (total > kMaxAccountedBuffers)
    return {};
  for (size_t i = 0; i < buffers.size(); ++i) {
    const View &view = plan.views[i];
    for (int64_t index = 0; index < bufferCount(buffers[i]); ++index) {
      int64_t start = bufferStart(view, index);
      intervals.push_back({start, start + view.bufferSize, int(i)});
    }
  }
  std::sort(
      intervals.begin(), intervals.end(),
      [](const Interval &a, const Interval &b) { return a.start < b.start; });
  std::map<std::pair<int, int>, int64_t> byPair;
  int64_t covered = 0;
  int previous = -1;
  for (const Interval &interval : intervals) {
    if (interval.start > covered)
      byPair[{interval.buffer, previous}] += interval.start - covered;
    if (interval.end > covered) {
      covered = interval.end;
      previous = interval.buffer;
    }
  }
  std::vector<Padding> result;
  for (const auto &[pair, units] : byPair) {
    auto [buffer, before] = pair;
    const View &view = plan.views[buffer];
    // A view from a byte offset starts at its alignment, not its size.
    bool bySize = view.base == 0 && view.bufferSize >= view.alignment;
    Padding share;
    share.kind = PaddingKind::AlignedStart;
    share.bytes = bytesOf(plan, units);
    share.buffers = {buffer};
    share.reason =
        "buffer " + bufferRef(buffer) + " starts at a multiple of its " +
        (bySize ? sized(view.bufferSize, plan.storage) + " size"
                : sized(view.alignment, plan.storage) + " alignment");
    if (before >= 0) {
      share.buffers.push_back(before);
      share.reason += " after buffer " + bufferRef(before) + " ends elsewhere";
    }
    result.push_back(std::move(share));
  }
  return result;
}

/// Splits `plan.paddingBytes` into its shares: the holes between buffers,
/// the region's rounding after the last one, an explicit size beyond the
/// minimal region, and what is left (partial overlaps).
void accountPadding(const Spec &spec, const std::vector<Buffer> &buffers,
                    const Need &need, int64_t minimal, Plan &plan) {
  int64_t unit = plan.storage == Storage::Smem ? kSmemRowBytes : 1;
  std::vector<Padding> shares = holes(plan, buffers);
  int64_t accounted = 0;
  for (const Padding &share : shares)
    accounted = satAdd(accounted, share.bytes);
  int64_t rounding = bytesOf(plan, minimal - roundUp(need.end, unit));
  if (rounding > 0)
    shares.push_back(
        {PaddingKind::RegionRounding,
         {},
         rounding,
         plan.storage == Storage::Smem
             ? "the region is rounded up to a multiple of every buffer's "
               "size, so that each view covers it in whole slots (Triton 3.8 "
               "reinterprets only to equal sizes)"
             : "TMEM is allocated in a power of two of at least 32 columns"});
  int64_t explicitExtra = bytesOf(plan, plan.regionSize - minimal);
  if (spec.explicitSizeBytes && explicitExtra > 0)
    shares.push_back({PaddingKind::ExplicitSize,
                      {},
                      explicitExtra,
                      "buffer_size_bytes is larger than the plan needs"});
  int64_t rest = plan.paddingBytes - accounted -
                 std::max<int64_t>(rounding, 0) -
                 std::max<int64_t>(explicitExtra, 0);
  if (rest > 0 && need.sharedEnd > 0)
    shares.push_back(
        {PaddingKind::Unshared,
         {},
         rest,
         "sharing bytes as the tree says would need " +
             amount(roundUp(need.sharedEnd, unit), plan.storage) +
             " (buffers of different strides or alignments), so every "
             "buffer has bytes of its own, one after the other"});
  else if (rest > 0)
    shares.push_back(
        {PaddingKind::Layout,
         {},
         rest,
         "buffers of one group that may share bytes overlap only in part, or "
         "a buffer's groups are further apart than its size"});
  plan.padding = std::move(shares);
}

} // namespace
} // namespace detail

using namespace detail;

bool Plan::ok() const { return !hasError(diagnostics); }

int64_t slotOf(const View &view, int64_t index) {
  int64_t period = std::max<int64_t>(view.period, 1);
  return satAdd(satAdd(satMul(view.scale, index / period), view.offsetSlots),
                satMul(view.step, index % period));
}

int64_t viewStart(const View &view, int64_t index) {
  if (!view.perGroup())
    return view.base;
  int64_t period = std::max<int64_t>(view.period, 1);
  if (!view.groupStarts.empty())
    return view.groupStarts[std::min<int64_t>(
        index / period, static_cast<int64_t>(view.groupStarts.size()) - 1)];
  return satAdd(view.base, satMul(view.groupStride, index / period));
}

std::vector<int64_t> groupViewStarts(const View &view, int64_t count) {
  if (!view.perGroup())
    return {view.base};
  int64_t period = std::max<int64_t>(view.period, 1);
  std::vector<int64_t> starts;
  for (int64_t first = 0; first < count; first += period)
    starts.push_back(viewStart(view, first));
  return starts;
}

int64_t bufferStart(const View &view, int64_t index) {
  return satAdd(viewStart(view, index),
                satMul(slotOf(view, index), view.bufferSize));
}

Placement placementOf(const View &view) {
  return {view.slots(),     view.period,   view.scale, view.offsetSlots,
          view.step,        view.base,     view.form,  view.groupStride,
          view.groupStarts, view.groupForm};
}

View viewOf(const Buffer &buffer, const Placement &placement) {
  View view;
  view.bufferSize = bufferSize(buffer);
  view.alignment = requiredAlignment(buffer);
  view.period = placement.period;
  view.scale = placement.scale;
  view.offsetSlots = placement.offsetSlots;
  view.step = placement.step;
  view.base = placement.base;
  view.form = placement.form;
  view.groupStride = placement.groupStride;
  view.groupStarts = placement.groupStarts;
  view.groupForm = placement.groupForm;
  view.offset =
      satAdd(placement.base, satMul(placement.offsetSlots, view.bufferSize));
  view.indexed = hasBufferDimension(buffer);
  view.shape = buffer.shape;
  if (view.indexed)
    view.shape.front() = placement.slots;
  else
    view.shape.insert(view.shape.begin(), placement.slots);
  return view;
}

std::optional<View> reinterpretedView(const View &source, const Buffer &buffer,
                                      int64_t regionSize) {
  int64_t size = bufferSize(buffer);
  if (size <= 0)
    return std::nullopt;
  Placement placement = placementOf(source);
  if (size != source.bufferSize) {
    if (!source.identityIndex())
      return std::nullopt;
    placement = Placement{(regionSize - source.base) / size,
                          1,
                          1,
                          0,
                          1,
                          source.base,
                          source.form,
                          0,
                          {}};
  }
  View view = viewOf(buffer, placement);
  view.groupSize = size == source.bufferSize ? source.groupSize : 1;
  return view;
}

std::vector<Diagnostic> checkView(const View &view, const Buffer &buffer,
                                  int bufferIndex, int64_t regionSize) {
  std::vector<Diagnostic> problems;
  Storage storage = buffer.storage;
  auto label = [&] { return "buffer " + bufferRef(bufferIndex); };
  auto report = [&](std::vector<int64_t> numbers, std::string message) {
    problems.push_back(error(DiagnosticKind::UnsoundView, bufferIndex,
                             {bufferIndex}, std::move(numbers),
                             std::move(message)));
  };
  int64_t size = view.bufferSize;
  if (size <= 0 || size != bufferSize(buffer)) {
    report({size}, label() + " has no size (shape " + shapeText(buffer.shape) +
                       ", element_bits=" + std::to_string(buffer.elementBits) +
                       ")");
    return problems;
  }
  if (view.period < 1 || view.scale < 0 || view.step < 1 ||
      view.offsetSlots < 0 || view.slots() < 1) {
    report({view.period, view.scale, view.offsetSlots, view.step, view.slots()},
           label() +
               " has slot coefficients period=" + std::to_string(view.period) +
               ", scale=" + std::to_string(view.scale) +
               ", offset=" + std::to_string(view.offsetSlots) +
               ", step=" + std::to_string(view.step) + " and " +
               std::to_string(view.slots()) +
               " slots; period and step must be at least 1, the others "
               "non-negative and the slots positive");
    return problems;
  }
  // A view per buffer group: SMEM groups a positive multiple of 128 bytes
  // apart (whole rows of the backing), from a row, their slots one group's;
  // or groups at starts of their own (SelectedRows only), each at a row,
  // the first at the base.
  bool perGroup = view.perGroup();
  bool ownStarts = !view.groupStarts.empty();
  bool startsOnRows =
      std::all_of(view.groupStarts.begin(), view.groupStarts.end(),
                  [](int64_t start) {
                    return start >= 0 && start % kSmemRowBytes == 0;
                  }) &&
      (!ownStarts || view.groupStarts.front() == view.base);
  if (perGroup != (view.groupStride != 0 || ownStarts) ||
      (ownStarts && (view.groupStride != 0 ||
                     view.form != ViewForm::SelectedRows || !startsOnRows)) ||
      (perGroup && (storage != Storage::Smem || view.groupStride < 0 ||
                    view.groupStride % kSmemRowBytes != 0 || view.base < 0 ||
                    view.base % kSmemRowBytes != 0 || view.scale != 0))) {
    report({view.base, view.groupStride, view.scale},
           "the view of " + label() + " starts at " +
               amount(view.base, storage) + " with groups " +
               amount(view.groupStride, storage) + " apart and scale " +
               std::to_string(view.scale) + " in the form " +
               viewFormName(view.form) +
               (ownStarts ? " and groups of their own" : "") +
               "; a view per buffer group (runtime_row or selected_rows, and "
               "only they) starts at a multiple of 128 bytes of SMEM, its "
               "groups a positive multiple of 128 bytes apart (selected_rows: "
               "or each at a multiple of 128 bytes of its own, the first at "
               "the view's start), scale 0");
    return problems;
  }
  // Each group's view of a SelectedRows view is written as a view at a byte
  // offset is (sliced_rows on 3.9, indexed_row on 3.6 and 3.7); no other
  // view has group views of that kind.
  bool selected = view.form == ViewForm::SelectedRows;
  bool groupFormValid = selected ? view.groupForm == ViewForm::SlicedRows ||
                                       view.groupForm == ViewForm::IndexedRow
                                 : view.groupForm == ViewForm::Slots;
  if (!groupFormValid) {
    report({}, "the view of " + label() + " in the form " +
                   viewFormName(view.form) + " has group views in the form " +
                   viewFormName(view.groupForm) +
                   "; selected_rows writes each group's view sliced_rows or "
                   "indexed_row, every other form none (slots)");
    return problems;
  }
  // A view from a byte offset: SMEM bytes from a multiple of 128 (a row of
  // the backing), written in a form other than a whole-region view.
  bool offsetView =
      !perGroup && (view.base != 0 || view.form != ViewForm::Slots);
  if (offsetView &&
      (storage != Storage::Smem || view.base <= 0 ||
       view.base % kSmemRowBytes != 0 || view.form == ViewForm::Slots)) {
    report({view.base},
           "the view of " + label() + " starts at " +
               amount(view.base, storage) + " in the form " +
               viewFormName(view.form) +
               "; a view from a byte offset starts at a positive multiple of "
               "128 bytes of SMEM and is written sliced_rows or indexed_row");
    return problems;
  }
  int64_t count = bufferCount(buffer);
  if (ownStarts && static_cast<int64_t>(view.groupStarts.size()) !=
                       (count + view.period - 1) / view.period) {
    report({static_cast<int64_t>(view.groupStarts.size()), count, view.period},
           "the view of " + label() + " has " +
               std::to_string(view.groupStarts.size()) + " group starts for " +
               std::to_string(count) + " buffers in groups of " +
               std::to_string(view.period));
    return problems;
  }
  if (perGroup && !ownStarts && count > view.period &&
      view.groupStride < satMul(view.slots(), size)) {
    report({view.groupStride, view.slots(), size},
           "the views of " + label() + "'s buffer groups are " +
               amount(view.groupStride, storage) +
               " apart, less than the view of one group spans (" +
               std::to_string(view.slots()) + " slots of " +
               amount(size, storage) + ")");
    return problems;
  }
  // The view of the group that starts last (the only one for other forms).
  int64_t lastStart = viewStart(view, std::max<int64_t>(count - 1, 0));
  for (int64_t start : view.groupStarts)
    lastStart = std::max(lastStart, start);
  if (satAdd(lastStart, satMul(view.slots(), size)) > regionSize)
    report({view.slots(), size, regionSize, lastStart},
           "the view of " + label() + " has " + std::to_string(view.slots()) +
               " slots of " + amount(size, storage) +
               (lastStart != 0 ? " from " + amount(lastStart, storage) : "") +
               ", more than the region of " + amount(regionSize, storage));
  int64_t alignment = std::max<int64_t>(view.alignment, 1);
  std::set<int64_t> used;
  // Every buffer, or for absurd counts the first and last two periods (the
  // others repeat their pattern).
  auto checked = [&](int64_t index) {
    int64_t edge = satMul(view.period, 2);
    return count <= kMaxAccountedBuffers || index < edge ||
           index >= count - edge;
  };
  for (int64_t index = 0; index < count; ++index) {
    if (!checked(index)) {
      index = count - satMul(view.period, 2) - 1;
      continue;
    }
    int64_t slot = slotOf(view, index);
    if (slot >= view.slots()) {
      report({index, slot, view.slots()},
             label() + " index " + std::to_string(index) + " maps to slot " +
                 std::to_string(slot) + ", outside its view of " +
                 std::to_string(view.slots()) + " slots");
      return problems;
    }
    if (bufferStart(view, index) % alignment != 0) {
      report({index, bufferStart(view, index), alignment},
             label() + " index " + std::to_string(index) + " starts at " +
                 amount(bufferStart(view, index), storage) +
                 ", which breaks its " + sized(alignment, storage) +
                 " alignment");
      return problems;
    }
    // Distinct slots of one view; a view per group: distinct starts.
    if (!used.insert(perGroup ? bufferStart(view, index) : slot).second) {
      report({index, slot},
             label() + " index " + std::to_string(index) + " maps to slot " +
                 std::to_string(slot) +
                 ", which another of its buffers already occupies");
      return problems;
    }
  }
  return problems;
}

namespace detail {
namespace {

/// The checks every plan starts with: the storage on the target, the
/// buffers on their own and together.
void checkInput(const Spec &spec, const std::vector<Buffer> &buffers,
                std::vector<Diagnostic> &diagnostics) {
  std::string unavailable = storageUnavailable(spec.storage, spec.capability);
  if (!unavailable.empty())
    diagnostics.push_back(
        error(DiagnosticKind::StorageUnavailable, -1, {}, {spec.capability},
              std::string("spec ") + specRef() + ": " + unavailable));
  if (buffers.empty())
    diagnostics.push_back(
        warning(DiagnosticKind::NoBuffers, -1, {}, {},
                std::string("spec ") + specRef() + " has no buffers"));
  validateBuffers(spec, buffers, diagnostics);
}

/// Rule 5 and the checks of every view, once the views of the buffers in a
/// tree are set (`placed[i]`): places the others at offset 0 (with a
/// warning when there is a tree), sizes the region, checks every view and
/// accounts for the padding.
void finishPlan(const Spec &spec, const std::vector<Buffer> &buffers,
                bool hasTree, const std::vector<bool> &placed, Need need,
                Plan &result, std::optional<int> misaligned = std::nullopt) {
  std::vector<Diagnostic> &diagnostics = result.diagnostics;
  result.views.resize(buffers.size());
  int64_t unit = spec.storage == Storage::Smem ? kSmemMinAlignment : 1;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (placed[i])
      continue;
    result.views[i] = viewAlone(buffers[i]);
    int64_t count = bufferCount(buffers[i]);
    int64_t size = result.views[i].bufferSize;
    int64_t pitch = satMul(result.views[i].scale, size);
    need.end = std::max(need.end, satAdd(satMul(count - 1, pitch), size));
    need.ideal = std::max(need.ideal, satMul(count, roundUp(size, unit)));
    if (hasTree) {
      int index = static_cast<int>(i);
      diagnostics.push_back(warning(DiagnosticKind::NotInTree, index, {index},
                                    {},
                                    "buffer " + bufferRef(index) +
                                        " is not in the overlap tree of spec " +
                                        specRef() + "; placed at offset 0"));
    }
  }

  bool hasExplicit = spec.explicitSizeBytes.has_value();
  if (hasExplicit && *spec.explicitSizeBytes <= 0) {
    diagnostics.push_back(error(DiagnosticKind::BadExplicitSize, -1, {},
                                {*spec.explicitSizeBytes},
                                std::string("buffer_size_bytes of spec ") +
                                    specRef() + " must be positive, got " +
                                    std::to_string(*spec.explicitSizeBytes)));
    hasExplicit = false;
  }
  int64_t minimal =
      minimalRegion(spec.storage, spec.wholeViews, result.views, need.end);
  if (spec.storage == Storage::Smem)
    sizeSmemRegion(spec, minimal, hasExplicit, misaligned, result);
  else
    sizeTmemRegion(spec, buffers, minimal, need.end, hasExplicit, result);
  result.idealBytes = bytesOf(result, need.ideal);
  result.paddingBytes = result.sizeBytes - result.idealBytes;

  bool sized = !hasError(diagnostics);
  for (size_t i = 0; i < buffers.size(); ++i) {
    View &view = result.views[i];
    view.indexed = hasBufferDimension(buffers[i]);
    view.shape = buffers[i].shape;
    // A view per buffer group holds one group's slots; any other view
    // reaches the region's end.
    bool perGroup = view.groupStride != 0 || !view.groupStarts.empty();
    int64_t slots = view.bufferSize <= 0 ? 0
                    : perGroup
                        ? satAdd(satMul(view.step, view.period - 1), 1)
                        : (result.regionSize - view.base) / view.bufferSize;
    view.form = !view.groupStarts.empty() ? ViewForm::SelectedRows
                : perGroup                ? spec.groupStrideForm
                : view.base != 0          ? spec.offsetForm
                                          : ViewForm::Slots;
    view.groupForm =
        view.form == ViewForm::SelectedRows ? spec.offsetForm : ViewForm::Slots;
    if (view.indexed)
      view.shape.front() = slots;
    else
      view.shape.insert(view.shape.begin(), slots);
    if (!sized)
      continue;
    for (Diagnostic &problem :
         checkView(view, buffers[i], static_cast<int>(i), result.regionSize))
      diagnostics.push_back(std::move(problem));
  }
  accountPadding(spec, buffers, need, minimal, result);
}

/// A layout of one or more phases: every placed buffer's view, the end and
/// the ideal footprint, and the layout in words.
struct PhaseLayout {
  std::vector<View> views;
  Need need;
  std::string name;
};

/// True when the two views put every buffer at the same units.
bool samePlace(const View &a, const View &b) {
  return a.bufferSize == b.bufferSize && a.offset == b.offset &&
         a.base == b.base && a.groupStride == b.groupStride &&
         a.groupStarts == b.groupStarts && a.period == b.period &&
         a.scale == b.scale && a.offsetSlots == b.offsetSlots &&
         a.step == b.step;
}

/// True when the leaf of `buffer` in `tree` shares bytes with no other
/// leaf: no `shared` ancestor has another child.
bool apart(const Tree &tree, int buffer) {
  int node = tree.leaves[buffer].node;
  for (int parent = tree.nodes[node].parent; parent >= 0;
       node = parent, parent = tree.nodes[parent].parent) {
    const Node &group = tree.nodes[parent];
    if (group.kind == GroupKind::Shared && group.children.size() > 1)
      return false;
  }
  return true;
}

/// `element` without the leaves `removed` marks; nullopt when nothing is
/// left.
std::optional<TreeElement> without(const TreeElement &element,
                                   const std::vector<bool> &removed) {
  if (const int *leaf = std::get_if<int>(&element)) {
    if (*leaf >= 0 && static_cast<size_t>(*leaf) < removed.size() &&
        removed[*leaf])
      return std::nullopt;
    return element;
  }
  const Group &group = std::get<Group>(element);
  Group kept{group.kind, group.groupSize, {}};
  for (const TreeElement &child : group.children)
    if (std::optional<TreeElement> rest = without(child, removed))
      kept.children.push_back(std::move(*rest));
  if (kept.children.empty())
    return std::nullopt;
  return TreeElement(std::move(kept));
}

/// Each phase planned alone: valid when every buffer of several phases has
/// the same place in each; else the first phase where one differs, as
/// {buffer, first phase, other phase}.
std::variant<PhaseLayout, std::array<int, 3>>
phasesAlone(const Spec &spec, const std::vector<Tree> &trees,
            LayoutFamily family, size_t bufferCount) {
  PhaseLayout layout;
  layout.views.resize(bufferCount);
  std::vector<int> placedBy(bufferCount, -1);
  for (size_t p = 0; p < trees.size(); ++p) {
    int64_t ideal = idealFootprint(trees[p], spec.storage);
    Arrangement arrangement =
        searchLayout(trees[p], spec.storage, family, ideal);
    for (size_t i = 0; i < bufferCount; ++i) {
      if (trees[p].leaves[i].node < 0)
        continue;
      if (placedBy[i] >= 0) {
        if (!samePlace(layout.views[i], arrangement.views[i]))
          return std::array<int, 3>{static_cast<int>(i), placedBy[i],
                                    static_cast<int>(p)};
        continue;
      }
      placedBy[i] = static_cast<int>(p);
      layout.views[i] = arrangement.views[i];
    }
    layout.need.end = std::max(layout.need.end, arrangement.end);
    layout.need.ideal = std::max(layout.need.ideal, ideal);
    layout.name += (p == 0 ? "" : "; ") + arrangement.name;
  }
  layout.name = "each phase alone (" + layout.name + ")";
  return layout;
}

/// The buffers of several phases apart from every other buffer, and the
/// phases without them either sharing bytes (distinct(those buffers,
/// shared(each phase without them))) or one after another (distinct(those
/// buffers, each phase without them)), whichever ends first: the second is
/// planning the phases' union as distinct trees, so the plan is never
/// larger. nullopt when one of them shares bytes in a phase.
std::optional<PhaseLayout>
phasesApart(const Spec &spec, const std::vector<Buffer> &buffers,
            const std::vector<Group> &phases, const std::vector<Tree> &trees,
            const std::vector<int> &multiPhase, LayoutFamily family) {
  std::vector<bool> removed(buffers.size(), false);
  Group sharing{GroupKind::Distinct, 1, {}};
  for (int buffer : multiPhase) {
    for (const Tree &tree : trees)
      if (tree.leaves[buffer].node >= 0 && !apart(tree, buffer))
        return std::nullopt;
    removed[buffer] = true;
    sharing.children.push_back(buffer);
  }
  Group sequence = sharing;
  Group rest{GroupKind::Shared, 1, {}};
  for (const Group &phase : phases) {
    if (std::optional<TreeElement> kept = without(phase, removed)) {
      rest.children.push_back(*kept);
      sequence.children.push_back(std::move(*kept));
    }
  }
  if (rest.children.size() == 1)
    sharing.children.push_back(std::move(rest.children.front()));
  else if (!rest.children.empty())
    sharing.children.push_back(std::move(rest));
  std::optional<PhaseLayout> best;
  for (const auto &[tree, name] :
       {std::pair<const Group &, const char *>(sharing, "the phases sharing"),
        std::pair<const Group &, const char *>(
            sequence, "the phases one after another")}) {
    // The phases' own trees were checked (and warned about) already.
    std::vector<Diagnostic> repeated;
    Tree flat;
    if (!buildTree(spec, buffers, tree, flat, repeated))
      return std::nullopt;
    PhaseLayout layout;
    layout.need.ideal = idealFootprint(flat, spec.storage);
    Arrangement arrangement =
        searchLayout(flat, spec.storage, family, layout.need.ideal);
    layout.views = std::move(arrangement.views);
    layout.need.end = arrangement.end;
    layout.name = "buffers of several phases apart, " + std::string(name) +
                  " (" + arrangement.name + ")";
    if (!best || layout.need.end < best->need.end)
      best = std::move(layout);
  }
  return best;
}

/// With an explicit SMEM size smaller than the region `needed`: the buffer
/// whose alignment alone makes it so (the first of the largest alignment
/// whose alignment lowered to 128 bytes lets the tree fit), or nullopt.
std::optional<int> misalignedBuffer(const Spec &spec, const Tree &flat,
                                    LayoutFamily family, int64_t ideal,
                                    int64_t needed) {
  if (spec.storage != Storage::Smem || !spec.explicitSizeBytes ||
      *spec.explicitSizeBytes <= 0 || *spec.explicitSizeBytes >= needed)
    return std::nullopt;
  std::vector<int> aligned;
  for (int leaf : flat.nodes.front().leaves)
    if (flat.leaves[leaf].alignment > kSmemMinAlignment)
      aligned.push_back(leaf);
  std::stable_sort(aligned.begin(), aligned.end(), [&](int a, int b) {
    return flat.leaves[a].alignment > flat.leaves[b].alignment;
  });
  for (int leaf : aligned) {
    Tree capped = flat;
    LeafInfo &info = capped.leaves[leaf];
    info.alignment = kSmemMinAlignment;
    info.quantum = lcm(info.size, kSmemMinAlignment);
    Arrangement arrangement =
        searchLayout(capped, Storage::Smem, family, ideal);
    if (minimalRegion(spec.storage, spec.wholeViews, arrangement.views,
                      arrangement.end) <= *spec.explicitSizeBytes)
      return leaf;
  }
  return std::nullopt;
}

/// Without views at a byte offset (SMEM, Triton 3.8's rules): the region a
/// Triton that writes them would plan for the tree when that is smaller
/// than `region`, else 0 (Plan::offsetViewsRegion).
int64_t offsetViewsRegion(const Spec &spec, const Tree &flat,
                          const Arrangement &arrangement, int64_t ideal,
                          int64_t region) {
  if (spec.storage != Storage::Smem || flat.offsetViews)
    return 0;
  Spec offsets = spec;
  offsets.wholeViews = false;
  offsets.offsetForm = ViewForm::SlicedRows;
  offsets.groupStrideForm = groupStrideFormOf(offsets.offsetForm);
  int64_t other = minimalRegion(offsets.storage, offsets.wholeViews,
                                arrangement.views, arrangement.end);
  if (other > ideal) {
    Tree offsetTree = flat;
    offsetTree.offsetViews = true;
    offsetTree.groupStrideForm = offsets.groupStrideForm;
    Arrangement search =
        searchLayout(offsetTree, Storage::Smem, LayoutFamily::Best, ideal);
    other = std::min(other, minimalRegion(offsets.storage, offsets.wholeViews,
                                          search.views, search.end));
  }
  return other < region ? other : 0;
}

} // namespace
} // namespace detail

Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree, LayoutFamily family) {
  Plan result;
  result.storage = spec.storage;
  std::vector<Diagnostic> &diagnostics = result.diagnostics;
  checkInput(spec, buffers, diagnostics);
  Tree flat;
  if (tree)
    buildTree(spec, buffers, *tree, flat, diagnostics);
  if (hasError(diagnostics))
    return result;

  Need need;
  std::vector<bool> placed(buffers.size(), false);
  std::optional<int> misaligned;
  if (tree) {
    need.ideal = idealFootprint(flat, spec.storage);
    Arrangement arrangement =
        searchLayout(flat, spec.storage, family, need.ideal);
    int64_t needed = minimalRegion(spec.storage, spec.wholeViews,
                                   arrangement.views, arrangement.end);
    misaligned = misalignedBuffer(spec, flat, family, need.ideal, needed);
    if (family == LayoutFamily::Best)
      result.offsetViewsRegion =
          offsetViewsRegion(spec, flat, arrangement, need.ideal, needed);
    result.views = std::move(arrangement.views);
    result.layout = std::move(arrangement.name);
    need.end = arrangement.end;
    need.sharedEnd = arrangement.sharedEnd;
    for (size_t i = 0; i < buffers.size(); ++i)
      placed[i] = flat.leaves[i].node >= 0;
  } else {
    result.layout = "every user at offset 0";
    if (buffers.size() >= 2 && !spec.explicitSizeBytes) {
      std::vector<int> all;
      std::string names;
      for (size_t i = 0; i < buffers.size(); ++i) {
        all.push_back(static_cast<int>(i));
        names += (i == 0 ? "" : (i + 1 == buffers.size() ? " and " : ", ")) +
                 bufferRef(static_cast<int>(i));
      }
      diagnostics.push_back(warning(
          DiagnosticKind::NoOverlapTree, -1, all,
          {static_cast<int64_t>(buffers.size())},
          std::string("spec ") + specRef() + " has " +
              std::to_string(buffers.size()) +
              " buffers and no overlap tree: every buffer starts at offset 0 "
              "(" +
              names +
              " all share bytes); say which may share with a tlx.reuse_group "
              "over them, or give buffer_size_bytes to mean it"));
    }
  }
  finishPlan(spec, buffers, tree.has_value(), placed, need, result, misaligned);
  return result;
}

Plan planPhases(const Spec &spec, const std::vector<Buffer> &buffers,
                const std::vector<Group> &phases, LayoutFamily family) {
  if (phases.size() <= 1)
    return plan(spec, buffers,
                phases.empty() ? std::nullopt
                               : std::optional<Group>(phases.front()),
                family);
  Plan result;
  result.storage = spec.storage;
  std::vector<Diagnostic> &diagnostics = result.diagnostics;
  checkInput(spec, buffers, diagnostics);
  std::vector<Tree> trees(phases.size());
  for (size_t p = 0; p < phases.size(); ++p)
    buildTree(spec, buffers, phases[p], trees[p], diagnostics);
  if (hasError(diagnostics))
    return result;

  std::vector<bool> placed(buffers.size(), false);
  std::vector<int> multiPhase;
  for (size_t i = 0; i < buffers.size(); ++i) {
    int count = 0;
    for (const Tree &tree : trees)
      count += tree.leaves[i].node >= 0;
    placed[i] = count > 0;
    if (count > 1)
      multiPhase.push_back(static_cast<int>(i));
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    std::vector<int> members;
    for (const Node &node : trees[p].nodes)
      if (node.leaf)
        members.push_back(node.buffer);
    result.phases.push_back(std::move(members));
  }

  std::variant<PhaseLayout, std::array<int, 3>> alone =
      phasesAlone(spec, trees, family, buffers.size());
  std::optional<PhaseLayout> beside =
      phasesApart(spec, buffers, phases, trees, multiPhase, family);
  const PhaseLayout *chosen = std::get_if<PhaseLayout>(&alone);
  if (beside && (!chosen || beside->need.end < chosen->need.end))
    chosen = &*beside;
  if (!chosen) {
    auto [buffer, first, other] = std::get<std::array<int, 3>>(alone);
    // Why the buffers of several phases cannot be set apart: the first that
    // shares bytes in a phase.
    int sharing = -1;
    int64_t sharingPhase = -1;
    for (int candidate : multiPhase)
      for (size_t p = 0; p < trees.size() && sharing < 0; ++p)
        if (trees[p].leaves[candidate].node >= 0 &&
            !apart(trees[p], candidate)) {
          sharing = candidate;
          sharingPhase = static_cast<int64_t>(p);
        }
    diagnostics.push_back(error(
        DiagnosticKind::PhasesDisagree, buffer, {buffer, sharing},
        {first, other, sharingPhase},
        "buffer " + bufferRef(buffer) + " is in phases " +
            std::to_string(first) + " and " + std::to_string(other) +
            " of spec " + specRef() +
            ", which, each planned alone, put it at different places; and "
            "the buffers of several phases cannot be set apart either: " +
            bufferRef(sharing) + " shares bytes with another buffer in phase " +
            std::to_string(sharingPhase) +
            ". Give the buffers of several phases the same position in every "
            "phase's tree, or let them share bytes with no other buffer"));
    return result;
  }
  result.views = chosen->views;
  result.layout = chosen->name;
  finishPlan(spec, buffers, true, placed, chosen->need, result);
  return result;
}

std::vector<PhaseOverlap> phaseOverlaps(const Plan &plan,
                                        const std::vector<Buffer> &buffers) {
  std::vector<PhaseOverlap> overlaps;
  if (plan.phases.size() < 2 || plan.views.size() != buffers.size())
    return overlaps;
  size_t count = buffers.size();
  std::vector<std::vector<bool>> in(plan.phases.size(),
                                    std::vector<bool>(count, false));
  for (size_t p = 0; p < plan.phases.size(); ++p)
    for (int buffer : plan.phases[p])
      in[p][buffer] = true;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(count);
  for (const Extent &extent : bufferExtents(plan, buffers))
    spans[extent.user].push_back({extent.start, extent.end});
  for (auto &userSpans : spans)
    std::sort(userSpans.begin(), userSpans.end());
  auto meet = [&](size_t a, size_t b) {
    size_t i = 0, j = 0;
    while (i < spans[a].size() && j < spans[b].size()) {
      if (spans[a][i].first < spans[b][j].second &&
          spans[b][j].first < spans[a][i].second)
        return true;
      if (spans[a][i].second <= spans[b][j].second)
        ++i;
      else
        ++j;
    }
    return false;
  };
  for (size_t a = 0; a < count; ++a) {
    for (size_t b = a + 1; b < count; ++b) {
      bool inSome = false, together = false;
      for (size_t p = 0; p < plan.phases.size(); ++p) {
        together |= in[p][a] && in[p][b];
        inSome |= in[p][a] || in[p][b];
      }
      if (inSome && !together && meet(a, b))
        overlaps.push_back({static_cast<int>(a), static_cast<int>(b)});
    }
  }
  return overlaps;
}

std::vector<Diagnostic>
checkPhaseLifetimes(const Plan &plan, const std::vector<Buffer> &buffers,
                    const std::vector<std::vector<PhaseUse>> &uses) {
  std::vector<Diagnostic> problems;
  auto phaseOf = [&](int buffer) {
    for (size_t p = 0; p < plan.phases.size(); ++p)
      if (std::find(plan.phases[p].begin(), plan.phases[p].end(), buffer) !=
          plan.phases[p].end())
        return static_cast<int64_t>(p);
    return int64_t(-1);
  };
  // The positions of a user's uses in one sequence of control.
  auto positionsIn = [&](size_t user, int64_t sequence) {
    std::vector<int64_t> positions;
    for (const PhaseUse &use : uses[user])
      if (use.sequence == sequence)
        positions.push_back(use.position);
    return positions;
  };
  for (const PhaseOverlap &overlap : phaseOverlaps(plan, buffers)) {
    size_t a = overlap.first, b = overlap.second;
    if (a >= uses.size() || b >= uses.size())
      continue;
    std::set<int64_t> sequences;
    for (const PhaseUse &use : uses[a])
      sequences.insert(use.sequence);
    for (int64_t sequence : sequences) {
      std::vector<int64_t> usesOfA = positionsIn(a, sequence);
      std::vector<int64_t> usesOfB = positionsIn(b, sequence);
      if (usesOfB.empty())
        continue;
      auto [aFirst, aLast] =
          std::minmax_element(usesOfA.begin(), usesOfA.end());
      auto [bFirst, bLast] =
          std::minmax_element(usesOfB.begin(), usesOfB.end());
      if (*aLast < *bFirst || *bLast < *aFirst)
        continue;
      // The buffer whose uses start later is used inside the other's span.
      bool aLater = *aFirst > *bFirst;
      int later = static_cast<int>(aLater ? a : b);
      int earlier = static_cast<int>(aLater ? b : a);
      int64_t inBetween = aLater ? *aFirst : *bFirst;
      int64_t before = inBetween, after = inBetween;
      bool hasBefore = false, hasAfter = false;
      for (int64_t use : aLater ? usesOfB : usesOfA) {
        if (use <= inBetween && (!hasBefore || use > before)) {
          before = use;
          hasBefore = true;
        }
        if (use >= inBetween && (!hasAfter || use < after)) {
          after = use;
          hasAfter = true;
        }
      }
      int64_t laterPhase = phaseOf(later), earlierPhase = phaseOf(earlier);
      problems.push_back(error(
          DiagnosticKind::PhaseLifetimeOverlap, later, {later, earlier},
          {inBetween, before, after, laterPhase, earlierPhase},
          "buffer " + bufferRef(later) + " (phase " +
              std::to_string(laterPhase) + ") is used between two uses of " +
              "buffer " + bufferRef(earlier) + " (phase " +
              std::to_string(earlierPhase) + ") of spec " + specRef() +
              ", whose bytes it shares: buffers of different phases may "
              "share bytes only when their uses in one sequence of control "
              "(the kernel, or one warp_specialize partition) do not "
              "interleave"));
    }
  }
  return problems;
}

} // namespace tlx::planner
