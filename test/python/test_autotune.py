"""Plan-aware autotuning (``tlx.autotune``, ``tlx.PlanPruner``): configurations are kept or
dropped by their plans, traced by Triton's front end alone, before anything is compiled."""

import math
from concurrent.futures import ThreadPoolExecutor

import pytest
import tlx
import torch
import triton
from _helpers import SM90
from tlx import compat
from tlx.tuning import autotuner, retime
from tlx.tuning.compile_ahead import compile_ahead
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

NVMMA = ttgl.constexpr(ttgl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2))
SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
SMEM_LIMIT = 232448  # sm_90a


@tlx.jit
def ring_kernel(x_ptr, n, BLOCK: ttgl.constexpr, STAGES: ttgl.constexpr, ALIAS: ttgl.constexpr):
    """A GEMM's SMEM: an A/B ring of STAGES stages and a C tile that, with ALIAS, takes
    the ring's bytes (its epilogue comes after the ring's last use)."""
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((BLOCK, 64), ttgl.float16, STAGES, reuse=smem, layout=NVMMA)
    b = tlx.local_alloc((64, BLOCK), ttgl.float16, STAGES, reuse=smem, layout=NVMMA)
    c = tlx.local_alloc((BLOCK, BLOCK), ttgl.float16, 1, reuse=smem, layout=NVMMA)
    ring = tlx.reuse_group(tlx.reuse_group(a, b, group_type=DISTINCT), group_size=STAGES)
    smem.set_buffer_overlap(tlx.reuse_group(c, ring, group_type=SHARED if ALIAS else DISTINCT))


def configs():
    return [
        triton.Config({"BLOCK": block, "STAGES": stages, "ALIAS": alias}, num_warps=4)
        for block in (128, 256)
        for stages in (2, 3, 4, 5, 6, 7)
        for alias in (True, False)
    ]


def arguments():
    return {"x_ptr": torch.empty(16, dtype=torch.float16), "n": 1024}


def tiles_times_stages_bytes(config):
    """What a tuner's shared memory formula says: every operand tile of every stage, plus
    the epilogue tile, none sharing bytes."""
    block, stages = config.kwargs["BLOCK"], config.kwargs["STAGES"]
    return (block * 64 + 64 * block) * 2 * stages + block * block * 2


def planned_fits(config):
    """The planner's verdict, asked directly: the kernel's plans and its budget."""
    constexprs = dict(config.kwargs)
    source = tlx.ASTSource(
        fn=ring_kernel,
        signature={"x_ptr": "*fp16", "n": "i32", **dict.fromkeys(constexprs, "constexpr")},
        constexprs=constexprs,
    )
    try:
        plans = tlx.kernel_plans(source, target=SM90, options={"num_warps": 4})
    except triton.compiler.errors.CompilationError:
        return False
    return tlx.kernel_budget(plans, SM90).fits


def test_the_pruner_keeps_exactly_what_the_planner_fits():
    pruner = tlx.PlanPruner(ring_kernel, target=SM90)
    # As the autotuner calls it: the launch's keywords (grid, warmup) come along.
    kept = pruner(configs(), arguments(), grid=lambda meta: (1,), warmup=False)
    expected = [config for config in configs() if planned_fits(config)]
    assert [config.kwargs for config in kept] == [config.kwargs for config in expected]
    (dropped,) = pruner.pruned.values()
    assert len(kept) + len(dropped) == len(configs())
    assert kept and dropped


def test_aliased_rings_a_tiles_times_stages_formula_would_drop_are_kept():
    kept = tlx.PlanPruner(ring_kernel, target=SM90)(configs(), arguments())
    wrongly_dropped = [c for c in kept if tiles_times_stages_bytes(c) > SMEM_LIMIT]
    # 32 KiB stages and a 32 KiB C: 7 stages fit only because C takes the ring's bytes;
    # 64 KiB stages and a 128 KiB C: 2 and 3 stages (where views must cover the region in
    # whole buffers, Triton 3.8, 3 stages round up to two whole Cs, 256 KiB, and do not fit).
    expected = {(128, 7), (256, 2)} | (set() if compat.NEEDS_WHOLE_VIEWS else {(256, 3)})
    assert {(c.kwargs["BLOCK"], c.kwargs["STAGES"]) for c in wrongly_dropped} == expected
    assert all(c.kwargs["ALIAS"] for c in wrongly_dropped)


