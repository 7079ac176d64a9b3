"""GPU correctness of tutorials/hopper_flash_attention.py against an fp32 reference.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

# fp16 keeps 10 mantissa bits, bf16 7: P and O are rounded to them.
TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 3e-2}


def reference(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=causal
    ).to(q.dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq_len", [1, 77, 128, 200, 1024, 1531])
def test_matches_reference(dtype, head_dim, causal, seq_len):
    import hopper_flash_attention as fa

    torch.manual_seed(seq_len)
    shape = (2, 3, seq_len, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
    out = fa.attention(q, k, v, causal)
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(out, reference(q, k, v, causal), atol=tol, rtol=tol)


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_configurations_agree(head_dim, causal):
    """Every configuration the benchmark compares computes the same result."""
    import hopper_flash_attention as fa

    torch.manual_seed(0)
    shape = (1, 4, 1000, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    expected = reference(q, k, v, causal)
    for config in fa.benchmark_configs(head_dim):
        out = fa.attention(q, k, v, causal, config=config)
        torch.testing.assert_close(
            out, expected, atol=1e-2, rtol=1e-2, msg=lambda m, c=config: f"{c}: {m}"
        )


@pytest.mark.parametrize("causal", [False, True])
def test_every_swept_configuration_agrees(causal):
    """The configurations bench/flash_attention.py --sweep times at HEAD_DIM 64 (three consumer
    warpgroups, each stopping at its own last key block when causal) compute the same result,
    on a sequence that ends inside a block."""
    import hopper_flash_attention as fa

    torch.manual_seed(0)
    shape = (1, 4, 1000, 64)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    expected = reference(q, k, v, causal)
    for config in fa.all_configs(64):
        out = fa.attention(q, k, v, causal, config=config)
        torch.testing.assert_close(
            out, expected, atol=1e-2, rtol=1e-2, msg=lambda m, c=config: f"{c}: {m}"
        )


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_autotuned_configuration_agrees(head_dim, causal):
    """Every configuration the tuner may choose (autotune_space) computes the same result: on
    many one-block tiles per CTA (200 heads of 100 rows), where the loader refills a Q buffer
    for the next tile as soon as the consumers free it (Q read into registers, two Q
    buffers, O over the last K/V stage); on many tiles whose last has rows for one consumer
    only (150 heads of 300 rows: the other releases the stage under its last O before it
    skips the tile's blocks, overlap_o_store); and on a sequence that ends inside a block."""
    import hopper_flash_attention as fa
    from triton.compiler.errors import CompilationError

    kept = []
    for config in fa.autotune_space(head_dim):
        try:
            fa.smem_plan(config, head_dim)
        except CompilationError as error:
            # The tuner's plan pruner drops it before anything runs (test_tutorial_spaces.py).
            assert "more than the target's limit" in error.error_message, error.error_message
        else:
            kept.append(config)
    assert any(config.q_in_registers for config in kept)
    shapes = [(2, 100, 100, head_dim), (1, 150, 300, head_dim), (1, 4, 1000, head_dim)]
    for seed, shape in enumerate(shapes):
        torch.manual_seed(seed)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        expected = reference(q, k, v, causal)
        for config in kept:
            out = fa.attention(q, k, v, causal, config=config)
            torch.testing.assert_close(
                out, expected, atol=1e-2, rtol=1e-2, msg=lambda m, c=config: f"{c}: {m}"
            )


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_work_unit_of_a_persistent_grid(head_dim, causal):
    """More work units than the GPU has SMs: each CTA of the persistent grid computes several
    tiles (with a causal mask, pairs of row blocks), its K/V ring and Q buffers running on from
    one tile to the next. Every head must match the reference."""
    import hopper_flash_attention as fa

    config = fa.default_config(head_dim)
    batch, heads, seq_len = 2, 48, 1000
    row_blocks = -(-seq_len // config.block_m)
    units = batch * heads * (-(-row_blocks // 2) if causal else row_blocks)
    assert units >= 2 * torch.cuda.get_device_properties(0).multi_processor_count

    torch.manual_seed(1)
    q, k, v = (
        torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=torch.float16)
        for _ in range(3)
    )
    out = fa.attention(q, k, v, causal)
    torch.testing.assert_close(out, reference(q, k, v, causal), atol=1e-2, rtol=1e-2)
