//===- StorageAliasAllocation.cpp - Step 3: backing and views ------------===//
//
// Replaces every tlx.storage_alias_spec by one backing allocation and every
// user by a tlx.local_alias of it whose leading dimension covers the region;
// rewrites each ttg.memdesc_index reached from a user to the planner's slot.
// Everything is computed and checked first; the IR changes only when the
// whole module can be lowered.
//
//===----------------------------------------------------------------------===//

#include "StorageAliasAllocation.h"
#include "tlx/Dialect/Encoding.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::tlx;
using triton::gpu::MemDescType;

namespace mlir::tlx {
#define GEN_PASS_DEF_TLXSTORAGEALIASALLOCATION
#include "tlx/Transforms/Passes.h.inc"
} // namespace mlir::tlx

namespace {

/// The rank-1 byte layout of an SMEM backing allocation: the region is
/// `[N / 128, 128] x i8`, a shape stock Triton accepts for any N.
constexpr StringLiteral smemBackingEncoding =
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>";

/// The backing size definition recorded on a spec.
FailureOr<BackingRecipe> recordedBacking(SpecUses &uses) {
  StorageAliasSpecOp spec = uses.spec;
  BackingAttr backing = spec.getBackingAttr();
  if (!backing)
    return spec.emitError() << "storage_alias_spec \""
                            << nameForDiagnostics(spec, "storage_alias_spec")
                            << "\" has no backing yet: run "
                               "--tlx-storage-alias-size-definition first";
  if (backing.getShape().size() != 2 || backing.getBlock().size() != 2 ||
      (backing.getElementBits() != 8 && backing.getElementBits() != 32) ||
      backing.getAlignment() < 1 || backing.getRegionSize() < 1)
    return spec.emitOpError()
           << "has a malformed backing " << backing
           << ": expected a 2-D shape and block, 8 or 32 element bits and a "
              "positive alignment and region";
  return backingOf(backing);
}

Value createBacking(OpBuilder &builder, StorageAliasSpecOp spec,
                    MemDescType type, int64_t alignment) {
  Location loc = spec.getLoc();
  if (spec.getStorage() == StorageKind::tmem)
    return triton::nvidia_gpu::TMEMAllocOp::create(builder, loc, type)
        .getResult();
  auto alloc = triton::gpu::LocalAllocOp::create(builder, loc, type);
  alloc.setAlignmentAttr(
      builder.getI32IntegerAttr(static_cast<int32_t>(alignment)));
  return alloc.getResult();
}

/// The backing's rows that `viewBytes` span from byte `start`
/// (ViewForm::SlicedRows, Triton 3.9; each group's view of SelectedRows).
Value slicedRows(OpBuilder &builder, Location loc, int64_t start,
                 int64_t viewBytes, Value backing, MemDescType backingType) {
  ArrayRef<int64_t> shape = backingType.getShape();
  int64_t rowBytes = shape.back();
  int64_t rows = (viewBytes + rowBytes - 1) / rowBytes;
  auto rowsType = MemDescType::get(
      {rows, rowBytes}, backingType.getElementType(), backingType.getEncoding(),
      backingType.getMemorySpace(), backingType.getMutableMemory(), shape);
  return triton::gpu::MemDescSubsliceOp::create(
      builder, loc, rowsType, backing,
      builder.getDenseI32ArrayAttr(
          {static_cast<int32_t>(start / rowBytes), 0}));
}

/// The backing's row `row` (an i32 value): ViewForm::IndexedRow's source,
/// which Triton 3.6 and 3.7 reinterpret to a view larger than itself
/// (tlx.compat.VIEW_FORMS), and RuntimeRow's at a row computed at run time.
Value indexedRow(OpBuilder &builder, Location loc, Value row, Value backing,
                 MemDescType backingType) {
  auto rowType = MemDescType::get(
      {backingType.getShape().back()}, backingType.getElementType(),
      backingType.getEncoding(), backingType.getMemorySpace(),
      backingType.getMutableMemory());
  return triton::gpu::MemDescIndexOp::create(builder, loc, rowType, backing,
                                             row);
}

/// Builds the slot that replaces a ttg.memdesc_index's buffer index, sharing
/// what it builds: a kernel that indexes many aliased buffers with one loop
/// counter computes each distinct slot once. Constants go to the start of
/// the entry block of the nearest region that values cannot cross (a
/// function, a warp_specialize partition; an unregistered op counts as one),
/// one per value; the arithmetic for one index value and view shape goes
/// right after the index is defined, so that it dominates every use of it.
class SlotBuilder {
public:
  /// Makes `op` index slot(i) of `view` instead of buffer i. A view per
  /// buffer group (View::perGroup: `op` indexes the backing) is first taken
  /// at the backing's row where buffer i's group starts and reinterpreted to
  /// the group's slots (RuntimeRow), or chosen among its `count` buffers'
  /// group views by buffer i's group (SelectedRows), as the Python door's
  /// api/_sealing.py group_view and selected_group_view write them.
  void rewrite(triton::gpu::MemDescIndexOp op, const planner::View &view,
               int64_t count) {
    bool perGroup = view.perGroup();
    if (view.identityIndex() && !perGroup)
      return;
    Value index = op.getIndex();
    APInt constant;
    Emitted emitted;
    std::optional<int64_t> constantGroup;
    if (matchPattern(index, m_ConstantInt(&constant))) {
      int64_t buffer = constant.getSExtValue();
      planner::IndexProgram program = planner::indexProgramOf(view);
      emitted.slot = constantFor(index, planner::slotOf(view, buffer));
      if (program.row)
        emitted.row = constantFor(
            index, planner::evaluateIndexProgramRow(program, buffer));
      if (program.group)
        constantGroup = planner::evaluateIndexProgramGroup(program, buffer);
    } else {
      // Views that differ only where they start share the slot arithmetic;
      // the row of a view per group depends on its start and stride too.
      Emitted &known = emittedPrograms[SlotKey{
          index, view.period, view.scale, view.offsetSlots, view.step,
          perGroup ? view.base : 0, view.groupStride}];
      if (!known.slot)
        known = emit(index, planner::indexProgramOf(view));
      emitted = known;
    }
    if (perGroup) {
      OpBuilder builder(op);
      auto backingType = cast<MemDescType>(op.getSrc().getType());
      auto resultType = cast<MemDescType>(op.getType());
      auto groupType = MemDescType::get(
          view.shape, resultType.getElementType(), resultType.getEncoding(),
          resultType.getMemorySpace(), resultType.getMutableMemory());
      Value group;
      if (view.form == planner::ViewForm::RuntimeRow) {
        Value row = indexedRow(builder, op.getLoc(), emitted.row, op.getSrc(),
                               backingType);
        group = LocalAliasOp::create(builder, op.getLoc(), groupType, row);
      } else {
        SelectedGroup selected{op.getLoc(),
                               op.getSrc(),
                               backingType,
                               groupType,
                               planner::groupViewStarts(view, count),
                               view.slots() * view.bufferSize,
                               view.groupForm,
                               {}};
        // The row indices of the group views it builds: one for a constant
        // index, every group's for a runtime one.
        if (view.groupForm == planner::ViewForm::IndexedRow) {
          int64_t rowBytes = backingType.getShape().back();
          selected.rows.resize(selected.starts.size());
          for (size_t group = 0; group < selected.starts.size(); ++group)
            if (!constantGroup || *constantGroup == static_cast<int64_t>(group))
              selected.rows[group] =
                  constantFor(index, selected.starts[group] / rowBytes);
        }
        group = constantGroup ? selected.view(builder, *constantGroup)
                              : selectGroup(builder, selected, emitted.group);
      }
      op.getSrcMutable().assign(group);
    }
    op.getIndexMutable().assign(emitted.slot);
  }