def test_each_pruned_configuration_carries_the_planners_reason():
    pruner = tlx.PlanPruner(ring_kernel, target=SM90)
    pruner(configs(), arguments())
    (dropped,) = pruner.pruned.values()
    for config, reasons in dropped:
        assert reasons, config
        text = " ".join(reasons)
        assert "232448" in text and "smem" in text.lower(), text
    verdict = pruner.verdict(configs()[-1], arguments())  # 256-wide, 7 stages, distinct
    assert not verdict.fits and verdict.seconds >= 0
    assert verdict.budget is None or not verdict.budget.fits


@gluon.jit
def _sealed_ring(BLOCK: ttgl.constexpr, STAGES: ttgl.constexpr):
    """ring_kernel's unaliased SMEM, its spec created and sealed in a helper function."""
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((BLOCK, 64), ttgl.float16, STAGES, reuse=smem, layout=NVMMA)
    b = tlx.local_alloc((64, BLOCK), ttgl.float16, STAGES, reuse=smem, layout=NVMMA)
    smem.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    return a


@tlx.jit
def helper_sealed_kernel(x_ptr, n, BLOCK: ttgl.constexpr, STAGES: ttgl.constexpr):
    _sealed_ring(BLOCK, STAGES)


def test_a_spec_sealed_in_a_helper_is_pruned_with_the_planners_message():
    """Triton wraps the planner's error once per @jit call it passes through: the reason is
    still the planner's message, not the kernel's source."""
    config = triton.Config({"BLOCK": 256, "STAGES": 7}, num_warps=4)
    verdict = tlx.PlanPruner(helper_sealed_kernel, target=SM90).verdict(config, arguments())
    assert not verdict.fits
    (reason,) = verdict.reasons
    assert reason.startswith('storage_alias_spec "smem" (created at test_autotune.py:'), reason
    assert "more than the target's limit of 232448 bytes" in reason


def test_verdicts_are_cached_per_configuration_and_argument_types():
    pruner = tlx.PlanPruner(ring_kernel, target=SM90)
    first = pruner.verdict(configs()[0], arguments())
    assert pruner.verdict(configs()[0], arguments()) is first
    other = pruner.verdict(configs()[0], {"x_ptr": torch.empty(16, dtype=torch.float32), "n": 1})
    assert other is not first


def test_every_configuration_pruned_is_an_error_that_lists_the_reasons():
    too_large = [triton.Config({"BLOCK": 256, "STAGES": 7, "ALIAS": False}, num_warps=4)]
    with pytest.raises(tlx.TLXError, match="every configuration was pruned") as error:
        tlx.PlanPruner(ring_kernel, target=SM90)(too_large, arguments())
    assert "BLOCK=256, STAGES=7, ALIAS=False, num_warps=4, num_ctas=1:" in str(error.value)


def test_the_log_names_each_pruned_configuration(monkeypatch, capfd):
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    tlx.PlanPruner(ring_kernel, target=SM90)(configs(), arguments())
    err = capfd.readouterr().err
    assert "tlx.autotune ring_kernel: pruned" in err
    assert f"of {len(configs())} configurations fit their plans" in err


def test_the_users_own_pruner_runs_on_what_the_plans_leave():
    seen = []

    def keep_alias(configs, named_args, **kwargs):
        seen.extend(configs)
        return [c for c in configs if c.kwargs["ALIAS"]]

    pruner = tlx.PlanPruner(ring_kernel, target=SM90, then=keep_alias)
    kept = pruner(configs(), arguments())
    assert all(c.kwargs["ALIAS"] for c in kept)
    assert all(planned_fits(c) for c in seen)


