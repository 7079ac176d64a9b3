//===- Planner.cpp - Storage alias planner (no MLIR) ----------------------===//
//
// Implements the rules documented in tlx/Planner/Planner.h. All arithmetic
// saturates at 2^62 so that absurd shapes end in a "too large" diagnostic
// instead of an overflow.
//
//===----------------------------------------------------------------------===//

#include "tlx/Planner/Planner.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace tlx::planner {
namespace {

constexpr int64_t kSaturated = int64_t(1) << 62;
/// The SMEM backing is [n, 128] x i8 and SMEM buffers align to 128 B.
constexpr int64_t kSmemRowBytes = 128;
constexpr int64_t kSmemMinAlignment = 128;
/// One NVMMA swizzle phase spans 16 bytes of a 128-byte row.
constexpr int64_t kNvmmaPhaseBytes = 16;
/// TMEM: 128 lanes per row block, 32-bit columns, 32..512 columns.
constexpr int64_t kTmemLanes = 128;
constexpr int64_t kTmemHalfLanes = 64;
constexpr int64_t kTmemColumnBits = 32;
constexpr int64_t kTmemColumnBytes = 4;
constexpr int64_t kTmemMinColumns = 32;
constexpr int64_t kTmemMaxColumns = 512;

//===----------------------------------------------------------------------===//
// Saturating arithmetic on non-negative values.
//===----------------------------------------------------------------------===//

int64_t satMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (a > kSaturated / b)
    return kSaturated;
  return a * b;
}

