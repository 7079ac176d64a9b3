"""Typed Python face of the TLX storage alias planner.

The planner (C++, ``planner/``) owns every number of a plan: sizes,
alignment, where each buffer sits, the slot formula of every view, the backing
allocation's shape and the diagnostics. ``tlx._planner`` is its pybind11
extension; this module wraps it in frozen dataclasses. It imports neither Triton
nor MLIR. ``docs/planner.md`` states the rules.

Units: SMEM plans are in bytes, TMEM plans in 32-bit columns of one CTA
(``Plan.size_bytes``, ``Plan.ideal_bytes`` and ``Plan.padding_bytes`` are always
bytes). ``Plan.ideal_bytes`` is the ideal footprint of the tree (per buffer group,
``shared`` = max, ``distinct`` = sum, starts 128-byte aligned); ``padding_bytes`` is
the region minus that, and ``Plan.padding`` says where it comes from.

Example::

    a = Buffer("a", (4, 128, 64), 16)
    b = Buffer("b", (4, 64, 256), 16)
    p = plan(Spec("ring"), [a, b], distinct(0, 1))
    assert p.ok and p.size_bytes == 196608  # a0..a3, then b0..b3
    print(p.describe([a, b]))
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, fields

try:
    from . import _planner as _native
except ImportError as error:
    raise ImportError(
        "the planner extension tlx._planner is not built or does not match this Python "
        f"({error}). Build it with `pip install --no-build-isolation -e .` from the "
        "repository root, or without MLIR: `cmake -S . -B build -DTLX_BUILD_MLIR=OFF "
        "-Dpybind11_DIR=$(python -m pybind11 --cmakedir) && cmake --build build`, "
        "then put the repository's language/ directory on PYTHONPATH."
    ) from error

__all__ = [
    "TMEM_COLUMNS",
    "TMEM_LANES",
    "Buffer",
    "Diagnostic",
    "ElementKind",
    "Extent",
    "Group",
    "IndexOperand",
    "IndexOperation",
    "IndexProgram",
    "Layout",
    "LayoutFamily",
    "LayoutKind",
    "Padding",
    "Placement",
    "Plan",
    "Segment",
    "Spec",
    "Split",
    "Storage",
    "Stride",
    "View",
    "advise_splits",
    "buffer_extents",
    "buffer_size",
    "buffer_stride",
    "check_view",
    "cta_split_of_cga_bases",
    "describe",
    "distinct",
    "has_buffer_dimension",
    "has_tensor_memory",
    "plan",
    "required_alignment",
    "shared",
    "sharing_segments",
    "smem_limit_for_target",
    "storage_budget",
    "storage_unavailable",
    "stored_element_bits",
    "target_name",
    "view_of",
]

GROUP_KINDS = ("shared", "distinct")
#: The columns of tensor memory one CTA has, and the lanes (rows) of a TMEM block.
TMEM_COLUMNS: int = _native.TMEM_COLUMNS
TMEM_LANES: int = _native.TMEM_LANES
_DEFAULT_LAYOUT = _native.Layout()
_DEFAULT_SPEC = _native.Spec()


class Storage(enum.Enum):
    SMEM = "smem"
    TMEM = "tmem"


class ElementKind(enum.Enum):
    INTEGER = "integer"
    FLOAT = "float"
    POINTER = "pointer"


class LayoutKind(enum.Enum):
    NVMMA_SHARED = "nvmma_shared"
    SWIZZLED_SHARED = "swizzled_shared"
    TENSOR_MEMORY = "tensor_memory"


class LayoutFamily(enum.Enum):
    """Which layouts ``plan`` chooses among: ``BEST`` is what kernels get;
    ``GROUP_MAJOR`` (every buffer group together, the first planner's layout) and
    ``NODE_BY_NODE`` (group-major or child-major per reuse group) are the simpler
    layouts it is measured against."""

    GROUP_MAJOR = "group_major"
    NODE_BY_NODE = "node_by_node"
    BEST = "best"


@dataclass(frozen=True)
class Layout:
    """The parts of a memory layout that decide size and alignment. ``cta_split_m``
    and ``cta_split_n`` say how many CTAs of a cluster the tile is split over."""

    kind: LayoutKind = LayoutKind.SWIZZLED_SHARED
    swizzle_bytes: int = _DEFAULT_LAYOUT.swizzle_bytes
    block_m: int = _DEFAULT_LAYOUT.block_m
    block_n: int = _DEFAULT_LAYOUT.block_n
    unpacked: bool = _DEFAULT_LAYOUT.unpacked
    cta_split_m: int = _DEFAULT_LAYOUT.cta_split_m
    cta_split_n: int = _DEFAULT_LAYOUT.cta_split_n

    def __post_init__(self):
        object.__setattr__(self, "kind", LayoutKind(self.kind))


@dataclass(frozen=True)
class Buffer:
    """One user of a region: ``shape[0]`` buffers of ``shape[1:]`` elements (a TMEM
    ``[M, N]`` shape is one buffer). ``element_bits`` is what one element occupies in
    memory (``stored_element_bits``)."""

    name: str
    shape: tuple[int, ...]
    element_bits: int
    storage: Storage = Storage.SMEM
    layout: Layout = Layout()

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))
        object.__setattr__(self, "storage", Storage(self.storage))


@dataclass(frozen=True)
class Group:
    """A reuse group: children are buffer indices (into the plan's buffer list)
    or nested groups; ``kind`` is ``"shared"`` or ``"distinct"``."""

    kind: str
    children: tuple[int | Group, ...]
    group_size: int = 1

    def __post_init__(self):
        if self.kind not in GROUP_KINDS:
            raise ValueError(f'reuse group kind must be "shared" or "distinct", got {self.kind!r}')
        children = tuple(self.children)
        for child in children:
            if isinstance(child, bool) or not isinstance(child, int | Group):
                raise TypeError(
                    "reuse group children must be buffer indices (int) or Group, "
                    f"got {type(child).__name__} {child!r}"
                )
        object.__setattr__(self, "children", children)


def shared(*children: int | Group, group_size: int = 1) -> Group:
    """``Group("shared", children, group_size)``."""
    return Group("shared", children, group_size)


def distinct(*children: int | Group, group_size: int = 1) -> Group:
    """``Group("distinct", children, group_size)``."""
    return Group("distinct", children, group_size)


@dataclass(frozen=True)
class Spec:
    """A storage alias spec: the region several buffers alias. ``capability`` is the
    CUDA compute capability compiled for (90: sm_90a, 100: sm_100a; 0: unknown), which
    decides the SMEM limit and whether tensor memory exists. ``whole_views`` rounds
    the region so that every view covers it in whole slots, which Triton 3.8 needs
    (its memdesc_reinterpret keeps the byte size); other releases take smaller views."""

    name: str
    storage: Storage = Storage.SMEM
    explicit_size_bytes: int | None = None
    capability: int = _DEFAULT_SPEC.capability
    whole_views: bool = _DEFAULT_SPEC.whole_views

    def __post_init__(self):
        object.__setattr__(self, "storage", Storage(self.storage))

    @property
    def smem_limit_bytes(self) -> int:
        """The target's SMEM limit (``smem_limit_for_target(capability)``)."""
        return smem_limit_for_target(self.capability)


@dataclass(frozen=True)
class Placement:
    """The slot coefficients of a view (what the MLIR passes record between steps)."""

    slots: int
    period: int
    scale: int
    offset_slots: int
    step: int


@dataclass(frozen=True)
class IndexOperand:
    """What an operation of an index program reads: ``kind`` ``"buffer_index"``,
    ``"constant"`` (``value`` is the constant) or ``"result"`` (``value`` is the
    position of an earlier operation)."""

    kind: str
    value: int


@dataclass(frozen=True)
class IndexOperation:
    """``lhs opcode rhs``: ``opcode`` is ``"divide_unsigned"``,
    ``"remainder_unsigned"``, ``"multiply"`` or ``"add"``."""

    opcode: str
    lhs: IndexOperand
    rhs: IndexOperand


@dataclass(frozen=True)
class IndexProgram:
    """A view's slot arithmetic with every identity step dropped (``View.index_program``):
    the operations in order, and the operand that is the slot."""

    operations: tuple[IndexOperation, ...]
    result: IndexOperand

    def evaluate(self, index: int) -> int:
        """The slot this program computes for buffer ``index``."""
        native = _native.IndexProgram()
        native.operations = [
            _native_index_operation(operation) for operation in self.operations
        ]
        native.result = _native_index_operand(self.result)
        return _native.evaluate_index_program(native, index)


@dataclass(frozen=True)
class View:
    """Where one user's buffers live and how its view represents them: the view is
    ``shape`` (``[slots, *one buffer]``) of the user's own element type and layout,
    starting at the region's start, and buffer ``i`` is slot ``scale * (i // period) +
    offset_slots + step * (i % period)``. ``indexed`` is False for a user that is one
    buffer without a buffer dimension (a TMEM ``[M, N]`` tile): it is slot
    ``slot_of(0)``. ``offset`` (units) is where buffer 0 starts; ``group_size`` is K."""

    buffer_size: int
    alignment: int
    group_size: int
    offset: int
    period: int
    scale: int
    offset_slots: int
    step: int
    shape: tuple[int, ...]
    indexed: bool = True

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))

    @property
    def slots(self) -> int:
        return self.shape[0] if self.shape else 0

    def slot_of(self, index: int) -> int:
        return _native.slot_of(_native_view(self), index)

    @property
    def index_program(self) -> IndexProgram:
        """The slot arithmetic of this view with the identity steps dropped: what
        the front doors emit for a runtime buffer index."""
        native = _native.index_program_of(_native_view(self))
        return IndexProgram(
            tuple(
                IndexOperation(
                    operation.opcode.name.lower(),
                    _index_operand(operation.lhs),
                    _index_operand(operation.rhs),
                )
                for operation in native.operations
            ),
            _index_operand(native.result),
        )

    @property
    def identity_index(self) -> bool:
        """True when slot_of(i) == i for every index (no index arithmetic)."""
        return self.index_program.result.kind == "buffer_index"

    @property
    def placement(self) -> Placement:
        return Placement(self.slots, self.period, self.scale, self.offset_slots, self.step)


