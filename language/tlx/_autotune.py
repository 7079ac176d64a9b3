"""Plan-aware autotuning: configurations pruned by their plans before any is compiled.

Triton's autotuner compiles and times every configuration; a tuner that wants to skip
those that cannot fit estimates shared memory with a formula (operand tiles times
stages) that knows nothing of aliasing: it drops configurations whose buffers share
bytes and fit, and compiles ones that do not. Here each configuration is traced by
Triton's front end alone (``tlx.kernel_plans``: no optimisation, no PTX, no GPU), the
planner plans every spec, and ``tlx.kernel_budget`` says whether the kernel's regions fit
the target. A configuration the planner rejects, or whose regions exceed the target, is
dropped with the planner's reason before the autotuner compiles anything.

``tlx.autotune`` is ``triton.autotune`` with this pruning in front of the user's own
``early_config_prune``; ``tlx.PlanPruner`` is the pruner alone, for
``triton.autotune(..., prune_configs_by={"early_config_prune": tlx.PlanPruner(kernel)})``.
What was pruned and why is ``PlanPruner.pruned`` (``autotuner.pruned``) and, with
``TLX_AUTOTUNE_LOG=1``, one line per configuration on standard error.

Triton's autotuner then compiles each configuration as it first times it, one after the
other. ``tlx.autotune`` compiles those the plans keep on several threads first
(``compile_ahead``, through Triton's asynchronous compile mode), so the first call of a
key waits for about one compilation per thread rather than one per configuration.

Triton's autotuner times each configuration once, one after the other, and keeps the
fastest. ``do_bench`` varies by several percent from call to call on one configuration,
more than a kernel's best configurations differ, and where the host takes longer to launch
a call than the GPU to run it, it times the launch: that choice is partly chance.
``tlx.autotune`` times every configuration again on the GPU alone, call by call in turn,
then the few fastest of that survey with more calls, and keeps the one whose median is
lowest (``retime``).
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import triton
from triton.compiler.errors import CompilationError
from triton.runtime import _async_compile
from triton.runtime.jit import mangle_type

from ._budget import KernelBudget, kernel_budget
from ._errors import TLXError
from .api import ASTSource, JITFunction, kernel_plans
from .planner import checked_ctas_per_sm

LOG_ENVIRONMENT_VARIABLE = "TLX_AUTOTUNE_LOG"
# GPU cycles slept before each call the retiming times (about half a millisecond): longer
# than the host takes to launch it, so that the call is queued before its start event.
RETIME_SLEEP_CYCLES = 1_000_000
# Calls of each configuration before the retiming's timed ones (compilation, clocks).
RETIME_WARMUP_CALLS = 3
# Timed calls of each configuration in the retiming's survey, which picks its finalists.
SURVEY_ROUNDS = 5

# Config.all_kwargs() entries that are compile options, not kernel arguments.
_OPTION_NAMES = ("num_warps", "num_ctas", "num_stages", "maxnreg")
# Keyword arguments of a launch (JITFunction.run) that are no kernel arguments.
_LAUNCH_ONLY = ("grid", "warmup")


@dataclass(frozen=True)
class ConfigVerdict:
    """What the planner says of one configuration for one set of arguments: whether
    it ``fits``, the planner's ``reasons`` when it does not, the kernel's ``budget``
    (None when tracing failed before every spec was planned) and the ``seconds`` the
    verdict took (a front-end trace)."""

    config: triton.Config
    fits: bool
    reasons: tuple[str, ...]
    budget: KernelBudget | None
    seconds: float


def config_text(config: triton.Config) -> str:
    """``BLOCK_N=256, NUM_STAGES=4, num_warps=4``: the configuration's arguments and the
    compile options it sets."""
    options = {name: getattr(config, name, None) for name in ("num_warps", "num_ctas")}
    items = [*config.kwargs.items(), *((k, v) for k, v in options.items() if v is not None)]
    return ", ".join(f"{name}={value}" for name, value in items)


def _config_key(config: triton.Config) -> tuple:
    return tuple(sorted((name, repr(value)) for name, value in config.all_kwargs().items()))


def argument_types(kernel: JITFunction, arguments: Mapping) -> tuple:
    """(name, type) of each of ``kernel``'s arguments that is not a constexpr: the key of
    ``PlanPruner.pruned`` and of an autotuner's ``compile_seconds``."""
    return tuple(
        (param.name, mangle_type(arguments[param.name]))
        for param in kernel.params
        if not param.is_constexpr and arguments.get(param.name) is not None
    )


def current_target():
    """The GPU target of the current device (what Triton compiles for)."""
    return triton.runtime.driver.active.get_current_target()


