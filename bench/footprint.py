"""What the planner's layouts cost in on-chip memory: region vs. ideal footprint.

    python bench/footprint.py [--trees 2000] [--seed 1]

The ideal footprint of a reuse tree is, per buffer group, shared = max and distinct =
sum with 128-byte aligned starts, summed over the groups (Plan.ideal_bytes). For each
tree, three layouts of the same planner are compared:

* group-major: every buffer group together, the period padded to every buffer size
  (the first planner's layout);
* node-by-node: group-major or child-major per reuse group (a simple search);
* ours: node-by-node with periodic layouts too, and each buffer group at its own width
  where that is smaller (what kernels get).

Random trees: 2-5 SMEM users (tiles of 16-128 x 16-256 elements of 8/16/32 bits,
swizzled or 128-byte NVMMA layouts), nested shared/distinct groups, 1-4 buffer
groups, some group sizes of 2 or 4; "equal counts" gives every user the same number
of buffer groups, "index-aligned counts" gives each user 1 .. all of them. Regions
are shown under each release's rules (``RULES``): whole views from the region's
start (Triton 3.8, and triton-opt's default), views from the region's start that may
stop short of its end, and views that may also start at any aligned byte offset, a user's
buffer groups any aligned distance apart where that is smaller, each group a view of its
own (a free group stride: Triton 3.9 writes it ``selected_rows``; 3.6 and 3.7,
``GROUP_STRIDE_RULES``, ``runtime_row``), and on 3.9 a user's buffer groups at starts of
their own where no one view's slots hold them (docs/planner.md, "Views at a byte offset"
and "What stays above the ideal"). "unshared" is the same buffers each in
bytes of their own, one after the other at their alignment, which no plan may exceed;
under views at byte offsets, "without a free group stride" is what the planner reaches
where a user's buffer groups sit whole slots apart. The kernels are
the plans of the tutorials (as ``tlx.kernel_plans`` makes them with the Triton installed)
and the A/B ring of a 4-stage 128x256x64 bf16 GEMM. No GPU is needed.
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import runpy
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from tlx import planner
from tlx.planner import Buffer, Group, Layout, LayoutFamily, LayoutKind, Spec

TUTORIALS = Path(__file__).resolve().parents[1] / "tutorials"

#: (what the rules are, Spec.whole_views, Spec.offset_form); Spec.group_stride_form follows
#: the offset form (planner.group_stride_form_of).
RULES = (
    ("whole views (Triton 3.8, triton-opt default)", True, "slots"),
    ("views from the region's start", False, "slots"),
    (
        "views at byte offsets and per buffer group (Triton 3.9, selected_rows)",
        False,
        "sliced_rows",
    ),
)
#: The same with the offset form of Triton 3.6 and 3.7, whose view per buffer group is
#: runtime_row.
GROUP_STRIDE_RULES = (
    "views at byte offsets and per buffer group (Triton 3.6, 3.7, runtime_row)",
    False,
    "indexed_row",
)

FAMILIES = (
    ("group-major", LayoutFamily.GROUP_MAJOR),
    ("node-by-node", LayoutFamily.NODE_BY_NODE),
    ("ours", LayoutFamily.BEST),
)


@dataclass(frozen=True)
class Case:
    name: str
    spec: Spec
    buffers: tuple[Buffer, ...]
    tree: Group | None


def rules_spec(spec: Spec, rules) -> Spec:
    """``spec`` under ``rules`` (an entry of RULES)."""
    _, whole_views, offset_form = rules
    return replace(
        spec,
        whole_views=whole_views,
        offset_form=offset_form,
        group_stride_form=planner.group_stride_form_of(offset_form),
    )


def random_tree(rng: random.Random, index_aligned: bool, rules=RULES[0]) -> Case:
    users = rng.randint(2, 5)
    groups = rng.randint(1, 4)
    shapes = []
    for _ in range(users):
        rows = rng.choice((16, 32, 64, 128))
        columns = rng.choice((16, 32, 64, 128, 256))
        bits = rng.choice((8, 16, 32))
        nvmma = rng.random() < 0.5 and rows % 8 == 0 and columns * bits >= 1024
        layout = Layout(LayoutKind.NVMMA_SHARED, swizzle_bytes=128) if nvmma else Layout()
        shapes.append((rows, columns, bits, layout))

    def build(indices, root):
        if len(indices) == 1:
            return indices[0]
        parts = rng.randint(2, min(3, len(indices)))
        cuts = sorted(rng.sample(range(1, len(indices)), parts - 1))
        bounds = list(zip([0, *cuts], [*cuts, len(indices)], strict=True))
        children = tuple(build(indices[a:b], False) for a, b in bounds)
        group_size = 1 if root else rng.choice((1, 1, 1, 2, 4))
        return Group(rng.choice(("shared", "distinct")), children, group_size)

    order = list(range(users))
    rng.shuffle(order)
    tree = build(order, True)
    if isinstance(tree, int):
        tree = Group("shared", (tree,))

    def group_sizes(element, product=1, out=None):
        out = {} if out is None else out
        if isinstance(element, int):
            out[element] = product
        else:
            for child in element.children:
                group_sizes(child, product * element.group_size, out)
        return out

    sizes = group_sizes(tree)
    buffers = []
    for index, (rows, columns, bits, layout) in enumerate(shapes):
        count = (rng.randint(1, groups) if index_aligned else groups) * sizes[index]
        buffers.append(Buffer(f"u{index}", (count, rows, columns), bits, layout=layout))
    return Case("random", rules_spec(Spec("spec"), rules), tuple(buffers), tree)


def gemm_ring(rules=RULES[0]) -> Case:
    nvmma = Layout(LayoutKind.NVMMA_SHARED, swizzle_bytes=128)
    a = Buffer("a", (4, 128, 64), 16, layout=nvmma)
    b = Buffer("b", (4, 64, 256), 16, layout=nvmma)
    spec = rules_spec(Spec("ring", capability=90), rules)
    return Case("GEMM ring 128x256x64 bf16, 4 stages", spec, (a, b), planner.distinct(0, 1))


def tutorial_cases(rules=RULES[0]) -> list[Case]:
    """The specs of the tutorials' kernels, as tlx plans them with this Triton."""
    cases = []

    def add(label, spec_plan):
        spec = rules_spec(spec_plan.spec, rules)
        cases.append(Case(f"{label}: {spec_plan.name}", spec, spec_plan.buffers, spec_plan.tree))

    # The first tutorial keeps its own kernel: its globals, run without its main.
    basics = runpy.run_path(str(TUTORIALS / "01-aliasing-basics.py"))
    add("aliasing basics", basics["smem_plan"]())
    hopper = importlib.import_module("tlx_kernels.hopper.attention")
    for head_dim in (64, 128):
        add(f"Hopper FA D={head_dim}", hopper.smem_plan(hopper.default_config(head_dim), head_dim))
    blackwell = importlib.import_module("tlx_kernels.blackwell.flash_attention")
    for head_dim in (64, 128):
        plans = blackwell.spec_plans(head_dim, blackwell.num_stages(head_dim))
        for spec_plan in plans.values():
            add(f"Blackwell FA D={head_dim}", spec_plan)
    two_cta = importlib.import_module("tlx_kernels.blackwell.two_cta_mma")
    for spec_plan in two_cta.spec_plans():
        add("Blackwell 2-CTA MMA", spec_plan)
    return cases


