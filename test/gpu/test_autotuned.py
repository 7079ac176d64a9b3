"""GPU correctness of the autotuned tutorials (tlx.autotune) on fresh random inputs at
awkward shapes: every key tunes afresh, so each shape runs the configuration chosen for it.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

GEMM_TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 8e-3}
ATTENTION_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 3e-2}

# Tails in every dimension, rows the TMA cannot address (padded), skinny and small shapes.
GEMM_SHAPES = [
    (1, 1, 1),
    (100, 1000, 77),
    (1000, 100, 4133),
    (4133, 257, 129),
    (1024, 16384, 64),
    (2048, 2048, 2048),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_autotuned_gemm_matches_reference(dtype, shape):
    import hopper_gemm as gemm

    M, N, K = shape
    # The first call tunes the shape; the second launches the chosen kernel directly.
    for _ in range(2):
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        out = gemm.autotuned_matmul(a, b)
        expected = a.float() @ b.float()
        scale = expected.abs().max().clamp_min(1.0)
        error = ((out.float() - expected).abs().max() / scale).item()
        assert error <= GEMM_TOLERANCE[dtype], f"{gemm.chosen_config(dtype)}: {error:.2e}"
    # The tuner kept only configurations that fit their plans, and compiled them ahead.
    tuner = gemm.autotuned_kernel(gemm._triton_dtype(dtype))
    assert all(reasons for pruned in tuner.pruned.values() for _, reasons in pruned)
    assert tuner.compile_seconds and all(s > 0 for s in tuner.compile_seconds.values())
    # Its three fastest were timed again on the GPU, and the key took the lowest median.
    (medians,) = [m for key, m in tuner.retimed.items() if key[:3] == (M, N, K)]
    assert len(medians) == 3 and all(0 < ms < 1e3 for ms in medians.values())
    assert tuner.best_config is min(medians, key=medians.get)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq_len", [1, 100, 1000, 4133])
def test_autotuned_attention_matches_reference(dtype, head_dim, causal, seq_len):
    import hopper_flash_attention as fa

    # The first call tunes the key; the second launches the chosen kernel directly.
    for _ in range(2):
        q, k, v = (
            torch.randn(2, 3, seq_len, head_dim, device="cuda", dtype=dtype) for _ in range(3)
        )
        out = fa.autotuned_attention(q, k, v, causal)
        expected = torch.nn.functional.scaled_dot_product_attention(
            q.float(), k.float(), v.float(), is_causal=causal
        )
        error = (out.float() - expected).abs().max().item()
        assert error <= ATTENTION_TOLERANCE[dtype], f"{fa.chosen_config(dtype, head_dim)}: {error}"
    assert (q.device, dtype, q.shape, causal) in fa._launches
