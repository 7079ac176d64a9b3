"""tlx.check_hazards and python -m tlx check: every tutorial kernel is clean; every seeded race
of test/hazards/corpus.py is reported at its two source lines; kernels the check cannot execute
are reported as not checked, never as clean."""

import os
import re

import barrier_reinit
import chunked_writes
import corpus
import kernels
import parity_and_count
import partition_order
import pytest
import tcgen05_shape
import tlx
from _helpers import REPOSITORY, SM90, fill, load_api_example, whole_space_on_newest_triton
from tlx.hazards import check as _hazards
from tlx.report import cli as _cli
from triton.compiler.errors import CompilationError
from triton.experimental.gluon import language as ttgl

TUTORIAL_KERNELS = corpus.TUTORIAL_KERNELS
# The small kernels of the corpus with the flag that keeps their ordering, one module per
# class of issue 47 (chunked writes, barrier re-init, partition order, parity and arrival
# count, tcgen05 shape).
CLASS_SEEDS = (
    *chunked_writes.seeds(),
    *barrier_reinit.seeds(),
    *partition_order.seeds(),
    *parity_and_count.seeds(),
    *tcgen05_shape.seeds(),
)
SMALL_SEEDS = (*kernels.seeds(), *CLASS_SEEDS)
# Triton 3.8 refuses a TMEM slice that starts inside a tile ("The split offset may not touch
# the tile"): tcgen05_shape's shifted accumulator cannot be written there.
REFUSED_BY_TRITON_38 = {"two MMAs of one shape into accumulators at different columns"}


def _params(seeds):
    """``seeds`` as pytest parameters named by their races, those this Triton cannot
    compile skipped."""
    refused = REFUSED_BY_TRITON_38 if tlx.compat.TRITON_VERSION == (3, 8) else set()
    return [
        pytest.param(
            seed,
            id=seed[0],
            marks=pytest.mark.skipif(seed[0] in refused, reason="Triton 3.8 cannot write it"),
        )
        for seed in seeds
    ]


@pytest.mark.parametrize("key", TUTORIAL_KERNELS)
def test_tutorial_kernels_are_clean(key):
    source, target, options, values = corpus.kernel(key)
    report = tlx.check_hazards(source, target, options, values=values)
    assert report.result == "clean", report.describe()
    assert report.accesses > 0 and not report.unmodelled
    assert "no hazard" in report.describe()


def test_small_tutorials_are_clean(tmp_path):
    from tlx_kernels.blackwell import two_cta_mma as blackwell_two_cta_mma

    report = tlx.check_hazards(
        blackwell_two_cta_mma.kernel_source(),
        blackwell_two_cta_mma.SM100A,
        blackwell_two_cta_mma.COMPILE_OPTIONS,
    )
    assert report.clean and report.accesses, report.describe()
    example = load_api_example(tmp_path)
    source = tlx.ASTSource(
        fn=example.share_bytes,
        signature={"words_ptr": "*i32", "halves_ptr": "*i16", "flags_ptr": "*i8"},
        constexprs={"N": 32},
    )
    report = tlx.check_hazards(source, SM90)
    assert report.clean and report.accesses == 10, report.describe()


@pytest.mark.parametrize("seed", corpus.SEEDS, ids=[seed.name for seed in corpus.SEEDS])
def test_seeded_races_are_reported_at_their_lines(seed):
    source, target, options, values = corpus.kernel(seed.kernel)
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    clean = _hazards.check_ttgir(text, spec_plans, values=values)
    assert clean.result == "clean", clean.describe()
    report = _hazards.check_ttgir(corpus.mutate(text, seed), spec_plans, values=values)
    assert report.result == "hazards", report.describe()

    found = [hazard for hazard in report.hazards if corpus.access_lines(hazard) == seed.expected]
    assert found, report.describe()
    hazard = found[0]
    assert hazard.units[0] < hazard.units[1] and hazard.missing
    text = hazard.describe()
    assert f'"{hazard.first.buffer}"[{hazard.first.index}]' in text and "not ordered:" in text


