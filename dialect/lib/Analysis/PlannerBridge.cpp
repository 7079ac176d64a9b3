//===- PlannerBridge.cpp - IR <-> planner translation ---------------------===//

#include "tlx/Analysis/PlannerBridge.h"

#include "tlx/Dialect/Encoding.h"
#include "tlx/Dialect/Triton/Dialect.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::tlx;
using triton::gpu::MemDescType;

namespace {

planner::Storage toPlannerStorage(StorageKind storage) {
  switch (storage) {
  case StorageKind::smem:
    return planner::Storage::Smem;
  case StorageKind::tmem:
    return planner::Storage::Tmem;
  case StorageKind::smemCluster:
    break;
  }
  llvm_unreachable("the storage_alias_spec verifier rejects smemCluster");
}

/// The CTA split of a layout: Triton 3.6 and 3.7 write `CTASplitM` and
/// `CTASplitN`, later versions a `CGALayout` of bases.
void readCtaSplit(Attribute encoding, planner::Layout &layout) {
  if (std::optional<SmallVector<SmallVector<int64_t>>> bases =
          triton::encodingIntArrays(encoding, "CGALayout")) {
    std::vector<std::vector<int64_t>> plain;
    for (const SmallVector<int64_t> &basis : *bases)
      plain.emplace_back(basis.begin(), basis.end());
    std::array<int64_t, 2> split = planner::ctaSplitOfCgaBases(plain);
    layout.ctaSplitM = split[0];
    layout.ctaSplitN = split[1];
    return;
  }
  layout.ctaSplitM = triton::encodingInt(encoding, "CTASplitM").value_or(1);
  layout.ctaSplitN = triton::encodingInt(encoding, "CTASplitN").value_or(1);
}

planner::Layout toPlannerLayout(Attribute encoding) {
  planner::Layout layout;
  readCtaSplit(encoding, layout);
  StringRef kind = triton::encodingName(encoding);
  if (kind == "nvmma_shared") {
    layout.kind = planner::LayoutKind::NvmmaShared;
    layout.swizzleBytes =
        triton::encodingInt(encoding, "swizzlingByteWidth").value_or(0);
  } else if (kind == "tensor_memory_encoding") {
    layout.kind = planner::LayoutKind::TensorMemory;
    layout.blockM =
        triton::encodingInt(encoding, "blockM").value_or(layout.blockM);
    layout.blockN =
        triton::encodingInt(encoding, "blockN").value_or(layout.blockN);
    // Triton <= 3.4 spells it `unpacked = true`; later versions give the
    // column stride of one element (1: packed, 32 / bits: unpacked).
    if (std::optional<bool> unpacked =
            triton::encodingBool(encoding, "unpacked"))
      layout.unpacked = *unpacked;
    else
      layout.unpacked =
          triton::encodingInt(encoding, "colStride").value_or(1) > 1;
  }
  return layout;
}

/// Builds the planner tree of one phase of a spec's overlap (given by
/// `givenAt`: a tlx.set_buffer_overlap, or the implicit tree itself),
/// checking that every leaf is a distinct user of the spec.
class TreeBuilder {
public:
  TreeBuilder(SpecUses &uses, Operation *givenAt)
      : uses(uses), givenAt(givenAt), firstAppearance(uses.allocs.size()) {
    for (auto [index, alloc] : llvm::enumerate(uses.allocs))
      userIndex[alloc] = index;
  }

  FailureOr<planner::Group> build(ReuseGroupOp root) {
    return buildGroup(root);
  }

private:
  FailureOr<planner::Group> buildGroup(ReuseGroupOp group) {
    planner::Group node;
    node.kind = group.getGroupKind() == ReuseGroupKind::shared
                    ? planner::GroupKind::Shared
                    : planner::GroupKind::Distinct;
    node.groupSize = static_cast<int64_t>(group.getGroupSize());
    for (auto [position, element] : llvm::enumerate(group.getElements())) {
      if (auto child = element.getDefiningOp<ReuseGroupOp>()) {
        FailureOr<planner::Group> childNode = buildGroup(child);
        if (failed(childNode))
          return failure();
        node.children.emplace_back(std::move(*childNode));
        continue;
      }
      FailureOr<int> leaf = leafIndex(group, position, element);
      if (failed(leaf))
        return failure();
      node.children.emplace_back(*leaf);
    }
    return node;
  }

