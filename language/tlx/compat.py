"""Everything that differs between the supported Triton releases (3.6 ... 3.9), and every
private internal of Triton the package relies on.

The package, its tests and the tutorials use only names that are the same in
every supported release; each difference they meet is one name here. So is each
use of state Triton keeps private (its autotuner's, its asynchronous compile
mode's, its benchmark's): a release that changes one breaks this module alone,
and test/python/test_compat.py, run on each supported Triton, says which.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence

import triton
from triton import knobs
from triton._C.libtriton import ir as _ir
from triton.experimental.gluon import constexpr_function
from triton.experimental.gluon import language as _gl
from triton.experimental.gluon.language._core import builtin as _gluon_builtin
from triton.experimental.gluon.language.nvidia import blackwell as _blackwell
from triton.experimental.gluon.language.nvidia.hopper import tma as _hopper_tma
from triton.runtime import _async_compile
from triton.runtime import cache as _triton_cache
from triton.runtime.jit import mangle_type

from . import planner

TRITON_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])

# Triton 3.8's memdesc_reinterpret keeps the byte size (source and result of
# equal size); 3.6, 3.7 and 3.9 accept a view smaller than its source. The
# planner rounds each region to whole views only where it must
# (planner.Spec.whole_views); the rule is the planner's, which triton-opt's
# whole-views default follows too.
NEEDS_WHOLE_VIEWS = planner.needs_whole_views(*TRITON_VERSION)

# How each release takes a view of SMEM bytes that starts at a byte offset o of the
# [rows, 128] x i8 backing (o a multiple of 128 and of the layout's alignment), measured
# by compiling Gluon kernels to PTX on each wheel (the stores land at o + the buffer's own
# offsets on 3.6 and 3.9; 3.7 and 3.8 compile). "ok": parses, verifies and compiles;
# otherwise why not. Rows: 1. memdesc_subslice of the backing's rows from o, then
# memdesc_reinterpret to [slots, *buffer] (the result within the subslice);
# 2. memdesc_index of the backing's row o / 128 (128 bytes), then memdesc_reinterpret to
# [slots, *buffer]; 3. memdesc_reinterpret to [n, R, *buffer[1:]] (a slot of R rows, the
# buffer's stride), memdesc_index, memdesc_subslice of the buffer's rows from r: r must
# be a multiple of the buffer's rows (the subslice's offset may not cut its own tile)
# and R a power of two (3.6 ... 3.9 reject others), so it places nothing whole slots
# cannot; 4. memdesc_reinterpret of the whole backing, at o a multiple of the buffer's
# size (whole slots). The planner's form per release is planner.offset_view_form.
# Two forms whose group stride need not be a multiple of the buffer's size (docs/planner.md,
# "What stays above the ideal"; test/python/test_group_stride_forms.py compiles both):
# "runtime_row": memdesc_index of the backing's row at a runtime index (a group's start /
# 128), then memdesc_reinterpret to the buffer's slots; "group_rows": memdesc_reinterpret
# to [groups, stride / 128, 128] x i8, memdesc_index by group, memdesc_subslice, then
# memdesc_reinterpret; "group_rows" no release accepts. "selected_rows": each group's view at
# its constant start in the release's form of a view at a byte offset (above), one chosen at
# run time by scf.if on the group: 3.6, 3.7 and 3.9 compile it, 3.8 has no view at a byte
# offset. Where a free stride ends the region earlier the planner writes "runtime_row" on 3.6
# and 3.7 and "selected_rows" with "sliced_rows" group views on 3.9
# (planner.group_stride_view_form).
VIEW_FORMS = {
    "sliced_rows": {
        (3, 6): "asserts (subslice of the rank-1 backing)",
        (3, 7): "asserts (subslice of the rank-1 backing)",
        (3, 8): "asserts (subslice of the rank-1 backing)",
        (3, 9): "ok",
    },
    "indexed_row": {
        (3, 6): "ok",
        (3, 7): "ok",
        (3, 8): "refused: reinterpret keeps the byte size",
        (3, 9): "refused: a result larger than its source",
    },
    "strided_slice": {
        (3, 6): "ok at r a multiple of the buffer's rows",
        (3, 7): "ok at r a multiple of the buffer's rows",
        (3, 8): "ok at r a multiple of the buffer's rows",
        (3, 9): "ok at r a multiple of the buffer's rows",
    },
    "slots": {(3, 6): "ok", (3, 7): "ok", (3, 8): "ok", (3, 9): "ok"},
    "runtime_row": {
        (3, 6): "ok",
        (3, 7): "ok",
        (3, 8): "refused: reinterpret keeps the byte size",
        (3, 9): "refused: a result larger than its source",
    },
    "group_rows": {
        version: "refused: a stride of stride / 128 rows that is no power of two"
        for version in ((3, 6), (3, 7), (3, 8), (3, 9))
    },
    "selected_rows": {
        (3, 6): "ok",
        (3, 7): "ok",
        (3, 8): "refused: no view at a byte offset",
        (3, 9): "ok",
    },
}
# The form the planner gives a view at a byte offset here ("slots": none, every SMEM
# buffer starts at a multiple of its size).
OFFSET_VIEW_FORM = planner.offset_view_form(*TRITON_VERSION)
# The form the planner gives a view per buffer group, whose groups sit any multiple of the
# alignment apart ("runtime_row" on 3.6 and 3.7, "selected_rows" on 3.9; "slots" on 3.8:
# none, a user's groups sit whole slots apart).
GROUP_STRIDE_VIEW_FORM = planner.group_stride_view_form(*TRITON_VERSION)


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


def tma_reduce(kind: str):
    """The TMA store that reduces into global memory (``kind``: add, min, max, and, or,
    xor), a Gluon builtin ``(desc, coord, src)``: ``tma.async_atomic_<kind>`` from 3.8 on;
    3.6 and 3.7 have no Python wrapper, but their Gluon builder makes the same
    ``ttng.async_tma_reduce`` (``create_async_tma_reduce``), which ``_tma_reduction`` calls."""
    return getattr(_hopper_tma, f"async_atomic_{kind}", None) or _tma_reduction(kind)


def _tma_reduction(kind: str):
    """A builtin that emits ``ttng.async_tma_reduce`` of ``kind`` from ``src`` (SMEM) into
    the block of ``desc`` at ``coord``, as 3.8's ``tma.async_atomic_<kind>`` does."""
    reduce_kind = getattr(_ir.DESCRIPTOR_REDUCE_KIND, kind.upper())

    @_gluon_builtin
    def reduction(desc, coord, src, _semantic=None):
        coord = _semantic._convert_to_ir_values(coord, require_i64=False)
        _semantic.builder.create_async_tma_reduce(reduce_kind, desc.handle, coord, src.handle)

    reduction.__name__ = f"async_atomic_{kind}"
    return reduction


