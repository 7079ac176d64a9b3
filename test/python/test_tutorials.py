"""Every tutorial compiles for its target on the CPU and allocates the SMEM/TMEM plan it
prints (the plans tlx.kernel_plans returns for its kernel); without a GPU its script runs to the
end (compiling instead of running); the launchers refuse bad inputs."""

import importlib
import re
import sys

import pytest
import tlx
import torch
from _helpers import run_tutorial, tutorial_globals
from triton.compiler.errors import CompilationError

# With a GPU the scripts run their kernels instead (test/gpu covers that).
without_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="the script would use the GPU")

# The backing allocation of a tlx SMEM spec: [n, 128] x i8 with the plan's alignment.
SMEM_BACKING = re.compile(
    r"ttg\.local_alloc \{alignment = (\d+) : i32\} : \(\) -> !ttg\.memdesc<(\d+)x128xi8"
)
TMEM_ALLOC = re.compile(r"%(\w+) = ttng\.tmem_alloc : \(\) -> !ttg\.memdesc<(\d+)x(\d+)xi32")


def view_shapes(ttgir):
    """{view name: [slots, *shape]} of every memdesc_reinterpret in the TTGIR."""
    shapes = {}
    for name, shape in re.findall(
        r"%(\w+) = ttg\.memdesc_reinterpret %\w+ : [^>]*> -> !ttg\.memdesc<([\dx]+)x[a-z]", ttgir
    ):
        shapes[name] = [int(dim) for dim in shape.split("x")]
    return shapes


def assert_smem_backing_matches(ttgir, plan):
    backings = SMEM_BACKING.findall(ttgir)
    assert len(backings) == 1, backings
    alignment, rows = (int(x) for x in backings[0])
    assert rows * 128 == plan.size_bytes
    assert alignment == plan.alignment


def views_by_name(spec_plan):
    return dict(zip((b.name for b in spec_plan.buffers), spec_plan.plan.views, strict=True))


def test_aliasing_basics_compiles_for_sm90():
    basics = tutorial_globals("01-aliasing-basics.py")
    spec = basics["smem_plan"]()
    plan = spec.plan
    assert plan.ok and spec.allocated
    assert [b.name for b in spec.buffers] == ["as_float", "as_bits", "other"]
    assert [view.offset for view in plan.views] == [0, 0, 64 * 64 * 4]
    ttgir = basics["compile_for_hopper"]().asm["ttgir"]
    assert_smem_backing_matches(ttgir, plan)
    views = view_shapes(ttgir)
    assert views["as_float"] == [plan.views[0].slots, 64, 64]
    assert views["as_bits"] == [plan.views[1].slots, 64, 64]


@without_gpu
def test_aliasing_basics_script_prints_plan(capsys):
    assert run_tutorial("01-aliasing-basics.py") == 0
    out = capsys.readouterr().out
    assert "one SMEM region of 32768 bytes" in out
    assert "other    at byte offset 16384" in out


@pytest.mark.parametrize("head_dim", [64, 128])
def test_hopper_kernel_allocates_its_plan(head_dim):
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    for config in fa.benchmark_configs(head_dim):
        smem = fa.smem_plan(config, head_dim)
        plan = smem.plan
        assert plan.ok and smem.allocated, plan.errors
        assert [b.name for b in smem.buffers] == ["q_tiles", "o_tiles", "k_tiles", "v_tiles"]
        compiled = fa.compile_for_hopper(config, head_dim, causal=True)
        ttgir = compiled.asm["ttgir"]
        assert_smem_backing_matches(ttgir, plan)
        views = view_shapes(ttgir)
        for buffer, view in zip(smem.buffers, plan.views, strict=True):
            if buffer.name in views:  # views of equal type are one op (q_tiles and o_tiles)
                assert views[buffer.name] == [view.slots, *buffer.shape[1:]]
        assert compiled.asm["cubin"]
        # The region plus the mbarriers, inside the 227 KB of an sm_90a CTA.
        assert plan.size_bytes < compiled.metadata.shared <= smem.spec.smem_limit_bytes == 232448


