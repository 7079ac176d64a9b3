//===- StorageAliasAllocation.cpp - Step 3: backing and views ------------===//
//
// Replaces every tlx.storage_alias_spec by one backing allocation and every
// user by a tlx.local_alias of it whose leading dimension covers the region;
// rewrites each ttg.memdesc_index reached from a user to the planner's slot.
// Everything is computed and checked first; the IR changes only when the
// whole module can be lowered.
//
//===----------------------------------------------------------------------===//

#include "PlannerBridge.h"
#include "tlx/Dialect/Encoding.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"
#include "tlx/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
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

MemDescType withLeadingDim(MemDescType type, int64_t leadingDim) {
  SmallVector<int64_t> shape(type.getShape());
  shape.front() = leadingDim;
  return MemDescType::get(shape, type.getElementType(), type.getEncoding(),
                          type.getMemorySpace(), type.getMutableMemory());
}

struct UserRewrite {
  StorageAliasLocalAllocOp alloc;
  MemDescType aliasType;
};

struct SpecRewrite {
  StorageAliasSpecOp spec;
  MemDescType backingType;
  /// SMEM: the `alignment` of the backing ttg.local_alloc, the largest any
  /// view of the region needs (users and their reinterpreted views).
  int64_t alignment = 0;
  SmallVector<UserRewrite> users;
};

struct IndexRewrite {
  triton::gpu::MemDescIndexOp op;
  /// Index into AllocationAnalysis::views.
  size_t view;
};

/// Computes every change of the allocation step and reports every problem
/// before the IR is touched.
class AllocationAnalysis {
public:
  explicit AllocationAnalysis(MLIRContext *context)
      : context(context),
        smemBytesLayout(triton::parseEncoding(context, smemBackingEncoding)) {}

  LogicalResult analyzeSpec(SpecUses &uses);

  SmallVector<SpecRewrite> specs;
  /// Values whose memdesc type gets a new leading dimension: results of
  /// ttg.memdesc_reinterpret / tlx.local_alias and partition arguments.
  SmallVector<std::pair<Value, MemDescType>> retypedValues;
  SmallVector<IndexRewrite> indexRewrites;
  std::vector<planner::View> views;

private:
  /// A value that carries a user's buffers: its type once re-viewed, the
  /// view its indices map through, and the user's name for diagnostics.
  struct Carrier {
    Value value;
    MemDescType newType;
    size_t view;
    std::string name;
  };

  FailureOr<int64_t> regionSize(SpecUses &uses);
  FailureOr<MemDescType> backingType(SpecUses &uses);
  FailureOr<Attribute> tmemBackingEncoding(SpecUses &uses);
  FailureOr<size_t> addView(Operation *about, const planner::Buffer &buffer,
                            const Placement &placement, int64_t region,
                            int bufferIndex);
  LogicalResult followUses(Carrier root, int64_t region, int bufferIndex);
  FailureOr<Carrier> followAlias(Operation *alias, MemDescType resultType,
                                 const Carrier &source, int64_t region,
                                 int bufferIndex);

  MLIRContext *context;
  /// Parsed once: every SMEM backing has this layout.
  Attribute smemBytesLayout;
  /// TMEM backing encodings by (user encoding, rows, columns).
  llvm::DenseMap<std::tuple<Attribute, int64_t, int64_t>, Attribute>
      tmemBackingLayouts;
};

