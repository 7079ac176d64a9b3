"""The GEMM off the square grid, on the CPU: split-K and the 256 x 128 tiles as configurations
(what they refuse, what the tuner keeps at which shape), their SMEM plans, and their kernels
compiled for sm_90a or pruned with the planner's reason. The GPU tests are
test/gpu/test_hopper_gemm.py's."""

import importlib

import pytest
import tlx
import torch
from triton.compiler.errors import CompilationError

SMS = 132  # an H100 SXM's or H200's


@pytest.fixture(scope="module")
def gemm():
    return importlib.import_module("tlx_kernels.hopper.gemm")


def test_split_k_needs_one_tile_a_cta_and_warp_specialization(gemm):
    with pytest.raises(ValueError, match=r"split_k=0: a number of K splits, 1 or more"):
        gemm.Config(128, 256, 64, 4, alias_c=True, split_k=0)
    for refused in (
        {"alias_c": False, "persistent": True},
        {"alias_c": True, "warp_specialize": False},
        {"alias_c": False, "stagger": 2},
    ):
        with pytest.raises(ValueError, match=r"split_k=2: each split of a tile is a CTA"):
            gemm.Config(128, 256, 64, 3, split_k=2, **refused)
    config = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4)
    assert repr(config).endswith(" split_k=4")
    assert gemm.constexprs(config)["SPLIT_K"] == 4
    assert gemm.config_of(config.kernel_arguments()) == config


def shape_kept(gemm, M, N, K):
    return gemm.shape_configs(M, N, K, SMS)


