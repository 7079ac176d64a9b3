//===- TLXDialect.cpp - The `tlx` storage aliasing dialect ----------------===//

#include "tlx/Dialect/TLX/Dialect.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"
#include "tlx/Dialect/TypeSpellingCache.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tlx;

#include "tlx/Dialect/TLX/TLXEnums.cpp.inc"

#include "tlx/Dialect/TLX/TLXDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tlx/Dialect/TLX/TLXAttrDefs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tlx/Dialect/TLX/TLXTypeDefs.cpp.inc"

#define GET_OP_CLASSES
#include "tlx/Dialect/TLX/TLXOps.cpp.inc"

void TLXDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tlx/Dialect/TLX/TLXAttrDefs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tlx/Dialect/TLX/TLXTypeDefs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tlx/Dialect/TLX/TLXOps.cpp.inc"
      >();
}

Type TLXDialect::parseType(DialectAsmParser &parser) const {
  return TypeSpellingCache::parse(*this, parser, [&]() -> Type {
    SMLoc loc = parser.getCurrentLocation();
    StringRef mnemonic;
    Type type;
    if (generatedTypeParser(parser, &mnemonic, type).has_value())
      return type;
    parser.emitError(loc) << "unknown type `" << mnemonic << "` in dialect `"
                          << getNamespace() << "`";
    return {};
  });
}

void TLXDialect::printType(Type type, DialectAsmPrinter &printer) const {
  if (failed(generatedTypePrinter(type, printer)))
    llvm_unreachable("every tlx type has a generated printer");
}

namespace {

/// What both the spec type and the spec op require: smem or tmem storage
/// (never smemCluster) and, when given, a positive size.
LogicalResult verifySpecStorage(function_ref<InFlightDiagnostic()> emitError,
                                StorageKind storage,
                                std::optional<int64_t> bufferSizeBytes) {
  if (storage == StorageKind::smemCluster)
    return emitError() << "storage kind smemCluster is not supported for "
                          "storage_alias_spec (use smem or tmem)";
  if (bufferSizeBytes && *bufferSizeBytes <= 0)
    return emitError() << "buffer_size_bytes must be positive, got "
                       << *bufferSizeBytes;
  return success();
}

/// The storage kind a memory space attribute stands for.
std::optional<StorageKind> storageOf(Attribute memorySpace) {
  if (isa<triton::gpu::SharedMemorySpaceAttr>(memorySpace))
    return StorageKind::smem;
  if (isa<triton::nvidia_gpu::TensorMemorySpaceAttr>(memorySpace))
    return StorageKind::tmem;
  return std::nullopt;
}

} // namespace

namespace {

/// An allocation effect on `result` in the memory `storage` names.
void addAllocation(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects,
    OpResult result, StorageKind storage) {
  if (storage == StorageKind::tmem)
    effects.emplace_back(MemoryEffects::Allocate::get(), result,
                         triton::nvidia_gpu::TensorMemory::get());
  else
    effects.emplace_back(MemoryEffects::Allocate::get(), result,
                         triton::gpu::SharedMemory::get());
}

} // namespace

void StorageAliasSpecOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addAllocation(effects, getOperation()->getOpResult(0), getStorage());
}

void StorageAliasLocalAllocOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addAllocation(effects, getOperation()->getOpResult(0),
                getStorageAlias().getType().getStorage());
}

LogicalResult
StorageAliasSpecType::verify(function_ref<InFlightDiagnostic()> emitError,
                             StorageKind storage,
                             std::optional<int64_t> bufferSizeBytes) {
  return verifySpecStorage(emitError, storage, bufferSizeBytes);
}

LogicalResult StorageAliasSpecOp::verify() {
  std::optional<int64_t> size = getBufferSizeBytes();
  if (failed(
          verifySpecStorage([&] { return emitOpError(); }, getStorage(), size)))
    return failure();
  StorageAliasSpecType type = getResult().getType();
  if (type.getStorage() != getStorage())
    return emitOpError("result type ")
           << type << " has storage " << stringifyStorageKind(type.getStorage())
           << " but the op has storage = "
           << stringifyStorageKind(getStorage());
  if (type.getBufferSizeBytes() != size) {
    InFlightDiagnostic diag = emitOpError("result type ") << type << " has ";
    if (type.getBufferSizeBytes())
      diag << "size " << *type.getBufferSizeBytes();
    else
      diag << "no size";
    diag << " but the op has ";
    if (size)
      return diag << "size = " << *size;
    return diag << "no size";
  }
  return success();
}