@dataclass(frozen=True)
class Diagnostic:
    """``severity`` is ``"error"`` or ``"warning"``; ``kind`` says what it is about
    (``"over_smem_limit"``, ...), ``buffer`` the index of the buffer it is about (-1:
    the spec), ``buffers`` and ``numbers`` what the message names and states.
    ``message`` names them by the names ``plan`` was given; ``template`` is the
    planner's text with ``{spec}`` and ``{buffer:i}`` for the names."""

    severity: str
    kind: str
    buffer: int
    buffers: tuple[int, ...]
    numbers: tuple[int, ...]
    message: str
    template: str

    def format(self, spec_name: str, buffer_names: Sequence[str]) -> str:
        """The message with other names for the spec and the buffers."""
        native = _native.Diagnostic()
        native.message = self.template
        return _native.format_diagnostic(native, spec_name, list(buffer_names))


@dataclass(frozen=True)
class Padding:
    """A share of ``Plan.padding_bytes``: ``kind`` (``"aligned_start"``, ``"layout"``,
    ``"region_rounding"``, ``"explicit_size"``), the buffers it names, its bytes and
    the reason in words."""

    kind: str
    buffers: tuple[int, ...]
    bytes: int
    reason: str


@dataclass(frozen=True)
class Plan:
    """The planned region and the recipe the front doors emit. ``views`` follow the
    order of the input buffers (empty when the input itself is invalid).
    ``backing_shape`` is the backing allocation's shape (``[rows, 128]`` of i8 for
    SMEM, ``[rows, columns]`` of i32 for TMEM times the CTA split) and
    ``backing_block`` what one CTA holds of it; ``region_size`` is in the plan's
    unit; ``layout`` names the chosen layout."""

    storage: Storage
    size_bytes: int
    region_size: int
    backing_shape: tuple[int, ...]
    backing_block: tuple[int, ...]
    backing_element_bits: int
    alignment: int
    ideal_bytes: int
    padding_bytes: int
    padding: tuple[Padding, ...]
    layout: str
    views: tuple[View, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    def describe(self, buffers: Sequence[Buffer], spec_name: str = "") -> str:
        return describe(self, buffers, spec_name)


@dataclass(frozen=True)
class Extent:
    """Buffer ``index`` of user ``user`` occupies units ``[start, end)`` of the region
    and belongs to buffer group ``buffer_group``."""

    user: int
    index: int
    buffer_group: int
    start: int
    end: int


@dataclass(frozen=True)
class Stride:
    """Units from buffer i to buffer i + 1 of a view: ``within_period`` inside a
    period, ``after_period`` from the last buffer of a period to the next one."""

    within_period: int
    after_period: int
    period: int

    @property
    def even(self) -> bool:
        return self.period == 1 or self.within_period == self.after_period


@dataclass(frozen=True)
class Segment:
    """Units ``[start, end)`` of a region, occupied by the extents ``occupants``
    (indices into ``buffer_extents``) of buffer group ``buffer_group`` (-1 when
    there are none, padding, or when they are of several groups: a user outside
    the tree sits at offset 0)."""

    start: int
    end: int
    buffer_group: int
    occupants: tuple[int, ...]


@dataclass(frozen=True)
class Split:
    """Under-utilisation advice: ``buffers`` stop sharing with ``shared_with`` (the
    other children of the ``shared`` node at ``shared_node``, child indices from the
    root), either in a region of their own (``own_region``, of ``own_region_units``)
    or beside them in the spec's region (``region_units`` afterwards). The kernel
    would then use ``total_units`` of ``budget_units``; ``message`` says it in
    words."""

    shared_node: tuple[int, ...]
    buffers: tuple[int, ...]
    shared_with: tuple[int, ...]
    own_region: bool
    region_units: int
    own_region_units: int
    total_units: int
    budget_units: int
    message: str

    @property
    def fits(self) -> bool:
        return self.total_units <= self.budget_units

    @property
    def left_units(self) -> int:
        """What would be left of the budget (negative: over it)."""
        return self.budget_units - self.total_units


def _native_layout(layout: Layout):
    native = _native.Layout()
    native.kind = _native.LayoutKind.__members__[layout.kind.name]
    native.swizzle_bytes = layout.swizzle_bytes
    native.block_m = layout.block_m
    native.block_n = layout.block_n
    native.unpacked = layout.unpacked
    native.cta_split_m = layout.cta_split_m
    native.cta_split_n = layout.cta_split_n
    return native


def _native_buffer(buffer: Buffer):
    native = _native.Buffer()
    native.name = buffer.name
    native.shape = list(buffer.shape)
    native.element_bits = buffer.element_bits
    native.storage = _native.Storage.__members__[buffer.storage.name]
    native.layout = _native_layout(buffer.layout)
    return native


def _native_group(group: Group):
    native = _native.Group()
    native.kind = _native.GroupKind.__members__[group.kind.upper()]
    native.group_size = group.group_size
    native.children = [
        child if isinstance(child, int) else _native_group(child) for child in group.children
    ]
    return native


def _native_spec(spec: Spec):
    native = _native.Spec()
    native.name = spec.name
    native.storage = _native.Storage.__members__[spec.storage.name]
    native.explicit_size_bytes = spec.explicit_size_bytes
    native.capability = spec.capability
    native.whole_views = spec.whole_views
    return native


_VIEW_FIELDS = tuple(f.name for f in fields(View))


def _native_view(view: View):
    native = _native.View()
    for name in _VIEW_FIELDS:
        value = getattr(view, name)
        setattr(native, name, list(value) if name == "shape" else value)
    return native


def _view(native) -> View:
    return View(*(getattr(native, name) for name in _VIEW_FIELDS))


def _index_operand(native) -> IndexOperand:
    return IndexOperand(native.kind.name.lower(), native.value)


def _native_index_operand(operand: IndexOperand):
    native = _native.IndexOperand()
    native.kind = _native.IndexOperandKind.__members__[operand.kind.upper()]
    native.value = operand.value
    return native


def _native_index_operation(operation: IndexOperation):
    native = _native.IndexOperation()
    native.opcode = _native.IndexOpcode.__members__[operation.opcode.upper()]
    native.lhs = _native_index_operand(operation.lhs)
    native.rhs = _native_index_operand(operation.rhs)
    return native


def _diagnostic(native, spec_name: str, names: Sequence[str]) -> Diagnostic:
    return Diagnostic(
        native.severity.name.lower(),
        native.kind.name.lower(),
        native.buffer,
        tuple(native.buffers),
        tuple(native.numbers),
        _native.format_diagnostic(native, spec_name, list(names)),
        native.message,
    )


def _padding(native, spec_name: str, names: Sequence[str]) -> Padding:
    text = _native.Diagnostic()
    text.message = native.reason
    return Padding(
        native.kind.name.lower(),
        tuple(native.buffers),
        native.bytes,
        _native.format_diagnostic(text, spec_name, list(names)),
    )


def _native_plan(plan_: Plan):
    native = _native.Plan()
    native.storage = _native.Storage.__members__[plan_.storage.name]
    for name in (
        "size_bytes",
        "region_size",
        "backing_element_bits",
        "alignment",
        "ideal_bytes",
        "padding_bytes",
        "layout",
    ):
        setattr(native, name, getattr(plan_, name))
    native.backing_shape = list(plan_.backing_shape)
    native.backing_block = list(plan_.backing_block)
    native.views = [_native_view(view) for view in plan_.views]
    diagnostics = []
    for diagnostic in plan_.diagnostics:
        native_diagnostic = _native.Diagnostic()
        native_diagnostic.severity = _native.Severity.__members__[diagnostic.severity.upper()]
        native_diagnostic.kind = _native.DiagnosticKind.__members__[diagnostic.kind.upper()]
        native_diagnostic.buffer = diagnostic.buffer
        native_diagnostic.buffers = list(diagnostic.buffers)
        native_diagnostic.numbers = list(diagnostic.numbers)
        native_diagnostic.message = diagnostic.template
        diagnostics.append(native_diagnostic)
    native.diagnostics = diagnostics
    shares = []
    for share in plan_.padding:
        native_share = _native.Padding()
        native_share.kind = _native.PaddingKind.__members__[share.kind.upper()]
        native_share.buffers = list(share.buffers)
        native_share.bytes = share.bytes
        native_share.reason = share.reason
        shares.append(native_share)
    native.padding = shares
    return native


def plan(
    spec: Spec,
    buffers: Sequence[Buffer],
    tree: Group | None = None,
    family: LayoutFamily = LayoutFamily.BEST,
) -> Plan:
    """Plans the region of ``spec`` for ``buffers``; ``tree`` is the overlap tree
    (``set_buffer_overlap``) or None (every buffer at offset 0). Never raises for
    bad sizes or trees: problems are ``Plan.diagnostics``, their messages naming the
    spec and buffers by ``spec.name`` and ``Buffer.name``."""
    native = _native.plan(
        _native_spec(spec),
        [_native_buffer(buffer) for buffer in buffers],
        None if tree is None else _native_group(tree),
        _native.LayoutFamily.__members__[LayoutFamily(family).name],
    )
    names = [buffer.name for buffer in buffers]
    return Plan(
        storage=Storage[native.storage.name],
        size_bytes=native.size_bytes,
        region_size=native.region_size,
        backing_shape=tuple(native.backing_shape),
        backing_block=tuple(native.backing_block),
        backing_element_bits=native.backing_element_bits,
        alignment=native.alignment,
        ideal_bytes=native.ideal_bytes,
        padding_bytes=native.padding_bytes,
        padding=tuple(_padding(share, spec.name, names) for share in native.padding),
        layout=native.layout,
        views=tuple(_view(view) for view in native.views),
        diagnostics=tuple(_diagnostic(d, spec.name, names) for d in native.diagnostics),
    )


def buffer_size(buffer: Buffer) -> int:
    """Bytes (SMEM) or 32-bit columns (TMEM, per CTA) of one buffer of ``buffer``."""
    return _native.buffer_size(_native_buffer(buffer))


def smem_limit_for_target(capability: int) -> int:
    """Shared memory one CTA may use on a CUDA target of compute capability
    ``capability`` (80, 90, 100, ...); 227 KiB for targets the planner does not know."""
    return _native.smem_limit_for_target(capability)


def cta_split_of_cga_bases(bases) -> tuple[int, int]:
    """The CTA split (along M, along N) of a 2-D CGA layout given by its bases
    (``[[1, 0]]``: two CTAs along M)."""
    return tuple(_native.cta_split_of_cga_bases([list(basis) for basis in bases]))


def has_tensor_memory(capability: int) -> bool:
    """Whether a CUDA target has tensor memory (Blackwell sm_100a family; True for 0,
    an unknown target)."""
    return _native.has_tensor_memory(capability)


def target_name(capability: int) -> str:
    """``sm_90a``, ``sm_100a``, ... for a compute capability."""
    return _native.target_name(capability)


def storage_unavailable(storage: Storage, capability: int) -> str:
    """Why ``storage`` cannot be used on the target of ``capability`` (TMEM before
    Blackwell); an empty string when it can."""
    return _native.storage_unavailable(
        _native.Storage.__members__[Storage(storage).name], capability
    )


def stored_element_bits(kind: ElementKind, bit_width: int) -> int:
    """Bits one element occupies in SMEM and TMEM, as Triton stores it: a pointer 64
    bits, ``i1`` one byte, any other integer or float type its width."""
    return _native.stored_element_bits(
        _native.ElementKind.__members__[ElementKind(kind).name], bit_width
    )


def has_buffer_dimension(buffer: Buffer) -> bool:
    """False for a TMEM buffer written as one ``[M, N]`` tile (one buffer)."""
    return _native.has_buffer_dimension(_native_buffer(buffer))


def required_alignment(buffer: Buffer) -> int:
    """Alignment ``buffer`` needs: bytes for SMEM, columns for TMEM."""
    return _native.required_alignment(_native_buffer(buffer))


def view_of(buffer: Buffer, placement: Placement) -> View:
    """The view of ``buffer`` that ``placement``'s slot coefficients give."""
    native = _native.Placement()
    for name in ("slots", "period", "scale", "offset_slots", "step"):
        setattr(native, name, getattr(placement, name))
    return _view(_native.view_of(_native_buffer(buffer), native))


def check_view(
    view: View, buffer: Buffer, buffer_index: int, region_size: int
) -> tuple[Diagnostic, ...]:
    """The planner's self-check of one view against a region; empty when every
    buffer index maps to an aligned slot of its own inside the view and the view
    inside the region."""
    problems = _native.check_view(
        _native_view(view), _native_buffer(buffer), buffer_index, region_size
    )
    names = [""] * buffer_index + [buffer.name]
    return tuple(_diagnostic(problem, "", names) for problem in problems)


def describe(plan_: Plan, buffers: Sequence[Buffer], spec_name: str = "") -> str:
    """A memory map of ``plan_``: the region and its layout, one line per buffer
    (offset, size, slot formula, slots), the padding and the diagnostics."""
    return _native.describe(_native_plan(plan_), [_native_buffer(b) for b in buffers], spec_name)


def buffer_extents(plan_: Plan, buffers: Sequence[Buffer]) -> tuple[Extent, ...]:
    """Every buffer of every user of ``plan_`` (user by user, index by index) and the
    units it occupies."""
    native = _native.buffer_extents(_native_plan(plan_), [_native_buffer(b) for b in buffers])
    return tuple(Extent(e.user, e.index, e.buffer_group, e.start, e.end) for e in native)


def buffer_stride(view: View) -> Stride:
    """The distance in units between consecutive buffers of ``view``."""
    native = _native.buffer_stride(_native_view(view))
    return Stride(native.within_period, native.after_period, native.period)


def sharing_segments(plan_: Plan, extents: Sequence[Extent]) -> tuple[Segment, ...]:
    """The region of ``plan_`` from 0 to its end, cut where the extents that occupy
    it change."""
    native_extents = []
    for extent in extents:
        native = _native.Extent()
        for name in ("user", "index", "buffer_group", "start", "end"):
            setattr(native, name, getattr(extent, name))
        native_extents.append(native)
    return tuple(
        Segment(s.start, s.end, s.buffer_group, tuple(s.occupants))
        for s in _native.sharing_segments(_native_plan(plan_), native_extents)
    )


def storage_budget(storage: Storage, capability: int) -> int:
    """SMEM bytes or TMEM columns one CTA has on the target of ``capability``."""
    return _native.storage_budget(_native.Storage.__members__[Storage(storage).name], capability)


def advise_splits(
    spec: Spec, buffers: Sequence[Buffer], tree: Group, other_regions_units: int = 0
) -> tuple[Split, ...]:
    """For every child of a ``shared`` node of ``tree`` (and every child of a
    ``distinct`` child of one): what the kernel would use if its buffers stopped
    sharing, given the units the kernel's other regions of the same storage take.
    Empty when the plan itself fails."""
    names = [buffer.name for buffer in buffers]
    splits = _native.advise_splits(
        _native_spec(spec),
        [_native_buffer(buffer) for buffer in buffers],
        _native_group(tree),
        other_regions_units,
    )
    text = _native.Diagnostic()
    result = []
    for split in splits:
        text.message = split.message
        result.append(
            Split(
                tuple(split.shared_node),
                tuple(split.buffers),
                tuple(split.shared_with),
                split.own_region,
                split.region_units,
                split.own_region_units,
                split.total_units,
                split.budget_units,
                _native.format_diagnostic(text, spec.name, names),
            )
        )
    return tuple(result)
