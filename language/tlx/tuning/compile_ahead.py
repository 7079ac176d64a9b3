"""Compiling an autotuner's configurations ahead, on several threads.

Triton's autotuner compiles each configuration as it first times it, one after the
other. ``compile_ahead`` compiles those the plans keep on several threads first, through
Triton's asynchronous compile mode (``tlx.compat.async_compile_mode``), into the kernel's
cache, so the first call of a key waits for about one compilation per thread rather than
one per configuration.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import triton

from .. import compat
from ..api import JITFunction

# Keyword arguments of a launch (JITFunction.run) that are no kernel arguments.
_LAUNCH_ONLY = ("grid", "warmup")


def compile_ahead(
    kernel: JITFunction,
    configs: Sequence[triton.Config],
    arguments: Mapping,
    workers: int,
) -> float:
    """Compiles ``kernel`` for each of ``configs`` with the call's ``arguments``, on up to
    ``workers`` threads, into the kernel's cache, where the autotuner's launches of the same
    configurations find them. Returns the seconds it took.

    Each configuration's ``pre_hook`` runs on the arguments first, as before the autotuner's
    launch (it may set a tensor descriptor's block shape, which is part of the kernel's
    type). ``arguments`` may hold the launch's ``grid`` and ``warmup`` (the autotuner hands
    its prune hook the launch's keyword arguments): they are not compiled. Errors are left
    for the autotuner's own compilation of that configuration to raise, so it handles them
    as it would without this. Nothing is compiled ahead with one worker or one
    configuration, or while another asynchronous compile mode is active."""
    workers = min(workers, len(configs))
    if workers <= 1 or compat.async_compile_active():
        return 0.0
    start = time.perf_counter()
    with (
        ThreadPoolExecutor(workers, thread_name_prefix="tlx-compile") as executor,
        compat.async_compile_mode(executor, ignore_errors=True),
    ):
        for config in configs:
            values = {**arguments, **config.all_kwargs()}
            if config.pre_hook is not None:
                config.pre_hook(values)
            for launch_only in _LAUNCH_ONLY:
                values.pop(launch_only, None)
            kernel.warmup(grid=(1,), **values)
    return time.perf_counter() - start