def test_hopper_aliasing_is_what_makes_three_stages_fit():
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    aliased, unaliased = fa.benchmark_configs(128)
    assert aliased.num_stages == 3 and aliased.alias_o and aliased.o_over_kv
    assert unaliased.num_stages == 2 and not unaliased.alias_o
    smem = fa.smem_plan(aliased, 128)
    views = views_by_name(smem)
    assert smem.plan.size_bytes == 224 * 1024
    # Q first; then per stage K and V, with the stage's two O tiles (one per consumer) over K.
    offsets = {name: view.offset for name, view in views.items()}
    assert offsets == {
        "q_tiles": 0,
        "o_tiles": 32 * 1024,
        "k_tiles": 32 * 1024,
        "v_tiles": 64 * 1024,
    }
    assert views["k_tiles"].buffer_size == views["v_tiles"].buffer_size == 32 * 1024
    assert views["o_tiles"].buffer_size == 16 * 1024
    without_aliasing = smem.plan_without_aliasing()
    assert not without_aliasing.ok
    # O's store overlapping the next tile defers the release of the stage under O.
    assert aliased.overlap_o_store
    with pytest.raises(ValueError, match="overlap_o_store releases .* it needs O over a K/V"):
        aliased.replace(alias_o=False, o_over_kv=False)
    unaliased_3_stages = aliased.replace(alias_o=False, o_over_kv=False, overlap_o_store=False)
    too_big = "needs 262144 bytes of shared memory, more than the target's limit of 232448 bytes"
    with pytest.raises(CompilationError, match=too_big):
        fa.smem_plan(unaliased_3_stages, 128)
    with pytest.raises(CompilationError, match=too_big):
        fa.compile_for_hopper(unaliased_3_stages, 128)
    with pytest.raises(ValueError, match="o_over_kv places O over a K/V stage"):
        aliased.replace(alias_o=False)
    # O stored during the next tile's first S: the bytes under it are released as
    # overlap_o_store releases them.
    with pytest.raises(ValueError, match="store_o_during_next_s .* needs overlap_o_store=True"):
        aliased.replace(overlap_o_store=False, store_o_during_next_s=True)
    assert any(config.store_o_during_next_s for config in fa.autotune_space(128))
    # Q read into registers frees its buffer for the next tile's Q: O cannot take it.
    assert aliased.q_in_registers
    with pytest.raises(ValueError, match="q_in_registers frees Q's buffer .* O cannot lie over Q"):
        aliased.replace(o_over_kv=False)
    best, rejected = fa.unaliased_search(128)
    assert best is unaliased
    assert [(config.num_stages, config.alias_o) for config, _ in rejected] == [(3, False)]
    assert too_big in rejected[0][1]


@pytest.mark.parametrize("head_dim", [64, 128])
def test_hopper_attention_tail_balancing_is_tuned_with_a_causal_mask_only(head_dim):
    """balance_tail changes how a causal grid's last rounds are dealt (_work_units): the
    space has it, and the tuner drops it without a mask, where the kernel is the same."""
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    configs = fa.autotune_configs(head_dim)
    balanced = [config for config in configs if config.kwargs["BALANCE_TAIL"]]
    assert balanced and all(fa.config_of(config).balance_tail for config in balanced)
    assert "balance_tail" in repr(fa.config_of(balanced[0]))
    assert fa.causal_only_pruned(configs, {}, HEAD_DIM=head_dim, CAUSAL=True) == configs
    without_mask = fa.causal_only_pruned(configs, {}, HEAD_DIM=head_dim, CAUSAL=False)
    assert without_mask == [config for config in configs if config not in balanced]


