//===- Layout.cpp - The layout search (rule 4 of Planner.h) --------------===//
//
// A candidate layout is a period P (how many buffer groups the tree is laid
// out for before it repeats) and, for every reuse group, group-major or
// child-major. Placement is greedy at absolute addresses: a subtree starts at
// the first address after the cursor where the buffers at its start may
// start, and its buffers follow in the order written. A candidate counts
// when every user's buffers can be written as slots of one view (slot(i),
// docs/planner.md) and the layout
// passes the checks of `isValid`; the one whose last buffer ends first wins,
// the simplest on a tie. Where none reaches the ideal, one more candidate
// lays each buffer group out at its own width, one after the other (the
// placement of the aligned ideal, where later groups may be narrower than
// group 0), and fits each user's starts to a view; it is taken only when it
// ends first. The search runs with whole-region views first (a
// buffer starts at a multiple of its size) and, where the Triton writes views
// at a byte offset and that search misses the ideal, again with buffers that
// start at any multiple of their alignment; an offset layout is taken only
// when it ends first, so that the IR of a tree already at its ideal does not
// change. Where the Triton writes a view per buffer group (Spec::
// groupStrideForm) and all that misses the ideal, a last candidate repeats
// buffer group 0 at a free stride (freeGroupStride), taken likewise only
// when its region is smaller.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

namespace tlx::planner::detail {
namespace {

/// Beyond these, only the group-major layout (valid by construction) is
/// tried: checking a layout enumerates every buffer.
constexpr int64_t kMaxCheckedBuffers = 4096;
constexpr int kMaxSearchedGroups = 10;
/// Up to this many buffer groups, every order of groups 1..n-1 is tried
/// for the group-by-group candidate (3! orders at most).
constexpr int64_t kMaxReorderedGroups = 4;

/// Where one leaf's buffers of the first period start, and how far apart
/// its consecutive buffer groups are within the period.
struct LeafPosition {
  int64_t base = 0;
  int64_t groupStride = 0;
};

/// Per buffer: where each of its buffers starts.
using Starts = std::vector<std::vector<int64_t>>;

/// The coefficients of slot(i) without the offset (docs/planner.md, "The
/// slot of a buffer").
struct SlotCoefficients {
  int64_t period = 1;
  int64_t scale = 1;
  int64_t step = 1;
};

/// The smallest period whose slot(i) = scale (i / period) + step (i %
/// period) gives `slots[i]` for every i, or nullopt. `pitch` is the step of
/// period 1 (which no slot uses) and the scale of a single buffer.
std::optional<SlotCoefficients> fitSlots(const std::vector<int64_t> &slots,
                                         int64_t pitch) {
  int64_t count = static_cast<int64_t>(slots.size());
  for (int64_t period = 1; period <= count; ++period) {
    int64_t step = period > 1 ? slots[1] : pitch;
    int64_t scale = period < count ? slots[period] : satMul(step, period);
    if (step < 1)
      continue;
    bool fits = true;
    for (int64_t index = 0; index < count && fits; ++index)
      fits = slots[index] == satAdd(satMul(scale, index / period),
                                    satMul(step, index % period));
    if (fits)
      return SlotCoefficients{period, scale, step};
  }
  return std::nullopt;
}

struct Extent {
  int64_t start = 0;
  int64_t end = 0;
};

/// One buffer of the region, for the validity checks.
struct Placed {
  int64_t start = 0;
  int64_t end = 0;
  int64_t group = 0;
  int leaf = 0;
};

class Search {
public:
  Search(const Tree &tree, Storage storage, bool offsets)
      : tree(tree), unit(storage == Storage::Smem ? kSmemMinAlignment : 1),
        offsets(offsets), head(tree.nodes.size(), 1),
        quantum(tree.nodes.size(), 1) {
    for (size_t index = 0; index < tree.nodes.size(); ++index)
      if (!tree.nodes[index].leaf)
        groupNodes.push_back(static_cast<int>(index));
    computeQuanta(0);
    for (const Node &node : tree.nodes)
      if (node.leaf)
        totalBuffers = satAdd(totalBuffers, tree.leaves[node.buffer].count);
  }

