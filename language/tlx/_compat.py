"""Everything that differs between the supported Triton releases (3.6 ... 3.9).

The rest of the package uses only names that are the same in every supported
release; each difference it meets is one function here.
"""

from __future__ import annotations

import sys

import triton
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


# TMA load into shared memory: ``tma.async_load`` from 3.7 on; 3.6 names it
# ``tma.async_copy_global_to_shared`` (3.9 removed that name).
tma_async_load = getattr(_hopper_tma, "async_load", None) or _hopper_tma.async_copy_global_to_shared
