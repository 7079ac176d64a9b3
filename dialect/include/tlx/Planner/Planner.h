//===- Planner.h - Storage alias planner (no MLIR) --------------*- C++ -*-===//
//
// The one home of every size, offset and alignment rule of TLX storage
// aliasing (DESIGN.md section 3). Both front doors translate into these plain
// structs: the MLIR passes (dialect/lib/Transforms) and the Python layer
// (through the pybind11 extension in python/). Nothing here depends on MLIR.
//
// Units: SMEM plans are in bytes, TMEM plans in 32-bit columns. A "buffer" is
// one slot of a user's leading (buffer) dimension; a "buffer group" is one
// index of the root of the reuse tree (K consecutive buffers of a user whose
// ancestors multiply to group_size K).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_PLANNER_PLANNER_H
#define TLX_PLANNER_PLANNER_H

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tlx::planner {

enum class Storage { Smem, Tmem };

/// The parts of a memory layout that decide size and alignment.
enum class LayoutKind {
  /// #ttg.nvmma_shared: alignment 128 B x max phase (1024 B for 128 B swizzle).
  NvmmaShared,
  /// #ttg.swizzled_shared (and any other SMEM layout): 128 B alignment.
  SwizzledShared,
  /// #ttng.tensor_memory_encoding: columns from blockM/blockN/packing.
  TensorMemory,
};

struct Layout {
  LayoutKind kind = LayoutKind::SwizzledShared;
  /// NVMMA: swizzlingByteWidth (0, 32, 64, 128).
  int64_t swizzleBytes = 0;
  /// TMEM: blockM (64 or 128) and blockN of the encoding.
  int64_t blockM = 128;
  int64_t blockN = 0;
  /// TMEM: elements narrower than 32 bits are packed into one column unless
  /// the encoding says unpacked (colStride == 1 for 16-bit elements in newer
  /// Triton, `unpacked = true` in older).
  bool unpacked = false;
};

/// One `local_alloc(..., reuse=spec)`: a user of the region.
struct Buffer {
  /// How diagnostics name this buffer (an SSA name, a Python variable).
  std::string name;
  /// Full shape, leading dimension = number of buffers.
  std::vector<int64_t> shape;
  int64_t elementBits = 0;
  Storage storage = Storage::Smem;
  Layout layout;
};

/// A reuse_group node: children are indices into the Buffer list or nested
/// groups.
struct Group;
using TreeElement = std::variant<int, Group>;
enum class GroupKind { Shared, Distinct };
struct Group {
  GroupKind kind = GroupKind::Shared;
  int64_t groupSize = 1;
  std::vector<TreeElement> children;
};

struct Spec {
  std::string name;
  Storage storage = Storage::Smem;
  /// User's explicit buffer_size_bytes (SMEM bytes; TMEM bytes, 4 per
  /// column per lane: rows x columns x 4).
  std::optional<int64_t> explicitSizeBytes;
  /// The target's SMEM limit in bytes (227 KiB on sm_90a and sm_100a).
  int64_t smemLimitBytes = 232448;
};

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  /// -1: about the spec; otherwise the Buffer index it is about.
  int buffer = -1;
  std::string message;
};

/// Where one user's buffers live and how its view represents that.
struct View {
  /// Bytes (SMEM) / columns (TMEM) of one buffer of this user.
  int64_t bufferSize = 0;
  /// Offset of buffer 0 from the region start.
  int64_t offset = 0;
  /// Distance between consecutive buffer groups (the root's stride).
  int64_t bytesBetweenBufferGroups = 0;
  /// K: consecutive buffers forming one logical group (product along the
  /// path from the root).
  int64_t groupSize = 1;
  /// Index map in whole slots of bufferSize:
  ///   slot(i) = scale * (i / groupSize) + offsetSlots + (i % groupSize).
  int64_t scale = 1;
  int64_t offsetSlots = 0;
  /// Leading dimension of the expanded view; the view covers the region.
  int64_t slots = 0;
  /// Alignment this user requires (bytes for SMEM, columns for TMEM).
  int64_t alignment = 1;
  /// True when index rewriting is the identity (scale 1, offset 0).
  bool identityIndex() const {
    return scale == 1 && offsetSlots == 0 && groupSize == 1;
  }
};

struct Plan {
  Storage storage = Storage::Smem;
  /// SMEM: region bytes. TMEM: rows x columns x 4.
  int64_t sizeBytes = 0;
  /// SMEM: {sizeBytes / 128, 128} of i8. TMEM: {blockM, columns} of i32.
  std::vector<int64_t> backingShape;
  /// Alignment of the backing allocation (largest any view needs).
  int64_t alignment = 0;
  /// Region size minus the bytes the buffers themselves need (layout
  /// padding for alignment, representability and explicit size).
  int64_t paddingBytes = 0;
  /// Same order as the input buffers.
  std::vector<View> views;
  std::vector<Diagnostic> diagnostics;
  bool ok() const;
};

/// Bytes (SMEM) or columns (TMEM) of one buffer of `buffer`.
int64_t bufferSize(const Buffer &buffer);
/// Alignment `buffer` needs (bytes for SMEM, columns for TMEM).
int64_t requiredAlignment(const Buffer &buffer);

/// Plans a region. `tree` absent: every user at offset 0 (no
/// set_buffer_overlap). Never throws: problems are Plan::diagnostics.
Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree);

/// The slot buffer `index` of a user occupies in its expanded view.
int64_t slotOf(const View &view, int64_t index);

} // namespace tlx::planner

#endif // TLX_PLANNER_PLANNER_H