def test_a_missing_argument_names_the_parameter():
    with pytest.raises(tlx.TLXError, match='parameter "n"'):
        tlx.PlanPruner(ring_kernel, target=SM90)(configs()[:1], {"x_ptr": arguments()["x_ptr"]})


@tlx.jit
def shared_sm_ring_kernel(
    x_ptr, n, STAGES: ttgl.constexpr, CTAS_PER_SM: ttgl.constexpr = 1, BLOCK: ttgl.constexpr = 128
):
    """ring_kernel's aliased SMEM (32 KiB a stage) in a kernel made to run CTAS_PER_SM CTAs
    an SM (its grid and registers would follow it)."""
    ring_kernel(x_ptr, n, BLOCK, STAGES, True)


def shared_sm_configs():
    return [
        triton.Config({"STAGES": stages, "CTAS_PER_SM": ctas}, num_warps=4)
        for stages in (2, 3, 4, 5, 7)
        for ctas in (1, 2)
    ]


def test_a_kernel_sharing_its_sm_is_pruned_by_its_share():
    pruner = tlx.PlanPruner(shared_sm_ring_kernel, target=SM90, ctas_per_sm="CTAS_PER_SM")
    kept = pruner(shared_sm_configs(), arguments())
    # Stages of 32 KiB: seven fit the 227 KiB of one CTA, three the 113 KiB of each of two.
    assert {(c.kwargs["STAGES"], c.kwargs["CTAS_PER_SM"]) for c in kept} == {
        (2, 1), (3, 1), (4, 1), (5, 1), (7, 1), (2, 2), (3, 2)
    }  # fmt: skip
    (dropped,) = pruner.pruned.values()
    for config, (reason,) in dropped:
        assert config.kwargs["CTAS_PER_SM"] == 2
        assert reason.endswith(
            "than the 115712 bytes one CTA has on sm_90a when 2 CTAs share an SM"
        )
    # The same number for every configuration, and the parameter's default where a
    # configuration does not set it.
    every = tlx.PlanPruner(shared_sm_ring_kernel, target=SM90, ctas_per_sm=2)
    assert [c.kwargs["STAGES"] for c in every(shared_sm_configs()[::2], arguments())] == [2, 3]
    default = tlx.PlanPruner(shared_sm_ring_kernel, target=SM90, ctas_per_sm="CTAS_PER_SM")
    unset = [triton.Config({"STAGES": 7}, num_warps=4)]
    assert default(unset, arguments()) == unset
    tuner = tlx.autotune(
        shared_sm_configs(), key=["n"], target=SM90, ctas_per_sm="CTAS_PER_SM", compile_workers=1
    )(shared_sm_ring_kernel)
    assert tuner.plan_pruner.ctas_per_sm == "CTAS_PER_SM"


def test_ctas_per_sm_must_name_a_constexpr_or_be_a_positive_int():
    with pytest.raises(tlx.TLXError, match=r'names "n", which is not one of its constexpr'):
        tlx.PlanPruner(shared_sm_ring_kernel, ctas_per_sm="n")
    with pytest.raises(ValueError, match="ctas_per_sm must be a positive int, got 0"):
        tlx.PlanPruner(shared_sm_ring_kernel, ctas_per_sm=0)
    pruner = tlx.PlanPruner(shared_sm_ring_kernel, target=SM90, ctas_per_sm="CTAS_PER_SM")
    zero = triton.Config({"STAGES": 2, "CTAS_PER_SM": 0}, num_warps=4)
    with pytest.raises(tlx.TLXError, match=r"CTAS_PER_SM=0 in the call or the configuration"):
        pruner([zero], arguments())


def test_autotune_is_triton_autotune_with_the_plan_pruner_in_front():
    tuner = tlx.autotune(configs(), key=["n"], target=SM90, compile_workers=1)(ring_kernel)
    assert isinstance(tuner, triton.runtime.Autotuner)
    assert tuner.pruned is tuner.plan_pruner.pruned
    kept = tuner.early_config_prune(tuner.configs, arguments())
    assert kept == tlx.PlanPruner(ring_kernel, target=SM90)(configs(), arguments())
    assert tuner.pruned


