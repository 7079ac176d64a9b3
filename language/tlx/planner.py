"""Typed Python face of the TLX storage alias planner.

The planner (C++, ``planner/``) owns every number of a plan: sizes,
alignment, where each buffer sits, the slot formula of every view, the backing
allocation's shape and the diagnostics. ``tlx._planner`` is its pybind11
extension; this module wraps it in frozen dataclasses. It imports neither Triton
nor MLIR. ``docs/planner.md`` states the rules.

Each planner struct is defined in ``planner/include/tlx/Planner/Planner.h`` and
bound in ``python/PlannerExtension.cpp``; the dataclasses here declare the same
fields, in the binding's order, with the native struct's defaults, and
test/python/test_planner_python.py checks that they match the binding exactly.
``_value_type`` takes their conversions to and from the native structs from the
binding. Native enumerations become ``enum.Enum`` classes (``Storage``, ...) or
lowercase strings (``Diagnostic.kind == "over_smem_limit"``).

Units: SMEM plans are in bytes, TMEM plans in 32-bit columns of one CTA (the
``Plan.*_bytes`` are always bytes). ``Plan.ideal_bytes`` is the tree's ideal footprint
(docs/planner.md), ``padding_bytes`` the region minus that, explained by ``padding``.

Example::

    a = Buffer("a", (4, 128, 64), 16)
    b = Buffer("b", (4, 64, 256), 16)
    p = plan(Spec("ring"), [a, b], distinct(0, 1))
    assert p.ok and p.size_bytes == 196608  # a0..a3, then b0..b3
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

# The extension (_rules says how to build it when it is missing) and the planner's rules.
from ._rules import (
    _native,
    checked_ctas_per_sm,
    group_stride_form_of,
    group_stride_view_form,
    has_tensor_memory,
    needs_whole_views,
    offset_view_form,
    smem_limit_for_target,
    target_name,
)

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
    "checked_ctas_per_sm",
    "cta_split_of_cga_bases",
    "describe",
    "distinct",
    "group_stride_form_of",
    "group_stride_view_form",
    "has_buffer_dimension",
    "has_tensor_memory",
    "needs_whole_views",
    "offset_view_form",
    "over_storage_budget",
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


# --- One definition of every struct: the native binding ----------------------------------------

#: The extension's enumerations, and the Python enum of those that have one (the others
#: are lowercase strings: ``Diagnostic.severity == "error"``).
_NATIVE_ENUMS = frozenset(
    value
    for value in vars(_native).values()
    if isinstance(value, type) and hasattr(value, "__members__")
)
_PYTHON_ENUMS: dict[type, type[enum.Enum]] = {}
#: Native struct -> its dataclass.
_PYTHON_TYPES: dict[type, type] = {}


def _python_enum(native_enum: type, doc: str) -> type[enum.Enum]:
    """A Python enum with the members of ``native_enum``, valued by their lowercase names."""
    python_enum = enum.Enum(
        native_enum.__name__,
        [(name, name.lower()) for name in native_enum.__members__],
        module=__name__,
        qualname=native_enum.__name__,
    )
    python_enum.__doc__ = doc
    _PYTHON_ENUMS[native_enum] = python_enum
    return python_enum


def _native_enum(native_enum: type, value):
    """``value`` (a Python enum member, or a lowercase string) as a member of ``native_enum``."""
    name = value.name if isinstance(value, enum.Enum) else str(value).upper()
    return native_enum.__members__[name]


def _format(text: str, names) -> str:
    """``text`` with ``{spec}`` and ``{buffer:i}`` replaced by the names (spec name,
    buffer names), as the planner formats its diagnostics; unchanged without names."""
    if names is None:
        return text
    native = _native.Diagnostic()
    native.message = text
    spec_name, buffer_names = names
    return _native.format_diagnostic(native, spec_name, list(buffer_names))


def _to_native(value, like=None):
    """``value`` as the extension takes it: a dataclass as its native struct, a tuple as
    a list, a Python enum member or lowercase string as the native enum of ``like``
    (a native value of the field it goes to)."""
    native_class = getattr(type(value), "_native_class", None)
    if native_class is not None:
        native = native_class()
        for name, source, field_like in type(value)._native_sources:
            setattr(native, name, _to_native(getattr(value, source), field_like))
        return native
    if type(like) in _NATIVE_ENUMS:
        return _native_enum(type(like), value)
    if isinstance(value, tuple | list):
        return [_to_native(item) for item in value]
    return value


def _from_native(value, names=None):
    """A native value as this module's: a struct as its dataclass, an enum as its Python
    enum or lowercase name, a list as a tuple. ``names`` (spec name, buffer names) fill
    in the texts that name them."""
    python_class = _PYTHON_TYPES.get(type(value))
    if python_class is not None:
        values = {
            name: _from_native(getattr(value, name), names) for name in python_class._native_names
        }
        for name, raw_name in python_class._named_texts.items():
            if raw_name is not None:
                values[raw_name] = values[name]
            values[name] = _format(values[name], names)
        return python_class(**values)
    if type(value) in _NATIVE_ENUMS:
        python_enum = _PYTHON_ENUMS.get(type(value))
        return python_enum[value.name] if python_enum is not None else value.name.lower()
    if isinstance(value, list):
        return tuple(_from_native(item, names) for item in value)
    return value


def _value_type(native_class, *, named_texts=None):
    """Makes the class, whose annotations declare the fields of the native struct
    ``native_class`` (then any of its own), a frozen dataclass that converts to and
    from that struct. ``named_texts`` maps a text field that names the spec and
    buffers (``{spec}``, ``{buffer:i}``) to the field that keeps the planner's raw
    text (None: not kept). Enum and list fields are coerced to the Python enum and
    to tuples, as the native struct's values of those fields say."""

    def make(cls):
        like = native_class()
        texts = dict(named_texts or {})
        own = {raw for raw in texts.values() if raw is not None}
        names = tuple(name for name in cls.__dict__["__annotations__"] if name not in own)
        cls._native_class = native_class
        cls._native_names = names
        cls._named_texts = texts
        cls._native_sources = tuple(
            (name, texts.get(name) or name, getattr(like, name)) for name in names
        )
        coercions = []
        for name in names:
            value = getattr(like, name)
            if type(value) in _PYTHON_ENUMS:
                coercions.append((name, _PYTHON_ENUMS[type(value)]))
            elif isinstance(value, list):
                coercions.append((name, tuple))
        check = cls.__dict__.get("__post_init__")

        def __post_init__(self):
            for name, coerce in coercions:
                object.__setattr__(self, name, coerce(getattr(self, name)))
            if check is not None:
                check(self)

        cls.__post_init__ = __post_init__
        made = dataclass(frozen=True)(cls)
        _PYTHON_TYPES[native_class] = made
        return made

    return make