  Arrangement run(LayoutFamily family, int64_t endGoal) {
    // No layout ends, rounded to the unit, before the ideal footprint.
    auto reached = [&](const Arrangement &arrangement) {
      return roundUp(arrangement.end, unit) <= endGoal;
    };
    std::optional<Arrangement> best = evaluate(1, 0);
    bool searchable = totalBuffers <= kMaxCheckedBuffers &&
                      static_cast<int>(groupNodes.size()) <= kMaxSearchedGroups;
    if (family == LayoutFamily::GroupMajor || !searchable || !best ||
        reached(*best))
      return finish(std::move(best));
    // No repetition (child-major where chosen) before the periodic layouts.
    std::vector<int64_t> periods = {tree.groups};
    if (family == LayoutFamily::Best)
      for (int64_t period = 2; period < tree.groups; ++period)
        periods.push_back(period);
    // Fewer child-major nodes first: the simplest layout wins a tie.
    uint32_t masks = uint32_t(1) << groupNodes.size();
    std::vector<uint32_t> order;
    for (uint32_t mask = 1; mask < masks; ++mask)
      order.push_back(mask);
    std::stable_sort(order.begin(), order.end(), [](uint32_t a, uint32_t b) {
      return __builtin_popcount(a) < __builtin_popcount(b);
    });
    for (int64_t period : periods) {
      for (uint32_t mask : order) {
        std::optional<Arrangement> candidate =
            evaluate(period, mask, best->end);
        if (!candidate)
          continue;
        best = std::move(candidate);
        if (reached(*best))
          return finish(std::move(best));
      }
    }
    return finish(std::move(best));
  }

  /// The group-by-group candidate that ends first, before `bound`: every
  /// order of groups 1..n-1 (group 0 first, so that each user's buffer 0 is
  /// its lowest) up to kMaxReorderedGroups groups, else the order written.
  /// With `ownStarts`, a user whose starts no one view's slots hold gets a
  /// view per buffer group at the starts of its own (ownStartsView).
  std::optional<Arrangement> groupByGroup(int64_t bound,
                                          bool ownStarts = false) const {
    if (tree.groups < 1 || totalBuffers > kMaxCheckedBuffers)
      return std::nullopt;
    std::vector<int64_t> order(tree.groups);
    std::iota(order.begin(), order.end(), 0);
    std::optional<Arrangement> best;
    do {
      if (std::optional<Arrangement> candidate =
              groupByGroupInOrder(order, bound, ownStarts)) {
        bound = candidate->end;
        best = std::move(candidate);
      }
    } while (tree.groups <= kMaxReorderedGroups &&
             std::next_permutation(order.begin() + 1, order.end()));
    return best;
  }

  /// The free group stride (Spec::groupStrideForm): buffer group 0 laid out
  /// alone, every other group at its places, `stride` further per group,
  /// the stride group 0's end rounded to every leaf's start quantum (its
  /// alignment and 128 bytes). A user whose starts are the slots of one view
  /// keeps one; any other gets a view per buffer group (Tree::
  /// groupStrideForm). Taken when it passes the checks and ends before
  /// `bound`.
  std::optional<Arrangement> freeGroupStride(int64_t bound) const {
    if (tree.groupStrideForm == ViewForm::Slots || !offsets ||
        tree.groups < 2 || totalBuffers > kMaxCheckedBuffers)
      return std::nullopt;
    Starts starts(tree.leaves.size());
    int64_t pitch = unit;
    for (const Node &node : tree.nodes) {
      if (!node.leaf)
        continue;
      starts[node.buffer].assign(tree.leaves[node.buffer].count, 0);
      pitch = lcm(pitch, startQuantum(tree.leaves[node.buffer]));
    }
    int64_t stride = roundUp(placeGroup(0, 0, 0, starts), pitch);
    Arrangement arrangement;
    arrangement.views.resize(tree.leaves.size());
    for (const Node &node : tree.nodes) {
      if (!node.leaf)
        continue;
      std::vector<int64_t> &leafStarts = starts[node.buffer];
      for (size_t index = node.groupSize; index < leafStarts.size(); ++index)
        leafStarts[index] = satAdd(leafStarts[index % node.groupSize],
                                   satMul(stride, index / node.groupSize));
      std::optional<View> view = fittedView(node.buffer, leafStarts);
      if (!view)
        view = groupView(node.buffer, leafStarts.front(), stride);
      if (!view)
        return std::nullopt;
      arrangement.views[node.buffer] = *view;
      arrangement.end = std::max(
          arrangement.end, viewEnd(*view, tree.leaves[node.buffer].count));
    }
    if (arrangement.end >= bound || !isValid(arrangement.views))
      return std::nullopt;
    arrangement.name =
        "buffer group 0 repeated every " + amount(stride, Storage::Smem);
    return arrangement;
  }

private:
  /// The view per buffer group (Tree::groupStrideForm) of `leaf`, whose
  /// group 0 starts at `first` and whose groups are `stride` apart, its K
  /// buffers of a group a quantum apart; nullopt where the first start is no
  /// row of the backing.
  std::optional<View> groupView(int leaf, int64_t first, int64_t stride) const {
    const LeafInfo &info = tree.leaves[leaf];
    if (info.size <= 0 || info.quantum % info.size != 0 ||
        first % kSmemRowBytes != 0 || first % startQuantum(info) != 0)
      return std::nullopt;
    View view;
    view.bufferSize = info.size;
    view.alignment = info.alignment;
    view.groupSize = tree.nodes[info.node].groupSize;
    view.offset = first;
    view.base = first;
    view.form = tree.groupStrideForm;
    view.groupStride = stride;
    view.period = view.groupSize;
    view.scale = 0;
    view.offsetSlots = 0;
    view.step = info.quantum / info.size;
    return view;
  }

