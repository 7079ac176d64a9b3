"""Sharing never costs bytes, in the JIT door (issue 46): the plan ``tlx`` makes when it
traces a kernel with a random reuse tree (the GPU fuzz's kernel, test/gpu/test_tlx_aliasing.py,
its users of random counts, shapes, element types and swizzles) is never larger than the same
buffers each in bytes of its own, one after the other at its alignment
(``test_planner_properties.unshared_end``, the planner-level property of the same name)."""

import random

import pytest
from test_planner_properties import tree_order, unshared_end
from test_tlx_aliasing import fuzz_kernel
from tlx import compat

# Kernels drawn: about a third of each tree of FUZZ_TREES.
DRAWS = 60


@pytest.mark.skipif(
    compat.NEEDS_WHOLE_VIEWS,
    reason="Triton 3.8 views every buffer whole: docs/planner.md says which trees need more",
)
def test_the_jit_doors_plan_is_never_larger_than_the_buffers_unshared():
    rng = random.Random(46)
    shared_bytes = 0
    for _ in range(DRAWS):
        constexprs, _, spec_plan = fuzz_kernel(rng)
        order = tree_order(spec_plan.tree)
        order += [index for index in range(len(spec_plan.buffers)) if index not in order]
        unshared = unshared_end(spec_plan.buffers, order)
        assert spec_plan.plan.size_bytes <= unshared, (constexprs, spec_plan.describe())
        shared_bytes += unshared - spec_plan.plan.size_bytes
    # The draws share bytes somewhere: the property is not met by never sharing.
    assert shared_bytes > 0