  /// The constant slot `slot` as an index of `user`, built before it.
  Value constantSlot(Operation *user, int64_t slot) {
    return constantFor(user->getParentRegion(), user->getLoc(),
                       IntegerType::get(user->getContext(), 32), slot);
  }

private:
  /// The views of a SelectedRows user's buffer groups over `backing`: each
  /// the backing at its start in the form the planner gives group views
  /// (View::groupForm: the rows the view spans, SlicedRows; or the row there,
  /// IndexedRow, whose constant indices `rows` holds), reinterpreted to the
  /// group's slots.
  struct SelectedGroup {
    Location loc;
    Value backing;
    MemDescType backingType;
    MemDescType groupType;
    std::vector<int64_t> starts;
    int64_t viewBytes;
    planner::ViewForm form;
    std::vector<Value> rows;

    Value view(OpBuilder &builder, int64_t group) const {
      Value source =
          form == planner::ViewForm::IndexedRow
              ? indexedRow(builder, loc, rows[group], backing, backingType)
              : slicedRows(builder, loc, starts[group], viewBytes, backing,
                           backingType);
      return LocalAliasOp::create(builder, loc, groupType, source);
    }
  };

  /// The view of the group `group` (an i32 value) chooses: `scf.if` on
  /// group == 0, 1, ..., each view built in its own branch (a view built
  /// outside would let canonicalization turn the chain into arith.select).
  Value selectGroup(OpBuilder &builder, const SelectedGroup &selected,
                    Value group, int64_t first = 0) {
    if (first + 1 >= static_cast<int64_t>(selected.starts.size()))
      return selected.view(builder, first);
    Value isFirst =
        arith::CmpIOp::create(builder, selected.loc, arith::CmpIPredicate::eq,
                              group, constantFor(group, first));
    auto choice = scf::IfOp::create(builder, selected.loc,
                                    TypeRange{selected.groupType}, isFirst,
                                    /*withElseRegion=*/true);
    OpBuilder thenBuilder = choice.getThenBodyBuilder();
    scf::YieldOp::create(thenBuilder, selected.loc,
                         ValueRange{selected.view(thenBuilder, first)});
    OpBuilder elseBuilder = choice.getElseBodyBuilder();
    scf::YieldOp::create(
        elseBuilder, selected.loc,
        ValueRange{selectGroup(elseBuilder, selected, group, first + 1)});
    return choice.getResult(0);
  }

