"""Forward Flash Attention for Hopper (sm_90a): Gluon + tlx storage aliasing.

    python tutorials/hopper_flash_attention.py     (PYTHONPATH=language, or the package installed)

The kernel is ``tlx_kernels.hopper.attention_kernel``, its host code
``tlx_kernels.hopper.attention``; a model calls the tuned one as
``from tlx_kernels import attention``.

The kernel
----------
O = softmax(Q K^T * sm_scale) V, tile by tile: a tile is BLOCK_M rows of Q of one (batch, head).
The kernel is persistent: one CTA per SM (two with ``Config.ctas_per_sm``: short tiles, bound
by the latency of each consumer's chain, run faster with twice the chains) takes work units
round-robin (``_work_units``): a unit is one tile, or with a causal mask the pair of row blocks
i and n - 1 - i of a head, whose work adds up to the same for every i, so that every CTA gets
as much as the others (``_unit_tiles``: rounds rotated when a head's last row block is short,
and with ``balance_tail`` the last rounds dealt one row block at a time). A CTA has three
warp-specialized partitions:

* a loader warp issues TMA copies: each tile's Q tiles, and K_j and V_j into a ring of
  NUM_STAGES stage buffers guarded by mbarriers (k_ready / v_ready: "the copy landed",
  kv_empty: "every consumer is done with this stage"; q_ready / q_empty likewise for Q). The
  ring runs on across tiles, so the next tile's first blocks load while this one finishes;
* two consumer warpgroups (three at HEAD_DIM 64), each owning 64 rows of a tile. Per K/V block
  a consumer issues S_j = Q K_j^T and P_{j-1} V_{j-1} on the tensor cores (``warpgroup_mma``,
  P from registers) and runs the online softmax of S_j (exp2 with the scale folded in) while
  P V is in flight.
  The consumers are separate partitions that meet only at the K/V stage barriers, so they drift
  apart and one warpgroup's softmax overlaps the other's matrix products (explicit turn-taking
  through an mbarrier pair, as in FA3's ping-pong schedule, measured no faster on an H200);
* causal masking touches only the blocks on the diagonal, and a consumer stops at its own last
  block; rows and keys past the sequence end come from the TMA's zero fill and are masked
  (keys) or skipped and clipped by the TMA store (rows).

Where aliasing buys room
------------------------
All tiles live in one ``tlx.storage_alias_spec``. A consumer's Q tile is dead once its last
S = Q K^T has been computed, and the K/V stage of a tile's last key block once every consumer
has read it; the O tile an epilogue hands to the TMA store is born after both. For HEAD_DIM =
128, BLOCK_M = BLOCK_N = 128, the two consumers' O tiles take the bytes of that stage's K tile
(``distinct(shared(k, o), v)`` per stage: K is read by the last S, before the last P V reads
V), and O leaves Q's one buffer alone: each consumer reads its Q into registers as a tile
starts (S = Q K^T takes Q from registers), and the next tile's Q loads into the buffer a whole
tile ahead. 32 KB (Q) + 3 x (32 KB K + 32 KB V) = 224 KB, which fits the 227 KB of an sm_90a
CTA; without aliasing the same three stages need 256 KB, so the best configuration without
aliasing has only two stages. At HEAD_DIM 64 each consumer has two Q buffers (the next
tile's Q loads while this one is in use), each taken in turn by O (``reuse_group(q, o,
shared)``): 48 KB + 5 x 32 KB = 208 KB, where without aliasing five stages need 256 KB and
only four fit. The planner (``tlx.planner``) lays the region out while the kernel is traced;
``main()`` prints the plan the kernel uses (``tlx.kernel_plans``), the size the planner gives
the same buffers without aliasing, and the configurations without aliasing that do not
compile.

The backward pass
-----------------
``from tlx_kernels import attention`` is a ``torch.autograd.Function``: its backward is
``tlx_kernels.hopper.attention_backward`` (K and V resident per CTA, Q and dO through a ring,
dK and dV summed over grouped query heads). Its SMEM is one spec too, whose reuse tree puts
the epilogue's dK and dV over K and V and P over dS; docs/attention-backward.md draws its plan
(``python -m tlx plan --svg``) and explains the tree.
"""

import functools
import sys

import torch
import triton
from tlx_kernels.hopper.attention import (
    HEAD_DIMS,
    attention,
    autotuned_attention,
    chosen_config,
    compile_for_hopper,
    default_config,
    smem_plan,
    unaliased_search,
)
from tlx_kernels.hopper.common import TORCH_TO_TRITON_DTYPE, print_without_aliasing


