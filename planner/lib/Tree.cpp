//===- Tree.cpp - The reuse tree: checks, counts and ideal footprint -----===//
//
// Rule 3 (buffer counts) and rule 6 (the ideal footprint) of
// tlx/Planner/Planner.h, on a flattened copy of the tree.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>

namespace tlx::planner::detail {
namespace {

class TreeBuilder {
public:
  TreeBuilder(const Spec &spec, const std::vector<Buffer> &buffers, Tree &tree,
              std::vector<Diagnostic> &diagnostics)
      : spec(spec), buffers(buffers), tree(tree), diagnostics(diagnostics) {
    tree.nodes.clear();
    tree.leaves.assign(buffers.size(), LeafInfo{});
    tree.offsetViews =
        spec.offsetForm != ViewForm::Slots && spec.storage == Storage::Smem;
    tree.wholeViews = spec.wholeViews;
    tree.groupStrideForm =
        tree.offsetViews ? spec.groupStrideForm : ViewForm::Slots;
  }

  bool build(const Group &root) {
    add(root, 1, -1);
    if (!valid)
      return false;
    tree.groups = tree.nodes.front().groups;
    warnForgottenSubTiles();
    return true;
  }

private:
  int add(const TreeElement &element, int64_t groupSize, int parent) {
    int index = static_cast<int>(tree.nodes.size());
    tree.nodes.push_back(Node{});
    tree.nodes[index].parent = parent;
    if (const int *leaf = std::get_if<int>(&element))
      addLeaf(index, *leaf, groupSize);
    else
      addGroup(index, *std::get_if<Group>(&element), groupSize);
    return index;
  }

  void addLeaf(int index, int buffer, int64_t groupSize) {
    int count = static_cast<int>(buffers.size());
    Node &node = tree.nodes[index];
    node.leaf = true;
    node.buffer = buffer;
    node.groupSize = groupSize;
    if (buffer < 0 || buffer >= count) {
      diagnostics.push_back(error(
          DiagnosticKind::TreeIndexOutOfRange, -1, {}, {buffer, count},
          std::string("the overlap tree of spec ") + specRef() +
              " names buffer index " + std::to_string(buffer) +
              ", but the spec has " + std::to_string(count) + " buffers"));
      valid = false;
      return;
    }
    node.leaves = {buffer};
    LeafInfo &info = tree.leaves[buffer];
    if (info.node >= 0) {
      diagnostics.push_back(
          error(DiagnosticKind::DuplicateTreeElement, buffer, {buffer}, {},
                "buffer " + bufferRef(buffer) +
                    " appears more than once in the overlap tree of spec " +
                    specRef()));
      valid = false;
      return;
    }
    info.node = index;
    const Buffer &user = buffers[buffer];
    info.count = bufferCount(user);
    info.size = bufferSize(user);
    info.alignment = requiredAlignment(user);
    info.quantum = info.size > 0 ? lcm(info.size, info.alignment) : 1;
    if (info.count % groupSize != 0) {
      diagnostics.push_back(error(
          DiagnosticKind::CountNotMultipleOfGroupSize, buffer, {buffer},
          {info.count, groupSize},
          "buffer " + bufferRef(buffer) + " has " + std::to_string(info.count) +
              " buffers, which is not a multiple of group_size " +
              number(groupSize) + " (the product of its reuse groups)"));
      valid = false;
      return;
    }
    node.groups = info.count / groupSize;
  }