# ``tma_atomic_add(desc, coord, src)``: adds an SMEM tile into the block of ``desc`` at
# ``coord`` (``cp.reduce.async.bulk.tensor ... .add``), asynchronously: ``src`` is read until a
# ``tma.store_wait`` retires it, as with a TMA store. A name kernels can call.
tma_atomic_add = tma_reduce("add")


def memdesc_reinterpret(descriptor, dtype, shape, layout, semantic):
    """``descriptor`` (shared or tensor memory) viewed as ``shape`` x ``dtype`` with
    ``layout``: the descriptor's ``reinterpret`` in 3.9, ``_reinterpret`` before."""
    method = getattr(descriptor, "reinterpret", None) or descriptor._reinterpret
    return method(dtype, shape, layout, _semantic=semantic)


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


# Triton's autotuner (``triton.runtime.Autotuner``, what ``triton.autotune`` returns) keeps
# private what tlx.autotune (language/tlx/tuning/) reads and changes: the timings of a key's
# configurations, its choice per key, the benchmark of one configuration and ``run``. They are
# the same in 3.6 ... 3.9.


def autotuner_timings(tuner) -> dict | None:
    """{configuration: ``do_bench``'s timing} of ``tuner``'s last timing of a key; None
    before its first."""
    return getattr(tuner, "configs_timings", None)


def autotuner_keys(tuner) -> set:
    """The keys ``tuner`` has chosen a configuration for."""
    return set(tuner.cache)


def autotuner_choice(tuner, key) -> triton.Config:
    """The configuration ``tuner`` launches for ``key``."""
    return tuner.cache[key]


def set_autotuner_choice(tuner, key, config: triton.Config) -> None:
    """Makes ``config`` ``tuner``'s choice for ``key`` (and its latest choice,
    ``best_config``), as its own timing does."""
    tuner.cache[key] = config
    tuner.best_config = config


