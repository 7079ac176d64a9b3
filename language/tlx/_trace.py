"""The TLX state of one kernel compilation, ``@tlx.jit``, ``tlx.ASTSource`` and
``tlx.kernel_plans``.

``tlx.ASTSource`` is Gluon's AST source that traces the kernel inside a
``KernelTrace``: TLX builtins register their specs there, and when tracing is
done the trace reports the specs that were never sealed (their buffers are not
used, but their plans must still be legal), records every spec's plan
(``SpecPlan``) and, with ``TLX_DUMP_ALIAS_IR=1``, prints the TLX-dialect module
of the kernel's specs. ``tlx.kernel_plans`` traces a kernel with Triton's front
end alone and returns those records.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path

from triton._C.libtriton import ir
from triton.compiler.compiler import make_backend
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction

from . import _dump, planner
from ._errors import TLXError, location_of_call
from ._lowering import SpecState, check_unsealed, planner_storage
from ._plans import SpecPlan
from .compat import in_loop_carry_discovery

DUMP_ENVIRONMENT_VARIABLE = "TLX_DUMP_ALIAS_IR"

_active = threading.local()


class KernelTrace:
    """Specs created while one kernel is traced, in creation order."""

    def __init__(self, kernel_name: str, target, target_name: str, options):
        self.kernel_name = kernel_name
        self.target = target
        self.target_name = target_name
        self.options = options
        self.specs: list[SpecState] = []
        # Set by finish: the plan of every spec, in creation order.
        self.spec_plans: tuple[SpecPlan, ...] = ()

    @property
    def capability(self) -> int:
        """The CUDA compute capability compiled for; 0 (unknown to the planner)
        for targets without one."""
        arch = self.target.arch
        return arch if isinstance(arch, int) and not isinstance(arch, bool) else 0

    def check_storage(self, storage) -> None:
        """Raises unless the target has ``storage`` (TMEM needs Blackwell)."""
        problem = planner.storage_unavailable(planner_storage(storage), self.capability)
        if problem:
            raise TLXError(problem)

    def register(self, spec: SpecState) -> None:
        self.specs.append(spec)

    def finish(self) -> None:
        """Reports the specs never sealed, records every spec's plan, then dumps
        when asked to."""
        for spec in self.specs:
            if not spec.sealed:
                check_unsealed(spec)
        self.spec_plans = tuple(spec.record() for spec in self.specs)
        if os.environ.get(DUMP_ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
            sys.stderr.write(_dump.module_text(self))
            sys.stderr.flush()


def active_trace() -> KernelTrace | None:
    """The trace of the kernel being compiled on this thread, if it is a TLX one."""
    stack = getattr(_active, "stack", None)
    return stack[-1] if stack else None


def assigned_name(generator, fallback: str) -> str:
    """The variable the value being built is assigned to (``a = tlx.local_alloc(...)``
    names the buffer "a"), else ``fallback`` and the line number."""
    name = generator.name_loc_as_prefix
    if name:
        return name
    return f"{fallback}_line{location_of_call(generator).line}"


def new_spec_state(semantic, generator, name, storage, explicit_size_bytes, *, private=False):
    """A spec's trace-time state, registered with the kernel's trace. A spec made
    during a loop's dry run (whose IR Triton throws away) is not registered."""
    trace = active_trace()
    trace.check_storage(storage)
    spec = SpecState(
        name,
        storage,
        explicit_size_bytes,
        location_of_call(generator),
        semantic.builder.get_insertion_block(),
        generator.function_name,
        private=private,
        capability=trace.capability,
    )
    if not in_loop_carry_discovery(generator):
        trace.register(spec)
    return spec


def _package_fingerprint() -> str:
    """A hash of this package's code (Python and planner extension), so that a
    kernel compiled by another version of TLX is not taken from Triton's cache."""
    cached = getattr(_package_fingerprint, "value", None)
    if cached is None:
        digest = hashlib.sha256()
        package = Path(__file__).resolve().parent
        for path in sorted(package.glob("*.py")) + sorted(package.glob("_planner*")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
        cached = digest.hexdigest()
        _package_fingerprint.value = cached
    return cached


class ASTSource(GluonASTSource):
    """Gluon's AST source with TLX lowering: use it to compile a ``@tlx.jit``
    kernel ahead of time, e.g. ``triton.compile(tlx.ASTSource(fn=kernel,
    signature={"x": "*fp16"}, constexprs={"N": 64}), target=GPUTarget("cuda",
    90, 32))``. Launching a ``@tlx.jit`` kernel uses it automatically."""

    def hash(self):
        return hashlib.sha256((super().hash() + _package_fingerprint()).encode()).hexdigest()

    def make_ir(self, target, options, codegen_fns, module_map, context):
        module, _ = self.traced_make_ir(target, options, codegen_fns, module_map, context)
        return module

    def traced_make_ir(self, target, options, codegen_fns, module_map, context):
        """Gluon's ``make_ir`` inside a ``KernelTrace``: (module, finished trace)."""
        target_name = make_backend(target).get_target_name(options)
        trace = KernelTrace(self.fn.__name__, target, target_name, options)
        stack = getattr(_active, "stack", None)
        if stack is None:
            stack = _active.stack = []
        stack.append(trace)
        try:
            module = super().make_ir(target, options, codegen_fns, module_map, context)
            trace.finish()
        finally:
            stack.pop()
        return module, trace


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
    if not isinstance(src, ASTSource):
        raise TypeError(
            f"tlx.kernel_plans expects a tlx.ASTSource, got {type(src).__name__} (compile "
            "the kernel with tlx.ASTSource(fn=kernel, signature=..., constexprs=...))"
        )
    backend = make_backend(target)
    # The front end of triton.compile, as every supported Triton release calls it.
    options = backend.parse_options(dict(options or {}, **src.parse_options()))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    _, trace = src.traced_make_ir(
        target,
        options,
        backend.get_codegen_implementation(options),
        backend.get_module_map(),
        context,
    )
    return trace.spec_plans


class JITFunction(GluonJITFunction):
    """A Gluon JIT function whose kernels are compiled with TLX lowering."""

    def create_binder(self):
        result = super().create_binder()
        self.ASTSource = ASTSource
        return result


def jit(fn=None, **options):
    """Gluon's ``@gluon.jit`` with the TLX builtins: the kernel (the outermost
    function of a launch or of ``tlx.ASTSource``) must be ``@tlx.jit`` for
    ``tlx.storage_alias_spec``, ``tlx.local_alloc`` and the rest to work; the
    functions it calls may be ``@tlx.jit`` or ``@gluon.jit``. Takes the same
    keyword options as ``gluon.jit`` (``debug``, ``noinline``,
    ``do_not_specialize``, ...)."""

    def decorator(function):
        return JITFunction(function, **options)

    if fn is not None:
        return decorator(fn)
    return decorator
