"""The Hopper attention backward on the host: its launches (``backward``, the kernels it
runs in turn: the delta preprocess or the dQ pass computing delta, the kernel, the dQ pass),
its tuning (``autotuned_kernel``, ``chosen_config``) and CPU compiles (``kernel_source``,
``compile_for_hopper``, ``smem_plan``). The kernel and its design:
tlx_kernels.hopper.attention_backward_kernel; its configurations:
attention_backward_config.py."""

import contextlib
import functools
import time

import tlx
import torch
import triton
from tlx.tuning.prune import log, log_asked
from tlx.tuning.retime import called_times

from tlx_kernels._host import KernelHost
from tlx_kernels.hopper import attention_backward_delta, attention_dq
from tlx_kernels.hopper.attention_backward_config import (
    DQ_PASSES,
    Config,
    autotune_space,
    dq_passes_of,
)
from tlx_kernels.hopper.attention_backward_kernel import attention_bwd_kernel
from tlx_kernels.hopper.attention_backward_step import DQ_COLUMNS, LOG2E
from tlx_kernels.hopper.attention_common import launch_grid
from tlx_kernels.hopper.common import SM90A

HEAD_DIMS = (64, 128)
# Calls of each candidate pass (``_tune``) at most, fewer where a pass is long.
CANDIDATE_ROUNDS = 25


