"""GPU correctness of tutorials/hopper_gemm.py against an fp32 reference.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

# The output is rounded to fp16 (11 significant bits) or bf16 (8): relative to the largest
# entry, the error of a rounded entry is at most 2^-11 or 2^-8.
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 8e-3}

# (M, N, K): tails in every dimension, K shorter than one K step, rows whose byte length is
# not a multiple of 16 (copied into padded rows for the TMA), one tile, many tiles, and more
# 128 x 256 tiles than an H100 or H200 has SMs (a persistent CTA takes several).
SHAPES = [
    (128, 256, 64),
    (1, 1, 1),
    (77, 300, 8),
    (130, 520, 40),
    (257, 4095, 129),
    (1000, 1000, 1000),
    (1531, 2049, 777),
    (2048, 1024, 4096),
    (3000, 8000, 300),
]


def assert_matches_reference(out, a, b):
    expected = a.float() @ b.float()
    assert out.shape == expected.shape and out.dtype == a.dtype and out.is_contiguous()
    scale = expected.abs().max().clamp_min(1.0)
    error = ((out.float() - expected).abs().max() / scale).item()
    assert error <= TOLERANCE[a.dtype], f"max relative error {error:.2e}"


def configs(dtype):
    from tlx_kernels.hopper import gemm

    return {
        "aliased": gemm.default_config(dtype),
        "unaliased": gemm.best_unaliased_config(dtype),
        # Every CTA takes several tiles at the grid's sizes: the ring runs on across tiles.
        "persistent": gemm.Config(128, 128, 64, 5, alias_c=False, persistent=True),
        # One warpgroup issues the copies and computes the tile; C over the ring or beside it.
        "pipelined": gemm.Config(128, 64, 64, 6, alias_c=True, warp_specialize=False),
        "pipelined_k128": gemm.Config(128, 64, 128, 4, alias_c=False, warp_specialize=False),
        # 64-row tiles of one warpgroup, C over the ring or beside it.
        "pipelined_64_rows": gemm.Config(64, 64, 64, 8, alias_c=True, warp_specialize=False),
        "pipelined_64_rows_unaliased": gemm.Config(
            64, 64, 64, 6, alias_c=False, warp_specialize=False
        ),
        # The deep rings of ``gemm.SKINNY_TILES``: more stages than most shapes' K steps.
        "pipelined_64_rows_deep": gemm.Config(64, 64, 64, 14, alias_c=True, warp_specialize=False),
        "pipelined_64_rows_k128": gemm.Config(64, 64, 128, 7, alias_c=True, warp_specialize=False),
        # The second consumer's last K steps wait for the first to finish the tile (each
        # tile of a persistent CTA: the barrier's phase turns), fewer K steps than that too.
        "staggered": gemm.Config(128, 256, 64, 2, alias_c=False, stagger=2),
        "staggered_persistent": gemm.Config(
            128, 256, 64, 3, alias_c=False, persistent=True, stagger=3
        ),
        # Each consumer 128 rows of a 256-row tile.
        "tall": gemm.Config(256, 128, 64, 4, alias_c=True),
        "tall_persistent": gemm.Config(256, 128, 64, 3, alias_c=False, persistent=True),
        # Split-K: K steps split unevenly (and, at the small shapes, some splits without any),
        # the last CTA of a tile to arrive reducing the others' partials.
        "split_k": gemm.Config(128, 256, 64, 4, alias_c=True, split_k=4),
        "split_k_tall": gemm.Config(256, 128, 64, 4, alias_c=True, split_k=3),
        "split_k_narrow": gemm.Config(128, 128, 64, 6, alias_c=True, split_k=16),
        # One warpgroup's 64-row tiles, split: the split's partial is the whole tile.
        "split_k_64_rows": gemm.Config(
            64, 64, 64, 8, alias_c=True, warp_specialize=False, split_k=5
        ),
        # 128 x 192 tiles, a 128- and a 64-column part (at most shapes N is no multiple of
        # 192: the last tile column's parts are clipped or wholly past N).
        "split_columns": gemm.Config(128, 192, 64, 5, alias_c=True),
        "split_columns_persistent": gemm.Config(128, 192, 64, 4, alias_c=False, persistent=True),
    }


CONFIG_NAMES = [
    "aliased",
    "unaliased",
    "persistent",
    "pipelined",
    "pipelined_k128",
    "pipelined_64_rows",
    "pipelined_64_rows_unaliased",
    "pipelined_64_rows_deep",
    "pipelined_64_rows_k128",
    "staggered",
    "staggered_persistent",
    "tall",
    "tall_persistent",
    "split_k",
    "split_k_tall",
    "split_k_narrow",
    "split_k_64_rows",
    "split_columns",
    "split_columns_persistent",
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("config_name", CONFIG_NAMES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_matches_reference(dtype, config_name, shape):
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    torch.manual_seed(M * N + K)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    assert_matches_reference(gemm.matmul(a, b, configs(dtype)[config_name]), a, b)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("persistent", [False, True], ids=["one_tile", "persistent"])
@pytest.mark.parametrize(
    "shape",
    # The shapes the tuner tries the two-part tiles at; N of 500 and 1000: at 128 x 192 a last
    # tile column of 116 and 40 columns (the 64-column part wholly past N), at 128 x 160 of 20
    # and 40 (the 32-column part wholly past N).
    [
        (1536, 1536, 1536),
        (512, 6144, 4096),
        (3072, 3072, 3072),
        (300, 500, 200),
        (1000, 1000, 1000),
    ],
    ids=lambda shape: "x".join(map(str, shape)),
)
def test_two_part_tiles_match_reference(dtype, persistent, shape):
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    torch.manual_seed(M + N * K)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    for config in gemm.SPLIT_COLUMN_TILES:
        if config.persistent == persistent:
            assert_matches_reference(gemm.matmul(a, b, config), a, b)


def test_every_tile_is_written():
    """The epilogue stores every tile of C exactly where it belongs: with a = identity, C is b.
    Any tile stored at the wrong place or left out shows up as a mismatch."""
    from tlx_kernels.hopper import gemm

    M = N = 1024 + 64
    a = torch.eye(M, device="cuda", dtype=torch.float16)
    b = torch.randn(M, N, device="cuda", dtype=torch.float16)
    for config in configs(torch.float16).values():
        assert torch.equal(gemm.matmul(a, b, config), b)


def test_strided_and_empty_operands():
    from tlx_kernels.hopper import gemm

    torch.manual_seed(0)
    big = torch.randn(300, 520, device="cuda", dtype=torch.bfloat16)
    a = big[1:200, 3:131]  # a view: unaligned start, row stride 520
    b = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16).t()  # column-major
    assert_matches_reference(gemm.matmul(a, b), a, b)
    empty = torch.empty(64, 0, device="cuda", dtype=torch.float16)
    out = gemm.matmul(empty, torch.empty(0, 32, device="cuda", dtype=torch.float16))
    assert torch.equal(out, torch.zeros(64, 32, device="cuda", dtype=torch.float16))


@pytest.mark.parametrize("warp_specialize", [True, False], ids=["consumers", "one_warpgroup"])
@pytest.mark.parametrize("shape", [(2048, 512, 8192), (128, 4096, 4096), (300, 1000, 5000)])
def test_split_k_again_and_again(shape, warp_specialize):
    """Split-K's counters are left zero by each launch: the same product launched many times
    in a row (the last split of each tile resets its counter for the next launch) gives the
    same result each time, within the partials' fp32 sums in any order."""
    from tlx_kernels.hopper import gemm, split_reduction

    M, N, K = shape
    torch.manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    if warp_specialize:
        config = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=8)
    else:
        config = gemm.Config(64, 64, 64, 8, alias_c=True, warp_specialize=False, split_k=8)
    first = gemm.matmul(a, b, config)
    assert_matches_reference(first, a, b)
    for _ in range(20):
        again = gemm.matmul(a, b, config)
        torch.testing.assert_close(again, first, rtol=2e-2, atol=2e-2)
    _, counters = split_reduction.stream_buffers(a.device)
    assert not counters.any()


