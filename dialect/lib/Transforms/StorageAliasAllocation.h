//===- StorageAliasAllocation.h - Step 3, analysis and rewrite --*- C++ -*-===//
//
// Allocation in two halves: AllocationAnalysis computes and checks every
// change for the specs it is given without touching the IR, then apply()
// makes them. It emits the planner's recipe: the allocation pass feeds it
// the backing and placements the earlier steps recorded in the IR
// (#tlx.backing, #tlx.placement); the combined lowering feeds it the plans
// themselves.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_STORAGEALIASALLOCATION_H
#define TLX_TRANSFORMS_STORAGEALIASALLOCATION_H

#include "tlx/Analysis/PlannerBridge.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlir::tlx {

class AllocationAnalysis {
public:
  /// `erasedUsers`: ops that go with the rewrite (reuse groups whose tree is
  /// gone, which the caller passes to apply() as obsolete), so that their
  /// uses of a buffer need no rewrite.
  AllocationAnalysis(MLIRContext *context,
                     const llvm::SmallPtrSetImpl<Operation *> &erasedUsers);

  /// Plans the rewrite of one spec into `backing`. `userView(i)` gives the
  /// view of user i (and reports any error in it itself). Reports every
  /// problem; changes nothing.
  LogicalResult
  analyzeSpec(SpecUses &uses, const BackingRecipe &backing,
              function_ref<FailureOr<planner::View>(size_t index)> userView);

  /// Rewrites every analyzed spec: one backing allocation, one tlx.local_alias
  /// per user, the values that carry the users' buffers retyped and every
  /// ttg.memdesc_index re-indexed. Then erases `obsolete` (in that order: a
  /// user before what it uses), the users and the specs.
  void apply(ArrayRef<Operation *> obsolete);

private:
  struct UserRewrite {
    StorageAliasLocalAllocOp alloc;
    triton::gpu::MemDescType viewType;
    /// A user that is one buffer without a buffer dimension (a TMEM [M, N]
    /// tile) becomes this slot of its view; the others become the view.
    std::optional<int64_t> singleSlot;
    /// A view from a byte offset (View::base, View::form): the SMEM backing
    /// is first cut at that byte, in the form the Triton writes.
    int64_t base = 0;
    planner::ViewForm form = planner::ViewForm::Slots;
    /// The bytes the view spans (its slots), for ViewForm::SlicedRows.
    int64_t viewBytes = 0;
  };

  struct SpecRewrite {
    StorageAliasSpecOp spec;
    triton::gpu::MemDescType backingType;
    /// SMEM: the `alignment` of the backing ttg.local_alloc: the plan's,
    /// raised by any reinterpreted view that needs more.
    int64_t alignment = 0;
    SmallVector<UserRewrite> users;
    /// The ends of this spec's entries in `retypedValues` and
    /// `indexRewrites` (the previous spec's ends are their starts).
    size_t retypedValuesEnd = 0;
    size_t indexRewritesEnd = 0;
  };

  struct IndexRewrite {
    triton::gpu::MemDescIndexOp op;
    /// Index into `views`.
    size_t view;
    /// The user's buffers: a SelectedRows view has a view per buffer group
    /// of them (planner::groupViewStarts).
    int64_t count;
  };

  /// A value that carries a user's buffers: its type once re-viewed, the
  /// view its indices map through, and the user (diagnostics name it).
  struct Carrier {
    Value value;
    triton::gpu::MemDescType newType;
    size_t view;
    StorageAliasLocalAllocOp user;
  };

  FailureOr<triton::gpu::MemDescType> backingType(SpecUses &uses,
                                                  const BackingRecipe &backing);
  FailureOr<Attribute> tmemBackingEncoding(SpecUses &uses,
                                           ArrayRef<int64_t> block);
  LogicalResult followUses(Carrier root, int64_t region, int bufferIndex);
  /// `type` with the shape of `view` (its slots and one buffer's shape),
  /// built once per pair.
  triton::gpu::MemDescType viewType(triton::gpu::MemDescType type,
                                    const planner::View &view);
  FailureOr<Carrier> followAlias(Operation *alias,
                                 triton::gpu::MemDescType resultType,
                                 const Carrier &source, int64_t region,
                                 int bufferIndex);

  MLIRContext *context;
  const llvm::SmallPtrSetImpl<Operation *> &erasedUsers;
  /// Parsed once: every SMEM backing has this layout.
  Attribute smemBytesLayout;
  /// TMEM backing encodings by (user encoding, rows, columns).
  llvm::DenseMap<std::tuple<Attribute, int64_t, int64_t>, Attribute>
      tmemBackingLayouts;
  /// Memdesc types by (user type, slots, indexed): a module repeats them.
  llvm::DenseMap<std::tuple<Type, int64_t, unsigned>, triton::gpu::MemDescType>
      viewTypes;

  SmallVector<SpecRewrite> specs;
  /// Values whose memdesc type gets a new leading dimension: results of
  /// ttg.memdesc_reinterpret / tlx.local_alias and partition arguments.
  SmallVector<std::pair<Value, triton::gpu::MemDescType>> retypedValues;
  SmallVector<IndexRewrite> indexRewrites;
  std::vector<planner::View> views;
};

/// The view `placement` gives `buffer` in a region of `regionSize` units,
/// checked by the planner: its problems are reported at `about`, naming the
/// buffer `nameOf()`.
FailureOr<planner::View> checkedView(Operation *about,
                                     const planner::Buffer &buffer,
                                     function_ref<std::string()> nameOf,
                                     const planner::Placement &placement,
                                     int64_t regionSize, int bufferIndex);

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_STORAGEALIASALLOCATION_H
