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
#include <map>
#include <set>

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
                           std::vector<Diagnostic> &diagnostics) {
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

/// The smallest region that holds `end` units (rule 5): SMEM rounds to
/// 128-byte rows, TMEM to a power of two of at least 32 columns, and both to
/// a multiple of every view's buffer size when the views must be whole.
int64_t minimalRegion(const Spec &spec, const std::vector<View> &views,
                      int64_t end) {
  bool smem = spec.storage == Storage::Smem;
  int64_t quantum = smem ? kSmemRowBytes : 1;
  for (const View &view : views)
    if (spec.wholeViews && view.bufferSize > 0)
      quantum = lcm(quantum, view.bufferSize);
  int64_t minimal = roundUp(end, quantum);
  return smem ? minimal : nextPowerOfTwo(std::max(kTmemMinColumns, minimal));
}

/// Rule 5 for SMEM: fills the region and the backing of `plan`.
void sizeSmemRegion(const Spec &spec, int64_t minimal, bool hasExplicit,
                    Plan &plan) {
  int64_t region =
      hasExplicit ? explicitSmemRegion(spec, *spec.explicitSizeBytes, minimal,
                                       plan.views, plan.diagnostics)
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
      int64_t start = slotOf(view, index) * view.bufferSize;
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
    bool bySize = view.bufferSize >= view.alignment;
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
  if (rest > 0)
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

Placement placementOf(const View &view) {
  return {view.slots(), view.period, view.scale, view.offsetSlots, view.step};
}

View viewOf(const Buffer &buffer, const Placement &placement) {
  View view;
  view.bufferSize = bufferSize(buffer);
  view.alignment = requiredAlignment(buffer);
  view.period = placement.period;
  view.scale = placement.scale;
  view.offsetSlots = placement.offsetSlots;
  view.step = placement.step;
  view.offset = satMul(placement.offsetSlots, view.bufferSize);
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
    placement = Placement{regionSize / size, 1, 1, 0, 1};
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
  if (satMul(view.slots(), size) > regionSize)
    report({view.slots(), size, regionSize},
           "the view of " + label() + " has " + std::to_string(view.slots()) +
               " slots of " + amount(size, storage) +
               ", more than the region of " + amount(regionSize, storage));
  int64_t count = bufferCount(buffer);
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
    if (satMul(slot, size) % alignment != 0) {
      report({index, satMul(slot, size), alignment},
             label() + " index " + std::to_string(index) + " starts at " +
                 amount(satMul(slot, size), storage) + ", which breaks its " +
                 sized(alignment, storage) + " alignment");
      return problems;
    }
    if (!used.insert(slot).second) {
      report({index, slot},
             label() + " index " + std::to_string(index) + " maps to slot " +
                 std::to_string(slot) +
                 ", which another of its buffers already occupies");
      return problems;
    }
  }
  return problems;
}

Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree, LayoutFamily family) {
  Plan result;
  result.storage = spec.storage;
  std::vector<Diagnostic> &diagnostics = result.diagnostics;
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
  Tree flat;
  if (tree)
    buildTree(spec, buffers, *tree, flat, diagnostics);
  if (hasError(diagnostics))
    return result;

  Need need;
  if (tree) {
    need.ideal = idealFootprint(flat, spec.storage);
    Arrangement arrangement =
        searchLayout(flat, spec.storage, family, need.ideal);
    result.views = std::move(arrangement.views);
    result.layout = std::move(arrangement.name);
    need.end = arrangement.end;
  } else {
    result.layout = "every user at offset 0";
  }
  result.views.resize(buffers.size());
  int64_t unit = spec.storage == Storage::Smem ? kSmemMinAlignment : 1;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (tree && flat.leaves[i].node >= 0)
      continue;
    result.views[i] = viewAlone(buffers[i]);
    int64_t count = bufferCount(buffers[i]);
    int64_t size = result.views[i].bufferSize;
    int64_t pitch = satMul(result.views[i].scale, size);
    need.end = std::max(need.end, satAdd(satMul(count - 1, pitch), size));
    need.ideal = std::max(need.ideal, satMul(count, roundUp(size, unit)));
    if (tree) {
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
  int64_t minimal = minimalRegion(spec, result.views, need.end);
  if (spec.storage == Storage::Smem)
    sizeSmemRegion(spec, minimal, hasExplicit, result);
  else
    sizeTmemRegion(spec, buffers, minimal, need.end, hasExplicit, result);
  result.idealBytes = bytesOf(result, need.ideal);
  result.paddingBytes = result.sizeBytes - result.idealBytes;

  bool sized = !hasError(diagnostics);
  for (size_t i = 0; i < buffers.size(); ++i) {
    View &view = result.views[i];
    view.indexed = hasBufferDimension(buffers[i]);
    view.shape = buffers[i].shape;
    int64_t slots =
        view.bufferSize > 0 ? result.regionSize / view.bufferSize : 0;
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
  return result;
}

} // namespace tlx::planner
