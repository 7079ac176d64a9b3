"""GPU correctness of tutorials/hopper_fused_mlp.py against an fp32 reference (the hidden
activations rounded to the inputs' dtype, as the kernel rounds them), the three SMEM layouts,
with and without splits of the hidden dimension.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

# Relative to the largest entry of Y: the output is rounded to fp16 (11 significant bits) or
# bf16 (8), and a hidden activation the fp32 sums put on the other side of a rounding boundary
# than the reference's moves Y by one rounding step of H.
TOLERANCE = {torch.float16: 5e-3, torch.bfloat16: 2e-2}

# (tokens, d_model, hidden): one token; a partial row block (100) and several (1000); d_model
# not a multiple of BLOCK_K (200, 100) nor of BLOCK_N (200, 100, 320), hidden not a multiple
# of BLOCK_H (800, 400, 1000); rows of 200 bytes (d_model 100: copied into padded rows for the
# TMA); several tiles of Y's columns and many hidden chunks (1000 x 1024 x 4096).
SHAPES = [
    (1, 256, 1024),
    (100, 200, 800),
    (1000, 100, 400),
    (257, 320, 1000),
    (1000, 1024, 4096),
]
LAYOUTS = ["shared", "separate", "phases"]


def assert_matches_reference(out, x, w1, w2, activation="gelu"):
    from tlx_kernels.hopper import fused_mlp as mlp

    expected = mlp.reference_mlp(x, w1, w2, activation)
    assert out.shape == expected.shape and out.dtype == x.dtype and out.is_contiguous()
    scale = expected.abs().max().clamp_min(1.0)
    error = ((out.float() - expected).abs().max() / scale).item()
    assert error <= TOLERANCE[x.dtype], f"max relative error {error:.2e}"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_matches_reference(dtype, layout, shape):
    from tlx_kernels.hopper import fused_mlp as mlp

    tokens, d_model, hidden = shape
    torch.manual_seed(tokens * d_model + hidden)
    x, w1, w2 = mlp.random_inputs(tokens, d_model, hidden, dtype)
    out = mlp.fused_mlp(x, w1, w2, mlp.default_config(layout))
    assert_matches_reference(out, x, w1, w2)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_relu_and_the_other_tile_shape(layout):
    """ReLU, and 128 x 128 tiles of Y with hidden chunks of 128 (the autotuning space's other
    tile shape), each with the most stages that fit."""
    from tlx_kernels.hopper import fused_mlp as mlp

    config = {
        "shared": mlp.Config(128, 128, 6, 6, "shared"),
        "separate": mlp.Config(128, 128, 4, 2, "separate"),
        "phases": mlp.Config(128, 128, 6, 3, "phases"),
    }[layout]
    torch.manual_seed(1)
    x, w1, w2 = mlp.random_inputs(300, 384, 1536, torch.bfloat16)
    for activation in ("relu", "gelu"):
        out = mlp.fused_mlp(x, w1, w2, config, activation)
        assert_matches_reference(out, x, w1, w2, activation)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
# The phases layout has no 64-row tiles (Config refuses them: its drains would serialize the
# consumers).
@pytest.mark.parametrize("layout", ["shared", "separate"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_chunk_split_tiles_match_reference(dtype, layout, shape):
    """64 x 128 tiles whose consumers take every other hidden chunk, their partials of Y
    summed through SMEM (``CHUNK_SPLIT_CONFIGS``; none for the phases layout), GELU and ReLU,
    at every awkward shape (an odd number of hidden chunks, one chunk), and split two and
    three ways over the hidden dimension (both consumers' partials into the tile's sum)."""
    from tlx_kernels.hopper import fused_mlp as mlp

    tokens, d_model, hidden = shape
    torch.manual_seed(tokens * d_model + hidden)
    x, w1, w2 = mlp.random_inputs(tokens, d_model, hidden, dtype)
    chunks = -(-hidden // 128)
    assert mlp.CHUNK_SPLIT_CONFIGS[layout]
    for config in mlp.CHUNK_SPLIT_CONFIGS[layout]:
        for splits in (1, 2, 3):
            if splits > chunks:
                continue
            split = config.replace(hidden_splits=splits)
            for activation in ("gelu", "relu"):
                out = mlp.fused_mlp(x, w1, w2, split, activation)
                assert_matches_reference(out, x, w1, w2, activation)


def test_torch_mlp_is_the_reference():
    """The benchmark's torch contender computes what the kernel computes."""
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(2)
    x, w1, w2 = mlp.random_inputs(512, 256, 1024, torch.float16)
    assert_matches_reference(mlp.torch_mlp(x, w1, w2), x, w1, w2)


