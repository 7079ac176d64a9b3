"""storage_alias_spec(..., overlap="auto"): the tree inferred at compile time, with a TLXWarning
when nothing may share or the tree changes between compiles; the tuner keeps a configuration
that fits only with the inferred tree."""

import warnings

import pytest
import tlx
import torch
import triton
from _helpers import SM90
from tlx import planner
from tlx.suggest import auto
from triton.compiler.errors import CompilationError
from triton.experimental.gluon import language as gl

# A 128 x 128 fp32 tile is 64 KiB: two 2-buffer rings apart do not fit.
TILE = gl.constexpr(128)


@tlx.jit(overlap_values={"n": 1})
def two_phases(x_ptr, n, OVERLAP: gl.constexpr, INTERLEAVE: gl.constexpr, NUM: gl.constexpr):
    """``a`` written and read, then ``b``: they may share, unless INTERLEAVE writes b before
    a's read (then sharing would overwrite a's value)."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem, overlap=OVERLAP)
    a = tlx.local_alloc((TILE, TILE), gl.float32, NUM, reuse=spec)
    b = tlx.local_alloc((TILE, TILE), gl.float32, NUM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [gl.num_warps(), 1], [1, 0])
    rows = gl.arange(0, TILE, gl.SliceLayout(1, layout))
    cols = gl.arange(0, TILE, gl.SliceLayout(0, layout))
    offsets = rows[:, None] * TILE + cols[None, :]
    for i in range(n):
        a.index(i % NUM).store(gl.load(x_ptr + offsets))
        if INTERLEAVE:
            b.index(i % NUM).store(gl.load(x_ptr + offsets))
        gl.store(x_ptr + offsets, a.index(i % NUM).load(layout))
        if not INTERLEAVE:
            b.index(i % NUM).store(gl.load(x_ptr + offsets))
        gl.store(x_ptr + offsets, b.index(i % NUM).load(layout))


def _plans(interleave=False, overlap="auto", num=2):
    constexprs = {"OVERLAP": overlap, "INTERLEAVE": interleave, "NUM": num}
    source = tlx.ASTSource(
        fn=two_phases,
        signature={"x_ptr": "*fp32", "n": "i32", **dict.fromkeys(constexprs, "constexpr")},
        constexprs=constexprs,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tlx.TLXWarning)
        plans = tlx.kernel_plans(source, SM90, {"num_warps": 4})
    return plans[0], [str(w.message) for w in caught if issubclass(w.category, tlx.TLXWarning)]


@pytest.fixture(autouse=True)
def _fresh_choices(monkeypatch):
    monkeypatch.setattr(auto, "_CHOSEN", {})


def test_the_tree_is_inferred_when_the_kernel_is_compiled():
    plan, found = _plans()
    assert plan.tree == planner.shared(0, 1) and plan.overlap_source == "tlx.suggest"
    assert plan.plan.region_size == 2 * 65536 and found == []
    with pytest.raises(CompilationError, match="needs 262144 bytes"):
        _plans(overlap=None)  # the kernel's own tree: 256 KiB


def test_no_safe_sharing_warns_with_the_pair_and_shares_nothing():
    plan, found = _plans(interleave=True, num=1)
    assert plan.tree == planner.distinct(planner.shared(0), planner.shared(1))
    (message,) = found
    assert 'overlap="auto" and no sharing is safe' in message
    assert '"a" and "b"' in message and "overwrite the value before it is read" in message


def test_a_tree_that_changes_between_compiles_warns():
    _plans(num=1)
    _, found = _plans(interleave=True, num=1)
    assert any("inferred another tree than the previous one" in message for message in found)


def test_the_tuner_keeps_a_configuration_that_fits_only_with_the_inferred_tree():
    configs = [
        triton.Config({"OVERLAP": None, "INTERLEAVE": False, "NUM": 2}, num_warps=4),
        triton.Config({"OVERLAP": None, "INTERLEAVE": True, "NUM": 2}, num_warps=4),
    ]
    pruner = tlx.PlanPruner(two_phases, target=SM90, overlap_parameter="OVERLAP")
    arguments = {"x_ptr": torch.empty(16, dtype=torch.float32), "n": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tlx.TLXWarning)
        with pytest.raises(tlx.TLXError, match="every configuration was pruned"):
            tlx.PlanPruner(two_phases, target=SM90)(configs[1:], arguments)
        kept = pruner(configs, arguments)
    assert [config.kwargs for config in kept] == [
        {"OVERLAP": "auto", "INTERLEAVE": False, "NUM": 2}
    ]
    ((config, reasons),) = next(iter(pruner.inferred.values()))
    assert config is configs[0] and "232448" in " ".join(reasons)
    (dropped,) = pruner.pruned.values()
    assert [config for config, _ in dropped] == [configs[1]]


def test_the_cache_key_holds_the_overlap_values():
    """A kernel compiled with other overlap_values may infer another tree: Triton's cache
    must not hand back the binary of the first."""
    other = tlx.jit(two_phases.fn, overlap_values={"n": 3})
    constexprs = {"OVERLAP": "auto", "INTERLEAVE": False, "NUM": 2}
    signature = {"x_ptr": "*fp32", "n": "i32", **dict.fromkeys(constexprs, "constexpr")}

    def key(kernel):
        return tlx.ASTSource(fn=kernel, signature=signature, constexprs=constexprs).hash()

    assert key(two_phases) == key(tlx.jit(two_phases.fn, overlap_values={"n": 1}))
    assert key(two_phases) != key(other)
