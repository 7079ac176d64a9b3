"""Typed Python face of the TLX storage alias planner.

The planner (C++, ``dialect/lib/Planner``) owns every rule about sizes, offsets,
alignment and slots; ``tlx._planner`` is its pybind11 extension and this module
wraps it in frozen dataclasses. It imports neither Triton nor MLIR.

Units: SMEM plans are in bytes, TMEM plans in 32-bit columns (``Plan.size_bytes``
and ``Plan.padding_bytes`` are always bytes). ``Plan.padding_bytes`` is the region
minus the bytes an ideal packing would use: per buffer group a leaf needs
``group_size x buffer_size``, a ``shared`` group the max of its children and a
``distinct`` group their sum, with no alignment; times the number of buffer groups
(buffers placed without a tree need ``count x buffer_size``). It counts alignment
holes, stride and region rounding, TMEM's power-of-two columns and any explicit
size beyond the need. See ``dialect/include/tlx/Planner/Planner.h`` for the rules.

Example::

    a = Buffer("a", (2, 64, 64), 16)
    b = Buffer("b", (2, 64, 32), 32)
    p = plan(Spec("s"), [a, b], distinct(0, 1))
    assert p.ok and p.views[1].offset == 8192
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
    "Buffer",
    "Diagnostic",
    "ElementKind",
    "Group",
    "Layout",
    "LayoutKind",
    "Plan",
    "Spec",
    "Storage",
    "View",
    "buffer_size",
    "check_view",
    "cta_split_of_cga_bases",
    "describe",
    "distinct",
    "has_buffer_dimension",
    "has_tensor_memory",
    "plan",
    "required_alignment",
    "shared",
    "smem_limit_for_target",
    "storage_unavailable",
    "stored_element_bits",
    "target_name",
    "view_from_placement",
]

GROUP_KINDS = ("shared", "distinct")


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


@dataclass(frozen=True)
class Layout:
    """The parts of a memory layout that decide size and alignment."""

    kind: LayoutKind = LayoutKind.SWIZZLED_SHARED
    swizzle_bytes: int = 0
    block_m: int = 128
    block_n: int = 0
    unpacked: bool = False
    cta_split_m: int = 1
    cta_split_n: int = 1

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
    decides the SMEM limit and whether tensor memory exists."""

    name: str
    storage: Storage = Storage.SMEM
    explicit_size_bytes: int | None = None
    capability: int = 0

    def __post_init__(self):
        object.__setattr__(self, "storage", Storage(self.storage))

    @property
    def smem_limit_bytes(self) -> int:
        """The target's SMEM limit (``smem_limit_for_target(capability)``)."""
        return smem_limit_for_target(self.capability)


@dataclass(frozen=True)
class View:
    """Where one user's buffers live, in the plan's unit (bytes or columns).

    Buffer ``i`` occupies slot ``scale * (i // group_size) + offset_slots +
    i % group_size`` of a view of ``slots`` buffers covering the region."""

    buffer_size: int
    offset: int
    bytes_between_buffer_groups: int
    group_size: int
    scale: int
    offset_slots: int
    slots: int
    alignment: int

    def slot_of(self, index: int) -> int:
        return _native.slot_of(_native_view(self), index)

    @property
    def identity_index(self) -> bool:
        """True when slot_of(i) == i for every index (no index arithmetic)."""
        return _native_view(self).identity_index()


@dataclass(frozen=True)
class Diagnostic:
    """``severity`` is ``"error"`` or ``"warning"``; ``buffer`` is the index of the
    buffer it is about, -1 for the spec."""

    severity: str
    buffer: int
    message: str


@dataclass(frozen=True)
class Plan:
    """The planned region; ``views`` follow the order of the input buffers (empty
    when the input itself is invalid). ``region_size`` is in the plan's unit."""

    storage: Storage
    size_bytes: int
    backing_shape: tuple[int, ...]
    backing_block: tuple[int, ...]
    alignment: int
    padding_bytes: int
    views: tuple[View, ...]
    diagnostics: tuple[Diagnostic, ...]
    region_size: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    def describe(self, buffers: Sequence[Buffer]) -> str:
        return describe(self, buffers)


