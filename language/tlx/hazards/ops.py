"""What each TTGIR operation does to memory and to ordering: the hazard check's table.

One row per operation (``OpModel``): which of its ``!ttg.memdesc`` operands it
reads and writes (``roles``, in operand order; ``"barrier"`` marks an mbarrier
operand), whether the access is synchronous or lasts until a later event
(``completion``), and for synchronisation operations what they do (``sync``). The
execution (language/tlx/hazards/execution.py) dispatches every row by its ``sync``
kind (``KIND_HANDLERS``; ``""``: the operation accesses memory); adding an operation
is one row here.

``proxy`` is ``"async"`` for the operations that reach shared memory through the async
proxy (TMA, ``warpgroup_mma``, ``tcgen05``): a generic-proxy write (``local_store``) of
bytes they then access must be followed by a ``fence_async_shared`` that happens before
them.

Completions (docs/hazards.md):

* ``"sync"``: the access is done when the operation returns;
* ``"mbarrier"``: a TMA load, done when the mbarrier operand's phase completes
  (the bytes it writes count against the phase's expected transaction bytes);
* ``"store_wait"``: a TMA store reads its buffer until an ``async_tma_store_wait``
  of the same partition retires it (``pendings`` = how many stay outstanding);
* ``"dot_wait"``: an asynchronous ``warpgroup_mma`` reads its shared operands until a
  ``warp_group_dot_wait`` of the same partition retires it;
* ``"tcgen05"``: a ``tcgen05`` operation reads and writes until a commit of the same
  partition (``tc_gen5_commit``, or the mbarriers the operation itself names) arrives;
  without ``is_async`` Triton waits for it, and it is synchronous.

Which asynchronous operations the hardware orders among themselves, with no wait between
(``pipeline``), is PTX's rule, not issue order (docs/hazards.md, "The ISA's ordering
rules"): of a partition's ``tcgen05`` operations, an MMA runs after an earlier MMA only with
the same accumulator and the same shape, and after every earlier ``tcgen05.cp`` (PTX ISA,
"Pipelined tcgen05 instructions": the pairs ``tcgen05.mma -> tcgen05.mma`` of the same
accumulator and shape, ``tcgen05.cp -> tcgen05.mma``); nothing else is ordered before its
commit. TMA copies and ``warpgroup_mma`` operations are ordered with nothing but their own
completion (the mbarrier's ``complete_tx`` phase, ``cp.async.bulk.wait_group.read``,
``wgmma.wait_group``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpModel:
    """One row of the table: what an operation does to memory and to ordering."""

    roles: tuple[str, ...] = ()  # per memdesc operand: "read", "write", "readwrite", "barrier"
    completion: str = "sync"  # "sync", "mbarrier", "store_wait", "dot_wait", "tcgen05"
    sync: str = ""  # a synchronisation: "init", "wait", "arrive", "expect", "commit", ...
    what: str = ""  # how reports name the operation
    more_barriers: bool = False  # every memdesc operand after the roles is an mbarrier
    proxy: str = "generic"  # "async": it reaches shared memory through the async proxy
    predicated: bool = False  # its last operand is a predicate (as "mbarrier" ones' is)
    # A tcgen05 operation: "mma" (after the partition's earlier MMAs of the same accumulator
    # and shape, and its earlier copies) or "copy" (after no earlier tcgen05 operation).
    pipeline: str = ""


_TABLE = {
    # Plain loads and stores of a partition.
    "ttg.local_load": OpModel(("read",), what="local_load"),
    "ttg.local_store": OpModel(("write",), what="local_store"),
    "ttng.tmem_load": OpModel(("read",), what="TMEM load"),
    "ttng.tmem_store": OpModel(("write",), what="TMEM store", predicated=True),
    # Asynchronous copies and matrix multiplies.
    "ttng.async_tma_copy_global_to_local": OpModel(
        ("write", "barrier"), "mbarrier", what="TMA load", proxy="async"
    ),
    "ttng.async_tma_gather": OpModel(
        ("barrier", "write"), "mbarrier", what="TMA gather", proxy="async"
    ),
    "ttng.async_tma_copy_local_to_global": OpModel(
        ("read",), "store_wait", what="TMA store", proxy="async"
    ),
    "ttng.async_tma_reduce": OpModel(("read",), "store_wait", what="TMA reduce", proxy="async"),
    "ttng.async_tma_scatter": OpModel(("read",), "store_wait", what="TMA scatter", proxy="async"),
    "ttng.warp_group_dot": OpModel(
        ("read", "read"), "dot_wait", what="warpgroup_mma", proxy="async"
    ),
    "ttng.tc_gen5_mma": OpModel(
        ("read", "read", "readwrite"),
        "tcgen05",
        what="tcgen05_mma",
        more_barriers=True,
        proxy="async",
        pipeline="mma",
    ),
    "ttng.tc_gen5_mma_scaled": OpModel(
        ("read", "read", "readwrite", "read", "read"),
        "tcgen05",
        what="tcgen05_mma_scaled",
        more_barriers=True,
        proxy="async",
        pipeline="mma",
    ),
    "ttng.tmem_copy": OpModel(
        ("read", "write"),
        "tcgen05",
        what="tcgen05_copy",
        more_barriers=True,
        proxy="async",
        pipeline="copy",
    ),
    # Synchronisation.
    "ttng.init_barrier": OpModel(("barrier",), sync="init"),
    "ttng.inval_barrier": OpModel(("barrier",), sync="inval"),
    "ttng.wait_barrier": OpModel(("barrier",), sync="wait"),
    "ttng.arrive_barrier": OpModel(("barrier",), sync="arrive"),
    "ttng.barrier_expect": OpModel(("barrier",), sync="expect"),
    "ttng.tc_gen5_commit": OpModel(("barrier",), sync="commit"),
    "ttng.async_tma_store_wait": OpModel(sync="store_wait"),
    "ttng.warp_group_dot_wait": OpModel(sync="dot_wait"),
    # Orders the thread's earlier generic-proxy writes before later async-proxy accesses.
    "ttng.fence_async_shared": OpModel(sync="fence"),
    "ttg.barrier": OpModel(sync="none"),
    "gpu.barrier": OpModel(sync="none"),
    "ttg.local_dealloc": OpModel(sync="none"),
}

# Allocations (``ttg.local_alloc``, ``ttng.tmem_alloc``) make the memory; one with an
# initial value also writes it (Execution.allocate). Views (``ttg.memdesc_index``, ...)
# make (part of) their operand's memory (memory.py, VIEW_HANDLERS).

# Operations that touch no on-chip memory a spec owns and order nothing: they are
# executed for their scalar value where the check can compute it, else skipped.
PURE_PREFIXES = ("arith.", "math.", "tt.", "ub.", "llvm.intr.")
PURE_OPS = frozenset(
    {
        "ttg.convert_layout",
        "ttg.warp_yield",
        "ttg.warp_return",
        "ttng.tensormap_create",
        "ttng.reinterpret_tensor_descriptor",
        "ttng.tensormap_fenceproxy_acquire",
    }
)
# tt.* operations that are not pure for the check.
IMPURE_TT = frozenset({"tt.call"})


def model_of(name: str) -> OpModel | None:
    return _TABLE.get(name)


def modelled_operations() -> tuple[str, ...]:
    """Every operation the table describes (docs/hazards.md lists them)."""
    return tuple(sorted(_TABLE))