def test_docs_table_of_seeded_races_names_their_lines():
    """docs/hazards.md's table of seeded races gives, row by row in the order of corpus.SEEDS
    and then SMALL_SEEDS, the source lines each race is reported at (a file's name once,
    then its lines): they move with the tutorials, and the seeds find them from the source."""
    docs = (REPOSITORY / "docs" / "hazards.md").read_text()
    rows = docs.split("| seed | kernel | reported at |")[1].split("\n\n")[0].splitlines()[2:]
    expected = [(seed.name, seed.expected) for seed in corpus.SEEDS]
    expected += [(name, lines) for name, _, _, lines in SMALL_SEEDS]
    assert len(rows) == len(expected)
    for row, (name, accesses) in zip(rows, expected, strict=True):
        reported_at = row.split("|")[-2]
        lines = {int(line) for line in re.findall(r"(?<![\w.-])(\d+)(?![\w.-])", reported_at)}
        lines |= {int(line) for line in re.findall(r"\.py:(\d+)", reported_at)}
        assert lines == {line for _, line in accesses}, (name, row)


@pytest.mark.parametrize("seed", kernels.seeds(), ids=lambda seed: seed[0])
def test_small_kernels_race_without_their_wait(seed):
    _, source_of, target, expected = seed
    ordered = tlx.check_hazards(source_of(True), target, {"num_warps": 4})
    assert ordered.result == "clean", ordered.describe()
    racy = tlx.check_hazards(source_of(False), target, {"num_warps": 4})
    assert racy.result == "hazards"
    assert expected in {corpus.access_lines(hazard) for hazard in racy.hazards}, racy.describe()
    kinds = {(h.first.kind, h.second.kind) for h in racy.hazards}
    assert ("read", "write") in kinds or ("write", "write") in kinds


@pytest.mark.parametrize("seed", _params(CLASS_SEEDS))
def test_each_class_of_race_is_caught_and_its_twin_clean(seed):
    """The corpus of issue 47's classes: each racy kernel is reported at its two lines (a
    hazard, one of its accesses a write, or a race on an mbarrier between its init or
    invalidate and a use; not a deadlock); its twin, the flag set, is clean."""
    _, source_of, target, expected = seed
    twin = tlx.check_hazards(source_of(True), target, {"num_warps": 4})
    assert twin.result == "clean", twin.describe()
    racy = tlx.check_hazards(source_of(False), target, {"num_warps": 4})
    assert racy.result == "hazards", racy.describe()
    found = [hazard for hazard in racy.hazards if corpus.access_lines(hazard) == expected]
    assert all("write" in (h.first.kind, h.second.kind) and h.missing for h in found)
    lines = r"(\w+\.py):(\d+)"
    races = [
        race
        for race in racy.barrier_races
        if {(name, int(line)) for name, line in re.findall(lines, race.where + race.use)}
        == expected
    ]
    assert found or races, racy.describe()


def test_a_dropped_arrive_is_a_deadlock():
    source, target, options, values = corpus.kernel("hopper_attention_d64")
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    seed = corpus.Seed(
        "q_ready arrive dropped",
        "hopper_attention_d64",
        corpus.Operation(
            "ttng.barrier_expect",
            corpus.COMMON,
            corpus.line_of(corpus.COMMON, "mbarrier.expect(q_ready.index(first + tile)"),
        ),
        None,
        frozenset(),
        "",
    )
    report = _hazards.check_ttgir(corpus.mutate(text, seed), spec_plans, values=values)
    assert report.result == "deadlock" and not report.clean
    assert "q_ready[0] phase parity 0" in report.describe()


def test_an_unmodelled_operation_is_named_not_passed():
    source, target, options, values = corpus.kernel("hopper_gemm")
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    mutated = text.replace("ttng.warp_group_dot_wait", "ttng.some_future_wait", 1)
    report = _hazards.check_ttgir(mutated, spec_plans, values=values)
    assert report.result == "incomplete"
    assert any("ttng.some_future_wait at common.py:" in line for line in report.unmodelled)
    assert "no hazard" not in report.describe()


@tlx.jit
def legacy_reuse():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)
    b = tlx.local_alloc((64, 64), ttgl.float16, 4, reuse=a)
    fill(a.index(1))
    fill(b.index(3))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy reuse= under test