def block_shapes(config, arguments):
    """Block shapes of the Q, K, V, dO, dK, dV and fp32 dQ accumulator descriptors, which
    address [batch * heads, seq_len, head_dim] (``arguments``: HEAD_DIM among them): a Q block
    of Q and dO, a consumer's keys of K, V, dK and dV, DQ_COLUMNS columns of a Q block of dQ
    (a TMA reduce-add's, dq_pass "tma_add"; half of head_dim with "split", all of it with
    "alternate"); then of the statistics' descriptor, which addresses the preprocess's
    [batch * heads * 2, seq_len] LSE and delta rows (``staged_statistics``): a Q block's
    two."""
    head_dim = arguments["HEAD_DIM"]
    q_block = [1, config.block_m, head_dim]
    kv_block = [1, config.block_n // config.consumers, head_dim]
    dq_columns = {"split": head_dim // 2, "alternate": head_dim}.get(
        config.dq_pass, DQ_COLUMNS.value
    )
    dq_block = [1, config.block_m, dq_columns]
    statistics_block = [2, config.block_m]
    return (q_block, kv_block, kv_block, q_block, kv_block, kv_block, dq_block, statistics_block)


HOST = KernelHost(
    attention_bwd_kernel,
    Config,
    descriptors=(
        "desc_q",
        "desc_k",
        "desc_v",
        "desc_do",
        "desc_dk",
        "desc_dv",
        "desc_dq",
        "desc_statistics",
    ),
    scalars={
        "lse_ptr": "*fp32",
        "delta_ptr": "*fp32",
        "dq_ptr": "*fp32",
        "sm_scale": "fp32",
        "qk_scale": "fp32",
        "seq_len": "i32",
        "group": "i32",
        "batch_kv_heads": "i32",
    },
    block_shapes=block_shapes,
    target=SM90A,
    descriptor_dtypes={"desc_dq": "fp32", "desc_statistics": "fp32"},
    unswizzled=("desc_statistics",),
)


def kernel_source(config, head_dim, dtype="fp16", causal=False):
    """The backward kernel with ``config``, as ``triton.compile``, ``tlx.kernel_plans`` and
    ``tlx.check_hazards`` take it."""
    return HOST.kernel_source(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)


def compile_for_hopper(config, head_dim, dtype="fp16", causal=False):
    """Compiles the backward kernel for sm_90a without a GPU; returns Triton's compiled
    kernel."""
    return HOST.compile(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)


def smem_plan(config, head_dim):
    """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) for sm_90a with ``config``."""
    return HOST.smem_plan(config, HEAD_DIM=head_dim, CAUSAL=False)


def autotune_configs(head_dim, dq_passes=DQ_PASSES):
    """``autotune_space(head_dim)`` as ``triton.Config``s, those that sum dQ one of the ways
    ``dq_passes`` names."""
    return [
        HOST.triton_config(config)
        for config in autotune_space(head_dim)
        if config.dq_pass in dq_passes
    ]


def config_of(triton_config):
    """The ``Config`` of a ``triton.Config`` of ``autotune_configs``."""
    return Config.of_arguments(triton_config)


@functools.cache
def autotuned_kernel(dtype, head_dim, dq_passes=DQ_PASSES):
    """The backward kernel under ``tlx.autotune`` for one dtype and head dim, over the
    configurations that sum dQ one of the ways ``dq_passes`` names, keyed on the sequence
    length, the batch's KV heads, the query heads a KV head serves and the mask. The dQ
    accumulator is zeroed before each timed launch."""
    return tlx.autotune(
        configs=autotune_configs(head_dim, dq_passes),
        key=["seq_len", "batch_kv_heads", "group", "CAUSAL"],
        reset_to_zero=["dq_ptr"],
    )(attention_bwd_kernel)


# (device, dtype, q's shape, k's heads, mask, dq_pass) -> (the configuration tuned for it,
# the dQ kernel's with dq_pass "separate", else None).
_tuned = {}


def backward(do, q, k, v, o, lse, causal, sm_scale=None, config=None, dq_config=None, dq_pass=None):
    """(dQ, dK, dV) of attention for (batch, heads, seq_len, head_dim) contiguous CUDA
    tensors: q, o, do with H heads, k and v with H_kv (dividing H); ``lse`` the forward's
    natural-log LSE, fp32 (batch * heads, seq_len). With ``config`` None, the configuration
    the tuner finds fastest for the shape, dtype, mask and grouping (the first call of a key
    times them all) among those that sum dQ the ways ``dq_pass`` says (``dq_passes_of``:
    None, the default ones for the head dim and sequence length; "any"; or one of
    ``DQ_PASSES``); a configuration with dq_pass "separate" runs the dQ kernel with
    ``dq_config`` (None: tuned with it, or its default where ``config`` is given)."""
    batch, heads, seq_len, head_dim = q.shape
    kv_heads = k.shape[1]
    sm_scale = sm_scale if sm_scale is not None else head_dim**-0.5
    q3, o3, do3 = (t.reshape(batch * heads, seq_len, head_dim) for t in (q, o, do))
    k3, v3 = (t.reshape(batch * kv_heads, seq_len, head_dim) for t in (k, v))
    tensors = (do3, q3, k3, v3, o3, lse, sm_scale, causal)
    if config is None:
        dq_passes = dq_passes_of(dq_pass, head_dim, seq_len)
        shape_key = (q.device, q.dtype, tuple(q.shape), kv_heads, causal, dq_pass)
        if shape_key not in _tuned:
            _tuned[shape_key] = _tune(tensors, dq_passes)
        config, dq_config = _tuned[shape_key]
    elif config.dq_pass == "separate" and dq_config is None:
        dq_config = attention_dq.default_config(head_dim)
    dq, dk, dv = _run(tensors, config, dq_config)
    return dq.view(q.shape), dk.view(k.shape), dv.view(v.shape)


@functools.cache
def _no_statistics(device):
    """What the statistics' descriptor addresses for a configuration without
    ``staged_statistics``, which reads nothing through it: any fp32 rows, one tensor a device
    (a launch finds its arguments kept for the same addresses: tlx_kernels.launch)."""
    return torch.empty(1, 2, 4, device=device, dtype=torch.float32)


def statistics_rows(statistics, seq_len):
    """``attention_backward_delta.staged_statistics``' [batch * heads, 2, row_stride] as the
    [batch * heads * 2, seq_len] rows the statistics' descriptor addresses."""
    return statistics.view(-1, statistics.shape[-1])[:, :seq_len]


def _run(tensors, config, dq_config):
    """(dQ, dK, dV) as [batch * heads, seq_len, head_dim] from ``backward``'s ``tensors``:
    delta by the preprocess, the kernel with ``config``, then, if its dq_pass is "separate",
    the dQ kernel with ``dq_config`` (None: tuned); or, with a ``dq_config`` that
    ``computes_delta``, the dQ kernel first, writing delta, then the kernel. dQ in q's dtype.
    Each kernel is launched directly (``KernelHost.launch``)."""
    do3, q3, k3, v3, o3, lse, sm_scale, causal = tensors
    seq_len, head_dim = q3.shape[1:]
    dq_computes_delta = config.dq_pass == "separate" and dq_config is not None
    dq_computes_delta = dq_computes_delta and dq_config.computes_delta
    if dq_computes_delta:
        delta = torch.empty(lse.shape, device=q3.device, dtype=torch.float32)
        dq, _ = attention_dq.compute_dq(
            q3, k3, v3, do3, lse, delta, sm_scale, causal, dq_config, o3=o3
        )
    elif config.staged_statistics:
        statistics = attention_backward_delta.staged_statistics(o3, do3, lse)
        # The steps read LSE and delta from the staged copy alone: it stands for delta_ptr.
        delta = statistics
    else:
        delta = attention_backward_delta.delta(o3, do3)
    if not config.staged_statistics:
        statistics = _no_statistics(q3.device)
    dk = torch.empty_like(k3)
    dv = torch.empty_like(v3)
    if config.dq_pass == "separate":
        # The kernel adds nothing to dQ: any fp32 tensor a TMA descriptor can address stands
        # for the accumulator.
        dq_sum = torch.empty(1, 1, head_dim, device=q3.device, dtype=torch.float32)
    else:
        dq_sum = torch.zeros(q3.shape, device=q3.device, dtype=torch.float32)
    group = q3.shape[0] // k3.shape[0]
    operands = (q3, k3, v3, do3, dk, dv, dq_sum, statistics_rows(statistics, seq_len))
    call_arguments = (
        lse,
        delta,
        dq_sum,
        sm_scale,
        sm_scale * LOG2E.value,
        seq_len,
        group,
        k3.shape[0],
    )
    tiles = triton.cdiv(seq_len, config.block_n) * k3.shape[0]
    grid = launch_grid(tiles, config.persistent, q3.device)
    HOST.launch(config, grid, operands, call_arguments, HEAD_DIM=head_dim, CAUSAL=causal)
    if config.dq_pass != "separate":
        dq = dq_sum.to(q3.dtype)
    elif not dq_computes_delta:
        dq, _ = attention_dq.compute_dq(q3, k3, v3, do3, lse, delta, sm_scale, causal, dq_config)
    return dq, dk, dv


def _tune_kernel(tensors, delta, dq_passes):
    """Times the configurations that sum dQ one of the ways ``dq_passes`` names, on scratch
    outputs (the tuner's launches add into dQ), with the preprocess's staged statistics
    where one of them reads them; returns the one it chose."""
    do3, q3, k3, v3, o3, lse, sm_scale, causal = tensors
    seq_len, head_dim = q3.shape[1:]
    tuner = autotuned_kernel(q3.dtype, head_dim, dq_passes)
    scratch_dq = torch.empty(q3.shape, device=q3.device, dtype=torch.float32)
    configs = autotune_space(head_dim)
    if any(c.staged_statistics for c in configs if c.dq_pass in dq_passes):
        statistics = attention_backward_delta.staged_statistics(o3, do3, lse)
    else:
        statistics = _no_statistics(q3.device)
    gradients = (torch.empty_like(k3), torch.empty_like(v3), scratch_dq)
    operands = (q3, k3, v3, do3, *gradients, statistics_rows(statistics, seq_len))
    # The configuration's pre_hook sets each descriptor's block shape.
    descs = HOST.make_descriptors(configs[0], operands, HEAD_DIM=head_dim)
    group = q3.shape[0] // k3.shape[0]
    scalars = (sm_scale, sm_scale * LOG2E.value, seq_len, group, k3.shape[0])

    def grid(meta):
        tiles = triton.cdiv(seq_len, meta["BLOCK_N"]) * k3.shape[0]
        return launch_grid(tiles, meta["PERSISTENT"], q3.device)

    tuner[grid](*descs, lse, delta, scratch_dq, *scalars, HEAD_DIM=head_dim, CAUSAL=causal)
    return config_of(tuner.best_config)


def _tune(tensors, dq_passes):
    """(configuration, dQ kernel's configuration or None) for ``backward``'s ``tensors``,
    among the ways to sum dQ ``dq_passes`` names: the best of those that sum dQ in the
    kernel (the tuner's), and the best with dQ in a pass of its own (the two kernels tuned
    apart, each alone on the GPU), behind the preprocess of delta or, where the dQ
    configuration is one of ``attention_dq.delta_variants``, computing delta in its place;
    the fastest as whole backward passes, as called, in turn (``retime.called_times``).
    Computing delta adds work to the dQ kernel and saves the preprocess's launch and its
    read of dO, so only a whole pass tells them apart: on an H200 it won on 22 of 24 rows by
    up to 6%, and lost 0.5-2% where the sequence is long (docs/performance.md)."""
    do3, q3, k3, v3, o3, lse, sm_scale, causal = tensors
    delta = attention_backward_delta.delta(o3, do3)
    candidates = []
    seconds = {}  # each part's wall time, for TLX_AUTOTUNE_LOG's line
    in_kernel = tuple(p for p in dq_passes if p != "separate")
    if in_kernel:
        with _timed(seconds, "/".join(in_kernel), q3.device):
            candidates.append((_tune_kernel(tensors, delta, in_kernel), None))
    if "separate" in dq_passes:
        with _timed(seconds, "separate", q3.device):
            config = _tune_kernel(tensors, delta, ("separate",))
        with _timed(seconds, "dQ kernel", q3.device):
            _, dq_config = attention_dq.compute_dq(
                q3, k3, v3, do3, lse, delta, sm_scale, causal, o3=o3
            )
        candidates.append((config, dq_config))
        # The same computing delta, where its gradients were checked on a GPU that way
        # (delta_variants, test_attention_gradients.py).
        computing_delta = dq_config.replace(computes_delta=True)
        if computing_delta in attention_dq.delta_variants(q3.shape[2]):
            candidates.append((config, computing_delta))
    chosen = candidates[0]
    if len(candidates) > 1:
        passes = {c: functools.partial(_run, tensors, *c) for c in candidates}
        with _timed(seconds, f"{len(candidates)} passes compared", q3.device):
            times = called_times(passes, CANDIDATE_ROUNDS)
        chosen = min(candidates, key=times.get)
    if log_asked():
        parts = ", ".join(f"{name} {part:.2f} s" for name, part in seconds.items())
        log(
            f"attention backward: tuned q {tuple(q3.shape)}, k {tuple(k3.shape)}, "
            f"causal={causal} in {sum(seconds.values()):.2f} s: {parts}; chose "
            f"{chosen[0]}" + ("" if chosen[1] is None else f", {chosen[1]}")
        )
    return chosen


@contextlib.contextmanager
def _timed(seconds, name, device):
    """Records in ``seconds[name]`` the wall time of the block, its GPU work included."""
    start = time.perf_counter()
    yield
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds[name] = time.perf_counter() - start


def chosen_config(q, k, causal, dq_pass=None):
    """(configuration, dQ kernel's configuration or None) that ``backward`` tuned for q's and
    k's shapes, dtype, the mask and ``dq_pass``."""
    return _tuned[q.device, q.dtype, tuple(q.shape), k.shape[1], causal, dq_pass]