int64_t satAdd(int64_t a, int64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

int64_t roundUp(int64_t value, int64_t multiple) {
  return satMul(ceilDiv(value, multiple), multiple);
}

int64_t lcm(int64_t a, int64_t b) { return satMul(a / std::gcd(a, b), b); }

int64_t nextPowerOfTwo(int64_t value) {
  int64_t power = 1;
  while (power < value && power < kSaturated)
    power <<= 1;
  return power;
}

bool isPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

//===----------------------------------------------------------------------===//
// Message text.
//===----------------------------------------------------------------------===//

std::string number(int64_t value) {
  return value >= kSaturated ? "more than 2^62" : std::to_string(value);
}

std::string quoted(const std::string &text) { return "\"" + text + "\""; }

std::string storageName(Storage storage) {
  return storage == Storage::Smem ? "smem" : "tmem";
}

std::string unitName(Storage storage) {
  return storage == Storage::Smem ? "bytes" : "columns";
}

/// "128 bytes" / "16 columns" / "1 column".
std::string amount(int64_t value, Storage storage) {
  std::string unit = unitName(storage);
  if (value == 1)
    unit.pop_back();
  return number(value) + " " + unit;
}

/// "128-byte" / "16-column".
std::string sized(int64_t value, Storage storage) {
  return number(value) + (storage == Storage::Smem ? "-byte" : "-column");
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

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string bufferLabel(const Buffer &buffer, int index) {
  return quoted(buffer.name.empty() ? "#" + std::to_string(index)
                                    : buffer.name);
}

std::string specLabel(const Spec &spec) { return "spec " + quoted(spec.name); }

Diagnostic error(int buffer, std::string message) {
  return {Severity::Error, buffer, std::move(message)};
}

Diagnostic warning(int buffer, std::string message) {
  return {Severity::Warning, buffer, std::move(message)};
}

//===----------------------------------------------------------------------===//
// Input validation.
//===----------------------------------------------------------------------===//

bool hasValidShape(const Buffer &buffer) {
  return !buffer.shape.empty() &&
         std::all_of(buffer.shape.begin(), buffer.shape.end(),
                     [](int64_t dim) { return dim > 0; });
}

int64_t bufferCount(const Buffer &buffer) {
  if (!hasValidShape(buffer))
    return 0;
  return hasBufferDimension(buffer) ? buffer.shape.front() : 1;
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

/// Checks one buffer on its own and against the spec's storage.
void validateBuffer(const Spec &spec, const Buffer &buffer, int index,
                    std::vector<Diagnostic> &diagnostics) {
  // Messages are built only when a check fails: planning stays cheap.
  auto label = [&] { return "buffer " + bufferLabel(buffer, index); };
  if (buffer.shape.empty())
    diagnostics.push_back(error(
        index, label() + " has shape []; it needs a leading buffer dimension"));
  else if (!hasValidShape(buffer))
    diagnostics.push_back(error(index, label() + " has shape " +
                                           shapeText(buffer.shape) +
                                           "; every dimension must be "
                                           "positive"));
  if (buffer.elementBits <= 0)
    diagnostics.push_back(error(index, label() + " has element_bits=" +
                                           std::to_string(buffer.elementBits) +
                                           "; it must be positive"));
  if (buffer.storage != spec.storage)
    diagnostics.push_back(error(
        index, label() + " is in " + storageName(buffer.storage) + " but " +
                   specLabel(spec) + " is " + storageName(spec.storage)));

  bool tmem = buffer.storage == Storage::Tmem;
  LayoutKind kind = buffer.layout.kind;
  if (tmem != (kind == LayoutKind::TensorMemory))
    diagnostics.push_back(
        error(index, label() + " is in " + storageName(buffer.storage) +
                         " but has a " + layoutKindName(kind) + " layout; " +
                         (tmem ? "TMEM buffers need a tensor_memory layout"
                               : "SMEM buffers need a shared memory layout")));
  if (tmem && buffer.shape.size() != 2 && buffer.shape.size() != 3)
    diagnostics.push_back(error(index, "TMEM " + label() + " has shape " +
                                           shapeText(buffer.shape) +
                                           "; expected [num, M, N] or one "
                                           "[M, N] buffer"));
  if (tmem && buffer.layout.blockM != kTmemHalfLanes &&
      buffer.layout.blockM != kTmemLanes)
    diagnostics.push_back(
        error(index, "TMEM " + label() +
                         " has blockM=" + std::to_string(buffer.layout.blockM) +
                         "; expected 64 or 128"));
  const Layout &layout = buffer.layout;
  if (layout.ctaSplitM < 1 || layout.ctaSplitN < 1)
    diagnostics.push_back(error(index, label() + " has a CTA split of " +
                                           splitText(layout) +
                                           "; both must be at least 1"));
  else if (!tmem && isCtaSplit(layout))
    diagnostics.push_back(error(
        index, label() + " is split over " + splitText(layout) +
                   " CTAs; aliasing shared memory split over the CTAs of a "
                   "cluster is not supported (only TMEM tiles may be split)"));
  else if (tmem && buffer.shape.size() >= 2 && hasValidShape(buffer) &&
           (buffer.shape[buffer.shape.size() - 2] % layout.ctaSplitM != 0 ||
            buffer.shape.back() % layout.ctaSplitN != 0))
    diagnostics.push_back(
        error(index, "TMEM " + label() + " has shape " +
                         shapeText(buffer.shape) + ", which its CTA split of " +
                         splitText(layout) + " does not divide"));
  int64_t swizzle = buffer.layout.swizzleBytes;
  if (kind == LayoutKind::NvmmaShared && swizzle != 0 && swizzle != 32 &&
      swizzle != 64 && swizzle != 128)
    diagnostics.push_back(
        error(index, label() + " has an nvmma_shared layout with a " +
                         std::to_string(swizzle) +
                         "-byte swizzle; expected 0, 32, 64 or 128"));
}

//===----------------------------------------------------------------------===//
// Reuse tree: census (validation and buffer-group counts), then placement.
//===----------------------------------------------------------------------===//

/// What plan() shares with the tree walks. `views` doubles as the record of
/// which buffers the tree names: groupSize 0 = not (yet) in the tree.
struct Context {
  const Spec &spec;
  const std::vector<Buffer> &buffers;
  std::vector<View> &views;
  std::vector<Diagnostic> &diagnostics;
};

/// A subtree's buffer-group count and the first buffer in it (the one that
/// names the subtree in messages); firstLeaf -1 marks an invalid subtree.
struct Census {
  int64_t groups = 0;
  int firstLeaf = -1;
};

Census census(const TreeElement &element, int64_t groupSize, Context &ctx);

Census censusLeaf(int index, int64_t groupSize, Context &ctx) {
  int count = static_cast<int>(ctx.buffers.size());
  if (index < 0 || index >= count) {
    ctx.diagnostics.push_back(error(
        -1, "the overlap tree of " + specLabel(ctx.spec) +
                " names buffer index " + std::to_string(index) +
                ", but the spec has " + std::to_string(count) + " buffers"));
    return {};
  }
  const Buffer &buffer = ctx.buffers[index];
  View &view = ctx.views[index];
  if (view.groupSize != 0) {
    ctx.diagnostics.push_back(
        error(index, "buffer " + bufferLabel(buffer, index) +
                         " appears more than once in the overlap tree of " +
                         specLabel(ctx.spec)));
    return {};
  }
  view.groupSize = groupSize;
  int64_t buffersOfLeaf = bufferCount(buffer);
  if (buffersOfLeaf == 0)
    return {};
  if (buffersOfLeaf % groupSize != 0) {
    ctx.diagnostics.push_back(error(
        index, "buffer " + bufferLabel(buffer, index) + " has " +
                   std::to_string(buffersOfLeaf) +
                   " buffers, which is not a multiple of group_size " +
                   number(groupSize) + " (the product of its reuse groups)"));
    return {};
  }
  return {buffersOfLeaf / groupSize, index};
}

/// "(8 buffers)" or "(8 buffers = 2 groups of 4)".
std::string countText(const Census &census, const Context &ctx) {
  int64_t buffers = bufferCount(ctx.buffers[census.firstLeaf]);
  int64_t groupSize = ctx.views[census.firstLeaf].groupSize;
  std::string text = "(" + std::to_string(buffers) + " buffers";
  if (groupSize != 1)
    text += " = " + std::to_string(census.groups) + " groups of " +
            number(groupSize);
  return text + ")";
}

Diagnostic groupCountMismatch(const Census &first, const Census &other,
                              const Context &ctx) {
  const Census &larger = first.groups > other.groups ? first : other;
  const Census &smaller = first.groups > other.groups ? other : first;
  std::string hint = "give them equal counts";
  if (larger.groups % smaller.groups == 0)
    hint =
        "group " +
        bufferLabel(ctx.buffers[larger.firstLeaf], larger.firstLeaf) +
        " with group_size=" + std::to_string(larger.groups / smaller.groups) +
        " or " + hint;
  return error(
      other.firstLeaf,
      "buffers " + bufferLabel(ctx.buffers[first.firstLeaf], first.firstLeaf) +
          " " + countText(first, ctx) + " and " +
          bufferLabel(ctx.buffers[other.firstLeaf], other.firstLeaf) + " " +
          countText(other, ctx) + " cannot share buffer groups in " +
          specLabel(ctx.spec) + ": " + hint);
}

Census censusGroup(const Group &group, int64_t groupSize, Context &ctx) {
  bool valid = true;
  if (group.groupSize < 1) {
    ctx.diagnostics.push_back(error(
        -1, "a reuse_group in the overlap tree of " + specLabel(ctx.spec) +
                " has group_size=" + std::to_string(group.groupSize) +
                "; it must be at least 1"));
    valid = false;
  }
  if (group.children.empty()) {
    ctx.diagnostics.push_back(
        error(-1, "a reuse_group in the overlap tree of " +
                      specLabel(ctx.spec) + " has no children"));
    return {};
  }
  int64_t childGroupSize =
      valid ? satMul(groupSize, group.groupSize) : groupSize;
  Census result;
  for (const TreeElement &child : group.children) {
    Census childCensus = census(child, childGroupSize, ctx);
    if (childCensus.firstLeaf < 0) {
      valid = false;
    } else if (result.firstLeaf < 0) {
      result = childCensus;
    } else if (childCensus.groups != result.groups) {
      ctx.diagnostics.push_back(groupCountMismatch(result, childCensus, ctx));
      valid = false;
    }
  }
  return valid ? result : Census{};
}

Census census(const TreeElement &element, int64_t groupSize, Context &ctx) {
  if (const int *leaf = std::get_if<int>(&element))
    return censusLeaf(*leaf, groupSize, ctx);
  return censusGroup(*std::get_if<Group>(&element), groupSize, ctx);
}

/// What a placed subtree occupies per buffer group: `unit` with alignment
/// padding, `ideal` without; `align` is the lcm of size and alignment over
/// its leaves (where the subtree may start).
struct Extent {
  int64_t unit = 0;
  int64_t ideal = 0;
  int64_t align = 1;
};

void shift(const TreeElement &element, int64_t delta,
           std::vector<View> &views) {
  if (const int *leaf = std::get_if<int>(&element)) {
    views[*leaf].offset = satAdd(views[*leaf].offset, delta);
    return;
  }
  for (const TreeElement &child : std::get_if<Group>(&element)->children)
    shift(child, delta, views);
}

Extent place(const TreeElement &element, int64_t groupSize,
             std::vector<View> &views);

Extent placeLeaf(int index, int64_t groupSize, std::vector<View> &views) {
  View &view = views[index];
  view.offset = 0;
  int64_t unit = satMul(groupSize, view.bufferSize);
  return {unit, unit, lcm(view.bufferSize, view.alignment)};
}

Extent placeGroup(const Group &group, int64_t groupSize,
                  std::vector<View> &views) {
  int64_t childGroupSize = satMul(groupSize, group.groupSize);
  Extent extent;
  for (const TreeElement &child : group.children) {
    Extent childExtent = place(child, childGroupSize, views);
    extent.align = lcm(extent.align, childExtent.align);
    if (group.kind == GroupKind::Shared) {
      extent.unit = std::max(extent.unit, childExtent.unit);
      extent.ideal = std::max(extent.ideal, childExtent.ideal);
      continue;
    }
    int64_t start = roundUp(extent.unit, childExtent.align);
    if (start != 0)
      shift(child, start, views);
    extent.unit = satAdd(start, childExtent.unit);
    extent.ideal = satAdd(extent.ideal, childExtent.ideal);
  }
  return extent;
}

/// Places the subtree at offset 0 (relative to its parent's start).
Extent place(const TreeElement &element, int64_t groupSize,
             std::vector<View> &views) {
  if (const int *leaf = std::get_if<int>(&element))
    return placeLeaf(*leaf, groupSize, views);
  return placeGroup(*std::get_if<Group>(&element), groupSize, views);
}

//===----------------------------------------------------------------------===//
// Region sizing.
//===----------------------------------------------------------------------===//

/// What the placement needs: the region size before rounding and what an
/// ideal packing would use, both in the plan's unit.
struct Need {
  int64_t region = 0;
  int64_t ideal = 0;
};

/// Places every buffer named by the (valid) `tree`, which has `groups`
/// buffer groups, and sets their common stride.
void placeTree(const Group &tree, int64_t groups, Context &ctx, Need &need) {
  Extent extent = placeGroup(tree, 1, ctx.views);
  int64_t quantum =
      lcm(extent.align, ctx.spec.storage == Storage::Smem ? kSmemRowBytes : 1);
  int64_t stride = roundUp(extent.unit, quantum);
  for (View &view : ctx.views)
    if (view.groupSize != 0)
      view.bytesBetweenBufferGroups = stride;
  need.region = satMul(stride, groups);
  need.ideal = satMul(extent.ideal, groups);
}

/// Places a buffer outside any tree at offset 0 with its own stride.
void placeAlone(View &view, const Buffer &buffer, Need &need) {
  view.groupSize = 1;
  view.offset = 0;
  view.bytesBetweenBufferGroups = view.bufferSize;
  int64_t bytes = satMul(bufferCount(buffer), view.bufferSize);
  need.region = std::max(need.region, bytes);
  need.ideal = std::max(need.ideal, bytes);
}

/// TMEM rows: 64 when every user has M <= 64 and blockM 64, else 128.
int64_t tmemRows(const std::vector<Buffer> &buffers) {
  bool half = !buffers.empty() &&
              std::all_of(buffers.begin(), buffers.end(), [](const Buffer &b) {
                return tmemBufferRows(b) <= kTmemHalfLanes &&
                       b.layout.blockM == kTmemHalfLanes;
              });
  return half ? kTmemHalfLanes : kTmemLanes;
}

/// Validates an explicit SMEM size against the minimal region; returns the
/// region to use.
int64_t explicitSmemRegion(int64_t explicitBytes, int64_t minimal,
                           const Context &ctx) {
  auto given = [&] {
    return "buffer_size_bytes=" + std::to_string(explicitBytes) + " of " +
           specLabel(ctx.spec);
  };
  if (explicitBytes < minimal) {
    ctx.diagnostics.push_back(error(-1, given() +
                                            " is too small: the plan needs " +
                                            amount(minimal, Storage::Smem)));
    return minimal;
  }
  bool whole = true;
  if (explicitBytes % kSmemRowBytes != 0) {
    ctx.diagnostics.push_back(
        error(-1, given() + " is not a multiple of 128 bytes (the backing is "
                            "[n, 128] x i8)"));
    whole = false;
  }
  for (size_t i = 0; i < ctx.views.size(); ++i) {
    int64_t size = ctx.views[i].bufferSize;
    if (explicitBytes % size == 0)
      continue;
    ctx.diagnostics.push_back(
        error(static_cast<int>(i),
              given() + " is not a whole number of buffer " +
                  bufferLabel(ctx.buffers[i], static_cast<int>(i)) + "'s " +
                  sized(size, Storage::Smem) +
                  " buffers; its view must cover the region exactly"));
    whole = false;
  }
  return whole ? explicitBytes : minimal;
}

/// Validates an explicit TMEM size (bytes = rows x columns x 4); returns the
/// columns to use.
int64_t explicitTmemColumns(int64_t explicitBytes, int64_t minimalColumns,
                            int64_t rows, const Context &ctx) {
  auto given = [&] {
    return "buffer_size_bytes=" + std::to_string(explicitBytes) + " of " +
           specLabel(ctx.spec);
  };
  int64_t rowBytes = rows * kTmemColumnBytes;
  int64_t minimalBytes = satMul(minimalColumns, rowBytes);
  if (explicitBytes < minimalBytes) {
    ctx.diagnostics.push_back(error(
        -1, given() + " is too small: the plan needs " + number(minimalBytes) +
                " bytes (" + number(minimalColumns) + " columns x " +
                std::to_string(rows) + " rows x 4 bytes)"));
    return minimalColumns;
  }
  int64_t columns = explicitBytes / rowBytes;
  if (explicitBytes % rowBytes != 0 || !isPowerOfTwo(columns)) {
    ctx.diagnostics.push_back(error(
        -1, given() + " is not a power-of-two number of TMEM columns of " +
                std::to_string(rows) + " rows x 4 bytes; use " +
                number(satMul(nextPowerOfTwo(ceilDiv(explicitBytes, rowBytes)),
                              rowBytes)) +
                " bytes"));
    return minimalColumns;
  }
  return columns;
}

/// Fills the region fields of `plan` from what the placement needs.
void sizeRegion(const Need &need, Context &ctx, Plan &plan) {
  const Spec &spec = ctx.spec;
  bool smem = spec.storage == Storage::Smem;
  int64_t quantum = smem ? kSmemRowBytes : 1;
  for (const View &view : ctx.views)
    quantum = lcm(quantum, view.bufferSize);
  int64_t minimal = roundUp(need.region, quantum);
  bool hasExplicit = spec.explicitSizeBytes.has_value();
  int64_t explicitBytes = spec.explicitSizeBytes.value_or(0);
  if (hasExplicit && explicitBytes <= 0) {
    ctx.diagnostics.push_back(error(
        -1, "buffer_size_bytes of " + specLabel(spec) +
                " must be positive, got " + std::to_string(explicitBytes)));
    hasExplicit = false;
  }

  if (smem) {
    int64_t region =
        hasExplicit ? explicitSmemRegion(explicitBytes, minimal, ctx) : minimal;
    int64_t limit = smemLimitForTarget(spec.capability);
    if (region > limit)
      ctx.diagnostics.push_back(error(
          -1, specLabel(spec) + " needs " + amount(region, Storage::Smem) +
                  " of shared memory, more than the target's limit of " +
                  std::to_string(limit) + " bytes"));
    plan.regionSize = region;
    plan.sizeBytes = region;
    plan.backingShape = {region / kSmemRowBytes, kSmemRowBytes};
    plan.backingBlock = plan.backingShape;
    plan.alignment = kSmemMinAlignment;
    for (const View &view : ctx.views)
      plan.alignment = std::max(plan.alignment, view.alignment);
    plan.paddingBytes = region - need.ideal;
    return;
  }

  int64_t rows = tmemRows(ctx.buffers);
  int64_t minimalColumns = nextPowerOfTwo(std::max(kTmemMinColumns, minimal));
  int64_t columns = hasExplicit ? explicitTmemColumns(explicitBytes,
                                                      minimalColumns, rows, ctx)
                                : minimalColumns;
  if (columns > kTmemMaxColumns) {
    std::string rounded =
        !hasExplicit && minimal != columns
            ? " (" + number(minimal) + " rounded up to a power of two)"
            : "";
    ctx.diagnostics.push_back(
        error(-1, specLabel(spec) + " needs " + amount(columns, Storage::Tmem) +
                      " of tensor memory" + rounded +
                      ", more than the 512 columns TMEM has"));
  }
  int64_t rowBytes = rows * kTmemColumnBytes;
  plan.regionSize = columns;
  plan.sizeBytes = satMul(columns, rowBytes);
  plan.backingBlock = {rows, columns};
  plan.backingShape = {rows, columns};
  if (!ctx.buffers.empty()) {
    const Layout &split = ctx.buffers.front().layout;
    plan.backingShape = {satMul(rows, split.ctaSplitM),
                         satMul(columns, split.ctaSplitN)};
  }
  plan.alignment = 1;
  plan.paddingBytes = satMul(columns - need.ideal, rowBytes);
}

bool hasError(const std::vector<Diagnostic> &diagnostics) {
  return std::any_of(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

/// describe(): the header line about the region.
std::string describeRegion(const Plan &plan) {
  Storage storage = plan.storage;
  std::string text = storageName(storage) + " region: ";
  if (plan.backingShape.size() != 2)
    return text + "not planned\n";
  if (storage == Storage::Smem)
    text += number(plan.sizeBytes) + " bytes";
  else
    text += number(plan.regionSize) + " columns x " +
            number(plan.backingBlock.front()) +
            " rows = " + number(plan.sizeBytes) + " bytes" +
            (plan.backingBlock == plan.backingShape ? "" : " per CTA");
  return text + ", backing " + shapeText(plan.backingShape) +
         (storage == Storage::Smem ? " x i8" : " x i32") + ", alignment " +
         amount(plan.alignment, storage) + ", padding " +
         number(plan.paddingBytes) + " bytes\n";
}

/// describe(): the memory map table, one line per buffer.
std::string describeViews(const Plan &plan,
                          const std::vector<Buffer> &buffers) {
  using Row = std::array<std::string, 6>;
  std::vector<Row> rows = {
      {"buffer", "offset", "size", "stride", "group_size", "slots"}};
  for (size_t i = 0; i < plan.views.size() && i < buffers.size(); ++i) {
    const View &view = plan.views[i];
    rows.push_back({bufferLabel(buffers[i], static_cast<int>(i)),
                    number(view.offset), number(view.bufferSize),
                    number(view.bytesBetweenBufferGroups),
                    number(view.groupSize), number(view.slots)});
  }
  std::array<size_t, 6> widths{};
  for (const Row &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  std::string text;
  for (const Row &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line += " " + row[c] + std::string(widths[c] - row[c].size(), ' ');
    while (line.back() == ' ')
      line.pop_back();
    text += line + "\n";
  }
  return text + "  (offset, size and stride in " + unitName(plan.storage) +
         ")\n";
}

} // namespace

bool Plan::ok() const { return !hasError(diagnostics); }

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

int64_t requiredAlignment(const Buffer &buffer) {
  if (buffer.storage == Storage::Tmem)
    return 1;
  if (buffer.layout.kind != LayoutKind::NvmmaShared)
    return kSmemMinAlignment;
  int64_t maxPhase = buffer.layout.swizzleBytes / kNvmmaPhaseBytes;
  return std::max(kSmemMinAlignment, kSmemMinAlignment * maxPhase);
}

int64_t slotOf(const View &view, int64_t index) {
  int64_t groupSize = std::max<int64_t>(view.groupSize, 1);
  return view.scale * (index / groupSize) + view.offsetSlots +
         index % groupSize;
}

View viewFromPlacement(const Buffer &buffer, int64_t offset, int64_t stride,
                       int64_t groupSize, int64_t regionSize) {
  View view;
  view.bufferSize = bufferSize(buffer);
  view.offset = offset;
  view.bytesBetweenBufferGroups = stride;
  view.groupSize = groupSize;
  view.alignment = requiredAlignment(buffer);
  if (view.bufferSize > 0) {
    view.scale = stride / view.bufferSize;
    view.offsetSlots = offset / view.bufferSize;
    view.slots = regionSize / view.bufferSize;
  }
  return view;
}

std::vector<Diagnostic> checkView(const View &view, const Buffer &buffer,
                                  int bufferIndex, int64_t regionSize) {
  std::vector<Diagnostic> problems;
  // Messages are built only when a check fails: planning stays cheap.
  auto label = [&] { return "buffer " + bufferLabel(buffer, bufferIndex); };
  Storage storage = buffer.storage;
  int64_t size = view.bufferSize;
  auto report = [&](std::string message) {
    problems.push_back(error(bufferIndex, std::move(message)));
  };
  if (size <= 0) {
    report(label() + " has no size (shape " + shapeText(buffer.shape) +
           ", element_bits=" + std::to_string(buffer.elementBits) + ")");
    return problems;
  }
  auto whole = [&] {
    return "a whole number of its " + sized(size, storage) + " buffers";
  };
  int64_t alignment = std::max<int64_t>(view.alignment, 1);
  if (view.offset % size != 0)
    report(label() + " starts at offset " + amount(view.offset, storage) +
           ", which is not " + whole());
  else if (view.offset % alignment != 0)
    report(label() + " starts at offset " + amount(view.offset, storage) +
           ", which breaks its " + sized(alignment, storage) + " alignment");
  if (view.bytesBetweenBufferGroups % size != 0)
    report(label() + " has buffer groups " +
           amount(view.bytesBetweenBufferGroups, storage) +
           " apart, which is not " + whole());
  if (regionSize % size != 0)
    report("the region of " + amount(regionSize, storage) +
           " is not a whole number of " + label() + "'s " +
           sized(size, storage) + " buffers");
  else if (satMul(view.slots, size) != regionSize)
    report("the view of " + label() + " has " + std::to_string(view.slots) +
           " slots of " + amount(size, storage) +
           ", which does not cover the region of " +
           amount(regionSize, storage));
  if (!problems.empty())
    return problems;

  int64_t count = bufferCount(buffer);
  int64_t groupSize = view.groupSize;
  if (groupSize < 1 || count % groupSize != 0) {
    report(label() + " has " + std::to_string(count) +
           " buffers, which is not a multiple of its group_size " +
           std::to_string(groupSize));
    return problems;
  }
  if (count > groupSize &&
      view.bytesBetweenBufferGroups < satMul(groupSize, size)) {
    report(label() + " puts " + std::to_string(groupSize) + " buffers of " +
           amount(size, storage) +
           " in each buffer group, but its groups are " +
           amount(view.bytesBetweenBufferGroups, storage) + " apart");
    return problems;
  }
  // Within a group the slots rise by one, so the extremes are the first and
  // last buffer of the first and of the last group.
  std::array<int64_t, 4> extremes = {0, groupSize - 1, count - groupSize,
                                     count - 1};
  for (int64_t index : extremes) {
    int64_t slot = slotOf(view, index);
    if (slot < 0 || slot >= view.slots) {
      report(label() + " index " + std::to_string(index) + " maps to slot " +
             std::to_string(slot) + ", outside its view of " +
             std::to_string(view.slots) + " slots");
      return problems;
    }
  }
  return problems;
}

Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree) {
  Plan result;
  result.storage = spec.storage;
  std::string unavailable = storageUnavailable(spec.storage, spec.capability);
  if (!unavailable.empty())
    result.diagnostics.push_back(
        error(-1, specLabel(spec) + ": " + unavailable));
  if (buffers.empty())
    result.diagnostics.push_back(
        warning(-1, specLabel(spec) + " has no buffers"));
  for (size_t i = 0; i < buffers.size(); ++i)
    validateBuffer(spec, buffers[i], static_cast<int>(i), result.diagnostics);
  // One backing allocation holds every user: they split over CTAs alike.
  for (size_t i = 1; i < buffers.size(); ++i) {
    const Layout &first = buffers.front().layout;
    const Layout &layout = buffers[i].layout;
    if (layout.ctaSplitM == first.ctaSplitM &&
        layout.ctaSplitN == first.ctaSplitN)
      continue;
    result.diagnostics.push_back(
        error(static_cast<int>(i),
              "buffer " + bufferLabel(buffers[i], static_cast<int>(i)) +
                  " is split over " + splitText(layout) + " CTAs but buffer " +
                  bufferLabel(buffers.front(), 0) + " over " +
                  splitText(first) + "; the buffers of " + specLabel(spec) +
                  " share one allocation and must be split alike"));
  }

  result.views.resize(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    result.views[i].bufferSize = bufferSize(buffers[i]);
    result.views[i].alignment = requiredAlignment(buffers[i]);
    result.views[i].groupSize = 0;
  }
  Context ctx{spec, buffers, result.views, result.diagnostics};
  Census rootCensus;
  if (tree)
    rootCensus = censusGroup(*tree, 1, ctx);
  if (hasError(result.diagnostics)) {
    result.views.clear();
    return result;
  }
  Need need;
  if (tree)
    placeTree(*tree, rootCensus.groups, ctx, need);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (result.views[i].groupSize != 0)
      continue;
    placeAlone(result.views[i], buffers[i], need);
    if (tree)
      result.diagnostics.push_back(
          warning(static_cast<int>(i),
                  "buffer " + bufferLabel(buffers[i], static_cast<int>(i)) +
                      " is not in the overlap tree of " + specLabel(spec) +
                      "; placed at offset 0"));
  }

  sizeRegion(need, ctx, result);
  bool sized = !hasError(result.diagnostics);
  for (size_t i = 0; i < buffers.size(); ++i) {
    View &view = result.views[i];
    view = viewFromPlacement(buffers[i], view.offset,
                             view.bytesBetweenBufferGroups, view.groupSize,
                             result.regionSize);
    if (!sized)
      continue;
    for (Diagnostic &problem :
         checkView(view, buffers[i], static_cast<int>(i), result.regionSize))
      result.diagnostics.push_back(std::move(problem));
  }
  return result;
}

std::string describe(const Plan &plan, const std::vector<Buffer> &buffers) {
  std::string text = describeRegion(plan);
  if (!plan.views.empty())
    text += describeViews(plan, buffers);
  for (const Diagnostic &diagnostic : plan.diagnostics)
    text += (diagnostic.severity == Severity::Error ? "error: " : "warning: ") +
            diagnostic.message + "\n";
  return text;
}

} // namespace tlx::planner