def test_a_legacy_joined_view_is_named_not_passed():
    report = tlx.check_hazards(tlx.ASTSource(fn=legacy_reuse, signature={}, constexprs={}), SM90)
    assert report.result == "incomplete"
    assert any(
        'the view of "b", a reuse=buffered_tensor user' in line for line in report.unmodelled
    )


def test_an_unknown_loop_bound_is_not_checked():
    source, target, options, _ = corpus.kernel("hopper_gemm")
    report = tlx.check_hazards(source, target, options, values={"M": 256, "N": 512, "GROUP_M": 8})
    assert report.result == "incomplete"
    assert "is not known" in report.describe() and "no hazard" not in report.describe()
    assert "integer arguments not given: K)" in report.describe()


def test_check_hazards_refuses_another_source():
    with pytest.raises(TypeError, match="tlx.check_hazards expects a tlx.ASTSource"):
        tlx.check_hazards(object(), SM90)


def test_check_hazards_at_names_what_it_refuses():
    source, target, options, values = corpus.kernel("hopper_gemm")
    with pytest.raises(ValueError, match="ctas is empty"):
        tlx.check_hazards_at(source, target, options, ctas=[])
    with pytest.raises(ValueError, match=r"CTA 1 has 'program', 'value'; a CTA takes values"):
        tlx.check_hazards_at(
            source, target, options, ctas=[{"values": values}, {"value": values, "program": 1}]
        )


def test_cli_check(tmp_path, capsys):
    load_api_example(tmp_path)
    arguments = [
        "check",
        f"{tmp_path / 'api_example.py'}::share_bytes",
        "--target",
        "sm_90a",
        "--signature",
        "words_ptr=*i32,halves_ptr=*i16,flags_ptr=*i8",
        "--constexpr",
        "N=32",
    ]
    assert _cli.main(arguments) == 0
    out = capsys.readouterr().out
    assert "kernel share_bytes for sm_90a: clean" in out
    assert re.search(r"in \d+\.\d\d s \(TTGIR made in \d+\.\d\d s\)", out)
    assert _cli.main([*arguments, "--value", "N"]) == _cli.USAGE_ERROR
    assert "--value 'N' is not NAME=INTEGER" in capsys.readouterr().err


def test_cli_check_exit_status_of_hazards(monkeypatch, capsys):
    import tlx_kernels.hopper.gemm_kernel as kernel_module
    from tlx_kernels.hopper import gemm as hopper_gemm

    config = hopper_gemm.default_config()
    signature = ",".join(
        f"{name}={kind}"
        for name, kind in hopper_gemm.kernel_source(config).signature.items()
        if kind != "constexpr"
    )
    arguments = ["check", f"{kernel_module.__file__}::gemm_kernel", "--target", "sm_90a"]
    arguments += ["--signature", signature, "--value", "M=256", "--value", "N=512"]
    for name, value in hopper_gemm.constexprs(config).items():
        arguments += ["--constexpr", f"{name}={value}"]
    assert _cli.main(arguments) == _cli.NOT_CHECKED  # K is not given: the loop is unknown
    assert "not checked" in capsys.readouterr().out
    found = _hazards.HazardReport("gemm_kernel", "sm_90a", "hazards", (), (), (), 0, 0, 0.0)
    monkeypatch.setattr(_hazards, "check_ttgir", lambda *args, **kwargs: found)
    assert _cli.main(arguments) == _cli.HAZARDS_FOUND


def test_gpu_script_mutates_a_seed_and_tabulates_without_a_gpu(monkeypatch, capsys):
    """test/gpu/sanitize_hazards.py: its stage hook makes Triton's own TTGIR stage drop the
    seed's wait (what the GPU then runs); without a GPU it prints tlx check's column."""
    import sanitize_hazards
    from triton import knobs
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    seed = next(seed for seed in corpus.SEEDS if seed.name == "tile_done wait dropped")
    source, target, options, _ = corpus.kernel(seed.kernel)
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", None)
    for name in ("TRITON_CACHE_DIR", "TRITON_ALWAYS_COMPILE"):
        monkeypatch.setenv(name, os.environ.get(name, ""))
    backend = make_backend(target)

    def ttgir():
        parsed = backend.parse_options(dict(options, **source.parse_options()))
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        module = source.make_ir(
            target,
            parsed,
            backend.get_codegen_implementation(parsed),
            backend.get_module_map(),
            context,
        )
        stages = {}
        backend.add_stages(stages, parsed, source.language)
        return stages["ttgir"](module, {}).str()

    waits = ttgir().count("ttng.wait_barrier")
    sanitize_hazards._install_mutation(seed)
    assert ttgir().count("ttng.wait_barrier") == waits - 1

    monkeypatch.setattr(sanitize_hazards, "find_sanitizer", lambda given: None)
    assert sanitize_hazards.main(["--only", "warpgroup_mma reads a"]) == 0
    out = capsys.readouterr().out
    assert "hazards (1: lines" in out and "not run" in out


