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
orders (docs/hazards.md); ``tlx.suggest_reuse`` the smallest reuse tree the kernel's
synchronization makes safe, proved by that check (docs/suggest.md).
"""

from . import _single_llvm  # noqa: F401  (first: before anything imports Triton)
from ._errors import TLXError, TLXNameError, TLXWarning
from ._kinds import reuse_group_type, storage_kind
from .api import (
    ASTSource,
    JITFunction,
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
    buffered_tensor,
    buffered_tensor_type,
    default_layout,
    dtype_of,
    fence,
    jit,
    kernel_plans,
    local_alloc,
    local_load,
    local_reinterpret,
    local_reshape,
    local_slice,
    local_store,
    local_trans,
    local_view,
    reuse_group,
    reuse_group_ir_type,
    reuse_phases,
    reuse_phases_ir_type,
    size_of,
    storage_alias_spec,
    storage_alias_spec_type,
    subslice,
    tcgen05_commit,
    tmem_copy,
)
from .api._reference import NOT_PORTED
from .hazards import Access, AmbiguousWait, Hazard, HazardReport, check_hazards, check_hazards_at
from .report import JoinedBuffer, KernelBudget, SpecPlan, StorageBudget, kernel_budget
from .suggest import SpecSuggestion, Suggestion, suggest_reuse
from .tuning import ConfigVerdict, PlanPruner, autotune

__all__ = [
    "ASTSource",
    "Access",
    "AmbiguousWait",
    "ConfigVerdict",
    "Hazard",
    "HazardReport",
    "JITFunction",
    "JoinedBuffer",
    "KernelBudget",
    "PlanPruner",
    "SpecPlan",
    "SpecSuggestion",
    "StorageBudget",
    "Suggestion",
    "TLXError",
    "TLXNameError",
    "TLXWarning",
    "alloc_barriers",
    "async_descriptor_load",
    "async_descriptor_store",
    "async_descriptor_store_wait",
    "async_dot",
    "async_dot_wait",
    "autotune",
    "barrier_array",
    "barrier_array_type",
    "barrier_arrive",
    "barrier_expect_bytes",
    "barrier_wait",
    "buffered_tensor",
    "buffered_tensor_type",
    "check_hazards",
    "check_hazards_at",
    "default_layout",
    "dtype_of",
    "fence",
    "jit",
    "kernel_budget",
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
    "reuse_group_type",
    "reuse_phases",
    "reuse_phases_ir_type",
    "size_of",
    "storage_alias_spec",
    "storage_alias_spec_type",
    "storage_kind",
    "subslice",
    "suggest_reuse",
    "tcgen05_commit",
    "tmem_copy",
]


def __getattr__(name: str):
    """A name of the reference TLX with no single meaning here says what to use
    instead (``tlx.async_tasks``: ``ttgl.warp_specialize``; docs/porting.md)."""
    advice = NOT_PORTED.get(name)
    if advice is None:
        raise AttributeError(f"module 'tlx' has no attribute {name!r}")
    raise TLXNameError(
        f"tlx.{name} of the reference TLX has no single meaning in Gluon: {advice} "
        "(docs/porting.md)"
    )