  void computeQuanta(int index) {
    const Node &node = tree.nodes[index];
    if (node.leaf) {
      head[index] = startQuantum(tree.leaves[node.buffer]);
      quantum[index] = tree.leaves[node.buffer].quantum;
      return;
    }
    int64_t headQuantum = 1;
    int64_t all = 1;
    for (size_t position = 0; position < node.children.size(); ++position) {
      int child = node.children[position];
      computeQuanta(child);
      all = lcm(all, quantum[child]);
      if (node.kind == GroupKind::Shared || position == 0)
        headQuantum = lcm(headQuantum, head[child]);
    }
    head[index] = headQuantum;
    quantum[index] = all;
  }

  /// Where a leaf's first buffer may start: its quantum in a whole-region
  /// view, any multiple of its alignment (and of 128 bytes) in a view from a
  /// byte offset.
  int64_t startQuantum(const LeafInfo &leaf) const {
    return offsets ? lcm(leaf.alignment, unit) : leaf.quantum;
  }

  bool childMajor(int index, uint32_t mask) const {
    auto found = std::find(groupNodes.begin(), groupNodes.end(), index);
    return (mask >> (found - groupNodes.begin())) & 1;
  }

  /// One buffer group of `index`, group-major, at the first address >=
  /// `cursor` where the buffers at its start may start.
  Extent window(int index, int64_t cursor,
                std::vector<LeafPosition> &positions) const {
    const Node &node = tree.nodes[index];
    int64_t start = roundUp(cursor, head[index]);
    if (node.leaf) {
      const LeafInfo &leaf = tree.leaves[node.buffer];
      positions[node.buffer].base = start;
      // The last of its K buffers ends at its size; the next start honours
      // its own quantum (the whole-region search keeps a whole quantum, as
      // the plans of today's kernels have it).
      int64_t last = offsets ? leaf.size : leaf.quantum;
      return {start,
              satAdd(start,
                     satAdd(satMul(node.groupSize - 1, leaf.quantum), last))};
    }
    int64_t end = start;
    for (int child : node.children) {
      Extent extent = window(
          child, node.kind == GroupKind::Shared ? start : end, positions);
      end = std::max(end, extent.end);
    }
    return {start, end};
  }

  /// `index` over the (up to) `period` buffer groups of one period.
  Extent place(int index, uint32_t mask, int64_t period, int64_t cursor,
               std::vector<LeafPosition> &positions) const {
    const Node &node = tree.nodes[index];
    int64_t groups = std::min(period, node.groups);
    if (node.leaf || !childMajor(index, mask)) {
      Extent extent = window(index, cursor, positions);
      int64_t width = extent.end - extent.start;
      int64_t stride = groups > 1 ? roundUp(width, quantum[index]) : width;
      for (int leaf : node.leaves)
        positions[leaf].groupStride = stride;
      return {extent.start,
              satAdd(extent.start, satAdd(satMul(stride, groups - 1), width))};
    }
    int64_t start = roundUp(cursor, head[index]);
    int64_t end = start;
    int anchor = -1;
    int64_t anchorWidth = -1;
    for (int child : node.children) {
      Extent extent =
          place(child, mask, period,
                node.kind == GroupKind::Shared ? start : end, positions);
      end = std::max(end, extent.end);
      if (extent.end - extent.start > anchorWidth) {
        anchor = child;
        anchorWidth = extent.end - extent.start;
      }
    }
    if (node.kind == GroupKind::Shared)
      anchorLeaves(node, anchor, positions);
    return {start, end};
  }