def wrap_autotuner_run(tuner, wrap: Callable) -> None:
    """Replaces ``tuner``'s ``run`` (what a launch ``tuner[grid](...)`` calls) by
    ``wrap(run)``."""
    tuner.run = wrap(tuner.run)


def autotuner_kernel_calls(
    tuner, configs: Sequence[triton.Config], args: Sequence, kwargs: Mapping
) -> dict:
    """{configuration: the call that launches ``tuner``'s kernel with it}, each made by the
    tuner's own benchmark of it (``_bench``: its pre_hooks and post_hook included), which
    hands the call to ``do_bench`` (a cached property): here to one that keeps it. ``args``
    and ``kwargs`` are a launch's, as the tuner benchmarks with them."""
    calls = {}
    saved = tuner.__dict__.pop("do_bench", None)
    tuner.nargs = dict(zip(tuner.arg_names, args, strict=False))
    try:
        for config in configs:

            def keep(kernel_call, quantiles, config=config):
                calls[config] = kernel_call
                return [0.0] * len(quantiles)

            tuner.__dict__["do_bench"] = keep
            tuner._bench(*args, config=config, **kwargs)
    finally:
        tuner.nargs = None
        tuner.__dict__.pop("do_bench", None)
        if saved is not None:
            tuner.__dict__["do_bench"] = saved
    return calls


# Triton's asynchronous compile mode (``triton.runtime._async_compile``): while it is active,
# a JIT function's ``warmup`` hands its compilation to the mode's executor.


def async_compile_active() -> bool:
    """Whether an asynchronous compile mode is active in this context."""
    return _async_compile.active_mode.get() is not None


def async_compile_mode(executor, ignore_errors: bool = False):
    """The asynchronous compile mode compiling on ``executor`` (a context manager);
    ``ignore_errors``: a failed compilation is left for the launch to raise."""
    return _async_compile.AsyncCompileMode(executor, ignore_errors=ignore_errors)


def jit_type_of(value) -> str:
    """The type Triton's JIT keys a launch's argument by (``*fp16``, ``i32``)."""
    return mangle_type(value)


# Triton's on-disk cache (``triton.runtime.cache``), where tlx.autotune keeps its verdicts
# (language/tlx/tuning/verdict_cache.py) beside the kernels Triton compiles.


def triton_fingerprint() -> str:
    """The hash of Triton's own sources and library that keys its compiled kernels."""
    return _triton_cache.triton_key()


def always_compile() -> bool:
    """Whether ``TRITON_ALWAYS_COMPILE`` asks that nothing be taken from Triton's cache."""
    return bool(knobs.compilation.always_compile)


def cache_directory(key: str):
    """Triton's cache entry for ``key`` (a hex digest): ``get_file(name)`` gives a file's
    path or None, ``put(data, name)`` stores bytes."""
    return _triton_cache.get_cache_manager(key)


# What ``triton.testing.do_bench`` uses around each timed call, for a timing of its own
# (language/tlx/tuning/retime.py): the driver's L2 flush, the device's events and sleep.


def l2_flush() -> Callable[[], None]:
    """A function that clears the GPU's L2 as ``do_bench`` clears it before each call."""
    driver = triton.runtime.driver.active
    buffer = driver.get_empty_cache_for_benchmark()
    return lambda: driver.clear_cache(buffer)


def timing_event():
    """A GPU event that records when the work queued before it is done (``record``,
    ``synchronize``, ``elapsed_time``)."""
    return triton.runtime.driver.active.get_device_interface().Event(enable_timing=True)


def gpu_sleep(cycles: int) -> None:
    """Queues a GPU sleep of ``cycles`` clock cycles on the current stream."""
    triton.runtime.driver.active.get_device_interface()._sleep(cycles)


# A compiled kernel's ``run`` (the CUDA backend's ``CudaLauncher``) wraps the C launch
# function in ``wrap_handle_tensordesc``, which encodes every TMA descriptor argument into a
# CUtensorMap on each call. 3.6's C launch function takes the launch's arguments, then the
# kernel's arguments one by one; 3.7 on take the launch's arguments, the argument annotations
# and the kernel signature, then the kernel's arguments as one sequence.
_LAUNCH_TAKES_SEQUENCE = TRITON_VERSION >= (3, 7)