  using ConstantKey = std::tuple<Block *, Type, int64_t>;
  /// (index, period, scale, offset, step, base of a view per group, group
  /// stride).
  using SlotKey =
      std::tuple<Value, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
  /// What an index program built: the slot, the row of a RuntimeRow view
  /// and the group of a SelectedRows view (null otherwise).
  struct Emitted {
    Value slot;
    Value row;
    Value group;
  };

  /// The entry block of the nearest region around `region` that no value
  /// crosses: constants there are visible wherever values of `region` are.
  static Block *constantScope(Region *region) {
    for (Operation *parent = region->getParentOp();
         parent->isRegistered() &&
         !parent->hasTrait<OpTrait::IsIsolatedFromAbove>() &&
         parent->getParentRegion();
         parent = region->getParentOp())
      region = parent->getParentRegion();
    return &region->front();
  }

  /// The constant `value` of `index`'s type, visible wherever `index` is.
  Value constantFor(Value index, int64_t value) {
    return constantFor(index.getParentRegion(), index.getLoc(), index.getType(),
                       value);
  }

  /// The constant `value` of `type`, visible wherever values of `region`
  /// are.
  Value constantFor(Region *region, Location loc, Type type, int64_t value) {
    Block *scope = constantScope(region);
    Value &known = constants[ConstantKey{scope, type, value}];
    if (known)
      return known;
    OpBuilder builder(type.getContext());
    if (Operation *last = lastConstant.lookup(scope))
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(scope);
    auto op = arith::ConstantIntOp::create(builder, loc, type, value);
    lastConstant[scope] = op;
    known = op.getResult();
    return known;
  }

  /// Builds an `OpType` right after `index`'s definition and what was built
  /// there before (and after the constants, when they share its block), so
  /// that operands precede their users.
  template <typename OpType, typename... Args>
  Value buildAfter(Value index, Args &&...args) {
    OpBuilder builder(index.getContext());
    if (Operation *previous = lastBuilt.lookup(index))
      builder.setInsertionPointAfter(previous);
    else if (Operation *definition = index.getDefiningOp())
      builder.setInsertionPointAfter(definition);
    else if (Operation *last = lastConstant.lookup(index.getParentBlock()))
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(index.getParentBlock());
    auto op =
        OpType::create(builder, index.getLoc(), std::forward<Args>(args)...);
    lastBuilt[index] = op;
    return op.getResult();
  }

  /// A view's index program (planner::indexProgramOf), emitted after
  /// `index`.
  Emitted emit(Value index, const planner::IndexProgram &program) {
    SmallVector<Value> results;
    auto read = [&](const planner::IndexOperand &operand) -> Value {
      switch (operand.kind) {
      case planner::IndexOperand::Kind::BufferIndex:
        return index;
      case planner::IndexOperand::Kind::Constant:
        return constantFor(index, operand.value);
      case planner::IndexOperand::Kind::Result:
        return results[operand.value];
      }
      llvm_unreachable("an index operand is the index, a constant or a result");
    };
    for (const planner::IndexOperation &operation : program.operations) {
      results.push_back(build(index, operation.opcode, read(operation.lhs),
                              read(operation.rhs)));
    }
    return {read(program.result), program.row ? read(*program.row) : Value(),
            program.group ? read(*program.group) : Value()};
  }