  /// A leaf child of a child-major shared node sits at the start of its
  /// largest sibling's bytes in each buffer group.
  void anchorLeaves(const Node &node, int anchor,
                    std::vector<LeafPosition> &positions) const {
    const std::vector<int> &anchorLeaves = tree.nodes[anchor].leaves;
    int first = *std::min_element(
        anchorLeaves.begin(), anchorLeaves.end(),
        [&](int a, int b) { return positions[a].base < positions[b].base; });
    for (int child : node.children) {
      const Node &childNode = tree.nodes[child];
      if (child != anchor && childNode.leaf)
        positions[childNode.buffer] = positions[first];
    }
  }

  /// The view of `leaf` in a layout that repeats every `periodUnits` units
  /// and `period` buffer groups, or nullopt when its buffers are not slots
  /// of one view.
  std::optional<View> viewOf(int leaf, const LeafPosition &position,
                             int64_t period, int64_t periodUnits) const {
    const LeafInfo &info = tree.leaves[leaf];
    const Node &node = tree.nodes[info.node];
    int64_t size = info.size;
    int64_t base = position.base;
    int64_t stride = position.groupStride;
    int64_t groupSize = node.groupSize;
    if (size <= 0 || info.quantum % size != 0)
      return std::nullopt;
    // A whole-region view where buffer 0 sits at a multiple of the size
    // (today's IR), else a view from buffer 0's start.
    bool offsetView = base % size != 0;
    if (offsetView && (!offsets || base % startQuantum(info) != 0))
      return std::nullopt;
    View view;
    view.bufferSize = size;
    view.alignment = info.alignment;
    view.groupSize = groupSize;
    view.offset = base;
    view.base = offsetView ? base : 0;
    view.offsetSlots = offsetView ? 0 : base / size;
    view.step = info.quantum / size;
    view.period = groupSize;
    if (node.groups <= period) {
      // One period holds every group of the leaf.
      if (node.groups == 1)
        view.scale = satMul(groupSize, view.step);
      else if (stride % size == 0)
        view.scale = stride / size;
      else
        return std::nullopt;
      return view;
    }
    if (periodUnits % size != 0)
      return std::nullopt;
    if (period == 1) {
      view.scale = periodUnits / size;
    } else if (satMul(stride, period) == periodUnits && stride % size == 0) {
      view.scale = stride / size;
    } else if (groupSize == 1 && stride % size == 0) {
      view.period = period;
      view.scale = periodUnits / size;
      view.step = stride / size;
    } else if (stride == satMul(groupSize, info.quantum)) {
      view.period = satMul(period, groupSize);
      view.scale = periodUnits / size;
    } else {
      return std::nullopt;
    }
    return view;
  }

  /// The layout of `period` and `mask` if its buffers can be written as
  /// views, pass the checks and end before `bound`.
  std::optional<Arrangement>
  evaluate(int64_t period, uint32_t mask,
           int64_t bound = std::numeric_limits<int64_t>::max()) const {
    std::vector<LeafPosition> positions(tree.leaves.size());
    Extent extent = place(0, mask, period, 0, positions);
    // The period matters only for leaves with groups in more than one.
    int64_t periodQuantum = unit;
    for (const Node &node : tree.nodes)
      if (node.leaf && node.groups > period)
        periodQuantum = lcm(periodQuantum, tree.leaves[node.buffer].quantum);
    int64_t periodUnits = roundUp(extent.end, periodQuantum);

    Arrangement arrangement;
    arrangement.views.resize(tree.leaves.size());
    for (const Node &node : tree.nodes) {
      if (!node.leaf)
        continue;
      std::optional<View> view =
          viewOf(node.buffer, positions[node.buffer], period, periodUnits);
      if (!view)
        return std::nullopt;
      arrangement.views[node.buffer] = *view;
      arrangement.end = std::max(
          arrangement.end, viewEnd(*view, tree.leaves[node.buffer].count));
    }
    if (arrangement.end >= bound)
      return std::nullopt;
    if (mask != 0 && !isValid(arrangement.views))
      return std::nullopt;
    arrangement.name = layoutName(period, mask);
    return arrangement;
  }

  /// The largest slot any of `count` buffers occupies (the coefficients are
  /// non-negative, so it is the last buffer of the last or next-to-last
  /// period).
  static int64_t lastSlot(const View &view, int64_t count) {
    if (count <= 0)
      return 0;
    int64_t lastPeriod = (count - 1) / view.period;
    int64_t last = slotOf(view, count - 1);
    if (lastPeriod == 0)
      return last;
    return std::max(last, satAdd(satAdd(satMul(view.scale, lastPeriod - 1),
                                        view.offsetSlots),
                                 satMul(view.step, view.period - 1)));
  }

