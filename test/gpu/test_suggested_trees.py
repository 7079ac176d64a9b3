"""The tutorial kernels built on the trees ``tlx.suggest_reuse`` infers (docs/suggest.md), on
the GPU: correct against the torch reference, and timed beside the hand-written trees in the
same run (printed, never asserted: run with ``-s`` to see the lines).

For each kernel family (Hopper attention forward and backward at head dims 64 and 128, the GEMM
and the persistent GEMM, the fused MLP's three layouts), the configuration of the hazard check's
corpus (test/hazards/corpus.py) is stripped of its trees and its trees inferred on the CPU (the
search's own, ``Suggestion.inferred_trees``: the kernel's tree no candidate, so that a tie does
not hand it back); the family's host function then launches the kernel once as written and once
as ``Override(trees).jit(kernel)`` (language/tlx/suggest/override.py), which traces it under the
inferred trees and keys its compiled kernels by them, so that neither Triton's file cache nor
the JIT's hands back the hand-written binary. test/python/test_suggest_compile.py compiles the
same kernels for sm_90a on the CPU.

Runs only on a Hopper GPU (compute capability 9.x); skipped elsewhere.
"""

import importlib

import corpus
import pytest
import tlx
import torch
import triton
from tlx.suggest.override import Override

pytestmark = pytest.mark.hopper

# Keys of corpus.kernel(): the configurations the GPU runs on inferred trees.
KERNELS = (
    "hopper_attention_d64",
    "hopper_attention_d128",
    "hopper_attention_backward_d64",
    "hopper_attention_backward_d128",
    "hopper_gemm",
    "hopper_gemm_persistent",
    "hopper_fused_mlp_shared",
    "hopper_fused_mlp_separate",
    "hopper_fused_mlp_phases",
)

# The host module of each family and the name its launch calls the kernel by.
HOST_KERNELS = {
    "hopper_attention_backward": ("tlx_kernels.hopper.attention_backward", "attention_bwd_kernel"),
    "hopper_attention": ("tlx_kernels.hopper.attention", "attention_fwd_kernel"),
    "hopper_gemm": ("tlx_kernels.hopper.gemm", "gemm_kernel"),
    "hopper_fused_mlp": ("tlx_kernels.hopper.fused_mlp", "fused_mlp_kernel"),
}


def host_kernel(key) -> tuple[str, str]:
    """(host module, kernel name) of a key of KERNELS (the longest family name it starts with)."""
    family = max((name for name in HOST_KERNELS if key.startswith(name)), key=len)
    return HOST_KERNELS[family]


def suggestion(key):
    """(the corpus's source, target, options, tlx.suggest_reuse's Suggestion) of a key."""
    source, target, options, values = corpus.kernel(key)
    found = tlx.suggest_reuse(source, target, options, values=values)
    assert found.result in ("clean", "nothing safe"), found.describe()
    return source, target, options, found


# The error of a result relative to the reference's largest entry (fp16 outputs; the
# backward's P and dS are rounded to fp16 too): the family tests' tolerances.
TOLERANCE = {"attention": 1e-2, "backward": 2e-2, "gemm": 2e-3, "mlp": 5e-3}


def assert_close_to_scale(what, out, expected, tolerance):
    scale = expected.abs().max().clamp_min(1e-3)
    error = ((out.float() - expected).abs().max() / scale).item()
    assert error <= tolerance, f"{what}: max relative error {error:.2e}"


def _attention_case(key):
    from tlx_kernels.hopper import attention

    head_dim, config = corpus.attention_config(key)
    torch.manual_seed(head_dim)
    shape = (4, 16, 4096, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in "qkv")
    expected = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=True
    )

    def check(out):
        assert_close_to_scale("O", out, expected, TOLERANCE["attention"])

    return (lambda: attention.attention(q, k, v, True, config=config)), check


def _backward_case(key):
    from tlx_kernels.hopper import attention, attention_backward

    head_dim = int(key.rsplit("d", 1)[1])
    config = attention_backward.autotune_space(head_dim)[0]
    torch.manual_seed(head_dim)
    q, k, v, do = (
        torch.randn(2, 8, 2048, head_dim, device="cuda", dtype=torch.float16) for _ in "qkvd"
    )
    o, lse = attention.attention(q, k, v, True, return_lse=True)
    q32, k32, v32 = (t.float().requires_grad_() for t in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(q32, k32, v32, is_causal=True).backward(
        do.float()
    )

    def check(gradients):
        for name, ours, reference in zip("QKV", gradients, (q32, k32, v32), strict=True):
            assert_close_to_scale(f"d{name}", ours, reference.grad, TOLERANCE["backward"])

    return (lambda: attention_backward.backward(do, q, k, v, o, lse, True, config=config)), check


def _gemm_case(key):
    from tlx_kernels.hopper import gemm

    config = corpus.gemm_config(key)
    torch.manual_seed(0)
    a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.float16) for _ in "ab")
    expected = a.float() @ b.float()

    def check(out):
        assert_close_to_scale("C", out, expected, TOLERANCE["gemm"])

    return (lambda: gemm.matmul(a, b, config)), check


def _fused_mlp_case(key):
    from tlx_kernels.hopper import fused_mlp

    config = fused_mlp.default_config(key.rsplit("_", 1)[1])
    torch.manual_seed(0)
    x, w1, w2 = fused_mlp.random_inputs(4096, 1024, 4096, torch.float16)
    expected = fused_mlp.reference_mlp(x, w1, w2)

    def check(out):
        assert_close_to_scale("Y", out, expected, TOLERANCE["mlp"])

    return (lambda: fused_mlp.fused_mlp(x, w1, w2, config)), check


def case(key):
    """(a launch of the key's kernel on random inputs through its host function, the check of
    its result against the torch reference)."""
    if key.startswith("hopper_attention_backward"):
        return _backward_case(key)
    if key.startswith("hopper_attention"):
        return _attention_case(key)
    if key.startswith("hopper_gemm"):
        return _gemm_case(key)
    return _fused_mlp_case(key)


# Timed rounds of each tree, alternating.
ROUNDS = 5


@pytest.mark.parametrize("key", KERNELS)
def test_the_inferred_tree_is_correct_and_timed_beside_the_hand_written(key, monkeypatch):
    _, _, _, found = suggestion(key)
    module_name, kernel_name = host_kernel(key)
    module = importlib.import_module(module_name)
    kernels = {
        "hand-written": getattr(module, kernel_name),
        "inferred": Override(found.inferred_trees).jit(getattr(module, kernel_name)),
    }
    run, check = case(key)
    milliseconds = {label: [] for label in kernels}
    # ROUNDS each, alternating, so that a clock that drifts during the run favours neither;
    # the best of each (two rounds left 10% between the same kernel's runs on the H200).
    for label in (*kernels,) * ROUNDS:
        with monkeypatch.context() as patched:
            patched.setattr(module, kernel_name, kernels[label])
            if len(milliseconds[label]) == 0:
                check(run())
            milliseconds[label].append(triton.testing.do_bench(run, return_mode="median"))
    own, inferred = (min(milliseconds[label]) for label in kernels)
    own_slowest, inferred_slowest = (max(milliseconds[label]) for label in kernels)
    (smem,) = (spec for spec in found.specs if spec.name == "smem")
    print(
        f"\n{key}: hand-written tree {smem.own_plan.region_size} bytes {own:.3f} ms "
        f"(slowest round {own_slowest:.3f}), inferred tree "
        f"{smem.search.inferred.region_size} bytes {inferred:.3f} ms (slowest round "
        f"{inferred_slowest:.3f}) ({own / inferred:.2f}x)"
    )
