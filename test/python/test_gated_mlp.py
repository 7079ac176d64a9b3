"""The gated (SwiGLU) MLP on the CPU (tlx_kernels.hopper.gated_mlp): its SMEM plans (H's
staging tile over the dead ring, or beside it when persistent), every configuration of its
autotuning space compiled for sm_90a or pruned with the planner's reason, the hazard check
clean on each (and a race found when a step's two products are not both waited for), the
host's refusals of bad input naming the tensor and its shape, the torch contenders against
the reference, and bench/fused_mlp.py --gated's arguments without a GPU."""

import importlib
import re
import sys

import pytest
import tlx
import tlx_kernels
import torch
from _helpers import whole_space_on_newest_triton
from _planner_helpers import buffer_ranges, overlapping_pairs
from tlx.hazards import check as _hazards
from tlx.report import cli as _cli
from tlx_kernels.hopper import gated_mlp as gated
from triton.compiler.errors import CompilationError

SMEM_LIMIT = 232448
TOO_BIG = "bytes of shared memory, more than the target's limit of 232448 bytes"
# The kernel's integer arguments for the hazard check: several tiles of whole steps and
# tiles; then one partial row block, d_model (100) and hidden (200) not multiples of a step or
# a tile.
CHECK_VALUES = (
    {"tokens": 256, "d_model": 512, "hidden": 512, "GROUP_M": 8},
    {"tokens": 100, "d_model": 100, "hidden": 200, "GROUP_M": 8},
)


def planner_message(error):
    """The planner's message inside ``error`` (Triton wraps it once per call it passes)."""
    while error.error_message is None and isinstance(error.__cause__, CompilationError):
        error = error.__cause__
    return error.error_message


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_h_lies_over_the_dead_ring(dtype):
    """One tile a CTA: the 32 KiB staging tile takes the ring's first bytes, X stages 0 and 1
    (the X tiles first in the ring's group); the region is the ring's four 48 KiB stages."""
    smem = gated.smem_plan(gated.default_config(), dtype)
    plan = smem.plan
    assert [buffer.name for buffer in smem.buffers] == ["x_ring", "wg_ring", "wu_ring", "h_tile"]
    assert plan.ok and smem.allocated, plan.errors
    assert plan.size_bytes == plan.ideal_bytes == 4 * 48 * 1024
    assert buffer_ranges(smem)["h_tile", 0] == (0, 32768)
    assert overlapping_pairs(smem) == {(("h_tile", 0), ("x_ring", i)) for i in (0, 1)}


def test_persistent_h_lies_beside_the_ring():
    smem = gated.smem_plan(gated.Config(128, 4, persistent=True))
    assert smem.plan.size_bytes == smem.plan.ideal_bytes == 4 * 48 * 1024 + 32768 <= SMEM_LIMIT
    assert overlapping_pairs(smem) == set()


def test_the_planner_prices_h_over_the_ring():
    """At 128 x 64 tiles H over the ring is what lets a seventh 32 KiB stage fit; at 128 x 128
    a fifth 48 KiB stage fits neither way (the space's deepest rings)."""
    over = gated.smem_plan(gated.Config(64, 7)).plan
    assert over.size_bytes == 7 * 32768 <= SMEM_LIMIT
    for config in (
        gated.Config(64, 7, persistent=True),
        gated.Config(128, 5),
        gated.Config(128, 5, persistent=True),
    ):
        with pytest.raises(CompilationError) as error:
            gated.smem_plan(config)
        assert TOO_BIG in planner_message(error.value)


def test_configs():
    assert gated.default_config() == gated.Config(128, 4)
    assert gated.config_of(gated.HOST.triton_config(gated.Config(64, 7, True))) == gated.Config(
        64, 7, True
    )
    assert repr(gated.Config(64, 4, True)).endswith(
        "stages=4 GROUP_M=8 persistent, H beside the ring"
    )
    with pytest.raises(ValueError, match="block_m=256: each consumer warpgroup takes 64 rows"):
        gated.Config(128, 4, block_m=256)
    with pytest.raises(ValueError, match="at least two stages, got 1"):
        gated.Config(128, 1)
    space = gated.autotune_space()
    assert len(space) == len(set(space)) == 8
    assert {(c.block_n, c.num_stages) for c in space} == {(128, 3), (128, 4), (64, 4), (64, 7)}