def test_readme_and_docs_show_what_the_check_prints():
    report = tlx.check_hazards(kernels.tma_over_mma_operand_source(False), kernels.SM90A)
    printed = report.describe().splitlines()
    readme = (REPOSITORY / "README.md").read_text()
    docs = (REPOSITORY / "docs" / "hazards.md").read_text()
    (in_readme,) = [b for b in re.findall(r"```text\n(.*?)```", readme, re.DOTALL) if "hazard" in b]
    in_docs = re.findall(r"```text\n(.*?)```", docs, re.DOTALL)[0]
    for line in in_readme.splitlines() + in_docs.splitlines():
        if not line.startswith("executed "):  # the times differ from run to run
            assert line in printed, line


def test_docs_list_every_modelled_operation():
    from tlx.hazards import ops as _hazard_ops

    text = (REPOSITORY / "docs" / "hazards.md").read_text()
    for name in _hazard_ops.modelled_operations():
        assert f"`{name}`" in text, name
    assert "[docs/hazards.md](docs/hazards.md)" in (REPOSITORY / "README.md").read_text()


def test_an_mbarrier_of_an_unmodelled_operation_is_not_checked():
    source, target, options, values = corpus.kernel("hopper_gemm")
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    mutated = text.replace("= ttg.memdesc_index %ready[", "= ttg.future_index %ready[")
    report = _hazards.check_ttgir(mutated, spec_plans, values=values)
    assert report.result == "incomplete", report.describe()
    assert any("its mbarrier comes from an operation" in line for line in report.unmodelled)


def test_a_pipelined_gemm_refilling_a_stage_still_read_is_reported():
    """The GEMM without warp specialization refills a stage after warpgroup_mma_wait(1) has
    retired the product that read it; waiting for two products to be in flight instead
    leaves that product reading the stage the TMA load overwrites."""
    source, target, options, values = corpus.kernel("hopper_gemm_pipelined")
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    assert text.count("ttng.warp_group_dot_wait") == 2 and "{pendings = 1 : i32}" in text
    mutated = text.replace("{pendings = 1 : i32}", "{pendings = 2 : i32}")
    report = _hazards.check_ttgir(mutated, spec_plans, values=values)
    assert report.result == "hazards", report.describe()
    pairs = {
        (hazard.first.operation, hazard.first.buffer, hazard.second.operation, hazard.second.buffer)
        for hazard in report.hazards
    }
    assert ("warpgroup_mma", "a_ring", "TMA load", "a_ring") in pairs, pairs
    assert ("warpgroup_mma", "b_ring", "TMA load", "b_ring") in pairs, pairs
    # The warpgroup_mma_wait(2) between them is named: it is there, and does not retire it.
    dot_wait = corpus.line_of("gemm_kernel.py", "acc = warpgroup_mma_wait(1", "_pipelined_tile")
    assert (
        f"the warpgroup_mma_wait(2) at gemm_kernel.py:{dot_wait} between it and the TMA load "
        "leaves it outstanding" in report.describe()
    ), report.describe()


