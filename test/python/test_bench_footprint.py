"""bench/footprint.py runs and reports what the planner promises: the GEMM ring at its
ideal 196608 bytes, no layout family larger than a simpler one."""

import importlib.util
import random
import sys

from _helpers import REPOSITORY


def load_footprint():
    spec = importlib.util.spec_from_file_location(
        "footprint", REPOSITORY / "bench" / "footprint.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["footprint"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_footprint_compares_the_layouts():
    footprint = load_footprint()
    whole, start, offsets = footprint.RULES
    ideal, sizes = footprint.regions(footprint.gemm_ring(whole))
    assert ideal == sizes["ours"] == 196608 and sizes["group-major"] == 262144
    rng = random.Random(3)
    for _ in range(100):
        for rules in (start, offsets):
            case = footprint.random_tree(rng, True, rules)
            ideal, sizes = footprint.regions(case)
            assert ideal <= sizes["ours"] <= sizes["node-by-node"] <= sizes["group-major"]
    lines = footprint.summary([footprint.gemm_ring(offsets)])
    assert lines[-5].split()[:4] == ["ours", "at", "ideal", "100.0%"]
    assert lines[-4].split()[:8] == "ours at the ideal with alignment counted 100.0%".split()
    assert (
        lines[-3].split()[:9]
        == "without a free group stride, with alignment counted 100.0%".split()
    )
    assert lines[-1] == "  ours larger than unshared on 0 of 1 trees"