def test_autotune_compiles_what_the_plans_keep_ahead(monkeypatch):
    calls = []

    def recorded_compile_ahead(kernel, configs, arguments, workers):
        calls.append((kernel, list(configs), dict(arguments), workers))
        return 1.5

    monkeypatch.setattr(autotuner, "compile_ahead", recorded_compile_ahead)
    tuner = tlx.autotune(configs(), key=["n"], target=SM90, compile_workers=3)(ring_kernel)
    x = arguments()["x_ptr"]
    kept = tuner.early_config_prune(tuner.configs, {"x_ptr": x}, n=1024)
    ((kernel, compiled, compiled_arguments, workers),) = calls
    assert (kernel, compiled, workers) == (ring_kernel, kept, 3)
    assert compiled_arguments.keys() == {"x_ptr", "n"}
    assert compiled_arguments["x_ptr"] is x and compiled_arguments["n"] == 1024
    assert list(tuner.compile_seconds.values()) == [1.5]


def test_autotune_leaves_the_compilation_to_a_perf_model_s_choice(monkeypatch):
    monkeypatch.setattr(autotuner, "compile_ahead", pytest.fail)
    prune = {"perf_model": lambda **kwargs: 1.0, "top_k": 2}
    tuner = tlx.autotune(configs(), key=["n"], target=SM90, prune_configs_by=prune)(ring_kernel)
    assert tuner.early_config_prune(tuner.configs, arguments())


@pytest.mark.parametrize("workers", [0, -2, 1.5])
def test_compile_workers_must_be_a_positive_int(workers):
    with pytest.raises(ValueError, match="compile_workers must be a positive int"):
        tlx.autotune(configs(), key=["n"], compile_workers=workers)


class RecordingKernel:
    """Stands for a @tlx.jit kernel: records each warmup (what Triton's JIT compiles) and
    whether an asynchronous compile mode was active, as compile_ahead needs."""

    def __init__(self):
        self.warmups = []

    def warmup(self, *args, grid, **values):  # as Triton's KernelInterface.warmup
        active = compat.async_compile_active()
        self.warmups.append((active, grid, values))


def test_compile_ahead_warms_each_configuration_up_under_async_compilation():
    def set_block(values):
        values["x_ptr"] = ("described", values["BLOCK"])

    tuned = [
        triton.Config({"BLOCK": block, "STAGES": 2, "ALIAS": True}, num_warps=4, pre_hook=set_block)
        for block in (128, 256)
    ]
    kernel = RecordingKernel()
    # The autotuner hands its prune hook the launch's keyword arguments too.
    launch = {"grid": (132,), "warmup": False}
    seconds = compile_ahead(kernel, tuned, {**arguments(), **launch}, workers=8)
    assert seconds > 0
    assert [active for active, _, _ in kernel.warmups] == [True, True]
    for (_, grid, values), block in zip(kernel.warmups, (128, 256), strict=True):
        assert grid == (1,)
        assert values["x_ptr"] == ("described", block)  # the pre_hook ran first
        assert values["n"] == 1024 and values["BLOCK"] == block and values["num_warps"] == 4
        assert "warmup" not in values


def test_compile_ahead_does_nothing_with_one_worker_or_inside_another_async_mode():
    kernel = RecordingKernel()
    assert compile_ahead(kernel, configs(), arguments(), workers=1) == 0.0
    assert compile_ahead(kernel, configs()[:1], arguments(), workers=8) == 0.0
    with (
        ThreadPoolExecutor(2) as executor,
        compat.async_compile_mode(executor),
    ):
        assert compile_ahead(kernel, configs(), arguments(), workers=8) == 0.0
    assert kernel.warmups == []


def test_the_pruner_takes_only_tlx_kernels():
    @triton.jit
    def plain(x):
        pass

    with pytest.raises(TypeError, match="@tlx.jit"):
        tlx.PlanPruner(plain)