# --- Enumerations --------------------------------------------------------------------------------

Storage = _python_enum(_native.Storage, "Where a region lives: shared memory or tensor memory.")
ElementKind = _python_enum(_native.ElementKind, "What an element type is, as far as its size goes.")
LayoutKind = _python_enum(
    _native.LayoutKind, "The kinds of memory layout that decide size and alignment."
)
LayoutFamily = _python_enum(
    _native.LayoutFamily,
    """Which layouts ``plan`` chooses among: ``BEST`` is what kernels get;
    ``GROUP_MAJOR`` (every buffer group together, the first planner's layout) and
    ``NODE_BY_NODE`` (group-major or child-major per reuse group) are the simpler
    layouts it is measured against.""",
)


# --- Inputs --------------------------------------------------------------------------------------


@_value_type(_native.Layout)
class Layout:
    """The parts of a memory layout that decide size and alignment: ``kind``,
    ``swizzle_bytes``, ``block_m``, ``block_n``, ``unpacked``; ``cta_split_m``
    and ``cta_split_n`` say how many CTAs of a cluster the tile is split over."""

    kind: LayoutKind = LayoutKind.SWIZZLED_SHARED
    swizzle_bytes: int = 0
    block_m: int = 128
    block_n: int = 0
    unpacked: bool = False
    cta_split_m: int = 1
    cta_split_n: int = 1


@_value_type(_native.Buffer)
class Buffer:
    """One user of a region (``name``, ``shape``, ``element_bits``, ``storage``,
    ``layout``): ``shape[0]`` buffers of ``shape[1:]`` elements (a TMEM ``[M, N]``
    shape is one buffer). ``element_bits`` is what one element occupies in memory
    (``stored_element_bits``)."""

    name: str
    shape: tuple[int, ...]
    element_bits: int
    storage: Storage = Storage.SMEM
    layout: Layout = Layout()


