"""GPU correctness of the Hopper attention backward (tlx_kernels/hopper/attention_backward.py)
against a float32 torch reference.

Tolerance: the max-abs error of each gradient relative to the reference gradient's scale
(its max-abs), at most 2e-2 in float16 and 5e-2 in bfloat16 (P, dS and the operands are
rounded to 10 or 7 mantissa bits). An indexing or masking error gives errors of the
gradient's own scale. Runs only on a Hopper GPU.
"""

import pytest
import torch
from tlx_kernels.hopper import attention_backward as bwd

pytestmark = pytest.mark.hopper

TOLERANCE = {torch.float16: 2e-2, torch.bfloat16: 5e-2}


def reference_gradients(q, k, v, do, causal):
    """(O, dQ, dK, dV) in float32: torch's SDPA on float32 copies, K and V repeated over each
    group of query heads (dK and dV sum over it through autograd)."""
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k_full, v_full = (t.repeat_interleave(group, dim=1) for t in (k32, v32))
    o = torch.nn.functional.scaled_dot_product_attention(q32, k_full, v_full, is_causal=causal)
    o.backward(do.float())
    return o.detach(), q32.grad, k32.grad, v32.grad


def reference_forward(q, k, v, causal):
    """(O in q's dtype, LSE as (batch * heads, seq_len) float32) in float32 arithmetic: what the
    backward takes from the forward."""
    group = q.shape[1] // k.shape[1]
    k_full, v_full = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    scores = q.float() @ k_full.transpose(-1, -2) * q.shape[-1] ** -0.5
    if causal:
        seq_len = q.shape[2]
        above = torch.ones(seq_len, seq_len, device=q.device, dtype=torch.bool).triu(1)
        scores.masked_fill_(above, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    o = torch.softmax(scores, dim=-1) @ v_full
    return o.to(q.dtype), lse.flatten(0, 1).contiguous()


def assert_close_to_scale(name, ours, expected, dtype):
    scale = expected.abs().max().item()
    error = (ours.float() - expected).abs().max().item()
    assert error <= TOLERANCE[dtype] * max(scale, 1e-6), (
        f"{name}: max |error| {error:.3e}, reference scale {scale:.3e}"
    )


def random_inputs(batch, heads, kv_heads, seq_len, head_dim, dtype, seed):
    torch.manual_seed(seed)
    q = torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=dtype)
    k, v = (
        torch.randn(batch, kv_heads, seq_len, head_dim, device="cuda", dtype=dtype)
        for _ in range(2)
    )
    do = torch.randn_like(q)
    return q, k, v, do


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_gradients_match_reference(dtype, head_dim, causal):
    """The backward's default configuration (untuned) at N = 1, 100, 1000 and 4133, two KV
    heads each serving two query heads, from O and LSE computed by torch."""
    config = bwd.default_config(head_dim)
    for seq_len in (1, 100, 1000, 4133):
        q, k, v, do = random_inputs(2, 4, 2, seq_len, head_dim, dtype, seq_len)
        _, dq_ref, dk_ref, dv_ref = reference_gradients(q, k, v, do, causal)
        o, lse = reference_forward(q, k, v, causal)
        dq, dk, dv = bwd.backward(do, q, k, v, o, lse, causal, config=config)
        for name, ours, expected in (("dQ", dq, dq_ref), ("dK", dk, dk_ref), ("dV", dv, dv_ref)):
            assert_close_to_scale(f"{name} N={seq_len}", ours, expected, dtype)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_every_configuration_agrees(head_dim):
    """Every configuration of the tuning space the plans keep, causal, on a sequence that
    ends inside a block, with grouped heads."""
    q, k, v, do = random_inputs(1, 4, 2, 1000, head_dim, torch.float16, 0)
    _, dq_ref, dk_ref, dv_ref = reference_gradients(q, k, v, do, True)
    o, lse = reference_forward(q, k, v, True)
    for config in bwd.autotune_space(head_dim):
        if not config.alias and config.num_stages == 4 and head_dim == 128:
            continue  # pruned: does not fit (test/python/test_attention_backward.py)
        dq, dk, dv = bwd.backward(do, q, k, v, o, lse, True, config=config)
        for name, ours, expected in (("dQ", dq, dq_ref), ("dK", dk, dk_ref), ("dV", dv, dv_ref)):
            assert_close_to_scale(f"{config} {name}", ours, expected, torch.float16)