class LaunchRecorder:
    """Stands for the kernel under the autotuner (its ``run``): records each launch's
    configuration, which the scripted timings below read."""

    def __init__(self):
        self.launches = []
        self.retimings = []  # (configurations, rounds, warmup calls) of each gpu_times

    def run(self, *args, **kwargs):
        self.launches.append(kwargs["STAGES"])


def scripted_do_bench(kernel, first_timing):
    """A ``do_bench`` that launches once and gives each configuration (by its stages) its
    first timing."""

    def do_bench(kernel_call, quantiles):
        kernel_call()
        time = first_timing[kernel.launches[-1]]
        return [time, time, time]

    return do_bench


def scripted_gpu_times(kernel, medians):
    """Stands for ``gpu_times``: makes the calls in turn, ``rounds`` times, and gives each
    configuration (by its stages) its median."""

    def gpu_times(calls, rounds, warmup_calls=retime.RETIME_WARMUP_CALLS):
        kernel.retimings.append((len(calls), rounds, warmup_calls))
        stages = {}
        for _ in range(rounds):
            for config, call in calls.items():
                call()
                stages[config] = kernel.launches[-1]
        return {config: medians[stages[config]] for config in calls}

    return gpu_times


def retimed_tuner(monkeypatch, retime_top, first_timing, medians, retime_rounds=2):
    kernel = LaunchRecorder()
    monkeypatch.setattr(retime, "gpu_times", scripted_gpu_times(kernel, medians))
    fitting = [
        triton.Config({"BLOCK": 128, "STAGES": stages, "ALIAS": True}, num_warps=4)
        for stages in (2, 3, 4, 5)
    ]
    tuner = tlx.autotune(
        fitting,
        key=["n"],
        target=SM90,
        compile_workers=1,
        retime_top=retime_top,
        retime_rounds=retime_rounds,
        do_bench=scripted_do_bench(kernel, first_timing),
    )(ring_kernel)
    tuner.fn = kernel
    return tuner, kernel


def test_retiming_chooses_the_finalist_with_the_lowest_median(monkeypatch, capfd):
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    monkeypatch.setattr(retime, "SURVEY_ROUNDS", 1)
    first_timing = {2: 1.00, 3: 1.01, 4: 1.02, 5: 1.2}  # Triton's choice: 2 stages
    tuner, kernel = retimed_tuner(
        monkeypatch, 3, first_timing, {2: 1.10, 3: 1.00, 4: 1.05, 5: 1.20}
    )
    x = arguments()["x_ptr"]
    tuner[(1,)](x, 1024)
    ((key, medians),) = tuner.retimed.items()
    # The survey's three fastest are the finalists: 5 stages is not one.
    assert {config.kwargs["STAGES"]: median for config, median in medians.items()} == {
        2: 1.10,
        3: 1.00,
        4: 1.05,
    }
    assert tuner.best_config.kwargs["STAGES"] == 3
    assert compat.autotuner_choice(tuner, key) is tuner.best_config
    # 4 first timings and Triton's launch of its choice; the survey's calls of every
    # configuration (1 round) and the 3 finalists' calls, 2 rounds in turn, all made by the
    # tuner's own benchmark; then the launch of the choice, whose outputs the retiming's
    # calls overwrote.
    assert kernel.launches == [2, 3, 4, 5, 2, 2, 3, 4, 5, 3, 4, 2, 3, 4, 2, 3]
    # The tuner's do_bench is its own again after the retiming borrowed it.
    assert tuner.do_bench.__name__ == "do_bench"
    log = capfd.readouterr().err
    assert "surveyed 4 configurations over 1 calls each, retimed 3 finalists over 2" in log
    assert "first timing's choice 1100.0 us" in log
    # A later call of the key launches the choice alone.
    tuner[(1,)](x, 1024)
    assert kernel.launches[16:] == [3]


