"""``tlx.kernel_budget``: the SMEM and TMEM a kernel's plans use against a target's
capacity, and the planner's reasons when they do not fit."""

import dataclasses

import pytest
import tlx
from _helpers import SM100
from test_tlx_plans import several_specs
from tlx import planner
from triton.backends.compiler import GPUTarget

pytestmark = [
    pytest.mark.usefixtures("always_compile"),
    # several_specs keeps a TMEM spec without a tree on purpose (test_tlx_plans.py).
    pytest.mark.filterwarnings("ignore:.*no overlap tree"),
]


@pytest.fixture
def plans():
    source = tlx.ASTSource(fn=several_specs, signature={}, constexprs={})
    return tlx.kernel_plans(source, target=SM100)


def test_the_budget_adds_up_the_allocated_regions_per_storage(plans):
    budget = tlx.kernel_budget(plans, SM100)
    assert budget.fits and budget.reasons == () and budget.capability == 100
    smem, tmem = budget.storages
    # The never-sealed spec allocates nothing and is not counted.
    assert smem.storage is planner.Storage.SMEM
    assert smem.regions == (("smem", 16384), ("own_region", 4096), ("inner", 8192))
    assert (smem.used_units, smem.capacity_units, smem.left_units) == (28672, 232448, 203776)
    assert tmem.storage is planner.Storage.TMEM and tmem.regions == (("tmem", 128),)
    assert (tmem.used_units, tmem.capacity_units, tmem.unit) == (128, 512, "columns")
    assert budget.storage(tlx.storage_kind.tmem) == tmem == budget.storage("tmem")
    assert budget.describe() == (
        "smem: 28672 of 232448 bytes (203776 left): smem 16384, own_region 4096, inner 8192\n"
        "tmem: 128 of 512 columns (384 left): tmem 128"
    )


def test_the_target_is_a_capability_a_name_or_a_gpu_target(plans):
    budgets = [tlx.kernel_budget(plans, target) for target in (100, "sm_100a", "sm_100", SM100)]
    assert all(budget == budgets[0] for budget in budgets)
    with pytest.raises(ValueError, match="target must be a compute capability"):
        tlx.kernel_budget(plans, "hopper")
    with pytest.raises(ValueError, match="target must be a compute capability"):
        tlx.kernel_budget(plans, True)


def test_regions_that_fit_alone_but_not_together_get_the_planners_reason(plans):
    smem = plans[0]
    # Fifteen copies of a 16 KiB region: 240 KiB, over the 227 KiB of sm_90a.
    copies = [
        dataclasses.replace(smem, spec=dataclasses.replace(smem.spec, name=f"s{i}"))
        for i in range(15)
    ]
    budget = tlx.kernel_budget(copies, "sm_90a")
    assert not budget.fits
    (entry,) = budget.storages
    assert (entry.used_units, entry.left_units, entry.fits) == (245760, -13312, False)
    assert entry.error.kind == "over_storage_budget" and entry.error.numbers == (245760, 232448)
    assert budget.reasons == (
        "the kernel's smem regions take 245760 bytes, 13312 bytes more than the 232448 bytes "
        "one CTA has on sm_90a",
    )
    assert entry.describe().startswith("smem: 245760 of 232448 bytes (13312 over): s0 16384, ")
    assert budget.describe().endswith("does not fit: " + budget.reasons[0])


def test_ctas_sharing_an_sm_each_get_a_share_of_it(plans):
    smem = plans[0]
    # Eight copies of a 16 KiB region: 128 KiB, which fits one CTA of sm_90a, not two.
    copies = [
        dataclasses.replace(smem, spec=dataclasses.replace(smem.spec, name=f"s{i}"))
        for i in range(8)
    ]
    assert tlx.kernel_budget(copies, 90).fits
    shared = tlx.kernel_budget(copies, 90, ctas_per_sm=2)
    assert shared.ctas_per_sm == 2 and not shared.fits
    (entry,) = shared.storages
    assert (entry.used_units, entry.capacity_units) == (131072, 115712)
    assert shared.reasons[0].endswith("one CTA has on sm_90a when 2 CTAs share an SM")
    assert tlx.kernel_budget(copies[:7], 90, ctas_per_sm=2).fits
    assert shared.storage("tmem").capacity_units == 0
    with pytest.raises(ValueError, match="ctas_per_sm must be a positive int"):
        tlx.kernel_budget(copies, 90, ctas_per_sm=0)


def test_a_plans_own_errors_come_first(plans):
    smem = plans[0]
    alone = smem.plan_without_aliasing()
    big = planner.plan(
        dataclasses.replace(smem.spec, capability=90),
        [planner.Buffer("big", (4, 128, 128), 32)],
    )
    assert big.errors[0].kind == "over_smem_limit"
    budget = tlx.kernel_budget([dataclasses.replace(smem, plan=big)], GPUTarget("cuda", 90, 32))
    assert budget.reasons[0] == big.errors[0].message
    assert budget.reasons[1].startswith("the kernel's smem regions take 262144 bytes")
    assert tlx.kernel_budget([dataclasses.replace(smem, plan=alone)], 90).fits


def test_tensor_memory_on_hopper_is_over_a_budget_of_nothing(plans):
    budget = tlx.kernel_budget(plans, 90)
    assert budget.storage("tmem").capacity_units == 0
    assert budget.reasons == ("the kernel's tmem regions take 128 columns, but sm_90a has no tmem",)
    # A storage the kernel does not allocate: nothing used, nothing to say.
    empty = tlx.kernel_budget([], 100)
    assert empty.storages == () and empty.fits
    assert empty.storage(planner.Storage.SMEM).used_units == 0