class PlanPruner:
    """An ``early_config_prune`` for ``triton.autotune`` that keeps the configurations
    whose plans fit: ``PlanPruner(kernel)(configs, named_args, **kwargs)``.

    ``kernel`` is the ``@tlx.jit`` kernel; ``target`` the ``GPUTarget`` compiled for
    (default: the current device's); ``then`` the user's own ``early_config_prune``,
    applied to what is left. A configuration's ``pre_hook`` runs on the arguments before
    they are typed, as the autotuner runs it before a launch (it may set a tensor
    descriptor's block shape). ``ctas_per_sm`` says how many CTAs of the kernel are to run
    on one SM at once, each then fitting an equal share of its SMEM and TMEM
    (``tlx.kernel_budget``): an int for every configuration, or the name of one of the
    kernel's parameters whose value in each configuration (or call) gives it. A kernel
    made to run two CTAs an SM (its grid, its registers) is pruned where its regions do
    not fit half an SM, not where they would not fit a whole one. Verdicts are cached per
    configuration and argument types.
    ``pruned`` maps each set of argument types to the configurations dropped for it,
    ``(config, reasons)`` in order; ``verdicts`` keeps every verdict."""

    def __init__(
        self,
        kernel: JITFunction,
        *,
        target=None,
        then: Callable | None = None,
        ctas_per_sm: int | str = 1,
    ):
        if not isinstance(kernel, JITFunction):
            raise TypeError(f"tlx.PlanPruner takes a @tlx.jit kernel, got {type(kernel).__name__}")
        if isinstance(ctas_per_sm, str):
            constexprs = [param.name for param in kernel.params if param.is_constexpr]
            if ctas_per_sm not in constexprs:
                raise TLXError(
                    f'tlx.autotune of {kernel.__name__}: ctas_per_sm names "{ctas_per_sm}", '
                    f"which is not one of its constexpr parameters ({', '.join(constexprs)})"
                )
        else:
            checked_ctas_per_sm(ctas_per_sm)
        self.kernel = kernel
        self.target = target
        self.then = then
        self.ctas_per_sm = ctas_per_sm
        self.pruned: dict[tuple, tuple[tuple[triton.Config, tuple[str, ...]], ...]] = {}
        self.verdicts: dict[tuple, ConfigVerdict] = {}

    def source(self, config: triton.Config, arguments: Mapping) -> tuple[ASTSource, dict]:
        """The kernel as ``tlx.kernel_plans`` traces it for ``config``: its AST source
        (argument types, constexprs) and its compile options."""
        values = {**arguments, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook(values)
        signature, constexprs = {}, {}
        for param in self.kernel.params:
            name = param.name
            if name in values:
                value = values[name]
            elif param.has_default:
                value = param.default
            else:
                raise TLXError(
                    f"tlx.autotune of {self.kernel.__name__}: no value for parameter "
                    f'"{name}" in the call or in the configuration {config_text(config)}'
                )
            if param.is_constexpr or value is None:
                signature[name] = "constexpr"
                constexprs[name] = value
            else:
                signature[name] = mangle_type(value)
        options = {name: values[name] for name in _OPTION_NAMES if values.get(name) is not None}
        return ASTSource(fn=self.kernel, signature=signature, constexprs=constexprs), options

    def _ctas_per_sm(self, config: triton.Config, arguments: Mapping) -> int:
        if not isinstance(self.ctas_per_sm, str):
            return self.ctas_per_sm
        name = self.ctas_per_sm
        values = {**arguments, **config.all_kwargs()}
        (param,) = (param for param in self.kernel.params if param.name == name)
        value = values.get(name, param.default if param.has_default else None)
        try:
            return checked_ctas_per_sm(value)
        except ValueError as error:
            raise TLXError(
                f"tlx.autotune of {self.kernel.__name__}: {name}={value!r} in the call or the "
                f"configuration {config_text(config)}: {error}"
            ) from None

    def verdict(self, config: triton.Config, arguments: Mapping) -> ConfigVerdict:
        """Traces the kernel for ``config`` and asks the planner and the budget."""
        target = self.target or current_target()
        source, options = self.source(config, arguments)
        key = (_config_key(config), tuple(sorted(source.signature.items())), repr(target))
        known = self.verdicts.get(key)
        if known is not None:
            return known
        start = time.perf_counter()
        try:
            plans = kernel_plans(source, target, options)
        except CompilationError as error:
            # Triton wraps an error once per @jit function it passes through: a spec sealed in
            # a helper function carries the planner's message one cause down.
            while error.error_message is None and isinstance(error.__cause__, CompilationError):
                error = error.__cause__
            message = error.error_message or str(error)
            budget, reasons = None, (message.strip(),)
        else:
            budget = kernel_budget(plans, target, self._ctas_per_sm(config, arguments))
            reasons = budget.reasons
        elapsed = time.perf_counter() - start
        verdict = ConfigVerdict(config, not reasons, reasons, budget, elapsed)
        self.verdicts[key] = verdict
        return verdict

    def __call__(self, configs: Sequence[triton.Config], named_args: Mapping, **kwargs):
        arguments = {**named_args, **kwargs}
        kept, dropped = [], []
        for config in configs:
            verdict = self.verdict(config, arguments)
            if verdict.fits:
                kept.append(config)
            else:
                dropped.append((config, verdict.reasons))
        self.pruned[argument_types(self.kernel, arguments)] = tuple(dropped)
        if os.environ.get(LOG_ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
            self._log(kept, dropped)
        if not kept:
            reasons = "\n".join(
                f"  {config_text(config)}: {'; '.join(why)}" for config, why in dropped
            )
            raise TLXError(
                f"tlx.autotune of {self.kernel.__name__}: every configuration was pruned "
                f"by its plan:\n{reasons}"
            )
        if self.then is not None:
            kept = list(self.then(kept, named_args, **kwargs))
        return kept

    def _log(self, kept, dropped) -> None:
        name = self.kernel.__name__
        for config, reasons in dropped:
            sys.stderr.write(
                f"tlx.autotune {name}: pruned {config_text(config)}: {'; '.join(reasons)}\n"
            )
        sys.stderr.write(
            f"tlx.autotune {name}: {len(kept)} of {len(kept) + len(dropped)} configurations "
            "fit their plans\n"
        )
        sys.stderr.flush()


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
    if workers <= 1 or _async_compile.active_mode.get() is not None:
        return 0.0
    start = time.perf_counter()
    with (
        ThreadPoolExecutor(workers, thread_name_prefix="tlx-compile") as executor,
        _async_compile.AsyncCompileMode(executor, ignore_errors=True),
    ):
        for config in configs:
            values = {**arguments, **config.all_kwargs()}
            if config.pre_hook is not None:
                config.pre_hook(values)
            for launch_only in _LAUNCH_ONLY:
                values.pop(launch_only, None)
            kernel.warmup(grid=(1,), **values)
    return time.perf_counter() - start


def _first_time(timing) -> float:
    """The time ``do_bench`` gave (the median, with quantiles a list led by it)."""
    return timing[0] if isinstance(timing, (list, tuple)) else timing


def kernel_calls(tuner, configs: Sequence, args: Sequence, kwargs: Mapping) -> dict:
    """{configuration: the call that launches ``tuner``'s kernel with it}, each made by the
    tuner's own benchmark (its pre_hooks and post_hook included), which hands it to
    ``do_bench``: here to one that keeps it."""
    calls = {}
    saved = tuner.__dict__.pop("do_bench", None)  # a cached_property's value
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


def gpu_times(calls: Mapping, rounds: int) -> dict:
    """{key: median milliseconds of ``calls[key]()`` over ``rounds`` calls}, the calls made
    in turn (one of each, then again) so that the GPU's clocks drift alike for all. Each is
    timed on the GPU alone: the L2 cleared before it as ``do_bench`` clears it, then queued
    behind a GPU sleep, so that its events time the GPU's work and not the host's launch,
    which costs every configuration of a kernel the same but varies from call to call."""
    driver = triton.runtime.driver.active
    device = driver.get_device_interface()
    cache = driver.get_empty_cache_for_benchmark()
    for _ in range(RETIME_WARMUP_CALLS):
        for call in calls.values():
            call()
    samples = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            start = device.Event(enable_timing=True)
            end = device.Event(enable_timing=True)
            driver.clear_cache(cache)
            device._sleep(RETIME_SLEEP_CYCLES)
            start.record()
            call()
            end.record()
            end.synchronize()
            samples[key].append(start.elapsed_time(end))
    return {key: statistics.median(times) for key, times in samples.items()}


def retime(tuner, key, args: Sequence, kwargs: Mapping, top: int, rounds: int) -> dict | None:
    """Times every configuration of ``tuner``'s last timing (``key``'s) again on the GPU
    alone (``gpu_times``), ``SURVEY_ROUNDS`` calls each in turn, then the ``top`` fastest of
    that survey ``rounds`` calls each, and makes the one with the lowest median ``key``'s
    choice (``tuner.cache``, ``tuner.best_config``). A GPU's clocks drift over the seconds a
    key's configurations take to time one after another, and ``do_bench`` varies by several
    percent from call to call: more than a kernel's best configurations differ. Where the
    host takes longer to launch a call than the GPU to clear the L2 and run it, ``do_bench``
    times the launch, the same for every configuration: its ranking is then noise, so the
    finalists come from the survey, not from it. ``args`` and ``kwargs`` are the launch's, as
    the tuner benchmarks with them. Returns {configuration: median ms} of the finalists, or
    None when fewer than two configurations were timed."""
    timings = tuner.configs_timings
    timed = [config for config in timings if math.isfinite(_first_time(timings[config]))]
    if len(timed) < 2:
        return None
    calls = kernel_calls(tuner, timed, args, kwargs)
    survey = gpu_times(calls, SURVEY_ROUNDS)
    finalists = sorted(timed, key=survey.get)[:top]
    medians = gpu_times({config: calls[config] for config in finalists}, rounds)
    best = min(finalists, key=medians.get)
    tuner.cache[key] = best
    tuner.best_config = best
    return medians


def _retiming_run(tuner, top: int, rounds: int, retimed: dict):
    """``tuner.run``, which after a key's first timing retimes its configurations
    (``retime``) and launches the kernel again with the choice: the timing runs overwrote
    its outputs."""
    run = tuner.run

    def retiming_run(*args, **kwargs):
        known = set(tuner.cache)
        timed_before = getattr(tuner, "configs_timings", None)
        result = run(*args, **kwargs)
        new_keys = set(tuner.cache) - known
        timed = getattr(tuner, "configs_timings", None)
        if len(new_keys) != 1 or timed is None or timed is timed_before:
            return result  # no key was timed by this call
        (key,) = new_keys
        first_choice = tuner.cache[key]
        medians = retime(tuner, key, args, kwargs, top, rounds)
        if medians is None:
            return result
        retimed[key] = medians
        if os.environ.get(LOG_ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
            chosen = tuner.cache[key]
            surveyed = sum(math.isfinite(_first_time(t)) for t in tuner.configs_timings.values())
            first = (
                f"{medians[first_choice] * 1e3:.1f} us"
                if first_choice in medians
                else "not a finalist"
            )
            sys.stderr.write(
                f"tlx.autotune {tuner.base_fn.__name__}: surveyed {surveyed} configurations "
                f"over {SURVEY_ROUNDS} calls each, retimed {len(medians)} finalists over "
                f"{rounds} calls each for key {key}: chose {config_text(chosen)} "
                f"({medians[chosen] * 1e3:.1f} us; first timing's choice {first})\n"
            )
            sys.stderr.flush()
        return run(*args, **kwargs)

    return retiming_run


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
    each is timed again on the GPU alone (``SURVEY_ROUNDS`` calls each, in turn), the
    ``retime_top`` fastest of that survey ``retime_rounds`` calls more each, and the key
    takes the one with the lowest median (``retime``; ``retime_top=1`` keeps Triton's
    choice). The returned autotuner has ``pruned`` (the
    configurations dropped and why, per set of argument types), ``plan_pruner``,
    ``compile_seconds`` (the time each key's configurations took to compile ahead) and
    ``retimed`` ({key: {finalist: median ms}})."""
    if compile_workers is None:
        compile_workers = os.cpu_count() or 1
    for name, value in (
        ("compile_workers", compile_workers),
        ("retime_top", retime_top),
        ("retime_rounds", retime_rounds),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"tlx.autotune: {name} must be a positive int, got {value!r}")

    def decorator(kernel):
        prune = dict(prune_configs_by or {})
        pruner = PlanPruner(
            kernel,
            target=target,
            then=prune.get("early_config_prune"),
            ctas_per_sm=ctas_per_sm,
        )
        compile_seconds = {}

        def prune_and_compile(configs, named_args, **kwargs):
            kept = pruner(configs, named_args, **kwargs)
            if prune.get("perf_model") is None:
                arguments = {**named_args, **kwargs}
                seconds = compile_ahead(kernel, kept, arguments, compile_workers)
                compile_seconds[argument_types(kernel, arguments)] = seconds
                if seconds and os.environ.get(LOG_ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
                    sys.stderr.write(
                        f"tlx.autotune {kernel.__name__}: compiled {len(kept)} configurations "
                        f"on {min(compile_workers, len(kept))} threads in {seconds:.1f} s\n"
                    )
                    sys.stderr.flush()
            return kept

        prune["early_config_prune"] = prune_and_compile
        tuner = triton.autotune(configs, key, prune_configs_by=prune, **autotune_options)(kernel)
        tuner.plan_pruner = pruner
        tuner.pruned = pruner.pruned
        tuner.compile_seconds = compile_seconds
        tuner.retimed = {}
        if retime_top > 1:
            tuner.run = _retiming_run(tuner, retime_top, retime_rounds, tuner.retimed)
        return tuner

    return decorator
