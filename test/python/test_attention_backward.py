"""The Hopper attention backward (tlx_kernels/hopper/attention_backward.py, and its dQ kernel,
attention_dq.py) on the CPU: every configuration of their tuning spaces compiles for sm_90a or
is pruned by its plan with the planner's reason; the SMEM plans put the epilogues over K and V
(over Q in the dQ kernel); the hazard check finds every configuration clean, causal or not, on
ragged and grouped shapes; each way of summing dQ emits the reductions it says (the TMA
reduce-add's from staging tiles with bytes of their own); the pipelined
steps wait twice a step, give P and dS bytes of their own, and ptxas keeps their wgmmas
asynchronous; docs/attention-backward.md shows the plan the planner makes. (The autograd
function and the forward's part in the backward: test_attention_autograd.py.)"""

import collections
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import tlx
import torch
from _helpers import whole_space_on_newest_triton
from tlx_kernels.hopper import attention_backward as bwd
from tlx_kernels.hopper import attention_backward_config, attention_dq
from tlx_kernels.hopper.attention_common import tile_layout
from tlx_kernels.hopper.common import unswizzled_layout
from triton.compiler.errors import CompilationError
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

SMEM_LIMIT = 232448


def descriptors(names, head_dim, seq_len):
    """TMA descriptors named ``names`` over a [64, seq_len, head_dim] tensor, typed as a call
    types them (the pruner runs each configuration's pre_hook, which sets their block
    shapes)."""
    tensor = torch.empty(16, 16, 16, dtype=torch.float16)
    layout = tile_layout(16)
    return {
        name: TensorDescriptor(
            tensor, [64, seq_len, head_dim], [seq_len * head_dim, head_dim, 1], [1, 64, head_dim],
            layout,
        )
        for name in names
    }  # fmt: skip


def kernel_arguments(head_dim, seq_len=4096):
    """The backward kernel's arguments, typed as a call types them (dQ's accumulator fp32)."""
    names = ("desc_q", "desc_k", "desc_v", "desc_do", "desc_dk", "desc_dv")
    pointers = {name: torch.empty(4) for name in ("lse_ptr", "delta_ptr", "dq_ptr")}
    scalars = {"sm_scale": 0.125, "qk_scale": 0.18, "seq_len": seq_len, "group": 4}
    dq_sum = TensorDescriptor(
        torch.empty(4, 4, 4), [64, seq_len, head_dim], [seq_len * head_dim, head_dim, 1],
        [1, 64, 64], tile_layout(32),
    )  # fmt: skip
    statistics = TensorDescriptor(
        torch.empty(4, 4), [128, seq_len], [seq_len, 1], [2, 64], unswizzled_layout(32, 2)
    )
    return {
        **descriptors(names, head_dim, seq_len),
        "desc_dq": dq_sum,
        "desc_statistics": statistics,
        **pointers,
        **scalars,
        "batch_kv_heads": 16,
        "HEAD_DIM": head_dim,
    }


def dq_block(config, arguments):
    """The block shape of the dQ accumulator's descriptor with ``config``."""
    shapes = bwd.block_shapes(config, arguments)
    return dict(zip(bwd.HOST.descriptors, shapes, strict=True))["desc_dq"]


def error_messages(error):
    """The messages of ``error`` and of the errors that caused it (the spec is made in a
    called function: the kernel's error names the call)."""
    messages = []
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    return "\n".join(messages)


