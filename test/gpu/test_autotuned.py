"""GPU correctness of the autotuned tutorials (tlx.autotune) on fresh random inputs at
awkward shapes: every key tunes afresh, so each shape runs the configuration chosen for it.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch
from tlx_kernels.hopper.common import triton_dtype

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
    from tlx_kernels.hopper import gemm

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
    tuner = gemm.autotuned_kernel(triton_dtype(dtype))
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
    from tlx_kernels.hopper import attention as fa

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
    assert (q.device, dtype, tuple(q.shape), k.shape[1], causal, False) in fa._launches


def test_a_first_call_that_saves_the_lse_tunes_that_kernel():
    """Training's first call of a key (``return_lse``, as attention_autograd's forward asks)
    tunes the kernel that saves the LSE, so the configuration chosen is compiled once; a later
    call of the key without the LSE takes the same configuration without tuning again."""
    from tlx_kernels.hopper import attention as fa

    q, k, v = (torch.randn(2, 3, 777, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    key = (q.device, q.dtype, tuple(q.shape), k.shape[1], True)
    tuner = fa.autotuned_kernel(torch.bfloat16, 64)
    before = set(tuner.cache)
    o, lse = fa.autotuned_attention(q, k, v, True, return_lse=True)
    tuned = set(tuner.cache) - before
    assert len(tuned) == 1 and "torch.float32" in next(iter(tuned)), tuned
    scores = (q.float() @ k.float().transpose(-1, -2)) * 64**-0.5
    scores = scores.masked_fill(torch.ones(777, 777, device="cuda").triu(1).bool(), float("-inf"))
    torch.testing.assert_close(lse, scores.logsumexp(-1).view(6, 777), atol=1e-3, rtol=1e-4)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=True
    )
    assert (o.float() - expected).abs().max().item() <= ATTENTION_TOLERANCE[torch.bfloat16]
    out = fa.autotuned_attention(q, k, v, True)
    assert set(tuner.cache) - before == tuned
    assert fa._launches[(*key, False)].config == fa._launches[(*key, True)].config
    torch.testing.assert_close(out, o, rtol=0, atol=0)


def test_a_tuned_launch_keeps_its_arguments_and_reads_what_the_tensors_now_hold():
    """The direct launch of a tuned key keeps a call's arguments, its TMA descriptors encoded,
    for the next call of the same tensors (hopper_common.DirectLaunch): the kernel launched
    from them reads what the tensors hold then, and other tensors get their own."""
    from tlx_kernels.hopper import gemm

    M, N, K = 384, 256, 320
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    gemm.autotuned_matmul(a, b)  # tunes the key
    launch = gemm.direct_launch(a, b)
    assert launch.expanded_launch.usable
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        launch((a, b, c), (M, N, K))
        expected = a.float() @ b.float()
        error = ((c.float() - expected).abs().max() / expected.abs().max()).item()
        assert error <= GEMM_TOLERANCE[torch.float16]
    kept = dict(launch.expanded)
    assert len(kept) >= 1
    assert [key for key in kept if key[0] == (M, N, K)]
    other = torch.empty_like(c)
    launch((a, b, other), (M, N, K))
    assert len(launch.expanded) == len(kept) + 1
    torch.testing.assert_close(other, c, rtol=0, atol=0)
