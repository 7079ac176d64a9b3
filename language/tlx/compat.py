"""Everything that differs between the supported Triton releases (3.6 ... 3.9).

The package, its tests and the tutorials use only names that are the same in
every supported release; each difference they meet is one name here.
"""

from __future__ import annotations

import sys

import triton
from triton.experimental.gluon import constexpr_function
from triton.experimental.gluon import language as _gl
from triton.experimental.gluon.language.nvidia import blackwell as _blackwell
from triton.experimental.gluon.language.nvidia.hopper import tma as _hopper_tma

TRITON_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])


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
def tmem_reg_layout(element_ty, shape, layout, num_warps):
    """The register layout of one tcgen05.ld/st 32x32b access to a ``shape``
    tensor memory descriptor with ``layout``, spread over ``num_warps`` warps
    (``get_tmem_reg_layout`` in 3.6, a method of the descriptor type later)."""
    if hasattr(_blackwell, "get_tmem_reg_layout"):
        return _blackwell.get_tmem_reg_layout(element_ty, shape, layout, num_warps)
    descriptor = _blackwell.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return descriptor.get_reg_layout(num_warps)
