"""A 2-CTA tcgen05 MMA whose accumulator shares tensor memory with its own fp16 copy.

    python tutorials/blackwell_two_cta_mma.py     (PYTHONPATH=language, or the package installed)

The kernel and its host code are ``tlx_kernels.blackwell.two_cta_mma``.

On Blackwell, two CTAs of a cluster can run one MMA together (``cta_group::2``): the
accumulator of a 256-row tile is split over the CTA pair, 128 rows in each CTA's tensor
memory. A TMEM layout says so with ``two_ctas=True`` and a CTA split along M (a CGA layout
``[[1, 0]]``; ``cta_split_num=(2, 1)`` before Triton 3.8: ``tlx.compat.tensor_memory_layout``
writes either). The planner sizes such a tile by what one CTA holds: a [256, 128] float32
accumulator is 128 columns per CTA, not 256.

The kernel computes ``C = A @ B`` for one 256 x 128 tile with K = 64. ``acc`` (float32) and
``acc_half`` (float16, packed two to a column) share the spec's columns (``shared``): once the
MMA is done, the kernel reads the accumulator, writes it back as float16 into the same
columns (as Flash Attention writes P over S) and stores that. The region is 128 columns of
each CTA's 512.

Compiled for sm_100a with ``num_ctas=2`` on the CPU (no Blackwell GPU here): the script prints
the plan and checks the TMEM allocation and the ``two_ctas`` MMA in the TTGIR.
"""

import re

from tlx_kernels.blackwell.two_cta_mma import compile_for_blackwell, spec_plans


def main():
    (tmem,) = spec_plans()
    print(tmem.describe())
    compiled = compile_for_blackwell()
    ttgir = compiled.asm["ttgir"]
    allocation = re.search(r"ttng\.tmem_alloc : \(\) -> !ttg\.memdesc<(\d+)x(\d+)xi32", ttgir)
    assert allocation and allocation.groups() == ("256", "128"), allocation
    assert "two_ctas" in ttgir and compiled.asm["cubin"]
    print(
        f"compiled for sm_100a with num_ctas=2: one {tmem.plan.region_size}-column TMEM region "
        "per CTA holds the accumulator and its fp16 copy"
    )


if __name__ == "__main__":
    main()
