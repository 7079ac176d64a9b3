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
// The rules, in order (plan() applies them):
//
// 1. Buffer size (bufferSize): SMEM bytes = ceil(prod(shape[1:]) * bits / 8).
//    TMEM columns of a [num, M, N] (or a single [M, N]) buffer =
//    ceil(N * bits / 32) when bits < 32 and packed, else N; times
//    ceil(M / 128) when M > 128. Bits are storedElementBits.
// 2. Alignment (requiredAlignment): SMEM at least 128 B; an NVMMA layout needs
//    128 B x max phase, max phase = swizzleBytes / 16. TMEM: 1 column.
// 3. Tree layout: a node inherits K from its ancestors (root K = 1; a group
//    with group_size g passes K * g to its children). A leaf of n buffers
//    needs n % K == 0, has n / K buffer groups and occupies K * size
//    contiguous units per group: buffer i sits at
//      (i / K) * stride + offset + (i % K) * size.
//    `shared` children start at the same offset (unit = max); `distinct`
//    children follow one another in the order written, each starting at a
//    multiple of lcm(size, alignment) over the leaves of its subtree
//    (unit = sum including that padding). All children of a group must have
//    the same number of buffer groups.
// 4. Root stride (bytesBetweenBufferGroups) = root unit rounded up to the lcm
//    of every leaf's size and alignment (and 128 for SMEM); needed = stride x
//    groups. Without a tree every user sits at offset 0 with stride = its own
//    size and needed = max over users of n x size. A buffer of the spec that
//    is not in the tree is placed like that too (a warning).
// 5. Region: needed rounded up to a multiple of 128 (SMEM) and of every
//    user's size, so that each view covers the region with whole slots.
//    TMEM: columns = the next power of two >= max(32, that), at most 512;
//    rows = 64 when every user has M <= 64 and blockM 64, else 128. An
//    explicit size smaller than the region is an error stating the bytes
//    needed; a larger one is kept when every view still covers it exactly.
//    SMEM over the target's limit (smemLimitForTarget) is an error, and so
//    is TMEM on a target without it (hasTensorMemory).
// 6. Views: scale = stride / size, offsetSlots = offset / size,
//    slots = region / size; checkView() proves every buffer's slot lies in
//    the region.
//
// Padding (Plan::paddingBytes) = the region minus the bytes an ideal packing
// would use: per buffer group, a leaf needs K x size, a `shared` node the
// max of its children, a `distinct` node the sum of its children, with no
// alignment; times the number of buffer groups (without a tree, and for
// buffers outside it: n x size). It therefore counts alignment holes between
// distinct children, stride and region rounding, TMEM's power-of-two columns
// and any explicit size beyond the need. TMEM padding is in bytes too
// (columns x rows x 4).
//
//===----------------------------------------------------------------------===//

#ifndef TLX_PLANNER_PLANNER_H
#define TLX_PLANNER_PLANNER_H

#include <array>
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
  /// the encoding says unpacked (`unpacked = true` in older Triton; newer
  /// Triton gives the column stride of one element: 1 is packed, 32 / bits
  /// unpacked).
  bool unpacked = false;
  /// How many CTAs of a cluster the tile is split over along M and along N
  /// (Triton's CTA split, or its CGA layout: ctaSplitOfCgaBases). A 2-CTA
  /// MMA accumulator (`two_ctas`) of M rows has M / 2 rows in each CTA of
  /// the pair. Shapes are the whole cluster's; sizes are per CTA.
  int64_t ctaSplitM = 1;
  int64_t ctaSplitN = 1;
};

/// The CTA split {along M, along N} of a 2-D CGA layout given by its bases
/// (one [m, n] per CTA-id bit, as `CGALayout = [[1, 0]]` writes them): each
/// basis that moves along a dimension doubles the split of that dimension;
/// a zero basis broadcasts.
std::array<int64_t, 2>
ctaSplitOfCgaBases(const std::vector<std::vector<int64_t>> &bases);

/// What an element type is, as far as its size goes.
enum class ElementKind { Integer, Float, Pointer };

/// One `local_alloc(..., reuse=spec)`: a user of the region.
struct Buffer {
  /// How diagnostics name this buffer (an SSA name, a Python variable).
  std::string name;
  /// Full shape, leading dimension = number of buffers. TMEM: [num, M, N],
  /// or [M, N] for one buffer (hasBufferDimension).
  std::vector<int64_t> shape;
  /// Bits one element occupies in memory (storedElementBits).
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
  /// The CUDA compute capability compiled for (90: sm_90a, 100: sm_100a);
  /// 0 when unknown. It decides the SMEM limit (smemLimitForTarget) and
  /// whether TMEM exists (hasTensorMemory).
  int capability = 0;
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
  /// True when slot(i) == i for every index, so no index arithmetic is
  /// needed: no offset, and groups of K buffers K slots apart.
  bool identityIndex() const { return offsetSlots == 0 && scale == groupSize; }
};

