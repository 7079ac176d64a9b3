//===- Internal.h - What the planner's files share --------------*- C++ -*-===//
//
// Saturating arithmetic (absurd shapes end in a "too large" diagnostic, not
// an overflow), diagnostic construction, and the flattened reuse tree the
// layout search works on. Private to planner/lib.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_PLANNER_INTERNAL_H
#define TLX_PLANNER_INTERNAL_H

#include "tlx/Planner/Planner.h"

#include <numeric>

namespace tlx::planner::detail {

constexpr int64_t kSaturated = int64_t(1) << 62;
/// The SMEM backing is [n, 128] x i8 and SMEM buffers align to 128 B.
constexpr int64_t kSmemRowBytes = 128;
constexpr int64_t kSmemMinAlignment = 128;
/// TMEM: kTmemLanes lanes per row block, 32-bit columns, at least 32
/// columns.
constexpr int64_t kTmemHalfLanes = kTmemLanes / 2;
constexpr int64_t kTmemColumnBits = 32;
constexpr int64_t kTmemColumnBytes = 4;
constexpr int64_t kTmemMinColumns = 32;

inline int64_t satMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (a > kSaturated / b)
    return kSaturated;
  return a * b;
}

inline int64_t satAdd(int64_t a, int64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

inline int64_t roundUp(int64_t value, int64_t multiple) {
  return satMul(ceilDiv(value, multiple), multiple);
}

inline int64_t lcm(int64_t a, int64_t b) {
  return satMul(a / std::gcd(a, b), b);
}

inline int64_t nextPowerOfTwo(int64_t value) {
  int64_t power = 1;
  while (power < value && power < kSaturated)
    power <<= 1;
  return power;
}

inline bool isPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

/// "1234", or "more than 2^62" for a saturated value.
std::string number(int64_t value);
/// "128 bytes" / "16 columns" / "1 column".
std::string amount(int64_t value, Storage storage);
/// "128-byte" / "16-column".
std::string sized(int64_t value, Storage storage);
std::string shapeText(const std::vector<int64_t> &shape);
std::string storageName(Storage storage);
std::string unitName(Storage storage);
/// The placeholder formatDiagnostic replaces with buffer `index`'s name.
std::string bufferRef(int index);
/// The placeholder formatDiagnostic replaces with the spec's name.
inline const char *specRef() { return "{spec}"; }

Diagnostic error(DiagnosticKind kind, int buffer, std::vector<int> buffers,
                 std::vector<int64_t> numbers, std::string message);
Diagnostic warning(DiagnosticKind kind, int buffer, std::vector<int> buffers,
                   std::vector<int64_t> numbers, std::string message);
bool hasError(const std::vector<Diagnostic> &diagnostics);

/// Number of buffers of a user (1 for a TMEM [M, N] tile, 0 for a bad
/// shape).
int64_t bufferCount(const Buffer &buffer);

/// Checks one buffer on its own and against the spec's storage and the
/// spec's other buffers (one backing holds them all).
void validateBuffers(const Spec &spec, const std::vector<Buffer> &buffers,
                     std::vector<Diagnostic> &diagnostics);

/// One node of the flattened reuse tree. Node 0 is the root; a node's
/// children follow it in `Tree::nodes` (pre-order).
struct Node {
  bool leaf = false;
  /// Leaf: the buffer (user) index.
  int buffer = -1;
  GroupKind kind = GroupKind::Shared;
  std::vector<int> children;
  int parent = -1;
  /// Leaf: K (the group sizes of its ancestors multiplied).
  int64_t groupSize = 1;
  /// Buffer groups of the subtree: a leaf's count / K; a group's largest.
  int64_t groups = 0;
  /// Leaves of the subtree, in order.
  std::vector<int> leaves;
};

/// A leaf's numbers, in the plan's unit.
struct LeafInfo {
  int64_t size = 0;
  int64_t alignment = 1;
  /// lcm(size, alignment): where its buffers may start in a whole-region
  /// view, and the pitch of its K buffers of one group.
  int64_t quantum = 1;
  int64_t count = 0;
  int node = -1;
};

struct Tree {
  std::vector<Node> nodes;
  /// Indexed by buffer; node -1 for buffers outside the tree.
  std::vector<LeafInfo> leaves;
  /// Buffer groups of the root.
  int64_t groups = 0;
  /// Whether a view may start at a byte offset (Spec::offsetForm is not
  /// Slots and the storage is SMEM).
  bool offsetViews = false;
  /// How a view per buffer group is written, whose groups may be any
  /// multiple of its alignment apart (Spec::groupStrideForm, with views at
  /// byte offsets); Slots where the Triton writes none.
  ViewForm groupStrideForm = ViewForm::Slots;
  /// Whether every view spans the whole region (Spec::wholeViews): the
  /// region is then a multiple of every buffer's size.
  bool wholeViews = false;
};

/// Flattens and checks `tree` (indices in range, no duplicates, group sizes,
/// counts that are multiples of K); fills `tree` when valid. Warns about
/// counts that look like forgotten sub-tiles.
bool buildTree(const Spec &spec, const std::vector<Buffer> &buffers,
               const Group &group, Tree &tree,
               std::vector<Diagnostic> &diagnostics);

/// The ideal footprint of `tree` in the plan's unit (rule 6).
int64_t idealFootprint(const Tree &tree, Storage storage);

/// The best layout of `tree` within `family`: every leaf's view (offset and
/// slot coefficients; slots left 0), the end of its last buffer, and the
/// layout in words. Always succeeds: the group-major layout is valid. For
/// LayoutFamily::Best, never ends after every buffer in bytes of its own,
/// one leaf after the other in the order written (unsharedLayout): where
/// the tree's layout would, that one is taken.
struct Arrangement {
  std::vector<View> views;
  int64_t end = 0;
  std::string name;
  /// Where the tree's own layout ended when every buffer got bytes of its
  /// own instead (it ended later); 0 otherwise.
  int64_t sharedEnd = 0;
};
Arrangement searchLayout(const Tree &tree, Storage storage, LayoutFamily family,
                         int64_t endGoal);

/// Every leaf of `tree` in bytes of its own, one after the other in the
/// order written, each leaf's buffers one after the other at its quantum
/// and its first where a view may start (its alignment with views at a byte
/// offset, else its quantum): nothing shares.
Arrangement unsharedLayout(const Tree &tree, Storage storage);

/// The smallest region that holds `end` units (rule 5) under `views`: SMEM
/// in whole 128-byte rows, TMEM a power of two of at least 32 columns, both
/// a multiple of every view's buffer size when the views must be whole.
int64_t minimalRegion(Storage storage, bool wholeViews,
                      const std::vector<View> &views, int64_t end);

} // namespace tlx::planner::detail

#endif // TLX_PLANNER_INTERNAL_H