@_value_type(_native.Group)
class Group:
    """A reuse group: children are buffer indices (into the plan's buffer list)
    or nested groups; ``kind`` is ``"shared"`` or ``"distinct"``."""

    # The binding's order is kind, group_size, children; these keep the positional
    # order of Group(kind, children, group_size).
    kind: str
    children: tuple[int | Group, ...]
    group_size: int = 1

    def __post_init__(self):
        if self.kind not in GROUP_KINDS:
            raise ValueError(f'reuse group kind must be "shared" or "distinct", got {self.kind!r}')
        for child in self.children:
            if isinstance(child, bool) or not isinstance(child, int | Group):
                raise TypeError(
                    "reuse group children must be buffer indices (int) or Group, "
                    f"got {type(child).__name__} {child!r}"
                )


def shared(*children: int | Group, group_size: int = 1) -> Group:
    """``Group("shared", children, group_size)``."""
    return Group("shared", children, group_size)


def distinct(*children: int | Group, group_size: int = 1) -> Group:
    """``Group("distinct", children, group_size)``."""
    return Group("distinct", children, group_size)


@_value_type(_native.Spec)
class Spec:
    """A storage alias spec (``name``, ``storage``, ``explicit_size_bytes``,
    ``capability``, ``whole_views``, ``offset_form``, ``group_stride_form``): a region.
    ``capability`` is the CUDA compute capability compiled for (90: sm_90a, 100:
    sm_100a; 0: unknown), which decides the SMEM limit and whether tensor memory
    exists. ``whole_views`` rounds the region so that every view covers it in whole
    slots, which Triton 3.8 needs (its memdesc_reinterpret keeps the byte size);
    other releases take smaller views. ``offset_form``: how the Triton writes a view
    from a byte offset, ``group_stride_form`` a view per buffer group (``offset_view_form``,
    ``group_stride_view_form``; ``"slots"``: it cannot)."""

    name: str
    storage: Storage = Storage.SMEM
    explicit_size_bytes: int | None = None
    capability: int = 0
    whole_views: bool = True
    offset_form: str = "slots"
    group_stride_form: str = "slots"

    @property
    def smem_limit_bytes(self) -> int:
        """The target's SMEM limit (``smem_limit_for_target(capability)``)."""
        return smem_limit_for_target(self.capability)


# --- The recipe ----------------------------------------------------------------------------------


@_value_type(_native.Placement)
class Placement:
    """The slot coefficients of a view (what the MLIR passes record between steps): its
    fields, ``View``'s of the same names."""

    slots: int
    period: int
    scale: int
    offset_slots: int
    step: int
    base: int = 0
    form: str = "slots"
    group_stride: int = 0
    group_starts: tuple[int, ...] = ()
    group_form: str = "slots"


@_value_type(_native.IndexOperand)
class IndexOperand:
    """What an operation of an index program reads: ``kind`` ``"buffer_index"``,
    ``"constant"`` (``value`` is the constant) or ``"result"`` (``value`` is the
    position of an earlier operation)."""

    kind: str
    value: int


@_value_type(_native.IndexOperation)
class IndexOperation:
    """``lhs opcode rhs``: ``"divide_unsigned"``, ``"remainder_unsigned"``, ``"multiply"``
    or ``"add"``."""

    opcode: str
    lhs: IndexOperand
    rhs: IndexOperand


@_value_type(_native.IndexProgram)
class IndexProgram:
    """A view's slot arithmetic with every identity step dropped (``View.index_program``):
    the ``operations`` in order, the operand that is the slot (``result``), the backing's
    row where the buffer's group starts (``row``: ``"runtime_row"``) and the buffer's group
    (``group``, a position in ``View.group_view_starts``: ``"selected_rows"``)."""

    operations: tuple[IndexOperation, ...]
    result: IndexOperand
    row: IndexOperand | None = None
    group: IndexOperand | None = None

    def evaluate(self, index: int) -> int:
        """The slot this program computes for buffer ``index``."""
        return _native.evaluate_index_program(_to_native(self), index)

    def evaluate_row(self, index: int) -> int:
        """The backing row ``row`` gives for buffer ``index`` (0 without one)."""
        return _native.evaluate_index_program_row(_to_native(self), index)


