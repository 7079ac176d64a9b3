//===- Advice.cpp - What giving buffers bytes of their own would cost ----===//
//
// A `shared` node saves memory by letting its children occupy the same
// bytes, which costs the kernel synchronisation. When the target has room
// to spare, some of that sharing is unnecessary: adviseSplits re-plans the
// tree with one candidate taken out of the sharing and says whether the
// kernel would still fit (docs/plan-report.md).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>

namespace tlx::planner {

using namespace detail;

namespace {

using Path = std::vector<int>;

void collectLeaves(const TreeElement &element, std::vector<int> &leaves) {
  if (const int *buffer = std::get_if<int>(&element)) {
    leaves.push_back(*buffer);
    return;
  }
  for (const TreeElement &child : std::get<Group>(element).children)
    collectLeaves(child, leaves);
}

/// The group at `path` below `root` (const or not).
template <typename GroupType>
GroupType &groupAt(GroupType &root, const Path &path) {
  GroupType *group = &root;
  for (int child : path)
    group = &std::get<Group>(group->children[child]);
  return *group;
}

/// `element` with buffer indices renumbered by `newIndex`.
TreeElement renumbered(const TreeElement &element,
                       const std::vector<int> &newIndex) {
  if (const int *buffer = std::get_if<int>(&element))
    return newIndex[*buffer];
  Group group = std::get<Group>(element);
  for (TreeElement &child : group.children)
    child = renumbered(child, newIndex);
  return group;
}

/// The buffers of `all` in `chosen` (sorted), and each one's new index.
std::vector<Buffer> subset(const std::vector<Buffer> &all,
                           const std::vector<int> &chosen,
                           std::vector<int> &newIndex) {
  newIndex.assign(all.size(), -1);
  std::vector<Buffer> buffers;
  for (int index : chosen) {
    newIndex[index] = static_cast<int>(buffers.size());
    buffers.push_back(all[index]);
  }
  return buffers;
}

/// Units of the region `plan` sizes, or nullopt when it fails for another
/// reason than the target's limits (which a split may well exceed).
std::optional<int64_t> regionUnits(const Plan &plan) {
  for (const Diagnostic &diagnostic : plan.diagnostics)
    if (diagnostic.severity == Severity::Error &&
        diagnostic.kind != DiagnosticKind::OverSmemLimit &&
        diagnostic.kind != DiagnosticKind::TooManyColumns)
      return std::nullopt;
  return plan.regionSize;
}

/// "{buffer:1}", "{buffer:1} and {buffer:2}", "{buffer:1}, {buffer:2} and
/// {buffer:3}".
std::string bufferList(const std::vector<int> &buffers) {
  std::string text;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i > 0)
      text += i + 1 == buffers.size() ? " and " : ", ";
    text += bufferRef(buffers[i]);
  }
  return text;
}

/// Whether a buffer of `user` shares units with a buffer of `users`.
bool overlaps(const std::vector<Extent> &extents, const std::vector<int> &users,
              int user) {
  for (const Extent &mine : extents) {
    if (mine.user != user)
      continue;
    for (const Extent &theirs : extents)
      if (std::count(users.begin(), users.end(), theirs.user) > 0 &&
          theirs.start < mine.end && mine.start < theirs.end)
        return true;
  }
  return false;
}

struct Candidate {
  Path sharedNode;
  /// The candidate's path below the shared node (one or two steps).
  Path below;
};

/// Every child of a `shared` node with two or more children, and every
/// child of a `distinct` child of one, in pre-order.
void collectCandidates(const Group &group, const Path &path,
                       std::vector<Candidate> &candidates) {
  for (size_t i = 0; i < group.children.size(); ++i) {
    const Group *child = std::get_if<Group>(&group.children[i]);
    int index = static_cast<int>(i);
    if (group.kind == GroupKind::Shared && group.children.size() > 1) {
      candidates.push_back({path, {index}});
      if (child && child->kind == GroupKind::Distinct &&
          child->children.size() > 1)
        for (size_t j = 0; j < child->children.size(); ++j)
          candidates.push_back({path, {index, static_cast<int>(j)}});
    }
    if (child) {
      Path childPath = path;
      childPath.push_back(index);
      collectCandidates(*child, childPath, candidates);
    }
  }
}

/// Takes the candidate's element out of the shared node `node` of `root`.
TreeElement takeOut(Group &node, const Path &below) {
  Group &parent =
      below.size() == 1 ? node : std::get<Group>(node.children[below.front()]);
  auto position = parent.children.begin() + below.back();
  TreeElement element = std::move(*position);
  parent.children.erase(position);
  return element;
}

} // namespace