def test_the_survey_finds_what_the_first_timing_ranked_last(monkeypatch, capfd):
    """Where do_bench timed the host's launch, its ranking is noise: the finalists come from
    the survey on the GPU alone."""
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    first_timing = {2: 1.00, 3: 1.01, 4: 1.02, 5: 1.03}
    tuner, kernel = retimed_tuner(
        monkeypatch, 2, first_timing, {2: 1.30, 3: 1.20, 4: 1.10, 5: 1.00}
    )
    tuner[(1,)](arguments()["x_ptr"], 1024)
    ((key, medians),) = tuner.retimed.items()
    assert sorted(config.kwargs["STAGES"] for config in medians) == [4, 5]
    assert tuner.best_config.kwargs["STAGES"] == 5
    assert "first timing's choice not a finalist" in capfd.readouterr().err


def test_with_no_more_configurations_than_finalists_all_are_finalists(monkeypatch, capfd):
    """A survey would only pick them all: the finalists' calls are the retiming's, each
    warmed up first."""
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    first_timing = {2: 1.00, 3: 1.01, 4: 1.02, 5: 1.03}
    tuner, kernel = retimed_tuner(
        monkeypatch, 4, first_timing, {2: 1.30, 3: 1.20, 4: 1.10, 5: 1.00}
    )
    tuner[(1,)](arguments()["x_ptr"], 1024)
    assert kernel.retimings == [(4, 2, retime.RETIME_WARMUP_CALLS)]
    assert kernel.launches == [2, 3, 4, 5, 2, 2, 3, 4, 5, 2, 3, 4, 5, 5]
    assert tuner.best_config.kwargs["STAGES"] == 5
    log = capfd.readouterr().err
    assert "timed 4 configurations, too few for a survey, retimed 4 finalists over 2" in log


def test_long_calls_are_timed_fewer_times(monkeypatch, capfd):
    """The survey gives each configuration SURVEY_MS of the fastest's calls, the finalists
    FINALIST_MS each at the survey's fastest median, each at least FEWEST_ROUNDS; warm-up
    calls are fewer too, and the finalists are not warmed up again after the survey."""
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    first_timing = {2: 4.0, 3: 4.2, 4: 4.4, 5: 4.8}
    medians = {2: 6.0, 3: 5.0, 4: 5.2, 5: 8.2}
    tuner, kernel = retimed_tuner(monkeypatch, 3, first_timing, medians, retime_rounds=25)
    tuner[(1,)](arguments()["x_ptr"], 1024)
    survey_rounds = max(retime.FEWEST_ROUNDS, math.ceil(retime.SURVEY_MS / 4.0))
    finalist_rounds = max(retime.FEWEST_ROUNDS, math.ceil(retime.FINALIST_MS / 5.0))
    assert survey_rounds < retime.SURVEY_ROUNDS and finalist_rounds < 25
    # The screen's two calls of 4 ms each already took WARMUP_MS.
    assert kernel.retimings == [(4, survey_rounds, 0), (3, finalist_rounds, 0)]
    assert tuner.best_config.kwargs["STAGES"] == 3
    log = capfd.readouterr().err
    assert f"over {survey_rounds} calls each, retimed 3 finalists over {finalist_rounds}" in log


@pytest.mark.parametrize(
    ("budget_ms", "call_ms", "most", "rounds"),
    [
        (150.0, 0.02, 25, 25),  # short calls: as many as asked
        (150.0, 13.0, 25, 12),  # long ones: the budget's
        (40.0, 100.0, 10, retime.FEWEST_ROUNDS),  # never fewer than FEWEST_ROUNDS
        (40.0, 100.0, 2, 2),  # nor more than asked
        (150.0, 0.0, 25, 25),  # a time not known: as many as asked
    ],
)
def test_rounds_within_a_budget(budget_ms, call_ms, most, rounds):
    assert retime.rounds_within(budget_ms, call_ms, most) == rounds


@pytest.mark.parametrize(
    ("call_ms", "warmup_calls"),
    [
        (0.02, retime.RETIME_WARMUP_CALLS),  # short calls: as many as asked
        (1.0, retime.RETIME_WARMUP_CALLS),
        (2.0, 1),  # the screen's two calls took 4 of WARMUP_MS's 5 ms
        (2.5, 0),  # they took all of it
        (12.0, 0),
        (0.0, retime.RETIME_WARMUP_CALLS),  # a time not known
    ],
)
def test_warmup_calls_count_the_screens(call_ms, warmup_calls):
    assert retime.warmup_calls_for(call_ms) == warmup_calls