def test_split_launches_on_two_streams_at_once_sum_apart():
    """Split-K launches on two streams at once, tuned and direct (``autotuned_matmul``) and
    with a split configuration given: each stream adds into a workspace of its own
    (``split_reduction.stream_buffers``), so their sums do not mix, and each leaves its
    counters zero."""
    from tlx_kernels.hopper import gemm, split_reduction

    torch.manual_seed(1)
    config = gemm.Config(128, 256, 64, 4, alias_c=True, split_k=8)
    streams = (torch.cuda.Stream(), torch.cuda.Stream())
    operands = [
        tuple(torch.randn(*shape, device="cuda", dtype=torch.bfloat16) for shape in shapes)
        for shapes in (((128, 4096), (4096, 1024)), ((128, 4096), (4096, 1024)))
    ]
    torch.cuda.synchronize()
    results = ([], [])
    for _ in range(20):
        for stream, (a, b), out in zip(streams, operands, results, strict=True):
            with torch.cuda.stream(stream):
                out.append(gemm.matmul(a, b, config))
                out.append(gemm.autotuned_matmul(a, b))
    torch.cuda.synchronize()
    for stream, (a, b), out in zip(streams, operands, results, strict=True):
        for c in out:
            assert_matches_reference(c, a, b)
        with torch.cuda.stream(stream):
            workspace, counters = split_reduction.stream_buffers(a.device)
        assert not counters.any() and not workspace.any()
    with torch.cuda.stream(streams[0]):
        first = split_reduction.stream_buffers(operands[0][0].device)
    assert first[0].data_ptr() != workspace.data_ptr()