def test_a_wait_that_skips_a_phase_is_ambiguous():
    every_phase = tlx.check_hazards(kernels.wait_skips_a_phase_source(True), kernels.SM90A)
    assert every_phase.result == "clean", every_phase.describe()
    assert "every mbarrier wait takes the phase it names" in every_phase.describe()
    skipping = tlx.check_hazards(kernels.wait_skips_a_phase_source(False), kernels.SM90A)
    assert skipping.result == "hazards" and not skipping.hazards
    waits = {(wait.barrier, wait.line, wait.phase): wait for wait in skipping.ambiguous_waits}
    k_line = kernels._line(kernels._consume_k_and_v, "mbarrier.wait(k_ready.index(0)")
    empty_line = kernels._line(kernels._produce, "mbarrier.wait(empty.index(0)")
    assert set(waits) == {("k_ready[0]", k_line, 2), ("empty[0]", empty_line, 0)}
    # The consumer's wait names phase 2; phase 1, which it skipped, could still be running.
    consumer = waits["k_ready[0]", k_line, 2]
    assert consumer.partition == "default partition"
    assert "phase 1's completion is not ordered before it" in consumer.why
    assert f"kernels.py:{kernels._line(kernels._produce, 'mbarrier.arrive(')}" in consumer.why
    assert "the wait would pass on phase 0" in consumer.why
    # The K producer's wait for round 1 names phase 0 of empty; the consumer's release of
    # round 1 (phase 1) does not wait for K, so it could come first.
    producer = waits["empty[0]", empty_line, 0]
    assert "phase 1's completion is not ordered after it" in producer.why
    assert "the wait would take phase 2" in producer.why
    text = skipping.describe()
    assert (
        f"ambiguous wait: default partition waits on mbarrier k_ready[0] at kernels.py:{k_line}"
        in text
    )
    assert "for phase 2 by its parity, and phase 1's completion" in text
    docs = (REPOSITORY / "docs" / "hazards.md").read_text()
    shown = [line for line in docs.splitlines() if line.startswith("ambiguous wait: ")]
    assert shown and all(line in text.splitlines() for line in shown), shown


def test_the_attention_consumer_waits_for_the_k_of_a_block_it_skips():
    """The Hopper attention consumer waits for K and V of the key blocks it skips (rows past
    the end, or past the diagonal): without the K wait, its next wait on that stage's K
    names a phase whose predecessor it never saw, and in the timing where that wait passes
    early the K tile's TMA load races the S product that reads it (docs/hazards.md)."""
    source, target, options, values = corpus.kernel("hopper_attention_d64")
    text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    skip_wait = corpus.line_of(
        corpus.HOPPER_ATTENTION, "mbarrier.wait(k_ready.index(index % NUM_STAGES)"
    )
    seed = corpus.Seed(
        "skipped block's K wait dropped",
        "hopper_attention_d64",
        corpus.Operation("ttng.wait_barrier", corpus.HOPPER_ATTENTION, skip_wait),
        None,
        frozenset(),
        "",
    )
    for _ in range(3):  # from each consumer partition
        text = corpus.mutate(text, seed)
    report = _hazards.check_ttgir(text, spec_plans, values=values)
    assert report.result == "hazards", report.describe()
    assert report.hazards and all(
        {hazard.first.buffer, hazard.second.buffer} == {"k_tiles"}
        and {hazard.first.operation, hazard.second.operation} == {"TMA load", "warpgroup_mma"}
        for hazard in report.hazards
    ), report.describe()
    step_wait = corpus.line_of(
        corpus.HOPPER_ATTENTION, "mbarrier.wait(k_ready.index(stage)", function="_attn_step"
    )
    assert any(
        wait.barrier.startswith("k_ready[") and wait.line == step_wait and wait.phase >= 1
        for wait in report.ambiguous_waits
    ), report.describe()


def _space_kernels(tutorial):
    """(name, tlx.ASTSource, values) of each kernel of a tutorial's autotuning space."""
    module = corpus.kernel_module(tutorial)
    if tutorial == "hopper_flash_attention":
        for head_dim in module.HEAD_DIMS:
            for config in module.autotune_space(head_dim):
                # balance_tail without a mask compiles to the kernel without it.
                for causal in (True,) if config.balance_tail else (False, True):
                    source = module.kernel_source(config, head_dim, causal=causal)
                    values = {"seq_len": 512, "batch_heads": 1}
                    yield f"D={head_dim} {config} causal={causal}", source, values
    elif tutorial == "hopper_gemm":
        # GROUP_M is an argument: configurations that differ only in it are one kernel.
        kernels = {}
        for triton_config in module.autotune_configs():
            config = module.config_of(triton_config)
            kernels.setdefault(tuple(module.constexprs(config).items()), config)
        for config in kernels.values():
            values = {"M": 256, "N": 512, "K": 512, "GROUP_M": config.group_m}
            yield str(config), module.kernel_source(config), values
    else:
        for layout in module.LAYOUTS:
            for triton_config in module.autotune_configs(layout):
                config = module.config_of(triton_config)
                values = {"tokens": 256, "d_model": 512, "hidden": 512}
                yield str(config), module.kernel_source(config), values


