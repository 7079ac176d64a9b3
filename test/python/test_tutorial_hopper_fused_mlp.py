"""tutorials/hopper_fused_mlp.py on the CPU: the overlap trees of its three SMEM layouts, their
plans (one ring whose stages hold a phase-1 or a phase-2 step, a ring per phase, and a ring per
phase laid over each other by tlx.reuse_phases), the region the shared phases save, the stages
the phases fit, the best configurations that fit, the kernel compiled to a cubin
for sm_90a, the script and its --plans without a GPU, and the launchers' refusals."""

import dataclasses
import importlib
import re
import sys

import pytest
import torch
from _helpers import run_tutorial, whole_space_on_newest_triton
from _planner_helpers import buffer_ranges, overlapping_pairs
from tlx import planner
from tlx.compat import NEEDS_WHOLE_VIEWS
from triton.compiler.errors import CompilationError

SMEM_LIMIT = 227 * 1024
TOO_BIG = "bytes of shared memory, more than the target's limit of 232448 bytes"
# The backing allocation of a tlx SMEM spec: [n, 128] x i8 with the plan's alignment.
SMEM_BACKING = re.compile(
    r"ttg\.local_alloc \{alignment = (\d+) : i32\} : \(\) -> !ttg\.memdesc<(\d+)x128xi8"
)
BUFFERS = ["x_ring", "w1_ring", "w2_ring", "h_tiles", "y_tiles"]
# The trees of the module's doc, over the users in local_alloc order (BUFFERS).
EPILOGUE = planner.Group("shared", (4, 3))
PHASE1 = planner.Group("distinct", (0, 1))
SHARED_TREE = planner.Group("distinct", (EPILOGUE, planner.Group("shared", (PHASE1, 2))))
SEPARATE_TREE = planner.Group("distinct", (EPILOGUE, planner.Group("distinct", (PHASE1, 2))))
PHASE_TREES = (
    planner.Group("distinct", (EPILOGUE, PHASE1)),
    planner.Group("distinct", (EPILOGUE, 2)),
)


