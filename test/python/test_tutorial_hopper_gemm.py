"""tutorials/hopper_gemm.py on the CPU: the SMEM plan of its kernel (C over the start of the
A/B ring, at the ideal 196608 bytes), what the same buffers need without aliasing, the best
configuration without aliasing, the kernel compiled to a cubin for sm_90a, and the script run
without a GPU."""

import importlib
import re
import sys

import pytest
import torch
from _helpers import run_tutorial
from tlx.compat import NEEDS_WHOLE_VIEWS
from triton.compiler.errors import CompilationError

SMEM_LIMIT = 227 * 1024
TOO_BIG = "needs 262144 bytes of shared memory, more than the target's limit of 232448 bytes"
# The backing allocation of a tlx SMEM spec: [n, 128] x i8 with the plan's alignment.
SMEM_BACKING = re.compile(
    r"ttg\.local_alloc \{alignment = (\d+) : i32\} : \(\) -> !ttg\.memdesc<(\d+)x128xi8"
)


@pytest.fixture(scope="module")
def gemm():
    return importlib.import_module("tlx_kernels.hopper.gemm")


def buffer_offsets(spec_plan):
    """{buffer name: [byte offset of buffer i, ...]} of a plan."""
    return {
        buffer.name: [view.slot_of(i) * view.buffer_size for i in range(buffer.shape[0])]
        for buffer, view in zip(spec_plan.buffers, spec_plan.plan.views, strict=True)
    }


def test_default_config_is_four_stages_of_128x256x64_with_c_aliased(gemm):
    for dtype in ("fp16", "bf16", torch.float16, torch.bfloat16):
        config = gemm.default_config(dtype)
        assert (config.block_m, config.block_n, config.block_k) == (128, 256, 64)
        assert config.num_stages == 4 and config.alias_c
    with pytest.raises(ValueError, match="dtype must be float16 or bfloat16, got torch.float32"):
        gemm.default_config(torch.float32)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_ring_and_c_share_one_region_at_the_ideal(gemm, dtype):
    smem = gemm.smem_plan(gemm.default_config(dtype), dtype)
    plan = smem.plan
    assert plan.ok and smem.allocated, plan.errors
    assert plan.size_bytes == plan.ideal_bytes == 196608
    assert plan.padding_bytes == 0 and plan.alignment == 1024
    assert [b.name for b in smem.buffers] == ["a_ring", "b_ring", "c_tile"]
    # a0 a1 a2 a3 (16 KiB each), then b0 b1 b2 b3 (32 KiB each); C (64 KiB) over a0..a3.
    assert buffer_offsets(smem) == {
        "a_ring": [0, 16384, 32768, 49152],
        "b_ring": [65536, 98304, 131072, 163840],
        "c_tile": [0],
    }
    assert [view.buffer_size for view in plan.views] == [16384, 32768, 65536]


def test_the_same_buffers_without_aliasing_do_not_fit(gemm):
    config = gemm.default_config("fp16")
    without = gemm.smem_plan(config).plan_without_aliasing()
    assert not without.ok and without.size_bytes == 262144 > SMEM_LIMIT
    unaliased = config.replace(alias_c=False)
    with pytest.raises(CompilationError, match=TOO_BIG):
        gemm.smem_plan(unaliased)
    with pytest.raises(CompilationError, match=TOO_BIG):
        gemm.compile_for_hopper(unaliased)


def test_best_unaliased_config_is_three_stages(gemm):
    """Three stages (208 KiB) fit without aliasing; on Triton 3.8, whose views must cover the
    region in whole buffers, 208 KiB is rounded to a multiple of C's 64 KiB (256 KiB) and only
    two stages fit."""
    best, rejected = gemm.unaliased_search("fp16")
    assert best == gemm.best_unaliased_config("bf16")
    assert (best.block_m, best.block_n, best.block_k) == (128, 256, 64)
    assert not best.alias_c and all(not config.alias_c for config, _ in rejected)
    assert [config.num_stages for config, _ in rejected] == list(range(4, best.num_stages, -1))
    assert all(TOO_BIG in message for _, message in rejected)
    smem = gemm.smem_plan(best)
    assert smem.plan.ok
    if NEEDS_WHOLE_VIEWS:
        assert best.num_stages == 2
        assert smem.plan.size_bytes == 196608 and smem.plan.ideal_bytes == 163840
        return
    assert best.num_stages == 3
    # C, then three B stages, then three A stages: 64 + 96 + 48 KiB, nothing shared or padded.
    assert smem.plan.size_bytes == smem.plan.ideal_bytes == 212992
    assert buffer_offsets(smem) == {
        "a_ring": [163840, 180224, 196608],
        "b_ring": [65536, 98304, 131072],
        "c_tile": [0],
    }


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_kernel_compiles_to_a_cubin_for_sm90a(gemm, dtype):
    for config in gemm.benchmark_configs(dtype):
        smem = gemm.smem_plan(config, dtype)
        compiled = gemm.compile_for_hopper(config, dtype)
        assert compiled.asm["cubin"]
        ttgir = compiled.asm["ttgir"]
        # One backing allocation for the ring and C, of the planned size and alignment.
        ((alignment, rows),) = SMEM_BACKING.findall(ttgir)
        assert int(rows) * 128 == smem.plan.size_bytes
        assert int(alignment) == smem.plan.alignment
        assert "ttng.warp_group_dot " in ttgir
        assert "ttg.warp_specialize" in ttgir
        # The region plus the mbarriers, inside the 227 KiB of an sm_90a CTA.
        assert smem.plan.size_bytes < compiled.metadata.shared <= SMEM_LIMIT