def test_hopper_attention_two_ctas_an_sm_share_its_registers():
    """A CTA's share of the SM's 64K registers: the launch count lets two CTAs an SM hold
    all their threads (compile option maxnreg), and the consumers' count after setmaxnreg
    is what the loader leaves of the share; with one CTA an SM, the counts the kernel had."""
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    assert fa.default_config(128).registers[1] == 240
    assert fa.default_config(64).registers[1] == 160
    assert fa.default_config(128).compile_options == {"num_warps": 4, "enable_fp_fusion": True}
    two = next(c for c in fa.autotune_space(64) if c.ctas_per_sm == 2)
    launch, consumer = two.registers
    assert (launch, consumer) == (80, 112)
    assert 2 * launch * 3 * 128 <= 65536
    assert two.compile_options == {"num_warps": 4, "enable_fp_fusion": True, "maxnreg": 80}
    assert two.kernel_arguments()["CONSUMER_REGISTERS"] == 112
    assert repr(two).endswith(" ctas_per_sm=2")
    assert fa.config_of(fa.HOST.triton_config(two)) == two
    with pytest.raises(ValueError, match="ctas_per_sm must be 1 or 2, got 3"):
        two.replace(ctas_per_sm=3)
    with pytest.raises(ValueError, match="leaves a consumer thread 72 registers"):
        two.replace(block_m=192, consumers=3)
    with pytest.raises(ValueError, match="2 over 128-key blocks do not"):
        two.replace(block_n=128)


@without_gpu
def test_hopper_script_compiles_without_gpu(capsys):
    assert run_tutorial("hopper_flash_attention.py") == 0
    out = capsys.readouterr().out
    assert "SMEM region 229376 bytes" in out
    assert "k_tiles  3 x [128, 128] 16-bit: offset  32768, 32768 bytes per buffer" in out
    assert (
        "without aliasing (the planner's plan of the same buffers, none sharing bytes) they need "
        "262144 bytes (256 KiB): does not fit" in out
    )
    assert "stages=3 alias_o=False q_in_registers does not compile: " in out
    assert "best configuration without aliasing: BLOCK_M=128 BLOCK_N=128 stages=2" in out
    assert "No Hopper GPU: compiling for sm_90a only." in out


@pytest.mark.parametrize("head_dim", [64, 128])
def test_blackwell_kernel_compiles_with_its_tmem_plan(head_dim):
    bw = importlib.import_module("tlx_kernels.blackwell.flash_attention")
    plans = bw.spec_plans(head_dim, bw.num_stages(head_dim))
    assert list(plans) == ["smem", "qk_storage", "o_tiles_region"]
    qk, o_region, smem = plans["qk_storage"], plans["o_tiles_region"], plans["smem"]
    qk_plan, o_plan = qk.plan, o_region.plan
    assert qk_plan.ok and o_plan.ok and o_region.private
    views = views_by_name(qk)
    # S of a group is 128 fp32 columns; P (fp16, two per column) and alpha, l, m lie over it.
    assert qk_plan.region_size == 2 * 128
    assert views["qk_tiles"].scale * views["qk_tiles"].buffer_size == 128
    assert [
        views[name].offset for name in ("qk_tiles", "p_tiles", "alpha_tiles", "l_tiles", "m_tiles")
    ] == [0, 0, 64, 65, 66]
    # Slice s of group g's P sits right after slice s - 1 (slices are contiguous).
    p_view = views["p_tiles"]
    assert [p_view.slot_of(i) for i in range(4)] == [0, 1, 4, 5]
    tmem_budget = tlx.kernel_budget(plans.values(), "sm_100a").storage(tlx.storage_kind.tmem)
    assert tmem_budget.used_units == qk_plan.region_size + o_plan.region_size
    assert tmem_budget.fits

    compiled = bw.compile_for_blackwell(head_dim, causal=True)
    ttgir = compiled.asm["ttgir"]
    assert compiled.asm["cubin"]
    tmem = {name: (int(rows), int(cols)) for name, rows, cols in TMEM_ALLOC.findall(ttgir)}
    assert tmem == {
        "qk_storage": (128, qk_plan.region_size),
        "o_tiles_region": (128, o_plan.region_size),
    }
    shapes = view_shapes(ttgir)
    assert shapes["qk_tiles"] == [views["qk_tiles"].slots, 128, 128]
    assert shapes["p_tiles"] == [views["p_tiles"].slots, 128, 64]
    assert_smem_backing_matches(ttgir, smem.plan)


def test_blackwell_stages_are_the_most_that_fit():
    bw = importlib.import_module("tlx_kernels.blackwell.flash_attention")
    assert bw.num_stages(64) == bw.MAX_STAGES
    assert bw.num_stages(128) == 2
    with pytest.raises(CompilationError, match="needs 262144 bytes of shared memory"):
        bw.spec_plans(128, 3)


