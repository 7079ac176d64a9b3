"""``tlx.autotune``: ``triton.autotune`` with the plans' pruning in front of its timing
(``prune``), the configurations kept compiled ahead (``compile_ahead``) and the timing's
choice retimed on the GPU alone (``retime``)."""

from __future__ import annotations

import os

import triton

from .. import compat, cuda_context
from .compile_ahead import compile_ahead
from .prune import PlanPruner, argument_types, log, log_asked
from .retime import retiming_run, screen

# Options of ``triton.autotune`` that say how the autotuner is to time each configuration.
TRITON_TIMING_OPTIONS = frozenset({"do_bench", "warmup", "rep", "use_cuda_graph"})


def _checked_positive(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"tlx.autotune: {name} must be a positive int, got {value!r}")
    return value


def _in_current_context(run):
    """``run`` with the context of its first CUDA tensor's device (a descriptor's tensor, or
    a pointer's) current on the calling thread (``cuda_context``: the timing's launches
    encode TMA descriptors)."""

    def run_in_current_context(*args, **kwargs):
        for argument in args:
            tensor = getattr(argument, "base", argument)
            if getattr(tensor, "is_cuda", False):
                cuda_context.make_current(tensor.get_device())
                break
        return run(*args, **kwargs)

    return run_in_current_context


def autotune(
    configs,
    key,
    *,
    target=None,
    ctas_per_sm=1,
    prune_configs_by=None,
    compile_workers=None,
    retime_top=3,
    retime_rounds=25,
    overlap_parameter=None,
    **autotune_options,
):
    """``triton.autotune`` for a ``@tlx.jit`` kernel, whose configurations are first
    pruned by their plans (``PlanPruner``): only those the planner accepts and whose
    regions fit the target are compiled and timed.

    Takes what ``triton.autotune`` takes (``configs``, ``key``, ``prune_configs_by``,
    ``warmup``, ``rep``, ``do_bench``, ...); an ``early_config_prune`` in
    ``prune_configs_by`` runs on what the plans leave. ``target`` fixes the
    ``GPUTarget`` (default: the current device's); ``ctas_per_sm`` how many CTAs are to
    share an SM (an int, or the name of a constexpr parameter that gives it for each
    configuration; ``PlanPruner``). What is left is compiled on
    ``compile_workers`` threads (default: one per CPU; 1 compiles each configuration when
    it is first timed, as Triton does) before any is timed, unless a ``perf_model`` in
    ``prune_configs_by`` is to choose among them. Once a key's configurations are timed,
    each is timed again on the GPU alone (up to ``SURVEY_ROUNDS`` calls each, in turn,
    where there are more than ``retime_top``), the ``retime_top`` fastest of that survey up
    to ``retime_rounds`` calls more each (fewer where a call is long: ``rounds_within``), and
    the key takes the one with the lowest median (``retime``; ``retime_top=1`` keeps
    Triton's choice). As the survey picks the finalists, the autotuner's own timing only screens
    each configuration (``retime.screen``: one launch, one timed call) unless
    ``autotune_options`` say how to time (``do_bench``, ``warmup``, ``rep``,
    ``use_cuda_graph``) or ``retime_top`` is 1. ``overlap_parameter``: ``PlanPruner``'s (a
    configuration that fits only with the inferred trees is kept so, listed in
    ``inferred``). The returned autotuner has ``pruned`` (the
    configurations dropped and why, per set of argument types), ``plan_pruner``,
    ``compile_seconds`` (the time each key's configurations took to compile ahead) and
    ``retimed`` ({key: {finalist: median ms}})."""
    if compile_workers is None:
        compile_workers = os.cpu_count() or 1
    compile_workers = _checked_positive("compile_workers", compile_workers)
    retime_top = _checked_positive("retime_top", retime_top)
    retime_rounds = _checked_positive("retime_rounds", retime_rounds)
    if retime_top > 1 and not TRITON_TIMING_OPTIONS & autotune_options.keys():
        autotune_options["do_bench"] = screen

    def decorator(kernel):
        prune = dict(prune_configs_by or {})
        pruner = PlanPruner(
            kernel,
            target=target,
            then=prune.get("early_config_prune"),
            ctas_per_sm=ctas_per_sm,
            overlap_parameter=overlap_parameter,
        )
        compile_seconds = {}

        def prune_and_compile(configs, named_args, **kwargs):
            kept = pruner(configs, named_args, **kwargs)
            if prune.get("perf_model") is None:
                arguments = {**named_args, **kwargs}
                seconds = compile_ahead(kernel, kept, arguments, compile_workers)
                compile_seconds[argument_types(kernel, arguments)] = seconds
                if seconds and log_asked():
                    log(
                        f"tlx.autotune {kernel.__name__}: compiled {len(kept)} configurations "
                        f"on {min(compile_workers, len(kept))} threads in {seconds:.1f} s"
                    )
            return kept

        prune["early_config_prune"] = prune_and_compile
        tuner = triton.autotune(configs, key, prune_configs_by=prune, **autotune_options)(kernel)
        tuner.plan_pruner = pruner
        tuner.pruned = pruner.pruned
        tuner.inferred = pruner.inferred
        tuner.compile_seconds = compile_seconds
        tuner.retimed = {}
        if retime_top > 1:
            compat.wrap_autotuner_run(
                tuner,
                retiming_run(tuner, kernel.__name__, retime_top, retime_rounds, tuner.retimed),
            )
        compat.wrap_autotuner_run(tuner, _in_current_context)
        return tuner

    return decorator
