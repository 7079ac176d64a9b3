"""Gluon kernels whose buffers share memory through tlx storage aliasing, tuned by
``tlx.autotune``, as a model calls them::

    from tlx_kernels import attention, fused_mlp, gated_mlp, matmul

    o = attention(q, k, v, causal=True)  # softmax(q k^T / sqrt(d)) v, (batch, heads, n, d)
    o.sum().backward()  # attention is a torch.autograd.Function: dq, dk, dv
    c = matmul(a, b)  # a [M, K] @ b [K, N]
    y = fused_mlp(x, w1, w2)  # gelu(x @ w1) @ w2 in one kernel
    y = gated_mlp(x, w_gate, w_up, w_down)  # (silu(x @ w_gate) * (x @ w_up)) @ w_down

k and v may have fewer heads than q (grouped-query attention: kv_heads dividing heads). Each
takes float16 or bfloat16 CUDA tensors on a Hopper (sm_90a) GPU; the first call of a
shape times every configuration that fits (the planner drops the others before compiling),
later calls launch the chosen kernel directly.

What is there:

* ``tlx_kernels.hopper.attention`` (kernel: ``attention_kernel``, ``attention_schedule``):
  persistent warp-specialized Flash Attention forward, Q/K/V/O tiles in one planned region;
  ``tlx_kernels.hopper.attention_backward`` (kernel: ``attention_backward_kernel``): its
  backward (dK/dV per key block, dQ summed in the kernel or by one of its own,
  ``attention_dq``), the dK/dV epilogue over K/V;
  ``tlx_kernels.hopper.attention_autograd``: both as a ``torch.autograd.Function``.
* ``tlx_kernels.hopper.gemm`` (kernel: ``gemm_kernel``): C = A @ B, the C tile over the ring.
* ``tlx_kernels.hopper.fused_mlp`` (kernel: ``fused_mlp_kernel``): act(X @ W1) @ W2, the two
  phases' rings sharing bytes.
* ``tlx_kernels.hopper.gated_mlp`` (kernel: ``gated_mlp_kernel``): the gated (SwiGLU) MLP,
  silu(X W_gate) * (X W_up) one kernel whose two products share X's loads, its staging tile
  over the dead ring; the down projection by the GEMM.
* ``tlx_kernels.hopper.common``, ``tlx_kernels.hopper.attention_common``: what they share.
* ``tlx_kernels.blackwell.flash_attention``, ``tlx_kernels.blackwell.two_cta_mma``: sm_100a
  kernels with S/P and an accumulator in shared tensor memory (compiled on the CPU here).
* ``tlx_kernels.launch``: the direct launch of a tuned kernel (``DirectLaunch``).

Each host module also compiles its kernel for its target without a GPU (``kernel_source``,
``compile_for_hopper`` / ``compile_for_blackwell``) and returns its tlx plan (``smem_plan``,
``spec_plans``). The tutorials (tutorials/ in the repository) tell each kernel's story.
"""

from tlx_kernels.hopper.attention_autograd import attention
from tlx_kernels.hopper.fused_mlp import autotuned_fused_mlp as fused_mlp
from tlx_kernels.hopper.gated_mlp import autotuned_gated_mlp as gated_mlp
from tlx_kernels.hopper.gemm import autotuned_matmul as matmul

__all__ = ["attention", "fused_mlp", "gated_mlp", "matmul"]