def test_autotuned_matches_reference_in_every_layout():
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(3)
    x, w1, w2 = mlp.random_inputs(777, 512, 2048, torch.float16)
    for layout in LAYOUTS:
        out = mlp.autotuned_fused_mlp(x, w1, w2, layout)
        assert_matches_reference(out, x, w1, w2)
        assert mlp.chosen_config(torch.float16, layout).layout == layout


def test_strided_and_empty_operands():
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(4)
    big = torch.randn(300, 520, device="cuda", dtype=torch.float16)
    x = big[1:200, 3:131]  # a view: unaligned start, row stride 520
    w1 = (torch.randn(512, 128, device="cuda") / 128**0.5).half().t()  # column-major
    w2 = (torch.randn(512, 128, device="cuda") / 512**0.5).half()
    assert_matches_reference(mlp.fused_mlp(x, w1, w2), x, w1, w2)
    empty = torch.empty(0, 64, device="cuda", dtype=torch.float16)
    out = mlp.fused_mlp(empty, w1[:64, :64].contiguous(), w2[:64, :64].contiguous())
    assert out.shape == (0, 64)
    no_hidden = mlp.fused_mlp(x, torch.empty(128, 0, device="cuda", dtype=torch.float16), w2[:0])
    assert torch.equal(no_hidden, torch.zeros_like(no_hidden)) and no_hidden.shape == (199, 128)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("tokens", "d_model"), [(4097, 128), (65536 + 77, 256), (300, 192)], ids=str
)
def test_one_tile_of_columns_where_fusion_pays(layout, tokens, d_model):
    """d_model <= 256 (bench/fused_mlp.py --small): Y's row block is one tile of columns, so
    each CTA computes its block of H once; the tuned kernel of every layout, partial row
    blocks and a d_model no tile width divides included."""
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(tokens + d_model)
    x, w1, w2 = mlp.random_inputs(tokens, d_model, 4 * d_model, torch.bfloat16)
    out = mlp.autotuned_fused_mlp(x, w1, w2, layout)
    assert_matches_reference(out, x, w1, w2)