struct Plan {
  Storage storage = Storage::Smem;
  /// SMEM: region bytes. TMEM: rows x columns x 4.
  int64_t sizeBytes = 0;
  /// Region size in the plan's unit: bytes (SMEM) or columns (TMEM). Every
  /// view has slots = regionSize / bufferSize.
  int64_t regionSize = 0;
  /// SMEM: {sizeBytes / 128, 128} of i8. TMEM: {rows, columns} of i32 per
  /// CTA, times the users' CTA split ({rows x split M, columns x split N}).
  std::vector<int64_t> backingShape;
  /// What one CTA holds of the backing: backingShape without the CTA split
  /// (the block of a TMEM backing's layout).
  std::vector<int64_t> backingBlock;
  /// Alignment of the backing allocation (largest any view needs).
  int64_t alignment = 0;
  /// Region minus the bytes an ideal packing would use (see the file
  /// comment): alignment holes, rounding and explicit size beyond the need.
  int64_t paddingBytes = 0;
  /// Same order as the input buffers. Empty when the input itself is invalid
  /// (bad buffers or tree); filled when only the size limits failed, so that
  /// describe() can show what was needed.
  std::vector<View> views;
  std::vector<Diagnostic> diagnostics;
  /// True when no diagnostic is an error.
  bool ok() const;
};

/// Bits one element of a Triton element type occupies in SMEM and TMEM, as
/// Triton stores it: a pointer 64 bits, `i1` one byte, any other integer or
/// float type its width (fp8: 8, fp4: 4). `bitWidth` is the type's width
/// (ignored for pointers).
int64_t storedElementBits(ElementKind kind, int64_t bitWidth);

/// False for a TMEM buffer written as one [M, N] tile: it is one buffer, with
/// no buffer dimension. Every other buffer's leading dimension counts its
/// buffers.
bool hasBufferDimension(const Buffer &buffer);

/// Bytes (SMEM) or columns (TMEM) of one buffer of `buffer` (rule 1).
/// Saturates at 2^62 instead of overflowing.
int64_t bufferSize(const Buffer &buffer);

/// Alignment `buffer` needs (bytes for SMEM, columns for TMEM; rule 2).
int64_t requiredAlignment(const Buffer &buffer);

/// Shared memory one CTA may use on a CUDA target of compute capability
/// `capability` (80 for sm_80, 90 for sm_90a, ...); targets the table does
/// not know (and 0, unknown) get the sm_90a/sm_100a limit, 227 KiB.
int64_t smemLimitForTarget(int capability);

/// Whether a CUDA target has tensor memory: the data-center Blackwell family
/// (sm_100a, sm_101a / sm_110a, sm_103a); true for 0 (unknown target).
bool hasTensorMemory(int capability);

/// "sm_90a", "sm_100a", ... (the `a` targets Triton compiles for); "an
/// unknown target" for 0.
std::string targetName(int capability);

/// Why `storage` cannot be used on the target of `capability` (TMEM before
/// Blackwell), or an empty string when it can.
std::string storageUnavailable(Storage storage, int capability);

/// Plans a region. `tree` absent: every user at offset 0 (no
/// set_buffer_overlap). Never throws: problems are Plan::diagnostics, whose
/// messages name buffers by Buffer::name and the spec by Spec::name.
Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree);

/// The slot buffer `index` of a user occupies in its expanded view.
int64_t slotOf(const View &view, int64_t index);

/// Rebuilds the view of `buffer` from a placement (as the allocation pass
/// reads it back from IR attributes): `offset` and `stride` (the distance
/// between buffer groups) and `regionSize` in the plan's unit, `groupSize` K.
/// Pure arithmetic; checkView() says whether the result is sound.
View viewFromPlacement(const Buffer &buffer, int64_t offset, int64_t stride,
                       int64_t groupSize, int64_t regionSize);

/// The planner's self-check of one view against a region of `regionSize`
/// units: offset, stride and region are whole numbers of the buffer's size,
/// the start meets the buffer's alignment, the K buffers of a group fit in
/// one stride, and every buffer index maps to a slot inside the region.
/// Returns one error per violation (empty when sound), about `bufferIndex`.
std::vector<Diagnostic> checkView(const View &view, const Buffer &buffer,
                                  int bufferIndex, int64_t regionSize);

/// A memory map of `plan` for tutorials and --debug output: a header with
/// the region, then one line per buffer (name, offset, size, stride,
/// group_size, slots), then the diagnostics.
std::string describe(const Plan &plan, const std::vector<Buffer> &buffers);

} // namespace tlx::planner

#endif // TLX_PLANNER_PLANNER_H