@pytest.mark.parametrize(
    ("shape", "splits"),
    [
        # 16 x 2 tiles of 128 x 256: 4 splits fill 128 of the 132 SMs, 8 two waves of 128.
        ((2048, 512, 8192), {(128, 256): [4, 8], (256, 128): [4, 8], (128, 128): [2, 4]}),
        # One row of 16 tiles of 128 x 256: no 256-row tile for 128 rows.
        ((128, 4096, 4096), {(128, 256): [8, 16], (128, 128): [4, 8]}),
        # 72 tiles: 5 splits make 360 CTAs, 2.73 waves; 144 tiles of 128 x 128 are a wave.
        ((1536, 1536, 1536), {(128, 256): [5], (256, 128): [5]}),
    ],
)
def test_the_tuner_tries_split_k_where_the_tiles_leave_sms_idle(gemm, shape, splits):
    kept = shape_kept(gemm, *shape)
    found = {}
    for config in kept:
        if config.split_k > 1:
            found.setdefault((config.block_m, config.block_n), []).append(config.split_k)
    assert found == splits
    # Each kept split fills at least 90% of the SMs' time over its waves, each split of 4
    # K steps at least.
    M, N, K = shape
    for config in kept:
        if config.split_k > 1:
            tiles = -(-M // config.block_m) * -(-N // config.block_n)
            assert gemm.wave_occupancy(tiles * config.split_k, SMS) >= 0.9
            assert -(-K // 64) >= 4 * config.split_k


@pytest.mark.parametrize(
    "shape", [(8192, 8192, 8192), (4096, 14336, 4096), (16384, 1024, 1024), (6144, 3072, 5120)]
)
def test_large_products_keep_the_space_of_the_square_grid(gemm, shape):
    """No split-K where the tiles make a wave or more, no 256 x 128 tiles where 128 x 256
    tiles make four waves or more: first-call tuning there times what it timed before."""
    kept = shape_kept(gemm, *shape)
    assert all(config.split_k == 1 for config in kept)
    if shape[0] * shape[1] < 4 * SMS * 128 * 256:
        return  # 6144 x 3072: 3.3 waves of 128 x 256 tiles, the 256 x 128 ones tried
    assert not any(config in gemm.MID_TILES for config in kept)
    assert len(kept) == len(gemm.autotune_space()) - len(gemm.MID_TILES) - len(
        gemm.SPLIT_K_TILES
    ) * len(gemm.SPLIT_K_FACTORS)


def test_mid_sized_products_try_the_256_x_128_tiles(gemm):
    kept = shape_kept(gemm, 1536, 1536, 1536)
    assert all(tile in kept for tile in gemm.MID_TILES)


def test_split_k_buffers_grow_to_the_largest_need(gemm):
    device = torch.device("cpu")
    gemm._split_k_buffers.pop(device, None)
    split = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4)
    plain = gemm.default_config()
    workspace, counters = gemm.split_k_buffers(device, [plain], 100, 100)
    assert workspace.numel() == 1 and counters.numel() == 1
    workspace, counters = gemm.split_k_buffers(device, [plain, split], 300, 600)
    assert workspace.numel() == 4 * 300 * 600
    assert counters.numel() == 2 * 3 * 3 and not counters.any()
    again = gemm.split_k_buffers(device, [split], 128, 256)
    assert again[0] is workspace and again[1] is counters
    with pytest.raises(ValueError, match="more than 32-bit offsets address"):
        gemm.split_k_buffers(device, [split], 32768, 32768)


def new_configs(gemm):
    splits = [config for config in gemm.autotune_space() if config.split_k > 1]
    return [*gemm.MID_TILES, *splits]


def test_every_new_configuration_fits_or_is_pruned_with_the_planners_reason(gemm):
    """The plan pruner's verdict on each 256 x 128 and split-K configuration: its SMEM region
    (the ring and C; split-K's partials go from registers to the workspace, no SMEM staged),
    or the planner's reasons."""
    pruner = tlx.PlanPruner(gemm.gemm_kernel, target=gemm.SM90A)
    arguments = gemm.placeholder_arguments("fp16")
    for config in new_configs(gemm):
        verdict = pruner.verdict(gemm.HOST.triton_config(config), arguments)
        if verdict.fits:
            smem = verdict.budget.storage(tlx.storage_kind.smem).used_units
            stage = (config.block_m + config.block_n) * config.block_k * 2
            c_bytes = 0 if config.alias_c else config.block_m * config.block_n * 2
            assert smem == config.num_stages * stage + c_bytes, config
        else:
            assert verdict.reasons and all(verdict.reasons), config


@pytest.mark.parametrize(
    "config_fields",
    [
        {"block_m": 128, "block_n": 256, "num_stages": 4, "alias_c": True, "split_k": 4},
        {"block_m": 256, "block_n": 128, "num_stages": 4, "alias_c": True, "split_k": 2},
        {"block_m": 256, "block_n": 128, "num_stages": 4, "alias_c": True},
        {"block_m": 256, "block_n": 128, "num_stages": 3, "alias_c": False, "persistent": True},
    ],
    ids=["split4_128x256", "split2_256x128", "256x128", "256x128_persistent"],
)
def test_new_configurations_compile_for_sm90a(gemm, config_fields):
    config = gemm.Config(block_k=64, **config_fields)
    if tlx.compat.NEEDS_WHOLE_VIEWS and config_fields.get("persistent"):
        # Triton 3.8's views each cover the whole region, so the region is a multiple of
        # C's 64 KiB: 208 KiB of buffers take 256 KiB, and the tuner prunes the configuration.
        with pytest.raises(CompilationError, match="needs 262144 bytes"):
            gemm.smem_plan(config)
        return
    smem = gemm.smem_plan(config)
    compiled = gemm.compile_for_hopper(config, "bf16")
    assert compiled.asm["cubin"]
    assert smem.plan.size_bytes < compiled.metadata.shared <= 232448
    ptx = compiled.asm["ptx"]
    if config.split_k > 1:
        # One acquire-release arrival a consumer; the partials read through the L2.
        assert ptx.count("atom.global.gpu.acq_rel.add") == 2
        assert "ld.global.cg" in ptx
    else:
        assert "atom.global" not in ptx


def test_the_bench_grid_takes_groups_and_shapes():
    bench = importlib.import_module("gemm")
    everything = bench.grid_rows("all")
    assert len(everything) == 7 + 28 + 3 and len(set(everything)) == len(everything)
    assert (8192, 8192, 28672) in everything and (1536, 1536, 1536) in everything
    assert bench.grid_rows("quick,2048x512x8192,100x200x300") == [
        *bench.QUICK_SHAPES,
        (100, 200, 300),
    ]
    with pytest.raises(ValueError, match=r"'12x34' is neither"):
        bench.grid_rows("cubes,12x34")