  Value build(Value index, planner::IndexOpcode opcode, Value lhs, Value rhs) {
    switch (opcode) {
    case planner::IndexOpcode::DivideUnsigned:
      return buildAfter<arith::DivUIOp>(index, lhs, rhs);
    case planner::IndexOpcode::RemainderUnsigned:
      return buildAfter<arith::RemUIOp>(index, lhs, rhs);
    case planner::IndexOpcode::Multiply:
      return buildAfter<arith::MulIOp>(index, lhs, rhs);
    case planner::IndexOpcode::Add:
      return buildAfter<arith::AddIOp>(index, lhs, rhs);
    }
    llvm_unreachable("every index opcode is built");
  }

  llvm::DenseMap<ConstantKey, Value> constants;
  llvm::DenseMap<Block *, Operation *> lastConstant;
  llvm::DenseMap<SlotKey, Emitted> emittedPrograms;
  llvm::DenseMap<Value, Operation *> lastBuilt;
};

/// What a user's view reinterprets: the backing, or for a view from a byte
/// offset (`base`, `form`: planner::View) the backing cut there in the form
/// the Triton writes (docs/planner.md, "Views at a byte offset"), as the
/// Python door's api/_sealing.py emits it. `viewBytes`: the bytes the
/// view's slots span.
Value viewSource(OpBuilder &builder, StorageAliasLocalAllocOp alloc,
                 int64_t base, planner::ViewForm form, int64_t viewBytes,
                 Value backing, MemDescType backingType, SlotBuilder &slots) {
  if (form == planner::ViewForm::Slots)
    return backing;
  int64_t rowBytes = backingType.getShape().back();
  int64_t row = base / rowBytes;
  Location loc = alloc.getLoc();
  if (form == planner::ViewForm::IndexedRow)
    return indexedRow(builder, loc, slots.constantSlot(alloc, row), backing,
                      backingType);
  // The rows the view spans from its start (Triton 3.9).
  return slicedRows(builder, loc, base, viewBytes, backing, backingType);
}

} // namespace

FailureOr<planner::View>
mlir::tlx::checkedView(Operation *about, const planner::Buffer &buffer,
                       function_ref<std::string()> nameOf,
                       const planner::Placement &placement, int64_t regionSize,
                       int bufferIndex) {
  planner::View view = planner::viewOf(buffer, placement);
  std::vector<planner::Diagnostic> problems =
      planner::checkView(view, buffer, bufferIndex, regionSize);
  if (problems.empty())
    return view;
  std::vector<std::string> names(bufferIndex + 1);
  names[bufferIndex] = nameOf();
  for (const planner::Diagnostic &problem : problems)
    about->emitError(planner::formatDiagnostic(problem, "", names));
  return failure();
}

AllocationAnalysis::AllocationAnalysis(
    MLIRContext *context, const llvm::SmallPtrSetImpl<Operation *> &erasedUsers)
    : context(context), erasedUsers(erasedUsers),
      smemBytesLayout(triton::parseEncoding(context, smemBackingEncoding)) {}