@_value_type(_native.View)
class View:
    """Where one user's buffers live and how its view represents them: the view is
    ``shape`` (``[slots, *one buffer]``) of the user's own element type and layout,
    starting ``base`` units into the region and written in ``form`` (``"slots"``: a view
    of the whole region, ``base`` 0; ``"sliced_rows"``, ``"indexed_row"``: from a byte
    offset, docs/planner.md; ``"runtime_row"``, ``"selected_rows"``: one per buffer group,
    ``group_stride`` apart or, ``"selected_rows"`` only, at ``group_starts``, each group's
    view written ``group_form``, 3.9's ``"sliced_rows"`` or 3.6/3.7's ``"indexed_row"``),
    and ``period``, ``scale``, ``offset_slots`` and ``step`` give buffer ``i``'s slot
    (docs/planner.md, "The slot of a buffer"; ``slot_of``, ``index_program``). ``indexed``
    is False for a user that is one buffer without a buffer dimension (a TMEM ``[M, N]``
    tile): it is slot ``slot_of(0)``. ``offset`` (units) is where buffer 0 starts;
    ``group_size`` is K; ``buffer_size`` and ``alignment`` are in units."""

    buffer_size: int
    alignment: int
    group_size: int
    offset: int
    base: int
    form: str
    period: int
    scale: int
    offset_slots: int
    step: int
    shape: tuple[int, ...]
    indexed: bool = True
    group_stride: int = 0
    group_starts: tuple[int, ...] = ()
    group_form: str = "slots"

    @property
    def slots(self) -> int:
        return self.shape[0] if self.shape else 0

    def slot_of(self, index: int) -> int:
        return _native.slot_of(_to_native(self), index)

    def view_start_of(self, index: int) -> int:
        """Where the view of buffer ``index`` starts (a view per group: its group's)."""
        return _native.view_start(_to_native(self), index)

    @property
    def per_group(self) -> bool:
        """Whether each buffer group is a view of its own (``View::perGroup``)."""
        return _to_native(self).per_group()

    def group_view_starts(self, count: int) -> tuple[int, ...]:
        """Where each buffer group's view starts, of ``count`` buffers (a view per group;
        else ``(base,)``): ``"selected_rows"`` chooses one by ``IndexProgram.group``."""
        return tuple(_native.group_view_starts(_to_native(self), count))

    def start_of(self, index: int) -> int:
        """Where buffer ``index`` starts: ``view_start_of(index) + buffer_size * slot_of``."""
        return _native.buffer_start(_to_native(self), index)

    @property
    def index_program(self) -> IndexProgram:
        """The slot arithmetic of this view with the identity steps dropped: what
        the front doors emit for a runtime buffer index."""
        return _from_native(_native.index_program_of(_to_native(self)))

    @property
    def identity_index(self) -> bool:
        """True when slot_of(i) == i for every index (no index arithmetic)."""
        return self.index_program.result.kind == "buffer_index"

    @property
    def placement(self) -> Placement:
        return _from_native(_native.placement_of(_to_native(self)))


@_value_type(_native.Diagnostic, named_texts={"message": "template"})
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
    # Not bound: the planner's raw text of ``message``.
    template: str

    def format(self, spec_name: str, buffer_names: Sequence[str]) -> str:
        """The message with other names for the spec and the buffers."""
        return _format(self.template, (spec_name, buffer_names))


@_value_type(_native.Padding, named_texts={"reason": None})
class Padding:
    """A share of ``Plan.padding_bytes``: ``kind`` (``"aligned_start"``, ``"layout"``,
    ``"region_rounding"``, ``"explicit_size"``, ``"unshared"``), the ``buffers`` it
    names, its ``bytes`` and the ``reason`` in words."""

    kind: str
    buffers: tuple[int, ...]
    bytes: int
    reason: str


@_value_type(_native.Plan)
class Plan:
    """The planned region and the recipe the front doors emit. ``views`` follow the
    order of the input buffers (empty when the input itself is invalid).
    ``backing_kind`` (``"shared_bytes"``, ``"tensor_memory_words"``) and
    ``backing_shape`` are the backing allocation's (``[rows, 128]`` of i8 for
    SMEM, ``[rows, columns]`` of i32 for TMEM times the CTA split) and
    ``backing_block`` what one CTA holds of it; ``region_size`` is in the plan's
    unit; ``layout`` names the chosen layout; ``offset_views_region``: under 3.8's
    rules, the smaller region views at byte offsets would need, else 0."""

    storage: Storage
    size_bytes: int
    region_size: int
    backing_kind: str
    backing_element_bits: int
    backing_shape: tuple[int, ...]
    backing_block: tuple[int, ...]
    alignment: int
    ideal_bytes: int
    padding_bytes: int
    padding: tuple[Padding, ...]
    layout: str
    offset_views_region: int
    views: tuple[View, ...]
    phases: tuple[tuple[int, ...], ...]
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


@_value_type(_native.PhaseOverlap)
class PhaseOverlap:
    """Users ``first`` and ``second`` of a plan with phases share units and no phase."""

    first: int
    second: int