@without_gpu
def test_blackwell_script_prints_plans(capsys):
    assert run_tutorial("blackwell_flash_attention.py") == 0
    out = capsys.readouterr().out
    assert "alpha_tiles 2 x [128, 1]: column offset  64" in out
    assert "CTA total 512 of 512 columns" in out
    assert "SMEM spec smem, 2 K/V stages: 196608 bytes" in out
    assert out.count("compiled for sm_100a") == 2


@pytest.mark.parametrize(
    ("shapes", "dtype", "message"),
    [
        (
            [(1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 32, 64)],
            torch.float16,
            r"q, k, v must share one \(batch, heads, seq_len, head_dim\) shape, got "
            r"\(1, 2, 64, 64\), \(1, 2, 64, 64\), \(1, 2, 32, 64\)",
        ),
        (
            [(2, 64, 64)] * 3,
            torch.float16,
            r"must share one \(batch, heads, seq_len, head_dim\) shape, got \(2, 64, 64\)",
        ),
        (
            [(1, 2, 64, 64)] * 3,
            torch.float32,
            "q, k, v must all be float16 or bfloat16, got torch.float32",
        ),
        ([(1, 2, 64, 96)] * 3, torch.float16, r"head_dim must be one of \(64, 128\), got 96"),
    ],
)
def test_hopper_attention_refuses_bad_inputs(shapes, dtype, message):
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    q, k, v = (torch.zeros(shape, dtype=dtype) for shape in shapes)
    with pytest.raises(ValueError, match=message):
        fa.attention(q, k, v, causal=False)


def test_blackwell_attention_refuses_head_dim():
    bw = importlib.import_module("tlx_kernels.blackwell.flash_attention")
    q = torch.zeros(1, 2, 64, 32, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"head_dim must be one of \(64, 128\), got 32"):
        bw.attention(q, q, q, causal=False)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--runs", "10"], "--runs must be at least 50"),
        (["--grid", "--seq-len", "0"], "--seq-len must be at least 1 and at most --tokens"),
        (
            ["--grid", "--seq-len", "512", "1024", "--tokens", "768"],
            "--seq-len must be at least 1 and at most --tokens (768), got [512, 1024]",
        ),
    ],
)
def test_bench_refuses_bad_arguments(monkeypatch, capsys, arguments, message):
    bench = importlib.import_module("flash_attention")
    monkeypatch.setattr(sys, "argv", ["flash_attention.py", *arguments])
    with pytest.raises(SystemExit):
        bench.main()
    assert message in capsys.readouterr().err


def test_two_cta_accumulator_is_planned_per_cta():
    """A [256, 128] float32 accumulator of a cta_group::2 MMA is 128 columns in each CTA of
    the pair; its fp16 copy shares them. The kernel compiles with num_ctas=2 and allocates
    the planned region."""
    two_cta = importlib.import_module("tlx_kernels.blackwell.two_cta_mma")
    (tmem,) = two_cta.spec_plans()
    assert tmem.plan.ok
    assert [(b.layout.cta_split_m, b.layout.cta_split_n) for b in tmem.buffers] == [(2, 1)] * 2
    assert tmem.plan.region_size == 128
    assert tmem.plan.backing_block == (128, 128) and tmem.plan.backing_shape == (256, 128)
    views = views_by_name(tmem)
    assert (views["acc"].buffer_size, views["acc_half"].buffer_size) == (128, 64)

    compiled = two_cta.compile_for_blackwell()
    ttgir = compiled.asm["ttgir"]
    assert TMEM_ALLOC.findall(ttgir) == [("tmem", "256", "128")]
    assert "two_ctas" in ttgir and compiled.asm["cubin"]
    assert compiled.metadata.tmem_size == tmem.plan.region_size


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["attention", "cublas", "512", "128"], "attention takes ours or cudnn and two sizes"),
        (["attention", "ours", "512"], "attention takes ours or cudnn and two sizes"),
        (["gemm", "cudnn", "1024", "1024", "1024"], "gemm takes ours or cublas and three sizes"),
        (["gemm", "ours", "1024", "1024"], "gemm takes ours or cublas and three sizes"),
    ],
)
def test_profile_call_refuses_a_contender_it_cannot_run(monkeypatch, capsys, argv, message):
    bench = importlib.import_module("profile_call")
    monkeypatch.setattr(sys, "argv", ["profile_call.py", *argv])
    with pytest.raises(SystemExit):
        bench.main()
    assert message in capsys.readouterr().err


