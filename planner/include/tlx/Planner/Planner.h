//===- Planner.h - Storage alias planner (no MLIR) --------------*- C++ -*-===//
//
// The one home of every number of a storage alias plan (docs/planner.md):
// buffer sizes, alignment, where each buffer sits, the slot formula of every
// view, the backing allocation's shape, and the diagnostics. Both front doors
// translate into these plain structs and emit the recipe a Plan holds: the
// MLIR passes (dialect/lib/Transforms) and the Python layer (through the
// pybind11 extension in python/). Nothing here depends on MLIR.
//
// Units: SMEM plans are in bytes, TMEM plans in 32-bit columns of one CTA. A
// "buffer" is one slot of a user's leading (buffer) dimension; a "buffer
// group" is one index of the root of the reuse tree (K consecutive buffers of
// a user whose ancestors multiply to group_size K).
//
// The rules (plan() applies them):
//
// 1. Sizes. SMEM bytes of one buffer = ceil(prod(shape[1:]) * bits / 8);
//    TMEM columns of one [M, N] buffer (per CTA) = ceil(N' * bits / 32) when
//    bits < 32 and packed, else N', times ceil(M' / 128) when M' > 128, where
//    M', N' are what one CTA holds (the CTA split divides them). Bits are
//    storedElementBits.
// 2. Alignment. SMEM buffers start at multiples of 128 bytes, more for an
//    NVMMA layout (128 B x max phase: 1024 B for a 128-byte swizzle); TMEM at
//    any column. A view indexes in whole slots of its own buffer type: the K
//    buffers of one group sit lcm(size, alignment) apart (the quantum). A
//    view starts where Spec::offsetForm lets it: at any multiple of the
//    buffer's alignment where the Triton can write a view at a byte offset,
//    else at a multiple of its own size.
// 3. Buffer counts. A leaf with n buffers under ancestors whose group sizes
//    multiply to K has n / K buffer groups (n must be a multiple of K); the
//    region has as many groups as the largest count, and a leaf with fewer
//    occupies groups 0 .. n/K - 1 (index-aligned). Under a `shared` node,
//    counts where one is a multiple (2x or more) of another above one look
//    like forgotten sub-tiles: a warning suggests group_size.
// 4. Layout. Buffers of different groups never overlap; `distinct`
//    children never overlap and keep, in every group, the order written;
//    `shared` children start at the same place in every group. Among the
//    layouts that honour this and can be written as views, the planner takes
//    the one with the smallest region: node by node, a node is either
//    group-major (its buffers of one group together, groups repeating with a
//    period that is a multiple of every size below it) or child-major (each
//    child's groups together, one child after the other), and the whole tree
//    repeats every P buffer groups (P = 1: group-major at the root; P = all
//    groups: no repetition). A leaf under a child-major `shared` node sits at
//    the start of its largest sibling's bytes in each group. Every buffer of
//    user u then sits at slot(i) (docs/planner.md, "The slot of a buffer") of
//    a view of u's own buffer type that starts at the region's start (or,
//    per Spec::offsetForm, at an aligned byte). Where Spec::groupStrideForm
//    allows (Triton 3.6, 3.7, 3.9) and the region gets smaller, buffer group
//    0 laid out alone repeats at its end rounded to every alignment, and a
//    user whose groups are then no whole slots apart gets a view per group
//    (ViewForm::RuntimeRow, ViewForm::SelectedRows).
// 5. Region. The end of the last buffer, rounded up to 128 bytes (SMEM) and,
//    when Spec::wholeViews (Triton 3.8 reinterprets only to equal sizes), to
//    a multiple of every user's size. TMEM: the next power of two >= 32
//    columns, at most 512; rows = 64 when every user has M' <= 64 and
//    blockM 64, else 128. An explicit size smaller than the region is an
//    error stating what is needed; a larger one is kept as padding. SMEM over
//    the target's limit is an error, and so is TMEM on a target without it.
// 6. Ideal footprint and padding. The ideal of a tree is, per buffer group,
//    shared = max, distinct = sum, every start 128-byte aligned (SMEM), summed
//    over the groups. Plan::paddingBytes = region - ideal, and
//    Plan::padding says where it comes from (a buffer that must start at a
//    multiple of its size, the period between groups, the region's rounding,
//    an explicit size), naming the buffers.
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
  /// How describe() names this buffer (an SSA name, a Python variable).
  /// Diagnostics do not use it: formatDiagnostic takes the names.
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