@whole_space_on_newest_triton
@pytest.mark.usefixtures("always_compile")
def test_every_configuration_compiles_or_is_pruned():
    """What the plan pruner keeps compiles to a cubin within the target's shared memory; what
    it drops carries the planner's reason and does not compile for want of shared memory."""
    pruner = tlx.PlanPruner(gated.gated_mlp_kernel, target=gated.SM90A)
    arguments = gated.placeholder_arguments()
    fits = pruned = 0
    for triton_config in gated.autotune_configs():
        config = gated.config_of(triton_config)
        verdict = pruner.verdict(triton_config, arguments)
        if verdict.fits:
            compiled = gated.compile_for_hopper(config)
            assert compiled.asm["cubin"], config
            assert compiled.metadata.shared <= SMEM_LIMIT, config
            fits += 1
        else:
            assert verdict.reasons and all(TOO_BIG in reason for reason in verdict.reasons)
            with pytest.raises(CompilationError) as error:
                gated.compile_for_hopper(config)
            assert TOO_BIG in planner_message(error.value), config
            pruned += 1
    assert (fits, pruned) == (7, 1)


@pytest.mark.parametrize(
    ("config", "dtype"), [(gated.Config(128, 4), "fp16"), (gated.Config(64, 4, True), "bf16")]
)
def test_kernel_compiles_to_a_cubin_for_sm90a(config, dtype):
    """On every supported Triton: two products a consumer per d_model step (gate and up over
    one X stage), the previous step's retired while the newest two are in flight."""
    compiled = gated.compile_for_hopper(config, dtype)
    assert compiled.asm["cubin"]
    ttgir = compiled.asm["ttgir"]
    assert ttgir.count("ttng.warp_group_dot ") == 4
    assert "ttg.warp_specialize" in ttgir
    assert len(re.findall(r"warp_group_dot_wait .*\{pendings = 2 : i32\}", ttgir)) == 2
    # A ready and an empty barrier per stage, and mma_done.
    assert ttgir.count("ttng.init_barrier") == 2 * config.num_stages + 1
    smem = gated.smem_plan(config, dtype)
    assert smem.plan.size_bytes < compiled.metadata.shared <= SMEM_LIMIT


@pytest.mark.parametrize("config", gated.autotune_space(), ids=str)
def test_every_configuration_checks_clean(config):
    """What the tuner may choose is race-free: each configuration that fits, at whole and at
    partial tiles (a persistent CTA walks every tile: the check runs one CTA of one)."""
    try:
        gated.smem_plan(config)
    except CompilationError as error:
        assert TOO_BIG in planner_message(error)
        return
    reports = tlx.check_hazards_at(
        gated.kernel_source(config),
        gated.SM90A,
        gated.COMPILE_OPTIONS,
        ctas=[{"values": values} for values in CHECK_VALUES],
    )
    for report in reports:
        assert report.result == "clean", report.describe()
        assert report.accesses > 0 and not report.unmodelled


@pytest.mark.parametrize("persistent", [False, True])
def test_a_stage_released_under_the_second_product_is_a_race(persistent):
    """Each step's two products are two wgmma groups: waiting for all but the newest three
    (not two) releases a stage while the previous step's up product still reads it, and the
    check reports the loader's next TMA load over it."""
    source = gated.kernel_source(gated.Config(128, 4, persistent))
    text, spec_plans = _hazards.kernel_ttgir(source, gated.SM90A, gated.COMPILE_OPTIONS)
    values = CHECK_VALUES[0]
    assert _hazards.check_ttgir(text, spec_plans, values=values).result == "clean"
    mutated = text.replace("{pendings = 2 : i32}", "{pendings = 3 : i32}")
    assert mutated != text
    report = _hazards.check_ttgir(mutated, spec_plans, values=values)
    assert report.result == "hazards", report.describe()
    described = report.describe()
    assert "warpgroup_mma reads" in described and "TMA load writes" in described


def test_cli_check():
    import tlx_kernels.hopper.gated_mlp_kernel as kernel_module

    config = gated.default_config()
    signature = ",".join(
        f"{name}={kind}"
        for name, kind in gated.kernel_source(config).signature.items()
        if kind != "constexpr"
    )
    arguments = ["check", f"{kernel_module.__file__}::gated_mlp_kernel", "--target", "sm_90a"]
    arguments += ["--signature", signature]
    for name, value in CHECK_VALUES[1].items():
        arguments += ["--value", f"{name}={value}"]
    for name, value in gated.constexprs(config).items():
        arguments += ["--constexpr", f"{name}={value}"]
    assert _cli.main(arguments) == 0