def test_contenders_leave_out_what_the_screen_found_far_slower():
    """Calls of SCREENED_MS or more are trusted once: beyond SCREEN_MARGIN times the
    fastest's a configuration is left out; shorter calls are all retimed."""
    assert retime.contenders({"a": 2.0, "b": 2.4, "c": 2.6, "d": 5.0}) == ["a", "b"]
    assert retime.contenders({"a": 0.5, "b": 5.0}) == ["a", "b"]
    at_margin = retime.SCREEN_MARGIN * retime.SCREENED_MS
    assert retime.contenders({"a": retime.SCREENED_MS, "b": at_margin}) == ["a", "b"]


def test_configurations_screened_far_slower_are_not_retimed(monkeypatch, capfd):
    """The survey and the finalists are drawn from the contenders alone; where no more of
    them are left than finalists, there is no survey."""
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    first_timing = {2: 2.0, 3: 2.1, 4: 3.0, 5: 2.4}
    tuner, kernel = retimed_tuner(monkeypatch, 2, first_timing, {2: 2.3, 3: 2.2, 4: 1.0, 5: 2.1})
    tuner[(1,)](arguments()["x_ptr"], 1024)
    assert [rounds[0] for rounds in kernel.retimings] == [3, 2]
    # 4 stages, the fastest median had it been retimed, was screened 1.5 times the fastest.
    assert tuner.best_config.kwargs["STAGES"] == 5
    log = capfd.readouterr().err
    assert "left out 1 of 4 screened over 1.25x the fastest, surveyed 3 configurations" in log
    tuner, kernel = retimed_tuner(monkeypatch, 3, first_timing, {2: 2.3, 3: 2.2, 4: 1.0, 5: 2.1})
    tuner[(1,)](arguments()["x_ptr"], 1024)
    assert [rounds[0] for rounds in kernel.retimings] == [3]


def test_retime_top_1_keeps_tritons_choice(monkeypatch):
    tuner, kernel = retimed_tuner(monkeypatch, 1, {2: 1.0, 3: 1.01, 4: 1.02, 5: 2.0}, {})
    tuner[(1,)](arguments()["x_ptr"], 1024)
    assert tuner.best_config.kwargs["STAGES"] == 2 and tuner.retimed == {}
    assert kernel.launches == [2, 3, 4, 5, 2]


def test_the_autotuners_timing_only_screens_what_the_retiming_surveys():
    """The survey picks the finalists, so the autotuner's timing of each configuration is
    ``retime.screen``; with Triton's choice kept (retime_top=1) or a timing asked for, it is
    the autotuner's own."""
    screened = tlx.autotune(configs(), key=["n"], target=SM90)(ring_kernel)
    assert screened._do_bench is retime.screen
    kept = tlx.autotune(configs(), key=["n"], target=SM90, retime_top=1)(ring_kernel)
    assert kept._do_bench is None

    def own_bench(kernel_call, quantiles):
        return [1.0] * len(quantiles)

    asked = tlx.autotune(configs(), key=["n"], target=SM90, do_bench=own_bench)(ring_kernel)
    assert asked._do_bench is own_bench


class FakeClock:
    """Stands for the GPU's events: a call moves the clock on by its time, an event reads it
    when recorded; each L2 clearing is counted."""

    def __init__(self):
        self.now = 0.0
        self.flushes = 0
        self.calls = []

    def call(self, name, ms):
        def run():
            self.calls.append(name)
            self.now += ms

        return run

    def event(self):
        clock = self

        class Event:
            def record(self):
                self.at = clock.now

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        return Event()

    def flush(self):
        self.flushes += 1