FailureOr<Attribute>
AllocationAnalysis::tmemBackingEncoding(SpecUses &uses,
                                        ArrayRef<int64_t> backingBlock) {
  // The recipe's block, in the encoding of the users' Triton.
  // The backing copies a user's encoding, so that it is spelled the way the
  // input's Triton spells it (`unpacked` or `colStride`), preferably from a
  // 32-bit user whose packing already matches i32.
  StorageAliasLocalAllocOp source = uses.allocs.front();
  for (StorageAliasLocalAllocOp alloc : uses.allocs) {
    Type element = alloc.getType().getElementType();
    if (element.isIntOrFloat() && element.getIntOrFloatBitWidth() == 32) {
      source = alloc;
      break;
    }
  }
  Attribute sourceEncoding = source.getType().getEncoding();
  if (!triton::encodingInt(sourceEncoding, "blockM") ||
      !triton::encodingInt(sourceEncoding, "blockN"))
    return source.emitError()
           << "the TMEM encoding " << sourceEncoding
           << " has no blockM and blockN to size the backing allocation with";
  auto key = std::make_tuple(sourceEncoding, backingBlock[0], backingBlock[1]);
  if (Attribute known = tmemBackingLayouts.lookup(key))
    return known;
  std::string text;
  llvm::raw_string_ostream(text) << sourceEncoding;
  text = llvm::Regex("blockM *= *[0-9]+")
             .sub(("blockM = " + Twine(backingBlock[0])).str(), text);
  text = llvm::Regex("blockN *= *[0-9]+")
             .sub(("blockN = " + Twine(backingBlock[1])).str(), text);
  text = llvm::Regex("colStride *= *[0-9]+").sub("colStride = 1", text);
  Attribute encoding = triton::parseEncoding(context, text);
  if (!encoding)
    return source.emitError()
           << "cannot build the TMEM backing encoding from " << text;
  tmemBackingLayouts[key] = encoding;
  return encoding;
}

FailureOr<MemDescType>
AllocationAnalysis::backingType(SpecUses &uses, const BackingRecipe &backing) {
  Type element = IntegerType::get(context, backing.elementBits);
  if (uses.spec.getStorage() == StorageKind::tmem) {
    FailureOr<Attribute> encoding = tmemBackingEncoding(uses, backing.block);
    if (failed(encoding))
      return failure();
    return MemDescType::get(
        backing.shape, element, *encoding,
        triton::nvidia_gpu::TensorMemorySpaceAttr::get(context),
        /*mutableMemory=*/true);
  }
  return MemDescType::get(backing.shape, element, smemBytesLayout,
                          triton::gpu::SharedMemorySpaceAttr::get(context),
                          /*mutableMemory=*/true);
}

MemDescType AllocationAnalysis::viewType(MemDescType type,
                                         const planner::View &view) {
  MemDescType &known =
      viewTypes[{type, view.slots(), static_cast<unsigned>(view.indexed)}];
  if (!known)
    known =
        MemDescType::get(view.shape, type.getElementType(), type.getEncoding(),
                         type.getMemorySpace(), type.getMutableMemory());
  return known;
}

FailureOr<AllocationAnalysis::Carrier>
AllocationAnalysis::followAlias(Operation *alias, MemDescType resultType,
                                const Carrier &source, int64_t region,
                                int bufferIndex) {
  auto sourceName = [&] { return userName(source.user, bufferIndex); };
  if (resultType.getMemorySpace() != source.newType.getMemorySpace())
    return alias->emitOpError() << "moves the aliased buffer \"" << sourceName()
                                << "\" from " << source.newType.getMemorySpace()
                                << " to " << resultType.getMemorySpace();
  FailureOr<planner::Buffer> buffer =
      toPlannerBuffer(alias, resultType, sourceName);
  if (failed(buffer))
    return failure();
  const planner::View &sourceView = views[source.view];
  std::optional<planner::View> view =
      planner::reinterpretedView(sourceView, *buffer, region);
  if (!view)
    return alias->emitOpError()
           << "changes the buffer size of \"" << sourceName() << "\" from "
           << sourceView.bufferSize << " to " << planner::bufferSize(*buffer)
           << ", but its buffers are not contiguous from the region's start "
              "(buffer i is slot "
           << sourceView.scale << " * (i / " << sourceView.period << ") + "
           << sourceView.offsetSlots << " + " << sourceView.step << " * (i % "
           << sourceView.period
           << ")); index the buffer before changing its size";
  FailureOr<planner::View> checked =
      checkedView(alias, *buffer, sourceName, planner::placementOf(*view),
                  region, bufferIndex);
  if (failed(checked))
    return failure();
  views.push_back(*checked);
  return Carrier{alias->getResult(0), viewType(resultType, *checked),
                 views.size() - 1, source.user};
}

