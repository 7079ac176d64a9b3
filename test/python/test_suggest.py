"""tlx.suggest_reuse and python -m tlx suggest: the pairs a kernel's synchronization lets share,
the smallest tree over them, its proof; on the tutorial kernels (equal to or smaller than the
hand-written trees) and on bad input (no sharing is safe, a buffer read before it is written, an
operation outside the check's table)."""

import types

import corpus
import kernels
import pytest
import tlx
from _helpers import REPOSITORY, SM90
from tlx import planner
from tlx.hazards import check as _hazards
from tlx.report import cli as _cli
from tlx.suggest import code, pairs, search, suggestion
from tlx.suggest.override import Override, stripped_tree


# Every tutorial kernel at the corpus's values (test/hazards/corpus.py), the smallest that
# exercise its loops: at half the sequence length the Hopper attention at D=128 no longer wraps
# every ring, and the inference lays out another tree. The pairs, the search and the two proofs
# take some 25 s for the fifteen kernels on a 2-core machine.
@pytest.mark.parametrize("key", corpus.TUTORIAL_KERNELS)
def test_every_tutorial_kernel_gets_a_proved_tree_no_larger_than_its_own(key):
    source, target, options, values = corpus.kernel(key)
    found = tlx.suggest_reuse(source, target, options, values=values)
    assert found.result in ("clean", "nothing safe"), found.describe()
    assert found.specs and (found.result == "nothing safe" or found.proof.clean)
    for spec in found.specs:
        own, inferred = spec.own_plan.region_size, spec.search.inferred.region_size
        assert spec.plan.ok and spec.plan.region_size <= inferred <= own, found.describe()
        assert spec.keeps_own == (inferred == own)  # a tie keeps the kernel's own tree
        assert spec.code().startswith(f"{spec.name}.set_buffer_overlap(")
    # The tree the inference alone finds (the kernel's own no candidate), re-traced, checks
    # clean too: it is what test/gpu/test_suggested_trees.py runs.
    with Override(found.inferred_trees).active():
        report = tlx.check_hazards(source, target, options, values=values)
    assert report.clean, report.describe()


def test_no_sharing_is_safe_names_the_pair_and_why():
    racy = tlx.suggest_reuse(kernels.tma_over_mma_operand_source(False), SM90, {"num_warps": 4})
    assert racy.result == "nothing safe", racy.describe()
    text = racy.describe()
    assert "no sharing is safe" in text and '"a" and "b":' in text
    assert "warpgroup_mma reads" in text and "TMA load writes" in text
    assert "set_buffer_overlap" not in text  # not an empty tree
    ordered = tlx.suggest_reuse(kernels.tma_over_mma_operand_source(True), SM90, {"num_warps": 4})
    assert ordered.result == "clean", ordered.describe()
    assert ordered.specs[0].tree == planner.shared(0, 1)


def test_an_operation_outside_the_table_is_named_with_its_line():
    source, target, options, values = corpus.kernel("hopper_gemm")
    with Override(strip="all").active():
        text, spec_plans = _hazards.kernel_ttgir(source, target, options)
    mutated = text.replace("ttng.warp_group_dot_wait", "ttng.some_future_wait", 1)
    found = pairs.ordering(mutated, spec_plans, values=values)
    assert any("ttng.some_future_wait at common.py:" in line for line in found.problems)


def test_a_buffer_read_before_it_is_written_is_not_inferred(capsys):
    path = REPOSITORY / "tutorials" / "01-aliasing-basics.py"
    arguments = ["suggest", f"{path}::aliasing_basics_kernel", "--target", "sm_90a"]
    arguments += ["--signature", "x_ptr=*fp32,y_ptr=*fp32,bits_ptr=*i32,other_ptr=*fp32"]
    arguments += ["--constexpr", "TILE=64"]
    assert _cli.main(arguments) == _cli.NOT_CHECKED
    out = capsys.readouterr().out
    assert 'local_load reads "as_bits"[0] at 01-aliasing-basics.py:' in out
    assert "before anything writes" in out


def test_cli_prints_the_tree_and_proves_it(capsys):
    path = REPOSITORY / "test" / "hazards" / "kernels.py"
    arguments = ["suggest", f"{path}::tma_over_mma_operand", "--target", "sm_90a"]
    layout = repr(kernels.TILE_LAYOUT.value)
    arguments += ["--signature", f"desc=tensordesc<fp16[64,64],{layout}>,out_ptr=*fp32"]
    arguments += ["--constexpr", "TILE=64,WAIT_MMA=True"]
    status = _cli.main(arguments)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "spec.set_buffer_overlap(\n        tlx.reuse_group(a, b)" in out
    assert "saves 8192 bytes against no sharing" in out


def test_the_override_replaces_and_records_trees():
    source, target, options, _ = corpus.kernel("hopper_gemm")
    own = tlx.kernel_plans(source, target, options)[0]
    tree = planner.distinct(planner.shared(planner.shared(1, group_size=2), 2), 0)
    override = Override({"smem": tree})
    with override.active():
        (replaced,) = tlx.kernel_plans(source, target, options)[:1]
    assert replaced.tree == tree and replaced.overlap_source == "tlx.suggest"
    assert override.originals["smem"][0] == own.tree
    with Override(strip="all").active():
        stripped = tlx.kernel_plans(source, target, options)[0]
    assert stripped.tree == stripped_tree(own.buffers)
    assert tlx.kernel_plans(source, target, options)[0].tree == own.tree


