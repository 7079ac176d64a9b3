"""GPU correctness of the gated (SwiGLU) MLP (tlx_kernels.hopper.gated_mlp) against a float32
reference: its first half H = silu(X W_gate) * (X W_up) in every configuration of the
autotuning space that fits, the whole MLP with the down projection, the tuned entry points
(``tlx_kernels.gated_mlp``) and their direct launches, strided, padded and empty operands.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

# Relative to the largest entry (at least 1): H is rounded once to fp16 (11 significant bits)
# or bf16 (8); Y adds the down GEMM's rounding of its output, and an entry of H the fp32 sums
# put on the other side of a rounding boundary than the reference's moves Y by one step of H.
TOLERANCE = {torch.float16: 5e-3, torch.bfloat16: 2e-2}

# (tokens, d_model, hidden): one token; a partial row block (100), several (1000, 4133);
# d_model 64 (one step), 100 (rows of 200 bytes: copied into padded rows for the TMA, and a
# partial step), 1000 and 4096 (a long K loop); hidden not a multiple of 64 or 128 (200, 1000,
# 1400, 2800) but for 1408; H's rows of 2000 bytes (hidden 1000).
SHAPES = [
    (1, 64, 200),
    (100, 100, 256),
    (1000, 1000, 1400),
    (4133, 4096, 1408),
    (1000, 4096, 1000),
    (4133, 64, 2800),
]
DTYPES = [torch.float16, torch.bfloat16]


def _space():
    from tlx_kernels.hopper import gated_mlp as gated
    from triton.compiler.errors import CompilationError

    configs = []
    for config in gated.autotune_space():
        try:
            gated.smem_plan(config)
        except CompilationError:
            continue  # the planner's to refuse (test/python/test_gated_mlp.py)
        configs.append(config)
    return configs


def assert_close(out, expected, dtype):
    assert out.dtype == dtype and out.is_contiguous() and out.shape == expected.shape
    scale = expected.abs().max().clamp_min(1.0)
    error = ((out.float() - expected).abs().max() / scale).item()
    assert error <= TOLERANCE[dtype], f"max relative error {error:.2e}"


def inputs(shape, dtype):
    from tlx_kernels.hopper import gated_mlp as gated

    tokens, d_model, hidden = shape
    torch.manual_seed(tokens * 7 + d_model * 3 + hidden)
    return gated.random_inputs(tokens, d_model, hidden, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_gated_up_in_every_configuration(shape, dtype):
    from tlx_kernels.hopper import gated_mlp as gated

    x, w_gate, w_up, _ = inputs(shape, dtype)
    expected = gated.reference_gated_up(x, w_gate, w_up)
    for config in _space():
        assert_close(gated.gated_up(x, w_gate, w_up, config), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_gated_mlp(shape, dtype):
    """The default configuration, then the GEMM's default for the down projection."""
    from tlx_kernels.hopper import gated_mlp as gated

    x, w_gate, w_up, w_down = inputs(shape, dtype)
    expected = gated.reference_gated_mlp(x, w_gate, w_up, w_down)
    assert_close(gated.gated_mlp(x, w_gate, w_up, w_down), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1000, 1000, 1400), (4133, 4096, 1408)], ids=str)
def test_tuned_gated_mlp_and_its_direct_launch(shape, dtype):
    """``tlx_kernels.gated_mlp``: the first call tunes both kernels, the second launches the
    chosen ones directly, on new inputs of the same shape."""
    import tlx_kernels
    from tlx_kernels.hopper import gated_mlp as gated

    for call in range(2):
        x, w_gate, w_up, w_down = inputs(shape, dtype)
        if call:
            x = x * 0.5  # new tensors, new values
        expected = gated.reference_gated_mlp(x, w_gate, w_up, w_down)
        assert_close(tlx_kernels.gated_mlp(x, w_gate, w_up, w_down), expected, dtype)
        assert gated.chosen_config(dtype) in gated.autotune_space()
        h = gated.autotuned_gated_up(x, w_gate, w_up)
        assert_close(h, gated.reference_gated_up(x, w_gate, w_up), dtype)
    assert (x.device, dtype, shape) in gated._launches


def test_strided_padded_and_empty_operands():
    from tlx_kernels.hopper import gated_mlp as gated

    torch.manual_seed(5)
    big = torch.randn(300, 520, device="cuda", dtype=torch.float16)
    x = big[1:200, 3:131]  # a view: unaligned start, row stride 520
    w_gate = (torch.randn(100, 128, device="cuda") / 128**0.5).half().t()  # column-major
    w_up = (torch.randn(128, 100, device="cuda") / 128**0.5).half()
    w_down = (torch.randn(100, 128, device="cuda") / 100**0.5).half()
    expected = gated.reference_gated_mlp(x, w_gate, w_up, w_down)
    # hidden 100: H's rows are 200 bytes, stored into padded rows and copied out.
    assert_close(gated.gated_mlp(x, w_gate, w_up, w_down), expected, torch.float16)
    assert_close(gated.autotuned_gated_mlp(x, w_gate, w_up, w_down), expected, torch.float16)
    half = torch.float16
    empty = gated.gated_mlp(x[:0], w_gate, w_up, w_down)
    assert empty.shape == (0, 128) and empty.dtype == half
    no_hidden = gated.autotuned_gated_mlp(x, w_gate[:, :0], w_up[:, :0], w_down[:0])
    assert torch.equal(no_hidden, torch.zeros(199, 128, device="cuda", dtype=half))
    no_model = gated.gated_up(x[:, :0], w_gate[:0], w_up[:0])
    assert torch.equal(no_model, torch.zeros(199, 100, device="cuda", dtype=half))


def test_torch_contenders_match_the_reference():
    """The bench's torch contenders compute what the kernel computes."""
    from tlx_kernels.hopper import gated_mlp as gated

    x, w_gate, w_up, w_down = inputs((512, 256, 768), torch.float16)
    expected = gated.reference_gated_mlp(x, w_gate, w_up, w_down)
    assert_close(gated.torch_gated_mlp(x, w_gate, w_up, w_down), expected, torch.float16)
    w_gate_up = gated.concatenated_weights(w_gate, w_up)
    out = gated.torch_concatenated_gated_mlp(x, w_gate_up, w_down)
    assert_close(out, expected, torch.float16)