@_value_type(_native.PhaseUse)
class PhaseUse:
    """One use of a buffer: its ``position`` in program order within sequence of
    control ``sequence`` (the kernel outside ``warp_specialize``, its default
    region, or one partition); positions are unique across sequences."""

    sequence: int
    position: int


# --- The report's data ---------------------------------------------------------------------------


@_value_type(_native.Extent)
class Extent:
    """Buffer ``index`` of user ``user`` occupies units ``[start, end)`` of the region
    and belongs to buffer group ``buffer_group``."""

    user: int
    index: int
    buffer_group: int
    start: int
    end: int


@_value_type(_native.Stride)
class Stride:
    """Units from buffer i to buffer i + 1 of a view: ``within_period`` inside a
    period, ``after_period`` from the last buffer of a period to the next one."""

    within_period: int
    after_period: int
    period: int

    @property
    def even(self) -> bool:
        return self.period == 1 or self.within_period == self.after_period


@_value_type(_native.Segment)
class Segment:
    """Units ``[start, end)`` of a region, occupied by the extents ``occupants``
    (indices into ``buffer_extents``) of buffer group ``buffer_group`` (-1 when
    there are none, padding, or when they are of several groups: a user outside
    the tree sits at offset 0)."""

    start: int
    end: int
    buffer_group: int
    occupants: tuple[int, ...]


@_value_type(_native.Split, named_texts={"message": None})
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


# --- Functions -----------------------------------------------------------------------------------


def _names(spec_name: str, buffers: Sequence[Buffer]):
    return spec_name, [buffer.name for buffer in buffers]


def plan(
    spec: Spec,
    buffers: Sequence[Buffer],
    tree: Group | Sequence[Group] | None = None,
    family: LayoutFamily = LayoutFamily.BEST,
) -> Plan:
    """Plans the region of ``spec`` for ``buffers``; ``tree`` is the overlap tree
    (``set_buffer_overlap``), a sequence of trees, one per phase (``reuse_phases``;
    ``Plan.phases`` lists each phase's buffers), or None (every buffer at offset 0).
    Never raises for bad sizes or trees: problems are ``Plan.diagnostics``, their
    messages naming the spec and buffers by ``spec.name`` and ``Buffer.name``."""
    family = _native_enum(_native.LayoutFamily, LayoutFamily(family))
    if tree is None or isinstance(tree, Group):
        native = _native.plan(
            _to_native(spec),
            _to_native(tuple(buffers)),
            None if tree is None else _to_native(tree),
            family,
        )
    else:
        native = _native.plan_phases(
            _to_native(spec), _to_native(tuple(buffers)), _to_native(tuple(tree)), family
        )
    return _from_native(native, _names(spec.name, buffers))


def phase_overlaps(plan_: Plan, buffers: Sequence[Buffer]) -> tuple[PhaseOverlap, ...]:
    """Every pair of users of ``plan_`` that are in no common phase and whose buffers
    share units (only the order of their uses keeps them apart); empty without
    phases."""
    return _from_native(_native.phase_overlaps(_to_native(plan_), _to_native(tuple(buffers))))


def check_phase_lifetimes(
    plan_: Plan, buffers: Sequence[Buffer], uses: Sequence[Sequence[PhaseUse]], spec_name: str = ""
) -> tuple[Diagnostic, ...]:
    """The lifetime check between phases: ``uses[u]`` are user ``u``'s uses. Within
    each sequence of control, one error (kind ``"phase_lifetime_overlap"``; numbers:
    the position of the use in between, the other buffer's uses before and after it,
    the two phases) per pair of ``phase_overlaps`` whose uses interleave; sequences
    run concurrently, so no order is checked across them."""
    problems = _native.check_phase_lifetimes(
        _to_native(plan_), _to_native(tuple(buffers)), [_to_native(tuple(u)) for u in uses]
    )
    return _from_native(problems, _names(spec_name, buffers))


def buffer_size(buffer: Buffer) -> int:
    """Bytes (SMEM) or 32-bit columns (TMEM, per CTA) of one buffer of ``buffer``."""
    return _native.buffer_size(_to_native(buffer))


def cta_split_of_cga_bases(bases) -> tuple[int, int]:
    """The CTA split (along M, along N) of a 2-D CGA layout given by its bases
    (``[[1, 0]]``: two CTAs along M)."""
    return tuple(_native.cta_split_of_cga_bases([list(basis) for basis in bases]))


