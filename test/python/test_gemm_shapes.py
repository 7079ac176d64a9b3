"""The GEMM off the square grid, on the CPU: split-K, the last-wave schedule, the 256 x 128,
128 x 192, 128 x 160 and 64 x 64 tiles as configurations (what they refuse, what the tuner
keeps at which shape), the split units' schedule, their SMEM plans, and their kernels compiled
for sm_90a or pruned with the planner's reason. The GPU tests are test/gpu/test_hopper_gemm.py's."""

import importlib

import pytest
import tlx
import torch
from tlx_kernels.hopper import split_reduction
from triton.compiler.errors import CompilationError

SMS = 132  # an H100 SXM's or H200's


@pytest.fixture(scope="module")
def gemm():
    return importlib.import_module("tlx_kernels.hopper.gemm")


def test_split_k_needs_one_tile_a_cta(gemm):
    with pytest.raises(ValueError, match=r"split_k=0: a number of K splits, 1 or more"):
        gemm.Config(128, 256, 64, 4, alias_c=True, split_k=0)
    for refused in ({"alias_c": False, "persistent": True}, {"alias_c": False, "stagger": 2}):
        with pytest.raises(ValueError, match=r"split_k=2: each split of a tile is a CTA"):
            gemm.Config(128, 256, 64, 3, split_k=2, **refused)
    config = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4)
    assert repr(config).endswith(" split_k=4")
    assert gemm.constexprs(config)["SPLIT_K"] == 4
    assert gemm.config_of(config.kernel_arguments()) == config


def test_tile_rows_fit_the_warpgroups(gemm):
    """Two consumer warpgroups take 64 rows each (or a multiple), one warpgroup alone 64."""
    with pytest.raises(ValueError, match=r"block_m=64: the two consumer warpgroups .* of 128"):
        gemm.Config(64, 64, 64, 8, alias_c=True)
    with pytest.raises(ValueError, match=r"block_m=96: a multiple of 64 \(a warpgroup's MMA"):
        gemm.Config(96, 64, 64, 8, alias_c=True, warp_specialize=False)
    assert gemm.block_shapes(gemm.SKINNY_TILES[0]) == ([64, 64], [64, 64], [32, 64])


@pytest.mark.parametrize(
    "shape, tried",
    [
        # 128 x 64 tiles: 64 CTAs of 132 SMs; 64 x 64 tiles make 128.
        ((128, 4096, 4096), True),
        ((512, 1024, 4096), True),
        ((128, 4096, 14336), True),
        # 128 x 64 tiles make 224 and 256 CTAs: a wave or more.
        ((128, 14336, 4096), False),
        ((2048, 1024, 4096), False),
        ((4096, 4096, 4096), False),
    ],
)
def test_64_row_tiles_only_where_128_x_64_tiles_leave_sms_idle(gemm, shape, tried):
    kept = shape_kept(gemm, *shape)
    assert all((tile in kept) == tried for tile in gemm.SKINNY_TILES)


def test_last_wave_split_needs_a_persistent_kernel_without_split_k(gemm):
    with pytest.raises(ValueError, match=r"last_wave_split=0: a number of K splits, 1 or more"):
        gemm.Config(128, 256, 64, 3, alias_c=False, persistent=True, last_wave_split=0)
    for refused in ({"persistent": False}, {"persistent": True, "split_k": 2}):
        with pytest.raises(ValueError, match=r"last_wave_split=4: .* needs persistent=True and"):
            gemm.Config(128, 256, 64, 3, alias_c=False, last_wave_split=4, **refused)
    config = gemm.Config(128, 256, 64, 3, alias_c=False, persistent=True, last_wave_split=4)
    assert repr(config).endswith(" persistent last_wave_split=4")
    assert gemm.constexprs(config)["LAST_WAVE_SPLIT"] == 4
    assert gemm.config_of(config.kernel_arguments()) == config
    # A unit of no K step would release a ring stage twice: refused at the launch.
    gemm._check_splits(config, 4 * 64)
    with pytest.raises(ValueError, match=r"last_wave_split=4 splits of K=192, more than its 3"):
        gemm._check_splits(config, 3 * 64)


