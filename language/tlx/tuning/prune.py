"""Pruning an autotuner's configurations by their plans, before any is compiled.

Each configuration is traced by Triton's front end alone (``tlx.kernel_plans``: no
optimisation, no PTX, no GPU), the planner plans every spec, and the kernel's budget
(``tlx.kernel_budget``) says whether its regions fit the target. A configuration the
planner rejects, or whose regions exceed the target, is dropped with the planner's
reason before the autotuner compiles anything. ``PlanPruner`` is the pruner alone, for
``triton.autotune(..., prune_configs_by={"early_config_prune": tlx.PlanPruner(kernel)})``;
``tlx.autotune`` puts it in front of the user's own ``early_config_prune``. What was
pruned and why is ``PlanPruner.pruned`` and, with ``TLX_AUTOTUNE_LOG=1``, one line per
configuration on standard error (``log``).
"""

from __future__ import annotations

import copy
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import triton
from triton.compiler.errors import CompilationError

from .. import compat
from .._errors import TLXError, compile_failure
from ..api import ASTSource, JITFunction, kernel_plans
from ..planner import checked_ctas_per_sm
from ..report.budget import KernelBudget, budget_of, target_capability
from . import verdict_cache

LOG_ENVIRONMENT_VARIABLE = "TLX_AUTOTUNE_LOG"

# Config.all_kwargs() entries that are compile options, not kernel arguments (a launch takes
# enable_fp_fusion by keyword, so a configuration carries it among its kwargs).
_OPTION_NAMES = ("num_warps", "num_ctas", "num_stages", "maxnreg", "enable_fp_fusion")


def log_asked() -> bool:
    """Whether ``TLX_AUTOTUNE_LOG`` asks for tlx.autotune's log on standard error."""
    return os.environ.get(LOG_ENVIRONMENT_VARIABLE, "0") not in ("", "0")


def log(line: str) -> None:
    """Writes one line of tlx.autotune's log to standard error."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


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
        (param.name, compat.jit_type_of(arguments[param.name]))
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
    ``(config, reasons)`` in order; ``verdicts`` keeps every verdict.
    ``overlap_parameter`` names a constexpr parameter the kernel passes to
    ``storage_alias_spec(overlap=...)``: a configuration that does not fit with its own
    trees is tried with that parameter ``"auto"`` (the inferred trees, docs/suggest.md),
    and kept so when it fits; ``inferred`` maps each set of argument types to those,
    ``(config, the reasons it did not fit with its own trees)``."""

    def __init__(
        self,
        kernel: JITFunction,
        *,
        target=None,
        then: Callable | None = None,
        ctas_per_sm: int | str = 1,
        overlap_parameter: str | None = None,
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
            ctas_per_sm = checked_ctas_per_sm(ctas_per_sm)
        self.kernel = kernel
        self.target = target
        self.then = then
        self.ctas_per_sm = ctas_per_sm
        self.pruned: dict[tuple, tuple[tuple[triton.Config, tuple[str, ...]], ...]] = {}
        self.verdicts: dict[tuple, ConfigVerdict] = {}
        self.overlap_parameter = overlap_parameter
        self.inferred: dict[tuple, tuple[tuple[triton.Config, tuple[str, ...]], ...]] = {}

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
                signature[name] = compat.jit_type_of(value)
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
        """Traces the kernel for ``config`` and asks the planner and the budget, unless an
        earlier process did and Triton's cache keeps its verdict (``verdict_cache``)."""
        target = self.target or current_target()
        source, options = self.source(config, arguments)
        key = (_config_key(config), tuple(sorted(source.signature.items())), repr(target))
        known = self.verdicts.get(key)
        if known is not None:
            return known
        start = time.perf_counter()
        disk_key = verdict_cache.verdict_key(self.kernel, source, options, target, self.ctas_per_sm)
        stored = None if disk_key is None else verdict_cache.load(disk_key)
        if stored is not None:
            reasons, budget = stored
            verdict = ConfigVerdict(
                config, not reasons, reasons, budget, time.perf_counter() - start
            )
            self.verdicts[key] = verdict
            return verdict
        # A failure that ends in an exception other than Triton's (one a builtin or the front
        # end raised, which may depend on more than the source) is not kept on disk.
        lasting = True
        try:
            plans = kernel_plans(source, target, options)
        except CompilationError as error:
            message, other = compile_failure(error)
            budget, reasons, lasting = None, (message,), other is None
        else:
            budget = budget_of(
                plans, target_capability(target), self._ctas_per_sm(config, arguments)
            )
            reasons = budget.reasons
        if disk_key is not None and lasting:
            verdict_cache.store(disk_key, reasons, budget)
        elapsed = time.perf_counter() - start
        verdict = ConfigVerdict(config, not reasons, reasons, budget, elapsed)
        self.verdicts[key] = verdict
        return verdict

    def __call__(self, configs: Sequence[triton.Config], named_args: Mapping, **kwargs):
        arguments = {**named_args, **kwargs}
        kept, dropped, inferred = [], [], []
        for config in configs:
            verdict = self.verdict(config, arguments)
            if verdict.fits:
                kept.append(config)
                continue
            auto = self._with_inferred_trees(config)
            if auto is not None and self.verdict(auto, arguments).fits:
                kept.append(auto)
                inferred.append((config, verdict.reasons))
            else:
                dropped.append((config, verdict.reasons))
        self.pruned[argument_types(self.kernel, arguments)] = tuple(dropped)
        self.inferred[argument_types(self.kernel, arguments)] = tuple(inferred)
        if log_asked():
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

    def _with_inferred_trees(self, config: triton.Config) -> triton.Config | None:
        """``config`` with the overlap parameter ``"auto"`` (None without one, or when the
        configuration already sets it)."""
        name = self.overlap_parameter
        if name is None or config.kwargs.get(name) == "auto":
            return None
        auto = copy.copy(config)
        auto.kwargs = {**config.kwargs, name: "auto"}
        return auto

    def _log(self, kept, dropped) -> None:
        name = self.kernel.__name__
        for config, reasons in dropped:
            log(f"tlx.autotune {name}: pruned {config_text(config)}: {'; '.join(reasons)}")
        log(
            f"tlx.autotune {name}: {len(kept)} of {len(kept) + len(dropped)} configurations "
            "fit their plans"
        )
