"""``@tlx.jit``, ``tlx.ASTSource`` and ``tlx.kernel_plans``: compiling a kernel
with TLX.

The entry of the API: ``tlx.ASTSource`` is Gluon's AST source that traces the
kernel inside a ``KernelTrace`` (``_state``): TLX builtins register their specs
there, and when tracing is done ``finish_trace`` checks the specs never sealed and
the lifetimes of phases, records every spec's plan and, with
``TLX_DUMP_ALIAS_IR=1``, dumps them; the traced module is marked for the
descriptor prefetch (``_descriptor_prefetch``). ``tlx.kernel_plans`` traces a
kernel with Triton's front end alone and returns those records.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from triton._C.libtriton import ir
from triton.compiler.compiler import make_backend
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction

from .. import _descriptor_prefetch
from .._errors import warn_at, warn_deprecated_at
from ..report.dump import dump_if_asked
from ..report.plan import SpecPlan, with_other_regions
from ._lifetimes import check_phase_lifetimes
from ._sealing import check_unsealed, warn_trees_over_several_specs
from ._state import KernelTrace, tracing

# At import, so that Triton 3.7+ keys a tlx kernel's first launch as it keys the next.
_descriptor_prefetch.install()


def _package_fingerprint() -> str:
    """A hash of this package's code (Python and planner extension), so that a
    kernel compiled by another version of TLX is not taken from Triton's cache."""
    cached = getattr(_package_fingerprint, "value", None)
    if cached is None:
        digest = hashlib.sha256()
        package = Path(__file__).resolve().parents[1]
        for path in sorted(package.rglob("*.py")) + sorted(package.glob("_planner*")):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
        cached = digest.hexdigest()
        _package_fingerprint.value = cached
    return cached


class ASTSource(GluonASTSource):
    """Gluon's AST source with TLX lowering: use it to compile a ``@tlx.jit``
    kernel ahead of time, e.g. ``triton.compile(tlx.ASTSource(fn=kernel,
    signature={"x": "*fp16"}, constexprs={"N": 64}), target=GPUTarget("cuda",
    90, 32))``. Launching a ``@tlx.jit`` kernel uses it automatically."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Again, in case a stages hook set since the import replaced tlx's.
        _descriptor_prefetch.install()

    def hash(self):
        # overlap_values decide the trees that storage_alias_spec(..., overlap="auto") infers.
        overlap_values = sorted(getattr(self.fn, "overlap_values", {}).items())
        key = (
            super().hash()
            + _package_fingerprint()
            + str(_descriptor_prefetch.enabled())
            + str(overlap_values)
        )
        return hashlib.sha256(key.encode()).hexdigest()

    def make_ir(self, target, options, codegen_fns, module_map, context):
        module, _ = self.traced_make_ir(target, options, codegen_fns, module_map, context)
        return module

    def traced_make_ir(self, target, options, codegen_fns, module_map, context, name_views=False):
        """Gluon's ``make_ir`` inside a ``KernelTrace``: (module, finished trace).
        ``name_views``: the IR names each spec and view (``KernelTrace.name_views``)."""
        target_name = make_backend(target).get_target_name(options)
        trace = KernelTrace(self.fn.__name__, target, target_name, options)
        trace.name_views = name_views
        with tracing(trace):
            module = super().make_ir(target, options, codegen_fns, module_map, context)
            from ..suggest.auto import auto_overlap

            inferred = auto_overlap(self, target, options, trace)
            if inferred is not None:
                # storage_alias_spec(..., overlap="auto"): traced again with the inferred trees.
                with inferred.active():
                    return self.traced_make_ir(
                        target, options, codegen_fns, module_map, context, name_views
                    )
            finish_trace(trace, module)
        _descriptor_prefetch.mark(module, context)
        return module, trace


def finish_trace(trace: KernelTrace, module) -> None:
    """Ends the trace of a kernel whose traced IR is ``module``: reports the specs never
    sealed, checks the lifetimes of phases, then, with no error, emits the trace's
    warnings (the trees over several specs' buffers too), records every spec's plan on
    the trace and dumps when asked to."""
    for spec in trace.specs:
        if not spec.sealed:
            check_unsealed(spec)
    phased = [spec for spec in trace.specs if spec.plan is not None and spec.plan.phases]
    if phased:
        check_phase_lifetimes(phased, module, trace.buffer_uses)
    warn_trees_over_several_specs(trace)
    for location, message in trace.deprecations:
        warn_deprecated_at(location, message)
    for location, message in trace.warnings:
        warn_at(location, message)
    trace.spec_plans = with_other_regions(
        tuple(spec.record() for spec in trace.specs), trace.capability
    )
    dump_if_asked(trace)


def front_end(src: ASTSource, target, options, api_name: str, name_views: bool = False):
    """(module, trace, backend, parsed options) of Triton's front end run on ``src`` for
    ``target``, as every supported Triton release's ``triton.compile`` runs it, with tlx
    tracing; ``api_name`` is the public function that asked (for its error)."""
    if not isinstance(src, ASTSource):
        raise TypeError(
            f"{api_name} expects a tlx.ASTSource, got {type(src).__name__} (compile "
            "the kernel with tlx.ASTSource(fn=kernel, signature=..., constexprs=...))"
        )
    backend = make_backend(target)
    options = backend.parse_options(dict(options or {}, **src.parse_options()))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module, trace = src.traced_make_ir(
        target,
        options,
        backend.get_codegen_implementation(options),
        backend.get_module_map(),
        context,
        name_views=name_views,
    )
    return module, trace, backend, options


def kernel_plans(src: ASTSource, target, options=None) -> tuple[SpecPlan, ...]:
    """The plan of every spec of a kernel, as tlx made them while tracing it:
    one ``SpecPlan`` per ``tlx.storage_alias_spec`` and per ``local_alloc``
    without ``reuse``, in the order the kernel creates them (specs of called
    functions included).

    Takes what ``triton.compile`` takes: ``src`` a ``tlx.ASTSource``,
    ``target`` a ``GPUTarget`` (required: the plan depends on it, e.g. the
    SMEM limit), ``options`` the compile options (``{"num_warps": 4}``). Runs
    Triton's front end only (the kernel is traced to IR, which is dropped): no
    cache, no optimisation, no PTX, no GPU needed. A plan the planner rejects
    raises the same ``CompilationError`` compiling would raise."""
    _, trace, _, _ = front_end(src, target, options, "tlx.kernel_plans")
    return trace.spec_plans


class JITFunction(GluonJITFunction):
    """A Gluon JIT function whose kernels are compiled with TLX lowering."""

    def create_binder(self):
        result = super().create_binder()
        self.ASTSource = ASTSource
        return result


def jit(fn=None, overlap_values=None, **options):
    """Gluon's ``@gluon.jit`` with the TLX builtins: the kernel (the outermost
    function of a launch or of ``tlx.ASTSource``) must be ``@tlx.jit`` for
    ``tlx.storage_alias_spec``, ``tlx.local_alloc`` and the rest to work; the
    functions it calls may be ``@tlx.jit`` or ``@gluon.jit``. Takes the same
    keyword options as ``gluon.jit`` (``debug``, ``noinline``,
    ``do_not_specialize``, ...). ``overlap_values``: the integer arguments (by name) the
    inference of ``storage_alias_spec(..., overlap="auto")`` executes the kernel with
    (docs/suggest.md)."""

    def decorator(function):
        kernel = JITFunction(function, **options)
        kernel.overlap_values = dict(overlap_values or {})
        return kernel

    if fn is not None:
        return decorator(fn)
    return decorator
