"""A warp-specialized Hopper GEMM written in the reference TLX's style.

One CTA computes one BLOCK_M x BLOCK_N tile of C = A @ B. A loader task streams the
tiles of A and B through a ring of NUM_STAGES stages with TMA; the MMA task multiplies
them with wgmma, then stages C in shared memory for a TMA store. C's tile takes the
bytes of the ring, which is done by then.

This is the fixture of docs/porting.md: test/python/test_porting.py applies the diff of
that page to this file and compiles the result for sm_90a. It is never imported here
(the reference's tlx lives in its own Triton).
"""

import triton
import triton.language as tl
from triton.language.extra import tlx


@triton.jit
def gemm_kernel(
    a_desc,
    b_desc,
    c_desc,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    NUM_STAGES: tl.constexpr,
):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    dtype = tlx.dtype_of(a_desc)

    # The stages of A and B never overlap; C takes the bytes of the ring's first stages.
    spec = tlx.storage_alias_spec(tlx.storage_kind.smem)
    a_tiles = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_STAGES, reuse=spec)
    b_tiles = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES, reuse=spec)
    c_tile = tlx.local_alloc((BLOCK_M, BLOCK_N), dtype, tl.constexpr(1), reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            c_tile,
            tlx.reuse_group(
                tlx.reuse_group(a_tiles, b_tiles, group_type=tlx.reuse_group_type.distinct),
                group_size=NUM_STAGES,
            ),
            group_type=tlx.reuse_group_type.shared,
        )
    )

    full = tlx.alloc_barriers(NUM_STAGES)  # the tiles of a stage have landed
    empty = tlx.alloc_barriers(NUM_STAGES)  # the MMA has read a stage
    k_steps = tl.cdiv(K, BLOCK_K)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
            for k in range(k_steps):
                stage = k % NUM_STAGES
                tlx.barrier_wait(full[stage], (k // NUM_STAGES) & 1)
                acc = tlx.async_dot(a_tiles[stage], b_tiles[stage], acc)
                acc = tlx.async_dot_wait(0, acc)
                tlx.barrier_arrive(empty[stage])
            tlx.local_store(c_tile[0], acc.to(dtype))
            tlx.fence("async_shared")
            tlx.async_descriptor_store(c_desc, c_tile[0], [off_m, off_n])
            tlx.async_descriptor_store_wait(0)
        with tlx.async_task(num_warps=1, registers=24):
            tile_bytes = (BLOCK_M + BLOCK_N) * BLOCK_K * tlx.size_of(dtype)
            for k in range(k_steps):
                stage = k % NUM_STAGES
                # A fresh barrier passes a wait for parity 1: the first round does not wait.
                tlx.barrier_wait(empty[stage], ((k // NUM_STAGES) & 1) ^ 1)
                tlx.barrier_expect_bytes(full[stage], tile_bytes)
                tlx.async_descriptor_load(a_desc, a_tiles[stage], [off_m, k * BLOCK_K], full[stage])
                tlx.async_descriptor_load(b_desc, b_tiles[stage], [k * BLOCK_K, off_n], full[stage])