  FailureOr<int> leafIndex(ReuseGroupOp group, size_t position, Value element) {
    auto alloc = element.getDefiningOp<StorageAliasLocalAllocOp>();
    if (!alloc)
      return group.emitOpError()
             << "element " << position
             << " is neither a tlx.storage_alias_local_alloc result nor a "
                "tlx.reuse_group";
    if (alloc.getStorageAlias() != uses.spec.getResult()) {
      std::string name = nameForDiagnostics(alloc, "element");
      InFlightDiagnostic diag =
          group.emitOpError()
          << "element " << position << " (buffer \"" << name
          << "\") is allocated from another tlx.storage_alias_spec than "
             "the one tlx.set_buffer_overlap gives this tree to";
      diag.attachNote(alloc.getLoc())
          << "buffer \"" << name << "\" is allocated here";
      diag.attachNote(givenAt->getLoc()) << "the tree is given here";
      return failure();
    }
    unsigned index = userIndex.lookup(alloc);
    if (ReuseGroupOp first = firstAppearance[index]) {
      InFlightDiagnostic diag = group.emitOpError()
                                << "buffer \""
                                << nameForDiagnostics(alloc, "element")
                                << "\" appears twice in the overlap tree";
      diag.attachNote(first.getLoc()) << "first appearance here";
      return failure();
    }
    firstAppearance[index] = group;
    return static_cast<int>(index);
  }

  SpecUses &uses;
  Operation *givenAt;
  llvm::DenseMap<Operation *, unsigned> userIndex;
  SmallVector<ReuseGroupOp> firstAppearance;
};

/// The planner trees of an overlap definition `root` (a tlx.reuse_group: one
/// tree; a tlx.reuse_phases: one per phase) given at `givenAt`.
LogicalResult buildOverlap(SpecUses &uses, Operation *root, Operation *givenAt,
                           PlannerInput &input) {
  if (auto phases = dyn_cast_or_null<ReusePhasesOp>(root)) {
    for (Value tree : phases.getTrees()) {
      FailureOr<planner::Group> phase =
          TreeBuilder(uses, givenAt).build(tree.getDefiningOp<ReuseGroupOp>());
      if (failed(phase))
        return failure();
      input.phases.push_back(std::move(*phase));
    }
    return success();
  }
  auto tree = dyn_cast_or_null<ReuseGroupOp>(root);
  if (!tree)
    return givenAt->emitOpError()
           << "the overlap definition must be a "
              "tlx.reuse_group or tlx.reuse_phases result";
  FailureOr<planner::Group> built = TreeBuilder(uses, givenAt).build(tree);
  if (failed(built))
    return failure();
  input.tree = std::move(*built);
  return success();
}

/// The users of one spec that are the leaves of `root` (through nested
/// groups and phases), or nullopt when a leaf is anything else.
std::optional<StorageAliasSpecOp> specOfLeaves(Operation *root) {
  std::optional<StorageAliasSpecOp> spec;
  bool oneSpec = true;
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty() && oneSpec) {
    Operation *node = worklist.pop_back_val();
    for (Value operand : node->getOperands()) {
      Operation *definer = operand.getDefiningOp();
      if (isa_and_nonnull<ReuseGroupOp, ReusePhasesOp>(definer)) {
        worklist.push_back(definer);
        continue;
      }
      auto alloc = dyn_cast_or_null<StorageAliasLocalAllocOp>(definer);
      auto owner =
          alloc ? alloc.getStorageAlias().getDefiningOp<StorageAliasSpecOp>()
                : StorageAliasSpecOp();
      if (!owner || (spec && *spec != owner))
        oneSpec = false;
      else
        spec = owner;
    }
  }
  if (!oneSpec)
    return std::nullopt;
  return spec;
}