@pytest.mark.parametrize("alias_c", [True, False])
def test_pipelined_kernel_is_one_warpgroup_with_c_over_the_ring_or_beside_it(gemm, alias_c):
    """Without warp specialization the kernel's one warpgroup issues the copies and computes
    the whole 128-row tile: one wgmma per K step reads all of A's stage, and C (128 x 64) lies
    over the ring's first bytes or beside it."""
    config = gemm.Config(128, 64, 64, 6, alias_c=alias_c, warp_specialize=False)
    smem = gemm.smem_plan(config)
    stage = 128 * 64 * 2 + 64 * 64 * 2
    c_bytes = 0 if alias_c else 128 * 64 * 2
    assert smem.plan.ok and smem.plan.size_bytes == smem.plan.ideal_bytes == 6 * stage + c_bytes
    assert buffer_offsets(smem)["c_tile"] == [0]
    compiled = gemm.compile_for_hopper(config)
    ttgir = compiled.asm["ttgir"]
    assert "ttg.warp_specialize" not in ttgir
    assert re.search(r"ttng.warp_group_dot .*: !ttg.memdesc<128x64xf16", ttgir)
    ((_, rows),) = SMEM_BACKING.findall(ttgir)
    assert int(rows) * 128 == smem.plan.size_bytes < compiled.metadata.shared <= SMEM_LIMIT


def test_compiled_launch_takes_the_configurations_tiles_and_arguments(gemm):
    """gemm.compiled_launch (bench/gemm.py --prefetch launches the kernels it compiles with
    it): descriptors of the configuration's blocks, one CTA per tile, and the arguments after
    M, N, K in the kernel's order."""
    config = gemm.Config(128, 64, 64, 6, alias_c=False, group_m=4, warp_specialize=False)
    a = torch.zeros(256, 512, dtype=torch.float16)
    b = torch.zeros(512, 320, dtype=torch.float16)
    launch = gemm.compiled_launch("compiled", a, b, config)
    assert launch.kernel == "compiled" and launch.config == config
    assert launch.grid == (2 * 5, 1, 1)
    assert [template.block_shape for template in launch.templates] == [
        [128, 64],
        [64, 64],
        [64, 64],
    ]
    assert all(template.base is None for template in launch.templates)
    # Split-K's buffers (a device's, shared by its launches), then the configuration's.
    workspace, counters, *configured = launch.config_arguments
    assert workspace.dtype == torch.float32 and counters.dtype == torch.int32
    assert configured == [4, 128, 64, 64, 6, False, False, False, 0, 1, 1]


def test_pipelined_config_is_not_persistent(gemm):
    with pytest.raises(ValueError, match="persistent kernel .* needs warp_specialize=True"):
        gemm.Config(128, 64, 64, 6, alias_c=False, persistent=True, warp_specialize=False)


def test_staggered_consumers_need_c_beside_a_ring_deep_enough(gemm):
    """The first consumer stores its half of C while the second still reads the ring's last
    ``stagger`` stages: C cannot lie over the ring, the loader warp and the second consumer
    must exist, and the ring must hold those stages at once."""
    with pytest.raises(ValueError, match=r"stagger=-1: a number of K steps, 0 or more"):
        gemm.Config(128, 256, 64, 3, alias_c=False, stagger=-1)
    with pytest.raises(ValueError, match=r"stagger=2: .* C beside the ring \(alias_c=False\)"):
        gemm.Config(128, 256, 64, 4, alias_c=True, stagger=2)
    with pytest.raises(ValueError, match=r"stagger=2: .* need warp_specialize=True"):
        gemm.Config(128, 64, 64, 4, alias_c=False, warp_specialize=False, stagger=2)
    with pytest.raises(ValueError, match=r"stagger=4 > num_stages=3: the ring must hold"):
        gemm.Config(128, 256, 64, 3, alias_c=False, stagger=4)
    config = gemm.Config(128, 256, 64, 3, alias_c=False, persistent=True, stagger=3)
    assert repr(config).endswith(" persistent stagger=3")
    assert gemm.constexprs(config)["STAGGER"] == 3
    assert gemm.config_of(config.kernel_arguments()) == config