LogicalResult AllocationAnalysis::followUses(Carrier root, int64_t region,
                                             int bufferIndex) {
  SmallVector<Carrier> worklist{std::move(root)};
  bool valid = true;
  while (!worklist.empty()) {
    Carrier carrier = worklist.pop_back_val();
    for (OpOperand &use : carrier.value.getUses()) {
      Operation *user = use.getOwner();
      if (erasedUsers.contains(user))
        continue;
      if (auto index = dyn_cast<triton::gpu::MemDescIndexOp>(user)) {
        indexRewrites.push_back(IndexRewrite{
            index, carrier.view, carrier.user.getType().getShape().front()});
        continue;
      }
      if (isa<triton::gpu::MemDescReinterpretOp, LocalAliasOp>(user) &&
          views[carrier.view].perGroup()) {
        user->emitOpError()
            << "views the aliased buffer \""
            << userName(carrier.user, bufferIndex)
            << "\" as a whole, but its buffer groups are "
            << (views[carrier.view].groupStarts.empty()
                    ? std::to_string(views[carrier.view].groupStride) +
                          " bytes apart, no multiple of its buffer size"
                    : std::string("at starts of their own"))
            << ": each group is a view of its own ("
            << planner::viewFormName(views[carrier.view].form)
            << "); index the buffer before viewing it";
        valid = false;
        continue;
      }
      if (isa<triton::gpu::MemDescReinterpretOp, LocalAliasOp>(user)) {
        auto resultType = cast<MemDescType>(user->getResult(0).getType());
        FailureOr<Carrier> derived =
            followAlias(user, resultType, carrier, region, bufferIndex);
        if (failed(derived)) {
          valid = false;
          continue;
        }
        retypedValues.emplace_back(derived->value, derived->newType);
        worklist.push_back(std::move(*derived));
        continue;
      }
      if (auto warpSpecialize = dyn_cast<triton::gpu::WarpSpecializeOp>(user)) {
        unsigned capture = use.getOperandNumber();
        for (Region *partition : warpSpecialize.getPartitionRegions()) {
          BlockArgument argument = partition->getArgument(capture);
          retypedValues.emplace_back(argument, carrier.newType);
          worklist.push_back(
              Carrier{argument, carrier.newType, carrier.view, carrier.user});
        }
        continue;
      }
      InFlightDiagnostic diag =
          user->emitOpError()
          << "uses the aliased buffer \"" << userName(carrier.user, bufferIndex)
          << "\" directly; storage alias lowering follows a buffer only "
             "through ttg.memdesc_index, ttg.memdesc_reinterpret, "
             "tlx.local_alias and ttg.warp_specialize captures";
      diag.attachNote(carrier.value.getLoc()) << "the buffer comes from here";
      valid = false;
    }
  }
  return success(valid);
}

LogicalResult AllocationAnalysis::analyzeSpec(
    SpecUses &uses, const BackingRecipe &backing,
    function_ref<FailureOr<planner::View>(size_t index)> userView) {
  FailureOr<MemDescType> backingMemDesc = backingType(uses, backing);
  if (failed(backingMemDesc))
    return failure();

  SpecRewrite rewrite{uses.spec, *backingMemDesc, backing.alignment, {}};
  size_t firstView = views.size();
  bool valid = true;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs)) {
    FailureOr<planner::View> view = userView(index);
    if (failed(view)) {
      valid = false;
      continue;
    }
    views.push_back(*view);
    // A view per buffer group: the user becomes the backing, which each
    // ttg.memdesc_index takes at its group's row (SlotBuilder::rewrite).
    MemDescType type =
        view->perGroup() ? *backingMemDesc : viewType(alloc.getType(), *view);
    int64_t viewBytes = view->slots() * view->bufferSize;
    // A user that is one buffer keeps its type: its uses need no rewrite.
    if (!view->indexed) {
      rewrite.users.push_back(UserRewrite{alloc, type,
                                          planner::slotOf(*view, 0), view->base,
                                          view->form, viewBytes});
      continue;
    }
    rewrite.users.push_back(UserRewrite{alloc, type, std::nullopt, view->base,
                                        view->form, viewBytes});
    if (failed(followUses(
            Carrier{alloc.getResult(), type, views.size() - 1, alloc},
            backing.regionSize, static_cast<int>(index))))
      valid = false;
  }
  if (!valid)
    return failure();
  // Reinterpreted views may need more than the plan's users.
  if (uses.spec.getStorage() == StorageKind::smem)
    for (const planner::View &view : ArrayRef(views).drop_front(firstView))
      rewrite.alignment = std::max(rewrite.alignment, view.alignment);
  rewrite.retypedValuesEnd = retypedValues.size();
  rewrite.indexRewritesEnd = indexRewrites.size();
  specs.push_back(std::move(rewrite));
  return success();
}

