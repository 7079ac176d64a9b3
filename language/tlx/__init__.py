"""TLX storage aliasing inside Gluon kernels.

Several on-chip buffers (shared memory, Blackwell tensor memory) share one
region, planned by the compiler::

    import tlx
    from triton.experimental.gluon import language as ttgl

    @tlx.jit
    def kernel(...):
        spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
        a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
        b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
        spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.shared))
        a.index(0).store(...)          # Gluon's own shared_memory_descriptor
        x = tlx.local_view(b, 1).load(layout)

``set_buffer_overlap`` is optional: a tree over one spec's buffers is its overlap;
``tlx.reuse_phases(tree_0, tree_1, ...)`` gives a fused kernel one tree per phase
(docs/semantics.md). The planner (``tlx.planner``) owns every size, offset and alignment; the
lowering emits stock Triton IR (one backing allocation per spec, typed views,
rewritten buffer indices). ``TLX_DUMP_ALIAS_IR=1`` prints each compiled
kernel's specs as a TLX-dialect module for ``triton-opt``;
``tlx.kernel_plans(tlx.ASTSource(...), target)`` returns the plans a kernel
uses (``SpecPlan``), without compiling it to the end, and
``tlx.kernel_budget(plans, target)`` what they use of the target's SMEM and TMEM;
``tlx.autotune`` is ``triton.autotune`` that drops, before compiling, the
configurations whose plans do not fit (docs/autotune.md);
``tlx.check_hazards`` reports the races between aliased buffers that no barrier
orders (docs/hazards.md).
"""

from . import _single_llvm  # noqa: F401  (first: before anything imports Triton)
from ._errors import TLXError, TLXWarning
from ._kinds import reuse_group_type, storage_kind
from .api import (
    ASTSource,
    JITFunction,
    buffered_tensor,
    buffered_tensor_type,
    default_layout,
    jit,
    kernel_plans,
    local_alloc,
    local_view,
    reuse_group,
    reuse_group_ir_type,
    reuse_phases,
    reuse_phases_ir_type,
    storage_alias_spec,
    storage_alias_spec_type,
)
from .hazards import Access, AmbiguousWait, Hazard, HazardReport, check_hazards
from .report import JoinedBuffer, KernelBudget, SpecPlan, StorageBudget, kernel_budget
from .tuning import ConfigVerdict, PlanPruner, autotune

__all__ = [
    "ASTSource",
    "Access",
    "AmbiguousWait",
    "Hazard",
    "HazardReport",
    "ConfigVerdict",
    "JITFunction",
    "JoinedBuffer",
    "KernelBudget",
    "PlanPruner",
    "SpecPlan",
    "StorageBudget",
    "TLXError",
    "TLXWarning",
    "autotune",
    "buffered_tensor",
    "buffered_tensor_type",
    "check_hazards",
    "default_layout",
    "jit",
    "kernel_budget",
    "kernel_plans",
    "local_alloc",
    "local_view",
    "reuse_group",
    "reuse_group_ir_type",
    "reuse_group_type",
    "reuse_phases",
    "reuse_phases_ir_type",
    "storage_alias_spec",
    "storage_alias_spec_type",
    "storage_kind",
]
