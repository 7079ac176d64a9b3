"""Gluon's own memory descriptor types and values, for a buffer in shared or
tensor memory: what a buffer's view, its backing allocation and each indexed
buffer are in the IR and in the kernel (``shared_memory_descriptor``,
``tensor_memory_descriptor``), and how a kernel spells a dtype (messages)."""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia import blackwell

from .. import planner
from .._kinds import storage_kind

# The SMEM backing allocation's layout: rank 1, so the leading dimension of the
# [n, 128] backing is a buffer dimension that may be any size.
BACKING_SMEM_LAYOUT = ttgl.SwizzledSharedLayout(1, 1, 1, [0])


def smem_backing_type(shape):
    """The type of an SMEM backing allocation of ``shape`` (``[rows, 128]``) bytes, or of
    one of its rows (``[128]``)."""
    return descriptor_type(ttgl.int8, shape, BACKING_SMEM_LAYOUT, storage_kind.smem)


def descriptor_type(element_ty, shape, layout, storage):
    """Gluon's own memory descriptor type for ``shape`` in ``storage``."""
    shape = list(shape)
    if storage is storage_kind.tmem:
        return blackwell.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return ttgl.shared_memory_descriptor_type(element_ty, shape, layout, shape)


def descriptor(handle, element_ty, shape, layout, storage):
    """Gluon's own memory descriptor value wrapping ``handle``."""
    shape = list(shape)
    if storage is storage_kind.tmem:
        return blackwell.tensor_memory_descriptor(handle, element_ty, shape, layout, shape)
    return ttgl.shared_memory_descriptor(handle, element_ty, shape, layout, shape)


def view_type(element_ty, layout, storage, view: planner.View):
    """The type of a buffer's view: ``View.shape`` of its own element type and
    layout."""
    return descriptor_type(element_ty, view.shape, layout, storage)


def dtype_text(dtype) -> str:
    """How a kernel spells ``dtype``: ``ttgl.float16``."""
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "float8e4nv",
        "float8e5",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int1",
    ):
        if getattr(ttgl, name, None) == dtype:
            return f"ttgl.{name}"
    return f"ttgl.{dtype}"