  /// Where the last of `count` buffers of `view` ends (a view per buffer
  /// group: the last group's view, whose slots are those of the first).
  static int64_t viewEnd(const View &view, int64_t count) {
    int64_t lastStart = viewStart(view, std::max<int64_t>(count - 1, 0));
    for (int64_t start : view.groupStarts)
      lastStart = std::max(lastStart, start);
    return satAdd(
        satAdd(
            lastStart,
            satMul(lastSlot(view, view.perGroup() ? std::min(count, view.period)
                                                  : count),
                   view.bufferSize)),
        view.bufferSize);
  }

  /// Each buffer group at its own width, one after the other in `order`, if
  /// every user's starts are the slots of one view, the layout passes the
  /// checks and ends before `bound`.
  std::optional<Arrangement>
  groupByGroupInOrder(const std::vector<int64_t> &order, int64_t bound,
                      bool ownStarts) const {
    Starts starts(tree.leaves.size());
    for (const Node &node : tree.nodes)
      if (node.leaf)
        starts[node.buffer].assign(tree.leaves[node.buffer].count, 0);
    int64_t cursor = 0;
    for (int64_t group : order)
      cursor = placeGroup(0, group, cursor, starts);
    Arrangement arrangement;
    arrangement.views.resize(tree.leaves.size());
    for (const Node &node : tree.nodes) {
      if (!node.leaf)
        continue;
      std::optional<View> view = fittedView(node.buffer, starts[node.buffer]);
      if (!view && ownStarts)
        view = ownStartsView(node.buffer, starts[node.buffer]);
      if (!view)
        return std::nullopt;
      arrangement.views[node.buffer] = *view;
      arrangement.end = std::max(
          arrangement.end, viewEnd(*view, tree.leaves[node.buffer].count));
    }
    if (arrangement.end >= bound || !isValid(arrangement.views))
      return std::nullopt;
    arrangement.name = "each buffer group at its own width";
    if (ownStarts)
      arrangement.name += ", a view per buffer group where no one view fits";
    if (!std::is_sorted(order.begin(), order.end())) {
      arrangement.name += ", in the order";
      for (size_t position = 0; position < order.size(); ++position)
        arrangement.name +=
            (position == 0 ? " " : ", ") + std::to_string(order[position]);
    }
    return arrangement;
  }

  /// Buffer group `group` of `index` alone at the first address >= `cursor`
  /// where its buffers at its start may start (a subtree without that group
  /// takes no bytes); records where its buffers start and returns its end.
  int64_t placeGroup(int index, int64_t group, int64_t cursor,
                     Starts &starts) const {
    const Node &node = tree.nodes[index];
    if (group >= node.groups)
      return cursor;
    int64_t start = roundUp(cursor, groupHead(index, group));
    if (node.leaf) {
      const LeafInfo &leaf = tree.leaves[node.buffer];
      for (int64_t member = 0; member < node.groupSize; ++member)
        starts[node.buffer][group * node.groupSize + member] =
            satAdd(start, satMul(member, leaf.quantum));
      return satAdd(
          start, satAdd(satMul(node.groupSize - 1, leaf.quantum), leaf.size));
    }
    int64_t end = start;
    for (int child : node.children)
      end =
          std::max(end, placeGroup(child, group,
                                   node.kind == GroupKind::Shared ? start : end,
                                   starts));
    return end;
  }

  /// Where buffer group `group` of `index` may start: the lcm of the start
  /// quanta of the leaves at its start that have that group.
  int64_t groupHead(int index, int64_t group) const {
    const Node &node = tree.nodes[index];
    if (node.leaf)
      return startQuantum(tree.leaves[node.buffer]);
    int64_t headQuantum = 1;
    for (int child : node.children) {
      if (group >= tree.nodes[child].groups)
        continue;
      headQuantum = lcm(headQuantum, groupHead(child, group));
      if (node.kind == GroupKind::Distinct)
        break;
    }
    return headQuantum;
  }

  /// The view whose slots hold `leaf`'s buffers at `starts` (buffer 0 the
  /// lowest, every distance a multiple of its size, the first start where a
  /// view may begin), or nullopt.
  std::optional<View> fittedView(int leaf,
                                 const std::vector<int64_t> &starts) const {
    const LeafInfo &info = tree.leaves[leaf];
    int64_t size = info.size;
    if (size <= 0 || starts.empty() || info.quantum % size != 0)
      return std::nullopt;
    int64_t first = starts.front();
    bool offsetView = first % size != 0;
    if (offsetView && (!offsets || first % startQuantum(info) != 0))
      return std::nullopt;
    std::vector<int64_t> slots;
    for (int64_t start : starts) {
      if (start < first || (start - first) % size != 0)
        return std::nullopt;
      slots.push_back((start - first) / size);
    }
    std::optional<SlotCoefficients> coefficients =
        fitSlots(slots, info.quantum / size);
    if (!coefficients)
      return std::nullopt;
    View view;
    view.bufferSize = size;
    view.alignment = info.alignment;
    view.groupSize = tree.nodes[info.node].groupSize;
    view.offset = first;
    view.base = offsetView ? first : 0;
    view.offsetSlots = offsetView ? 0 : first / size;
    view.period = coefficients->period;
    view.scale = coefficients->scale;
    view.step = coefficients->step;
    return view;
  }