std::vector<Split> adviseSplits(const Spec &spec,
                                const std::vector<Buffer> &buffers,
                                const Group &tree, int64_t otherRegionsUnits) {
  Spec sized = spec;
  sized.explicitSizeBytes.reset();
  Plan current = plan(sized, buffers, tree);
  if (!current.ok())
    return {};
  int64_t budget = storageBudget(spec.storage, spec.capability);
  std::vector<Extent> extents = bufferExtents(current, buffers);
  std::vector<Candidate> candidates;
  collectCandidates(tree, {}, candidates);
  std::vector<Split> splits;
  for (const Candidate &candidate : candidates) {
    Split split;
    split.sharedNode = candidate.sharedNode;
    split.budgetUnits = budget;

    // The buffers that would stop sharing, and those they share with now:
    // the leaves of the node's other children.
    Group rest = tree;
    TreeElement element =
        takeOut(groupAt(rest, candidate.sharedNode), candidate.below);
    collectLeaves(element, split.buffers);
    const Group &original = groupAt(tree, candidate.sharedNode);
    for (size_t i = 0; i < original.children.size(); ++i) {
      if (static_cast<int>(i) == candidate.below.front())
        continue;
      std::vector<int> others;
      collectLeaves(original.children[i], others);
      for (int other : others)
        if (overlaps(extents, split.buffers, other))
          split.sharedWith.push_back(other);
    }
    // The layout may have given them units of their own already.
    if (split.sharedWith.empty())
      continue;

    // In this region: the node becomes distinct(the rest of it, element).
    Group beside = tree;
    Group &besideNode = groupAt(beside, candidate.sharedNode);
    Group remaining = besideNode;
    remaining.groupSize = 1;
    takeOut(remaining, candidate.below);
    besideNode = Group{GroupKind::Distinct,
                       besideNode.groupSize,
                       {std::move(remaining), element}};
    std::optional<int64_t> besideUnits =
        regionUnits(plan(sized, buffers, beside));

    // In a region of its own: this spec keeps the rest.
    std::vector<int> kept;
    for (int i = 0; i < static_cast<int>(buffers.size()); ++i)
      if (std::count(split.buffers.begin(), split.buffers.end(), i) == 0)
        kept.push_back(i);
    std::vector<int> sortedMoved = split.buffers;
    std::sort(sortedMoved.begin(), sortedMoved.end());
    std::vector<int> keptIndex, movedIndex;
    std::vector<Buffer> keptBuffers = subset(buffers, kept, keptIndex);
    std::vector<Buffer> movedBuffers = subset(buffers, sortedMoved, movedIndex);
    std::optional<Group> movedTree;
    if (std::holds_alternative<Group>(element))
      movedTree = std::get<Group>(renumbered(element, movedIndex));
    std::optional<int64_t> keptUnits = regionUnits(
        plan(sized, keptBuffers, std::get<Group>(renumbered(rest, keptIndex))));
    std::optional<int64_t> movedUnits =
        regionUnits(plan(sized, movedBuffers, movedTree));

    std::optional<int64_t> ownTotal;
    if (keptUnits && movedUnits)
      ownTotal = satAdd(*keptUnits, *movedUnits);
    if (!besideUnits && !ownTotal)
      continue;
    split.ownRegion = ownTotal && (!besideUnits || *ownTotal < *besideUnits);
    split.regionUnits = split.ownRegion ? *keptUnits : *besideUnits;
    split.ownRegionUnits = split.ownRegion ? *movedUnits : 0;
    split.totalUnits =
        satAdd(otherRegionsUnits, split.ownRegion ? *ownTotal : *besideUnits);

    Storage storage = spec.storage;
    std::string where =
        split.ownRegion
            ? "in a region of their own (" +
                  amount(split.ownRegionUnits, storage) + ") beside spec " +
                  specRef() + " (" + amount(split.regionUnits, storage) + ")"
            : std::string("beside them in spec ") + specRef() + " (" +
                  amount(split.regionUnits, storage) + " instead of " +
                  number(current.regionSize) + ")";
    std::string outcome =
        split.fits() ? ", " + number(split.leftUnits()) + " left"
                     : ", " + number(-split.leftUnits()) + " over the budget";
    split.message =
        bufferList(split.buffers) +
        (split.fits() ? " need not share with " : " must share with ") +
        bufferList(split.sharedWith) + ": " + where +
        ", the kernel would use " + number(split.totalUnits) + " of " +
        amount(budget, storage) + outcome;
    splits.push_back(std::move(split));
  }
  return splits;
}

} // namespace tlx::planner
