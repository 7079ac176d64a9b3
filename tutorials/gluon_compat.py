"""The Gluon names that differ between the stock Triton versions the tutorials run on.

Triton 3.6 (the GPU machine) spells the TMA copies ``async_copy_global_to_shared`` /
``async_copy_shared_to_global``, the CTA barrier ``thread_barrier`` and the register layout of
a tensor-memory access ``get_tmem_reg_layout(...)``; Triton 3.9 renamed them ``async_load`` /
``async_store`` / ``barrier`` / ``tensor_memory_descriptor_type(...).get_reg_layout(...)`` (the
old TMA names raise). Kernels use the names below so that one source compiles on both.
"""

from triton.experimental.gluon import constexpr_function
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell
from triton.experimental.gluon.language.nvidia.hopper import tma

tma_load = tma.async_load if hasattr(tma, "async_load") else tma.async_copy_global_to_shared
tma_store = tma.async_store if hasattr(tma, "async_store") else tma.async_copy_shared_to_global
cta_barrier = gl.barrier if hasattr(gl, "barrier") else gl.thread_barrier


@constexpr_function
def tmem_reg_layout(element_ty, shape, layout, num_warps):
    """The register layout of one tcgen05.ld/st 32x32b access to a ``shape`` tensor memory
    descriptor with ``layout``, spread over ``num_warps`` warps."""
    if hasattr(blackwell, "get_tmem_reg_layout"):
        return blackwell.get_tmem_reg_layout(element_ty, shape, layout, num_warps)
    descriptor = blackwell.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return descriptor.get_reg_layout(num_warps)
