"""``attention(q, k, v, causal=False, sm_scale=None)``: Flash Attention on Hopper that trains.

A ``torch.autograd.Function`` over the tuned forward kernel (``autotuned_attention``, which
saves the log-sum-exp of each row for the backward) and the tuned backward
(``attention_backward.backward``). Inputs are (batch, heads, seq_len, head_dim) CUDA tensors
of float16 or bfloat16, head_dim 64 or 128, any seq_len (keys as long as queries).
Grouped-query and multi-query attention: ``k`` and ``v`` may have H_kv heads where H_kv
divides q's H; query head h attends with KV head h // (H / H_kv), as ``torch``'s
``scaled_dot_product_attention(..., enable_gqa=True)`` has it, and dK, dV sum over the group.
Non-contiguous inputs are copied to contiguous ones first.
"""

import torch

from tlx_kernels.hopper import attention_backward
from tlx_kernels.hopper.attention import autotuned_attention

SUPPORTED_DTYPES = (torch.float16, torch.bfloat16)


def _shape(t):
    return tuple(t.shape)


def check_inputs(q, k, v):
    """Raises a ValueError (TypeError for a non-tensor) naming the tensor and its shape or
    dtype when ``attention`` cannot take q, k and v: each (batch, heads, seq_len, head_dim);
    float16 or bfloat16, all three alike (a tensor that requires grad is named so); k and v
    of one shape, with q's batch, seq_len and head_dim and a number of heads dividing q's;
    head_dim 64 or 128; on a CUDA device."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(
                f"{name} must be (batch, heads, seq_len, head_dim), got shape {_shape(t)}"
            )
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype not in SUPPORTED_DTYPES:
            needs = " and requires grad: the backward" if t.requires_grad else ": attention"
            raise ValueError(
                f"{name} (shape {_shape(t)}) has dtype {t.dtype}{needs} takes float16 or bfloat16"
            )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(
            f"q, k and v must have one dtype, got q {q.dtype}, k {k.dtype}, v {v.dtype}"
        )
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape, got k {_shape(k)} and v {_shape(v)}")
    batch, heads, seq_len, head_dim = q.shape
    if (k.shape[0], k.shape[2], k.shape[3]) != (batch, seq_len, head_dim):
        raise ValueError(
            f"k and v (shape {_shape(k)}) must have q's batch, seq_len and head_dim (q has "
            f"shape {_shape(q)})"
        )
    kv_heads = k.shape[1]
    if kv_heads == 0 or heads % kv_heads != 0:
        raise ValueError(
            f"k and v have {kv_heads} heads (shape {_shape(k)}), which does not divide q's "
            f"{heads} (shape {_shape(q)}): grouped-query attention needs H_kv dividing H"
        )
    if head_dim not in attention_backward.HEAD_DIMS:
        raise ValueError(
            f"head_dim {head_dim} (q's shape {_shape(q)}) is not supported: "
            f"{' or '.join(map(str, attention_backward.HEAD_DIMS))}"
        )
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.device.type != "cuda":
            raise ValueError(
                f"{name} (shape {_shape(t)}) is on {t.device}: attention runs on a CUDA "
                f"(Hopper) GPU"
            )


def forward_with_lse(q, k, v, causal, sm_scale):
    """(O, LSE) of the tuned forward (grouped heads read where they are: the kernel's
    ``kv_group``)."""
    return autotuned_attention(q, k, v, causal, sm_scale, return_lse=True)


class _Attention(torch.autograd.Function):
    """The forward saves (q, k, v, O, LSE); the backward computes (dQ, dK, dV) from them."""

    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale):
        o, lse = forward_with_lse(q, k, v, causal, sm_scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        ctx.sm_scale = sm_scale
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = attention_backward.backward(
            do.contiguous(), q, k, v, o, lse, ctx.causal, ctx.sm_scale
        )
        return dq, dk, dv, None, None


def attention(q, k, v, causal=False, sm_scale=None):
    """softmax(q k^T * sm_scale) v with gradients (``loss.backward()`` works): q of shape
    (batch, heads, seq_len, head_dim), k and v of (batch, kv_heads, seq_len, head_dim) with
    kv_heads dividing heads; sm_scale defaults to head_dim ** -0.5."""
    check_inputs(q, k, v)
    q, k, v = (t.contiguous() for t in (q, k, v))
    if not (torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))):
        # Nothing to differentiate: the tuned forward alone, launched directly, no LSE kept.
        return autotuned_attention(q, k, v, bool(causal), sm_scale)
    return _Attention.apply(q, k, v, bool(causal), sm_scale)
