"""GPU correctness of tutorials/hopper_flash_attention.py against an fp32 reference.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch
from tlx_kernels.hopper import attention_schedule
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
    from tlx_kernels.hopper import attention as fa

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
    from tlx_kernels.hopper import attention as fa

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
    from tlx_kernels.hopper import attention as fa

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
    from tlx_kernels.hopper import attention as fa
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
    of row blocks, whose middle one is a unit alone. Every head must match the reference. The
    default configuration, those of two CTAs an SM (a grid of twice as many CTAs) and those
    whose O has bytes of its own (its store runs on into the CTA's next tile)."""
    from tlx_kernels.hopper import attention as fa

    configs = [fa.default_config(head_dim)]
    configs += [
        config
        for config in fa.autotune_space(head_dim)
        if config.ctas_per_sm == 2 or not config.alias_o
    ]
    batch, heads = 3, 96
    torch.manual_seed(1)
    q, k, v = (
        torch.randn(batch, heads, seq_len, head_dim, device="cuda", dtype=torch.float16)
        for _ in range(3)
    )
    expected = reference(q, k, v, causal)
    for config in configs:
        row_blocks = -(-seq_len // config.block_m)
        units = batch * heads * (-(-row_blocks // 2) if causal else row_blocks)
        grid = config.ctas_per_sm * torch.cuda.get_device_properties(0).multi_processor_count
        assert units >= 2 * grid
        out = fa.attention(q, k, v, causal, config=config)
        torch.testing.assert_close(
            out, expected, atol=1e-2, rtol=1e-2, msg=lambda m, c=config: f"{c}: {m}"
        )


@gluon.jit
def deal_units(
    tiles,
    seq_len,
    batch_heads,
    BLOCK_M: gl.constexpr,
    CAUSAL: gl.constexpr,
    BALANCE_TAIL: gl.constexpr,
):
    """Each work unit's row blocks (head x row blocks + row block) at tiles[2 * unit + tile],
    as the attention kernel's partitions deal them."""
    work, n_units = attention_schedule._work_units(
        seq_len, batch_heads, BLOCK_M, CAUSAL, BALANCE_TAIL
    )
    n_row_blocks = work[0]
    for unit in range(gl.program_id(0), n_units, gl.num_programs(0)):
        off_bh, first, step, n_tiles = attention_schedule._unit_tiles(
            unit, work, CAUSAL, BALANCE_TAIL
        )
        for tile in range(n_tiles):
            gl.store(tiles + 2 * unit + tile, off_bh * n_row_blocks + first + tile * step)


@pytest.mark.parametrize(
    ("causal", "balance_tail", "batch_heads", "seq_len", "block_m", "programs"),
    [
        (causal, balance_tail, *shape)
        for causal, balance_tail in ((True, False), (True, True))
        for shape in (
            (1024, 512, 128, 132),
            (512, 1024, 128, 132),
            (256, 2048, 128, 132),
            (96, 520, 128, 132),
            (128, 4096, 192, 132),
            (3, 1000, 128, 17),
            (1, 640, 128, 5),
        )
    ]
    + [(False, False, *shape) for shape in ((512, 1024, 192, 132), (1024, 512, 192, 132))]
    + [(False, False, *shape) for shape in ((256, 2048, 192, 132), (7, 1000, 128, 9))],
)
def test_work_units_deal_every_tile_once(
    causal, balance_tail, batch_heads, seq_len, block_m, programs
):
    """The kernel's own work-unit functions (_work_units, _unit_tiles), run by a grid of
    ``programs`` CTAs, deal every row block of every head exactly once, and leave no CTA with
    more work (rows x keys) than the round-robin of head-major units (pairs when causal) that
    they improve on: with 192-row tiles and 6 or 3 row blocks a head on 132 CTAs, that put
    every short last row block on the same 22 or 44 CTAs."""
    n_row_blocks = -(-seq_len // block_m)
    tiles = torch.full((2 * batch_heads * n_row_blocks,), -1, device="cuda", dtype=torch.int32)
    deal_units[(programs,)](
        tiles, seq_len, batch_heads, BLOCK_M=block_m, CAUSAL=causal, BALANCE_TAIL=balance_tail
    )
    dealt = tiles.view(-1, 2).cpu().tolist()
    taken = [tile for pair in dealt for tile in pair if tile >= 0]
    assert sorted(taken) == list(range(batch_heads * n_row_blocks))

    def work(row_block):
        rows = min(block_m, seq_len - row_block * block_m)
        return rows * (min(seq_len, (row_block + 1) * block_m) if causal else seq_len)

    per_cta = [0] * programs
    for unit, pair in enumerate(dealt):
        per_cta[unit % programs] += sum(work(tile % n_row_blocks) for tile in pair if tile >= 0)
    units_per_head = -(-n_row_blocks // 2) if causal else n_row_blocks

    def unit_work(i):  # row blocks n - 1 - i and i (causal) or i, as the units were dealt
        if not causal:
            return work(i)
        return work(i) + (work(n_row_blocks - 1 - i) if 2 * i + 1 != n_row_blocks else 0)

    round_robin = [
        sum(
            unit_work(unit % units_per_head)
            for unit in range(cta, batch_heads * units_per_head, programs)
        )
        for cta in range(programs)
    ]
    assert max(per_cta) <= max(round_robin)
    if not causal and programs % n_row_blocks == 0 and seq_len % block_m:
        assert max(per_cta) < max(round_robin)