# (tokens, d_model, hidden): the small-d_model rows at 4096 tokens (32 row blocks), awkward
# token counts (a partial row block: 1000, 4133), and a hidden of 1000 (16 chunks of 64, the
# last partial; 8 of 128), which 3 splits slice unevenly.
SPLIT_SHAPES = [
    (4096, 128, 512),
    (4096, 256, 1024),
    (1000, 256, 1024),
    (4133, 128, 512),
    (4133, 256, 1000),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_hidden_splits_match_reference(dtype, layout, shape):
    """Each tile's hidden dimension split among 2, 3 and 4 CTAs (the most for the 128-wide
    chunks of d_model 128: one chunk a split), whose partial Ys the last to arrive sums; the
    counters are left zero."""
    from tlx_kernels.hopper import fused_mlp as mlp
    from tlx_kernels.hopper import split_reduction

    tokens, d_model, hidden = shape
    torch.manual_seed(tokens + d_model + hidden)
    x, w1, w2 = mlp.random_inputs(tokens, d_model, hidden, dtype)
    for base in mlp.SPLIT_BASES[layout]:
        for splits in (2, 3, 4):
            config = base.replace(hidden_splits=splits)
            out = mlp.fused_mlp(x, w1, w2, config)
            assert_matches_reference(out, x, w1, w2)
            _, counters = split_reduction.stream_buffers(x.device)
            assert not counters.any(), config


def test_many_splits_again_and_again():
    """16 splits of 16 chunks (one each), GELU and ReLU, launched again and again on the same
    buffers: the same result each time, within the partials' fp32 sums in any order."""
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(5)
    x, w1, w2 = mlp.random_inputs(1000, 256, 1000, torch.bfloat16)
    config = mlp.default_config("shared").replace(hidden_splits=16)
    for activation in ("gelu", "relu"):
        first = mlp.fused_mlp(x, w1, w2, config, activation)
        assert_matches_reference(first, x, w1, w2, activation)
        for _ in range(10):
            again = mlp.fused_mlp(x, w1, w2, config, activation)
            torch.testing.assert_close(again, first, rtol=2e-2, atol=2e-2)


def test_more_splits_than_chunks_are_refused():
    from tlx_kernels.hopper import fused_mlp as mlp

    x, w1, w2 = mlp.random_inputs(256, 128, 512, torch.float16)
    config = mlp.Config(128, 128, 6, 6, "shared", hidden_splits=8)
    with pytest.raises(ValueError, match="hidden_splits=8 is more than the 4 hidden chunks"):
        mlp.fused_mlp(x, w1, w2, config)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("tokens", "d_model"), [(4096, 128), (4096, 256), (1000, 256)], ids=str)
def test_the_tuner_at_few_row_blocks(dtype, tokens, d_model):
    """autotuned_fused_mlp where the row blocks leave most SMs idle, with the splits of the
    hidden dimension in its space (its default): whatever it takes, the result is right in
    every layout."""
    from tlx_kernels._host import sm_count
    from tlx_kernels.hopper import fused_mlp as mlp

    torch.manual_seed(tokens + d_model)
    x, w1, w2 = mlp.random_inputs(tokens, d_model, 4 * d_model, dtype)
    for layout in LAYOUTS:
        space = mlp.shape_configs(
            tokens, d_model, 4 * d_model, sm_count(x.device), mlp.autotune_space(layout, True)
        )
        assert any(config.hidden_splits > 1 for config in space)
        out = mlp.autotuned_fused_mlp(x, w1, w2, layout)
        assert_matches_reference(out, x, w1, w2)
        assert mlp.chosen_config(dtype, layout).layout == layout


@pytest.mark.parametrize("split_hidden", [True, False], ids=["splits", "no_splits"])
@pytest.mark.parametrize(("tokens", "d_model"), [(4096, 256), (300, 100)], ids=str)
def test_later_calls_launch_the_tuned_kernel_directly(split_hidden, tokens, d_model):
    """After the first call of a key tunes it, autotuned_fused_mlp launches the chosen kernel
    directly (tlx_kernels.launch.DirectLaunch): right on fresh inputs again and again, on the
    tensors of the first call again (its expanded arguments kept), with a split's counters
    left zero for the next launch, and with rows of 200 bytes (d_model 100: Y in padded rows,
    returned contiguous)."""
    from tlx_kernels.hopper import fused_mlp as mlp
    from tlx_kernels.hopper import split_reduction

    torch.manual_seed(tokens + d_model)
    first = mlp.random_inputs(tokens, d_model, 4 * d_model, torch.float16)
    for layout in LAYOUTS:
        for inputs in (
            first,
            mlp.random_inputs(tokens, d_model, 4 * d_model, torch.float16),
            first,
        ):
            out = mlp.autotuned_fused_mlp(*inputs, layout, split_hidden=split_hidden)
            assert_matches_reference(out, *inputs)
        key = (
            first[0].device,
            split_reduction.current_stream(first[0].device),
            torch.float16,
            (tokens, d_model, 4 * d_model),
            layout,
            "gelu",
            split_hidden,
        )
        assert mlp._launches[key].config == mlp.chosen_config(torch.float16, layout)
        assert split_hidden or mlp.chosen_config(torch.float16, layout).hidden_splits == 1
    _, counters = split_reduction.stream_buffers(first[0].device)
    assert not counters.any()