def checked_ctas(block):
    """(seq_len, program, programs) of the CTAs the hazard tests check, ``block`` rows a CTA:
    the first, a middle and the last block of a sequence that ends inside one, and the one
    block of a single row."""
    for seq_len, program in ((300, 0), (300, 1), (300, 2), (1, 0)):
        programs = -(-seq_len // block)
        if program < programs:
            yield seq_len, program, programs


def verdicts(head_dim, causal):
    return verdicts_of(bwd.autotune_space(head_dim), head_dim, causal)


def verdicts_of(configs, head_dim, causal=False):
    """(configuration, the plan pruner's verdict) of each of ``configs``."""
    pruner = tlx.PlanPruner(bwd.attention_bwd_kernel, target=bwd.SM90A)
    arguments = {**kernel_arguments(head_dim), "CAUSAL": causal}
    return [
        (config, pruner.verdict(bwd.HOST.triton_config(config), arguments)) for config in configs
    ]


@whole_space_on_newest_triton
@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_every_configuration_compiles_or_is_pruned(head_dim):
    """A configuration the plans keep compiles within an sm_90a CTA's shared memory; one they
    drop carries the planner's reasons and does not compile for want of shared memory."""
    checked = verdicts(head_dim, causal=True)
    assert any(verdict.fits for _, verdict in checked)
    for config, verdict in checked:
        if verdict.fits:
            compiled = bwd.compile_for_hopper(config, head_dim, causal=True)
            assert compiled.asm["cubin"]
            assert compiled.metadata.shared <= SMEM_LIMIT, config
        else:
            assert verdict.reasons and all(verdict.reasons), config
            assert not config.alias
            with pytest.raises(CompilationError) as raised:
                bwd.compile_for_hopper(config, head_dim, causal=True)
            assert "more than the target's limit" in error_messages(raised.value)


def test_aliasing_is_what_makes_four_stages_fit():
    """At HEAD_DIM 128: with the dK/dV staging over K and V (and P^T over dS^T) four Q/dO
    stages fit in 208 KiB; without aliasing the same buffers need 288 KiB and only two stages
    fit, as the pruner says before anything is compiled."""
    checked = dict(verdicts(128, causal=False))
    aliased = bwd.Config(64, 128, 4, alias=True, p_in_smem=True)
    assert checked[aliased].fits
    assert not checked[aliased.replace(alias=False)].fits
    assert checked[aliased.replace(alias=False, num_stages=2)].fits
    (reason,) = checked[aliased.replace(alias=False)].reasons
    assert "needs 294912 bytes of shared memory, more than the target's limit" in reason

    smem = bwd.smem_plan(aliased, 128)
    plan = smem.plan
    assert plan.size_bytes == 208 * 1024
    views = zip(smem.buffers, plan.views, strict=True)
    offsets = {buffer.name: view.offset for buffer, view in views}
    assert offsets["dk_tiles"] == offsets["k_tiles"]
    assert offsets["dv_tiles"] == offsets["v_tiles"]
    assert offsets["p_tiles"] == offsets["ds_tiles"]
    assert not smem.plan_without_aliasing().ok


@whole_space_on_newest_triton
@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_every_configuration_is_free_of_hazards(head_dim, causal):
    """tlx.check_hazards (python -m tlx check) on each configuration the plans keep, for the
    CTAs of the first, a middle and the last key block of a grouped head (two query heads
    a KV head), with a sequence that ends inside a block, and for one query row."""
    for config, verdict in verdicts(head_dim, causal):
        if not verdict.fits:
            continue
        ctas = [
            {
                "values": {"seq_len": seq_len, "group": 2, "batch_kv_heads": 1},
                "program_id": (program, 0, 0),
                "num_programs": (programs, 1, 1),
            }
            for seq_len, program, programs in checked_ctas(config.block_n)
        ]
        source = bwd.kernel_source(config, head_dim, causal=causal)
        reports = tlx.check_hazards_at(source, bwd.SM90A, config.compile_options, ctas=ctas)
        for cta, report in zip(ctas, reports, strict=True):
            assert report.result == "clean", (config, cta, report.describe())
            assert report.accesses > 0 and not report.unmodelled


def test_the_space_has_every_way_to_sum_dq():
    """The tuner's space holds each dq_pass (on the configurations chosen most), and the
    configurations it had before, first among them the hazard corpus's, are as they were."""
    for head_dim in bwd.HEAD_DIMS:
        space = bwd.autotune_space(head_dim)
        # The consumers' turns at HEAD_DIM 64 alone (autotune_space says why).
        expected = set(bwd.DQ_PASSES) - ({"alternate"} if head_dim == 128 else set())
        assert {config.dq_pass for config in space} == expected
        assert space[0] == bwd.Config(64, 128, 2) and space[0].dq_pass == "atomics"
        assert len(set(space)) == len(space)
    with pytest.raises(ValueError, match="dq_pass must be one of atomics, vector, summed, sep"):
        bwd.Config(64, 128, 4, dq_pass="tma")
    with pytest.raises(ValueError, match="sums the dQ shares of two consumers"):
        bwd.Config(64, 64, 4, consumers=1, dq_pass="summed")
    with pytest.raises(ValueError, match="'split' sums the dQ shares of two consumers"):
        bwd.Config(64, 64, 4, consumers=1, dq_pass="split")
    split_needs = "'split' is built on the pipelined steps with S by queries"
    with pytest.raises(ValueError, match=split_needs + ".*: it needs pipelined=True"):
        bwd.Config(64, 128, 4, p_in_smem=True, scores_by_query=True, dq_pass="split")
    with pytest.raises(ValueError, match="'alternate' sums the dQ shares of two consumers"):
        bwd.Config(64, 64, 4, consumers=1, dq_pass="alternate", pipelined=True)
    alternate_needs = (
        "'alternate' is built on the pipelined steps with S\\^T, whose P\\^T is dV's A operand "
        "from registers: it needs pipelined=True, scores_by_query=False and p_in_smem=False"
    )
    for steps in (
        {},
        dict(pipelined=True, p_in_smem=True),
        dict(pipelined=True, p_in_smem=True, scores_by_query=True),
    ):
        with pytest.raises(ValueError, match=alternate_needs):
            bwd.Config(64, 128, 4, dq_pass="alternate", **steps)
    turns = dict(dq_pass="alternate", pipelined=True)
    with pytest.raises(ValueError, match="schedule the turns of dq_pass='alternate', got "):
        bwd.Config(64, 128, 4, p_in_smem=True, dq_pass="separate", pipelined=True, turn_delay=2)
    with pytest.raises(ValueError, match="turn_delay must be 1 or 2, got 3"):
        bwd.Config(64, 128, 4, **turns, turn_delay=3, turn_buffers=3)
    with pytest.raises(ValueError, match="turn_buffers must be at least turn_delay \\(2\\)"):
        bwd.Config(64, 128, 4, **turns, turn_delay=2, turn_buffers=1)


def test_the_tuner_tries_its_default_passes_unless_asked_for_more():
    """``backward``'s dq_pass None tunes the default ways (the consumers' turns at D = 64,
    which won every row there; the separate pass and FA3's split at 128, the split alone from
    N = 4096), "any" every way, a
    name that way alone; another name is refused, with the ways named. The default ways'
    space is theirs alone."""
    assert bwd.dq_passes_of(None, 64) == ("alternate",)
    assert bwd.dq_passes_of(None, 64, 16384) == ("alternate",)
    assert bwd.dq_passes_of(None, 128) == ("separate", "split")
    # From N = 4096 the split alone, which took every row timed there.
    assert bwd.dq_passes_of(None, 128, 4095) == ("separate", "split")
    assert bwd.dq_passes_of(None, 128, 4096) == ("split",)
    assert bwd.dq_passes_of("separate", 128, 16384) == ("separate",)
    assert bwd.dq_passes_of("any", 128, 16384) == bwd.DQ_PASSES
    assert attention_backward_config.TUNED_DQ_PASSES.keys() == set(bwd.HEAD_DIMS)
    for head_dim in bwd.HEAD_DIMS:
        assert bwd.dq_passes_of("any", head_dim) == bwd.DQ_PASSES
        for dq_pass in bwd.DQ_PASSES:
            assert bwd.dq_passes_of(dq_pass, head_dim) == (dq_pass,)
        with pytest.raises(ValueError, match=r"dq_pass='tma': the ways to sum dQ are atomics, v"):
            bwd.dq_passes_of("tma", head_dim)
        default = bwd.autotune_configs(head_dim, bwd.dq_passes_of(None, head_dim))
        every = bwd.autotune_configs(head_dim, bwd.dq_passes_of("any", head_dim))
        dq_passes = {bwd.config_of(config).dq_pass for config in default}
        assert dq_passes == set(bwd.dq_passes_of(None, head_dim))
        assert 3 * len(default) < len(every) == len(bwd.autotune_space(head_dim))


@pytest.mark.parametrize(
    ("dq_pass", "reductions"),
    [
        ("atomics", {"red.global.gpu.relaxed.add.f32": 256}),
        ("vector", {"red.global.gpu.relaxed.add.v2.f32": 128}),
        ("summed", {"red.global.gpu.relaxed.add.v2.f32": 64}),
        ("separate", {}),
    ],
)
def test_each_dq_pass_emits_its_reductions(dq_pass, reductions):
    """The PTX's global reductions at HEAD_DIM 128 (two consumers, each step twice: masked and
    not): a consumer's 64 x 128 share, 64 scalar adds a thread; half as many instructions two
    columns each; a quarter, each consumer adding half of the CTA's sum; none. (Triton 3.6
    writes the scalar ones as ``atom``, whose result ptxas drops.)"""
    config = bwd.Config(64, 128, 4, dq_pass=dq_pass)
    ptx = bwd.compile_for_hopper(config, 128, causal=True).asm["ptx"]
    found = re.findall(r"(?:red|atom)\.global\.[\w.]+", ptx)
    assert collections.Counter(m.replace("atom.", "red.", 1) for m in found) == reductions


def tma_add_configs(head_dim):
    return [config for config in bwd.autotune_space(head_dim) if config.dq_pass == "tma_add"]


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_tma_add_pass_reduces_through_smem(head_dim):
    """dq_pass "tma_add": each consumer's step adds its share of dQ with one TMA reduce-add
    (``ttng.async_tma_reduce add``) a chunk of 64 columns into the fp32 accumulator's
    descriptor, no atomics from registers: in the PTX one reduce-add of a 3-D tensor a chunk,
    consumer and step (masked and not), each after ``cp.async.bulk.wait_group.read 1`` (the
    other staging tile's reduction left in flight), and the epilogue's wait for none. In
    every configuration of the space, on Triton 3.6 and 3.7 as on 3.8 and 3.9."""
    chunks = head_dim // 64
    for config in tma_add_configs(head_dim):
        compiled = bwd.compile_for_hopper(config, head_dim, causal=True)
        reduces = 2 * chunks * config.consumers
        assert compiled.asm["ttgir"].count("ttng.async_tma_reduce add,") == reduces, config
        ptx = compiled.asm["ptx"]
        assert not re.search(r"(?:red|atom)\.global", ptx), config
        bulk = "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.bulk_group"
        assert ptx.count(bulk) == reduces, config
        assert ptx.count("cp.async.bulk.wait_group.read \t1;") == reduces, config
        assert compiled.metadata.shared <= SMEM_LIMIT, config


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_tma_add_staging_tiles_have_bytes_of_their_own(head_dim):
    """The spec gives dQ's staging tiles (two 64 x 64 fp32 a consumer: 64 KiB) bytes no other
    buffer has, beside dK and dV over K and V: at HEAD_DIM 128 two stages fit (208 KiB) and
    four do not, as the planner says before anything is compiled; at 64 four fit (176 KiB)."""
    for config in tma_add_configs(head_dim):
        smem = bwd.smem_plan(config, head_dim)
        spans = {
            buffer.name: {byte for i in range(buffer.shape[0]) for byte in _span(view, i)}
            for buffer, view in zip(smem.buffers, smem.plan.views, strict=True)
        }
        views = dict(zip([buffer.name for buffer in smem.buffers], smem.plan.views, strict=True))
        staging = views["dq_tiles"]
        assert staging.buffer_size == 64 * 64 * 4
        dq_bytes = spans.pop("dq_tiles")
        others = set().union(*spans.values())
        assert len(dq_bytes) == 2 * config.consumers * staging.buffer_size
        assert not dq_bytes & others, config
        assert views["dk_tiles"].offset == views["k_tiles"].offset
    two_stages = bwd.Config(64, 128, 2, dq_pass="tma_add")
    if head_dim == 128:
        assert bwd.smem_plan(two_stages, 128).plan.size_bytes == 208 * 1024
        four = dict(verdicts_of([two_stages.replace(num_stages=4)], 128))
        (reason,) = four[two_stages.replace(num_stages=4)].reasons
        assert "bytes of shared memory, more than the target's limit" in reason
    else:
        four_stages = two_stages.replace(num_stages=4)
        assert bwd.smem_plan(four_stages, 64).plan.size_bytes == 176 * 1024


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_split_pass_adds_half_the_columns_once(head_dim):
    """dq_pass "split": each consumer adds columns [c D/2, (c+1) D/2) of the CTA's dQ by one
    TMA reduce-add a step (two consumers, each step twice: masked and not; ``late_dq`` adds
    the last step's after the loop), no atomics from registers; its products read the other
    consumer's dS and K from SMEM after waiting for ``ds_ready``; its staging tiles (fp32
    BLOCK_M x D/2, one or two a consumer) have bytes of their own (but for the epilogue's
    with ``epilogue_over_scores``), half of "tma_add"'s at HEAD_DIM 64 and BLOCK_M 64, and the
    plan fits."""
    configs = [config for config in bwd.autotune_space(head_dim) if config.dq_pass == "split"]
    assert configs
    for config in configs:
        compiled = bwd.compile_for_hopper(config, head_dim, causal=True)
        reductions = 6 if config.late_dq else 4
        assert compiled.asm["ttgir"].count("ttng.async_tma_reduce add,") == reductions, config
        ptx = compiled.asm["ptx"]
        assert not re.search(r"(?:red|atom)\.global", ptx), config
        assert compiled.metadata.shared <= SMEM_LIMIT, config
        smem = bwd.smem_plan(config, head_dim)
        views = dict(zip([buffer.name for buffer in smem.buffers], smem.plan.views, strict=True))
        assert views["dq_tiles"].buffer_size == config.block_m * (head_dim // 2) * 4
        spans = {
            buffer.name: {byte for i in range(buffer.shape[0]) for byte in _span(view, i)}
            for buffer, view in zip(smem.buffers, smem.plan.views, strict=True)
        }
        dq_bytes = spans.pop("dq_tiles")
        if config.epilogue_over_scores:
            # The epilogue's dK and dV, once the last reductions are retired
            # (test_attention_backward_variants.py).
            del spans["dk_tiles"], spans["dv_tiles"]
        assert not dq_bytes & set().union(*spans.values()), config
        arguments = {"HEAD_DIM": head_dim}
        assert dq_block(config, arguments) == [1, config.block_m, head_dim // 2]
    assert {config.block_m for config in configs} == ({64, 128} if head_dim == 64 else {64})


@pytest.mark.parametrize("causal", [False, True])
def test_the_alternating_pass_adds_the_ctas_dq_once(causal):
    """dq_pass "alternate" (HEAD_DIM 64): one TMA reduce-add a turn (two consumers, each in
    the branch of its turn of each step, masked and not with the causal mask, and in the
    last turn after the loop), no atomics from registers; its dQ products read both
    consumers' dS^T from SMEM, each consumer's two buffers (one a parity of the step); its
    staging tiles, one fp32 BLOCK_M x D a consumer, have bytes of their own, the
    descriptor's block is a whole Q block of dQ, and every ring depth fits."""
    configs = [config for config in bwd.autotune_space(64) if config.dq_pass == "alternate"]
    assert {config.num_stages for config in configs} == {4, 7, 8}
    for config in configs:
        compiled = bwd.compile_for_hopper(config, 64, causal=causal)
        # Without the mask the loop of masked steps is gone: one step and the last turn.
        reductions = 6 if causal else 4
        assert compiled.asm["ttgir"].count("ttng.async_tma_reduce add,") == reductions, config
        assert not re.search(r"(?:red|atom)\.global", compiled.asm["ptx"]), config
        assert compiled.metadata.shared <= SMEM_LIMIT, config
        smem = bwd.smem_plan(config, 64)
        buffers = {buffer.name: buffer for buffer in smem.buffers}
        assert buffers["ds_tiles"].shape[0] == 4 and buffers["dq_tiles"].shape[0] == 2
        views = dict(zip(buffers, smem.plan.views, strict=True))
        assert views["dq_tiles"].buffer_size == config.block_m * 64 * 4
        spans = {
            buffer.name: {byte for i in range(buffer.shape[0]) for byte in _span(view, i)}
            for buffer, view in zip(smem.buffers, smem.plan.views, strict=True)
        }
        dq_bytes = spans.pop("dq_tiles")
        if config.epilogue_over_scores:
            # The epilogue's dK and dV, once the last reductions are retired
            # (test_attention_backward_variants.py).
            del spans["dk_tiles"], spans["dv_tiles"]
        assert not dq_bytes & set().union(*spans.values()), config
        assert dq_block(config, {"HEAD_DIM": 64}) == [1, config.block_m, 64]


def turn_schedules():
    """Every configuration of the consumers' turns: the space's and the variants outside it."""
    space = [config for config in bwd.autotune_space(64) if config.dq_pass == "alternate"]
    return space + attention_backward_config.turn_variants()


@pytest.mark.parametrize("causal", [False, True])
def test_the_later_turns_compile(causal):
    """The turns' variants outside the space (``attention_backward_config.turn_variants``:
    turns two steps after their dS^T, one or three dS^T buffers a consumer, each with a
    barrier pair of its own; K and V in registers, loaded once a tile a consumer) fit in
    224 KiB and compile with a turn in each step's branch and the last ``turn_delay`` turns
    after the loop."""
    variants = attention_backward_config.turn_variants()
    turns = {(c.turn_delay, c.turn_buffers, c.keys_in_registers) for c in variants}
    assert turns == {(2, 2, False), (2, 3, False), (1, 1, False), (1, 3, False), (1, 2, True)}
    space = [c for c in bwd.autotune_space(64) if c.dq_pass == "alternate"]
    assert not set(variants) & set(space)
    for config in variants:
        smem = bwd.smem_plan(config, 64)
        assert smem.plan.size_bytes == 224 * 1024, config
        ds_tiles = next(buffer for buffer in smem.buffers if buffer.name == "ds_tiles")
        assert ds_tiles.shape[0] == 2 * config.turn_buffers
        compiled = bwd.compile_for_hopper(config, 64, causal=causal)
        steps = 2 if causal else 1
        reductions = compiled.asm["ttgir"].count("ttng.async_tma_reduce add,")
        assert reductions == 2 * (steps + config.turn_delay), config
        waits = re.findall(r"warp_group_dot_wait .*\{pendings = (\d)", compiled.asm["ttgir"])
        after_the_loop = ["0"] * (1 + config.turn_delay)
        assert waits == (pipelined_step_waits(config, 64) * steps + after_the_loop) * 2, config
        loads = compiled.asm["ttgir"].count("ttg.local_load")
        assert loads == (4 if config.keys_in_registers else 0), config


@pytest.mark.parametrize("causal", [False, True])
def test_every_turn_schedule_is_free_of_hazards_at_odd_and_even_steps(causal):
    """Each configuration of the turns, the space's and the variants, is free of hazards (and
    of ambiguous barrier waits, which one barrier pair a consumer had with three buffers) on
    CTAs whose consumers take odd and even numbers of steps (without the mask one, five,
    eight or ten), grouped heads or not: either consumer may take the last turns. The whole
    space's check (``test_every_configuration_is_free_of_hazards``) runs two query heads a
    KV head, an even number of steps a CTA."""
    for config in turn_schedules():
        ctas = [
            {
                "values": {"seq_len": seq_len, "group": group, "batch_kv_heads": 1},
                "program_id": (program, 0, 0),
                "num_programs": (-(-seq_len // config.block_n), 1, 1),
            }
            for seq_len, group, program in ((300, 1, 0), (300, 2, 1), (1, 1, 0), (512, 1, 1))
        ]
        source = bwd.kernel_source(config, 64, causal=causal)
        reports = tlx.check_hazards_at(source, bwd.SM90A, config.compile_options, ctas=ctas)
        for cta, report in zip(ctas, reports, strict=True):
            assert report.result == "clean", (config, cta, report.describe())
            assert report.accesses > 0 and not report.unmodelled


def pipelined_configs(head_dim):
    return [config for config in bwd.autotune_space(head_dim) if config.pipelined]


def test_staged_statistics_need_the_turns():
    """``staged_statistics`` has the turns' steps read their statistics from the ring's stage:
    refused with another dq_pass, and beside ``statistics_ahead``, which would load them as
    well; named in the configuration and passed to the kernel."""
    separate = dict(dq_pass="separate", p_in_smem=True, pipelined=True)
    with pytest.raises(ValueError, match="staged_statistics .* needs dq_pass='alternate', or "):
        bwd.Config(64, 128, 4, **separate, staged_statistics=True)
    turns = dict(dq_pass="alternate", pipelined=True)
    with pytest.raises(ValueError, match="statistics_ahead would load .*: choose one"):
        bwd.Config(64, 128, 4, **turns, statistics_ahead=True, staged_statistics=True)
    config = bwd.Config(64, 128, 4, **turns, staged_statistics=True)
    assert repr(config).endswith(" dq=alternate pipelined staged_statistics")
    assert config.kernel_arguments()["STAGED_STATISTICS"] is True
    assert bwd.Config(64, 128, 8).kernel_arguments()["STAGED_STATISTICS"] is False


@pytest.mark.parametrize("causal", [False, True])
def test_the_staged_statistics_ride_the_ring(causal):
    """With ``staged_statistics`` each stage holds its Q block's LSE and delta, two fp32 rows
    in bytes of their own beside its Q and dO, which the loader copies by a third TMA counted
    in the stage's expected bytes (through an unswizzled descriptor of two rows a Q block),
    and which each consumer's steps read from SMEM (two loads a step, masked or not) where
    the other turns load them from global memory. Eight stages do not fit: the planner says
    by how much."""
    turns = dict(dq_pass="alternate", pipelined=True)
    for stages in (4, 7):
        config = bwd.Config(64, 128, stages, **turns, staged_statistics=True)
        smem = bwd.smem_plan(config, 64)
        buffers_and_views = zip(smem.buffers, smem.plan.views, strict=True)
        views = {buffer.name: view for buffer, view in buffers_and_views}
        shapes = {buffer.name: buffer.shape for buffer in smem.buffers}
        assert shapes["statistics_tiles"] == (stages, 2, 64)
        assert views["statistics_tiles"].buffer_size == 2 * 64 * 4
        spans = {
            name: {byte for i in range(shapes[name][0]) for byte in _span(view, i)}
            for name, view in views.items()
        }
        assert not spans["statistics_tiles"] & (spans["q_tiles"] | spans["do_tiles"])
        ttgir = bwd.compile_for_hopper(config, 64, causal=causal).asm["ttgir"]
        copies = re.findall(r"async_tma_copy_global_to_local .* -> !ttg.memdesc<2x64xf32", ttgir)
        assert len(copies) == 1 and re.search(r"barrier_expect %ready\w*, 16896,", ttgir), config
        loads = re.findall(r"ttg.local_load .*memdesc<64xf32.* -> tensor<64xf32", ttgir)
        assert len(loads) == 2 * 2 * (2 if causal else 1), config
        assert "tt.load" not in ttgir, config
    blocks = bwd.block_shapes(config, {"HEAD_DIM": 64})
    assert dict(zip(bwd.HOST.descriptors, blocks, strict=True))["desc_statistics"] == [2, 64]
    assert bwd.HOST.layout("desc_statistics", 32, [2, 64]).swizzle_byte_width == 0
    own = bwd.compile_for_hopper(config.replace(staged_statistics=False), 64).asm["ttgir"]
    assert "tt.load" in own
    with pytest.raises(CompilationError) as error:
        bwd.smem_plan(config.replace(num_stages=8), 64)
    assert "needs 233472 bytes of shared memory, more than" in error_messages(error.value)


@pytest.mark.parametrize("causal", [False, True])
def test_dk_from_registers_reads_ds_from_registers(causal):
    """With ``dk_from_registers`` a turns step's dK takes dS^T from registers, as dV takes
    P^T: two products a step with a register A operand where the others have one, none of
    them reading a dS^T buffer, which dQ's turns still read (two products a turn). (The
    step's last wait retires dK with dV: ``pipelined_step_waits``.)"""
    turns = dict(dq_pass="alternate", pipelined=True, staged_statistics=True)
    steps = 2 if causal else 1
    for from_registers in (False, True):
        config = bwd.Config(64, 128, 4, **turns, dk_from_registers=from_registers)
        ttgir = bwd.compile_for_hopper(config, 64, causal=causal).asm["ttgir"]
        products = [line for line in ttgir.splitlines() if "ttng.warp_group_dot " in line]
        by_registers = [line for line in products if "kWidth = 2}>> * !ttg.memdesc" in line]
        assert len(by_registers) == 2 * steps * (2 if from_registers else 1), config
        over_ds = [line for line in products if re.search(r"warp_group_dot %ds_smem", line)]
        assert len(over_ds) == (0 if from_registers else 2 * steps), config


def test_the_space_has_the_pipelined_steps():
    """At each head dim the tuner's space holds the pipelined steps, each with P in SMEM: with
    dQ in its pass of its own, S with two or four stages, S^T too and 128-row Q blocks with S
    at HEAD_DIM 64; with dQ's TMA reduce-adds, S with the stages that fit beside the staging
    tiles (two or four at 64, two at 128), and S^T at 64; with dQ split over the consumers, S
    with the same stages at HEAD_DIM 64 and 128-row Q blocks with two, at 128 two stages with
    one staging tile a consumer, and the same a step late; at HEAD_DIM 64 the consumers'
    turns at dQ, S^T with P^T from registers: eight stages, four or eight loading each step's
    statistics a step ahead, four or seven reading them from the ring's stage, dK taking dS^T
    from registers, and the four in persistent CTAs with two K/V slots; at 128 the split a step
    late in persistent CTAs too, its epilogue over its dS, P and dQ staging tiles."""
    separate = {(64, by_query, stages) for by_query in (False, True) for stages in (2, 4)}
    one_tile = (64, True, 2, "one staging tile")
    expected = {
        64: {
            "separate": separate | {(128, True, 2), (128, True, 4)},
            "tma_add": separate,
            "split": {(64, True, 2), (64, True, 4), (128, True, 2)},
            "alternate": {(64, False, 8)}
            | {(64, False, stages, "statistics ahead") for stages in (4, 8)}
            | {(64, False, stages, "staged statistics", "dK from registers") for stages in (4, 7)}
            | {(64, False, 4, "staged statistics", "dK from registers", "persistent, 2 slots")},
        },
        128: {
            "separate": {(64, True, stages) for stages in (2, 4)},
            "tma_add": {(64, True, 2)},
            "split": {
                one_tile,
                (*one_tile, "late"),
                (*one_tile, "late", "persistent, 1 slots", "epilogue over the scores"),
            },
        },
    }
    for head_dim in bwd.HEAD_DIMS:
        pipelined = pipelined_configs(head_dim)
        # "alternate" takes P^T from registers, its steps retiring dV before they end.
        assert all(config.p_in_smem != (config.dq_pass == "alternate") for config in pipelined)
        found = collections.defaultdict(set)
        for config in pipelined:
            shape = (config.block_m, config.scores_by_query, config.num_stages)
            shape += ("one staging tile",) if config.dq_staging_tiles == 1 else ()
            shape += ("late",) if config.late_dq else ()
            shape += ("statistics ahead",) if config.statistics_ahead else ()
            shape += ("staged statistics",) if config.staged_statistics else ()
            shape += ("dK from registers",) if config.dk_from_registers else ()
            shape += (f"persistent, {config.kv_buffers} slots",) if config.persistent else ()
            shape += ("epilogue over the scores",) if config.epilogue_over_scores else ()
            found[config.dq_pass].add(shape)
        assert found == expected[head_dim]
        assert len(pipelined) == sum(map(len, expected[head_dim].values()))


@pytest.mark.parametrize("dq_pass", ["atomics", "vector", "summed"])
def test_pipelined_names_what_it_needs(dq_pass):
    """``pipelined`` with a way to sum dQ its steps are not built for (a wait for dQ's
    products would retire dV and dK), without P in SMEM (but with "alternate", built on P^T
    from registers), or with one stage; with a way it is built for it is a configuration."""
    message = (
        "pipelined leaves dK and dV in flight .* it is built for dq_pass 'separate' or "
        f"'tma_add' or 'split' or 'alternate', got '{dq_pass}'"
    )
    with pytest.raises(ValueError, match=message):
        bwd.Config(64, 128, 4, p_in_smem=True, dq_pass=dq_pass, pipelined=True)
    for built_for in attention_backward_config.PIPELINED_DQ_PASSES:
        # "split" is built on S by queries, which needs P in SMEM itself; "alternate" on P^T
        # from registers.
        steps = {
            "split": dict(p_in_smem=True, scores_by_query=True),
            "alternate": {},
        }.get(built_for, dict(p_in_smem=True))
        if built_for not in ("split", "alternate"):
            with pytest.raises(ValueError, match="pipelined writes P.* needs p_in_smem=True"):
                bwd.Config(64, 128, 4, dq_pass=built_for, pipelined=True)
        with pytest.raises(ValueError, match="so the consumers hold two: it needs num_stages >="):
            bwd.Config(64, 128, 1, dq_pass=built_for, pipelined=True, **steps)
        config = bwd.Config(64, 128, 2, dq_pass=built_for, pipelined=True, **steps)
        assert config.pipelined


def _span(view, index):
    start = view.start_of(index)
    return range(start, start + view.buffer_size)


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_a_pipelined_plan_gives_p_and_ds_bytes_of_their_own(head_dim):
    """The pipelined kernel's tree makes each consumer's P and dS ``distinct`` (dV still reads
    P while dS is written) and keeps dK and dV over K and V; the planner's plan gives every P
    buffer bytes no dS buffer has. At HEAD_DIM 128 with four stages that is 224 KiB, 16 KiB
    more than the kernel whose P and dS share. (dq_pass "alternate" has no P buffer: P^T is
    dV's operand from registers; ``test_the_alternating_pass_adds_the_ctas_dq_once`` checks
    its plan, test_attention_backward_variants.py that of the epilogue over the scores.)"""
    over_kv = (c for c in pipelined_configs(head_dim) if c.p_in_smem and not c.epilogue_over_scores)
    for config in over_kv:
        smem = bwd.smem_plan(config, head_dim)
        names = [buffer.name for buffer in smem.buffers]
        groups = {
            tuple(names[child] for child in group.children): group.kind
            for group in smem.tree.children
            if not isinstance(group, int)  # dQ's staging tiles, a buffer of the root's
        }
        assert groups[("ds_tiles", "p_tiles")] == "distinct"
        assert groups[("k_tiles", "dk_tiles")] == groups[("v_tiles", "dv_tiles")] == "shared"
        views = dict(zip(names, smem.plan.views, strict=True))
        p_bytes = {byte for c in range(2) for byte in _span(views["p_tiles"], c)}
        ds_bytes = {byte for c in range(2) for byte in _span(views["ds_tiles"], c)}
        assert p_bytes and ds_bytes and not p_bytes & ds_bytes, config
        assert views["dk_tiles"].offset == views["k_tiles"].offset
        assert views["dv_tiles"].offset == views["v_tiles"].offset
    if head_dim == 128:
        config = bwd.Config(64, 128, 4, p_in_smem=True, dq_pass="separate")
        assert bwd.smem_plan(config, 128).plan.size_bytes == 208 * 1024
        pipelined = bwd.smem_plan(config.replace(pipelined=True), 128)
        assert pipelined.plan.size_bytes == 224 * 1024


def ptxas_log(ptx):
    """What ``ptxas -v`` (the one Triton compiles with) says of ``ptx`` for sm_90a: its
    registers, spills and warnings (Triton drops them)."""
    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "kernel.ptx"
        source.write_text(ptx)
        ran = subprocess.run(
            [get_ptxas(90).path, "-v", "--gpu-name=sm_90a", str(source), "-o", f"{source}.o"],
            capture_output=True,
            text=True,
            check=True,
        )
    return ran.stdout + ran.stderr


def pipelined_step_waits(config, head_dim):
    """The ``warpgroup_mma_wait``s of a pipelined step, each as the groups it leaves in
    flight: for S (dP outstanding) and for dP; with dq_pass "tma_add" then for each chunk of
    dQ's products, leaving dK and, where they were issued after the chunk, dV and the later
    chunks: with S at HEAD_DIM 64 dQ, dV, dK (2); with S at 128 dQ's first chunk, dV (1), the
    second, dK (1); with S^T dV, dQ, dK (1); with dq_pass "split", dQ's two products (its
    first before dV's, its second before dK's), leaving dK (1); with dq_pass "alternate", on
    the consumer's turn, for S leaving dP and the turn's two dQ products (3), for dP (2) and
    for dQ after the softmax (0), else for S (1) and dP (0), then for dV leaving dK (1; with
    ``dk_from_registers`` for both, 0)."""
    if config.dq_pass == "separate":
        return ["1", "0"]
    if config.dq_pass == "alternate":
        return ["3", "2", "0", "1", "0", "0" if config.dk_from_registers else "1"]
    if config.dq_pass == "split":
        return ["1", "0", "1"]
    if not config.scores_by_query:
        return ["1", "0", "1"]
    return ["1", "0", "2"] if head_dim == 64 else ["1", "0", "1", "1"]


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_pipelined_steps_wait_twice_a_step(head_dim):
    """Each consumer's two steps (masked and not) wait for S leaving dP outstanding and for
    dP (and, with dQ's TMA reduce-adds, for dQ's products leaving dK in flight), and one wait
    after the loop retires the last dV and dK (with "alternate" a second, the last turn's
    dQ; with ``late_dq`` a second, the last step's dQ): where the unpipelined kernel waits
    four times a step. ptxas keeps the wgmmas asynchronous (no C7515 warning of serialized
    wgmma) and spills nothing at HEAD_DIM 64 with
    64-row Q blocks, S^T with dQ summed in the kernel aside (docs/attention-backward.md has
    the figures)."""
    for config in pipelined_configs(head_dim):
        compiled = bwd.compile_for_hopper(config, head_dim, causal=True)
        waits = re.findall(r"warp_group_dot_wait .*\{pendings = (\d)", compiled.asm["ttgir"])
        last_dq = config.dq_pass == "alternate" or config.late_dq
        after_the_loop = ["0", "0"] if last_dq else ["0"]
        assert waits == (pipelined_step_waits(config, head_dim) * 2 + after_the_loop) * 2, config
        log = ptxas_log(compiled.asm["ptx"])
        assert "Used" in log and "C7515" not in log and "warning" not in log, (config, log)
        by_keys_in_kernel = (
            config.dq_pass in ("tma_add", "alternate") and not config.scores_by_query
        )
        if head_dim == 64 and config.block_m == 64 and not by_keys_in_kernel:
            assert "0 bytes spill stores, 0 bytes spill loads" in log, (config, log)
    unpipelined = bwd.Config(64, 128, 4, p_in_smem=True, dq_pass="separate")
    ttgir = bwd.compile_for_hopper(unpipelined, head_dim, causal=True).asm["ttgir"]
    waits = re.findall(r"warp_group_dot_wait .*\{pendings = (\d)", ttgir)
    assert waits == ["1", "0", "0", "0"] * 4


def dq_verdicts(head_dim, causal, seq_len=4096):
    pruner = tlx.PlanPruner(attention_dq.attention_dq_kernel, target=attention_dq.SM90A)
    names = ("desc_q", "desc_k", "desc_v", "desc_do", "desc_dq")
    arguments = {
        **descriptors(names, head_dim, seq_len),
        **{name: torch.empty(4) for name in ("lse_ptr", "delta_ptr")},
        "o_ptr": torch.empty(4, dtype=torch.float16),
        **{"sm_scale": 0.125, "qk_scale": 0.18, "seq_len": seq_len, "group": 4},
        **{"batch_heads": 64, "HEAD_DIM": head_dim, "CAUSAL": causal},
    }
    return [
        (attention_dq.config_of(triton_config), pruner.verdict(triton_config, arguments))
        for triton_config in attention_dq.autotune_configs(head_dim)
    ]


@whole_space_on_newest_triton
@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_every_dq_configuration_compiles_and_is_clean(head_dim):
    """The dQ kernel: every configuration of its space fits and compiles for sm_90a, and the
    hazard check finds it clean, causal or not, for the CTAs of the first, a middle and the
    last Q block of a grouped head, on a sequence that ends inside a block, and for one row."""
    for causal in (False, True):
        for config, verdict in dq_verdicts(head_dim, causal):
            assert verdict.fits, (config, verdict.reasons)
            if causal:
                compiled = attention_dq.compile_for_hopper(config, head_dim, causal=True)
                assert compiled.metadata.shared <= SMEM_LIMIT, config
                assert "red.global" not in compiled.asm["ptx"]
            ctas = [
                {
                    "values": {"seq_len": seq_len, "group": 2, "batch_heads": 4},
                    # Head 3's Q blocks: a head's are consecutive tiles.
                    "program_id": (3 * programs + program, 0, 0),
                    "num_programs": (4 * programs, 1, 1),
                }
                for seq_len, program, programs in checked_ctas(config.block_m)
            ]
            source = attention_dq.kernel_source(config, head_dim, causal=causal)
            reports = tlx.check_hazards_at(
                source, attention_dq.SM90A, config.compile_options, ctas=ctas
            )
            for cta, report in zip(ctas, reports, strict=True):
                assert report.result == "clean", (config, cta, report.describe())
                assert report.accesses > 0 and not report.unmodelled


def test_the_dq_kernels_epilogue_is_over_q():
    """The dQ kernel's staging tile takes the bytes of its consumer's Q buffer: at HEAD_DIM
    128, Q and dO (2 x 32 KiB) and four K/V stages (4 x 32 KiB) make 192 KiB, 32 KiB less
    than with dQ beside them."""
    smem = attention_dq.smem_plan(attention_dq.default_config(128), 128)
    assert smem.plan.size_bytes == 192 * 1024
    views = zip(smem.buffers, smem.plan.views, strict=True)
    offsets = {buffer.name: view.offset for buffer, view in views}
    assert offsets["dq_tiles"] == offsets["q_tiles"]
    assert smem.plan_without_aliasing().size_bytes == 224 * 1024


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_dq_kernels_rows_in_registers_feed_s_and_dp(head_dim):
    """``rows_in_registers``: every product of the dQ kernel (S, dP and dQ, each consumer's,
    masked steps and not) takes its A operand from registers, where otherwise S and dP take
    Q and dO from SMEM and only dQ's dS comes from registers; ptxas spills nothing."""
    for rows_in_registers, from_registers in ((False, 4), (True, 12)):
        config = attention_dq.DqConfig(128, 64, 4, rows_in_registers=rows_in_registers)
        compiled = attention_dq.compile_for_hopper(config, head_dim, causal=True)
        products = re.findall(r"ttng\.warp_group_dot [^\n]*?\} : (\S+)<", compiled.asm["ttgir"])
        assert len(products) == 12, config
        assert products.count("tensor") == from_registers, (config, products)
        assert " 0 bytes spill stores" in ptxas_log(compiled.asm["ptx"]), config
    assert attention_dq.DqConfig(128, 128, 2, rows_in_registers=True) not in (
        attention_dq.autotune_space(128)
    )


def test_the_documented_plan_is_the_kernels():
    """docs/attention-backward.md's picture is the plan the planner makes now."""
    if tlx.compat.NEEDS_WHOLE_VIEWS:
        pytest.skip("the document shows a plan with views smaller than the region (not 3.8)")
    picture = Path(__file__).parents[2] / "docs" / "images" / "hopper_attention_backward.smem.svg"
    plan = bwd.smem_plan(bwd.Config(64, 128, 4, p_in_smem=True), 128)
    assert picture.read_text() == plan.to_svg()