def test_the_kernel_refuses_a_stagger_its_ring_cannot_hold(gemm):
    """The kernel's own check, for a launch that bypasses Config (a call's constexpr over the
    configuration's): a compile error that says what staggered consumers need."""
    config = gemm.Config(128, 256, 64, 2, alias_c=False)
    with pytest.raises(CompilationError, match="staggered consumers need .* STAGGER <= NUM_STAGES"):
        gemm.HOST.compile(config, STAGGER=3)


def test_matmul_refuses_bad_inputs(gemm):
    a = torch.zeros(4, 8, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"a must be \[M, K\] and b \[K, N\], got \(4, 8\)"):
        gemm.matmul(a, torch.zeros(4, 8, dtype=torch.float16))
    with pytest.raises(ValueError, match="must both be float16 or bfloat16"):
        gemm.matmul(a, torch.zeros(8, 4, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="must both be float16 or bfloat16"):
        gemm.matmul(a.float(), torch.zeros(8, 4))
    with pytest.raises(ValueError, match="a and b must be CUDA tensors, got cpu and cpu"):
        gemm.matmul(a, torch.zeros(8, 4, dtype=torch.float16))


def test_script_compiles_and_prints_the_plan_without_gpu(gemm, monkeypatch, capsys):
    """main() takes the compile-only path whenever torch sees no Hopper GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert run_tutorial("hopper_gemm.py") == 0
    out = capsys.readouterr().out
    assert 'storage_alias_spec "smem"' in out  # the planner's description of the plan
    assert (
        "SMEM region 196608 bytes (192 KiB, aligned to 1024); the ideal footprint of the tree "
        "is 196608 bytes" in out
    )
    assert "a_ring  4 x [128, 64] 16-bit: buffers at bytes [0, 16384, 32768, 49152]" in out
    assert "b_ring  4 x [64, 256] 16-bit: buffers at bytes [65536, 98304, 131072, 163840]" in out
    assert "c_tile  1 x [128, 256] 16-bit: buffers at bytes [0]" in out
    assert "they need 262144 bytes (256 KiB): does not fit" in out
    assert "stages=4 alias_c=False GROUP_M=8 does not compile: " in out
    best_stages = 2 if NEEDS_WHOLE_VIEWS else 3
    assert (
        f"best configuration without aliasing: BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 "
        f"stages={best_stages}" in out
    )
    assert "No Hopper GPU: compiling for sm_90a only." in out
    assert out.count("cubin") == 4


def test_bench_needs_a_hopper_gpu(monkeypatch, capsys):
    bench = importlib.import_module("gemm")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(sys, "argv", ["gemm.py"])
    with pytest.raises(SystemExit, match="needs a Hopper GPU"):
        bench.main()
    monkeypatch.setattr(sys, "argv", ["gemm.py", "--runs", "10"])
    with pytest.raises(SystemExit):
        bench.main()
    assert "--runs must be at least 50" in capsys.readouterr().err


def test_configs_bench_needs_a_hopper_gpu(monkeypatch):
    bench = importlib.import_module("gemm_configs")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(sys, "argv", ["gemm_configs.py"])
    with pytest.raises(SystemExit, match="needs a Hopper GPU"):
        bench.main()


def test_configs_bench_probes_what_the_tuner_leaves_out_where_k_fills_the_splits():
    bench = importlib.import_module("gemm_configs")
    from tlx_kernels.hopper import gemm

    kept = gemm.shape_configs(2048, 512, 8192, 132)
    probes = bench.probes_at(2048, 512, 8192, 132, kept)
    assert probes and not set(probes) & set(kept)
    # The 64 x 64 tiles with K steps of 128 and 7 stages are the tuner's at this shape.
    assert gemm.Config(64, 64, 128, 7, alias_c=True, warp_specialize=False) in kept
    assert gemm.Config(64, 64, 128, 7, alias_c=True, warp_specialize=False) not in probes
    # K = 1024 is 8 steps of 128: too few for 4 splits of SPLIT_K_MIN_STEPS steps.
    assert [config.split_k for config in bench.probes_at(2048, 512, 1024, 132, [])] == [
        2,
        1,
        1,
        1,
        2,
    ]


@pytest.mark.parametrize("probe", importlib.import_module("gemm_configs").PROBES, ids=repr)
def test_configs_bench_probes_compile_for_sm90a(probe):
    from tlx_kernels.hopper import gemm

    assert gemm.compile_for_hopper(probe, "fp16").asm["cubin"]


@pytest.mark.parametrize(
    ("shape", "sms", "grown"),
    [
        # 512 tiles on 132 SMs: one more row of 16 tiles fills the fourth wave.
        ((4096, 4096, 4096), 132, (4224, 4096, 4096)),
        ((16384, 1024, 1024), 132, (16896, 1024, 1024)),
        # 64 tiles a row: the 16 missing tiles are two columns of 8.
        ((1024, 16384, 1024), 132, (1024, 16896, 1024)),
        ((8192, 8192, 512), 132, (8448, 8192, 512)),
        # A tail tile counts as a tile.
        ((4000, 4000, 64), 132, (4128, 4000, 64)),
        # Every wave full already, or the missing 4 tiles neither rows of 8 nor columns of 16.
        ((4224, 4096, 4096), 132, None),
        ((2048, 2048, 2048), 132, None),
    ],
)
def test_ceiling_grows_a_shape_by_the_tiles_that_fill_its_last_wave(shape, sms, grown):
    bench = importlib.import_module("gemm")
    assert bench.filled_wave_shape(shape, 128, 256, sms) == grown


def test_ceiling_gives_throughput_as_a_share_of_the_peak_at_the_sampled_clock():
    bench = importlib.import_module("gemm")
    shape = (1024, 1024, 1024)
    # 2 * 1024**3 FLOPs at 4096 a clock on one SM at 1000 MHz: 0.524288 ms.
    at_peak_ms = 2 * 1024**3 / (bench.HOPPER_DENSE_FLOPS_PER_SM_CLOCK * 1e9) * 1e3
    assert bench.share_of_peak(shape, at_peak_ms, 1000, 1) == pytest.approx(1.0)
    assert bench.share_of_peak(shape, 2 * at_peak_ms, 1000, 1) == pytest.approx(0.5)
    assert bench.share_of_peak(shape, at_peak_ms, 2000, 2) == pytest.approx(0.25)
    # The 4096-cubed row of the H200's ceiling measurement: 182.86 us at 1455 MHz on 132 SMs.
    assert bench.share_of_peak((4096,) * 3, 0.18286, 1455, 132) == pytest.approx(0.9554, abs=1e-4)


@pytest.mark.parametrize("rotation", [0, 1, 2])
def test_rotated_timing_returns_each_time_in_the_callers_order(rotation, monkeypatch):
    """``rotated_median_ms`` times the calls in a rotated order and hands each time back to
    the call it belongs to."""
    gpu_timing = importlib.import_module("gpu_timing")
    timed_orders = []

    def fake_median_ms(fns, runs):
        timed_orders.append([fn() for fn in fns])
        return [fn() / 10 for fn in fns]

    monkeypatch.setattr(gpu_timing, "median_ms", fake_median_ms)
    calls = [lambda: 1, lambda: 2, lambda: 3]
    assert gpu_timing.rotated_median_ms(calls, 50, rotation) == [0.1, 0.2, 0.3]
    assert timed_orders == [[1, 2, 3][rotation:] + [1, 2, 3][:rotation]]


def test_ceiling_summarizes_nvidia_smi_samples():
    gpu_timing = importlib.import_module("gpu_timing")
    lines = [
        "1980, 512.30, 700.00, Not Active",
        "1755, 699.10, 700.00, Active",
        "[N/A], 650.00, 700.00, Active",
        "1800, 690.00, 700.00, Active",
    ]
    assert gpu_timing.load_summary(lines) == (1800.0, 690.0, 700.0, 2 / 3)
    with pytest.raises(ValueError, match="no nvidia-smi samples"):
        gpu_timing.load_summary(["clocks.sm [MHz], power.draw [W]"])


def test_plans_prints_the_pruners_verdict_on_every_configuration(gemm, monkeypatch, capsys):
    """``--plans``: the autotuning space, each configuration with its SMEM footprint or the
    planner's reason, without a GPU."""
    assert run_tutorial("hopper_gemm.py", "--plans") == 0
    out = capsys.readouterr().out
    space = gemm.autotune_configs()
    fits = out.count(": fits, ")
    pruned = out.count(": pruned: ")
    assert fits + pruned == len(space) and fits and pruned
    assert (
        "BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 stages=4 alias_c=True GROUP_M=8: fits, "
        "196608 bytes of SMEM region" in out
    )
    assert "stages=4 alias_c=False GROUP_M=8: pruned: " in out
    assert "needs 262144 bytes of shared memory" in out