def _inputs(tokens=4, d_model=8, hidden=32, dtype=torch.float16):
    return (
        torch.zeros(tokens, d_model, dtype=dtype),
        torch.zeros(d_model, hidden, dtype=dtype),
        torch.zeros(d_model, hidden, dtype=dtype),
        torch.zeros(hidden, d_model, dtype=dtype),
    )


@pytest.mark.parametrize(
    "launch",
    [gated.gated_mlp, gated.autotuned_gated_mlp, tlx_kernels.gated_mlp],
    ids=["gated_mlp", "autotuned_gated_mlp", "tlx_kernels.gated_mlp"],
)
def test_launchers_refuse_bad_inputs_naming_the_tensor(launch):
    x, w_gate, w_up, w_down = _inputs()
    refusals = [
        ((x[None], w_gate, w_up, w_down), r"x must be a matrix, got shape \(1, 4, 8\)"),
        (
            (x, w_gate[:4], w_up, w_down),
            r"w_gate must be \[d_model, hidden\] with d_model = 8 \(x's columns; x is \(4, 8\)\), "
            r"got shape \(4, 32\)",
        ),
        (
            (x, w_gate, w_up[:, :16], w_down),
            r"w_up must be \[d_model, hidden\] as w_gate is, \(8, 32\), got shape \(8, 16\)",
        ),
        (
            (x, w_gate, w_up, w_down.t()),
            r"w_down must be \[hidden, d_model\] = \(32, 8\), got shape \(8, 32\)",
        ),
        ((x.float(), w_gate, w_up, w_down), "x must be float16 or bfloat16, got torch.float32"),
        (
            (x, w_gate, w_up.bfloat16(), w_down),
            "w_up must have x's dtype, torch.float16, got torch.bfloat16",
        ),
        ((x, w_gate, w_up, w_down.float()), "w_down must have x's dtype"),
        ((x, w_gate, w_up, w_down), "x must be a CUDA tensor, got one on cpu"),
    ]
    for arguments, message in refusals:
        with pytest.raises(ValueError, match=message):
            launch(*arguments)


@pytest.mark.parametrize("launch", [gated.gated_up, gated.autotuned_gated_up])
def test_the_first_half_refuses_bad_inputs(launch):
    x, w_gate, w_up, _ = _inputs(dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"w_gate must be a matrix, got shape \(8,\)"):
        launch(x, w_gate[:, 0], w_up)
    with pytest.raises(ValueError, match=r"w_up must be \[d_model, hidden\] as w_gate is"):
        launch(x, w_gate, w_up.t())
    with pytest.raises(ValueError, match="x must be a CUDA tensor, got one on cpu"):
        launch(x, w_gate, w_up)


def test_torch_contenders_compute_the_reference():
    """The bench's contenders, on the CPU in float32: two matmuls, one on the concatenated
    weights, and the reference compute one gated MLP."""
    torch.manual_seed(0)
    x, w_gate, w_up, w_down = gated.random_inputs(37, 24, 40, torch.float32, device="cpu")
    expected = gated.reference_gated_mlp(x, w_gate, w_up, w_down)
    concatenated = gated.concatenated_weights(w_gate, w_up)
    assert concatenated.shape == (24, 80)
    for out in (
        gated.torch_gated_mlp(x, w_gate, w_up, w_down),
        gated.torch_concatenated_gated_mlp(x, concatenated, w_down),
    ):
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    h = gated.reference_gated_up(x, w_gate, w_up)
    torch.testing.assert_close(h, torch.nn.functional.silu(x @ w_gate) * (x @ w_up))


def test_bench_gated_rows_and_arguments(monkeypatch, capsys):
    bench = importlib.import_module("fused_mlp")
    assert len(bench.gated_rows(False)) == 10
    assert len(bench.gated_rows(True)) == 20
    assert {row[2:] for row in bench.gated_rows(False, 2048)} == {(2048, 8192)}
    assert {row[1] for row in bench.gated_rows(False)} == {512, 1024, 2048, 4096, 8192}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for argv, message in (
        (["--gated", "--small"], "--small is a shape set of the ungated kernel"),
        (["--d-model", "2048"], "--d-model selects a layer of --gated"),
    ):
        monkeypatch.setattr(sys, "argv", ["fused_mlp.py", *argv])
        with pytest.raises(SystemExit):
            bench.main()
        assert message in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["fused_mlp.py", "--gated", "--d-model", "4096"])
    with pytest.raises(SystemExit, match="needs a Hopper GPU"):
        bench.main()
