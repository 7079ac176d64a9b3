"""The plans' verdicts kept on disk, in Triton's cache, so that a later process prunes a
configuration it has pruned before without tracing the kernel again.

A trace is most of what pruning costs (tens of milliseconds a configuration, a hundred on a
slow CPU: a few seconds for a space of a hundred), and every process that tunes pays it
again, where Triton's cache spares it the compilation. A verdict is a function of what keys
the trace: the kernel's source and the JIT functions it calls (the JIT function's
``cache_key``, which keys Triton's compiled kernels too), the argument types, constexprs and
compile options, the target, the share of an SM, Triton itself and tlx itself (its sources
and its planner library: ``tlx_fingerprint``). A constexpr whose text names an address (an
object without a value's repr) makes the verdict not kept: its key would differ in every
process. ``TRITON_ALWAYS_COMPILE``, which makes Triton compile what its cache holds, makes
the pruner trace what it holds too.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path

from .. import compat

FILE_NAME = "tlx_verdict.pickle"
# Bumped when what a file holds changes shape.
FORMAT = 1


@functools.cache
def tlx_fingerprint() -> str:
    """The hash of tlx's sources and its planner library (every file of the package)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".so"):
            digest.update(str(path.relative_to(package)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def verdict_key(kernel, source, options, target, ctas_per_sm) -> str | None:
    """The cache key of the verdict on ``kernel`` traced as ``source`` (its signature and
    constexprs) with compile ``options`` for ``target`` and ``ctas_per_sm`` (an int, or the
    name of the constexpr that gives it); None when a constexpr's text names an address."""
    constexprs = sorted((repr(path), repr(value)) for path, value in source.constants.items())
    if any(" at 0x" in text for _, text in constexprs):
        return None
    parts = [
        f"format {FORMAT}",
        tlx_fingerprint(),
        compat.triton_fingerprint(),
        kernel.cache_key,
        repr(sorted(source.signature.items())),
        repr(constexprs),
        repr(sorted(options.items())),
        repr(target),
        repr(ctas_per_sm),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def load(key: str) -> tuple | None:
    """(reasons, budget) kept under ``key``, or None (never kept, unreadable, or
    ``TRITON_ALWAYS_COMPILE`` set)."""
    if compat.always_compile():
        return None
    path = compat.cache_directory(key).get_file(FILE_NAME)
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            stored_format, reasons, budget = pickle.load(file)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        return None
    return (reasons, budget) if stored_format == FORMAT else None


def store(key: str, reasons: tuple[str, ...], budget) -> None:
    """Keeps (reasons, budget) under ``key``."""
    compat.cache_directory(key).put(pickle.dumps((FORMAT, reasons, budget)), FILE_NAME)