void AllocationAnalysis::apply(ArrayRef<Operation *> obsolete) {
  // Every op is created before any is erased, spec by spec in program order:
  // the new ops then lie together in memory in the order the verifier and
  // the printer visit them, not scattered over the holes erased ops leave.
  size_t retypedValuesBegin = 0;
  size_t indexRewritesBegin = 0;
  SlotBuilder slots;
  for (SpecRewrite &rewrite : specs) {
    OpBuilder builder(rewrite.spec);
    Value backing = createBacking(builder, rewrite.spec, rewrite.backingType,
                                  rewrite.alignment);
    for (UserRewrite &user : rewrite.users) {
      if (user.form == planner::ViewForm::RuntimeRow ||
          user.form == planner::ViewForm::SelectedRows) {
        user.alloc.getResult().replaceAllUsesWith(backing);
        continue;
      }
      builder.setInsertionPoint(user.alloc);
      Value source =
          viewSource(builder, user.alloc, user.base, user.form, user.viewBytes,
                     backing, rewrite.backingType, slots);
      Value alias = LocalAliasOp::create(builder, user.alloc.getLoc(),
                                         user.viewType, source);
      if (user.singleSlot)
        alias = triton::gpu::MemDescIndexOp::create(
            builder, user.alloc.getLoc(), user.alloc.getType(), alias,
            slots.constantSlot(user.alloc, *user.singleSlot));
      user.alloc.getResult().replaceAllUsesWith(alias);
    }
    for (auto [value, type] :
         ArrayRef(retypedValues)
             .slice(retypedValuesBegin,
                    rewrite.retypedValuesEnd - retypedValuesBegin))
      value.setType(type);
    for (const IndexRewrite &index :
         ArrayRef(indexRewrites)
             .slice(indexRewritesBegin,
                    rewrite.indexRewritesEnd - indexRewritesBegin))
      slots.rewrite(index.op, views[index.view], index.count);
    retypedValuesBegin = rewrite.retypedValuesEnd;
    indexRewritesBegin = rewrite.indexRewritesEnd;
  }
  for (Operation *op : obsolete)
    op->erase();
  for (SpecRewrite &rewrite : specs) {
    for (UserRewrite &user : rewrite.users)
      user.alloc.erase();
    rewrite.spec.erase();
  }
}

namespace {

struct StorageAliasAllocationPass
    : mlir::tlx::impl::TLXStorageAliasAllocationBase<
          StorageAliasAllocationPass> {
  void runOnOperation() override {
    if (failed(allocateStorageAliases(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tlx::allocateStorageAliases(ModuleOp module) {
  FailureOr<StorageAliasOps> ops = collectStorageAliasOps(module);
  if (failed(ops))
    return failure();
  llvm::SmallPtrSet<Operation *, 1> noErasedUsers;
  AllocationAnalysis analysis(module.getContext(), noErasedUsers);
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(ops->specs);
  bool valid = true;
  for (SpecUses &uses : ops->specs) {
    if (!uses.overlaps.empty()) {
      uses.overlaps.front().emitError()
          << "tlx.set_buffer_overlap is still present: run "
             "--tlx-buffer-offset-calculation before allocation";
      valid = false;
      continue;
    }
    FailureOr<BackingRecipe> backing = recordedBacking(uses);
    if (failed(backing)) {
      valid = false;
      continue;
    }
    // Each user's placement, as offset calculation recorded it.
    auto userView = [&](size_t index) -> FailureOr<planner::View> {
      StorageAliasLocalAllocOp alloc = uses.allocs[index];
      auto nameOf = [&] { return userName(alloc, index); };
      PlacementAttr placement = alloc.getPlacementAttr();
      if (!placement)
        return alloc.emitError() << "buffer \"" << nameOf()
                                 << "\" has no placement yet: run "
                                    "--tlx-buffer-offset-calculation first";
      FailureOr<planner::Buffer> buffer =
          toPlannerBuffer(alloc, alloc.getType(), nameOf);
      if (failed(buffer))
        return failure();
      return checkedView(alloc, *buffer, nameOf, placementOf(placement),
                         backing->regionSize, static_cast<int>(index));
    };
    if (failed(analysis.analyzeSpec(uses, *backing, userView)))
      valid = false;
  }
  if (!valid)
    return failure();
  analysis.apply(SmallVector<Operation *>(unused.begin(), unused.end()));
  return success();
}