def storage_unavailable(storage: Storage, capability: int) -> str:
    """Why ``storage`` cannot be used on the target of ``capability`` (TMEM before
    Blackwell); an empty string when it can."""
    return _native.storage_unavailable(_native_enum(_native.Storage, Storage(storage)), capability)


def stored_element_bits(kind: ElementKind, bit_width: int) -> int:
    """Bits one element occupies in SMEM and TMEM, as Triton stores it: a pointer 64
    bits, ``i1`` one byte, any other integer or float type its width."""
    return _native.stored_element_bits(
        _native_enum(_native.ElementKind, ElementKind(kind)), bit_width
    )


def has_buffer_dimension(buffer: Buffer) -> bool:
    """False for a TMEM buffer written as one ``[M, N]`` tile (one buffer)."""
    return _native.has_buffer_dimension(_to_native(buffer))


def required_alignment(buffer: Buffer) -> int:
    """Alignment ``buffer`` needs: bytes for SMEM, columns for TMEM."""
    return _native.required_alignment(_to_native(buffer))


def view_of(buffer: Buffer, placement: Placement) -> View:
    """The view of ``buffer`` that ``placement``'s slot coefficients give."""
    return _from_native(_native.view_of(_to_native(buffer), _to_native(placement)))


def check_view(
    view: View, buffer: Buffer, buffer_index: int, region_size: int
) -> tuple[Diagnostic, ...]:
    """The planner's self-check of one view against a region; empty when every
    buffer index maps to an aligned slot of its own inside the view and the view
    inside the region."""
    problems = _native.check_view(_to_native(view), _to_native(buffer), buffer_index, region_size)
    return _from_native(problems, ("", [""] * buffer_index + [buffer.name]))


def describe(plan_: Plan, buffers: Sequence[Buffer], spec_name: str = "") -> str:
    """A memory map of ``plan_``: the region and its layout, one line per buffer
    (offset, size, slot formula, slots), the padding and the diagnostics."""
    return _native.describe(_to_native(plan_), _to_native(tuple(buffers)), spec_name)


def buffer_extents(plan_: Plan, buffers: Sequence[Buffer]) -> tuple[Extent, ...]:
    """Every buffer of every user of ``plan_`` (user by user, index by index) and the
    units it occupies."""
    return _from_native(_native.buffer_extents(_to_native(plan_), _to_native(tuple(buffers))))


def buffer_stride(view: View) -> Stride:
    """The distance in units between consecutive buffers of ``view``."""
    return _from_native(_native.buffer_stride(_to_native(view)))


def sharing_segments(plan_: Plan, extents: Sequence[Extent]) -> tuple[Segment, ...]:
    """The region of ``plan_`` from 0 to its end, cut where the extents that occupy
    it change."""
    native = _native.sharing_segments(_to_native(plan_), _to_native(tuple(extents)))
    return _from_native(native)


def storage_budget(storage: Storage, capability: int, ctas_per_sm: int = 1) -> int:
    """SMEM bytes or TMEM columns one CTA has on the target of ``capability`` when
    ``ctas_per_sm`` CTAs are to run on one SM at once (an equal share of the SM's)."""
    return _native.storage_budget(
        _native_enum(_native.Storage, Storage(storage)),
        capability,
        checked_ctas_per_sm(ctas_per_sm),
    )


def over_storage_budget(
    storage: Storage, capability: int, used_units: int, ctas_per_sm: int = 1
) -> Diagnostic | None:
    """The planner's error (kind ``"over_storage_budget"``, numbers: the units used
    and the budget) when a kernel whose regions of ``storage`` take ``used_units``
    (bytes or TMEM columns) does not fit the target of ``capability`` with
    ``ctas_per_sm`` CTAs an SM; None when it fits (``storage_budget``)."""
    native = _native.over_storage_budget(
        _native_enum(_native.Storage, Storage(storage)),
        capability,
        used_units,
        checked_ctas_per_sm(ctas_per_sm),
    )
    return None if native is None else _from_native(native, ("", []))


def advise_splits(
    spec: Spec, buffers: Sequence[Buffer], tree: Group, other_regions_units: int = 0
) -> tuple[Split, ...]:
    """For every child of a ``shared`` node of ``tree`` (and every child of a
    ``distinct`` child of one): what the kernel would use if its buffers stopped
    sharing, given the units the kernel's other regions of the same storage take.
    Empty when the plan itself fails."""
    splits = _native.advise_splits(
        _to_native(spec), _to_native(tuple(buffers)), _to_native(tree), other_regions_units
    )
    return _from_native(splits, _names(spec.name, buffers))
