"""Issue 47's batch of racy kernels and clean twins as a demanding user writes them
(test/hazards/sm90_pairs.py, sm90_loops.py, sm100_pairs.py): every race is reported as a hazard
at its two lines, never as a deadlock, and every twin is clean, with the partitions in every
order; the reports name the ordering that is missing."""

import itertools
import re

import corpus
import pytest
import sm90_loops
import sm90_pairs
import sm100_pairs
import tlx
from _helpers import REPOSITORY
from tlx.hazards import check as _hazards

MODULES = (sm90_pairs, sm90_loops, sm100_pairs)
PAIRS = tuple((module, seed) for module in MODULES for seed in module.seeds())


def _report(module, name: str, ordered: bool = False):
    """``tlx.check_hazards`` of the pair ``name`` of ``module``, racy or its twin."""
    _, source_of, target, _ = next(seed for seed in module.seeds() if seed[0] == name)
    values = getattr(module, "VALUES", {})
    return tlx.check_hazards(source_of(ordered), target, {"num_warps": 4}, values=values)


def _missing(report, expected) -> list[str]:
    """What the report says is missing between the two accesses at ``expected``."""
    return [h.missing for h in report.hazards if corpus.access_lines(h) == expected]


@pytest.mark.parametrize(("module", "seed"), PAIRS, ids=[seed[0] for _, seed in PAIRS])
def test_each_race_is_a_hazard_at_its_lines_and_each_twin_clean_in_every_order(module, seed):
    _, source_of, target, expected = seed
    values = getattr(module, "VALUES", {})
    for ordered in (True, False):
        text, spec_plans = _hazards.kernel_ttgir(source_of(ordered), target, {"num_warps": 4})
        threads = 1 + len(re.findall(r"partition\d+\(", text))
        for order in itertools.permutations(range(threads)):
            report = _hazards.check_ttgir(text, spec_plans, partition_order=order, values=values)
            if ordered:
                assert report.result == "clean", (order, report.describe())
                continue
            # (Some timings of a racy kernel also hang: ``blocked`` lists where.)
            assert report.result == "hazards", (order, report.describe())
            found = [h for h in report.hazards if corpus.access_lines(h) == expected]
            assert found, (order, report.describe())
            assert all("write" in (h.first.kind, h.second.kind) for h in found)


def test_a_proxy_fence_in_the_reading_partition_orders_the_write():
    """PTX wants a proxy fence on the causality path from a generic-proxy write to an
    async-proxy access: the reader's, after its wait, is one; with none, both partitions
    are named."""
    name = "a tile another partition wrote, TMA-stored with no fence on either side"
    assert _report(sm90_pairs, name, ordered=True).clean
    (missing,) = _report(sm90_pairs, name).hazards
    assert missing.missing.startswith(
        "no fence_async_shared in default partition between its local_store (a generic-proxy "
        "write) and the TMA store, nor in partition0 between acquiring the write and the TMA "
        "store"
    ), missing.missing


def test_a_release_before_the_last_read_names_the_release():
    (name, _, _, expected) = sm90_pairs.seeds()[8]
    assert name == "a consumer releases its stage between its two reads of it"
    release = kernels_line(sm90_pairs._read_twice, "mbarrier.arrive(empty.index(stage)")
    found = _missing(_report(sm90_pairs, name), expected)
    assert found
    for stage, missing in enumerate(sorted(found)):
        assert missing.startswith(
            f"the release comes before the access it releases: ttng.arrive_barrier at "
            f"sm90_pairs.py:{release} (default partition) arrives on mbarrier empty[{stage}] "
            "before the local_load, and the wait of partition0 on it at sm90_pairs.py:"
        ), missing


def test_a_lax_wait_before_a_release_names_the_wait():
    """warpgroup_mma_wait(1) and tma.store_wait(1) before a release another partition waits
    on: the wait that leaves the operation outstanding is named."""
    ring = "a ring released to an aliased c after warpgroup_mma_wait(1)"
    (_, _, _, expected) = next(seed for seed in sm90_loops.seeds() if seed[0] == ring)
    dot_wait = kernels_line(sm90_loops._multiply_all, "acc = warpgroup_mma_wait(0 if RIGHT")
    (missing,) = _missing(_report(sm90_loops, ring), expected)
    assert missing == (
        "the warpgroup_mma reads until a warpgroup_mma wait retires it (the "
        f"warpgroup_mma_wait(1) at sm90_loops.py:{dot_wait} leaves it outstanding), and "
        "partition1 waits on no mbarrier phase arrived after a wait that retires it before the "
        "local_store"
    ), missing
    staging = "a staging buffer released after tma.store_wait(1) with its store in flight"
    (_, _, _, expected) = next(seed for seed in sm90_loops.seeds() if seed[0] == staging)
    store_wait = kernels_line(sm90_loops._store_and_release, "tma.store_wait(0 if RIGHT")
    (missing,) = _missing(_report(sm90_loops, staging), expected)
    assert f"the TMA store_wait(1) at sm90_loops.py:{store_wait} (partition0)" in missing


