"""Every configuration of the tutorials' autotuning spaces either compiles for sm_90a or is
pruned by its plan with the planner's reason: the pruner drops nothing that would compile
and keeps nothing that would not (tlx.autotune, docs/autotune.md)."""

import importlib
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import tlx
import torch
from _helpers import whole_space_on_newest_triton
from triton.compiler.errors import CompilationError
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

SMEM_LIMIT = 232448
# Processes that compile a space's configurations at once, at most (each holds a kernel's
# compilation in memory).
COMPILE_WORKERS = 8
# The older Tritons trace the same spaces (test_autotune.py, the tutorials' --plans).
pytestmark = [pytest.mark.usefixtures("always_compile"), whole_space_on_newest_triton]


def gemm_arguments(gemm):
    return gemm.placeholder_arguments("fp16")


def attention_arguments(fa, head_dim):
    from tlx_kernels.hopper.attention_common import tile_layout

    tensor = torch.empty(16, 16, 16, dtype=torch.float16)
    arguments = {
        name: TensorDescriptor(
            tensor, [64, 4096, head_dim], [4096 * head_dim, head_dim, 1], [1, 64, head_dim],
            tile_layout(16),
        )
        for name in ("desc_q", "desc_k", "desc_v", "desc_o")
    }  # fmt: skip
    return {**arguments, "qk_scale": 1.0, "seq_len": 4096, "batch_heads": 64}


def _start_compiler():
    """What a compiling process sets up: Triton's cache off (as the always_compile fixture
    has it here) and FP fusion said explicitly (conftest.py)."""
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"


def _compile_outcome(tutorial, config, arguments):
    """(the compiled kernel's shared memory in bytes, None), or (None, the messages of the
    CompilationError compiling it raised and of its causes: raised in a called function, the
    planner's message is a cause's): the host module ``tutorial``'s
    ``compile_for_hopper(config, *arguments)`` in a compiling process."""
    try:
        compiled = importlib.import_module(tutorial).compile_for_hopper(config, *arguments)
    except CompilationError as error:
        messages = []
        while error is not None:
            messages.append(str(error))
            error = error.__cause__
        return None, "\n".join(messages)
    return compiled.metadata.shared, None


@pytest.fixture(scope="module")
def compilers():
    """Processes that compile configurations side by side (ptxas and Triton's passes keep a
    core each busy): started afresh (spawned), not forked from a process whose MLIR contexts
    may hold threads, and not threads, on which CPython 3.11's ast raced in Triton's front
    end."""
    workers = min(COMPILE_WORKERS, os.cpu_count() or 1)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_compiler) as pool:
        yield pool


def assert_each_compiles_or_is_pruned(compilers, tutorial, cases):
    """For each (verdict, config, arguments) of ``cases``: a configuration that fits compiles
    within its share of shared memory, one that does not carries the planner's reasons and
    fails to compile for want of shared memory."""
    outcomes = [
        compilers.submit(_compile_outcome, tutorial, config, arguments)
        for _, config, arguments in cases
    ]
    for (verdict, config, _), outcome in zip(cases, outcomes, strict=True):
        shared, error = outcome.result()
        if verdict.fits:
            assert error is None, (config, error)
            # What one CTA has, or its share of the SM where several are to share one.
            share = verdict.budget.storage(tlx.storage_kind.smem).capacity_units
            assert share <= SMEM_LIMIT and shared <= share, config
        else:
            assert verdict.reasons and all(verdict.reasons)
            assert error is not None and "more than the target's limit" in error, config