def cta_work(gemm_state, cta, ctas, tiles, k_steps, splits):
    """[(tile, split, slot, k_first, k_count)] of persistent CTA ``cta`` of ``ctas``, as the
    kernel's partitions walk it (gemm_kernel._load_partition and _mma_partition): the whole
    waves' tiles (split None), then its split units of the last wave's; without splits, every
    tile whole."""
    if splits == 1:
        return [(tile, None, None, 0, k_steps) for tile in range(cta, tiles, ctas)]
    whole, ragged = gemm_state.last_wave.fn(tiles, ctas)
    work = [(tile, None, None, 0, k_steps) for tile in range(cta, whole, ctas)]
    return work + [
        gemm_state.split_unit.fn(unit, whole, ragged, k_steps, splits)
        for unit in range(cta, ragged * splits, ctas)
    ]


@pytest.mark.parametrize("splits", [1, 2, 3, 4, 6, 8])
def test_the_last_wave_schedule_covers_each_k_step_of_each_tile_once(splits):
    """Exhaustive over small grids: every (tile, K step) is computed by exactly one CTA; only
    the ragged last wave's tiles are split, each into ``splits`` units of at least one K step
    (as many steps as splits, or more: gemm._check_splits), whose slots are the ragged tiles'
    own and whose splits are 0 .. splits - 1; no CTA takes more than one unit more than
    another."""
    gemm_state = importlib.import_module("tlx_kernels.hopper.gemm_state")
    for tiles in range(1, 30):
        for ctas in range(1, tiles + 1):
            whole, ragged = gemm_state.last_wave.fn(tiles, ctas)
            assert whole % ctas == 0 and 0 <= ragged < ctas and whole + ragged == tiles
            for k_steps in range(splits, splits + 6):
                covered = {}
                units = []
                for cta in range(ctas):
                    work = cta_work(gemm_state, cta, ctas, tiles, k_steps, splits)
                    units.append(sum(split is not None for _, split, *_ in work))
                    for tile, split, slot, k_first, k_count in work:
                        if split is None:
                            assert tile < whole or splits == 1
                        else:
                            assert whole <= tile == whole + slot < tiles and k_count >= 1
                            assert 0 <= split < splits
                        for k in range(k_first, k_first + k_count):
                            assert (tile, k) not in covered
                            covered[tile, k] = (split, slot)
                assert set(covered) == {(t, k) for t in range(tiles) for k in range(k_steps)}
                for tile in range(whole, tiles):
                    split_of = {covered[tile, k][0] for k in range(k_steps)}
                    assert split_of == ({None} if splits == 1 else set(range(splits)))
                assert max(units) - min(units) <= 1


def test_split_k_ctas_are_the_units_of_every_tile(gemm):
    """Split-K's CTA program_id is split_unit's unit over every tile (gemm_kernel._cta_tiles):
    the splits of a tile cover its K steps once, and the CTAs launched together take the same
    split of different tiles."""
    gemm_state = importlib.import_module("tlx_kernels.hopper.gemm_state")
    tiles, k_steps, splits = 7, 10, 3
    work = [gemm_state.split_unit.fn(pid, 0, tiles, k_steps, splits) for pid in range(21)]
    for tile in range(tiles):
        steps = [
            k for t, _, slot, first, count in work if t == tile for k in range(first, first + count)
        ]
        assert sorted(steps) == list(range(k_steps))
        assert all(slot == t for t, _, slot, _, _ in work)
    assert [split for _, split, *_ in work[:tiles]] == [0] * tiles


def shape_kept(gemm, M, N, K):
    return gemm.shape_configs(M, N, K, SMS)