# Shapes whose persistent grids leave a ragged last wave on 132 SMs (an H100 SXM's or H200's):
# 6144 x 3072 (576 tiles of 128 x 256, 48 in the last wave), 1536 cubed (144 of 128 x 128),
# 1000 x 3000 x 999 (tails in every dimension, K not a multiple of BLOCK_K), 3000 x 8000 x 300
# (five K steps: eight splits refused).
LAST_WAVE_SHAPES = [(6144, 3072, 5120), (1536, 1536, 1536), (1000, 3000, 999), (3000, 8000, 300)]


def last_wave_config(tile, splits):
    from tlx_kernels.hopper import gemm

    block_m, block_n, stages = tile
    return gemm.Config(
        block_m, block_n, 64, stages, alias_c=False, persistent=True, last_wave_split=splits
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("splits", [2, 3, 4, 8])
@pytest.mark.parametrize("tile", [(128, 256, 3), (256, 128, 3), (128, 128, 5)], ids=str)
@pytest.mark.parametrize("shape", LAST_WAVE_SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_last_wave_split_matches_reference(dtype, splits, tile, shape):
    """The whole waves' tiles and the last wave's split units of one persistent launch: the
    ragged tiles' partials reduced by the last of their units to arrive."""
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    torch.manual_seed(M + N * K + splits)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    config = last_wave_config(tile, splits)
    if splits > -(-K // 64):
        with pytest.raises(ValueError, match="more than its"):
            gemm.matmul(a, b, config)
        return
    assert_matches_reference(gemm.matmul(a, b, config), a, b)


def test_the_last_wave_schedule_splits_where_the_tests_say():
    """The shapes above do leave ragged last waves on this GPU, or the tests above would test
    only the whole waves."""
    from tlx_kernels.hopper import gemm

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    config = last_wave_config((128, 128, 5), 4)
    assert all(gemm.split_tiles(config, M, N, sms)[0] > 0 for M, N, _ in LAST_WAVE_SHAPES)


def test_the_last_wave_schedule_writes_every_tile_again_and_again():
    """With a = identity, C is b exactly (each split's partial holds b's entries or zeros):
    any tile or unit stored at the wrong place, or left out, shows; each launch leaves the
    counters zero for the next, and a launch of new tensors at a kept launch's shape reuses
    the kept buffers."""
    from tlx_kernels.hopper import gemm, split_reduction

    M = N = 2112  # 289 tiles of 128 x 128: 25 past two waves of 132
    a = torch.eye(M, device="cuda", dtype=torch.float16)
    b = torch.randn(M, N, device="cuda", dtype=torch.float16)
    for splits in (2, 8):
        config = last_wave_config((128, 128, 5), splits)
        for _ in range(10):
            assert torch.equal(gemm.matmul(a, b, config), b)
        _, counters = split_reduction.stream_buffers(a.device)
        assert not counters.any()
        kernel = gemm.compile_for_hopper(config)
        launch = gemm.compiled_launch(kernel, a, b, config)
        for _ in range(3):
            c = torch.empty_like(b)
            launch((a, b, c), (M, N, M))
            assert torch.equal(c, b)


@pytest.mark.parametrize("splits", [2, 4, 8])
@pytest.mark.parametrize("shape", [(128, 4096, 4096), (2048, 512, 8192), (300, 1000, 5000)])
def test_narrow_split_k_matches_reference(shape, splits):
    """Split-K's 128 x 64 tiles, tried where K is long."""
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    torch.manual_seed(M + N + K + splits)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    config = gemm.Config(128, 64, 64, 8, alias_c=True, split_k=splits)
    for _ in range(3):
        assert_matches_reference(gemm.matmul(a, b, config), a, b)


@pytest.mark.parametrize(
    "shape",
    [
        (2048, 512, 8192),
        (128, 4096, 4096),
        (1536, 1536, 1536),
        (6144, 3072, 5120),
        (1000, 3000, 999),
    ],
)
def test_the_tuner_takes_a_configuration_of_the_shapes_space(shape):
    """autotuned_matmul at shapes of too few tiles for the SMs or a ragged last wave:
    whatever it takes (split-K, the last-wave schedule, 256-row tiles or the square grid's),
    the result is right, first call and direct launch."""
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    for _ in range(3):
        assert_matches_reference(gemm.autotuned_matmul(a, b), a, b)
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    assert gemm.chosen_config(torch.float16) in gemm.shape_configs(M, N, K, sms)


@pytest.mark.parametrize(
    "config_name", ["aliased", "persistent", "pipelined_64_rows", "split_k", "split_columns"]
)
def test_dependent_launches_read_the_product_before_them(config_name):
    """A chain x[i + 1] = x[i] @ w of launches with programmatic dependent launch, each grid
    letting the next start as its last CTAs do: a product that read its A before waiting for
    the grid before it (``common.wait_for_prior_grids``) would read NaN, the outputs' fill,
    where that grid had not yet stored its tiles."""
    import triton
    from tlx_kernels.hopper import gemm

    config = configs(torch.float16)[config_name]
    rows, width, links = 4096, 1024, 8
    torch.manual_seed(7)
    w = (torch.randn(width, width, device="cuda") / width**0.5).half()
    chain = [torch.randn(rows, width, device="cuda", dtype=torch.float16)]
    chain += [torch.full_like(chain[0], float("nan")) for _ in range(links)]
    kernel = triton.compile(
        gemm.kernel_source(config, "fp16"),
        target=gemm.SM90A,
        options={**config.compile_options, "launch_pdl": True},
    )
    assert kernel.metadata.launch_pdl
    launch = gemm.compiled_launch(kernel, chain[0], w, config)
    for x, out in zip(chain[:-1], chain[1:], strict=True):
        launch((x, w, out), (rows, width, width))
    torch.cuda.synchronize()
    for x, out in zip(chain[:-1], chain[1:], strict=True):
        assert_matches_reference(out, x, w)
