"""Errors, warnings and the source locations they point at.

Errors found while a builtin runs are raised as ``TLXError``; Triton's code
generator turns them into a ``CompilationError`` at the line of the call. Errors
found after tracing (a spec that was never used) are raised directly as a
``CompilationError`` at the line of the ``local_alloc`` / ``storage_alias_spec``
they are about. Messages name the spec and buffers with the file:line where
they were created, so an error raised at a later line still names its cause.
"""

from __future__ import annotations

import ast
import os
import warnings
from dataclasses import dataclass

from triton.compiler.errors import CompilationError


class TLXError(ValueError):
    """A TLX rule was broken; raised while the kernel is traced."""


class TLXNameError(TLXError, AttributeError):
    """A name of the reference TLX that has no single meaning here (``tlx.async_tasks``):
    the message says what to use instead. An AttributeError too, so that ``hasattr``
    and Triton's dependency scan see the name as absent."""


class TLXWarning(UserWarning):
    """A TLX plan is legal but probably not what was meant (e.g. an unused spec)."""


@dataclass(frozen=True)
class SourceLocation:
    """Where a TLX object was created: the jit function's source and AST node."""

    file_name: str
    line: int
    column: int
    function_source: str | None
    node: ast.AST | None

    def __str__(self) -> str:
        return f"{os.path.basename(self.file_name)}:{self.line}"


def location_of_call(generator) -> SourceLocation:
    """The location of the builtin call the code generator is visiting."""
    node = generator.cur_node
    line = generator.begin_line + getattr(node, "lineno", 0)
    return SourceLocation(
        file_name=generator.file_name or "<unknown>",
        line=line,
        column=getattr(node, "col_offset", 0),
        function_source=generator.jit_fn.src if generator.jit_fn is not None else None,
        node=node,
    )


def compilation_error(location: SourceLocation, message: str) -> CompilationError:
    """A Triton compilation error that points at ``location``."""
    return CompilationError(location.function_source, location.node, message)


def compile_failure(error: CompilationError) -> tuple[str, BaseException | None]:
    """(what a failed trace says, the exception it ends in where that is not Triton's).
    Triton reports an error inside a called function as one at the call with no message,
    caused by one in the function: the reason is the innermost error's message (a planner's
    error raised in a helper function is one cause down). Where the chain ends instead in
    another exception, one that Triton's front end or a builtin raised, the reason is the
    innermost call's location and that exception, its type named, and it is returned too."""
    while error.error_message is None and isinstance(error.__cause__, CompilationError):
        error = error.__cause__
    if error.error_message is None and error.__cause__ is not None:
        cause = error.__cause__
        return f"{str(error).strip()}\n{type(cause).__name__}: {cause}", cause
    return (error.error_message or str(error)).strip(), None


def warn_at(location: SourceLocation, message: str) -> None:
    """Emits a ``TLXWarning`` attributed to the user's source line."""
    warnings.warn_explicit(message, TLXWarning, location.file_name, location.line)


def warn_deprecated_at(location: SourceLocation, message: str) -> None:
    """Emits a ``DeprecationWarning`` attributed to the user's source line."""
    warnings.warn_explicit(message, DeprecationWarning, location.file_name, location.line)