FailureOr<int64_t> AllocationAnalysis::regionSize(SpecUses &uses) {
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

FailureOr<Attribute> AllocationAnalysis::tmemBackingEncoding(SpecUses &uses) {
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
  ArrayRef<int64_t> shape = uses.spec.getBufferShapeAttr().asArrayRef();
  auto key = std::make_tuple(sourceEncoding, shape[0], shape[1]);
  if (Attribute known = tmemBackingLayouts.lookup(key))
    return known;
  std::string text;
  llvm::raw_string_ostream(text) << sourceEncoding;
  text = llvm::Regex("blockM *= *[0-9]+")
             .sub(("blockM = " + Twine(shape[0])).str(), text);
  text = llvm::Regex("blockN *= *[0-9]+")
             .sub(("blockN = " + Twine(shape[1])).str(), text);
  text = llvm::Regex("colStride *= *[0-9]+").sub("colStride = 1", text);
  Attribute encoding = triton::parseEncoding(context, text);
  if (!encoding)
    return source.emitError()
           << "cannot build the TMEM backing encoding from " << text;
  tmemBackingLayouts[key] = encoding;
  return encoding;
}

FailureOr<MemDescType> AllocationAnalysis::backingType(SpecUses &uses) {
  ArrayRef<int64_t> shape = uses.spec.getBufferShapeAttr().asArrayRef();
  if (uses.spec.getStorage() == StorageKind::tmem) {
    FailureOr<Attribute> encoding = tmemBackingEncoding(uses);
    if (failed(encoding))
      return failure();
    return MemDescType::get(
        shape, IntegerType::get(context, 32), *encoding,
        triton::nvidia_gpu::TensorMemorySpaceAttr::get(context),
        /*mutableMemory=*/true);
  }
  return MemDescType::get(shape, IntegerType::get(context, 8), smemBytesLayout,
                          triton::gpu::SharedMemorySpaceAttr::get(context),
                          /*mutableMemory=*/true);
}

FailureOr<size_t> AllocationAnalysis::addView(Operation *about,
                                              const planner::Buffer &buffer,
                                              const Placement &placement,
                                              int64_t region, int bufferIndex) {
  planner::View view = planner::viewFromPlacement(
      buffer, placement.offset, placement.stride, placement.groupSize, region);
  bool sound = true;
  for (const planner::Diagnostic &diagnostic :
       planner::checkView(view, buffer, bufferIndex, region)) {
    about->emitError(diagnostic.message);
    sound = false;
  }
  if (!sound)
    return failure();
  views.push_back(view);
  return views.size() - 1;
}

FailureOr<AllocationAnalysis::Carrier>
AllocationAnalysis::followAlias(Operation *alias, MemDescType resultType,
                                const Carrier &source, int64_t region,
                                int bufferIndex) {
  if (resultType.getMemorySpace() != source.newType.getMemorySpace())
    return alias->emitOpError() << "moves the aliased buffer \"" << source.name
                                << "\" from " << source.newType.getMemorySpace()
                                << " to " << resultType.getMemorySpace();
  FailureOr<planner::Buffer> buffer =
      toPlannerBuffer(alias, resultType, source.name);
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
             << "changes the buffer size of \"" << source.name << "\" from "
             << sourceView.bufferSize << " to " << size
             << ", but its buffers sit at offset " << sourceView.offset
             << " with stride " << sourceView.bytesBetweenBufferGroups
             << " and group size " << sourceView.groupSize
             << "; index the buffer before changing its size";
    placement = Placement{0, size, 1};
  }
  FailureOr<size_t> view =
      addView(alias, *buffer, placement, region, bufferIndex);
  if (failed(view))
    return failure();
  return Carrier{alias->getResult(0),
                 withLeadingDim(resultType, views[*view].slots), *view,
                 source.name};
}

LogicalResult AllocationAnalysis::followUses(Carrier root, int64_t region,
                                             int bufferIndex) {
  SmallVector<Carrier> worklist{std::move(root)};
  bool valid = true;
  while (!worklist.empty()) {
    Carrier carrier = worklist.pop_back_val();
    for (OpOperand &use : carrier.value.getUses()) {
      Operation *user = use.getOwner();
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
              Carrier{argument, carrier.newType, carrier.view, carrier.name});
        }
        continue;
      }
      InFlightDiagnostic diag =
          user->emitOpError()
          << "uses the aliased buffer \"" << carrier.name
          << "\" directly; storage alias lowering follows a buffer only "
             "through ttg.memdesc_index, ttg.memdesc_reinterpret, "
             "tlx.local_alias and ttg.warp_specialize captures";
      diag.attachNote(carrier.value.getLoc()) << "the buffer comes from here";
      valid = false;
    }
  }
  return success(valid);
}

