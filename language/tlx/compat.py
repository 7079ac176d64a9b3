"""Everything that differs between the supported Triton releases (3.6 ... 3.9).

The package, its tests and the tutorials use only names that are the same in
every supported release; each difference they meet is one name here.
"""

from __future__ import annotations

import dataclasses
import sys

import triton
from triton.experimental.gluon import constexpr_function
from triton.experimental.gluon import language as _gl
from triton.experimental.gluon.language.nvidia import blackwell as _blackwell
from triton.experimental.gluon.language.nvidia.hopper import tma as _hopper_tma

from . import planner

TRITON_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])

# Triton 3.8's memdesc_reinterpret keeps the byte size (source and result of
# equal size); 3.6, 3.7 and 3.9 accept a view smaller than its source. The
# planner rounds each region to whole views only where it must
# (planner.Spec.whole_views).
NEEDS_WHOLE_VIEWS = TRITON_VERSION == (3, 8)


def in_loop_carry_discovery(generator) -> bool:
    """True while ``generator`` makes its dry run over a loop body to find the
    loop-carried values; the IR of that run is thrown away.

    3.9 counts the dry runs in ``_loop_carry_discovery_depth``; 3.6 has no
    marker, so the dry run is recognised by its frame (``_find_carries``, which
    is the dry run's name in every release).
    """
    depth = getattr(generator, "_loop_carry_discovery_depth", None)
    if depth is not None:
        return depth > 0
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_find_carries" and frame.f_locals.get("self") is generator:
            return True
        frame = frame.f_back
    return False


# TMA copies: ``tma.async_load`` / ``tma.async_store`` from 3.7 on; 3.6 names
# them ``async_copy_global_to_shared`` / ``async_copy_shared_to_global`` (3.9
# removed those names).
tma_load = getattr(_hopper_tma, "async_load", None) or _hopper_tma.async_copy_global_to_shared
tma_store = getattr(_hopper_tma, "async_store", None) or _hopper_tma.async_copy_shared_to_global
# The CTA-wide barrier: ``barrier`` in 3.9, ``thread_barrier`` in 3.6.
cta_barrier = getattr(_gl, "barrier", None) or _gl.thread_barrier


@constexpr_function
def cga_bases(layout) -> list[list[int]]:
    """The CGA layout bases of a 2-D layout: how its tile is split over the CTAs
    of a cluster (``[[1, 0]]``: two CTAs along M). 3.6 and 3.7 give a
    ``TensorMemoryLayout`` a ``cta_split_num`` instead, which becomes one basis
    per halving."""
    if hasattr(layout, "cta_split_num"):
        bases = []
        for dim, count in enumerate(layout.cta_split_num or (1, 1)):
            step = 1
            while step < count:
                bases.append([step if d == dim else 0 for d in range(2)])
                step *= 2
        return bases
    return [list(basis) for basis in getattr(layout, "cga_layout", None) or []]


def tensor_memory_layout(block, col_stride, cga_layout=(), two_ctas=False):
    """``TensorMemoryLayout(block, col_stride)`` split over CTAs by the CGA
    bases ``cga_layout`` (3.6 and 3.7 take the split as ``cta_split_num``)."""
    bases = [list(basis) for basis in cga_layout]
    fields = {field.name for field in dataclasses.fields(_blackwell.TensorMemoryLayout)}
    if "cga_layout" in fields:
        return _blackwell.TensorMemoryLayout(
            block=tuple(block), col_stride=col_stride, cga_layout=bases, two_ctas=two_ctas
        )
    return _blackwell.TensorMemoryLayout(
        block=tuple(block),
        col_stride=col_stride,
        cta_split_num=planner.cta_split_of_cga_bases(bases) if bases else None,
        two_ctas=two_ctas,
    )


def tmem_layout_with_block(layout, block):
    """``layout`` (a ``TensorMemoryLayout``) with another ``block`` and packed
    columns, split over the CTAs as ``layout`` is."""
    return dataclasses.replace(layout, block=tuple(block), col_stride=1)


@constexpr_function
def tmem_reg_layout(element_ty, shape, layout, num_warps):
    """The register layout of one tcgen05.ld/st 32x32b access to a ``shape``
    tensor memory descriptor with ``layout``, spread over ``num_warps`` warps
    (``get_tmem_reg_layout`` in 3.6 and 3.7, which takes the CTA split as
    ``cga_layout``; a method of the descriptor type later)."""
    if hasattr(_blackwell, "get_tmem_reg_layout"):
        return _blackwell.get_tmem_reg_layout(
            element_ty, shape, layout, num_warps, cga_layout=cga_bases(layout)
        )
    descriptor = _blackwell.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return descriptor.get_reg_layout(num_warps)
