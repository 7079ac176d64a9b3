"""GPU correctness of tutorials/hopper_gemm.py against an fp32 reference.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import pytest
import torch

pytestmark = pytest.mark.hopper

# The output is rounded to fp16 (11 significant bits) or bf16 (8): relative to the largest
# entry, the error of a rounded entry is at most 2^-11 or 2^-8.
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 8e-3}

# (M, N, K): tails in every dimension, K shorter than one K step, rows whose byte length is
# not a multiple of 16 (copied into padded rows for the TMA), one tile, many tiles, and more
# 128 x 256 tiles than an H100 or H200 has SMs (a persistent CTA takes several).
SHAPES = [
    (128, 256, 64),
    (1, 1, 1),
    (77, 300, 8),
    (130, 520, 40),
    (257, 4095, 129),
    (1000, 1000, 1000),
    (1531, 2049, 777),
    (2048, 1024, 4096),
    (3000, 8000, 300),
]


def assert_matches_reference(out, a, b):
    expected = a.float() @ b.float()
    assert out.shape == expected.shape and out.dtype == a.dtype and out.is_contiguous()
    scale = expected.abs().max().clamp_min(1.0)
    error = ((out.float() - expected).abs().max() / scale).item()
    assert error <= TOLERANCE[a.dtype], f"max relative error {error:.2e}"


def configs(dtype):
    from tlx_kernels.hopper import gemm

    return {
        "aliased": gemm.default_config(dtype),
        "unaliased": gemm.best_unaliased_config(dtype),
        # Every CTA takes several tiles at the grid's sizes: the ring runs on across tiles.
        "persistent": gemm.Config(128, 128, 64, 5, alias_c=False, persistent=True),
        # One warpgroup issues the copies and computes the tile; C over the ring or beside it.
        "pipelined": gemm.Config(128, 64, 64, 6, alias_c=True, warp_specialize=False),
        "pipelined_k128": gemm.Config(128, 64, 128, 4, alias_c=False, warp_specialize=False),
        # The second consumer's last K steps wait for the first to finish the tile (each
        # tile of a persistent CTA: the barrier's phase turns), fewer K steps than that too.
        "staggered": gemm.Config(128, 256, 64, 2, alias_c=False, stagger=2),
        "staggered_persistent": gemm.Config(
            128, 256, 64, 3, alias_c=False, persistent=True, stagger=3
        ),
    }


CONFIG_NAMES = [
    "aliased",
    "unaliased",
    "persistent",
    "pipelined",
    "pipelined_k128",
    "staggered",
    "staggered_persistent",
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("config_name", CONFIG_NAMES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_matches_reference(dtype, config_name, shape):
    from tlx_kernels.hopper import gemm

    M, N, K = shape
    torch.manual_seed(M * N + K)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    assert_matches_reference(gemm.matmul(a, b, configs(dtype)[config_name]), a, b)


def test_every_tile_is_written():
    """The epilogue stores every tile of C exactly where it belongs: with a = identity, C is b.
    Any tile stored at the wrong place or left out shows up as a mismatch."""
    from tlx_kernels.hopper import gemm

    M = N = 1024 + 64
    a = torch.eye(M, device="cuda", dtype=torch.float16)
    b = torch.randn(M, N, device="cuda", dtype=torch.float16)
    for config in configs(torch.float16).values():
        assert torch.equal(gemm.matmul(a, b, config), b)


def test_strided_and_empty_operands():
    from tlx_kernels.hopper import gemm

    torch.manual_seed(0)
    big = torch.randn(300, 520, device="cuda", dtype=torch.bfloat16)
    a = big[1:200, 3:131]  # a view: unaligned start, row stride 520
    b = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16).t()  # column-major
    assert_matches_reference(gemm.matmul(a, b), a, b)
    empty = torch.empty(64, 0, device="cuda", dtype=torch.float16)
    out = gemm.matmul(empty, torch.empty(0, 32, device="cuda", dtype=torch.float16))
    assert torch.equal(out, torch.zeros(64, 32, device="cuda", dtype=torch.float16))
