"""Every kernel of tlx_kernels asks for FMA contraction itself (``enable_fp_fusion``) rather
than take Triton's default, which Triton 3.9 warns is about to change and 3.10 turns off: the
softmax's scale-and-subtract and the epilogues' scaling are written for fused multiply-adds.
The option reaches each way a kernel is compiled: ``triton.compile`` on the CPU, a direct
launch (the configuration's compile options), and the autotuner's configurations, whose plan
pruner and ahead-of-time compiles read it among their kwargs."""

import re

import pytest
import triton
from tlx.tuning.prune import PlanPruner
from tlx_kernels.blackwell import flash_attention as blackwell_attention
from tlx_kernels.blackwell import two_cta_mma
from tlx_kernels.hopper import (
    attention,
    attention_backward,
    attention_dq,
    fused_mlp,
    gated_mlp,
    gemm,
)

pytestmark = pytest.mark.usefixtures("always_compile")

FAMILIES = {
    "gemm": (gemm.HOST, gemm.default_config()),
    "attention": (attention.HOST, attention.default_config(128)),
    "attention_backward": (attention_backward.HOST, attention_backward.autotune_space(64)[0]),
    "attention_dq": (attention_dq.HOST, attention_dq.default_config(64)),
    "fused_mlp": (fused_mlp.HOST, fused_mlp.default_config()),
    "gated_mlp": (gated_mlp.HOST, gated_mlp.default_config()),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_asks_for_fusion_in_each_way_it_compiles(family):
    host, config = FAMILIES[family]
    assert config.compile_options["enable_fp_fusion"] is True
    triton_config = host.triton_config(config)
    assert triton_config.all_kwargs()["enable_fp_fusion"] is True
    assert host.config_type.of_arguments(triton_config) == config


def test_the_plan_pruner_traces_with_the_configurations_option():
    triton_config = gemm.HOST.triton_config(gemm.default_config())
    _, options = PlanPruner(gemm.gemm_kernel).source(triton_config, gemm.placeholder_arguments())
    assert options["enable_fp_fusion"] is True


def test_the_blackwell_kernels_ask_for_fusion():
    assert blackwell_attention.COMPILE_OPTIONS["enable_fp_fusion"] is True
    assert two_cta_mma.COMPILE_OPTIONS == {"num_warps": 4, "enable_fp_fusion": True, "num_ctas": 2}


def test_fusion_survives_a_default_that_turns_it_off(monkeypatch):
    """With Triton's default set to no fusion (3.10's), the GEMM still compiles with it."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    compiled = gemm.compile_for_hopper(gemm.default_config())
    assert compiled.metadata.enable_fp_fusion is True


# The GEMM's schedules: warp-specialized one tile a CTA and persistent, of two column parts,
# pipelined in one warpgroup, split along K.
GEMM_SCHEDULES = {
    "one_tile": gemm.default_config(),
    "persistent": gemm.Config(128, 128, 64, 5, alias_c=False, persistent=True),
    "two_parts": gemm.Config(128, 192, 64, 4, alias_c=False, persistent=True),
    "pipelined": gemm.Config(64, 64, 64, 8, alias_c=True, warp_specialize=False),
    "split_k": gemm.Config(128, 64, 64, 8, alias_c=True, warp_specialize=False, split_k=4),
}
# PTX instructions that read or write global memory (the descriptors' prefetch reads kernel
# parameters).
GLOBAL_ACCESS = re.compile(r"\b(cp\.async\.bulk\.tensor|ld\.global|st\.global|atom\.|red\.)")


@pytest.mark.parametrize("schedule", GEMM_SCHEDULES)
def test_the_gemm_waits_for_the_grid_before_it_touches_memory(schedule):
    """Launched with programmatic dependent launch, the GEMM may start beside the grid before
    it: it waits for that grid (``griddepcontrol.wait``) before its first access to global
    memory, and lets the next grid start after the wait."""
    config = GEMM_SCHEDULES[schedule]
    compiled = triton.compile(
        gemm.kernel_source(config),
        target=gemm.SM90A,
        options={**config.compile_options, "launch_pdl": True},
    )
    assert compiled.metadata.launch_pdl
    lines = compiled.asm["ptx"].splitlines()
    wait = next(i for i, line in enumerate(lines) if "griddepcontrol.wait" in line)
    trigger = next(i for i, line in enumerate(lines) if "griddepcontrol.launch_dependents" in line)
    first_access = next(i for i, line in enumerate(lines) if GLOBAL_ACCESS.search(line))
    assert wait < trigger < first_access, (wait, trigger, first_access)


def test_the_gemm_launches_as_its_setting_says():
    config = gemm.default_config()
    assert config.compile_options["launch_pdl"] is gemm.LAUNCH_PDL
    assert gemm.HOST.triton_config(config).all_kwargs()["launch_pdl"] is gemm.LAUNCH_PDL
    assert gemm.compile_for_hopper(config).metadata.launch_pdl is gemm.LAUNCH_PDL