LogicalResult AllocationAnalysis::analyzeSpec(SpecUses &uses) {
  if (!uses.overlaps.empty())
    return uses.overlaps.front().emitError()
           << "tlx.set_buffer_overlap is still present: run "
              "--tlx-buffer-offset-calculation before allocation";
  FailureOr<int64_t> region = regionSize(uses);
  if (failed(region))
    return failure();
  FailureOr<MemDescType> backing = backingType(uses);
  if (failed(backing))
    return failure();

  SpecRewrite rewrite{uses.spec, *backing, 0, {}};
  size_t firstView = views.size();
  bool valid = true;
  for (auto [index, alloc] : llvm::enumerate(uses.allocs)) {
    int bufferIndex = static_cast<int>(index);
    std::string name =
        nameForDiagnostics(alloc, ("user " + Twine(index)).str());
    FailureOr<planner::Buffer> buffer =
        toPlannerBuffer(alloc, alloc.getType(), name);
    if (failed(buffer)) {
      valid = false;
      continue;
    }
    FailureOr<Placement> placement = readPlacement(alloc, *buffer);
    if (failed(placement)) {
      valid = false;
      continue;
    }
    FailureOr<size_t> view =
        addView(alloc, *buffer, *placement, *region, bufferIndex);
    if (failed(view)) {
      valid = false;
      continue;
    }
    MemDescType aliasType = withLeadingDim(alloc.getType(), views[*view].slots);
    rewrite.users.push_back(UserRewrite{alloc, aliasType});
    if (failed(followUses(Carrier{alloc.getResult(), aliasType, *view, name},
                          *region, bufferIndex)))
      valid = false;
  }
  if (!valid)
    return failure();
  for (const planner::View &view : ArrayRef(views).drop_front(firstView))
    rewrite.alignment = std::max(rewrite.alignment, view.alignment);
  specs.push_back(std::move(rewrite));
  return success();
}

Value createBacking(OpBuilder &builder, SpecRewrite &rewrite) {
  Location loc = rewrite.spec.getLoc();
  if (rewrite.spec.getStorage() == StorageKind::tmem)
    return triton::nvidia_gpu::TMEMAllocOp::create(builder, loc,
                                                   rewrite.backingType)
        .getResult();
  auto alloc =
      triton::gpu::LocalAllocOp::create(builder, loc, rewrite.backingType);
  alloc.setAlignmentAttr(
      builder.getI32IntegerAttr(static_cast<int32_t>(rewrite.alignment)));
  return alloc.getResult();
}

/// Makes `op` index slot(i) of the planner's view instead of buffer i.
void rewriteIndex(triton::gpu::MemDescIndexOp op, const planner::View &view) {
  if (view.identityIndex())
    return;
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value index = op.getIndex();
  Type type = index.getType();
  APInt constant;
  if (matchPattern(index, m_ConstantInt(&constant))) {
    int64_t slot = planner::slotOf(view, constant.getSExtValue());
    op.getIndexMutable().assign(
        arith::ConstantIntOp::create(builder, loc, type, slot));
    return;
  }
  auto constantOf = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(builder, loc, type, value);
  };
  Value slot = index;
  Value withinGroup;
  if (view.groupSize > 1) {
    Value groupSize = constantOf(view.groupSize);
    slot = arith::DivUIOp::create(builder, loc, index, groupSize);
    withinGroup = arith::RemUIOp::create(builder, loc, index, groupSize);
  }
  if (view.scale != 1)
    slot = arith::MulIOp::create(builder, loc, slot, constantOf(view.scale));
  if (view.offsetSlots != 0)
    slot =
        arith::AddIOp::create(builder, loc, slot, constantOf(view.offsetSlots));
  if (withinGroup)
    slot = arith::AddIOp::create(builder, loc, slot, withinGroup);
  op.getIndexMutable().assign(slot);
}

void applyAllocation(AllocationAnalysis &analysis) {
  for (SpecRewrite &rewrite : analysis.specs) {
    OpBuilder builder(rewrite.spec);
    Value backing = createBacking(builder, rewrite);
    for (UserRewrite &user : rewrite.users) {
      builder.setInsertionPoint(user.alloc);
      Value alias = LocalAliasOp::create(builder, user.alloc.getLoc(),
                                         user.aliasType, backing);
      user.alloc.getResult().replaceAllUsesWith(alias);
      user.alloc.erase();
    }
    rewrite.spec.erase();
  }
  for (auto [value, type] : analysis.retypedValues)
    value.setType(type);
  for (IndexRewrite &rewrite : analysis.indexRewrites)
    rewriteIndex(rewrite.op, analysis.views[rewrite.view]);
}

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
  FailureOr<SmallVector<SpecUses>> specs = collectStorageAliasSpecs(module);
  if (failed(specs))
    return failure();
  AllocationAnalysis analysis(module.getContext());
  SmallVector<StorageAliasSpecOp> unused = takeSpecsWithoutUsers(*specs);
  bool valid = true;
  for (SpecUses &uses : *specs) {
    if (failed(analysis.analyzeSpec(uses)))
      valid = false;
  }
  if (!valid)
    return failure();
  for (StorageAliasSpecOp spec : unused)
    spec.erase();
  applyAllocation(analysis);
  if (failed(verify(module)))
    return module.emitError()
           << "storage alias allocation produced IR that does not verify";
  return success();
}