@whole_space_on_newest_triton
@pytest.mark.parametrize("tutorial", ["hopper_flash_attention", "hopper_gemm", "hopper_fused_mlp"])
def test_every_configuration_of_the_tutorials_spaces_checks_clean(tutorial):
    """What the tuner may choose is as race-free as the defaults: every configuration of a
    space that fits checks clean (those that do not fit are the planner's to refuse)."""
    module = corpus.kernel_module(tutorial)
    checked = refused = 0
    for name, source, values in _space_kernels(tutorial):
        try:
            report = tlx.check_hazards(source, module.SM90A, module.COMPILE_OPTIONS, values=values)
        except CompilationError as error:
            # The planner's message, on the error or (raised in a called function) its cause.
            messages = []
            while error is not None:
                messages.append(str(error))
                error = error.__cause__
            assert any("more than the target's limit" in text for text in messages), name
            refused += 1
            continue
        assert report.result == "clean", f"{name}\n{report.describe()}"
        checked += 1
    assert checked > refused > 0


def test_a_branch_on_an_atomics_result_is_executed_both_ways():
    """The split-K GEMM stores C in the last CTA of a tile to arrive, which an atomic's result
    decides: the check executes both branches (each consumer's), not one, and finds both
    clean (docs/hazards.md, "How it works")."""
    gemm = corpus.kernel_module("hopper_gemm")
    config = next(
        config
        for config in map(gemm.config_of, gemm.autotune_configs())
        if getattr(config, "split_k", 1) == 2
    )
    values = {"M": 256, "N": 512, "K": 512, "GROUP_M": config.group_m}
    source = gemm.kernel_source(config)
    text, spec_plans = _hazards.kernel_ttgir(source, gemm.SM90A, gemm.COMPILE_OPTIONS)
    report = _hazards.check_ttgir(text, spec_plans, values=values)
    assert report.result == "clean", report.describe()
    once = _hazards.check_ttgir(text, spec_plans, values=values, timings=1)
    assert once.result == "incomplete" and report.operations > once.operations
    assert any("the branches on data" in line for line in once.unmodelled)


@pytest.mark.parametrize(("splits", "program"), [(2, 0), (4, 0), (4, 2)])
def test_gemm_last_wave_split_units_check_clean(splits, program):
    """A persistent CTA of the last-wave schedule on a grid of three over four 128 x 128 tiles
    (M = N = 256; tiles that fit Triton 3.8's whole views too): three tiles make its whole
    wave, the fourth is split into units the CTAs share (gemm_state.split_unit), so the CTA's
    ring and barrier phases run on from a whole tile into split units of other K ranges, each
    reduced as split-K's (both branches on the atomic's result executed), and must check
    clean."""
    gemm = corpus.kernel_module("hopper_gemm")
    config = gemm.Config(128, 128, 64, 3, alias_c=False, persistent=True, last_wave_split=splits)
    values = {"M": 256, "N": 256, "K": 512, "GROUP_M": config.group_m}
    report = tlx.check_hazards(
        gemm.kernel_source(config),
        gemm.SM90A,
        gemm.COMPILE_OPTIONS,
        values=values,
        program_id=(program, 0, 0),
        num_programs=(3, 1, 1),
    )
    assert report.result == "clean", report.describe()


