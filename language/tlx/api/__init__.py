"""The TLX API inside Gluon kernels, shaped as Gluon's own language package.

* ``_jit``: the entry: ``@tlx.jit``, ``tlx.ASTSource`` (tracing a kernel) and
  ``tlx.kernel_plans``, and the end of a kernel's trace;
* ``_core``: the values, their types and the builtins (``storage_alias_spec``,
  ``local_alloc``, ``reuse_group``, ``buffered_tensor.index``, ...); each checks its
  arguments (``_checks``: the API boundary) and calls one function of
* ``_semantic``: the IR the builtins emit, over
* ``_state``: the trace of one kernel, its specs and their users;
* ``_sealing``: the one place that asks the planner for a spec's plan and emits
  its backing allocation and views;
* ``_reference``: the reference TLX's names where Gluon has one meaning for them
  (``tlx.local_load``, ``tlx.barrier_wait``, ``tlx.async_dot``, ...: docs/porting.md),
  builtins as ``_core``'s are, and what to use for those it has not;
* ``_lifetimes``: the lifetime check of phases on the traced IR;
* ``_translate``: Gluon's values as the planner's inputs; ``_descriptors``: Gluon's
  memory descriptors, what the views and buffers are in the kernel.

``_errors`` and ``_kinds`` (errors, locations, enumerations) stay at the package
root: the plan report, the tuner and the hazard check use them too.
"""

from ._core import (
    buffered_tensor,
    buffered_tensor_type,
    default_layout,
    local_alloc,
    local_view,
    reuse_group,
    reuse_group_ir_type,
    reuse_phases,
    reuse_phases_ir_type,
    storage_alias_spec,
    storage_alias_spec_type,
)
from ._jit import ASTSource, JITFunction, jit, kernel_plans
from ._reference import (
    alloc_barriers,
    async_descriptor_load,
    async_descriptor_store,
    async_descriptor_store_wait,
    async_dot,
    async_dot_wait,
    barrier_array,
    barrier_array_type,
    barrier_arrive,
    barrier_expect_bytes,
    barrier_wait,
    dtype_of,
    fence,
    local_load,
    local_reinterpret,
    local_reshape,
    local_slice,
    local_store,
    local_trans,
    size_of,
    subslice,
    tcgen05_commit,
    tmem_copy,
)

__all__ = [
    "ASTSource",
    "JITFunction",
    "alloc_barriers",
    "async_descriptor_load",
    "async_descriptor_store",
    "async_descriptor_store_wait",
    "async_dot",
    "async_dot_wait",
    "barrier_array",
    "barrier_array_type",
    "barrier_arrive",
    "barrier_expect_bytes",
    "barrier_wait",
    "buffered_tensor",
    "buffered_tensor_type",
    "default_layout",
    "dtype_of",
    "fence",
    "jit",
    "kernel_plans",
    "local_alloc",
    "local_load",
    "local_reinterpret",
    "local_reshape",
    "local_slice",
    "local_store",
    "local_trans",
    "local_view",
    "reuse_group",
    "reuse_group_ir_type",
    "reuse_phases",
    "reuse_phases_ir_type",
    "size_of",
    "storage_alias_spec",
    "storage_alias_spec_type",
    "subslice",
    "tcgen05_commit",
    "tmem_copy",
]