def _buffers(*counts):
    layout = planner.Layout(planner.LayoutKind.SWIZZLED_SHARED)
    return [planner.Buffer(f"b{n}", (c, 64, 64), 16, layout=layout) for n, c in enumerate(counts)]


def _conflicts(pairs_):
    return pairs.Conflicts("spec", ("b0", "b1", "b2"), {pair: "why" for pair in pairs_})


SPEC = planner.Spec("spec", capability=90)


def test_search_shares_index_aligned_when_only_other_indices_conflict():
    buffers = _buffers(2, 2)
    found = search.search(SPEC, buffers, _conflicts([((0, 0), (1, 1)), ((0, 1), (1, 0))]))
    assert found.best.tree == planner.shared(0, 1) and found.best.region_size == 16384


def test_search_shares_whole_rings_and_keeps_conflicts_apart():
    buffers = _buffers(2, 2, 1)
    conflicts = [((0, i), (1, j)) for i in range(2) for j in range(2)]
    found = search.search(SPEC, buffers, _conflicts(conflicts))
    # b2 (one buffer) lies over the whole of one ring; b0 and b1 never share.
    extents = planner.buffer_extents(found.best.plan, buffers)
    assert found.best.region_size == 4 * 8192
    assert search.unsafe_pairs(found.best.plan, buffers, _conflicts(conflicts)) is not None
    assert any(e.user == 2 for e in extents)
    assert [(u, v) for u, v, _ in found.incompatible] == [(0, 1)]


def test_search_without_safe_sharing_gives_the_unshared_tree():
    buffers = _buffers(1, 1)
    found = search.search(SPEC, buffers, _conflicts([((0, 0), (1, 0))]))
    assert found.best.shared_pairs == 0 and found.best.region_size == 16384


def test_tree_code_is_the_reuse_group_code():
    tree = planner.distinct(planner.shared(0, planner.shared(1, group_size=2)), 2)
    assert code.tree_code("smem", tree, ["q", "o", "k"]) == (
        "smem.set_buffer_overlap(\n"
        "    tlx.reuse_group(\n"
        "        tlx.reuse_group(q, tlx.reuse_group(o, group_size=2)),\n"
        "        k,\n"
        "        group_type=tlx.reuse_group_type.distinct,\n"
        "    )\n"
        ")"
    )


def test_results_are_the_documented_words():
    assert (suggestion.CLEAN, suggestion.NOTHING_SAFE) == ("clean", "nothing safe")
    assert (suggestion.NOT_PROVED, suggestion.NOT_CHECKED) == ("not proved", "not checked")


def test_search_nests_a_shared_item_in_a_distinct_part_where_it_is_smaller():
    """a (64 KiB) over b then c and d (32 KiB each, side by side over b's neighbour): b may
    share with a alone, c and d with a and each other. Two levels cost 96 KiB."""
    layout = planner.Layout(planner.LayoutKind.SWIZZLED_SHARED)
    buffers = [
        planner.Buffer(name, (1, rows, 64), 16, layout=layout)
        for name, rows in (("a", 512), ("b", 256), ("c", 256), ("d", 256))
    ]
    conflicts = pairs.Conflicts(
        "spec", ("a", "b", "c", "d"), {((1, 0), (2, 0)): "why", ((1, 0), (3, 0)): "why"}
    )
    found = search.search(SPEC, buffers, conflicts)
    assert found.best.tree == planner.shared(0, planner.distinct(1, planner.shared(2, 3)))
    assert found.best.region_size == 65536


def test_the_kernels_own_tree_wins_a_tie_and_an_unsafe_one_says_why():
    buffers = _buffers(1, 1)
    own = planner.distinct(1, 0)  # as small as the search's distinct(0, 1)
    found = search.search(SPEC, buffers, _conflicts([((0, 0), (1, 0))]), own)
    assert found.best.own and found.best.tree == own and not found.inferred.own
    unsafe = search.search(SPEC, buffers, _conflicts([((0, 0), (1, 0))]), planner.shared(0, 1))
    assert not unsafe.best.own and unsafe.own_conflict == ((0, 0), (1, 0), "why")
    # One ring a phase, over each other: as small as shared(0, 1), so the phases are kept.
    phases = (planner.shared(0), planner.shared(1))
    kept = search.search(SPEC, _buffers(2, 2), _conflicts([]), phases)
    assert kept.best.own and kept.best.tree == phases and kept.best.region_size == 16384
    spec = types.SimpleNamespace(
        name="smem", overlap_tree=None, overlap_phases=(), overlap_source=None, auto=False
    )
    assert Override({"smem": phases})(spec)[:2] == (None, phases)
    phases = (planner.distinct(0, 1), planner.distinct(1, 0))
    assert code.tree_code("smem", phases, ["q", "k"]) == (
        "smem.set_buffer_overlap(\n"
        "    tlx.reuse_phases(\n"
        "        tlx.reuse_group(q, k, group_type=tlx.reuse_group_type.distinct),\n"
        "        tlx.reuse_group(k, q, group_type=tlx.reuse_group_type.distinct),\n"
        "    )\n"
        ")"
    )
