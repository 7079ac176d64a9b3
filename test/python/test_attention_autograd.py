"""``attention``'s autograd function on the CPU: it names the tensor and the shape it refuses
(the grouped-head rules among them), and the forward does its part for the backward: it saves
the LSE only when asked and reads grouped K/V heads in place (``kv_group``), both checked clean
by the hazard check. (The backward's kernels: test_attention_backward.py.)"""

import pytest
import tlx
import torch
import triton


def cpu_inputs(q_shape, kv_shape=None, dtype=torch.float16, **kwargs):
    kv_shape = kv_shape or q_shape
    return (
        torch.zeros(q_shape, dtype=dtype, **kwargs),
        torch.zeros(kv_shape, dtype=dtype, **kwargs),
        torch.zeros(kv_shape, dtype=dtype, **kwargs),
    )


@pytest.mark.parametrize(
    ("q_shape", "kv_shape"),
    [
        ((2, 32, 100, 128), (2, 8, 100, 128)),  # Llama-3 8B's grouping
        ((1, 4, 1, 64), (1, 1, 1, 64)),  # multi-query
        ((3, 6, 77, 64), (3, 6, 77, 64)),
    ],
)
def test_grouped_heads_that_divide_are_accepted(q_shape, kv_shape):
    """H_kv dividing H passes every check but the device's (this machine has no GPU)."""
    from tlx_kernels.hopper.attention_autograd import check_inputs

    with pytest.raises(ValueError, match=r"q \(shape .*\) is on cpu: attention runs on a CUDA"):
        check_inputs(*cpu_inputs(q_shape, kv_shape))


@pytest.mark.parametrize(
    ("q_shape", "kv_shape", "message"),
    [
        (
            (2, 32, 64, 128),
            (2, 12, 64, 128),
            r"k and v have 12 heads \(shape \(2, 12, 64, 128\)\), which does not divide q's 32",
        ),
        (
            (2, 8, 64, 128),
            (2, 16, 64, 128),
            r"k and v have 16 heads .* does not divide q's 8",
        ),
        (
            (2, 8, 64, 128),
            (2, 8, 32, 128),
            r"k and v \(shape \(2, 8, 32, 128\)\) must have q's batch, seq_len and head_dim",
        ),
        (
            (2, 8, 64, 96),
            (2, 8, 64, 96),
            r"head_dim 96 \(q's shape \(2, 8, 64, 96\)\) is not supported: 64 or 128",
        ),
        ((8, 64, 128), (8, 64, 128), r"q must be \(batch, heads, seq_len, head_dim\), got shape"),
    ],
)
def test_bad_shapes_are_named(q_shape, kv_shape, message):
    from tlx_kernels.hopper.attention_autograd import attention

    with pytest.raises(ValueError, match=message):
        attention(*cpu_inputs(q_shape, kv_shape))


def test_bad_dtypes_are_named():
    from tlx_kernels.hopper.attention_autograd import attention

    q, k, v = cpu_inputs((1, 2, 16, 64))
    with pytest.raises(ValueError, match=r"q, k and v must have one dtype, got q torch.float16, "):
        attention(q, k.bfloat16(), v)
    with pytest.raises(ValueError, match=r"v \(shape \(1, 2, 16, 64\)\) has dtype torch.float32"):
        attention(q, k, v.float())
    q32 = q.float().requires_grad_()
    with pytest.raises(
        ValueError,
        match=r"q \(shape .*\) has dtype torch.float32 and requires grad: the backward takes "
        r"float16 or bfloat16",
    ):
        attention(q32, k, v)
    with pytest.raises(ValueError, match=r"k and v must have one shape"):
        attention(q, k, v[:, :, :8])
    with pytest.raises(TypeError, match="k must be a torch.Tensor, got list"):
        attention(q, [1.0], v)


def test_cpu_tensors_are_named():
    from tlx_kernels.hopper.attention_autograd import attention

    q, k, v = cpu_inputs((1, 2, 16, 64), requires_grad=True)
    with pytest.raises(ValueError, match=r"q \(shape \(1, 2, 16, 64\)\) is on cpu"):
        attention(q, k, v, causal=True)


def test_the_forward_saves_the_lse_only_when_asked():
    """The forward with ``lse_ptr`` stores each row's LSE (a global store beside its TMA
    copies) and checks clean; without, it has no such store (the kernel it was)."""
    from tlx_kernels.hopper import attention as forward

    config = forward.default_config(128)
    plain = forward.compile_for_hopper(config, 128, causal=True)
    assert "st.global" not in plain.asm["ptx"]
    source = forward.kernel_source(config, 128, causal=True, save_lse=True)
    assert source.signature["lse_ptr"] == "*fp32"
    saving = triton.compile(source, target=forward.SM90A, options=config.compile_options)
    assert "st.global" in saving.asm["ptx"]
    report = tlx.check_hazards(
        source, forward.SM90A, config.compile_options, values={"seq_len": 300, "batch_heads": 2}
    )
    assert report.result == "clean", report.describe()


@pytest.mark.parametrize("head_dim", (64, 128))
def test_the_forward_reads_grouped_heads_in_place(head_dim):
    """The forward given ``kv_group`` (grouped-query heads) divides the head index for K and V
    and checks clean on two query heads over one K/V head; without it the kernel is another
    (the kernel it was, H_kv = H: its PTX was diffed against the one before kv_group on 3.9
    and 3.6, identical)."""
    from tlx_kernels.hopper import attention as forward

    config = forward.default_config(head_dim)
    source = forward.kernel_source(config, head_dim, causal=True, grouped=True)
    assert source.signature["kv_group"] == "i32"
    grouped = triton.compile(source, target=forward.SM90A, options=config.compile_options)
    plain = forward.compile_for_hopper(config, head_dim, causal=True)
    assert grouped.asm["ptx"] != plain.asm["ptx"]
    report = tlx.check_hazards(
        source,
        forward.SM90A,
        config.compile_options,
        values={"seq_len": 300, "batch_heads": 2, "kv_group": 2},
    )
    assert report.result == "clean", report.describe()