LogicalResult StorageAliasLocalAllocOp::verify() {
  StorageKind specStorage = getStorageAlias().getType().getStorage();
  triton::gpu::MemDescType result = getResult().getType();
  std::optional<StorageKind> resultStorage = storageOf(result.getMemorySpace());
  if (resultStorage != specStorage) {
    InFlightDiagnostic diag = emitOpError("allocates in memory space ")
                              << result.getMemorySpace();
    if (resultStorage)
      diag << " (" << stringifyStorageKind(*resultStorage) << ")";
    return diag << " but its storage_alias_spec has storage "
                << stringifyStorageKind(specStorage);
  }
  if (!result.getMutableMemory())
    return emitOpError("result ") << result << " must be mutable";
  return success();
}

LogicalResult ReuseGroupOp::verify() {
  if (getElements().empty())
    return emitOpError("must have at least one element");
  if (getGroupSize() < 1)
    return emitOpError("group_size must be at least 1, got ") << getGroupSize();
  ReuseGroupKind resultKind = getResult().getType().getGroupKind();
  if (resultKind != getGroupKind())
    return emitOpError("result type ")
           << getResult().getType() << " does not match group_kind = "
           << stringifyReuseGroupKind(getGroupKind());
  return success();
}

LogicalResult ReusePhasesOp::verify() {
  if (getTrees().size() < 2)
    return emitOpError("needs two or more trees, one per phase, got ")
           << getTrees().size()
           << " (a kernel with one phase gives its tlx.reuse_group alone)";
  for (auto [phase, tree] : llvm::enumerate(getTrees()))
    if (!tree.getDefiningOp<ReuseGroupOp>())
      return emitOpError("phase ")
             << phase << " must be a tlx.reuse_group result";
  return success();
}

LogicalResult LocalAliasOp::verify() {
  Attribute source = getSrc().getType().getMemorySpace();
  Attribute result = getResult().getType().getMemorySpace();
  if (source != result)
    return emitOpError("source memory space ")
           << source << " and result memory space " << result
           << " must be the same";
  return success();
}

namespace {

std::optional<std::string> nameFromLocation(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().str();
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return nameFromLocation(callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::optional<std::string> name = nameFromLocation(part))
        return name;
    return std::nullopt;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string name =
        llvm::sys::path::filename(file.getFilename().getValue()).str();
    name += ':';
    name += llvm::utostr(file.getLine());
    name += ':';
    name += llvm::utostr(file.getColumn());
    return name;
  }
  return std::nullopt;
}

} // namespace

std::string mlir::tlx::nameForDiagnostics(Operation *op,
                                          const Twine &fallback) {
  if (std::optional<std::string> name = nameFromLocation(op->getLoc()))
    return std::move(*name);
  return fallback.str();
}

namespace {

/// The checks of the leaves of one tree given to a tlx.set_buffer_overlap,
/// the reference TLX's errors at the reference's stage (its verifier): every
/// leaf is a tlx.storage_alias_local_alloc result of the spec the tree is
/// given to, and none appears twice in the tree. Diagnostics at `overlap`,
/// with notes at the group that holds the leaf and where it is defined.
class OverlapTreeVerifier {
public:
  OverlapTreeVerifier(SetBufferOverlapOp overlap, std::optional<size_t> phase)
      : overlap(overlap), phase(phase),
        specName(overlap.getStorageAliasSpec().getDefiningOp()
                     ? nameForDiagnostics(
                           overlap.getStorageAliasSpec().getDefiningOp(),
                           "storage_alias_spec")
                     : std::string("storage_alias_spec")) {}