  /// A view per buffer group of `leaf` whose groups start where `starts`
  /// puts them (View::groupStarts, written SelectedRows, each group's view in
  /// the Triton's offset form: Triton 3.6, 3.7 and 3.9), its K buffers of a
  /// group a quantum apart: for starts no one view's slots hold (a view per
  /// buffer where K is 1). Nullopt where the Triton writes no view per buffer
  /// group (3.8), a group starts at no row of the backing or its buffers are
  /// not a quantum apart.
  std::optional<View> ownStartsView(int leaf,
                                    const std::vector<int64_t> &starts) const {
    const LeafInfo &info = tree.leaves[leaf];
    int64_t groupSize = tree.nodes[info.node].groupSize;
    if (!offsets || tree.groupStrideForm == ViewForm::Slots || info.size <= 0 ||
        info.quantum % info.size != 0 || starts.empty() ||
        static_cast<int64_t>(starts.size()) % groupSize != 0)
      return std::nullopt;
    View view;
    for (size_t index = 0; index < starts.size(); ++index) {
      int64_t first = starts[index - index % groupSize];
      if (first % kSmemRowBytes != 0 || first % startQuantum(info) != 0 ||
          starts[index] !=
              satAdd(first, satMul(static_cast<int64_t>(index) % groupSize,
                                   info.quantum)))
        return std::nullopt;
      if (index % groupSize == 0)
        view.groupStarts.push_back(first);
    }
    view.bufferSize = info.size;
    view.alignment = info.alignment;
    view.groupSize = groupSize;
    view.offset = starts.front();
    view.base = starts.front();
    view.form = ViewForm::SelectedRows;
    view.period = groupSize;
    view.scale = 0;
    view.offsetSlots = 0;
    view.step = info.quantum / info.size;
    return view;
  }

  /// Rule 4's checks over every buffer: alignment; buffers of one user,
  /// of different groups, or of distinct siblings never overlap; distinct
  /// children keep their order in every group, and shared children their
  /// common start in every group where each has all its buffers.
  bool isValid(const std::vector<View> &views) const {
    std::vector<Placed> placed;
    for (const Node &node : tree.nodes) {
      if (!node.leaf)
        continue;
      const View &view = views[node.buffer];
      int64_t count = tree.leaves[node.buffer].count;
      for (int64_t index = 0; index < count; ++index) {
        int64_t start = bufferStart(view, index);
        if (start % view.alignment != 0)
          return false;
        placed.push_back({start, start + view.bufferSize,
                          index / node.groupSize, node.buffer});
      }
    }
    std::sort(
        placed.begin(), placed.end(),
        [](const Placed &a, const Placed &b) { return a.start < b.start; });
    for (size_t i = 0; i < placed.size(); ++i)
      for (size_t j = i + 1;
           j < placed.size() && placed[j].start < placed[i].end; ++j)
        if (!mayOverlap(placed[i], placed[j]))
          return false;
    std::vector<Extent> ranges;
    return groupsInOrder(0, placed, ranges);
  }

  bool mayOverlap(const Placed &a, const Placed &b) const {
    if (a.leaf == b.leaf || a.group != b.group)
      return false;
    return lowestCommonAncestorKind(a.leaf, b.leaf) == GroupKind::Shared;
  }

  GroupKind lowestCommonAncestorKind(int a, int b) const {
    std::vector<int> ancestors;
    for (int node = tree.leaves[a].node; node >= 0;
         node = tree.nodes[node].parent)
      ancestors.push_back(node);
    for (int node = tree.leaves[b].node; node >= 0;
         node = tree.nodes[node].parent)
      if (std::find(ancestors.begin(), ancestors.end(), node) !=
          ancestors.end())
        return tree.nodes[node].kind;
    return GroupKind::Shared;
  }

