"""What the planner tests share (test_planner*.py): storages, layouts, buffers and
small helpers. Imports no Triton: the planner does not need it."""

from tlx.planner import (
    Buffer,
    Diagnostic,
    Layout,
    LayoutKind,
    Plan,
    Storage,
    View,
    buffer_extents,
    distinct,
    shared,
)

SMEM = Storage.SMEM
TMEM = Storage.TMEM
TMEM_LAYOUT = Layout(LayoutKind.TENSOR_MEMORY)
TMEM_LAYOUT_64 = Layout(LayoutKind.TENSOR_MEMORY, block_m=64)
UNPACKED = Layout(LayoutKind.TENSOR_MEMORY, unpacked=True)


def nvmma(swizzle_bytes):
    return Layout(LayoutKind.NVMMA_SHARED, swizzle_bytes=swizzle_bytes)


def tmem(name, shape, bits, layout=TMEM_LAYOUT):
    return Buffer(name, shape, bits, TMEM, layout)


def only_error(result: Plan) -> Diagnostic:
    assert len(result.errors) == 1, result.diagnostics
    return result.errors[0]


def slots(view: View, count: int) -> list[int]:
    return [view.slot_of(i) for i in range(count)]


# Buffers used by several SMEM tests (sizes per buffer in the comments).
A = Buffer("a", (2, 64, 64), 16)  # 8192 bytes
B = Buffer("b", (2, 32, 32), 32)  # 4096 bytes
C = Buffer("c", (2, 128, 64), 16)  # 16384 bytes


def fa_buffers():
    """Seed 001's Flash Attention TMEM buffers: 2 MMA groups, 4 P slices."""
    return [
        tmem("qk", (2, 128, 128), 32),  # 128 columns
        tmem("p", (2 * 4, 128, 32), 16),  # 16 columns (f16 packed)
        tmem("alpha", (2, 128, 1), 32),  # 1 column
        tmem("l", (2, 128, 1), 32),
        tmem("m", (2, 128, 1), 32),
    ]


FA_TREE = shared(0, distinct(shared(1, group_size=4), 2, 3, 4))


def buffer_ranges(spec_plan) -> dict[tuple[str, int], tuple[int, int]]:
    """{(buffer name, i): (first unit, end unit)} of every buffer of a kernel's spec plan
    (``tlx.kernel_plans``), as the planner places them (``buffer_extents``)."""
    return {
        (spec_plan.buffers[extent.user].name, extent.index): (extent.start, extent.end)
        for extent in buffer_extents(spec_plan.plan, spec_plan.buffers)
    }


def overlapping_pairs(spec_plan) -> set[tuple[tuple[str, int], tuple[str, int]]]:
    """{((name, i), (name, j))} of every two buffers of a spec plan that share a unit."""
    items = sorted(buffer_ranges(spec_plan).items(), key=lambda item: item[1])
    pairs = set()
    for n, (first, (_, end)) in enumerate(items):
        for second, (start, _end) in items[n + 1 :]:
            if start >= end:
                break
            pairs.add(tuple(sorted((first, second))))
    return pairs
