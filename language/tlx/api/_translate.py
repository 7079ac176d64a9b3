"""Gluon's values as the planner's inputs.

A ``local_alloc`` becomes a ``planner.Buffer`` (its element type's stored bits,
its layout's kind, swizzle, TMEM block and CTA split) and a spec a
``planner.Spec`` (its storage, explicit size, target and what the installed
Triton needs of views). This is the only module that reads Gluon's types for the
planner; every number it passes on is the planner's or the user's.
"""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell

from .. import compat, planner
from .._kinds import storage_kind

_PLANNER_STORAGE = {
    storage_kind.smem: planner.Storage.SMEM,
    storage_kind.tmem: planner.Storage.TMEM,
}


def planner_storage(storage: storage_kind) -> planner.Storage:
    """The planner's name of a storage kind (smem or tmem)."""
    return _PLANNER_STORAGE[storage]


def stored_element_bits(dtype) -> int:
    """Bits one element of ``dtype`` occupies in memory (the planner's rule)."""
    if dtype.is_ptr():
        return planner.stored_element_bits(planner.ElementKind.POINTER, 64)
    kind = planner.ElementKind.FLOAT if dtype.is_floating() else planner.ElementKind.INTEGER
    return planner.stored_element_bits(kind, dtype.primitive_bitwidth)


def planner_layout(layout) -> planner.Layout:
    """The parts of a Gluon layout that decide size and alignment."""
    split_m, split_n = planner.cta_split_of_cga_bases(compat.cga_bases(layout))
    split = {"cta_split_m": split_m, "cta_split_n": split_n}
    if isinstance(layout, ttgl.NVMMASharedLayout):
        return planner.Layout(
            planner.LayoutKind.NVMMA_SHARED, swizzle_bytes=layout.swizzle_byte_width, **split
        )
    if isinstance(layout, blackwell.TensorMemoryLayout):
        return planner.Layout(
            planner.LayoutKind.TENSOR_MEMORY,
            block_m=layout.block[0],
            block_n=layout.block[1],
            unpacked=layout.col_stride != 1,
            **split,
        )
    return planner.Layout(planner.LayoutKind.SWIZZLED_SHARED, **split)


def planner_buffer(name: str, shape, element_ty, layout, storage: storage_kind) -> planner.Buffer:
    """A ``local_alloc`` of ``shape`` (buffer count first) as the planner's ``Buffer``."""
    return planner.Buffer(
        name,
        tuple(shape),
        stored_element_bits(element_ty),
        planner_storage(storage),
        planner_layout(layout),
    )


def planner_spec(
    name: str, storage: storage_kind, explicit_size_bytes: int | None, capability: int
) -> planner.Spec:
    """A spec as the planner's ``Spec`` for the target of ``capability``, rounded to
    whole views where the installed Triton needs it (``compat.NEEDS_WHOLE_VIEWS``), with
    views at byte offsets in the form it writes them (``compat.OFFSET_VIEW_FORM``) and a
    view per buffer group where it writes one (``compat.GROUP_STRIDE_VIEW_FORM``)."""
    return planner.Spec(
        name,
        planner_storage(storage),
        explicit_size_bytes,
        capability,
        whole_views=compat.NEEDS_WHOLE_VIEWS,
        offset_form=compat.OFFSET_VIEW_FORM,
        group_stride_form=compat.GROUP_STRIDE_VIEW_FORM,
    )