  void addGroup(int index, const Group &group, int64_t groupSize) {
    tree.nodes[index].kind = group.kind;
    if (group.groupSize < 1) {
      diagnostics.push_back(error(
          DiagnosticKind::BadGroupSize, -1, {}, {group.groupSize},
          std::string("a reuse_group in the overlap tree of spec ") +
              specRef() + " has group_size=" + std::to_string(group.groupSize) +
              "; it must be at least 1"));
      valid = false;
    }
    if (group.children.empty()) {
      diagnostics.push_back(
          error(DiagnosticKind::EmptyGroup, -1, {}, {},
                std::string("a reuse_group in the overlap tree of spec ") +
                    specRef() + " has no children"));
      valid = false;
      return;
    }
    int64_t childGroupSize =
        satMul(groupSize, std::max<int64_t>(group.groupSize, 1));
    for (const TreeElement &child : group.children) {
      int childIndex = add(child, childGroupSize, index);
      Node &node = tree.nodes[index];
      const Node &childNode = tree.nodes[childIndex];
      node.children.push_back(childIndex);
      node.groups = std::max(node.groups, childNode.groups);
      node.leaves.insert(node.leaves.end(), childNode.leaves.begin(),
                         childNode.leaves.end());
    }
  }

  /// Under a shared node, a count that is 2x or more another one (above
  /// one) looks like sub-tiles whose group_size was forgotten.
  void warnForgottenSubTiles() {
    for (const Node &node : tree.nodes) {
      if (node.leaf || node.kind != GroupKind::Shared)
        continue;
      for (int small : node.children) {
        for (int large : node.children) {
          const Node &few = tree.nodes[small];
          const Node &many = tree.nodes[large];
          if (few.groups <= 1 || many.groups < 2 * few.groups ||
              many.groups % few.groups != 0 || few.leaves.empty() ||
              many.leaves.empty())
            continue;
          int a = few.leaves.front();
          int b = many.leaves.front();
          int64_t ratio = many.groups / few.groups;
          diagnostics.push_back(warning(
              DiagnosticKind::ForgottenSubTiles, b, {a, b},
              {few.groups, many.groups, ratio},
              "buffers " + bufferRef(a) + " (" + std::to_string(few.groups) +
                  " buffer groups) and " + bufferRef(b) + " (" +
                  std::to_string(many.groups) +
                  " buffer groups) share bytes in spec " + specRef() + ": if " +
                  bufferRef(b) + " holds " + std::to_string(ratio) +
                  " sub-tiles of each " + bufferRef(a) +
                  " buffer, group them with group_size=" +
                  std::to_string(ratio) + " (as written, buffer i of " +
                  bufferRef(b) + " shares bytes with buffer i of " +
                  bufferRef(a) + ", and its buffers " +
                  std::to_string(few.groups) + " .. " +
                  std::to_string(many.groups - 1) + " with none)"));
        }
      }
    }
  }

  const Spec &spec;
  const std::vector<Buffer> &buffers;
  Tree &tree;
  std::vector<Diagnostic> &diagnostics;
  bool valid = true;
};

/// Ideal extent of `node`'s group `group` (0 when no leaf below has it).
int64_t idealExtent(const Tree &tree, int index, int64_t group, int64_t unit) {
  const Node &node = tree.nodes[index];
  if (node.leaf) {
    if (group >= node.groups)
      return 0;
    const LeafInfo &leaf = tree.leaves[node.buffer];
    return satMul(node.groupSize, roundUp(leaf.size, unit));
  }
  int64_t extent = 0;
  for (int child : node.children) {
    int64_t childExtent = idealExtent(tree, child, group, unit);
    if (childExtent == 0)
      continue;
    extent = node.kind == GroupKind::Shared
                 ? std::max(extent, childExtent)
                 : satAdd(roundUp(extent, unit), childExtent);
  }
  return extent;
}

} // namespace

bool buildTree(const Spec &spec, const std::vector<Buffer> &buffers,
               const Group &group, Tree &tree,
               std::vector<Diagnostic> &diagnostics) {
  return TreeBuilder(spec, buffers, tree, diagnostics).build(group);
}

int64_t idealFootprint(const Tree &tree, Storage storage) {
  int64_t unit = storage == Storage::Smem ? kSmemMinAlignment : 1;
  int64_t total = 0;
  for (int64_t group = 0; group < tree.groups; ++group)
    total = satAdd(total, roundUp(idealExtent(tree, 0, group, unit), unit));
  return total;
}

} // namespace tlx::planner::detail