@pytest.mark.parametrize(
    ("head_dim", "causal", "balance_tail", "program"),
    [(64, False, False, 4), (128, True, True, 0), (128, True, True, 4)],
)
def test_attention_ctas_of_a_dealt_grid_check_clean(head_dim, causal, balance_tail, program):
    """One CTA of a grid of five over 3 heads of 1000 rows: the last row block is short, so
    its rounds of work units are rotated (_unit_tiles), and with balance_tail its last units
    are single row blocks of other heads than its pairs'; its Q buffers, K/V stages and their
    barrier phases run on from one such tile to the next, and must check clean."""
    attention = corpus.kernel_module("hopper_flash_attention")
    config = attention.default_config(head_dim).replace(balance_tail=balance_tail)
    report = tlx.check_hazards(
        attention.kernel_source(config, head_dim, causal=causal),
        attention.SM90A,
        attention.COMPILE_OPTIONS,
        values={"seq_len": 1000, "batch_heads": 3},
        program_id=(program, 0, 0),
        num_programs=(5, 1, 1),
    )
    assert report.clean, report.describe()


def test_a_wait_that_passes_early_is_executed_and_a_barrier_race_named():
    """A wait for parity 1 on a freshly initialized barrier blocks for ever in the timing
    where the TMA load completed at once; in the other it passes at once: the check reports
    the wait and executes that timing (its race is a hazard, not a deadlock). An invalidate
    that a partition's wait is not ordered before is a barrier race, as docs/hazards.md shows."""
    (parity, _, invalidate) = barrier_reinit.seeds()
    racy = tlx.check_hazards(parity[1](False), parity[2], {"num_warps": 4})
    wait_line = kernels._line(barrier_reinit.phase_across_reinit, "mbarrier.wait(ready.index(0), t")
    (early,) = [wait for wait in racy.ambiguous_waits if wait.line == wait_line]
    assert early.phase == -1 and "the wait passes at once" in early.why, racy.describe()
    report = tlx.check_hazards(invalidate[1](False), invalidate[2], {"num_warps": 4})
    docs = (REPOSITORY / "docs" / "hazards.md").read_text()
    shown = [line for line in docs.splitlines() if line.startswith("mbarrier race: ")]
    assert shown and all(line in report.describe().splitlines() for line in shown), shown


def test_a_tma_store_waited_for_in_another_partition_names_that_wait():
    import store_wait_elsewhere

    twin = tlx.check_hazards(store_wait_elsewhere.source(True), kernels.SM90A)
    assert twin.result == "clean", twin.describe()
    racy = tlx.check_hazards(store_wait_elsewhere.source(False), kernels.SM90A)
    wait = kernels._line(store_wait_elsewhere._rewrite_tile, "tma.store_wait(0)")
    assert (
        "the TMA store reads until a TMA store wait of its own partition (default partition) "
        f"retires it; the TMA store wait at store_wait_elsewhere.py:{wait} (partition0) retires "
        "only that partition's stores" in racy.describe()
    ), racy.describe()


@pytest.mark.parametrize("seed", _params(SMALL_SEEDS))
def test_the_verdict_does_not_depend_on_the_order_of_the_partitions(seed):
    """Every small kernel of the corpus, racy and twin, with its partitions taking their
    turns in every order: the same result, and the racy kernel's race at its two lines."""
    import itertools

    _, source_of, target, expected = seed
    for ordered in (True, False):
        text, spec_plans = _hazards.kernel_ttgir(source_of(ordered), target, {"num_warps": 4})
        threads = 1 + len(re.findall(r"partition\d+\(", text))
        reports = [
            _hazards.check_ttgir(text, spec_plans, partition_order=order)
            for order in itertools.permutations(range(threads))
        ]
        assert {report.result for report in reports} == {"clean" if ordered else "hazards"}
        if not ordered and not reports[0].barrier_races:
            for report in reports:
                found = {corpus.access_lines(hazard) for hazard in report.hazards}
                assert expected in found, report.describe()