def test_every_gemm_configuration_compiles_or_is_pruned(compilers):
    gemm = importlib.import_module("tlx_kernels.hopper.gemm")
    pruner = tlx.PlanPruner(gemm.gemm_kernel, target=gemm.SM90A)
    arguments = gemm_arguments(gemm)
    # GROUP_M is an argument: the configurations that differ only in it are one kernel, with
    # one verdict.
    kernels = {}
    for triton_config in gemm.autotune_configs():
        config = gemm.config_of(triton_config)
        verdict = pruner.verdict(triton_config, arguments)
        kernels.setdefault(tuple(gemm.constexprs(config).items()), []).append((config, verdict))
    assert len(kernels) < len(gemm.autotune_configs())
    verdicts = [verdict for variants in kernels.values() for _, verdict in variants]
    assert any(v.fits for v in verdicts) and not all(v.fits for v in verdicts)
    cases = []
    for variants in kernels.values():
        (config, verdict), *others = variants
        assert all(other.fits == verdict.fits for _, other in others)
        cases.append((verdict, config, ()))
    assert_each_compiles_or_is_pruned(compilers, "tlx_kernels.hopper.gemm", cases)
    # docs/autotune.md shows the log line of one configuration pruned: its reason is one of
    # the planner's, source line included.
    docs = (Path(__file__).resolve().parents[2] / "docs" / "autotune.md").read_text()
    shown = re.search(r"pruned GROUP_M=8, .*?, num_ctas=1: (.*)", docs)[1]
    assert shown in {reason for verdict in verdicts for reason in verdict.reasons}


def test_every_fused_mlp_configuration_compiles_or_is_pruned(compilers):
    """The three layouts' spaces, and the splits of the hidden dimension (the opt-in space)
    of one: a split changes no SMEM, only the grid and the epilogue, which every layout
    shares, so the other layouts' splits would compile the same epilogue again."""
    mlp = importlib.import_module("tlx_kernels.hopper.fused_mlp")
    pruner = tlx.PlanPruner(mlp.fused_mlp_kernel, target=mlp.SM90A)
    arguments = mlp.placeholder_arguments("fp16")
    cases = [
        (pruner.verdict(triton_config, arguments), mlp.config_of(triton_config), ())
        for layout in mlp.LAYOUTS
        for triton_config in mlp.autotune_configs(layout, split_hidden=layout == "shared")
    ]
    assert any(config.hidden_splits > 1 for _, config, _ in cases)
    assert_each_compiles_or_is_pruned(compilers, "tlx_kernels.hopper.fused_mlp", cases)


@pytest.mark.parametrize("head_dim", [64, 128])
def test_every_attention_configuration_compiles_or_is_pruned(compilers, head_dim):
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    pruner = tlx.PlanPruner(fa.attention_fwd_kernel, target=fa.SM90A, ctas_per_sm="CTAS_PER_SM")
    arguments = {**attention_arguments(fa, head_dim), "HEAD_DIM": head_dim, "CAUSAL": True}
    compile_arguments = (head_dim, "fp16", True)  # causal, as the arguments are
    cases = [
        (pruner.verdict(triton_config, arguments), fa.config_of(triton_config), compile_arguments)
        for triton_config in fa.autotune_configs(head_dim)
    ]
    assert_each_compiles_or_is_pruned(compilers, "tlx_kernels.hopper.attention", cases)


def test_attention_sharing_an_sm_is_pruned_by_its_share():
    """A configuration of two CTAs an SM whose region fits one CTA but not half an SM is
    pruned by the planner's budget for that share, and would indeed not let two CTAs share
    an SM; those of the space fit."""
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    pruner = tlx.PlanPruner(fa.attention_fwd_kernel, target=fa.SM90A, ctas_per_sm="CTAS_PER_SM")
    arguments = {**attention_arguments(fa, 64), "HEAD_DIM": 64, "CAUSAL": True}
    shared = [config for config in fa.autotune_space(64) if config.ctas_per_sm == 2]
    assert shared
    for config in shared:
        assert pruner.verdict(fa.HOST.triton_config(config), arguments).fits
        # Two such CTAs fit one SM: every thread launched with at most half the SM's registers
        # (the kernel has three warpgroups), the shared memory Triton adds (mbarriers) and the
        # KiB reserved for each CTA included.
        compiled = fa.compile_for_hopper(config, 64, causal=True)
        (launch,) = re.findall(r"\.maxnreg (\d+)", compiled.asm["ptx"])
        assert 2 * int(launch) * 3 * 128 <= 65536
        assert 2 * (compiled.metadata.shared + 1024) <= 228 * 1024
    six_stages = shared[0].replace(num_stages=6)
    verdict = pruner.verdict(fa.HOST.triton_config(six_stages), arguments)
    (reason,) = verdict.reasons
    assert reason.endswith("than the 115712 bytes one CTA has on sm_90a when 2 CTAs share an SM")
    assert fa.compile_for_hopper(six_stages, 64, causal=True).metadata.shared > 115712
