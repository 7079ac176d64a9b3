"""The Hopper attention backward's variants outside the tuning spaces on the CPU: persistent
CTAs of its two kernels (tlx_kernels/hopper/attention_backward_kernel.py and attention_dq.py;
docs/attention-backward.md, "Persistent CTAs") and K and V in registers. The configurations
name what a second K/V or Q slot needs, and K and V in registers; a persistent launch takes
a CTA an SM; the persistent variants fit with their epilogues over their slots, compile and
loop over the CTA's tiles, and the hazard check finds them clean on CTAs that take several
tiles in turn. FA3's split of dQ with one staging tile a consumer (``split_variants``)
holds a deeper ring in the same bytes and retires each reduction before staging the next;
the split a step late (``late_dq``) issues each step's dQ in the next; both check clean,
and without the wait for the other consumer's products the late split's check reports the
race. Under a causal mask the late split's grid of a tile a CTA ends key block by key
block (``Config.causal_tile_order``). (The later turns' variants: test_attention_backward.py,
beside the space's turns.)"""

import collections
import dataclasses
import functools
import re
import runpy

import pytest
import tlx
import torch
from _helpers import REPOSITORY, whole_space_on_newest_triton
from tlx_kernels.hopper import attention_backward as bwd
from tlx_kernels.hopper import attention_backward_config, attention_common, attention_dq
from triton.compiler.errors import CompilationError
from triton.experimental import gluon

# (seq_len, group, batch * KV heads (or heads), program, programs) of the CTAs checked:
# every tile of two heads, every other tile of a grouped head, every third of two heads of
# four blocks, one row a head, a CTA of one tile.
SEVERAL_TILES = (
    (300, 1, 2, 0, 1),
    (300, 2, 1, 1, 2),
    (512, 1, 2, 1, 3),
    (1, 1, 3, 0, 2),
    (200, 1, 1, 0, 1),
)


def ctas_of_several_tiles(heads_name):
    return [
        {
            "values": {"seq_len": seq_len, "group": group, heads_name: heads},
            "program_id": (program, 0, 0),
            "num_programs": (programs, 1, 1),
        }
        for seq_len, group, heads, program, programs in SEVERAL_TILES
    ]


def assert_clean(host, config, head_dim, causal, heads_name):
    source = host.kernel_source(config, head_dim, causal=causal)
    ctas = ctas_of_several_tiles(heads_name)
    reports = tlx.check_hazards_at(source, host.SM90A, config.compile_options, ctas=ctas)
    for cta, report in zip(ctas, reports, strict=True):
        assert report.result == "clean", (config, cta, report.describe())
        assert report.accesses > 0 and not report.unmodelled


def one_tile_form(config, slots):
    """The configuration a persistent variant comes from: a CTA a tile, one slot (and the
    backward's epilogue over K and V)."""
    fields = {"persistent": False, slots: 1}
    if hasattr(config, "epilogue_over_scores"):
        fields["epilogue_over_scores"] = False
    return config.replace(**fields)


def assert_deepest_beside_two_slots(host, variants, head_dim, slots):
    """Each variant of two slots keeps the ring of the one-slot variant it pairs with (the
    same but for the ring's depth), or has the deepest ring that fits beside them."""

    def pairing(config):
        fields = dataclasses.asdict(config)
        return tuple(value for field, value in fields.items() if field not in ("num_stages", slots))

    one_slot = {pairing(config): config for config in variants if getattr(config, slots) == 1}
    for config in variants:
        if getattr(config, slots) == 1:
            continue
        paired = one_slot[pairing(config)]
        if config.num_stages != paired.num_stages:
            with pytest.raises(CompilationError):
                host.smem_plan(config.replace(num_stages=config.num_stages + 1), head_dim)