/// How a front door writes one user's view of the region in stock Triton
/// (docs/planner.md, "Views at a byte offset"; the table per release is
/// tlx.compat.VIEW_FORMS).
enum class ViewForm {
  /// `memdesc_reinterpret` of the whole backing: the view starts at the
  /// region's start (every release).
  Slots,
  /// `memdesc_subslice` of the SMEM backing's rows from View::base, then
  /// `memdesc_reinterpret` (Triton 3.9: the result within the subslice).
  SlicedRows,
  /// `memdesc_index` of the SMEM backing's row at View::base, then
  /// `memdesc_reinterpret` (Triton 3.6 and 3.7, which accept a result
  /// larger than its source).
  IndexedRow,
  /// A view per buffer group, its groups View::groupStride units apart (a
  /// stride that need not be a multiple of the buffer's size):
  /// `memdesc_index` of the SMEM backing's row at the buffer's runtime
  /// rowOf (the index program's `row`), `memdesc_reinterpret` to the group's
  /// slots, then `memdesc_index` at the slot (Triton 3.6 and 3.7).
  RuntimeRow,
  /// A view per buffer group, each group's view written at its constant
  /// start (groupViewStarts) in the Triton's form of a view at a byte offset
  /// (Spec::offsetForm: SlicedRows on 3.9, IndexedRow on 3.6 and 3.7), the
  /// buffer's chosen at run time by `scf.if` on its group (the index
  /// program's `group`), then `memdesc_index` at the slot. Groups a common
  /// stride apart (View::groupStride) take it on 3.9, which refuses
  /// RuntimeRow's row reinterpreted larger than itself; groups at starts of
  /// their own (View::groupStarts) on 3.6, 3.7 and 3.9.
  SelectedRows,
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
  /// Round the region so that every view covers it in whole slots: Triton
  /// 3.8 reinterprets a memory descriptor only to one of the same byte size.
  /// Other releases accept a view smaller than its source
  /// (needsWholeViews). Whole views are valid on every release.
  bool wholeViews = true;
  /// The form a view that starts at a byte offset takes (offsetViewForm):
  /// Slots when the Triton has none (3.8), so that every SMEM buffer starts
  /// at a multiple of its own size; TMEM views always start at column 0.
  /// Slots is valid on every release.
  ViewForm offsetForm = ViewForm::Slots;
  /// The form of a view whose buffer groups are a stride apart that is no
  /// multiple of its buffer's size (groupStrideViewForm): RuntimeRow (3.6,
  /// 3.7) or SelectedRows (3.9) where the Triton writes one, else Slots
  /// (none: a user's groups sit whole slots apart). Slots is valid on every
  /// release.
  ViewForm groupStrideForm = ViewForm::Slots;
};

/// Whether Triton `major`.`minor` needs whole views (Spec::wholeViews): only
/// 3.8's memdesc_reinterpret requires a view of its source's byte size. The
/// rule of triton-opt's whole-views default
/// (dialect/lib/Transforms/TritonRelease.cpp), bound as
/// tlx.planner.needs_whole_views, which sets tlx.compat.NEEDS_WHOLE_VIEWS.
bool needsWholeViews(int major, int minor);

/// The form a view at a byte offset takes on Triton `major`.`minor`
/// (Spec::offsetForm): SlicedRows from 3.9 on, IndexedRow on 3.6 and 3.7,
/// Slots (none) on 3.8 and before 3.6. Bound as
/// tlx.planner.offset_view_form, which sets tlx.compat.OFFSET_VIEW_FORM.
ViewForm offsetViewForm(int major, int minor);

/// The form a view whose buffer groups are any multiple of its alignment
/// apart takes on Triton `major`.`minor` (Spec::groupStrideForm):
/// RuntimeRow on 3.6 and 3.7, SelectedRows from 3.9 on (it refuses a
/// reinterpreted row larger than itself), Slots (none) on 3.8, which has no
/// view at a byte offset (tlx.compat.VIEW_FORMS "runtime_row",
/// "selected_rows"). Bound as tlx.planner.group_stride_view_form, which sets
/// tlx.compat.GROUP_STRIDE_VIEW_FORM.
ViewForm groupStrideViewForm(int major, int minor);