def test_a_load_over_bytes_not_released_names_the_loaders_wait():
    """The loader's wait on ``empty`` names the wrong parity; the reader's wait on ``ready``,
    which took the phase it names, is not blamed (issue 47: the wait on ``empty`` at fault)."""
    name = "a loader that skips round 0 waits for the release of round r, not r - 1"
    (_, _, _, expected) = next(seed for seed in sm90_pairs.seeds() if seed[0] == name)
    wait = kernels_line(sm90_pairs._load_ring_skipping_round_0, "mbarrier.wait(empty.index(")
    found = _missing(_report(sm90_pairs, name), expected)
    assert len(found) == 2  # one a stage
    for stage, missing in enumerate(sorted(found)):
        assert missing == (
            "partition0 issues the TMA load over bytes default partition reads after its wait "
            "for phase 0, with no release of them: the wait of partition0 on mbarrier "
            f"empty[{stage}] at sm90_pairs.py:{wait} passed at once on the fresh barrier"
        ), missing


def test_a_commit_of_another_partition_is_named():
    name = "an MMA committed by a partition that issued none"
    commit = kernels_line(sm100_pairs._commit_for_it, "tcgen05_commit(done.index(0))")
    (hazard,) = _report(sm100_pairs, name).hazards
    assert hazard.missing == (
        "the tcgen05_mma runs until a tcgen05 commit of its own partition (partition0) arrives "
        "on an mbarrier, and none does before the TMEM load; the tcgen05 commit at "
        f"sm100_pairs.py:{commit} (partition1) tracks only that partition's tcgen05 operations"
    )


def test_a_tcgen05_copy_is_asynchronous():
    """Triton emits tcgen05.cp and no wait: a TMEM load of its destination waits for a
    commit of the copy's partition."""
    name = "a TMEM load of a tcgen05_copy's destination before its commit is waited for"
    (hazard,) = _report(sm100_pairs, name).hazards
    assert (hazard.first.operation, hazard.second.operation) == ("tcgen05_copy", "TMEM load")
    assert "never waits on before the TMEM load" in hazard.missing


def test_a_tma_load_that_lands_late_is_executed_in_the_timing_where_it_does():
    """One expect of one tile's bytes, two TMA loads: whichever lands first completes the
    phase, so the read of either tile races its load. The check executes the timing where
    the first load lands after the second (its completion held late): both races are
    reported, and the twin (both tiles' bytes expected) executes once."""
    name = "two TMA loads on one barrier that expects one tile's bytes"
    racy = _report(sm90_pairs, name)
    pairs = {(h.first.buffer, h.first.index, h.second.operation) for h in racy.hazards}
    assert pairs == {("tiles", 0, "local_load"), ("tiles", 1, "local_load")}, racy.describe()
    first = next(h for h in racy.hazards if h.first.index == 0)
    assert "in the timing where it lands after a later arrival on it" in first.missing
    twin = _report(sm90_pairs, name, ordered=True)
    assert twin.clean and twin.operations < racy.operations


def test_docs_table_of_the_batch_names_every_pair_at_its_lines():
    """docs/hazards.md's table of the batch lists every pair, in order, at the lines the
    check reports."""
    docs = (REPOSITORY / "docs" / "hazards.md").read_text()
    rows = docs.split("| pair | module | reported at |")[1].split("\n\n")[0].splitlines()[2:]
    assert len(rows) == len(PAIRS)
    for row, (module, (name, _, _, expected)) in zip(rows, PAIRS, strict=True):
        cells = row.split("|")
        assert f"`{module.__name__}.py::" in cells[2], (name, row)
        lines = {int(line) for line in re.findall(r"\d+", cells[3])}
        assert lines == {line for _, line in expected}, (name, row)


def kernels_line(function, text: str) -> int:
    """The line of ``function`` (a Gluon function) that contains ``text``."""
    return sm90_pairs._line(function, text)