def print_smem_plans():
    for head_dim in HEAD_DIMS:
        config = default_config(head_dim)
        smem = smem_plan(config, head_dim)
        plan = smem.plan
        print(
            f"HEAD_DIM={head_dim}, {config}: SMEM region {plan.size_bytes} bytes "
            f"({plan.size_bytes / 1024:.0f} KB, aligned to {plan.alignment})"
        )
        for buffer, view in zip(smem.buffers, plan.views, strict=True):
            print(
                f"    {buffer.name:8s} {buffer.shape[0]} x {list(buffer.shape[1:])} "
                f"{buffer.element_bits}-bit: "
                f"offset {view.offset:6d}, {view.buffer_size} bytes per buffer"
            )
        best, rejected = unaliased_search(head_dim)
        print_without_aliasing(smem, rejected)
        print(f"    best configuration without aliasing: {best}")


def check_against_torch():
    failures = 0
    for dtype in TORCH_TO_TRITON_DTYPE:
        for head_dim in HEAD_DIMS:
            for causal in (False, True):
                for seq_len in (77, 1000, 2048):
                    torch.manual_seed(seq_len)
                    q, k, v = (
                        torch.randn(2, 4, seq_len, head_dim, device="cuda", dtype=dtype)
                        for _ in range(3)
                    )
                    expected = torch.nn.functional.scaled_dot_product_attention(
                        q.float(), k.float(), v.float(), is_causal=causal
                    )
                    error = (attention(q, k, v, causal).float() - expected).abs().max().item()
                    tolerance = 1e-2 if dtype is torch.float16 else 3e-2
                    ok = error <= tolerance
                    failures += not ok
                    print(
                        f"    {TORCH_TO_TRITON_DTYPE[dtype]} D={head_dim:3d} causal={causal!s:5} "
                        f"N={seq_len:4d}: max |error| {error:.1e} {'ok' if ok else 'FAILED'}"
                    )
    return failures


def benchmark():
    print(f"{'D':>4} {'causal':>6} {'ours TFLOP/s':>12} {'torch SDPA TFLOP/s':>18}")
    batch, heads, seq_len = 4, 32, 4096
    for head_dim in HEAD_DIMS:
        for causal in (False, True):
            q, k, v = (
                torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=torch.float16)
                for _ in range(3)
            )
            flops = 4.0 * batch * heads * seq_len * seq_len * head_dim / (2 if causal else 1)
            ours = triton.testing.do_bench(
                functools.partial(attention, q, k, v, causal), return_mode="median"
            )
            sdpa = triton.testing.do_bench(
                functools.partial(
                    torch.nn.functional.scaled_dot_product_attention, q, k, v, is_causal=causal
                ),
                return_mode="median",
            )
            print(
                f"{head_dim:>4} {causal!s:>6} {flops / ours * 1e-9:12.1f} "
                f"{flops / sdpa * 1e-9:18.1f}"
            )


def check_autotuned():
    """autotuned_attention against torch SDPA for each head dim and mask, with the
    configuration chosen for each key."""
    failures = 0
    for head_dim in HEAD_DIMS:
        for causal in (False, True):
            for seq_len in (1000, 4096):
                q, k, v = (
                    torch.randn(2, 4, seq_len, head_dim, device="cuda", dtype=torch.float16)
                    for _ in range(3)
                )
                expected = torch.nn.functional.scaled_dot_product_attention(
                    q.float(), k.float(), v.float(), is_causal=causal
                )
                out = autotuned_attention(q, k, v, causal)
                error = (out.float() - expected).abs().max().item()
                ok = error <= 1e-2
                failures += not ok
                print(
                    f"    fp16 D={head_dim:3d} causal={causal!s:5} N={seq_len:4d}: "
                    f"{chosen_config(torch.float16, head_dim)}, max |error| {error:.1e} "
                    f"{'ok' if ok else 'FAILED'}"
                )
    return failures


def main():
    print("SMEM plans of the kernel for sm_90a (tlx.kernel_plans):")
    print_smem_plans()
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9:
        print(f"Correctness against torch SDPA (fp32 reference) on {torch.cuda.get_device_name()}:")
        failures = check_against_torch()
        print("Autotuned (tlx.autotune: the configuration chosen for each shape and mask):")
        failures += check_autotuned()
        print(f"Benchmark, B=4 H=32 N=4096 fp16 on {torch.cuda.get_device_name()}:")
        benchmark()
        return 1 if failures else 0
    print("No Hopper GPU: compiling for sm_90a only.")
    for head_dim in HEAD_DIMS:
        config = default_config(head_dim)
        compiled = compile_for_hopper(config, head_dim)
        print(
            f"    HEAD_DIM={head_dim} {config}: cubin {len(compiled.asm['cubin'])} bytes, "
            f"{compiled.metadata.shared} bytes of SMEM (region + mbarriers)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