@pytest.mark.parametrize(
    ("make", "slots", "loaded"),
    [
        (functools.partial(bwd.Config, 64, 128, 4), "kv_buffers", "K and V"),
        (functools.partial(attention_dq.DqConfig, 128, 64, 4), "q_buffers", "Q and dO"),
    ],
)
def test_persistent_configurations_name_what_they_need(make, slots, loaded):
    """A second slot (the backward's K/V, the dQ kernel's Q) without a persistent CTA, which
    would have no next tile to load, and any other number of slots, are refused with what
    they need."""
    with pytest.raises(ValueError, match=f"{slots}=2 loads .*{loaded}.* needs persistent=True"):
        make(**{slots: 2})
    with pytest.raises(ValueError, match=f"{slots} must be 1 or 2, got 3"):
        make(persistent=True, **{slots: 3})
    config = make(persistent=True, **{slots: 2})
    assert repr(config).endswith(f" persistent {slots}=2")
    assert config.kernel_arguments()[slots.upper()] == 2
    assert config.kernel_arguments()["PERSISTENT"] is True


def test_keys_in_registers_needs_scores_by_keys():
    """K and V are the A operands of S^T and dP^T, which registers can hold; with S by
    queries they are B operands, read from SMEM: refused with what it needs."""
    with pytest.raises(ValueError, match="keys_in_registers .* needs scores_by_query=False"):
        bwd.Config(64, 128, 4, p_in_smem=True, scores_by_query=True, keys_in_registers=True)
    config = bwd.Config(64, 128, 4, keys_in_registers=True)
    assert repr(config).endswith(" keys_in_registers")
    assert config.kernel_arguments()["KEYS_IN_REGISTERS"] is True


def test_a_persistent_launch_takes_an_sm_a_cta(monkeypatch):
    """A CTA a tile, or, persistent, one an SM while there are more tiles."""
    monkeypatch.setattr(attention_common, "sm_count", lambda device: 132)
    assert attention_common.launch_grid(8 * 64, False, "cuda") == (8 * 64,)
    assert attention_common.launch_grid(8 * 64, True, "cuda") == (132,)
    assert attention_common.launch_grid(32, True, "cuda") == (32,)


# Each kernel: its module, its variants and space, its slots' field, the (buffer, staging
# tile over it) pairs of a slot, and the variants its space takes.
KERNELS = {
    "backward": (
        bwd,
        attention_backward_config.persistent_variants,
        bwd.autotune_space,
        "kv_buffers",
        (("k_tiles", "dk_tiles"), ("v_tiles", "dv_tiles")),
        attention_backward_config.persistent_winners,
    ),
    "dq": (
        attention_dq,
        attention_dq.persistent_variants,
        attention_dq.autotune_space,
        "q_buffers",
        (("q_tiles", "dq_tiles"),),
        attention_dq.persistent_winners,
    ),
}


@whole_space_on_newest_triton
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_persistent_variants_fit_and_loop_over_tiles(kernel, head_dim):
    """Each kernel's persistent variants (``persistent_variants``, in its space only where
    they won: ``persistent_winners``) come from configurations of the space
    (with two slots, maybe with a shallower ring), with one or two slots; each fits in 224
    KiB with the slots' epilogue tiles over their buffers (dK and dV over K and V, dQ over
    Q), compiles, and loops over the CTA's tiles (the program count read by the loader and
    both consumers), where a configuration of one tile a CTA (the first variant's) reads no
    program count."""
    host, persistent_variants, autotune_space, slots, staged, winners = KERNELS[kernel]
    variants = persistent_variants(head_dim)
    space = set(autotune_space(head_dim))
    assert all(config.persistent for config in variants)
    assert set(variants) & space == set(winners(head_dim))
    assert {getattr(config, slots) for config in variants} == {1, 2}
    for config in variants:
        base = one_tile_form(config, slots)
        assert base in space or getattr(config, slots) == 2, config
        smem = host.smem_plan(config, head_dim)
        assert smem.plan.size_bytes <= 224 * 1024, config
        views = dict(zip((b.name for b in smem.buffers), smem.plan.views, strict=True))
        buffers = {b.name: b for b in smem.buffers}
        for buffer, staging in staged:
            assert buffers[buffer].shape[0] == 2 * getattr(config, slots)
            if getattr(config, "epilogue_over_scores", False):
                continue  # test_the_epilogue_over_the_scores_frees_k_and_v_before_it
            for index in range(2 * getattr(config, slots)):
                assert views[buffer].start_of(index) == views[staging].start_of(index)
        # Causal: the persistent CTA's tiles by block (attention_common.head_and_block).
        ttgir = host.compile_for_hopper(config, head_dim, causal=True).asm["ttgir"]
        assert ttgir.count("tt.get_num_programs") == 3, config
    # A configuration of one tile a CTA (the first variant's) does not loop.
    base = one_tile_form(variants[0], slots)
    ttgir = host.compile_for_hopper(base, head_dim, causal=True).asm["ttgir"]
    assert "tt.get_num_programs" not in ttgir
    assert_deepest_beside_two_slots(host, variants, head_dim, slots)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("causal", [False, True])