class ExpandedLaunch:
    """One compiled kernel (a ``CompiledKernel``) launched through the C launch function its
    ``run`` ends in, with arguments ``expand`` turned once into what that function takes:
    Triton's own ``wrap_handle_tensordesc`` encodes each TMA descriptor, as ``run`` does on
    every call. A caller that launches the same arguments again (same tensors' addresses,
    shapes and strides) skips the encoding and ``run``'s Python, some 8 us of a call's host
    time on an H200 host (bench/gemm.py --launch).

    ``usable`` is False where ``run`` does more than this would: a kernel with global or
    profile scratch to allocate per call, an instrumented one (3.8+'s gsan), or a descriptor
    that the kernel takes as a pointer rather than as an encoded CUtensorMap (its expansion
    would hold the tensor). ``launch`` also declines while Triton's launch hooks (profilers)
    are set. Launch with ``run`` then."""

    def __init__(self, kernel):
        from triton.backends.nvidia import driver as nvidia_driver

        run = kernel.run
        self.kernel = kernel
        self._run = run
        signature = dict(getattr(getattr(kernel, "src", None), "signature", None) or {})
        descriptor_meta = getattr(kernel.metadata, "tensordesc_meta", None)
        has_descriptors = any(
            isinstance(kind, str) and kind.startswith("tensordesc") for kind in signature.values()
        )
        wrapped = run.launch
        freevars = getattr(getattr(wrapped, "__code__", None), "co_freevars", ())
        launch_function = None
        if "launcher" in freevars:
            launch_function = wrapped.__closure__[freevars.index("launcher")].cell_contents
        elif not has_descriptors and not hasattr(wrapped, "__code__"):
            launch_function = wrapped
        self.usable = (
            bool(signature)
            and launch_function is not None
            and (not has_descriptors or bool(descriptor_meta))
            and all(meta is not None for meta in descriptor_meta or ())
            and not run.global_scratch_size
            and not run.profile_scratch_size
            and not getattr(run, "gsan_enabled", False)
        )
        self._launch_function = launch_function
        self._expander = nvidia_driver.wrap_handle_tensordesc(
            lambda *arguments: arguments, signature, descriptor_meta
        )
        self._base_count = getattr(nvidia_driver, "_BASE_ARGS_FORMAT_LEN", 0)

    def expand(self, arguments):
        """``arguments`` (the kernel's, as ``run`` takes them after the launch's own) as the C
        launch function takes them: each descriptor encoded."""
        if _LAUNCH_TAKES_SEQUENCE:
            return self._expander(None, tuple(arguments))[-1]
        return self._expander(*([None] * self._base_count), *arguments)[self._base_count :]

    def launch(self, grid, stream, expanded):
        """Launches the kernel on ``grid`` (x, y, z) in ``stream`` with ``expanded``
        (``expand``'s); False, launching nothing, where ``run`` must launch it (not
        ``usable``, or a launch hook is set)."""
        if not self.usable or _hooked(knobs.runtime.launch_enter_hook):
            return False
        if _hooked(knobs.runtime.launch_exit_hook):
            return False
        kernel, run = self.kernel, self._run
        cooperative, pdl = run.launch_cooperative_grid, run.launch_pdl
        if _LAUNCH_TAKES_SEQUENCE:
            self._launch_function(
                *grid, stream, kernel.function, cooperative, pdl, kernel.packed_metadata,
                None, None, None, None, None, run.arg_annotations, run.kernel_signature,
                expanded,
            )  # fmt: skip
        else:
            self._launch_function(
                *grid, stream, kernel.function, cooperative, pdl, None, None,
                kernel.packed_metadata, None, None, None, *expanded,
            )  # fmt: skip
        return True


def _hooked(hook):
    """Whether a launch hook of ``knobs.runtime`` is set: a function, or (3.6+) a
    ``HookChain`` with calls."""
    return hook is not None and bool(getattr(hook, "calls", True))


# Gluon aggregates: a class decorated with ``aggregate`` bundles a kernel's descriptors,
# buffers, barriers, scalars and constexprs (annotated fields) into one value that jit
# functions and warp_specialize partitions take, as Gluon's own tutorials bundle them.
# Triton 3.6 to 3.9 keep the decorator in triton.language.core as ``_aggregate``.
import triton.language.core as _language_core  # noqa: E402

aggregate = _language_core._aggregate