  LogicalResult verify(ReuseGroupOp group) {
    // A group that holds itself (a cycle, possible before dominance is
    // verified) is the dominance verifier's to report.
    if (!onPath.insert(group.getOperation()).second)
      return success();
    for (auto [position, element] : llvm::enumerate(group.getElements())) {
      if (auto child = element.getDefiningOp<ReuseGroupOp>()) {
        if (failed(verify(child)))
          return failure();
        continue;
      }
      if (failed(verifyLeaf(group, position, element)))
        return failure();
    }
    onPath.erase(group.getOperation());
    return success();
  }

private:
  LogicalResult verifyLeaf(ReuseGroupOp group, size_t position, Value leaf) {
    auto alloc = leaf.getDefiningOp<StorageAliasLocalAllocOp>();
    if (!alloc) {
      Operation *definer = leaf.getDefiningOp();
      InFlightDiagnostic diag = overlap.emitOpError("reuse_group tree element ")
                                << position << " of a tlx.reuse_group"
                                << inPhase() << " is ";
      if (definer)
        diag << "a " << definer->getName() << " result";
      else
        diag << "a block argument";
      diag << ", not a tlx.storage_alias_local_alloc of storage_alias_spec \""
           << specName << "\" (only a spec's buffers share its region)";
      diag.attachNote(group.getLoc()) << "the tlx.reuse_group is here";
      if (definer)
        diag.attachNote(definer->getLoc()) << "the element is defined here";
      return failure();
    }
    std::string bufferName = nameForDiagnostics(alloc, "element");
    Value spec = alloc.getStorageAlias();
    if (spec != overlap.getStorageAliasSpec()) {
      std::string otherSpec =
          spec.getDefiningOp()
              ? nameForDiagnostics(spec.getDefiningOp(), "storage_alias_spec")
              : std::string("storage_alias_spec");
      InFlightDiagnostic diag =
          overlap.emitOpError("reuse_group tree")
          << inPhase() << " holds buffer \"" << bufferName
          << "\" of storage_alias_spec \"" << otherSpec
          << "\", not of storage_alias_spec \"" << specName
          << "\" that this tlx.set_buffer_overlap gives the tree to";
      diag.attachNote(group.getLoc())
          << "the buffer is element " << position << " of this tlx.reuse_group";
      diag.attachNote(alloc.getLoc())
          << "buffer \"" << bufferName << "\" is allocated here";
      return failure();
    }
    auto [first, inserted] = appearance.try_emplace(leaf, group);
    if (!inserted) {
      InFlightDiagnostic diag =
          overlap.emitOpError("reuse_group tree contains duplicate elements: ")
          << "buffer \"" << bufferName << "\" appears twice in the tree"
          << inPhase() << " of storage_alias_spec \"" << specName << "\"";
      diag.attachNote(first->second.getLoc()) << "first appearance here";
      diag.attachNote(group.getLoc()) << "second appearance here";
      return failure();
    }
    return success();
  }

  /// " of phase N" for a tree of tlx.reuse_phases, else nothing.
  std::string inPhase() const {
    return phase ? " of phase " + std::to_string(*phase) : std::string();
  }

  SetBufferOverlapOp overlap;
  std::optional<size_t> phase;
  std::string specName;
  llvm::DenseMap<Value, ReuseGroupOp> appearance;
  llvm::SmallPtrSet<Operation *, 8> onPath;
};

} // namespace

LogicalResult SetBufferOverlapOp::verify() {
  // An overlap definition that is no reuse_group or reuse_phases result (a
  // block argument) has no tree to check: the lowering reports it
  // (dialect/lib/Analysis/PlannerBridge.cpp).
  Operation *definition = getOverlapDef().getDefiningOp();
  if (auto tree = dyn_cast_or_null<ReuseGroupOp>(definition))
    return OverlapTreeVerifier(*this, std::nullopt).verify(tree);
  auto phases = dyn_cast_or_null<ReusePhasesOp>(definition);
  if (!phases)
    return success();
  for (auto [phase, tree] : llvm::enumerate(phases.getTrees()))
    if (auto root = tree.getDefiningOp<ReuseGroupOp>())
      if (failed(OverlapTreeVerifier(*this, phase).verify(root)))
        return failure();
  return success();
}