/// The group stride form of the Triton whose offset form is `offsetForm`
/// (Spec::groupStrideForm from Spec::offsetForm): RuntimeRow with
/// IndexedRow, as the releases that index a row and reinterpret it larger
/// (3.6, 3.7) are those that do so at a runtime row; SelectedRows with
/// SlicedRows (3.9: the groups' SlicedRows views, one chosen at run time);
/// Slots otherwise. triton-opt's passes take it from their offset-form
/// option.
ViewForm groupStrideFormOf(ViewForm offsetForm);

/// "slots", "sliced_rows", "indexed_row", "runtime_row" or "selected_rows":
/// the form's name in tlx.planner, `#tlx.placement` and the reports.
const char *viewFormName(ViewForm form);

/// Which layouts plan() chooses among (rule 4). Best is what the passes and
/// the Python layer use; the others are the simpler layouts it is measured
/// against (bench/footprint.py, the property tests).
enum class LayoutFamily {
  /// Every buffer group together (the layout of the first planner).
  GroupMajor,
  /// Group-major or child-major node by node, no repetition below all
  /// groups.
  NodeByNode,
  /// NodeByNode with every period of 1 .. all buffer groups.
  Best,
};

enum class Severity { Error, Warning };

/// What a diagnostic is about; its buffers and numbers say the rest.
enum class DiagnosticKind {
  NoBuffers,
  StorageUnavailable,
  BadShape,
  BadElementBits,
  StorageMismatch,
  LayoutStorageMismatch,
  BadTmemShape,
  BadBlockM,
  BadSwizzle,
  BadCtaSplit,
  SmemCtaSplit,
  CtaSplitMismatch,
  TreeIndexOutOfRange,
  DuplicateTreeElement,
  BadGroupSize,
  EmptyGroup,
  CountNotMultipleOfGroupSize,
  ForgottenSubTiles,
  NotInTree,
  BadExplicitSize,
  ExplicitSizeTooSmall,
  ExplicitSizeNotUsable,
  TooManyColumns,
  OverSmemLimit,
  UnsoundView,
  /// A kernel's regions of one storage together exceed what one CTA has
  /// (overStorageBudget); numbers: the units used, the budget.
  OverStorageBudget,
  /// A warning: two or more buffers, no overlap tree and no explicit size,
  /// so every buffer starts at offset 0; buffers: all of them.
  NoOverlapTree,
  /// A buffer of several phases cannot have one place valid in all of them
  /// (planPhases); buffers: it, and a buffer of several phases that shares
  /// bytes in a phase; numbers: the two phases whose places differ, and the
  /// phase where the second shares.
  PhasesDisagree,
  /// A buffer of one phase is used between two uses of a buffer of another
  /// phase that shares its bytes (checkPhaseLifetimes); buffers: the one used
  /// in between, the other; numbers: the use positions (in between, the
  /// other's use before it, after it) and the two phases.
  PhaseLifetimeOverlap,
  /// An explicit buffer_size_bytes that the buffers would fit but for one
  /// buffer's alignment, which no offset inside it honours; buffer: that
  /// one; numbers: its alignment, the explicit size, the bytes the plan
  /// needs.
  ExplicitSizeMisaligned,
};

/// A diagnostic as data: the front doors add names and locations. `message`
/// names the spec as `{spec}` and buffer i as `{buffer:i}`
/// (formatDiagnostic replaces them).
struct Diagnostic {
  Severity severity = Severity::Error;
  DiagnosticKind kind = DiagnosticKind::UnsoundView;
  /// The buffer it is about (a user's index), or -1 for the spec.
  int buffer = -1;
  /// Every buffer the message names, in order.
  std::vector<int> buffers;
  /// The numbers the message states, in order.
  std::vector<int64_t> numbers;
  std::string message;
};

