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

/// The size of the region of a spec sized by size definition, in the
/// planner's unit, read back from its attributes.
FailureOr<int64_t> regionSize(SpecUses &uses) {
  StorageAliasSpecOp spec = uses.spec;
  IntegerAttr size = spec.getBufferSizeBytesAttr();
  DenseI64ArrayAttr shape = spec.getBufferShapeAttr();
  if (!size || !shape)
    return spec.emitError() << "storage_alias_spec \""
                            << nameForDiagnostics(spec, "storage_alias_spec")
                            << "\" has no size and buffer_shape yet: run "
                               "--tlx-storage-alias-size-definition first";
  bool tmem = spec.getStorage() == StorageKind::tmem;
  // The backing holds i8 (SMEM) or i32 (TMEM) elements.
  int64_t elementBytes = tmem ? 4 : 1;
  if (shape.size() != 2 || shape[0] * shape[1] * elementBytes != size.getInt())
    return spec.emitOpError()
           << "buffer_shape [" << shape.asArrayRef() << "] of "
           << (tmem ? "i32" : "i8") << " does not hold the spec's "
           << size.getInt() << " bytes";
  // Plans are in bytes for SMEM and in 32-bit columns for TMEM.
  return tmem ? shape[1] : size.getInt();
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

/// Builds the slot that replaces a ttg.memdesc_index's buffer index, sharing
/// what it builds: a kernel that indexes many aliased buffers with one loop
/// counter computes each distinct slot once. Constants go to the start of
/// the entry block of the nearest region that values cannot cross (a
/// function, a warp_specialize partition; an unregistered op counts as one),
/// one per value; the arithmetic for one index value and view shape goes
/// right after the index is defined, so that it dominates every use of it.
class SlotBuilder {
public:
  /// Makes `op` index slot(i) of `view` instead of buffer i.
  void rewrite(triton::gpu::MemDescIndexOp op, const planner::View &view) {
    if (view.identityIndex())
      return;
    Value index = op.getIndex();
    APInt constant;
    Value slot;
    if (matchPattern(index, m_ConstantInt(&constant)))
      slot = constantFor(index, planner::slotOf(view, constant.getSExtValue()));
    else
      slot = slotOf(index, view);
    op.getIndexMutable().assign(slot);
  }

  /// The constant slot `slot` as an index of `user`, built before it.
  Value constantSlot(Operation *user, int64_t slot) {
    return constantFor(user->getParentRegion(), user->getLoc(),
                       IntegerType::get(user->getContext(), 32), slot);
  }

private:
  using ConstantKey = std::tuple<Block *, Type, int64_t>;
  using SlotKey = std::tuple<Value, int64_t, int64_t, int64_t>;

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

  Value slotOf(Value index, const planner::View &view) {
    Value &known =
        slots[SlotKey{index, view.groupSize, view.scale, view.offsetSlots}];
    if (known)
      return known;
    Value slot = index;
    Value withinGroup;
    if (view.groupSize > 1) {
      Value groupSize = constantFor(index, view.groupSize);
      slot = buildAfter<arith::DivUIOp>(index, index, groupSize);
      withinGroup = buildAfter<arith::RemUIOp>(index, index, groupSize);
    }
    if (view.scale != 1)
      slot = buildAfter<arith::MulIOp>(index, slot,
                                       constantFor(index, view.scale));
    if (view.offsetSlots != 0)
      slot = buildAfter<arith::AddIOp>(index, slot,
                                       constantFor(index, view.offsetSlots));
    if (withinGroup)
      slot = buildAfter<arith::AddIOp>(index, slot, withinGroup);
    known = slot;
    return slot;
  }

  llvm::DenseMap<ConstantKey, Value> constants;
  llvm::DenseMap<Block *, Operation *> lastConstant;
  llvm::DenseMap<SlotKey, Value> slots;
  llvm::DenseMap<Value, Operation *> lastBuilt;
};

} // namespace

FailureOr<planner::View>
mlir::tlx::checkedView(Operation *about, const planner::Buffer &buffer,
                       function_ref<std::string()> nameOf,
                       const Placement &placement, int64_t regionSize,
                       int bufferIndex) {
  planner::View view =
      planner::viewFromPlacement(buffer, placement.offset, placement.stride,
                                 placement.groupSize, regionSize);
  if (planner::checkView(view, buffer, bufferIndex, regionSize).empty())
    return view;
  // Checked again with the buffer named, for messages that name it.
  planner::Buffer named = buffer;
  named.name = nameOf();
  for (const planner::Diagnostic &diagnostic :
       planner::checkView(view, named, bufferIndex, regionSize))
    about->emitError(diagnostic.message);
  return failure();
}

AllocationAnalysis::AllocationAnalysis(
    MLIRContext *context, const llvm::SmallPtrSetImpl<Operation *> &erasedUsers)
    : context(context), erasedUsers(erasedUsers),
      smemBytesLayout(triton::parseEncoding(context, smemBackingEncoding)) {}