def test_profile_call_reads_a_configuration():
    bench = importlib.import_module("profile_call")
    assert bench._config_fields("128,128,3,o_over_kv=True,q_buffers=2") == (
        [128, 128, 3],
        {"o_over_kv": True, "q_buffers": 2},
    )


def test_direct_launch_copies_descriptors_and_orders_the_configuration_arguments():
    """tlx_kernels.launch.DirectLaunch on the CPU: the templates keep no tensor, a copy takes the
    new tensor's shape and strides with the template's block and layout, and the arguments
    after the call's are the kernel's remaining parameters in their order."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    common = importlib.import_module("tlx_kernels.launch")
    fa = importlib.import_module("tlx_kernels.hopper.attention")
    layout = importlib.import_module("tlx_kernels.hopper.attention_common").tile_layout(16)
    q3 = torch.zeros(6, 100, 64, dtype=torch.float16)
    descriptor = TensorDescriptor.from_tensor(q3, [1, 64, 64], layout)
    template = common._descriptor_template(descriptor)
    assert template.base is None and descriptor.base is q3
    other = torch.zeros(4, 256, 64, dtype=torch.float16)
    copy = common._copy_descriptor(template, other)
    assert copy.base is other and template.base is None
    assert (copy.shape, copy.strides) == ([4, 256, 64], [256 * 64, 64, 1])
    assert copy.block_shape == [1, 64, 64] and copy.layout == layout

    class Compiling:
        """attention_fwd_kernel's parameters; warmup stands for the compile."""

        params = fa.attention_fwd_kernel.params

        def warmup(self, *arguments, grid, **keywords):
            return ("compiled", arguments, grid, keywords)

    config = fa.default_config(64)
    arguments = {
        **config.kernel_arguments(),
        "HEAD_DIM": 64,
        "CAUSAL": True,
        "num_warps": 4,
        "lse_ptr": None,
        "kv_group": None,
    }
    arguments_by_name = dict(arguments)
    call = dict(qk_scale=0.18, seq_len=100, batch_heads=6)
    launch = common.DirectLaunch.compile(
        Compiling(), config, (132,), (descriptor,) * 4, call, arguments
    )
    assert launch.kernel[0] == "compiled" and launch.grid == (132, 1, 1)
    assert launch.kernel[3] == {**call, **arguments}
    assert all(template.base is None for template in launch.templates)
    names = [param.name for param in fa.attention_fwd_kernel.params][7:]
    assert launch.config_arguments == tuple(arguments[name] for name in names)
    assert names[:2] == ["BLOCK_M", "BLOCK_N"] and "num_warps" not in names
    # A launch's arguments: a copy of each descriptor for the call's tensor, then the call's
    # arguments and the configuration's, in the kernel's order.
    arguments = launch.arguments((other,) * 4, (0.18, 100, 6))
    assert all(descriptor.base is other for descriptor in arguments[:4])
    assert arguments[4:] == (0.18, 100, 6, *launch.config_arguments)
    # The kernel that saves the LSE: each call sets lse_ptr too, which the kernel takes after
    # its constexprs; the call's value goes there.
    lse = torch.zeros(6, 100)
    fixed = {name: value for name, value in arguments_by_name.items() if name != "lse_ptr"}
    launch = common.DirectLaunch.compile(
        Compiling(), config, (132,), (descriptor,) * 4, {**call, "lse_ptr": lse}, fixed
    )
    arguments = launch.arguments((other,) * 4, (0.18, 100, 6, lse))
    params = [param.name for param in fa.attention_fwd_kernel.params]
    assert arguments[params.index("lse_ptr")] is lse
    assert arguments[params.index("kv_group")] is None
    assert arguments[4:7] == (0.18, 100, 6)