def test_persistent_ctas_are_free_of_hazards_across_tiles(kernel, causal):
    """Each kernel's persistent variants are free of hazards on CTAs that take several tiles
    in turn (``SEVERAL_TILES``: one slot's tiles reloading it, or the two slots taking
    turns). A slot is reloaded only once both consumers' epilogues have stored from it
    (``kv_free``, ``q_free``): without the dQ kernel's wait the loader's copies overwrite the
    epilogue's staging wherever a tile has fewer key blocks than the ring has stages (else
    the ring's own barriers order them)."""
    host, persistent_variants = KERNELS[kernel][0:2]
    heads = {"backward": "batch_kv_heads", "dq": "batch_heads"}[kernel]
    for head_dim in bwd.HEAD_DIMS:
        for config in persistent_variants(head_dim):
            assert_clean(host, config, head_dim, causal, heads)


def test_the_epilogue_over_the_scores_frees_k_and_v_before_it():
    """``epilogue_over_scores`` (the persistent late split at HEAD_DIM 128): consumer c's dK
    and dV tiles over its two dS buffers, its P buffer and its dQ staging tile, no byte of
    K or V under them, in the bytes of the same configuration with the epilogue over K and
    V (both check clean on CTAs of several tiles, below)."""
    (config,) = [
        c for c in attention_backward_config.persistent_variants(128) if c.epilogue_over_scores
    ]
    over_kv = config.replace(epilogue_over_scores=False)
    smem = bwd.smem_plan(config, 128)
    assert smem.plan.size_bytes == bwd.smem_plan(over_kv, 128).plan.size_bytes == 208 * 1024
    views = dict(zip((b.name for b in smem.buffers), smem.plan.views, strict=True))
    counts = {b.name: b.shape[0] for b in smem.buffers}
    assert counts["dk_tiles"] == counts["dv_tiles"] == 2
    tile = 64 * 128 * 2

    def extent(name, index, size):
        return range(views[name].start_of(index), views[name].start_of(index) + size)

    for consumer in (0, 1):
        dk, dv = extent("dk_tiles", consumer, tile), extent("dv_tiles", consumer, tile)
        assert dk.stop == dv.start
        under = [
            extent("ds_tiles", 2 * consumer, tile // 2),
            extent("ds_tiles", 2 * consumer + 1, tile // 2),
            extent("p_tiles", consumer, tile // 2),
            extent("dq_tiles", consumer, 64 * 64 * 4),
        ]
        assert dk.start == under[0].start and dv.stop <= under[-1].stop
        assert all(u.stop == w.start for u, w in zip(under, under[1:], strict=False))
        for name in ("k_tiles", "v_tiles"):
            for index in (0, 1):
                kv = extent(name, index, tile)
                assert kv.stop <= dk.start or kv.start >= dv.stop


def test_the_epilogue_over_the_scores_waits_for_the_other_consumer(monkeypatch):
    """Without the wait for the other consumer's last dQ products over this consumer's dS
    buffers (``wait_for_late_dq_on_own``) the epilogue's dK and dV overwrite dS buffers the
    other consumer still reads: the check reports it."""
    from tlx_kernels.hopper import attention_backward_kernel

    @gluon.jit
    def no_wait(state, index, consumer):
        pass

    monkeypatch.setattr(attention_backward_kernel, "wait_for_late_dq_on_own", no_wait)
    (config,) = [
        c for c in attention_backward_config.persistent_variants(128) if c.epilogue_over_scores
    ]
    source = bwd.kernel_source(config, 128, causal=False)
    (cta,) = ctas_of_several_tiles("batch_kv_heads")[:1]
    (report,) = tlx.check_hazards_at(source, bwd.SM90A, config.compile_options, ctas=[cta])
    assert report.result == "hazards"
    assert '"dk_tiles"' in report.describe() or '"dv_tiles"' in report.describe()


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_dq_kernel_computing_delta_stores_it_and_checks_clean(head_dim):
    """The dQ kernel's variants that compute delta (``delta_variants``, outside its space)
    come from configurations of the space, keep their SMEM (delta is made in registers),
    store delta from each consumer where their bases store nothing but by the TMA, and check
    clean on CTAs of one and of several tiles, causal or not."""
    variants = attention_dq.delta_variants(head_dim)
    space = set(attention_dq.autotune_space(head_dim))
    for config in variants:
        base = config.replace(computes_delta=False)
        assert config.computes_delta and config not in space and base in space
        assert attention_dq.smem_plan(config, head_dim) == attention_dq.smem_plan(base, head_dim)
        for causal in (False, True):
            assert_clean(attention_dq, config, head_dim, causal, "batch_heads")
    ttgirs = [
        attention_dq.compile_for_hopper(config, head_dim).asm["ttgir"]
        for config in (variants[0], variants[0].replace(computes_delta=False))
    ]
    assert [ttgir.count("tt.store") for ttgir in ttgirs] == [2, 0]


def test_a_dq_kernel_computing_delta_needs_o():
    """compute_dq with a configuration that computes delta and no O, or an O of another
    shape, names the configuration and the shapes, before any launch."""
    q3 = torch.empty(8, 300, 64)
    k3 = torch.empty(4, 300, 64)
    config = attention_dq.DqConfig(128, 128, 2, computes_delta=True)
    arguments = (q3, k3, k3, q3, None, None, 0.125, False, config)
    with pytest.raises(ValueError, match=r"computes_delta.*\(8, 300, 64\), got None"):
        attention_dq.compute_dq(*arguments)
    with pytest.raises(ValueError, match=r"got \(8, 299, 64\)"):
        attention_dq.compute_dq(*arguments, o3=torch.empty(8, 299, 64))


def test_dq_staging_tiles_name_what_they_count():
    """``dq_staging_tiles`` counts the staging tiles of the passes that reduce dQ by TMA from a
    consumer's tiles in turn: refused with another pass (naming it) or another count."""
    split = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    with pytest.raises(ValueError, match="with dq_pass 'tma_add' or 'split', got dq_staging_ti"):
        bwd.Config(64, 128, 4, dq_pass="separate", dq_staging_tiles=1)
    with pytest.raises(ValueError, match="dq_staging_tiles=1 with dq_pass='alternate'"):
        bwd.Config(64, 128, 8, dq_pass="alternate", pipelined=True, dq_staging_tiles=1)
    with pytest.raises(ValueError, match="dq_staging_tiles must be 1 or 2, got 3"):
        bwd.Config(64, 128, 2, **split, dq_staging_tiles=3)
    config = bwd.Config(64, 128, 2, **split, dq_staging_tiles=1)
    assert repr(config).endswith(" pipelined dq_staging_tiles=1")
    assert config.kernel_arguments()["DQ_STAGING_TILES"] == 1
    assert bwd.Config(64, 128, 2, **split).kernel_arguments()["DQ_STAGING_TILES"] is None


def test_epilogue_over_scores_needs_the_persistent_late_split():
    """``epilogue_over_scores`` without the late split, a persistent CTA or aliasing is
    refused, naming what it needs and what it got."""
    late = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    late.update(dq_staging_tiles=1, late_dq=True)
    for wrong, got in [
        (dict(late_dq=False), "late_dq=False persistent=True"),
        (dict(persistent=False), "persistent=False alias=True"),
        (dict(alias=False), "alias=False"),
    ]:
        fields = {**late, "persistent": True, **wrong}
        with pytest.raises(ValueError, match=f"needs dq_pass='split', late_dq=True.*{got}"):
            bwd.Config(64, 128, 2, **fields, epilogue_over_scores=True)
    with pytest.raises(ValueError, match="got dq_pass='separate'"):
        bwd.Config(64, 128, 2, dq_pass="separate", persistent=True, epilogue_over_scores=True)
    config = bwd.Config(64, 128, 2, **late, persistent=True, epilogue_over_scores=True)
    assert repr(config).endswith(" late_dq epilogue_over_scores")
    assert config.kernel_arguments()["EPILOGUE_OVER_SCORES"] is True


def test_late_dq_needs_the_split():
    """``late_dq`` moves the split's products to the next step: refused with another dq_pass,
    named in the configuration and passed to the kernel."""
    with pytest.raises(ValueError, match="late_dq .* as dq_pass='split' sums them: got dq_pass="):
        bwd.Config(64, 128, 2, dq_pass="tma_add", late_dq=True)
    split = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    config = bwd.Config(64, 128, 2, **split, dq_staging_tiles=1, late_dq=True)
    assert repr(config).endswith(" pipelined dq_staging_tiles=1 late_dq")
    assert config.kernel_arguments()["LATE_DQ"] is True


def test_statistics_ahead_needs_the_turns():
    """``statistics_ahead`` has the turns' steps load the next step's statistics: refused with
    another dq_pass (the late split's steps always do), named in the configuration and
    passed to the kernel."""
    split = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    with pytest.raises(ValueError, match="statistics_ahead .* needs dq_pass='alternate', got "):
        bwd.Config(64, 128, 2, **split, late_dq=True, statistics_ahead=True)
    config = bwd.Config(64, 128, 8, dq_pass="alternate", pipelined=True, statistics_ahead=True)
    assert repr(config).endswith(" dq=alternate pipelined statistics_ahead")
    assert config.kernel_arguments()["STATISTICS_AHEAD"] is True
    assert bwd.Config(64, 128, 8).kernel_arguments()["STATISTICS_AHEAD"] is False


def test_dk_from_registers_needs_the_turns():
    """``dk_from_registers`` has the turns' dK take dS^T from registers: refused with another
    dq_pass, named in the configuration and passed to the kernel."""
    split = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    with pytest.raises(ValueError, match="dk_from_registers .* needs dq_pass='alternate', or "):
        bwd.Config(64, 128, 2, **split, dk_from_registers=True)
    turns = dict(dq_pass="alternate", pipelined=True, staged_statistics=True)
    config = bwd.Config(64, 128, 4, **turns, dk_from_registers=True)
    assert repr(config).endswith(" pipelined staged_statistics dk_from_registers")
    assert config.kernel_arguments()["DK_FROM_REGISTERS"] is True
    assert bwd.Config(64, 128, 8).kernel_arguments()["DK_FROM_REGISTERS"] is False


def _but_the_ring(config):
    """``config``'s fields but its ring's depth and its staging tiles."""
    fields = dataclasses.asdict(config)
    return {
        field: fields[field] for field in fields if field not in ("num_stages", "dq_staging_tiles")
    }


def _staging_tiles(config, head_dim):
    """(The staging tiles' count, the plan's bytes) of ``config``'s SMEM plan."""
    smem = bwd.smem_plan(config, head_dim)
    (staging,) = (buffer for buffer in smem.buffers if buffer.name == "dq_tiles")
    return staging.shape[0], smem.plan.size_bytes


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_split_variants_hold_a_deeper_ring_in_the_same_bytes(head_dim):
    """Each variant of ``split_variants`` is a split of the space but for its one staging
    tile a consumer and, beside it, a ring as deep as fits: one stage more than the split of
    two tiles, whose ring cannot deepen (the space's at HEAD_DIM 64; at 128, where the space
    keeps one tile alone, its two stages). The planner prices it (224 KiB at most), and its
    kernel retires each reduction before staging the next (``tma.store_wait(0)``, where two
    tiles a consumer leave one in flight). The two that won on an H100 (HEAD_DIM 128, two
    stages, one tile, and the same a step late) are in the space too."""
    variants = attention_backward_config.split_variants(head_dim)
    space = bwd.autotune_space(head_dim)
    winners = {c for c in variants if c.num_stages == 2} if head_dim == 128 else set()
    assert variants and set(variants) & set(space) == winners
    two_tiles = [c for c in space if c.dq_pass == "split" and c.dq_staging_tiles is None]
    if head_dim == 128:
        assert not two_tiles
        two_tiles = [winner.replace(dq_staging_tiles=None, late_dq=False) for winner in winners]
    variants = [config for config in variants if not config.late_dq]
    for config in variants:
        base = next(c for c in two_tiles if _but_the_ring(c) == _but_the_ring(config))
        assert _staging_tiles(config, head_dim)[0] == 2, config
        assert _staging_tiles(base, head_dim)[0] == 4, base
        with pytest.raises(CompilationError):
            bwd.smem_plan(base.replace(num_stages=base.num_stages + 1), head_dim)
        deepest = max(c.num_stages for c in variants if c.block_m == config.block_m)
        assert deepest == base.num_stages + 1, config
        assert _staging_tiles(config, head_dim)[1] <= 224 * 1024, config
        if config.num_stages == deepest:
            with pytest.raises(CompilationError):
                bwd.smem_plan(config.replace(num_stages=deepest + 1), head_dim)
        ttgirs = [
            bwd.compile_for_hopper(c, head_dim, causal=True).asm["ttgir"] for c in (config, base)
        ]
        pendings = [set(re.findall(r"async_tma_store_wait \{pendings = (\d+)", t)) for t in ttgirs]
        assert pendings[0] == {"0"} and "1" in pendings[1], config


# The late split's (staging tiles, plan bytes) by head dim: one tile a consumer and two
# stages at HEAD_DIM 128, two and seven at 64.
LATE_SPLIT_SMEM = {128: (2, 208 * 1024), 64: (4, 224 * 1024)}


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_the_late_split_issues_each_steps_dq_in_the_next(head_dim, causal):
    """``late_dq``: two dS buffers a consumer beside the staging tiles and the ring as deep as
    fits (``LATE_SPLIT_SMEM``); each step waits for S, dP, then dQ's products with dK left in
    flight, and reduces the previous step's dQ (zeros before the tile's first), the last
    step's after the loop: one reduction more a consumer than the split's, whose steps
    reduce their own."""
    (late,) = [c for c in attention_backward_config.split_variants(head_dim) if c.late_dq]
    split = next(c for c in bwd.autotune_space(head_dim) if c.dq_pass == "split")
    smem = bwd.smem_plan(late, head_dim)
    counts = {buffer.name: buffer.shape[0] for buffer in smem.buffers}
    assert counts["ds_tiles"] == 4
    assert (counts["dq_tiles"], smem.plan.size_bytes) == LATE_SPLIT_SMEM[head_dim]
    with pytest.raises(CompilationError):
        bwd.smem_plan(late.replace(num_stages=late.num_stages + 1), head_dim)
    steps = 2 if causal else 1
    ttgirs = [
        bwd.compile_for_hopper(c, head_dim, causal=causal).asm["ttgir"] for c in (late, split)
    ]
    reductions = [ttgir.count("ttng.async_tma_reduce add,") for ttgir in ttgirs]
    assert reductions == [2 * (steps + 1), 2 * steps]
    waits = re.findall(r"warp_group_dot_wait .*\{pendings = (\d)", ttgirs[0])
    assert waits == (["1", "0", "1"] * steps + ["0", "0"]) * 2


def test_the_split_on_keys_needs_its_schedule():
    """dq_pass "split" with S^T is the late split whose P^T and dS^T are dV's and dK's A
    operands from registers (``split_on_keys_variants``): refused without any part of its
    schedule, each field it lacks named; ``Config.splits_on_keys`` names it."""
    split_needs = "'split' is built on the pipelined steps with S by queries"
    on_keys = dict(dq_pass="split", pipelined=True, late_dq=True, staged_statistics=True)
    on_keys_needs = split_needs + ".* or a step late with S\\^T, .*: it needs late_dq=True"
    for fields, named in (
        (dict(p_in_smem=True), "got late_dq=False, p_in_smem=True, staged_statistics=False"),
        (dict(on_keys, dk_from_registers=False), "got dk_from_registers=False"),
        (dict(on_keys, dk_from_registers=True, keys_in_registers=True), "got keys_in_registers"),
        (dict(on_keys, staged_statistics=False, dk_from_registers=True), "got staged_statis"),
    ):
        fields = {"dq_pass": "split", "pipelined": True, **fields}
        with pytest.raises(ValueError, match=on_keys_needs + ".*" + named):
            bwd.Config(64, 128, 4, **fields)
    config = bwd.Config(64, 128, 2, **on_keys, dk_from_registers=True, dq_staging_tiles=1)
    assert config.splits_on_keys and not config.p_in_smem
    by_query = dict(dq_pass="split", pipelined=True, late_dq=True, p_in_smem=True)
    assert not bwd.Config(64, 128, 2, **by_query, scores_by_query=True).splits_on_keys


# (stages, SMEM bytes) of each late split on S^T steps: the ring as deep as fits.
ON_KEYS_SMEM = {128: [(2, 197632), (3, 231424), (2, 197632)], 64: [(8, 217088)]}


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_the_late_split_on_keys_takes_p_and_ds_from_registers(head_dim, causal):
    """``Config.splits_on_keys``: S^T and dP^T, then dV and dK with P^T and dS^T as A operands
    from registers (where the split with S by queries reads both from SMEM), no P buffer,
    each step's statistics in its stage; waits for S^T, dP^T, dV and dK (dQ's two products
    left in flight), dQ; the previous step's dQ reduced, the last step's after the loop, as
    the late split with S by queries does."""
    variants = attention_backward_config.split_on_keys_variants(head_dim)
    assert all(c.splits_on_keys and c.late_dq for c in variants)
    assert [(c.num_stages, bwd.smem_plan(c, head_dim).plan.size_bytes) for c in variants] == (
        ON_KEYS_SMEM[head_dim]
    )
    deepest = max(variants, key=lambda config: config.num_stages)
    assert [c.persistent for c in variants] == [c.epilogue_over_scores for c in variants]
    assert sum(c.persistent for c in variants) == (head_dim == 128)
    counts = {b.name: b.shape[0] for b in bwd.smem_plan(deepest, head_dim).buffers}
    assert "p_tiles" not in counts
    assert (counts["ds_tiles"], counts["statistics_tiles"]) == (4, deepest.num_stages)
    with pytest.raises(CompilationError):
        bwd.smem_plan(deepest.replace(num_stages=deepest.num_stages + 1), head_dim)
    ttgir = bwd.compile_for_hopper(variants[0], head_dim, causal=causal).asm["ttgir"]
    dots = [line for line in ttgir.splitlines() if "ttng.warp_group_dot " in line]
    from_registers = [
        line for line in dots if re.search(r" : tensor<\d+x\d+xf16, #ttg.dot_op", line)
    ]
    steps = 2 if causal else 1
    assert (len(dots), len(from_registers)) == (2 * (6 * steps + 2), 2 * 2 * steps)
    assert ttgir.count("ttng.async_tma_reduce add,") == 2 * (steps + 1)
    waits = re.findall(r"warp_group_dot_wait .*\{pendings = (\d)", ttgir)
    assert waits == (["1", "0", "2", "0"] * steps + ["0", "0"]) * 2


@pytest.mark.parametrize("on_keys", [False, True])
def test_the_late_split_without_its_wait_for_the_other_consumer_races(monkeypatch, on_keys):
    """Without the wait for the other consumer's products over a dS buffer before it is
    rewritten (``_wait_for_late_dq_on``), the check reports the race on the buffer, with S
    by queries and with S^T (``split_on_keys_variants``)."""
    from tlx_kernels.hopper import attention_backward_late_split

    @gluon.jit
    def no_wait(state, step, consumer):
        pass

    monkeypatch.setattr(attention_backward_late_split, "_wait_for_late_dq_on", no_wait)
    if on_keys:
        late = attention_backward_config.split_on_keys_variants(128)[0]
    else:
        (late,) = [c for c in attention_backward_config.split_variants(128) if c.late_dq]
    source = bwd.kernel_source(late, 128, causal=False)
    cta = {"values": {"seq_len": 300, "group": 2, "batch_kv_heads": 1}, "program_id": (0, 0, 0)}
    (report,) = tlx.check_hazards_at(source, bwd.SM90A, late.compile_options, ctas=[cta])
    assert report.result == "hazards"
    assert '"ds_tiles"' in report.describe()


@pytest.mark.parametrize("causal", [False, True])
def test_the_split_variants_are_free_of_hazards(causal):
    """The split's variants, and the late split on S^T steps, are free of hazards on CTAs of
    one and of several Q blocks, grouped heads or not: with one staging tile a consumer, a
    staging tile is rewritten only once the reduction that read it is retired; a step late,
    a dS buffer only once the other consumer's products of its last use are retired."""
    for head_dim in bwd.HEAD_DIMS:
        on_keys = attention_backward_config.split_on_keys_variants(head_dim)
        for config in attention_backward_config.split_variants(head_dim) + on_keys:
            assert_clean(bwd, config, head_dim, causal, "batch_kv_heads")


@pytest.mark.parametrize("head_dim", [64, 128])
def test_the_late_splits_causal_grid_ends_block_by_block(head_dim):
    """``Config.causal_tile_order``: persistent CTAs take the causal key blocks in pairs, the
    late split's grid ends key block by key block (its last TAIL_TILES = 264 tiles' heads),
    every other grid goes head by head; and the kernel computes the tail only where its
    order and the mask ask for it (``head_and_block``'s ``tail_heads`` in its TTGIR)."""
    space = bwd.autotune_space(head_dim)
    orders = collections.Counter(config.causal_tile_order for config in space)
    assert orders["by_pair"] == sum(config.persistent for config in space)
    late = [c for c in space if c.late_dq and not c.persistent]
    assert orders["by_head_then_block"] == len(late) == (1 if head_dim == 128 else 0)
    late_split = attention_backward_config.split_variants(head_dim)[-1]
    assert late_split.late_dq and late_split.causal_tile_order == "by_head_then_block"
    separate = bwd.Config(64, 128, 2, dq_pass="separate", p_in_smem=True, pipelined=True)
    assert separate.causal_tile_order == "by_head"
    for config, causal, tail in (
        (late_split, True, True),
        (late_split, False, False),
        (separate, True, False),
    ):
        ttgir = bwd.compile_for_hopper(config, head_dim, causal=causal).asm["ttgir"]
        assert ("%tail_heads" in ttgir) == tail, (config, causal)


@pytest.mark.parametrize("head_dim", bwd.HEAD_DIMS)
def test_the_split_bench_times_each_variant_beside_the_split_it_comes_from(head_dim, monkeypatch):
    """``bench/attention_backward.py --split`` times the space's splits, each variant of
    ``split_variants`` and the two-stage split of two staging tiles it comes from (which the
    space at HEAD_DIM 128 no longer holds), and the late split on S^T steps, each once."""
    monkeypatch.syspath_prepend(str(REPOSITORY / "bench"))
    bench = runpy.run_path(str(REPOSITORY / "bench" / "attention_backward.py"))
    configs = [config for config, dq_config in bench["split_configs"](head_dim)]
    assert len(set(configs)) == len(configs)
    space = [c for c in bwd.autotune_space(head_dim) if c.dq_pass == "split"]
    variants = attention_backward_config.split_variants(head_dim)
    on_keys = attention_backward_config.split_on_keys_variants(head_dim)
    assert set(space) | set(variants) | set(on_keys) <= set(configs)
    for variant in variants:
        base = variant.replace(num_stages=2, dq_staging_tiles=None, late_dq=False)
        assert base in configs
    bases = [c for c in configs if c not in space and c not in variants and c not in on_keys]
    assert (head_dim == 128) == bool(bases)