def test_a_too_small_arrival_count_blames_the_barrier_whose_wait_passes_early():
    """Two consumers release the stage on ``empty``, initialized for one arrival: the
    loader's wait on ``empty`` passes at the first release, and its next TMA load races the
    other consumer's read. The report names the wait on ``empty`` that passed early and the
    release it missed, not the ``ready`` the load completes at."""
    (_, _, empty_count) = parity_and_count.seeds()
    report = tlx.check_hazards(empty_count[1](False), empty_count[2], {"num_warps": 4})
    wait = kernels._line(parity_and_count._load_rounds, "mbarrier.wait(empty.index(0)")
    release = kernels._line(parity_and_count._consume, "mbarrier.arrive(empty.index(0)")
    found = [h for h in report.hazards if corpus.access_lines(h) == empty_count[3]]
    assert found, report.describe()
    for hazard in found:
        assert hazard.missing.startswith(
            f"the wait of partition0 on mbarrier empty[0] at parity_and_count.py:{wait} took "
            "phase 0, which completed without the arrive after the local_load: "
            f"ttng.arrive_barrier at parity_and_count.py:{release}"
        ), hazard.missing
        assert "empty[0] completes a phase at 1 arrival" in hazard.missing
        assert "ready" not in hazard.missing


def test_two_tcgen05_mma_of_another_shape_are_not_ordered():
    """PTX pipelines two tcgen05 MMAs of a partition only with the same accumulator and
    shape: the report says so, where issue order would have ordered them."""
    (wide_then_narrow, _, _) = tcgen05_shape.seeds()
    report = tlx.check_hazards(wide_then_narrow[1](False), kernels.SM100A, {"num_warps": 4})
    (hazard,) = report.hazards
    assert (hazard.first.kind, hazard.second.kind) == ("write", "write")
    assert hazard.missing.startswith(
        "PTX runs a tcgen05_mma after an earlier tcgen05 operation of its partition only with "
        "the same accumulator and shape"
    ), hazard.missing


def test_the_timings_of_a_wait_that_passes_early_are_executed_in_every_order():
    """A barrier counting one arrival of two writers: whichever writer arrives first, the
    read races the other's rows; both races are reported whatever order the partitions are
    given in (the check executes every order once the timings differ)."""
    (_, ready_count, _) = parity_and_count.seeds()
    text, spec_plans = _hazards.kernel_ttgir(ready_count[1](False), SM90, {"num_warps": 4})
    top = kernels._line(parity_and_count._write_top, "tile.index(0).slice(")
    for order in ((0, 1, 2), (0, 2, 1), (2, 1, 0)):
        report = _hazards.check_ttgir(text, spec_plans, partition_order=order)
        lines = {hazard.second.line for hazard in report.hazards}
        lines |= {hazard.first.line for hazard in report.hazards}
        assert top in lines and ready_count[3] <= {
            ("parity_and_count.py", line) for line in lines
        }, report.describe()


def test_sanitizer_cases_get_every_argument_of_their_signature():
    """test/gpu/sanitize_hazards.py's small cases: each kernel's arguments, built from its
    signature (constexprs from the source, tensors here on the CPU), name every parameter."""
    import types

    import sanitize_hazards
    import torch

    def on_cpu(make):
        return lambda *shape, device, dtype: make(*shape, dtype=dtype)

    cpu_torch = types.SimpleNamespace(
        float16=torch.float16,
        float32=torch.float32,
        randn=on_cpu(torch.randn),
        zeros=on_cpu(torch.zeros),
    )
    small = {name: case for name, case in sanitize_hazards._cases().items() if "small" in case}
    assert small
    for name, case in small.items():
        source = case["small"](True)
        arguments = sanitize_hazards._small_arguments(source, cpu_torch, case.get("values", {}))
        assert set(arguments) == set(source.signature), name
        for index, value in source.constants.items():
            assert arguments[source.fn.arg_names[index[0]]] == value, name


def test_gpu_script_takes_several_only_names(monkeypatch, capsys):
    """test/gpu/sanitize_hazards.py --only, repeated: the cases that match any of the names
    (a session's rows still to run), and no others."""
    import sanitize_hazards

    monkeypatch.setattr(sanitize_hazards, "find_sanitizer", lambda given: None)
    names = ("empty counts one release", "two worker partitions wait")
    arguments = ["--classes"]
    for name in names:
        arguments += ["--only", name]
    assert sanitize_hazards.main(arguments) == 0
    rows = [
        line
        for line in capsys.readouterr().out.splitlines()
        if " race: " in line or " twin: " in line
    ]
    assert len(rows) == 4
    assert all(any(name[:40] in row for name in names) for row in rows)
