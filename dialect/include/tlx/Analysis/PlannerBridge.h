//===- PlannerBridge.h - IR <-> planner translation -------------*- C++ -*-===//
//
// The one place where IR turns into planner structs (memdesc types,
// encodings, storage_alias_spec ops, reuse_group trees) and planner results
// back into diagnostics at the ops they name. The passes never compute sizes,
// offsets or slots themselves: they read the module's plan (ModulePlan.h).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_ANALYSIS_PLANNERBRIDGE_H
#define TLX_ANALYSIS_PLANNERBRIDGE_H

#include "tlx/Dialect/TLX/Dialect.h"
#include "tlx/Planner/Planner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tlx {

namespace planner = ::tlx::planner;

/// A tlx.storage_alias_spec and the ops that refer to it, in program order.
struct SpecUses {
  StorageAliasSpecOp spec;
  SmallVector<StorageAliasLocalAllocOp> allocs;
  SmallVector<SetBufferOverlapOp> overlaps;
  /// The tlx.reuse_group / tlx.reuse_phases ops without users whose leaves
  /// are all users of this spec: without set_buffer_overlap, its overlap
  /// (docs/semantics.md, "Implicit overlap").
  SmallVector<Operation *> implicitOverlaps;
};

/// The storage alias ops of a module.
struct StorageAliasOps {
  std::vector<SpecUses> specs;
  /// Every tlx.reuse_group and tlx.reuse_phases, in pre-order (operands
  /// before their users).
  SmallVector<Operation *> reuseGroups;
};

/// Collects every spec of `module` with its users, and every reuse group, in
/// one walk. Fails (after emitting an error) when an alloc or
/// set_buffer_overlap refers to a value that no tlx.storage_alias_spec
/// defines, or when a spec has a user of another kind.
FailureOr<StorageAliasOps> collectStorageAliasOps(ModuleOp module);

/// The name diagnostics use for user `index` of a spec.
std::string userName(StorageAliasLocalAllocOp alloc, size_t index);

/// The planner's view of one memdesc type. Fails, with an error at `op`
/// about the buffer `nameOf()`, when its element type has no size.
FailureOr<planner::Buffer> toPlannerBuffer(Operation *op,
                                           triton::gpu::MemDescType type,
                                           function_ref<std::string()> nameOf);

/// Everything plan() needs about one spec.
struct PlannerInput {
  planner::Spec spec;
  std::vector<planner::Buffer> buffers;
  std::optional<planner::Group> tree;
  /// One tree per phase (tlx.reuse_phases); empty otherwise.
  std::vector<planner::Group> phases;
};

/// planner::plan, or planner::planPhases when the input has phases.
planner::Plan planInput(const PlannerInput &input);

/// Translates a spec, its users and its overlap tree (from
/// tlx.set_buffer_overlap or, without it, the implicit one). Reports, with
/// locations, set_buffer_overlap given twice, two implicit trees, tree
/// elements from another spec or not from tlx.storage_alias_local_alloc, and
/// duplicate tree elements.
/// `wholeViews`: Spec::wholeViews (the pass option `whole-views`);
/// `offsetForm`: Spec::offsetForm (the option `offset-form`), Slots under
/// whole views (Triton 3.8 writes no view at a byte offset), and
/// Spec::groupStrideForm the planner's groupStrideFormOf it (a view per
/// buffer group with indexed_row: Triton 3.6, 3.7).
FailureOr<PlannerInput> toPlannerInput(SpecUses &uses, bool wholeViews,
                                       planner::ViewForm offsetForm);

/// Which planner diagnostics a step reports: size definition leaves the
/// placement warnings to offset calculation, so that the pipeline warns once.
enum class PlanWarnings { Skip, Report };

/// Emits `diagnostics` at the ops they are about (a buffer index -> that
/// user, -1 -> the spec), naming the spec and the users from their
/// locations. Fails when one of them is an error.
LogicalResult
reportPlannerDiagnostics(SpecUses &uses,
                         ArrayRef<planner::Diagnostic> diagnostics,
                         PlanWarnings warnings);

/// The backing allocation of a plan, as a front door emits it.
struct BackingRecipe {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> block;
  int64_t elementBits = 8;
  int64_t alignment = 1;
  /// The region in the plan's unit (bytes, or TMEM columns).
  int64_t regionSize = 0;
};

BackingRecipe backingOf(const planner::Plan &plan);
BackingAttr backingAttrOf(MLIRContext *context, const BackingRecipe &backing);
BackingRecipe backingOf(BackingAttr attr);

/// The placement attribute of a view, and the planner's placement of one.
PlacementAttr placementAttrOf(MLIRContext *context, const planner::View &view);
planner::Placement placementOf(PlacementAttr attr);

/// Removes from `specs` every spec without tlx.storage_alias_local_alloc or
/// tlx.set_buffer_overlap users, with a warning, and returns them: the step
/// erases them once it knows it succeeds.
SmallVector<StorageAliasSpecOp>
takeSpecsWithoutUsers(std::vector<SpecUses> &specs);

/// The tlx.reuse_group and tlx.reuse_phases ops of `reuseGroups` (all of a
/// module's, in pre-order) that are left without uses once every
/// tlx.set_buffer_overlap is erased (all of them, unless another op uses a
/// tree), in the order they can be erased: users first.
SmallVector<Operation *> reuseGroupsToErase(ArrayRef<Operation *> reuseGroups);

/// The lifetime check of a plan with phases (planner::checkPhaseLifetimes)
/// from the ops' order: each user's uses are the ops that read its buffers
/// (through ttg.memdesc_index, views of them and ttg.warp_specialize
/// captures), numbered in pre-order over the module (scf regions once, in the
/// order they are written), each in its sequence of control: the kernel, or
/// the ttg.warp_specialize default region or partition around it (these run
/// concurrently: their order is the kernel's synchronisation, not checked
/// here). Errors are reported at the use in between, with notes at the other
/// buffer's uses around it.
LogicalResult checkPhaseLifetimes(SpecUses &uses, const planner::Plan &plan,
                                  const std::vector<planner::Buffer> &buffers);

} // namespace mlir::tlx

#endif // TLX_ANALYSIS_PLANNERBRIDGE_H
