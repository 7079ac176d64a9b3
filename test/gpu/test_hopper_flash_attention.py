"""GPU correctness of tutorials/hopper_flash_attention.py against an fp32 reference.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import hopper_flash_attention as fa
import pytest
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

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
@pytest.mark.parametrize("seq_len", [1000, 520])
def test_every_work_unit_of_a_persistent_grid(head_dim, causal, seq_len):
    """More work units than the GPU has SMs: each CTA of the persistent grid computes several
    tiles (with a causal mask, pairs of row blocks, and the last heads' tiles one by one), its
    K/V ring and Q buffers running on from one tile to the next; 520 rows make an odd number
    of row blocks, whose middle one is a unit alone. Every head must match the reference."""
    import hopper_flash_attention as fa

    config = fa.default_config(head_dim)
    batch, heads = 3, 48
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


@gluon.jit
def deal_causal_units(
    tiles, seq_len, batch_heads, BLOCK_M: gl.constexpr, BALANCE_TAIL: gl.constexpr
):
    """Each work unit's row blocks (head x row blocks + row block) at tiles[2 * unit + tile],
    as the attention kernel's partitions deal them."""
    n_row_blocks, units_per_head, tail_heads, n_units = fa._work_units(
        seq_len, batch_heads, BLOCK_M, True, BALANCE_TAIL
    )
    for unit in range(gl.program_id(0), n_units, gl.num_programs(0)):
        off_bh, first, step, n_tiles = fa._unit_tiles(
            unit, n_row_blocks, units_per_head, tail_heads, batch_heads, True, BALANCE_TAIL
        )
        for tile in range(n_tiles):
            gl.store(tiles + 2 * unit + tile, off_bh * n_row_blocks + first + tile * step)


@pytest.mark.parametrize("balance_tail", [False, True])
@pytest.mark.parametrize(
    ("batch_heads", "seq_len", "block_m", "programs"),
    [(1024, 512, 128, 132), (512, 1024, 128, 132), (256, 2048, 128, 132), (96, 520, 128, 132)]
    + [(128, 4096, 192, 132), (3, 1000, 128, 17), (1, 640, 128, 5)],
)
def test_causal_work_units_cover_every_tile_once(
    batch_heads, seq_len, block_m, programs, balance_tail
):
    """The kernel's own work-unit functions (_work_units, _unit_tiles), run by a grid of
    ``programs`` CTAs, deal every causal row block of every head exactly once; dealing the
    tail tile by tile leaves no CTA with more key blocks than dealing it in pairs does."""
    n_row_blocks = -(-seq_len // block_m)
    tiles = torch.full((2 * batch_heads * n_row_blocks,), -1, device="cuda", dtype=torch.int32)
    deal_causal_units[(programs,)](
        tiles, seq_len, batch_heads, BLOCK_M=block_m, BALANCE_TAIL=balance_tail
    )
    dealt = tiles.view(-1, 2).cpu()
    taken = dealt[dealt >= 0]
    assert sorted(taken.tolist()) == list(range(batch_heads * n_row_blocks))

    # The keys each CTA's tiles visit: row block r visits (r + 1) * block_m.
    keys = [0] * programs
    for unit, pair in enumerate(dealt.tolist()):
        keys[unit % programs] += sum(
            (tile % n_row_blocks + 1) * block_m for tile in pair if tile >= 0
        )
    units_per_head = -(-n_row_blocks // 2)

    def pair_keys(i):  # row blocks n - 1 - i and i, or the middle one alone
        return (i + 1 if 2 * i + 1 == n_row_blocks else n_row_blocks + 1) * block_m

    keys_in_pairs = [
        sum(
            pair_keys(unit % units_per_head)
            for unit in range(cta, batch_heads * units_per_head, programs)
        )
        for cta in range(programs)
    ]
    assert max(keys) <= max(keys_in_pairs)