@pytest.mark.parametrize(
    ("shape", "splits"),
    [
        # 16 x 2 tiles of 128 x 256: 4 splits fill 128 of the 132 SMs, 8 two waves of 128.
        ((2048, 512, 8192), {(128, 256): [4, 8], (256, 128): [4, 8], (128, 128): [2, 4]}),
        # One row of 16 tiles of 128 x 256: no 256-row tile for 128 rows. 64 tiles of 128 x 64
        # over 64 K steps: 2 splits fill 128 SMs.
        ((128, 4096, 4096), {(128, 256): [8, 16], (128, 128): [4, 8], (128, 64): [2, 4]}),
        # 16 tiles of 128 x 64, 32 of 64 x 64 (one warpgroup): 8 and 4 splits fill 128 SMs.
        ((128, 1024, 4096), {(128, 128): [16], (128, 64): [8, 16], (64, 64): [4, 8]}),
        # 32 K steps: too few for the narrow tiles.
        ((128, 4096, 2048), {(128, 256): [8], (128, 128): [4, 8]}),
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
            assert split_reduction.wave_occupancy(tiles * config.split_k, SMS) >= 0.9
            assert -(-K // 64) >= 4 * config.split_k


LAST_WAVE_SHAPES = [
    # 576 tiles of 128 x 256: a last wave of 48 (8 splits: 384 units, 2.9 waves of 132; 2:
    # 96, as busy as 4 and 6 with fewer); 1152 of 128 x 128, 96 (4: 384; 8: 768 in 6 waves).
    ((6144, 3072, 5120), {(128, 256): [8, 2], (128, 128): [4, 8]}),
    # 144 tiles of 128 x 128, a last wave of 12 over 24 K steps: 6 splits at most; 72 of
    # 128 x 256 make no wave (split-K's).
    ((1536, 1536, 1536), {(128, 128): [6, 4]}),
    # 8 x 24 tiles of 128 x 128 (a last wave of 60 over 16 K steps): 2 splits make 120 units.
    ((1000, 3000, 999), {(128, 128): [2, 4]}),
]


@pytest.mark.parametrize(("shape", "splits"), LAST_WAVE_SHAPES)
def test_the_tuner_tries_the_last_wave_schedule_where_the_last_wave_is_ragged(gemm, shape, splits):
    M, N, K = shape
    found = {}
    for config in shape_kept(gemm, *shape):
        if config.last_wave_split > 1:
            assert config.persistent and config.split_k == 1
            found.setdefault((config.block_m, config.block_n), []).append(config.last_wave_split)
            tiles = -(-M // config.block_m) * -(-N // config.block_n)
            ragged = tiles % SMS
            assert tiles >= SMS and 0 < ragged < 0.9 * SMS
            assert split_reduction.wave_occupancy(
                ragged * config.last_wave_split, SMS
            ) > split_reduction.wave_occupancy(ragged, SMS)
            assert -(-K // 64) >= 4 * config.last_wave_split
    assert found == splits


@pytest.mark.parametrize(
    "shape",
    [
        # 132 tiles of 128 x 256 and of 256 x 128, 264 of 128 x 128: whole waves only.
        (8448, 512, 4096),
        # 257 tiles of 128 x 256 and 128 x 128: a last wave of 125, 95% of the SMs.
        (32896, 128, 4096),
        # Less than a wave of every tile.
        (1024, 1024, 1024),
    ],
)
def test_no_last_wave_schedule_where_the_last_wave_is_full_or_alone(gemm, shape):
    assert not any(config.last_wave_split > 1 for config in shape_kept(gemm, *shape))


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
    assert not any(config.replace(last_wave_split=1) in gemm.MID_TILES for config in kept)
    whole = [config for config in kept if config.last_wave_split == 1]
    assert whole == [
        config
        for config in gemm.autotune_space()
        if config.split_k == config.last_wave_split == 1
        and config not in gemm.MID_TILES
        and config not in gemm.SPLIT_COLUMN_TILES
        and config not in gemm.SKINNY_TILES
    ]


def test_mid_sized_products_try_the_256_x_128_tiles(gemm):
    kept = shape_kept(gemm, 1536, 1536, 1536)
    assert all(tile in kept for tile in gemm.MID_TILES)


def test_split_k_buffers_grow_to_the_largest_need(gemm):
    device = torch.device("cpu")
    split_reduction.forget_stream_buffers(device)
    split = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4)
    plain = gemm.default_config()
    workspace, counters = gemm.split_k_buffers(device, [plain], 100, 100)
    assert workspace.numel() == 1 and counters.numel() == 1
    # 3 x 3 tiles, the four splits of each adding into one whole-tile sum.
    workspace, counters = gemm.split_k_buffers(device, [plain, split], 300, 600)
    assert workspace.numel() == 9 * 128 * 256 and not workspace.any()
    assert counters.numel() == 2 * 3 * 3 and not counters.any()
    again = gemm.split_k_buffers(device, [split], 128, 256)
    assert again[0] is workspace and again[1] is counters
    with pytest.raises(ValueError, match="more than 32-bit offsets address"):
        gemm.split_k_buffers(device, [split], 65536, 65536)
    # The last-wave schedule's buffers hold its ragged tiles' only: 576 tiles of 128 x 256 on
    # 132 SMs leave 48 in the last wave.
    last = gemm.Config(128, 256, 64, 3, alias_c=False, persistent=True, last_wave_split=8)
    assert gemm.split_tiles(last, 6144, 3072, SMS) == (48, 8)
    assert gemm.split_k_sums(last, 6144, 3072, SMS) == 48 * 128 * 256
    assert gemm.split_tiles(last, 6144, 3072, 576) == (0, 8)
    assert gemm.split_tiles(plain, 6144, 3072, SMS) == (0, 1)
    split_reduction.forget_stream_buffers(device)
    workspace, counters = gemm.split_k_buffers(device, [plain, last], 6144, 3072, SMS)
    assert workspace.numel() == 48 * 128 * 256 and counters.numel() == 2 * 48


def test_each_stream_has_split_buffers_of_its_own(gemm, monkeypatch):
    """Split launches on two streams may run at once: the workspace and counters are a
    stream's (``split_reduction.current_stream``, here two handles on the CPU), each grown
    to its own launches, and a stream's launches share its buffers."""
    device = torch.device("cpu")
    split = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4)
    buffers = {}
    for stream, (M, N) in ((1, (300, 600)), (2, (128, 256)), (1, (128, 256))):
        monkeypatch.setattr(split_reduction, "current_stream", lambda _, stream=stream: stream)
        if stream not in buffers:
            split_reduction.forget_stream_buffers(device)
        buffers.setdefault(stream, gemm.split_k_buffers(device, [split], M, N))
        workspace, counters = gemm.split_k_buffers(device, [split], M, N)
        assert workspace is buffers[stream][0] and counters is buffers[stream][1]
        assert split_reduction.stream_buffers(device) == (workspace, counters)
    assert buffers[1][0].numel() == 9 * 128 * 256 and buffers[2][0].numel() == 128 * 256
    assert buffers[1][0].data_ptr() != buffers[2][0].data_ptr()


def assert_region_holds(region, buffers, config):
    """``region``, the SMEM region of ``config``'s plan, is its buffers' ``buffers`` bytes:
    exactly, or with Triton 3.8's whole views (each view covers the region in whole slots)
    rounded up to whole 16 KiB slots by less than the largest, C's 32 KiB (the persistent
    three-stage 128 x 192 tiles: 168 KiB of buffers take 192 KiB)."""
    if tlx.compat.NEEDS_WHOLE_VIEWS and region != buffers:
        assert buffers < region < buffers + 32768 and region % 16384 == 0, config
    else:
        assert region == buffers, config


def new_configs(gemm):
    splits = [
        config
        for config in gemm.autotune_space()
        if config.split_k > 1 or config.last_wave_split > 1
    ]
    return [*gemm.MID_TILES, *gemm.SPLIT_COLUMN_TILES, *gemm.SKINNY_TILES, *splits]


def test_every_new_configuration_fits_or_is_pruned_with_the_planners_reason(gemm):
    """The plan pruner's verdict on each 256 x 128, split-K and last-wave configuration: its
    SMEM region (the ring and C; split tiles' partials go from registers to the workspace, no
    SMEM staged), or the planner's reasons."""
    pruner = tlx.PlanPruner(gemm.gemm_kernel, target=gemm.SM90A)
    arguments = gemm.placeholder_arguments("fp16")
    for config in new_configs(gemm):
        verdict = pruner.verdict(gemm.HOST.triton_config(config), arguments)
        if verdict.fits:
            smem = verdict.budget.storage(tlx.storage_kind.smem).used_units
            stage = (config.block_m + config.block_n) * config.block_k * 2
            c_bytes = 0 if config.alias_c else config.block_m * config.block_n * 2
            assert_region_holds(smem, config.num_stages * stage + c_bytes, config)
        else:
            assert verdict.reasons and all(verdict.reasons), config


@pytest.mark.parametrize(
    "config_fields",
    [
        {"block_m": 128, "block_n": 256, "num_stages": 4, "alias_c": True, "split_k": 4},
        {"block_m": 256, "block_n": 128, "num_stages": 4, "alias_c": True, "split_k": 2},
        {"block_m": 256, "block_n": 128, "num_stages": 4, "alias_c": True},
        {"block_m": 256, "block_n": 128, "num_stages": 3, "alias_c": False, "persistent": True},
        {"block_m": 128, "block_n": 64, "num_stages": 8, "alias_c": True, "split_k": 8},
        {
            "block_m": 128,
            "block_n": 256,
            "num_stages": 3,
            "alias_c": False,
            "persistent": True,
            "last_wave_split": 8,
        },
        {
            "block_m": 128,
            "block_n": 128,
            "num_stages": 5,
            "alias_c": False,
            "persistent": True,
            "last_wave_split": 3,
        },
    ],
    ids=[
        "split4_128x256",
        "split2_256x128",
        "256x128",
        "256x128_persistent",
        "split8_128x64",
        "last_wave8_128x256",
        "last_wave3_128x128",
    ],
)
def test_new_configurations_compile_for_sm90a(gemm, config_fields):
    config = gemm.Config(block_k=64, **config_fields)
    if (
        tlx.compat.NEEDS_WHOLE_VIEWS
        and config.persistent
        and config.block_m * config.block_n == 128 * 256
    ):
        # Triton 3.8's views each cover the whole region, so the region is a multiple of
        # C's 64 KiB: 208 KiB of buffers take 256 KiB, and the tuner prunes the configuration
        # (128 x 128 tiles' C is 32 KiB: five stages take 192 KiB and fit).
        with pytest.raises(CompilationError, match="needs 262144 bytes"):
            gemm.smem_plan(config)
        return
    smem = gemm.smem_plan(config)
    compiled = gemm.compile_for_hopper(config, "bf16")
    assert compiled.asm["cubin"]
    assert smem.plan.size_bytes < compiled.metadata.shared <= 232448
    ptx = compiled.asm["ptx"]
    if config.split_k > 1 or config.last_wave_split > 1:
        # Each consumer's partial added by the L2, two columns an instruction; one
        # acquire-release arrival a consumer; the sum taken from the L2 and left zero by one
        # exchange a pair of values.
        assert "red.global.gpu.relaxed.add.v2.f32" in ptx
        assert ptx.count("atom.global.gpu.acq_rel.add") == 2
        assert "atom.global.gpu.relaxed.exch.b64" in ptx
        assert "ld.global.cg" not in ptx
    else:
        assert "atom.global" not in ptx


@pytest.mark.parametrize("block_n", [160, 192])
@pytest.mark.parametrize(
    "fields",
    [
        {"warp_specialize": False},
        {"stagger": 2},
        {"split_k": 2},
        {"persistent": True, "last_wave_split": 2},
    ],
    ids=["pipelined", "stagger", "split_k", "last_wave_split"],
)
def test_two_part_tiles_need_the_warp_specialized_kernel_unsplit(gemm, fields, block_n):
    alias_c = not fields.get("persistent") and "stagger" not in fields
    with pytest.raises(ValueError, match=f"block_n={block_n} .*split of B and C"):
        gemm.Config(128, block_n, 64, 4, alias_c, **fields)
    gemm.Config(128, 256, 64, 4, alias_c, **fields)  # the same schedule of a 256-column tile


def test_a_tile_of_two_parts_is_a_128_and_a_narrower_column_part(gemm):
    assert gemm.column_parts(192) == (128, 64)
    assert gemm.column_parts(160) == (128, 32)
    assert [gemm.column_parts(n) for n in (64, 128, 256)] == [(64,), (128,), (256,)]
    # B and C are copied the narrower part's width at a time, in a layout swizzled over a
    # row of that width: 128 bytes for 64 columns, 64 for 32.
    # The autotuner's pre-hook sets both on the descriptors of the call, before each launch.
    arguments = gemm.placeholder_arguments("bf16")
    for block_n, width in ((192, 64), (160, 32)):
        config = gemm.Config(128, block_n, 64, 3, alias_c=False, persistent=True)
        assert gemm.block_shapes(config) == ([128, 64], [64, width], [64, width])
        gemm.HOST.set_block_shapes({**arguments, **config.kernel_arguments()})
        for name in ("desc_b", "desc_c"):
            assert arguments[name].block_shape == [64, width]
            assert arguments[name].layout.swizzle_byte_width == width * 2
        assert arguments["desc_a"].layout.swizzle_byte_width == 128
    gemm.HOST.set_block_shapes({**arguments, **gemm.default_config().kernel_arguments()})
    assert arguments["desc_b"].block_shape == [64, 256]
    assert arguments["desc_b"].layout.swizzle_byte_width == 128


@pytest.mark.parametrize("block_n", [144, 96, 300, 8])
def test_a_tile_width_neither_a_power_of_two_nor_two_parts_is_refused(gemm, block_n):
    with pytest.raises(
        ValueError, match=rf"block_n={block_n}: a power of two from 16 to 256 .* \(160, 192\)"
    ):
        gemm.Config(128, block_n, 64, 4, alias_c=True)


@pytest.mark.parametrize(
    ("shape", "width", "tried"),
    [
        # One wave of 120 tiles of 128 x 160 (of 96 of 128 x 192; 128 x 256: 0.55 wave).
        ((1536, 1536, 1536), 160, True),
        # 2.91 waves; 0.97 wave (128 x 256: 2.18, 0.73 waves; 128 x 160: 3.6, 1.2).
        ((3072, 3072, 3072), 192, True),
        ((512, 6144, 4096), 192, True),
        # 5.3 waves of 128 x 192 tiles, whose last is a third busy; 128 x 256's 3.9 waves.
        ((4096, 4096, 4096), None, False),
        ((300, 500, 200), None, False),
        # Fuller waves than 128 x 256 tiles', but after 16 of them: not tried.
        ((8192, 8192, 8192), 192, False),
    ],
)
def test_the_tuner_tries_the_two_part_tiles_whose_waves_fill_the_sms(gemm, shape, width, tried):
    assert gemm.split_columns_width(shape[0], shape[1], SMS) == width
    two_parts = [config for config in shape_kept(gemm, *shape) if config.block_n in (160, 192)]
    expected = [config for config in gemm.SPLIT_COLUMN_TILES if config.block_n == width]
    assert two_parts == (expected if tried else [])
    assert not tried or len(expected) >= 2


@pytest.mark.parametrize("config", range(6), ids=lambda i: f"split_column_tile{i}")
def test_two_part_tiles_compile_with_a_product_a_part(gemm, config):
    config = gemm.SPLIT_COLUMN_TILES[config]
    main, tail = gemm.column_parts(config.block_n)
    if tlx.compat.NEEDS_WHOLE_VIEWS and (config.block_n, config.num_stages) == (160, 5):
        # Views of whole slots over 36 KiB stages round the region past the SMEM: pruned.
        needs = "needs 262144 bytes of shared memory, more than the target's limit of 232448"
        with pytest.raises(CompilationError, match=needs):
            gemm.smem_plan(config)
        return
    smem = gemm.smem_plan(config)
    stage = (128 * 64 + 64 * main + 64 * tail) * 2  # A, B's two parts: 40 or 36 KiB
    c_bytes = 0 if config.alias_c else 128 * config.block_n * 2
    assert_region_holds(smem.plan.size_bytes, config.num_stages * stage + c_bytes, config)
    compiled = gemm.compile_for_hopper(config, "bf16")
    assert smem.plan.size_bytes < compiled.metadata.shared <= 232448
    ptx = compiled.asm["ptx"]
    # Each consumer's two products a K step: 128 and 64 or 32 columns of the same A rows.
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{tail}k16.f32.bf16.bf16" in ptx
    assert f"n{config.block_n}" not in ptx and "n256" not in ptx


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