def tree_order(tree, count: int) -> list[int]:
    """The buffers in the order the tree writes them, then those outside it."""
    order = []

    def visit(node):
        for child in node.children:
            order.append(child) if isinstance(child, int) else visit(child)

    if tree is not None:
        visit(tree)
    return order + [index for index in range(count) if index not in order]


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def unshared_bytes(case: Case) -> int:
    """The same buffers each in bytes of their own, one after the other in the order the
    tree writes them, every user's first buffer at its alignment and the others a slot
    of its view apart (lcm(size, alignment)), the end rounded to 128 bytes (SMEM): what
    sharing must never exceed."""
    end = 0
    for index in tree_order(case.tree, len(case.buffers)):
        buffer = case.buffers[index]
        size = planner.buffer_size(buffer)
        alignment = max(planner.required_alignment(buffer), 128)
        start = round_up(end, alignment)
        end = start + (buffer.shape[0] - 1) * math.lcm(size, alignment) + size
    return round_up(end, 128)


def aligned_ideal_bytes(case: Case) -> int:
    """The ideal footprint with alignment counted: per buffer group, ``shared`` = max and
    ``distinct`` = sum in the order written, every child starting at the largest
    alignment below it and a leaf's K buffers of a group a slot of its view apart;
    the groups one after the other (SMEM). Plan.ideal_bytes counts 128 bytes only."""

    def extent(element, group, product):
        if isinstance(element, int):
            buffer = case.buffers[element]
            if group >= buffer.shape[0] // product:
                return 0, 128
            size = planner.buffer_size(buffer)
            alignment = max(planner.required_alignment(buffer), 128)
            return (product - 1) * math.lcm(size, alignment) + size, alignment
        parts = [extent(c, group, product * element.group_size) for c in element.children]
        parts = [(length, alignment) for length, alignment in parts if length]
        alignment = max((a for _, a in parts), default=128)
        if element.kind == "shared":
            return max((length for length, _ in parts), default=0), alignment
        end = 0
        for length, child_alignment in parts:
            end = round_up(end, child_alignment) + length
        return end, alignment

    groups = max(b.shape[0] // k for b, k in zip(case.buffers, group_products(case), strict=True))
    end = 0
    for group in range(groups):
        length, alignment = extent(case.tree, group, 1)
        if length:
            end = round_up(end, alignment) + length
    return round_up(end, 128)


def group_products(case: Case) -> list[int]:
    """Per buffer, the group sizes above it multiplied."""
    products = [1] * len(case.buffers)

    def visit(element, product):
        if isinstance(element, int):
            products[element] = product
        else:
            for child in element.children:
                visit(child, product * element.group_size)

    visit(case.tree, 1)
    return products


def fixed_stride_bytes(case: Case) -> int:
    """The region the planner gives ``case`` without a view per buffer group (a user's
    buffer groups whole slots apart: ``Spec.group_stride_form`` ``"slots"``)."""
    spec = replace(case.spec, group_stride_form="slots")
    return planner.plan(spec, case.buffers, case.tree).size_bytes


def has_group_size(tree) -> bool:
    return not isinstance(tree, int) and (
        tree.group_size > 1 or any(has_group_size(c) for c in tree.children)
    )


def regions(case: Case) -> tuple[int, dict[str, int]]:
    """(ideal bytes, {layout: region bytes})."""
    plans = {name: planner.plan(case.spec, case.buffers, case.tree, f) for name, f in FAMILIES}
    return plans["ours"].ideal_bytes, {name: p.size_bytes for name, p in plans.items()}


def summary(cases: list[Case]) -> list[str]:
    rows = {name: [] for name, _ in FAMILIES}
    aligned = []
    fixed_stride = []
    smaller = 0
    over_unshared = 0
    for case in cases:
        ideal, sizes = regions(case)
        for name in rows:
            rows[name].append(sizes[name] / ideal)
        bound = max(ideal, aligned_ideal_bytes(case))
        aligned.append(sizes["ours"] / bound)
        if case.spec.offset_form != "slots":
            fixed_stride.append(fixed_stride_bytes(case) / bound)
        smaller += sizes["ours"] < sizes["group-major"]
        over_unshared += sizes["ours"] > unshared_bytes(case)
    lines = []
    for name, ratios in rows.items():
        at_ideal = sum(abs(r - 1) < 1e-9 for r in ratios) / len(ratios)
        lines.append(
            f"  {name:13s} at ideal {100 * at_ideal:5.1f}%   mean {statistics.mean(ratios):.3f}x"
            f"   worst {max(ratios):.2f}x"
        )
    at_aligned = sum(r <= 1 + 1e-9 for r in aligned) / len(aligned)
    lines.append(
        f"  ours at the ideal with alignment counted {100 * at_aligned:5.1f}%"
        f"   mean {statistics.mean(max(r, 1) for r in aligned):.3f}x"
    )
    if fixed_stride:
        lines.append(
            f"  without a free group stride, with alignment counted "
            f"{100 * sum(r <= 1 + 1e-9 for r in fixed_stride) / len(fixed_stride):5.1f}%"
            f"   mean {statistics.mean(max(r, 1) for r in fixed_stride):.3f}x"
        )
    lines.append(f"  ours smaller than group-major on {100 * smaller / len(cases):.1f}% of trees")
    lines.append(f"  ours larger than unshared on {over_unshared} of {len(cases)} trees")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    for rules in (*RULES, GROUP_STRIDE_RULES):
        views = rules[0]
        for index_aligned in (False, True):
            rng = random.Random(args.seed)
            cases = [random_tree(rng, index_aligned, rules) for _ in range(args.trees)]
            counts = "index-aligned counts" if index_aligned else "equal counts"
            for label, chosen in (
                ("plain", [c for c in cases if not has_group_size(c.tree)]),
                ("with group_size", [c for c in cases if has_group_size(c.tree)]),
            ):
                print(f"{len(chosen)} random trees {label}, {counts}, {views}:")
                print("\n".join(summary(chosen)))
        print()

    print("Kernels (bytes; region / ideal):")
    header = f"  {'spec':48s} {'ideal':>8s} " + " ".join(f"{n:>20s}" for n, _ in FAMILIES)
    for rules in (*RULES, GROUP_STRIDE_RULES):
        print(rules[0])
        print(header)
        for case in [gemm_ring(rules), *tutorial_cases(rules)]:
            ideal, sizes = regions(case)
            cells = " ".join(
                f"{sizes[name]:>10d} ({sizes[name] / ideal:5.2f}x)" for name, _ in FAMILIES
            )
            print(f"  {case.name:48s} {ideal:>8d} {cells}")


if __name__ == "__main__":
    main()