def test_called_times_times_passes_in_turn_as_many_times_as_their_length_allows(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(compat, "timing_event", clock.event)
    monkeypatch.setattr(compat, "l2_flush", lambda: clock.flush)
    calls = {"split": clock.call("split", 6.0), "separate": clock.call("separate", 5.0)}
    times = retime.called_times(calls, most_rounds=25)
    assert times == {"split": 6.0, "separate": 5.0}
    rounds = math.ceil(retime.FINALIST_MS / 5.0)
    assert rounds < 25
    # One call of each for their length, then the rounds in turn, each behind a clearing.
    assert clock.calls == ["split", "separate"] * (1 + rounds)
    assert clock.flushes == 2 * rounds
    short = {"a": clock.call("a", 0.25), "b": clock.call("b", 0.5)}
    clock.calls.clear()
    assert retime.called_times(short, most_rounds=4) == {"a": 0.25, "b": 0.5}
    assert clock.calls == ["a", "b"] * 5


def test_gpu_times_warms_up_then_times_each_call_behind_a_sleep_in_turn(monkeypatch):
    clock = FakeClock()
    sleeps = []
    monkeypatch.setattr(compat, "timing_event", clock.event)
    monkeypatch.setattr(compat, "l2_flush", lambda: clock.flush)
    monkeypatch.setattr(compat, "gpu_sleep", sleeps.append)
    calls = {"a": clock.call("a", 2.0), "b": clock.call("b", 1.5)}
    assert retime.gpu_times(calls, rounds=3, warmup_calls=2) == {"a": 2.0, "b": 1.5}
    assert clock.calls == ["a", "b"] * 5
    assert clock.flushes == 6 and sleeps == [retime.RETIME_SLEEP_CYCLES] * 6


def test_screen_launches_once_then_times_one_call(monkeypatch):
    """``screen`` launches the configuration (compiling it, raising what a launch that cannot
    run raises), then gives the time of one more call between two events."""
    happened = []
    names = iter(["start", "end"])

    class Event:
        def __init__(self):
            self.name = next(names)

        def record(self):
            happened.append(self)

        def synchronize(self):
            happened.append("synchronize")

        def elapsed_time(self, end):
            assert (self.name, end.name) == ("start", "end")
            return 0.25

    monkeypatch.setattr(compat, "timing_event", Event)
    times = retime.screen(lambda: happened.append("call"), quantiles=(0.5, 0.2, 0.8))
    assert times == [0.25, 0.25, 0.25]
    steps = [step if isinstance(step, str) else step.name for step in happened]
    assert steps == ["call", "start", "call", "end", "synchronize"]

    def out_of_resources():
        raise triton.runtime.errors.OutOfResources(245760, 232448, "shared memory")

    with pytest.raises(triton.runtime.errors.OutOfResources):
        retime.screen(out_of_resources, quantiles=(0.5,))


@pytest.mark.parametrize("option", ["retime_top", "retime_rounds"])
@pytest.mark.parametrize("value", [0, 2.5, True])
def test_retime_options_must_be_positive_ints(option, value):
    with pytest.raises(ValueError, match=f"{option} must be a positive int"):
        tlx.autotune(configs(), key=["n"], **{option: value})


class _OnDevice:
    """A tensor of CUDA device ``index`` as the tuner's run sees one."""

    is_cuda = True

    def __init__(self, index):
        self.index = index

    def get_device(self):
        return self.index


def test_a_tuners_run_makes_its_first_cuda_tensors_context_current(monkeypatch):
    """Before a launch encodes TMA descriptors, which the driver refuses on a thread without
    a current context (tlx/cuda_context.py): the device of the first CUDA tensor, a
    descriptor's or a pointer's; none for CPU tensors."""
    made_current = []
    monkeypatch.setattr(autotuner.cuda_context, "make_current", made_current.append)
    run = autotuner._in_current_context(lambda *args, **kwargs: (len(args), kwargs))
    descriptor = type("Descriptor", (), {"base": _OnDevice(3)})()
    assert run(torch.zeros(1), descriptor, _OnDevice(5), block=64) == (3, {"block": 64})
    assert made_current == [3]
    run(torch.zeros(1), _OnDevice(5))
    assert made_current == [3, 5]
    run(torch.zeros(1), 7)
    assert made_current == [3, 5]
