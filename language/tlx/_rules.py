"""The planner's rules per Triton release (what a view of a region may be: docs/planner.md,
"Views at a byte offset") and per CUDA target (its SMEM, whether it has TMEM), from
planner/lib/Buffers.cpp through python/PlannerExtension.cpp; ``tlx.planner`` exports them
and ``tlx.compat`` applies them to the installed Triton. The first module to load the
extension: it says how to build it when it is missing."""

from __future__ import annotations

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
    (``"runtime_row"`` with ``"indexed_row"``, ``"selected_rows"`` with ``"sliced_rows"``,
    else ``"slots"``): how triton-opt's passes
    set ``Spec.group_stride_form`` from their ``offset-form`` option."""
    native = _native.ViewForm.__members__[offset_form.upper()]
    return _native.group_stride_form_of(native).name.lower()


def checked_ctas_per_sm(ctas_per_sm) -> int:
    """``ctas_per_sm`` when it is a positive int (CTAs to run on one SM at once)."""
    if not isinstance(ctas_per_sm, int) or isinstance(ctas_per_sm, bool) or ctas_per_sm < 1:
        raise ValueError(f"ctas_per_sm must be a positive int, got {ctas_per_sm!r}")
    return ctas_per_sm


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
