"""What makes a TLX function (or class) a builtin of Gluon kernels."""

from __future__ import annotations

import functools
import inspect

from triton.experimental.gluon.language._semantic import GluonSemantic

from ._errors import TLXError
from ._trace import active_trace

TRITON_BUILTIN_MARKER = "__triton_builtin__"


def check_context(name: str, semantic) -> None:
    """Raises unless a TLX builtin called ``name`` runs while a ``@tlx.jit``
    kernel is traced (Triton's code generator passes ``_semantic``)."""
    if semantic is None:
        raise TLXError(f"{name} can only be called inside a @tlx.jit kernel")
    if not isinstance(semantic, GluonSemantic):
        raise TLXError(
            f"{name} is a Gluon builtin: decorate the kernel with @tlx.jit instead of @triton.jit"
        )
    if active_trace() is None:
        raise TLXError(
            f"{name} is used outside a @tlx.jit kernel: decorate the kernel with @tlx.jit "
            "(to compile it ahead of time use tlx.ASTSource, not GluonASTSource)"
        )


def tlx_builtin(fn):
    """Marks ``fn`` as a builtin: Triton's code generator calls it while tracing
    with ``_semantic`` and ``_generator``. It must run inside a kernel compiled
    by TLX (``@tlx.jit``); anywhere else it raises a TLXError."""

    @functools.wraps(fn)
    def wrapper(*args, _semantic=None, _generator=None, **kwargs):
        check_context(f"tlx.{fn.__name__}", _semantic)
        return fn(*args, _semantic=_semantic, _generator=_generator, **kwargs)

    setattr(wrapper, TRITON_BUILTIN_MARKER, True)
    wrapper.signature = inspect.signature(fn)
    return wrapper
