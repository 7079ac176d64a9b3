"""The kernels test/gpu/test_suggested_trees.py launches on inferred trees, compiled for sm_90a on
the CPU: ``Override(trees).source`` traces the kernel under the suggested trees, its cache key is
not the hand-written kernel's, and the binary's shared memory is the inferred plan's (smaller than
the hand-written region where the suggestion is)."""

import pytest
import triton
from test_suggested_trees import KERNELS, suggestion
from tlx.suggest.override import Override


@pytest.mark.parametrize("key", KERNELS)
def test_the_kernels_launched_on_inferred_trees_compile_for_sm90a(key):
    source, target, options, found = suggestion(key)
    inferred = Override(found.inferred_trees).source(source)
    assert inferred.hash() != source.hash()
    compiled = triton.compile(inferred, target=target, options=options)
    (smem,) = (spec for spec in found.specs if spec.name == "smem")
    region = smem.search.inferred.region_size
    assert region <= compiled.metadata.shared
    if region < smem.own_plan.region_size:
        assert compiled.metadata.shared < smem.own_plan.region_size