FailureOr<Attribute>
AllocationAnalysis::tmemBackingEncoding(SpecUses &uses,
                                        ArrayRef<int64_t> backingBlock) {
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
AllocationAnalysis::backingType(SpecUses &uses, ArrayRef<int64_t> backingShape,
                                ArrayRef<int64_t> backingBlock) {
  if (uses.spec.getStorage() == StorageKind::tmem) {
    FailureOr<Attribute> encoding = tmemBackingEncoding(uses, backingBlock);
    if (failed(encoding))
      return failure();
    return MemDescType::get(
        backingShape, IntegerType::get(context, 32), *encoding,
        triton::nvidia_gpu::TensorMemorySpaceAttr::get(context),
        /*mutableMemory=*/true);
  }
  return MemDescType::get(backingShape, IntegerType::get(context, 8),
                          smemBytesLayout,
                          triton::gpu::SharedMemorySpaceAttr::get(context),
                          /*mutableMemory=*/true);
}

MemDescType AllocationAnalysis::withLeadingDim(MemDescType type,
                                               int64_t leadingDim,
                                               bool prepend) {
  MemDescType &expanded = expandedTypes[{type, leadingDim, unsigned(prepend)}];
  if (!expanded) {
    SmallVector<int64_t> shape(type.getShape());
    if (prepend)
      shape.insert(shape.begin(), leadingDim);
    else
      shape.front() = leadingDim;
    expanded =
        MemDescType::get(shape, type.getElementType(), type.getEncoding(),
                         type.getMemorySpace(), type.getMutableMemory());
  }
  return expanded;
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
  int64_t size = planner::bufferSize(*buffer);
  Placement placement{sourceView.offset, sourceView.bytesBetweenBufferGroups,
                      sourceView.groupSize};
  if (size != sourceView.bufferSize) {
    // Another buffer size re-slices the bytes: only possible while the
    // buffers are still contiguous from the region's start.
    if (!sourceView.identityIndex())
      return alias->emitOpError()
             << "changes the buffer size of \"" << sourceName() << "\" from "
             << sourceView.bufferSize << " to " << size
             << ", but its buffers sit at offset " << sourceView.offset
             << " with stride " << sourceView.bytesBetweenBufferGroups
             << " and group size " << sourceView.groupSize
             << "; index the buffer before changing its size";
    placement = Placement{0, size, 1};
  }
  FailureOr<planner::View> view =
      checkedView(alias, *buffer, sourceName, placement, region, bufferIndex);
  if (failed(view))
    return failure();
  views.push_back(*view);
  return Carrier{alias->getResult(0), withLeadingDim(resultType, view->slots),
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
        indexRewrites.push_back(IndexRewrite{index, carrier.view});
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
    SpecUses &uses, int64_t regionSize, ArrayRef<int64_t> backingShape,
    ArrayRef<int64_t> backingBlock,
    function_ref<FailureOr<planner::View>(size_t index)> userView) {
  FailureOr<MemDescType> backing =
      backingType(uses, backingShape, backingBlock);
  if (failed(backing))
    return failure();

  SpecRewrite rewrite{uses.spec, *backing, 0, {}};
  size_t firstView = views.size();
  bool valid = true;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs)) {
    FailureOr<planner::View> view = userView(index);
    if (failed(view)) {
      valid = false;
      continue;
    }
    views.push_back(*view);
    // A user that is one buffer keeps its type: its uses need no rewrite.
    if (!hasBufferDimension(alloc.getType())) {
      rewrite.users.push_back(
          UserRewrite{alloc,
                      withLeadingDim(alloc.getType(), view->slots,
                                     /*prepend=*/true),
                      planner::slotOf(*view, 0)});
      continue;
    }
    MemDescType aliasType = withLeadingDim(alloc.getType(), view->slots);
    rewrite.users.push_back(UserRewrite{alloc, aliasType, std::nullopt});
    if (failed(followUses(
            Carrier{alloc.getResult(), aliasType, views.size() - 1, alloc},
            regionSize, static_cast<int>(index))))
      valid = false;
  }
  if (!valid)
    return failure();
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
      builder.setInsertionPoint(user.alloc);
      Value alias = LocalAliasOp::create(builder, user.alloc.getLoc(),
                                         user.aliasType, backing);
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
      slots.rewrite(index.op, views[index.view]);
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
    FailureOr<int64_t> region = regionSize(uses);
    if (failed(region)) {
      valid = false;
      continue;
    }
    // Each user's placement, as offset calculation recorded it.
    auto userView = [&](size_t index) -> FailureOr<planner::View> {
      StorageAliasLocalAllocOp alloc = uses.allocs[index];
      auto nameOf = [&] { return userName(alloc, index); };
      FailureOr<planner::Buffer> buffer =
          toPlannerBuffer(alloc, alloc.getType(), nameOf);
      if (failed(buffer))
        return failure();
      FailureOr<Placement> placement = readPlacement(alloc, *buffer);
      if (failed(placement))
        return failure();
      return checkedView(alloc, *buffer, nameOf, *placement, *region,
                         static_cast<int>(index));
    };
    // buffer_shape is what one CTA holds; the backing spans the users' CTA
    // split (all alike: size definition checked it).
    ArrayRef<int64_t> block = uses.spec.getBufferShapeAttr().asArrayRef();
    SmallVector<int64_t> shape(block);
    if (!uses.allocs.empty()) {
      StorageAliasLocalAllocOp first = uses.allocs.front();
      FailureOr<planner::Buffer> buffer = toPlannerBuffer(
          first, first.getType(), [&] { return userName(first, 0); });
      if (failed(buffer)) {
        valid = false;
        continue;
      }
      shape[0] *= buffer->layout.ctaSplitM;
      shape[1] *= buffer->layout.ctaSplitN;
    }
    if (failed(analysis.analyzeSpec(uses, *region, shape, block, userView)))
      valid = false;
  }
  if (!valid)
    return failure();
  analysis.apply(SmallVector<Operation *>(unused.begin(), unused.end()));
  return success();
}