/// The compute capability of the target the module is compiled for
/// (`ttg.target = "cuda:90"`, as Triton writes it); 0 (unknown) without one.
int capabilityOf(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<StringAttr>("ttg.target") : nullptr;
  int capability = 0;
  if (!target)
    return 0;
  StringRef text = target.getValue();
  if (text.consume_front("cuda:") && !text.getAsInteger(10, capability))
    return capability;
  return 0;
}

/// The planner's element kind and width of `type`, when it has a size in
/// memory: integers, floats (fp8, fp4 included) and `!tt.ptr<...>`.
std::optional<int64_t> storedElementBits(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return planner::storedElementBits(planner::ElementKind::Integer,
                                      integer.getWidth());
  if (auto floating = dyn_cast<FloatType>(type))
    return planner::storedElementBits(planner::ElementKind::Float,
                                      floating.getWidth());
  if (auto verbatim = dyn_cast<triton::VerbatimType>(type);
      verbatim && verbatim.getSymbol() == "ptr")
    return planner::storedElementBits(planner::ElementKind::Pointer, 0);
  return std::nullopt;
}

} // namespace

FailureOr<StorageAliasOps> mlir::tlx::collectStorageAliasOps(ModuleOp module) {
  StorageAliasOps ops;
  std::vector<SpecUses> &specs = ops.specs;
  llvm::DenseMap<Value, unsigned> specIndex;
  bool valid = true;
  auto usesOf = [&](Operation *user, Value spec) -> SpecUses * {
    auto found = specIndex.find(spec);
    if (found != specIndex.end())
      return &specs[found->second];
    user->emitOpError()
        << "the storage alias operand must be a tlx.storage_alias_spec result";
    valid = false;
    return nullptr;
  };
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto spec = dyn_cast<StorageAliasSpecOp>(op)) {
      specIndex[spec.getResult()] = specs.size();
      specs.push_back(SpecUses{spec, {}, {}, {}});
    } else if (auto alloc = dyn_cast<StorageAliasLocalAllocOp>(op)) {
      if (SpecUses *uses = usesOf(op, alloc.getStorageAlias()))
        uses->allocs.push_back(alloc);
    } else if (auto overlap = dyn_cast<SetBufferOverlapOp>(op)) {
      if (SpecUses *uses = usesOf(op, overlap.getStorageAliasSpec()))
        uses->overlaps.push_back(overlap);
    } else if (isa<ReuseGroupOp, ReusePhasesOp>(op)) {
      ops.reuseGroups.push_back(op);
    }
  });
  // A tree (or phases) without users over one spec's buffers is that spec's
  // implicit overlap.
  for (Operation *root : ops.reuseGroups) {
    if (!root->use_empty())
      continue;
    std::optional<StorageAliasSpecOp> spec = specOfLeaves(root);
    if (!spec)
      continue;
    auto found = specIndex.find(spec->getResult());
    if (found != specIndex.end())
      specs[found->second].implicitOverlaps.push_back(root);
  }
  for (SpecUses &uses : specs) {
    for (Operation *user : uses.spec->getUsers()) {
      if (isa<StorageAliasLocalAllocOp, SetBufferOverlapOp>(user))
        continue;
      InFlightDiagnostic diag =
          user->emitOpError()
          << "uses a tlx.storage_alias_spec; only "
             "tlx.storage_alias_local_alloc and tlx.set_buffer_overlap may";
      diag.attachNote(uses.spec.getLoc()) << "the spec is defined here";
      valid = false;
    }
  }
  if (!valid)
    return failure();
  return ops;
}

std::string mlir::tlx::userName(StorageAliasLocalAllocOp alloc, size_t index) {
  return nameForDiagnostics(alloc, "user " + Twine(index));
}

