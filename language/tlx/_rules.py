"""The planner's rules per Triton release (what a view of a region may be: docs/planner.md,
"Views at a byte offset") and per CUDA target (its SMEM, whether it has TMEM), from
planner/lib/Buffers.cpp through python/PlannerExtension.cpp; ``tlx.planner`` exports them
and ``tlx.compat`` applies them to the installed Triton."""

from __future__ import annotations

from . import _planner as _native


def needs_whole_views(major: int, minor: int) -> bool:
    """Whether Triton ``major``.``minor`` needs every view to cover its region in whole
    buffers (``Spec.whole_views``): the one rule that tlx.compat and triton-opt's
    ``whole-views`` default both follow."""
    return _native.needs_whole_views(major, minor)


def offset_view_form(major: int, minor: int) -> str:
    """How Triton ``major``.``minor`` writes a view at a byte offset (``Spec.offset_form``)."""
    return _native.offset_view_form(major, minor).name.lower()


def group_stride_view_form(major: int, minor: int) -> str:
    """How Triton ``major``.``minor`` writes a view per buffer group whose groups are any
    multiple of the alignment apart (``Spec.group_stride_form``; ``"slots"``: it cannot)."""
    return _native.group_stride_view_form(major, minor).name.lower()


def group_stride_form_of(offset_form: str) -> str:
    """The group stride form of the Triton whose offset form is ``offset_form``
    (``"runtime_row"`` with ``"indexed_row"``, else ``"slots"``): how triton-opt's passes
    set ``Spec.group_stride_form`` from their ``offset-form`` option."""
    native = _native.ViewForm.__members__[offset_form.upper()]
    return _native.group_stride_form_of(native).name.lower()


def smem_limit_for_target(capability: int) -> int:
    """Shared memory one CTA may use on a CUDA target of compute capability
    ``capability`` (80, 90, 100, ...); 227 KiB for targets the planner does not know."""
    return _native.smem_limit_for_target(capability)


def has_tensor_memory(capability: int) -> bool:
    """Whether a CUDA target has tensor memory (Blackwell sm_100a family; True for 0,
    an unknown target)."""
    return _native.has_tensor_memory(capability)


def target_name(capability: int) -> str:
    """``sm_90a``, ``sm_100a``, ... for a compute capability."""
    return _native.target_name(capability)