def _native_buffer(buffer: Buffer):
    layout = _native.Layout()
    layout.kind = _native.LayoutKind.__members__[buffer.layout.kind.name]
    layout.swizzle_bytes = buffer.layout.swizzle_bytes
    layout.block_m = buffer.layout.block_m
    layout.block_n = buffer.layout.block_n
    layout.unpacked = buffer.layout.unpacked
    layout.cta_split_m = buffer.layout.cta_split_m
    layout.cta_split_n = buffer.layout.cta_split_n
    native = _native.Buffer()
    native.name = buffer.name
    native.shape = list(buffer.shape)
    native.element_bits = buffer.element_bits
    native.storage = _native.Storage.__members__[buffer.storage.name]
    native.layout = layout
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
    return native


_VIEW_FIELDS = tuple(f.name for f in fields(View))


def _native_view(view: View):
    native = _native.View()
    for name in _VIEW_FIELDS:
        setattr(native, name, getattr(view, name))
    return native


def _view(native) -> View:
    return View(*(getattr(native, name) for name in _VIEW_FIELDS))


def _diagnostic(native) -> Diagnostic:
    return Diagnostic(native.severity.name.lower(), native.buffer, native.message)


def _native_plan(plan_: Plan):
    native = _native.Plan()
    native.storage = _native.Storage.__members__[plan_.storage.name]
    native.size_bytes = plan_.size_bytes
    native.region_size = plan_.region_size
    native.backing_shape = list(plan_.backing_shape)
    native.backing_block = list(plan_.backing_block)
    native.alignment = plan_.alignment
    native.padding_bytes = plan_.padding_bytes
    native.views = [_native_view(view) for view in plan_.views]
    diagnostics = []
    for diagnostic in plan_.diagnostics:
        native_diagnostic = _native.Diagnostic()
        native_diagnostic.severity = _native.Severity.__members__[diagnostic.severity.upper()]
        native_diagnostic.buffer = diagnostic.buffer
        native_diagnostic.message = diagnostic.message
        diagnostics.append(native_diagnostic)
    native.diagnostics = diagnostics
    return native


def plan(spec: Spec, buffers: Sequence[Buffer], tree: Group | None = None) -> Plan:
    """Plans the region of ``spec`` for ``buffers``; ``tree`` is the overlap tree
    (``set_buffer_overlap``) or None (every buffer at offset 0). Never raises for
    bad sizes or trees: problems are ``Plan.diagnostics``."""
    native = _native.plan(
        _native_spec(spec),
        [_native_buffer(buffer) for buffer in buffers],
        None if tree is None else _native_group(tree),
    )
    return Plan(
        storage=Storage[native.storage.name],
        size_bytes=native.size_bytes,
        backing_shape=tuple(native.backing_shape),
        backing_block=tuple(native.backing_block),
        alignment=native.alignment,
        padding_bytes=native.padding_bytes,
        views=tuple(_view(view) for view in native.views),
        diagnostics=tuple(_diagnostic(d) for d in native.diagnostics),
        region_size=native.region_size,
    )


def buffer_size(buffer: Buffer) -> int:
    """Bytes (SMEM) or 32-bit columns (TMEM) of one buffer of ``buffer``."""
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


def view_from_placement(
    buffer: Buffer, offset: int, stride: int, group_size: int, region_size: int
) -> View:
    """Rebuilds the view of ``buffer`` from a placement (offset, stride between
    buffer groups and region size in the plan's unit; group_size K)."""
    return _view(
        _native.view_from_placement(_native_buffer(buffer), offset, stride, group_size, region_size)
    )


def check_view(
    view: View, buffer: Buffer, buffer_index: int, region_size: int
) -> tuple[Diagnostic, ...]:
    """The planner's self-check of one view against a region; empty when every
    buffer index maps to an aligned slot inside the region."""
    problems = _native.check_view(
        _native_view(view), _native_buffer(buffer), buffer_index, region_size
    )
    return tuple(_diagnostic(problem) for problem in problems)


def describe(plan_: Plan, buffers: Sequence[Buffer]) -> str:
    """A memory map of ``plan_``: one line per buffer, then the diagnostics."""
    return _native.describe(_native_plan(plan_), [_native_buffer(b) for b in buffers])