/// `diagnostic.message` with `{spec}` replaced by `"specName"` and
/// `{buffer:i}` by `"bufferNames[i]"` ("#i" when there is no such name).
std::string formatDiagnostic(const Diagnostic &diagnostic,
                             const std::string &specName,
                             const std::vector<std::string> &bufferNames);

/// Where one user's buffers sit and how its view represents them: the part
/// of the recipe a front door emits for one user.
struct View {
  /// Units (bytes / columns) of one buffer, and the alignment its start
  /// needs.
  int64_t bufferSize = 0;
  int64_t alignment = 1;
  /// K: consecutive buffers forming one buffer group (the product of the
  /// group sizes along the path from the root).
  int64_t groupSize = 1;
  /// Start of buffer 0 in the region, in units.
  int64_t offset = 0;
  /// Where the view's slot 0 sits in the region, in units: 0 for a view of
  /// the whole region (ViewForm::Slots), else a multiple of 128 bytes and of
  /// the alignment. Buffer i starts at base + bufferSize * slot(i).
  int64_t base = 0;
  /// How a front door writes the view (Spec::offsetForm when base != 0,
  /// Spec::groupStrideForm when groupStride != 0).
  ViewForm form = ViewForm::Slots;
  /// A view per buffer group (perGroup: RuntimeRow, SelectedRows) only: the
  /// units between the starts of two consecutive groups of `period` buffers.
  /// Buffer i's view then starts at viewStart(view, i) = base + groupStride
  /// * (i / period), and its slots are one group's (scale 0). 0 for every
  /// other form.
  int64_t groupStride = 0;
  /// A view per buffer group whose groups sit at no common stride
  /// (SelectedRows only): where each group's view starts, in units, group g
  /// at groupStarts[g] (a group of one buffer each where period is 1: a view
  /// per buffer). Empty for every other view, whose group starts
  /// groupStride gives.
  std::vector<int64_t> groupStarts;
  /// How each group's view of a SelectedRows view is written: the form of a
  /// view at a byte offset (Spec::offsetForm: SlicedRows on Triton 3.9,
  /// IndexedRow on 3.6 and 3.7). Slots for every other form.
  ViewForm groupForm = ViewForm::Slots;
  /// The coefficients of slot(i), the slot buffer i occupies in the view
  /// (docs/planner.md, "The slot of a buffer").
  int64_t period = 1;
  int64_t scale = 1;
  int64_t offsetSlots = 0;
  int64_t step = 1;
  /// The view's shape: [slots, *one buffer's shape], of the user's own
  /// element type and layout, starting at `base`.
  std::vector<int64_t> shape;
  /// False for a user written as one buffer without a buffer dimension (a
  /// TMEM [M, N] tile): it is slot slotOf(view, 0) of its view.
  bool indexed = true;
  /// The view's leading dimension (shape[0]).
  int64_t slots() const { return shape.empty() ? 0 : shape.front(); }
  /// True when slot(i) == i for every index: no index arithmetic.
  bool identityIndex() const {
    return offsetSlots == 0 && step == 1 && scale == period;
  }
  /// True for a view per buffer group (RuntimeRow, SelectedRows): each
  /// group of `period` buffers is a view of its own, `groupStride` apart.
  bool perGroup() const {
    return form == ViewForm::RuntimeRow || form == ViewForm::SelectedRows;
  }
};

/// Where padding comes from.
enum class PaddingKind {
  /// A buffer starts at a multiple of its size (or alignment) after a
  /// sibling that ends elsewhere: the hole before it.
  AlignedStart,
  /// The layout's period between buffer groups is a multiple of every
  /// buffer's size, or the layout leaves other holes.
  Layout,
  /// The region's rounding: 128-byte rows, whole views (Triton 3.8),
  /// power-of-two TMEM columns.
  RegionRounding,
  /// An explicit buffer_size_bytes beyond what the plan needs.
  ExplicitSize,
  /// Sharing as the tree says would need more than every buffer in bytes
  /// of its own, so the plan gives each its own (the ideal counts sharing).
  Unshared,
};

/// A share of Plan::paddingBytes. `reason` names buffers as diagnostics do.
struct Padding {
  PaddingKind kind = PaddingKind::Layout;
  std::vector<int> buffers;
  int64_t bytes = 0;
  std::string reason;
};

