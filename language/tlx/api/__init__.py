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

__all__ = [
    "ASTSource",
    "JITFunction",
    "buffered_tensor",
    "buffered_tensor_type",
    "default_layout",
    "jit",
    "kernel_plans",
    "local_alloc",
    "local_view",
    "reuse_group",
    "reuse_group_ir_type",
    "reuse_phases",
    "reuse_phases_ir_type",
    "storage_alias_spec",
    "storage_alias_spec_type",
]
