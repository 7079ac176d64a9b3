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
    ideal, sizes = footprint.regions(footprint.gemm_ring(whole_views=True))
    assert ideal == sizes["ours"] == 196608 and sizes["group-major"] == 262144
    rng = random.Random(3)
    for _ in range(100):
        case = footprint.random_tree(rng, index_aligned=True, whole_views=False)
        ideal, sizes = footprint.regions(case)
        assert ideal <= sizes["ours"] <= sizes["node-by-node"] <= sizes["group-major"]
    lines = footprint.summary([footprint.gemm_ring(whole_views=False)])
    assert lines[-2].split()[:4] == ["ours", "at", "ideal", "100.0%"]