/// What the backing allocation is.
enum class BackingKind {
  /// `ttg.local_alloc` of [rows, 128] x i8 with a rank-1 unswizzled layout.
  SharedBytes,
  /// `ttng.tmem_alloc` of [rows, columns] x i32, packed, with the users'
  /// CTA split.
  TensorMemoryWords,
};

/// The plan of one spec: the complete lowering recipe and what it costs.
struct Plan {
  Storage storage = Storage::Smem;
  /// SMEM: region bytes. TMEM: rows x columns x 4 (per CTA).
  int64_t sizeBytes = 0;
  /// Region size in the plan's unit: bytes (SMEM) or columns (TMEM).
  int64_t regionSize = 0;
  BackingKind backingKind = BackingKind::SharedBytes;
  /// Bits of one backing element (8 for SMEM bytes, 32 for TMEM words).
  int64_t backingElementBits = 8;
  /// The backing allocation's shape, and what one CTA holds of it (the
  /// block of a TMEM backing's layout; the same for SMEM).
  std::vector<int64_t> backingShape;
  std::vector<int64_t> backingBlock;
  /// Alignment of the backing allocation in bytes (the largest any view
  /// needs; 1 for TMEM).
  int64_t alignment = 0;
  /// The ideal footprint (rule 6), region - ideal, and where that comes
  /// from (shares that add up to paddingBytes).
  int64_t idealBytes = 0;
  int64_t paddingBytes = 0;
  std::vector<Padding> padding;
  /// The chosen layout in words ("group-major", "child-major", ...).
  std::string layout;
  /// SMEM without views at a byte offset (Spec::offsetForm Slots: Triton
  /// 3.8's rules): the region a Triton that writes them (3.6, 3.7, 3.9)
  /// would need when that is smaller, else 0.
  int64_t offsetViewsRegion = 0;
  /// Same order as the input buffers. Empty when the input itself is invalid
  /// (bad buffers or tree); filled when only the size limits failed, so that
  /// describe() can show what was needed.
  std::vector<View> views;
  /// The buffers of each phase, in the order its tree names them, when the
  /// spec has two or more phases (planPhases); empty otherwise.
  std::vector<std::vector<int>> phases;
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

/// Bytes (SMEM) or columns (TMEM, per CTA) of one buffer of `buffer` (rule
/// 1). Saturates at 2^62 instead of overflowing.
int64_t bufferSize(const Buffer &buffer);

/// Alignment `buffer` needs (bytes for SMEM, columns for TMEM; rule 2).
int64_t requiredAlignment(const Buffer &buffer);

/// Shared memory one CTA may use on a CUDA target of compute capability
/// `capability` (80 for sm_80, 90 for sm_90a, ...); targets the table does
/// not know (and 0, unknown) get the sm_90a/sm_100a limit, 227 KiB.
int64_t smemLimitForTarget(int capability);

/// The shared memory the system reserves for each CTA on an SM, beside the
/// smemLimitForTarget it may opt into (CUDA programming guide, "Shared
/// Memory" of compute capabilities 8.x to 12.x).
constexpr int64_t kSmemReservedPerCta = 1024;

/// Whether a CUDA target has tensor memory: the data-center Blackwell family
/// (sm_100a, sm_101a / sm_110a, sm_103a); true for 0 (unknown target).
bool hasTensorMemory(int capability);

/// "sm_90a", "sm_100a", ... (the `a` targets Triton compiles for); "an
/// unknown target" for 0.
std::string targetName(int capability);

/// Why `storage` cannot be used on the target of `capability` (TMEM before
/// Blackwell), or an empty string when it can.
std::string storageUnavailable(Storage storage, int capability);

/// The TMEM columns and lanes (rows of a block) of one CTA.
constexpr int64_t kTmemColumns = 512;
constexpr int64_t kTmemLanes = 128;

/// Plans a region. `tree` absent: every user at offset 0 (no
/// set_buffer_overlap). Never throws: problems are Plan::diagnostics.
Plan plan(const Spec &spec, const std::vector<Buffer> &buffers,
          const std::optional<Group> &tree,
          LayoutFamily family = LayoutFamily::Best);

/// Plans a region whose buffers are used in phases, one overlap tree per
/// phase (docs/semantics.md, "Phases"): inside a phase its tree holds as
/// plan() holds it; a buffer of one phase may take bytes of buffers of other
/// phases; a buffer of several phases has one place valid in all of them.
/// Of two placements, the smaller region is taken: each phase planned alone
/// (valid when every buffer of several phases gets the same place in each),
/// and the buffers of several phases apart from the others, the phases
/// sharing the rest or, if smaller, one after another (valid when none of
/// them shares bytes in any phase; never larger than planning the phases'
/// union as distinct trees).
/// Neither valid: a PhasesDisagree error. One tree: plan(spec, buffers,
/// tree).
Plan planPhases(const Spec &spec, const std::vector<Buffer> &buffers,
                const std::vector<Group> &phases,
                LayoutFamily family = LayoutFamily::Best);

/// Two users of a plan with phases that share units of the region and no
/// phase (only the order of their uses keeps them apart).
struct PhaseOverlap {
  int first = 0;
  int second = 0;
};

/// Every pair of users (first < second) that are in no common phase of
/// `plan` and whose buffers share units; empty without phases.
std::vector<PhaseOverlap> phaseOverlaps(const Plan &plan,
                                        const std::vector<Buffer> &buffers);

/// One use of a buffer for the lifetime check between phases: its position
/// in program order within its sequence of control (the kernel's code outside
/// ttg.warp_specialize, its default region, or one of its partitions; each
/// front door numbers its own IR, positions unique across sequences).
struct PhaseUse {
  int64_t sequence = 0;
  int64_t position = 0;
};

/// The lifetime check between phases. `uses[u]` are user u's uses. For each
/// pair of phaseOverlaps and each sequence of control, the uses of one must
/// not fall between two uses of the other: within the sequence their spans
/// [first use, last use] must not meet. Sequences run concurrently, so no
/// order is checked across them (their synchronisation is the kernel's:
/// `python -m tlx check`, docs/hazards.md, verifies it). One error
/// (PhaseLifetimeOverlap) per pair and sequence that breaks it.
std::vector<Diagnostic>
checkPhaseLifetimes(const Plan &plan, const std::vector<Buffer> &buffers,
                    const std::vector<std::vector<PhaseUse>> &uses);

int64_t slotOf(const View &view, int64_t index);

/// Where the view that holds buffer `index` starts in the region, in units:
/// View::base, plus groupStride * (index / period) for a view per buffer
/// group (View::perGroup), or groupStarts[index / period] where it has them.
int64_t viewStart(const View &view, int64_t index);

/// Where the view of each buffer group of a user of `count` buffers starts,
/// in units: viewStart(view, g * period) for g = 0 .. ceil(count / period)
/// - 1 of a view per buffer group (View::perGroup), {base} for any other.
/// The front doors write a SelectedRows view per entry and choose the
/// buffer's by the index program's `group`.
std::vector<int64_t> groupViewStarts(const View &view, int64_t count);

/// Where buffer `index` of `view` starts in the region, in units:
/// viewStart(view, index) + bufferSize * slotOf(view, index).
int64_t bufferStart(const View &view, int64_t index);

/// One operation of an index program: unsigned division, remainder,
/// multiplication or addition of two operands.
enum class IndexOpcode { DivideUnsigned, RemainderUnsigned, Multiply, Add };

/// What an index program's operation reads: the buffer index, a constant, or
/// the result of an earlier operation (`value` is then its position).
struct IndexOperand {
  enum class Kind { BufferIndex, Constant, Result };
  Kind kind = Kind::BufferIndex;
  int64_t value = 0;
};

struct IndexOperation {
  IndexOpcode opcode = IndexOpcode::Add;
  IndexOperand lhs;
  IndexOperand rhs;
};

/// The slot arithmetic of a view (docs/planner.md, "The slot of a buffer")
/// with every identity step dropped: what both front doors emit for a
/// runtime buffer index, operation by operation, in order. `result` is the
/// slot: the buffer index itself when the view needs no arithmetic, a
/// constant when every index maps to one slot, else the last operation.
struct IndexProgram {
  std::vector<IndexOperation> operations;
  IndexOperand result;
  /// ViewForm::RuntimeRow only: the backing's row (of 128 bytes) where the
  /// view of the buffer's group starts, viewStart / 128, which the front
  /// doors `memdesc_index` before they reinterpret it to the group's slots.
  std::optional<IndexOperand> row;
  /// ViewForm::SelectedRows only: the buffer's group, i / period: the
  /// position in groupViewStarts of the view the front doors choose.
  std::optional<IndexOperand> group;
};

/// The index program of `view`: evaluateIndexProgram(indexProgramOf(view), i)
/// == slotOf(view, i) for every buffer index i.
IndexProgram indexProgramOf(const View &view);

/// What `program` computes for buffer index `index`: its slot (its `row`
/// with evaluateIndexProgramRow, its `group` with
/// evaluateIndexProgramGroup; 0 without one).
int64_t evaluateIndexProgram(const IndexProgram &program, int64_t index);
int64_t evaluateIndexProgramRow(const IndexProgram &program, int64_t index);
int64_t evaluateIndexProgramGroup(const IndexProgram &program, int64_t index);

/// The program as a formula of the buffer index `i` ("2 (i / 4) + 64 + (i %
/// 4)"), as describe() writes it.
std::string indexFormula(const IndexProgram &program);

/// The program's `row` as a formula of `i` ("144 (i / 4) + 16"); empty
/// without one.
std::string indexRowFormula(const IndexProgram &program);

/// The slot coefficients of a view as a front door records them between
/// passes (the `placement` attribute of tlx.storage_alias_local_alloc).
struct Placement {
  int64_t slots = 0;
  int64_t period = 1;
  int64_t scale = 1;
  int64_t offsetSlots = 0;
  int64_t step = 1;
  /// View::base and View::form: where the view starts and how it is
  /// written.
  int64_t base = 0;
  ViewForm form = ViewForm::Slots;
  /// View::groupStride, View::groupStarts and View::groupForm (a view per
  /// buffer group).
  int64_t groupStride = 0;
  std::vector<int64_t> groupStarts;
  ViewForm groupForm = ViewForm::Slots;
};

/// The placement of `view`, and the view of `buffer` a placement gives.
Placement placementOf(const View &view);
View viewOf(const Buffer &buffer, const Placement &placement);

/// The view of `buffer` that reinterpreting a user's whole view `source`
/// (same region and base, another buffer type) gives: the same slots when a
/// buffer of `buffer` is as large as one of `source`; else, while the
/// source's buffers are contiguous from the view's start
/// (View::identityIndex), `buffer`'s buffers contiguous from there; nullopt
/// when a buffer of `source` would not be a whole buffer of `buffer`.
std::optional<View> reinterpretedView(const View &source, const Buffer &buffer,
                                      int64_t regionSize);

/// The planner's self-check of one view against a region of `regionSize`
/// units: the coefficients are positive, every buffer index maps to a slot
/// inside the view and the view inside the region, every buffer meets its
/// alignment, and no two buffers of the user overlap. Returns one error per
/// violation (empty when sound), about `bufferIndex`.
std::vector<Diagnostic> checkView(const View &view, const Buffer &buffer,
                                  int bufferIndex, int64_t regionSize);

/// One buffer of one user in a plan: units [start, end) of the region.
struct Extent {
  /// The user (index into the buffers) and the buffer's index in it.
  int user = 0;
  int64_t index = 0;
  /// The buffer group it belongs to (index / View::groupSize).
  int64_t bufferGroup = 0;
  int64_t start = 0;
  int64_t end = 0;
};

/// Every buffer of every user of a plan, user by user, index by index
/// (empty when the plan has no views).
std::vector<Extent> bufferExtents(const Plan &plan,
                                  const std::vector<Buffer> &buffers);

/// The distance in units from buffer i to buffer i + 1 of a user: `step`
/// times the buffer size inside a period, and `afterPeriod` from the last
/// buffer of a period to the first of the next (equal to `withinPeriod`
/// when the buffers are evenly spaced).
struct Stride {
  int64_t withinPeriod = 0;
  int64_t afterPeriod = 0;
  int64_t period = 1;
  bool even() const { return period == 1 || withinPeriod == afterPeriod; }
};
Stride bufferStride(const View &view);

/// A stretch [start, end) of a region whose occupants do not change: the
/// buffers that share its units (indices into bufferExtents' result), or
/// none (padding).
struct Segment {
  int64_t start = 0;
  int64_t end = 0;
  /// The buffer group of its occupants; -1 when it has none, or when they
  /// are of several (a user outside the tree sits at offset 0).
  int64_t bufferGroup = -1;
  std::vector<int> occupants;
};

/// The region of `plan` cut where its occupants change, from 0 to the
/// region's end (padding included).
std::vector<Segment> sharingSegments(const Plan &plan,
                                     const std::vector<Extent> &extents);

/// The bytes sharing saves in `plan`: what every buffer of every user takes,
/// minus the bytes of the region that at least one of them occupies (0 when
/// the plan has no views).
int64_t sharedBytes(const Plan &plan, const std::vector<Buffer> &buffers);

/// What one CTA has of `storage` on the target of `capability` when
/// `ctasPerSm` CTAs (1 or more) are to run on one SM at once: SMEM bytes
/// (smemLimitForTarget for one; for several, an equal share of the SM's
/// shared memory less the KiB reserved for each CTA), TMEM columns
/// (kTmemColumns shared equally; 0 without TMEM).
int64_t storageBudget(Storage storage, int capability, int ctasPerSm = 1);

/// The error when a kernel whose regions of `storage` take `usedUnits` (SMEM
/// bytes, TMEM columns; every region it allocates, summed) does not fit the
/// target of `capability` with `ctasPerSm` CTAs an SM: kind
/// OverStorageBudget, numbers {usedUnits, budget}, a message that names the
/// storage, both amounts, the excess, the target and (above one) the CTAs
/// an SM. nullopt when they fit (usedUnits <= storageBudget).
std::optional<Diagnostic> overStorageBudget(Storage storage, int capability,
                                            int64_t usedUnits,
                                            int ctasPerSm = 1);

/// Under-utilisation advice: what the kernel's memory would be if some
/// buffers stopped sharing bytes with the other children of a `shared`
/// node. The candidates are each child of a `shared` node with two or more
/// children, and each child of a `distinct` child of one.
struct Split {
  /// The `shared` node, as child indices from the root ({} is the root).
  std::vector<int> sharedNode;
  /// The buffers that would get bytes of their own, and the buffers of the
  /// node's other children they share with now.
  std::vector<int> buffers;
  std::vector<int> sharedWith;
  /// True: the buffers move to a region of their own (a spec, or a
  /// local_alloc without reuse); false: they sit beside the node's other
  /// children in this region. Whichever costs less is advised.
  bool ownRegion = false;
  /// Units of this spec's region afterwards and of the new region (0 when
  /// !ownRegion).
  int64_t regionUnits = 0;
  int64_t ownRegionUnits = 0;
  /// The kernel's units of the storage afterwards (the other regions
  /// included) and the target's budget (storageBudget).
  int64_t totalUnits = 0;
  int64_t budgetUnits = 0;
  bool fits() const { return totalUnits <= budgetUnits; }
  /// What would be left of the budget (negative: over it).
  int64_t leftUnits() const { return budgetUnits - totalUnits; }
  /// In words, naming buffers as diagnostics do ({buffer:i}).
  std::string message;
};

/// The splits of `tree` for `spec` (planned as the compiler sizes it: an
/// explicit size is ignored), given the units the kernel's other regions
/// of the same storage take. Empty when the plan itself fails.
std::vector<Split> adviseSplits(const Spec &spec,
                                const std::vector<Buffer> &buffers,
                                const Group &tree, int64_t otherRegionsUnits);

/// A memory map of `plan` for tutorials, reports and --debug output: a
/// header with the region and its layout, one line per buffer (name,
/// offset, size, stride, slot formula, slots), which buffers share units in
/// each buffer group, the padding and the diagnostics, buffers named by
/// Buffer::name.
std::string describe(const Plan &plan, const std::vector<Buffer> &buffers,
                     const std::string &specName = "");

} // namespace tlx::planner

#endif // TLX_PLANNER_PLANNER_H