def whole_views(size_bytes, view_bytes=32768):
    """A region's size as Triton 3.8 allocates it: a multiple of every view's bytes (32 KiB)."""
    return -(-size_bytes // view_bytes) * view_bytes if NEEDS_WHOLE_VIEWS else size_bytes


@pytest.fixture(scope="module")
def mlp():
    return importlib.import_module("tlx_kernels.hopper.fused_mlp")


def test_default_configs(mlp):
    shared, separate = mlp.default_config("shared"), mlp.default_config("separate")
    phases = mlp.default_config("phases")
    assert (shared.block_m, shared.block_n, shared.block_h, shared.block_k) == (128, 256, 64, 64)
    assert dataclasses.replace(separate, stages=5, w2_stages=5, layout="shared") == shared
    assert (shared.stages, shared.w2_stages) == (5, 5)
    assert (separate.stages, separate.w2_stages) == (4, 2)
    assert dataclasses.replace(separate, stages=6, w2_stages=3, layout="phases") == phases
    with pytest.raises(ValueError, match="w2_stages must equal stages, got 2 and 4"):
        mlp.Config(256, 64, 4, 2, "shared")
    with pytest.raises(ValueError, match="layout must be one of"):
        mlp.default_config("stages")
    with pytest.raises(ValueError, match="at least two stages, got 1"):
        mlp.Config(256, 64, 1, 1, "separate")


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_shared_phases_run_one_ring(mlp, dtype):
    """Stage i of W2 lies over stage i of the X/W1 ring and nothing else; H and Y tile c
    share bytes; nothing else overlaps."""
    smem = mlp.smem_plan(mlp.default_config("shared"), dtype)
    plan = smem.plan
    assert [b.name for b in smem.buffers] == BUFFERS
    assert smem.tree == SHARED_TREE
    assert plan.ok and smem.allocated, plan.errors
    assert plan.size_bytes == plan.ideal_bytes == 229376 <= SMEM_LIMIT
    ranges = buffer_ranges(smem)
    for stage in range(5):
        x, w1, w2 = (ranges[name, stage] for name in ("x_ring", "w1_ring", "w2_ring"))
        # X then W1 (16 + 8 KiB) inside the stage's 32 KiB of W2.
        assert w2[0] == x[0] and x[1] == w1[0] and w1[1] <= w2[1]
        assert w2[1] - w2[0] == 32768
    expected = {(("h_tiles", c), ("y_tiles", c)) for c in range(2)}
    expected |= {(("w1_ring", i), ("w2_ring", i)) for i in range(5)}
    expected |= {(("w2_ring", i), ("x_ring", i)) for i in range(5)}
    assert overlapping_pairs(smem) == expected


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_separate_phases_share_nothing(mlp, dtype):
    smem = mlp.smem_plan(mlp.default_config("separate"), dtype)
    assert smem.tree == SEPARATE_TREE
    assert smem.plan.ok and smem.plan.size_bytes == smem.plan.ideal_bytes == 229376
    assert overlapping_pairs(smem) == {(("h_tiles", c), ("y_tiles", c)) for c in range(2)}


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_phases_lay_the_w2_ring_over_the_x_w1_ring(mlp, dtype):
    """Two phases, each its own map: X, W1, H and Y in the first, W2, H and Y in the second;
    the W2 ring lies over X/W1 bytes, H and Y keep one place apart from both rings."""
    smem = mlp.smem_plan(mlp.default_config("phases"), dtype)
    plan = smem.plan
    assert [b.name for b in smem.buffers] == BUFFERS
    assert smem.tree is None and smem.phases == PHASE_TREES
    assert plan.phases == ((4, 3, 0, 1), (4, 3, 2))
    assert plan.ok and smem.allocated, plan.errors
    # The first phase is the larger: 6 x 24 KiB + 64 KiB; 3 x 32 KiB of W2 lie inside it.
    assert plan.ideal_bytes == 212992
    assert plan.size_bytes == whole_views(212992) <= SMEM_LIMIT
    ranges = buffer_ranges(smem)
    phase1 = [ranges[name, i] for name in ("x_ring", "w1_ring") for i in range(6)]
    epilogue = [ranges[name, c] for name in ("h_tiles", "y_tiles") for c in range(2)]
    for i in range(3):
        start, end = ranges["w2_ring", i]
        assert any(s < end and start < e for s, e in phase1)
        assert all(end <= s or e <= start for s, e in epilogue)
    for start, end in phase1:
        assert all(end <= s or e <= start for s, e in epilogue)
    pairs = overlapping_pairs(smem)
    assert {(("h_tiles", c), ("y_tiles", c)) for c in range(2)} <= pairs
    assert any("w2_ring" in (a[0], b[0]) and "x_ring" in (a[0], b[0]) for a, b in pairs)
    # Within a phase nothing else overlaps: no two X/W1 buffers, no two W2 buffers.
    for a, b in pairs:
        assert {a[0], b[0]} in (
            {"h_tiles", "y_tiles"},
            {"w2_ring", "x_ring"},
            {"w2_ring", "w1_ring"},
        )


def test_phases_fit_more_stages_than_separate_rings(mlp):
    """At the target's limit: separate fits 4 X/W1 + 2 W2 stages (224 KiB), phases 6 + 3
    (208 KiB) or 6 + 5 (224 KiB); at 128 x 128 tiles and BLOCK_H 128, 4 + 2 against 6 + 3.
    Neither fits a seventh (phases) or fifth (separate) X/W1 stage."""
    for block_n, block_h, ph_bytes in ((256, 64, 212992), (128, 128, 229376)):
        separate = mlp.smem_plan(mlp.Config(block_n, block_h, 4, 2, "separate")).plan
        phases = mlp.smem_plan(mlp.Config(block_n, block_h, 6, 3, "phases")).plan
        assert phases.ideal_bytes == ph_bytes <= separate.ideal_bytes == 229376
        assert phases.size_bytes == whole_views(ph_bytes) <= separate.size_bytes
        for config in (
            mlp.Config(block_n, block_h, 5, 2, "separate"),
            mlp.Config(block_n, block_h, 7, 3, "phases"),
        ):
            with pytest.raises(CompilationError) as error:
                mlp.smem_plan(config)
            assert TOO_BIG in mlp.planner_message(error.value)
    assert mlp.smem_plan(mlp.Config(256, 64, 6, 5, "phases")).plan.ideal_bytes == 229376


def test_shared_phases_take_a_smaller_region(mlp):
    """At equal stages the shared layout needs one ring, not two: 2 x 32 KiB + H and Y
    (64 KiB) against 2 x 24 + 2 x 32 + 64 KiB; at five stages only the shared one fits."""
    two = mlp.Config(256, 64, 2, 2, "shared")
    shared = mlp.smem_plan(two).plan
    separate = mlp.smem_plan(dataclasses.replace(two, layout="separate")).plan
    assert shared.size_bytes == 131072 < separate.size_bytes
    assert separate.ideal_bytes == 180224
    with pytest.raises(CompilationError):
        mlp.smem_plan(dataclasses.replace(mlp.default_config("shared"), layout="separate"))


def test_default_configs_are_the_most_stages_that_fit(mlp):
    for config in (
        mlp.Config(256, 64, 6, 6, "shared"),
        mlp.Config(256, 64, 5, 2, "separate"),
        mlp.Config(256, 64, 4, 3, "separate"),
    ):
        with pytest.raises(CompilationError) as error:
            mlp.smem_plan(config)
        assert TOO_BIG in mlp.planner_message(error.value)


def test_kernel_compiles_to_a_cubin_for_sm90a(mlp):
    for layout in mlp.LAYOUTS:
        config = mlp.default_config(layout)
        smem = mlp.smem_plan(config, "bf16")
        compiled = mlp.compile_for_hopper(config, "bf16", "relu")
        assert compiled.asm["cubin"]
        ttgir = compiled.asm["ttgir"]
        ((alignment, rows),) = SMEM_BACKING.findall(ttgir)
        assert int(rows) * 128 == smem.plan.size_bytes
        assert int(alignment) == smem.plan.alignment
        # Phase 1 (64 x 64 products), phase 2 (64 x 256), in the consumer partitions.
        assert ttgir.count("ttng.warp_group_dot ") == 4
        assert "ttg.warp_specialize" in ttgir
        # One pair of ring barriers per stage: shared, 5; separate, 4 + 2; phases, 6 + 3.
        barriers = {"shared": 10, "separate": 12, "phases": 18}[layout]
        assert ttgir.count("ttng.init_barrier") == barriers
        # Each consumer waits on ready and ready2, the loader on empty and empty2, and with
        # phases on each again to drain the ring at a change of phase.
        loader_waits = {"shared": 2, "separate": 2, "phases": 4}[layout]
        assert ttgir.count("ttng.wait_barrier") == 4 + loader_waits
        assert smem.plan.size_bytes < compiled.metadata.shared <= SMEM_LIMIT


def test_launchers_refuse_bad_inputs(mlp):
    x = torch.zeros(4, 8, dtype=torch.float16)
    w1 = torch.zeros(8, 32, dtype=torch.float16)
    w2 = torch.zeros(32, 8, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"w2 \[hidden, d_model\], got \(4, 8\), \(8, 32\)"):
        mlp.fused_mlp(x, w1, w2.t())
    with pytest.raises(ValueError, match="must all be float16 or bfloat16"):
        mlp.fused_mlp(x, w1.bfloat16(), w2)
    with pytest.raises(ValueError, match="must be CUDA tensors, got cpu, cpu and cpu"):
        mlp.fused_mlp(x, w1, w2)
    with pytest.raises(ValueError, match="activation must be one of"):
        mlp.fused_mlp(x, w1, w2, activation="silu")
    with pytest.raises(ValueError, match="layout must be one of"):
        mlp.autotune_configs("stages")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the script would use the GPU")
def test_script_compiles_and_prints_the_plans_without_gpu(mlp, capsys):
    assert run_tutorial("hopper_fused_mlp.py") == 0
    out = capsys.readouterr().out
    assert out.count("sealed by set_buffer_overlap") == 3
    # Triton 3.8 rounds the phases' region to whole views of its largest buffer (32 KiB).
    assert out.count("SMEM region 229376 bytes (224 KiB, aligned to 1024)") == (
        3 if NEEDS_WHOLE_VIEWS else 2
    )
    assert out.count("SMEM region 212992 bytes (208 KiB, aligned to 1024)") == (
        0 if NEEDS_WHOLE_VIEWS else 1
    )
    assert out.count("each phase alone") == 1
    assert "w2_ring 3 x [64, 256] 16-bit: buffers at bytes [65536, 98304, 131072]" in out
    assert "w2_ring 5 x [64, 256] 16-bit: buffers at bytes [65536, 98304, 131072" in out
    assert "x_ring  5 x [128, 64] 16-bit: buffers at bytes [65536, 98304, 131072" in out
    assert "w2_ring 2 x [64, 256] 16-bit: buffers at bytes [163840, 196608]" in out
    assert "x/w1 stages=5 w2 stages=5): does not compile: " in out
    assert "No Hopper GPU: compiling for sm_90a only." in out
    assert out.count("cubin") == 6


def test_plans_prints_the_pruners_verdict_on_the_three_spaces(mlp, monkeypatch, capsys):
    assert run_tutorial("hopper_fused_mlp.py", "--plans") == 0
    out = capsys.readouterr().out
    fits = out.count(": fits, ")
    pruned = out.count(": pruned: ")
    assert fits + pruned == sum(len(mlp.autotune_configs(layout)) for layout in mlp.LAYOUTS)
    # Triton 3.8 rounds a region to whole views: fewer configurations fit there.
    assert pruned >= 6 and fits >= (3 if NEEDS_WHOLE_VIEWS else 12)
    assert "BLOCK_H=64 BLOCK_K=64 shared: ring=5: fits, 229376 bytes of SMEM region" in out
    # The planner's own message, not the kernel's source (the spec is sealed in a helper).
    assert 'shared: ring=6: pruned: storage_alias_spec "smem" (created at ' in out
    assert "BLOCK_H=64 BLOCK_K=64 phases: x/w1 stages=7 w2 stages=3: pruned: " in out
    assert TOO_BIG in out and "_smem_buffers(" not in out


def test_bench_needs_a_hopper_gpu(monkeypatch, capsys):
    bench = importlib.import_module("fused_mlp")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(sys, "argv", ["fused_mlp.py"])
    with pytest.raises(SystemExit, match="needs a Hopper GPU"):
        bench.main()
    monkeypatch.setattr(sys, "argv", ["fused_mlp.py", "--runs", "10"])
    with pytest.raises(SystemExit):
        bench.main()
    assert "--runs must be at least 20" in capsys.readouterr().err


def test_hidden_splits_are_refused_clearly(mlp):
    """A split count under one, or more splits than hidden chunks (a split of no chunk), and
    sums past the reduction's 32-bit offsets are refused with what to change."""
    for splits in (0, -2, 2.0):
        with pytest.raises(ValueError, match=rf"hidden_splits={splits!r}: a number of CTAs"):
            mlp.Config(256, 64, 5, 5, "shared", hidden_splits=splits)
    split = mlp.Config(128, 128, 6, 6, "shared", hidden_splits=4)
    mlp.check_hidden_splits(split, 4 * 128 - 127)  # four chunks of 128, the last of one unit
    with pytest.raises(
        ValueError,
        match=r"hidden_splits=4 is more than the 3 hidden chunks of BLOCK_H=128 in hidden=384",
    ):
        mlp.check_hidden_splits(split, 384)
    # 1024 x 128 tiles of 128 x 128, a whole-tile sum each: 2**31 fp32.
    with pytest.raises(ValueError, match=r"need 2147483648 fp32 sums, more than 32-bit"):
        mlp.split_sums(torch.device("cpu"), 131072, 16384, [split])


def test_split_sums_size_the_largest_launch(mlp):
    """One home for the workspace and counters of both kernels' splits: the fused MLP's launches
    grow the same device buffers as the GEMM's split-K."""
    reduction = importlib.import_module("tlx_kernels.hopper.split_reduction")
    device = torch.device("cpu")
    reduction.forget_stream_buffers(device)
    plain = mlp.default_config()
    workspace, counters = mlp.split_sums(device, 4096, 256, [plain])
    assert workspace.numel() == 1 and counters.numel() == 1
    configs = [
        plain.replace(hidden_splits=8),
        mlp.Config(128, 128, 6, 6, "shared", hidden_splits=4),
    ]
    workspace, counters = mlp.split_sums(device, 4133, 256, configs)
    # The GEMM's tile-major slots, a whole-tile sum each: 33 row blocks of one 128 x 256 tile
    # (as many as 66 tiles of 128 x 128); the counters two a tile of the launch of most
    # tiles, 33 row blocks x 2 column tiles of 128 columns.
    assert workspace.numel() == 33 * 128 * 256 and not workspace.any()
    assert counters.numel() == 2 * 33 * 2 and not counters.any()
    assert reduction.stream_buffers(device) == (workspace, counters)


SMS = 132  # an H100 SXM's or H200's


def test_the_tuner_takes_the_splits_by_default(mlp):
    """The base space (``autotune_space(layout)``) has no splits; ``split_hidden=True`` adds
    each base's splits to it, and that is what ``autotuned_fused_mlp``'s tuner searches
    unless told ``split_hidden=False``. Where a wave of the row blocks keeps the SMs busy, the
    prune keeps no split."""
    for layout in mlp.LAYOUTS:
        base = mlp.autotune_space(layout)
        assert all(config.hidden_splits == 1 for config in base)
        split = mlp.autotune_space(layout, split_hidden=True)
        assert split[: len(base)] == base
        assert split[len(base) :] == [
            config.replace(hidden_splits=splits)
            for config in mlp.SPLIT_BASES[layout]
            for splits in mlp.HIDDEN_SPLIT_FACTORS
        ]
        tuned = [mlp.config_of(config) for config in mlp.autotuned_kernel("fp16", layout).configs]
        assert tuned == split
        tuned = mlp.autotuned_kernel("fp16", layout, False).configs
        assert [mlp.config_of(config) for config in tuned] == base
        assert mlp.shape_configs(4096, 128, 512, SMS, base) == base
        # 512 row blocks of 128 rows: four waves on 132 SMs, 97% of them busy; nor 64-row
        # tiles.
        assert mlp.shape_configs(65536, 128, 512, SMS, split) == [
            config for config in base if config.block_m == 128
        ]


def test_chunk_split_tiles_only_where_row_blocks_leave_sms_idle(mlp):
    """The 64 x 128 tiles (``CHUNK_SPLIT_CONFIGS``, every layout's space) are timed where a
    wave of the 128-row tiles of 128 columns keeps under 90% of the SMs busy: 32 row blocks
    at 4096 tokens, 64 at 8192 (but at d_model 256: two column tiles, 128 tiles), none from
    16384 tokens (128 row blocks, 97%)."""
    for layout in mlp.LAYOUTS:
        base = mlp.autotune_space(layout)
        rows = [config for config in base if config.block_m == 128]
        chunks = [config for config in base if config.block_m == 64]
        assert chunks == list(mlp.CHUNK_SPLIT_CONFIGS[layout])
        # None for the phases layout, whose drained ring would serialize the consumers.
        widths = [] if layout == "phases" else [(128, 128)]
        assert [(config.block_n, config.block_h) for config in chunks] == widths
        for tokens, d_model, kept in (
            (4096, 128, True),
            (4133, 256, True),
            (8192, 128, True),
            (8192, 256, False),
            (16384, 128, False),
            (262144, 256, False),
        ):
            found = mlp.shape_configs(tokens, d_model, 4 * d_model, SMS, base)
            assert found == rows + (chunks if kept else [])


def test_chunk_split_tiles_are_refused_but_128_columns_wide(mlp):
    """BLOCK_M is 128 or 64, and with 64 BLOCK_N is 128 (a consumer's partial of the whole
    tile of Y beside a chunk of H in registers)."""
    with pytest.raises(ValueError, match=r"block_m=96: 128 \(each consumer warpgroup"):
        mlp.Config(128, 128, 6, 6, "shared", block_m=96)
    with pytest.raises(ValueError, match="block_m=64 takes block_n=128, got 256"):
        mlp.Config(256, 128, 3, 3, "shared", block_m=64)
    with pytest.raises(ValueError, match="block_m=64 takes block_n=128, got 64"):
        mlp.Config(64, 128, 5, 5, "shared", block_m=64)


def test_chunk_split_tiles_take_even_undrained_rings(mlp):
    """With BLOCK_M = 64 each consumer reads its half of each ring's stages: odd depths and
    the phases layout (drained at each change of phase) are refused, naming the numbers."""
    with pytest.raises(ValueError, match=r"even stages and w2_stages \(got 7 and 7\)"):
        mlp.Config(128, 128, 7, 7, "shared", block_m=64)
    with pytest.raises(ValueError, match=r"\(got 6 and 3\)"):
        mlp.Config(128, 128, 6, 3, "separate", block_m=64)
    with pytest.raises(ValueError, match="got layout='phases'"):
        mlp.Config(128, 128, 8, 4, "phases", block_m=64)


@pytest.mark.parametrize("layout", ["shared", "separate"])
def test_chunk_split_tiles_plan_over_the_rings_and_compile(mlp, layout):
    """Each 64-row tile of the space fits (the planner's region within the SMEM limit), with
    no H tiles, Y over the fp32 partial over the rings' first stage (the region no larger
    than the rings), the rings-read and partial-written barriers beside the ring's, H as the
    register operand of Y's product (one product a chunk, no SMEM A operand), one TMA store
    of Y, and the activation's tanh one instruction an element (no ex2, no division)."""
    for config in mlp.CHUNK_SPLIT_CONFIGS[layout]:
        plan = mlp.smem_plan(config)
        assert plan.plan.ok and plan.plan.size_bytes <= SMEM_LIMIT
        names = [buffer.name for buffer in plan.buffers]
        assert names == ["x_ring", "w1_ring", "w2_ring", "y_tiles", "y_partial"]
        stage = 64 * 64 * 2 + 64 * 128 * 2
        w2_stage = 128 * 128 * 2
        if layout == "shared":
            rings = config.stages * max(stage, w2_stage)
        else:
            rings = config.stages * stage + config.w2_stages * w2_stage
        # The epilogue (the 32 KiB partial) lies over the first stage: at most the stage's
        # excess over it.
        assert plan.plan.size_bytes <= rings + 64 * 128 * 4 - min(stage, w2_stage)
        compiled = mlp.compile_for_hopper(config, "bf16", "gelu")
        assert compiled.asm["cubin"] and compiled.metadata.shared <= SMEM_LIMIT
        ptx = compiled.asm["ptx"]
        assert "tanh.approx.f32" in ptx and "ex2" not in ptx and "div." not in ptx
        ttgir = compiled.asm["ttgir"]
        assert ttgir.count("ttng.async_tma_copy_local_to_global") == 1
        # Y's product takes H from registers: an A operand of a dot-operand layout.
        assert "ttng.warp_group_dot" in ttgir and "#ttg.dot_op<{opIdx = 0" in ttgir


def kept_splits(mlp, tokens, d_model, layout):
    """{(BLOCK_N, BLOCK_H): [splits the tuner times]} at tokens x d_model, hidden 4 x
    d_model."""
    space = mlp.autotune_space(layout, split_hidden=True)
    kept = mlp.shape_configs(tokens, d_model, 4 * d_model, SMS, space)
    assert [config for config in kept if config.hidden_splits == 1 and config.block_m == 128] == [
        config for config in space if config.hidden_splits == 1 and config.block_m == 128
    ]
    found = {}
    for config in kept:
        if config.hidden_splits > 1:
            assert config.replace(hidden_splits=1) in mlp.SPLIT_BASES[layout]
            found.setdefault((config.block_m, config.block_n, config.block_h), []).append(
                config.hidden_splits
            )
    return found


@pytest.mark.parametrize("layout", ["shared", "separate", "phases"])
def test_the_tuner_splits_the_hidden_dimension_only_where_sms_idle(mlp, layout):
    """At 4096 tokens, 32 row blocks of 128 leave most of 132 SMs idle: the splits that fill
    them, at most one slice a hidden chunk, and those of the 64 blocks of 64 rows; from 16384
    tokens (128 row blocks, 97% of the SMs) to 262144, none. 1000 tokens: 8 row blocks, split
    16 ways where there are 16 chunks."""
    wide, narrow = (128, 256, 64), (128, 128, 128)
    # No 64-row tiles in the phases layout (test_chunk_split_tiles_take_even_undrained_rings).
    chunks = {(64, 128, 128): [2, 4]} if layout != "phases" else {}
    assert kept_splits(mlp, 4096, 128, layout) == {wide: [4, 8], narrow: [4], **chunks}
    # 64 x 128 tiles at d_model 256: two column tiles x 64 row blocks, 97% of the SMs.
    for tokens in (4096, 4133):
        assert kept_splits(mlp, tokens, 256, layout) == {wide: [4, 8], narrow: [2, 4]}
    chunks = {(64, 128, 128): [4, 8]} if layout != "phases" else {}
    assert kept_splits(mlp, 1000, 256, layout) == {wide: [16], narrow: [8], **chunks}
    for tokens in (16384, 65536, 262144):
        for d_model in (128, 256):
            assert kept_splits(mlp, tokens, d_model, layout) == {}


@whole_space_on_newest_triton
@pytest.mark.parametrize("layout", ["shared", "separate", "phases"])
def test_split_configurations_plan_as_their_base_and_compile(mlp, layout):
    """A split adds no SMEM (its partials go from registers to the workspace): each split
    configuration of the space plans exactly as its base, or the planner refuses both; the
    fewest and the most splits of each base compile to a cubin for sm_90a with the reduction
    (an atomic add per consumer) and Y's TMA stores."""
    for base in mlp.SPLIT_BASES[layout]:
        try:
            expected = mlp.smem_plan(base).plan
        except CompilationError as error:
            assert TOO_BIG in mlp.planner_message(error)
            expected = None
        for splits in mlp.HIDDEN_SPLIT_FACTORS:
            config = base.replace(hidden_splits=splits)
            if expected is None:
                with pytest.raises(CompilationError) as error:
                    mlp.smem_plan(config)
                assert TOO_BIG in mlp.planner_message(error.value)
                continue
            plan = mlp.smem_plan(config).plan
            assert (plan.size_bytes, plan.ideal_bytes) == (
                expected.size_bytes,
                expected.ideal_bytes,
            )
            if splits not in (min(mlp.HIDDEN_SPLIT_FACTORS), max(mlp.HIDDEN_SPLIT_FACTORS)):
                continue
            compiled = mlp.compile_for_hopper(config, "fp16", "gelu")
            assert compiled.asm["cubin"]
            ttgir = compiled.asm["ttgir"]
            assert ttgir.count("tt.atomic_rmw") == 2
            assert ttgir.count("ttng.async_tma_copy_local_to_global") == 2
            assert compiled.metadata.shared <= SMEM_LIMIT
    assert mlp.smem_plan(mlp.SPLIT_BASES[layout][0]).plan.ok