FailureOr<planner::Buffer>
mlir::tlx::toPlannerBuffer(Operation *op, MemDescType type,
                           function_ref<std::string()> nameOf) {
  Type element = type.getElementType();
  std::optional<int64_t> elementBits = storedElementBits(element);
  if (!elementBits)
    return op->emitError() << "buffer \"" << nameOf() << "\" has element type "
                           << element
                           << ", which has no size in memory (expected an "
                              "integer, float or !tt.ptr element type)";
  planner::Buffer buffer;
  // The op verifiers keep storage alias users in #ttg.shared_memory or
  // #ttng.tensor_memory, and allocation refuses views that change it.
  buffer.storage =
      isa<triton::nvidia_gpu::TensorMemorySpaceAttr>(type.getMemorySpace())
          ? planner::Storage::Tmem
          : planner::Storage::Smem;
  buffer.shape.assign(type.getShape().begin(), type.getShape().end());
  buffer.elementBits = *elementBits;
  buffer.layout = toPlannerLayout(type.getEncoding());
  return buffer;
}

FailureOr<PlannerInput>
mlir::tlx::toPlannerInput(SpecUses &uses, bool wholeViews,
                          planner::ViewForm offsetForm) {
  PlannerInput input;
  input.spec.storage = toPlannerStorage(uses.spec.getStorage());
  if (IntegerAttr size = uses.spec.getBufferSizeBytesAttr())
    input.spec.explicitSizeBytes = size.getInt();
  input.spec.capability = capabilityOf(uses.spec);
  input.spec.wholeViews = wholeViews;
  input.spec.offsetForm = wholeViews ? planner::ViewForm::Slots : offsetForm;
  input.spec.groupStrideForm =
      planner::groupStrideFormOf(input.spec.offsetForm);

  bool valid = true;
  input.buffers.reserve(uses.allocs.size());
  for (auto [index, alloc] : llvm::enumerate(uses.allocs)) {
    FailureOr<planner::Buffer> buffer = toPlannerBuffer(
        alloc, alloc.getType(), [&] { return userName(alloc, index); });
    if (failed(buffer)) {
      valid = false;
      continue;
    }
    input.buffers.push_back(std::move(*buffer));
  }

  // set_buffer_overlap may be given once: point at every repetition.
  for (size_t index = 1; index < uses.overlaps.size(); ++index) {
    InFlightDiagnostic diag =
        uses.overlaps[index].emitError()
        << "tlx.set_buffer_overlap is given twice for storage_alias_spec \""
        << nameForDiagnostics(uses.spec, "storage_alias_spec") << "\"";
    diag.attachNote(uses.overlaps.front().getLoc()) << "first given here";
    valid = false;
  }
  if (valid && uses.overlaps.size() == 1) {
    SetBufferOverlapOp overlap = uses.overlaps.front();
    if (failed(buildOverlap(uses, overlap.getOverlapDef().getDefiningOp(),
                            overlap, input)))
      return failure();
  } else if (valid && uses.overlaps.empty() &&
             uses.implicitOverlaps.size() > 1) {
    Operation *first = uses.implicitOverlaps[0];
    InFlightDiagnostic diag =
        uses.implicitOverlaps[1]->emitError()
        << "storage_alias_spec \""
        << nameForDiagnostics(uses.spec, "storage_alias_spec")
        << "\" has two overlap trees and no tlx.set_buffer_overlap: this "
        << first->getName() << " and the one at "
        << nameForDiagnostics(first, "its location")
        << " are both over its buffers alone and neither is part of the "
           "other; nest one in the other, or give the one meant to "
           "tlx.set_buffer_overlap";
    diag.attachNote(first->getLoc()) << "the other tree";
    valid = false;
  } else if (valid && uses.overlaps.empty() &&
             uses.implicitOverlaps.size() == 1) {
    Operation *root = uses.implicitOverlaps.front();
    if (failed(buildOverlap(uses, root, root, input)))
      return failure();
  }
  if (!valid)
    return failure();
  return input;
}

planner::Plan mlir::tlx::planInput(const PlannerInput &input) {
  if (!input.phases.empty())
    return planner::planPhases(input.spec, input.buffers, input.phases);
  return planner::plan(input.spec, input.buffers, input.tree);
}

