"""The Triton internals ``tlx.compat`` relies on are still there, on the Triton this runs
on: the autotuner's private state, the asynchronous compile mode, the JIT's argument
types and the benchmark's L2 flush and sleep. Run it with each supported Triton (3.6 ...
3.9): a release that renames one fails here, not deep inside ``tlx.autotune``. CPU only."""

import inspect
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

import pytest
import torch
import triton
from tlx import compat
from triton import language as tl
from triton.backends.nvidia.driver import CudaDriver
from triton.runtime.autotuner import Autotuner


@triton.jit
def scaled(x_ptr, n, BLOCK: tl.constexpr):
    pass


class LaunchRecorder:
    """Stands for the autotuner's kernel (its ``run``): records each launch's BLOCK."""

    def __init__(self):
        self.blocks = []

    def run(self, *args, **kwargs):
        self.blocks.append(kwargs["BLOCK"])


def recorded_tuner(timings):
    """A tuner of ``scaled`` over BLOCK 16, 32 and 64 whose ``do_bench`` launches once and
    gives each BLOCK its entry of ``timings``."""
    kernel = LaunchRecorder()

    def do_bench(kernel_call, quantiles):
        kernel_call()
        time = timings[kernel.blocks[-1]]
        return [time] * len(quantiles)

    configs = [triton.Config({"BLOCK": block}) for block in (16, 32, 64)]
    tuner = triton.autotune(configs, key=["n"], do_bench=do_bench)(scaled)
    tuner.fn = kernel
    return tuner, kernel


def test_the_autotuner_keeps_its_state_where_compat_reads_it():
    assert isinstance(inspect.getattr_static(Autotuner, "do_bench"), cached_property)
    bench = inspect.signature(Autotuner._bench).parameters
    assert bench["config"].kind is inspect.Parameter.KEYWORD_ONLY
    assert any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in bench.values())
    tuner, kernel = recorded_tuner({16: 2.0, 32: 1.0, 64: 3.0})
    assert isinstance(tuner, Autotuner)
    assert compat.autotuner_timings(tuner) is None and compat.autotuner_keys(tuner) == set()
    x = torch.empty(4)
    tuner[(1,)](x, 1024)
    assert kernel.blocks == [16, 32, 64, 32]
    timings = compat.autotuner_timings(tuner)
    assert sorted(config.kwargs["BLOCK"] for config in timings) == [16, 32, 64]
    (key,) = compat.autotuner_keys(tuner)
    chosen = compat.autotuner_choice(tuner, key)
    assert chosen.kwargs["BLOCK"] == 32 and tuner.best_config is chosen
    other = next(config for config in timings if config.kwargs["BLOCK"] == 64)
    compat.set_autotuner_choice(tuner, key, other)
    tuner[(1,)](x, 1024)
    assert kernel.blocks[-1] == 64 and tuner.best_config is other


def test_the_autotuners_benchmark_hands_over_each_configurations_call():
    tuner, kernel = recorded_tuner({16: 1.0, 32: 1.0, 64: 1.0})
    x = torch.empty(4)
    configs = tuner.configs[:2]
    calls = compat.autotuner_kernel_calls(tuner, configs, (x, 1024), {"grid": (1,)})
    assert list(calls) == configs and kernel.blocks == []
    for call in calls.values():
        call()
    assert kernel.blocks == [16, 32]
    assert tuner.nargs is None and "do_bench" not in tuner.__dict__


def test_the_autotuners_run_can_be_wrapped():
    tuner, kernel = recorded_tuner({16: 1.0, 32: 1.0, 64: 1.0})
    seen = []

    def wrap(run):
        def wrapped(*args, **kwargs):
            seen.append(args)
            return run(*args, **kwargs)

        return wrapped

    compat.wrap_autotuner_run(tuner, wrap)
    tuner[(1,)](torch.empty(4), 8)
    assert len(seen) == 1 and kernel.blocks[-1] == 16


def test_the_asynchronous_compile_mode_is_a_context_on_an_executor():
    assert not compat.async_compile_active()
    with ThreadPoolExecutor(1) as executor, compat.async_compile_mode(executor, True):
        assert compat.async_compile_active()
    assert not compat.async_compile_active()


@pytest.mark.parametrize(
    "value, expected", [(torch.empty(2, dtype=torch.float16), "*fp16"), (1024, "i32")]
)
def test_the_jit_types_arguments(value, expected):
    assert compat.jit_type_of(value) == expected


def test_the_driver_and_device_have_the_benchmarks_l2_flush_events_and_sleep():
    assert callable(CudaDriver.get_empty_cache_for_benchmark)
    assert callable(CudaDriver.clear_cache)
    assert callable(CudaDriver.get_device_interface)
    assert callable(torch.cuda._sleep) and callable(torch.cuda.Event)