  /// Fills `ranges` (per group: the bytes `index` spans, end 0 when absent)
  /// and checks the order of distinct children and the common start of
  /// shared children below `index`.
  bool groupsInOrder(int index, const std::vector<Placed> &placed,
                     std::vector<Extent> &ranges) const {
    const Node &node = tree.nodes[index];
    ranges.assign(tree.groups, Extent{kSaturated, 0});
    if (node.leaf) {
      for (const Placed &buffer : placed) {
        if (buffer.leaf != node.buffer)
          continue;
        Extent &range = ranges[buffer.group];
        range.start = std::min(range.start, buffer.start);
        range.end = std::max(range.end, buffer.end);
      }
      return true;
    }
    std::vector<Extent> previous(tree.groups, Extent{kSaturated, 0});
    std::vector<int64_t> sharedStarts(tree.groups, kSaturated);
    std::vector<Extent> child;
    for (int childIndex : node.children) {
      if (!groupsInOrder(childIndex, placed, child))
        return false;
      for (int64_t group = 0; group < tree.groups; ++group) {
        int64_t &sharedStart = sharedStarts[group];
        const Extent &range = child[group];
        if (range.end == 0)
          continue;
        Extent &before = previous[group];
        bool first = before.end == 0;
        if (node.kind == GroupKind::Distinct && !first &&
            range.start < before.end)
          return false;
        // Shared children start together in a group where each has all its
        // buffers (a child missing some keeps its place in the layout).
        bool complete = group < fewestGroups(childIndex);
        if (node.kind == GroupKind::Shared && complete) {
          if (sharedStart == kSaturated)
            sharedStart = range.start;
          else if (range.start != sharedStart)
            return false;
        }
        before = range;
        Extent &all = ranges[group];
        all.start = std::min(all.start, range.start);
        all.end = std::max(all.end, range.end);
      }
    }
    return true;
  }

  /// The fewest buffer groups any leaf below `index` has.
  int64_t fewestGroups(int index) const {
    int64_t fewest = kSaturated;
    for (int leaf : tree.nodes[index].leaves)
      fewest = std::min(fewest, tree.nodes[tree.leaves[leaf].node].groups);
    return fewest;
  }

  std::string layoutName(int64_t period, uint32_t mask) const {
    if (mask == 0)
      return "group-major";
    int childMajorNodes = __builtin_popcount(mask);
    std::string name =
        childMajorNodes == static_cast<int>(groupNodes.size())
            ? "child-major"
            : "child-major at " + std::to_string(childMajorNodes) + " of " +
                  std::to_string(groupNodes.size()) + " reuse groups";
    if (period < tree.groups)
      name += ", repeating every " + std::to_string(period) + " buffer groups";
    return name;
  }

  static Arrangement finish(std::optional<Arrangement> best) {
    return best ? std::move(*best) : Arrangement{};
  }