LogicalResult
mlir::tlx::reportPlannerDiagnostics(SpecUses &uses,
                                    ArrayRef<planner::Diagnostic> diagnostics,
                                    PlanWarnings warnings) {
  // Names are made only when there is something to say: planning stays
  // cheap.
  std::string specName;
  std::vector<std::string> userNames;
  bool hasError = false;
  for (const planner::Diagnostic &diagnostic : diagnostics) {
    bool isError = diagnostic.severity == planner::Severity::Error;
    if (!isError && warnings == PlanWarnings::Skip)
      continue;
    if (userNames.empty()) {
      specName = nameForDiagnostics(uses.spec, "storage_alias_spec");
      for (auto [index, alloc] : llvm::enumerate(uses.allocs))
        userNames.push_back(userName(alloc, index));
    }
    Operation *about = uses.spec;
    if (diagnostic.buffer >= 0 &&
        static_cast<size_t>(diagnostic.buffer) < uses.allocs.size())
      about = uses.allocs[diagnostic.buffer];
    std::string message =
        planner::formatDiagnostic(diagnostic, specName, userNames);
    if (isError) {
      about->emitError(message);
      hasError = true;
    } else {
      about->emitWarning(message);
    }
  }
  return failure(hasError);
}

BackingRecipe mlir::tlx::backingOf(const planner::Plan &plan) {
  return BackingRecipe{
      llvm::to_vector(plan.backingShape), llvm::to_vector(plan.backingBlock),
      plan.backingElementBits, plan.alignment, plan.regionSize};
}

BackingAttr mlir::tlx::backingAttrOf(MLIRContext *context,
                                     const BackingRecipe &backing) {
  return BackingAttr::get(context, backing.shape, backing.block,
                          backing.elementBits, backing.alignment,
                          backing.regionSize);
}

BackingRecipe mlir::tlx::backingOf(BackingAttr attr) {
  return BackingRecipe{SmallVector<int64_t>(attr.getShape()),
                       SmallVector<int64_t>(attr.getBlock()),
                       attr.getElementBits(), attr.getAlignment(),
                       attr.getRegionSize()};
}

// #tlx.placement's form is planner::ViewForm, case for case.
static_assert(static_cast<int>(ViewForm::sliced_rows) ==
                  static_cast<int>(planner::ViewForm::SlicedRows) &&
              static_cast<int>(ViewForm::indexed_row) ==
                  static_cast<int>(planner::ViewForm::IndexedRow) &&
              static_cast<int>(ViewForm::runtime_row) ==
                  static_cast<int>(planner::ViewForm::RuntimeRow) &&
              static_cast<int>(ViewForm::selected_rows) ==
                  static_cast<int>(planner::ViewForm::SelectedRows));

PlacementAttr mlir::tlx::placementAttrOf(MLIRContext *context,
                                         const planner::View &view) {
  planner::Placement placement = planner::placementOf(view);
  return PlacementAttr::get(
      context, placement.slots, placement.period, placement.scale,
      placement.offsetSlots, placement.step, placement.base,
      static_cast<ViewForm>(placement.form), placement.groupStride,
      placement.groupStarts.empty()
          ? DenseI64ArrayAttr()
          : DenseI64ArrayAttr::get(context, placement.groupStarts),
      static_cast<ViewForm>(placement.groupForm));
}

planner::Placement mlir::tlx::placementOf(PlacementAttr attr) {
  return planner::Placement{
      attr.getSlots(),
      attr.getPeriod(),
      attr.getScale(),
      attr.getOffset(),
      attr.getStep(),
      attr.getBase(),
      static_cast<planner::ViewForm>(attr.getForm()),
      attr.getGroupStride(),
      attr.getGroupStarts()
          ? std::vector<int64_t>(attr.getGroupStarts().asArrayRef().begin(),
                                 attr.getGroupStarts().asArrayRef().end())
          : std::vector<int64_t>(),
      static_cast<planner::ViewForm>(attr.getGroupForm())};
}

SmallVector<StorageAliasSpecOp>
mlir::tlx::takeSpecsWithoutUsers(std::vector<SpecUses> &specs) {
  SmallVector<StorageAliasSpecOp> unused;
  llvm::erase_if(specs, [&](SpecUses &uses) {
    if (!uses.allocs.empty() || !uses.overlaps.empty())
      return false;
    uses.spec.emitWarning()
        << "storage_alias_spec \""
        << nameForDiagnostics(uses.spec, "storage_alias_spec")
        << "\" has no tlx.storage_alias_local_alloc users; it is erased";
    unused.push_back(uses.spec);
    return true;
  });
  return unused;
}

