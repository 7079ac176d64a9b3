"""The plans' verdicts kept in Triton's cache (``tlx.tuning.verdict_cache``): a later pruner,
as in a later process, finds them without tracing the kernel, and anything a verdict depends
on changes its key."""

import ast

import pytest
import tlx
import triton
from _helpers import SM90, SM100
from test_autotune import arguments, ring_kernel
from tlx.tuning import prune, verdict_cache


@pytest.fixture(autouse=True)
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))


def ring_config(stages, alias=True, block=128):
    return triton.Config({"BLOCK": block, "STAGES": stages, "ALIAS": alias}, num_warps=4)


def counted_traces(monkeypatch) -> list:
    """The traces made from now on (``tlx.kernel_plans``'s calls), each still made."""
    traces = []
    original = prune.kernel_plans

    def counted(*args, **kwargs):
        traces.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(prune, "kernel_plans", counted)
    return traces


def without_traces(monkeypatch):
    def trace(*args, **kwargs):
        pytest.fail("the kernel was traced although its verdict is in the cache")

    monkeypatch.setattr(prune, "kernel_plans", trace)


@pytest.mark.parametrize("config", [ring_config(3), ring_config(7, alias=False, block=256)])
def test_a_later_pruner_finds_each_verdict_without_tracing(config, monkeypatch):
    traced = tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments())
    without_traces(monkeypatch)
    found = tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments())
    assert (found.fits, found.reasons, found.budget) == (traced.fits, traced.reasons, traced.budget)
    assert found.config is config


def test_a_budget_over_the_share_of_an_sm_is_kept_with_its_diagnostic(monkeypatch):
    from test_autotune import shared_sm_ring_kernel

    config = triton.Config({"STAGES": 4, "CTAS_PER_SM": 2}, num_warps=4)

    def pruner():
        return tlx.PlanPruner(shared_sm_ring_kernel, target=SM90, ctas_per_sm="CTAS_PER_SM")

    traced = pruner().verdict(config, arguments())
    assert not traced.fits and traced.budget is not None and not traced.budget.fits
    without_traces(monkeypatch)
    found = pruner().verdict(config, arguments())
    assert found.budget == traced.budget and found.reasons == traced.reasons
    assert found.budget.describe() == traced.budget.describe()


def test_a_verdict_for_another_target_or_share_of_an_sm_is_traced_again(monkeypatch):
    tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(3), arguments())
    traces = counted_traces(monkeypatch)
    tlx.PlanPruner(ring_kernel, target=SM100).verdict(ring_config(3), arguments())
    tlx.PlanPruner(ring_kernel, target=SM90, ctas_per_sm=2).verdict(ring_config(3), arguments())
    tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(4), arguments())
    assert len(traces) == 3


def keyed(**changes):
    pruner = tlx.PlanPruner(ring_kernel, target=SM90)
    source, options = pruner.source(ring_config(3), arguments())
    parts = {"kernel": ring_kernel, "options": options, "target": SM90, "ctas_per_sm": 1}
    parts.update(changes)
    for name, value in parts.pop("constexprs", {}).items():
        source.constants[(ring_kernel.arg_names.index(name),)] = value
    return verdict_cache.verdict_key(source=source, **parts)


def test_the_key_changes_with_all_a_verdict_depends_on():
    from test_autotune import shared_sm_ring_kernel

    keys = [
        keyed(),
        keyed(kernel=shared_sm_ring_kernel),
        keyed(options={"num_warps": 8}),
        keyed(target=SM100),
        keyed(ctas_per_sm=2),
        keyed(constexprs={"STAGES": 4}),
    ]
    assert keys[0] == keyed() and len(set(keys)) == len(keys)


def test_a_constexpr_that_names_an_address_is_not_kept():
    assert keyed(constexprs={"BLOCK": object()}) is None


def test_an_unreadable_verdict_is_traced_again(monkeypatch):
    config = ring_config(3)
    tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments())
    source, options = tlx.PlanPruner(ring_kernel, target=SM90).source(config, arguments())
    key = verdict_cache.verdict_key(ring_kernel, source, options, SM90, 1)
    path = tlx.compat.cache_directory(key).get_file(verdict_cache.FILE_NAME)
    with open(path, "wb") as file:
        file.write(b"not a pickle")
    assert verdict_cache.load(key) is None
    assert tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments()).fits
    assert verdict_cache.load(key) is not None


def test_triton_always_compile_makes_the_pruner_trace_again(monkeypatch):
    config = ring_config(3)
    tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments())
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    traces = []
    original = prune.kernel_plans
    monkeypatch.setattr(
        prune, "kernel_plans", lambda *a, **k: traces.append(a) or original(*a, **k)
    )
    assert tlx.PlanPruner(ring_kernel, target=SM90).verdict(config, arguments()).fits
    assert len(traces) == 1


def failing_trace(cause):
    """A trace that fails as Triton reports an error inside a called function: a
    ``CompilationError`` at the call without a message, caused by ``cause``."""

    def trace(*args, **kwargs):
        source = "def kernel():\n    helper()\n"
        call = ast.parse("helper()", mode="eval").body
        call.lineno, call.col_offset = 2, 4
        raise triton.compiler.errors.CompilationError(source, call, None) from cause

    return trace


def test_a_failure_raised_outside_triton_is_named_and_not_kept(monkeypatch):
    """A trace whose error chain ends in an exception other than Triton's (which may depend
    on more than the source) names that exception, its type and message, beside the call's
    location, and its verdict is not kept: a later pruner traces again."""
    original = prune.kernel_plans
    monkeypatch.setattr(prune, "kernel_plans", failing_trace(RuntimeError("no device context")))
    failed = tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(3), arguments())
    assert not failed.fits
    assert failed.reasons == (
        "at 2:4:\ndef kernel():\n    helper()\n    ^\nRuntimeError: no device context",
    )
    monkeypatch.setattr(prune, "kernel_plans", original)
    traces = counted_traces(monkeypatch)
    assert tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(3), arguments()).fits
    assert len(traces) == 1


def test_a_traced_error_one_call_down_gives_its_message_and_is_kept(monkeypatch):
    """An error a helper function raised while traced (the planner's, say) is the reason, its
    message alone, and its verdict is kept."""
    inner = triton.compiler.errors.CompilationError(None, None, "buffer 'ring' does not fit")
    monkeypatch.setattr(prune, "kernel_plans", failing_trace(inner))
    failed = tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(3), arguments())
    assert failed.reasons == ("buffer 'ring' does not fit",)
    without_traces(monkeypatch)
    found = tlx.PlanPruner(ring_kernel, target=SM90).verdict(ring_config(3), arguments())
    assert found.reasons == failed.reasons and not found.fits
