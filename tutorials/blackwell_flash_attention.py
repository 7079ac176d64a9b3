"""Forward Flash Attention for Blackwell (sm_100a): tcgen05 MMAs into tensor memory, with the
S / P / alpha / l / m tiles of each Q tile sharing one TMEM region through tlx.

    python tutorials/blackwell_flash_attention.py  (PYTHONPATH=language, or the package installed)

The kernel and its host code are ``tlx_kernels.blackwell.flash_attention``.

The kernel
----------
A CTA owns BLOCK_M = 2 x 128 rows of Q: two "MMA groups" of 128 rows, one softmax warpgroup
each, so that one group's softmax overlaps the other group's matrix products. Partitions:

* load (1 warp): TMA copies of Q_g once, then K_j / V_j into NUM_STAGES stage buffers;
* mma (1 warp): per block j and group g, first O_g += P_g(j-1) V_(j-1) (P from TMEM, in
  NUM_MMA_SLICES column slices so that the product can start on the first slice while the
  softmax still computes the next), then S_g(j) = Q_g K_j^T into TMEM;
* softmax x 2 (4 warps each): reads S_g from TMEM, online softmax with exp2, writes P_g (fp16)
  and the rescale factor alpha back into TMEM;
* correction (the default partition, 4 warps): rescales O_g in TMEM by alpha before the next
  P V accumulates, then the epilogue: O / l through SMEM and a TMA store, and the log-sum-exp
  (from l and m, which the softmax leaves in TMEM).

TMEM sharing (S, P and the softmax statistics in one region)
---------------------------------
S_g is dead as soon as the softmax has read it, so P_g, alpha_g, l_g and m_g are written over it:
``qk_tiles`` (fp32, 128 columns per group) is ``shared`` with a ``distinct`` group of the P
slices (fp16, two per 32-bit column: 64 columns per group, ``group_size`` = number of slices),
alpha, l and m (one column each). With the O accumulators (HEAD_DIM fp32 columns per group) a
CTA uses 2 x 128 + 2 x HEAD_DIM <= 512 columns. In SMEM the epilogue's O tile shares Q's bytes,
as in the Hopper tutorial.

No Blackwell GPU was available to this project: the script compiles the kernel for sm_100a
(cubin included) and prints the TMEM and SMEM plans the kernel uses (``tlx.kernel_plans``). It is
not benchmarked or run.
"""

import sys

import tlx
from tlx_kernels.blackwell.flash_attention import (
    HEAD_DIMS,
    NUM_MMA_GROUPS,
    SM100A,
    attention,
    compile_for_blackwell,
    num_stages,
    spec_plans,
)


def check_against_torch():
    import torch

    failures = 0
    for head_dim in HEAD_DIMS:
        for causal in (False, True):
            q, k, v = (
                torch.randn(2, 4, 1000, head_dim, device="cuda", dtype=torch.float16)
                for _ in range(3)
            )
            scores = q.float() @ k.float().transpose(-1, -2) * head_dim**-0.5
            if causal:
                scores = scores.masked_fill(torch.ones_like(scores).triu(1).bool(), float("-inf"))
            out, lse = attention(q, k, v, causal)
            error = (out.float() - torch.softmax(scores, -1) @ v.float()).abs().max().item()
            lse_error = (lse - torch.logsumexp(scores, -1)).abs().max().item()
            failures += error > 1e-2 or lse_error > 1e-3
            print(
                f"    D={head_dim} causal={causal}: max |error| O {error:.1e}, "
                f"log-sum-exp {lse_error:.1e}"
            )
    return failures


def print_plans(head_dim):
    plans = spec_plans(head_dim, num_stages(head_dim))
    qk, o_region, smem = plans["qk_storage"], plans["o_tiles_region"], plans["smem"]
    region_columns = qk.plan.region_size
    qk_view = qk.plan.views[0]
    group_columns = qk_view.scale * qk_view.buffer_size
    print(
        f"HEAD_DIM={head_dim}: TMEM spec qk_storage, {region_columns} columns "
        f"({NUM_MMA_GROUPS.value} groups x {group_columns} columns, {qk.plan.layout}):"
    )
    for buffer, view in zip(qk.buffers, qk.plan.views, strict=True):
        print(
            f"    {buffer.name:11s} {buffer.shape[0]} x {list(buffer.shape[1:])}: column offset "
            f"{view.offset:3d}, {view.buffer_size:3d} columns per buffer"
        )
    tmem = tlx.kernel_budget(plans.values(), SM100A).storage(tlx.storage_kind.tmem)
    print(
        f"    o_tiles (own region): {o_region.plan.region_size} columns; CTA total "
        f"{tmem.used_units} of {tmem.capacity_units} columns"
    )
    offsets = ", ".join(
        f"{b.name} at {v.offset}" for b, v in zip(smem.buffers, smem.plan.views, strict=True)
    )
    print(
        f"    SMEM spec smem, {num_stages(head_dim)} K/V stages: {smem.plan.size_bytes} bytes "
        f"({offsets})"
    )


def main():
    import torch

    for head_dim in HEAD_DIMS:
        print_plans(head_dim)
        compiled = compile_for_blackwell(head_dim)
        print(
            f"    compiled for sm_100a: cubin {len(compiled.asm['cubin'])} bytes, "
            f"{compiled.metadata.shared} bytes of SMEM"
        )
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10:
        print(f"Correctness against torch SDPA on {torch.cuda.get_device_name()}:")
        return 1 if check_against_torch() else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