SmallVector<Operation *>
mlir::tlx::reuseGroupsToErase(ArrayRef<Operation *> reuseGroups) {
  // Users follow their operands in pre-order: going backwards decides every
  // user before the group it uses.
  SmallVector<Operation *> dead;
  llvm::SmallPtrSet<Operation *, 16> erased;
  for (Operation *group : llvm::reverse(reuseGroups)) {
    if (!llvm::all_of(group->getUsers(), [&](Operation *user) {
          return isa<SetBufferOverlapOp>(user) || erased.contains(user);
        }))
      continue;
    erased.insert(group);
    dead.push_back(group);
  }
  return dead;
}

LogicalResult
mlir::tlx::checkPhaseLifetimes(SpecUses &uses, const planner::Plan &plan,
                               const std::vector<planner::Buffer> &buffers) {
  // Program order: every op of the module in pre-order (an op before the ops
  // of its regions, regions and their blocks in the order they are written).
  llvm::DenseMap<Operation *, int64_t> order;
  auto module = uses.spec->getParentOfType<ModuleOp>();
  module.walk<WalkOrder::PreOrder>(
      [&](Operation *op) { order[op] = static_cast<int64_t>(order.size()); });
  // The sequence of control an op is in: the innermost ttg.warp_specialize
  // region (its default region or one partition, which run concurrently)
  // around it, or the kernel (0).
  llvm::DenseMap<Region *, int64_t> sequenceOf;
  auto sequence = [&](Operation *op) -> int64_t {
    for (Region *region = op->getParentRegion(); region;
         region = region->getParentOp()->getParentRegion()) {
      Operation *holder = region->getParentOp();
      bool concurrent = isa<triton::gpu::WarpSpecializePartitionsOp>(holder) ||
                        (isa<triton::gpu::WarpSpecializeOp>(holder) &&
                         region->getRegionNumber() == 0);
      if (concurrent)
        return sequenceOf.try_emplace(region, sequenceOf.size() + 1)
            .first->second;
    }
    return 0;
  };
  std::vector<std::vector<planner::PhaseUse>> positions(uses.allocs.size());
  llvm::DenseMap<int64_t, Operation *> opAt;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs)) {
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (isa<ReuseGroupOp, ReusePhasesOp, SetBufferOverlapOp>(user))
          continue;
        if (auto warpSpecialize =
                dyn_cast<triton::gpu::WarpSpecializeOp>(user)) {
          // A capture is used where its partitions use it.
          for (Region *partition : warpSpecialize.getPartitionRegions())
            worklist.push_back(partition->getArgument(use.getOperandNumber()));
          continue;
        }
        positions[index].push_back({sequence(user), order.lookup(user)});
        opAt[order.lookup(user)] = user;
        for (Value result : user->getResults())
          if (isa<MemDescType>(result.getType()))
            worklist.push_back(result);
      }
    }
  }
  std::vector<planner::Diagnostic> problems =
      planner::checkPhaseLifetimes(plan, buffers, positions);
  if (problems.empty())
    return success();
  std::string specName = nameForDiagnostics(uses.spec, "storage_alias_spec");
  std::vector<std::string> userNames;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs))
    userNames.push_back(userName(alloc, index));
  for (const planner::Diagnostic &problem : problems) {
    Operation *inBetween = opAt.lookup(problem.numbers[0]);
    InFlightDiagnostic diag = inBetween->emitError(
        planner::formatDiagnostic(problem, specName, userNames));
    const std::string &other = userNames[problem.buffers[1]];
    diag.attachNote(opAt.lookup(problem.numbers[1])->getLoc())
        << "a use of buffer \"" << other << "\" before it";
    diag.attachNote(opAt.lookup(problem.numbers[2])->getLoc())
        << "a use of buffer \"" << other << "\" after it";
  }
  return failure();
}