  const Tree &tree;
  int64_t unit;
  bool offsets;
  /// Per node: the lcm of the quanta of the leaves at its start (where it
  /// may start), and of all its leaves (what its period is a multiple of).
  std::vector<int64_t> head;
  std::vector<int64_t> quantum;
  std::vector<int> groupNodes;
  int64_t totalBuffers = 0;
};

} // namespace

namespace {

/// The tree's own layout: whole-region views, or views at byte offsets
/// where they end the region earlier.
Arrangement treeLayout(const Tree &tree, Storage storage, LayoutFamily family,
                       int64_t endGoal) {
  Arrangement whole = Search(tree, storage, false).run(family, endGoal);
  if (!tree.offsetViews || roundUp(whole.end, kSmemRowBytes) <= endGoal)
    return whole;
  Arrangement offset = Search(tree, storage, true).run(family, endGoal);
  if (offset.views.empty() ||
      roundUp(offset.end, kSmemRowBytes) >= roundUp(whole.end, kSmemRowBytes))
    return whole;
  offset.name += ", views at byte offsets";
  return offset;
}

} // namespace

/// The smallest region that holds `end` units (rule 5): SMEM rounds to
/// 128-byte rows, TMEM to a power of two of at least 32 columns, and both to
/// a multiple of every view's buffer size when the views must be whole.
int64_t minimalRegion(Storage storage, bool wholeViews,
                      const std::vector<View> &views, int64_t end) {
  bool smem = storage == Storage::Smem;
  int64_t quantum = smem ? kSmemRowBytes : 1;
  for (const View &view : views)
    if (wholeViews && view.bufferSize > 0)
      quantum = lcm(quantum, view.bufferSize);
  int64_t minimal = roundUp(end, quantum);
  return smem ? minimal : nextPowerOfTwo(std::max(kTmemMinColumns, minimal));
}

Arrangement unsharedLayout(const Tree &tree, Storage storage) {
  int64_t unit = storage == Storage::Smem ? kSmemMinAlignment : 1;
  Arrangement arrangement;
  arrangement.views.resize(tree.leaves.size());
  arrangement.name = "every buffer in bytes of its own";
  int64_t cursor = 0;
  for (int leaf : tree.nodes.front().leaves) {
    const LeafInfo &info = tree.leaves[leaf];
    if (info.size <= 0)
      continue;
    int64_t start = roundUp(cursor, tree.offsetViews ? lcm(info.alignment, unit)
                                                     : info.quantum);
    // A whole-region view where the start allows it (as the search does).
    bool offsetView = start % info.size != 0;
    View &view = arrangement.views[leaf];
    view.bufferSize = info.size;
    view.alignment = info.alignment;
    view.groupSize = tree.nodes[info.node].groupSize;
    view.offset = start;
    view.base = offsetView ? start : 0;
    view.offsetSlots = offsetView ? 0 : start / info.size;
    view.scale = info.quantum / info.size;
    cursor =
        satAdd(start, satAdd(satMul(info.count - 1, info.quantum), info.size));
  }
  arrangement.end = cursor;
  return arrangement;
}

namespace {

/// `today` (the search's layout, or every buffer in bytes of its own), or
/// the group-by-group candidate (whole-region views, or views at byte
/// offsets where the Triton writes them; with `ownStarts`, views per buffer
/// group at starts of their own where no one view fits) where its region
/// is smaller: on a tie the plans of today's kernels keep their IR.
Arrangement withGroupByGroup(const Tree &tree, Storage storage,
                             Arrangement today, int64_t endGoal,
                             bool ownStarts = false) {
  int64_t region =
      minimalRegion(storage, tree.wholeViews, today.views, today.end);
  if (today.views.empty() || region <= endGoal)
    return today;
  std::optional<Arrangement> best;
  for (bool offsets : {false, true}) {
    if (offsets && !tree.offsetViews)
      continue;
    if (ownStarts && (!offsets || tree.groupStrideForm == ViewForm::Slots))
      continue;
    std::optional<Arrangement> candidate =
        Search(tree, storage, offsets).groupByGroup(today.end, ownStarts);
    if (!candidate || minimalRegion(storage, tree.wholeViews, candidate->views,
                                    candidate->end) >= region)
      continue;
    region = minimalRegion(storage, tree.wholeViews, candidate->views,
                           candidate->end);
    if (offsets)
      candidate->name += ", views at byte offsets";
    best = std::move(candidate);
  }
  return best ? std::move(*best) : std::move(today);
}

/// `today`, or the free group stride where the Triton writes a view per
/// buffer group and its region is smaller: on a tie the plans of today's
/// kernels keep their IR.
Arrangement withFreeGroupStride(const Tree &tree, Storage storage,
                                Arrangement today, int64_t endGoal) {
  int64_t region =
      minimalRegion(storage, tree.wholeViews, today.views, today.end);
  if (tree.groupStrideForm == ViewForm::Slots || today.views.empty() ||
      region <= endGoal)
    return today;
  std::optional<Arrangement> candidate =
      Search(tree, storage, true).freeGroupStride(today.end);
  if (!candidate || minimalRegion(storage, tree.wholeViews, candidate->views,
                                  candidate->end) >= region)
    return today;
  return std::move(*candidate);
}

} // namespace

Arrangement searchLayout(const Tree &tree, Storage storage, LayoutFamily family,
                         int64_t endGoal) {
  Arrangement shared = treeLayout(tree, storage, family, endGoal);
  if (family != LayoutFamily::Best)
    return shared;
  int64_t unit = storage == Storage::Smem ? kSmemRowBytes : 1;
  Arrangement unshared = unsharedLayout(tree, storage);
  // Last, where all that misses the ideal: the group-by-group layout with
  // views per buffer group at starts of their own (Triton 3.6, 3.7, 3.9), so
  // that a plan one view per user (or a common group stride) reaches keeps it.
  auto candidates = [&](Arrangement today) {
    return withGroupByGroup(
        tree, storage,
        withFreeGroupStride(
            tree, storage,
            withGroupByGroup(tree, storage, std::move(today), endGoal),
            endGoal),
        endGoal, true);
  };
  if (!shared.views.empty() &&
      roundUp(unshared.end, unit) >= roundUp(shared.end, unit))
    return candidates(std::move(shared));
  unshared.sharedEnd = shared.end;
  return candidates(std::move(unshared));
}

} // namespace tlx::planner::detail
