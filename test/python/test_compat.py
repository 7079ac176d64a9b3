"""The Triton internals ``tlx.compat`` relies on are still there, on the Triton this runs
on: the autotuner's private state, the asynchronous compile mode, the JIT's argument
types, the benchmark's L2 flush and sleep, and the TMA reduce-add (a Gluon wrapper from 3.8
on, compat's builtin over Gluon's builder before). Run it with each supported Triton (3.6 ...
3.9): a release that renames one fails here, not deep inside ``tlx.autotune``. CPU only."""

import inspect
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

import pytest
import torch
import triton
from _helpers import SM90, compile_kernel
from tlx import compat
from triton import language as tl
from triton.backends.nvidia.driver import CudaDriver
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, tma
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


ACCUMULATOR = gl.constexpr(
    gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
)
STAGING = gl.constexpr(gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=2))


@gluon.jit
def double_buffered_reduce_add(desc, blocks):
    """Adds a tile of ones to each of ``blocks`` blocks of ``desc`` through two staging tiles
    taken in turn, each rewritten once the reduction that read it is retired."""
    staging = gl.allocate_shared_memory(gl.float32, [2, 64, 64], STAGING)
    for block in range(blocks):
        tile = staging.index(block % 2)
        tma.store_wait(1)
        tile.store(gl.full([64, 64], 1.0, gl.float32, ACCUMULATOR))
        fence_async_shared()
        compat.tma_atomic_add(desc, [block, 0, 0], tile.reshape([1, 64, 64]))
    tma.store_wait(0)


def test_the_tma_reduce_add_compiles_on_every_release():
    """``compat.tma_atomic_add`` is one ``ttng.async_tma_reduce add`` on 3.6 ... 3.9, a bulk
    tensor reduce-add in the sm_90a PTX (the 64 fp32 columns, two 128-byte swizzle widths, as
    two boxes that two warps issue); ``tma.store_wait(n)`` waits for the reads of the source
    tiles only on every release (3.8's ``read_only`` defaults to it, 3.6 and 3.7 have no
    other). Each kind of ``compat.tma_reduce`` is a Gluon builtin of its name."""
    layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=3)
    signature = {"desc": f"tensordesc<fp32[1,64,64],{layout!r}>", "blocks": "i32"}
    compiled = compile_kernel(double_buffered_reduce_add, signature, SM90)
    assert compiled.asm["ttgir"].count("ttng.async_tma_reduce add,") == 1
    ptx = compiled.asm["ptx"]
    assert ptx.count("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.bulk_group") == 1
    assert "cp.async.bulk.wait_group.read \t1;" in ptx
    assert "cp.async.bulk.wait_group.read \t0;" in ptx
    (meta,) = compiled.metadata.tensordesc_meta
    assert meta["block_size"] == [1, 64, 32]
    for kind in ("add", "min", "max", "and", "or", "xor"):
        reduce = compat.tma_reduce(kind)
        assert reduce.__name__ == f"async_atomic_{kind}" and reduce.__triton_builtin__
