"""TLX storage aliasing on a GPU: bytes written through one view are read back
through another at the offsets worked out by hand here (group-major,
child-major and periodic layouts, index-aligned counts, runtime and constant
indices), and a TMA load into an aliased NVMMA-swizzled buffer at a non-zero
offset feeds warpgroup_mma.

Each byte kernel writes whole buffers from global memory in phases (Triton's
barrier analysis orders the phases: every view is of one allocation), then
reads every buffer back. The host replays the writes on a byte image of the
region placed by the expected offsets and compares every byte read.
Skipped without a CUDA GPU (the TMA test needs sm_90 or newer).

The fuzz (``test_random_trees_with_views_at_byte_offsets``) draws trees of three
users (shapes, element types, NVMMA or row-major layouts, counts, group sizes) whose
plans put views at byte offsets, launches each and checks that every buffer no later
write overlaps reads back exact, read at runtime indices; without a GPU its kernels
are compiled for sm_90a instead. ``test_random_trees_with_a_view_per_buffer_group`` does
the same with trees whose plans have a view per buffer group at a common stride (runtime_row
on Triton 3.6 and 3.7, selected_rows on 3.9: the form is the installed Triton's, and 3.6 and
3.7 cannot take 3.9's, whose group views subslice the backing's rows), and
``test_random_trees_with_groups_at_starts_of_their_own`` with trees whose plans have a view
per buffer group at starts of its own (selected_rows on 3.6, 3.7 and 3.9, each group's view
the backing's row at its start on 3.6 and 3.7, its rows from there on 3.9)."""

from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")
GPU = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs a CUDA GPU")

import tlx  # noqa: E402
import triton  # noqa: E402
from tlx import compat  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as ttgl  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, warpgroup_mma  # noqa: E402
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor  # noqa: E402

ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
ROW_MAJOR = ttgl.constexpr(ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
SHARED = ttgl.constexpr(tlx.reuse_group_type.shared)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)


@gluon.jit
def tile_offsets(R: ttgl.constexpr, C: ttgl.constexpr):
    rows = ttgl.arange(0, R, layout=ttgl.SliceLayout(1, ROWS))
    columns = ttgl.arange(0, C, layout=ttgl.SliceLayout(0, ROWS))
    return rows[:, None] * C + columns[None, :]


@gluon.jit
def write(buffer, source, NUM: ttgl.constexpr, R: ttgl.constexpr, C: ttgl.constexpr):
    offsets = tile_offsets(R, C)
    for k in ttgl.static_range(NUM):
        buffer.index(k).store(ttgl.load(source + k * R * C + offsets))


@gluon.jit
def read(buffer, destination, NUM: ttgl.constexpr, R: ttgl.constexpr, C: ttgl.constexpr):
    offsets = tile_offsets(R, C)
    for k in ttgl.static_range(NUM):
        ttgl.store(destination + k * R * C + offsets, buffer.index(k).load(ROWS))


@dataclass(frozen=True)
class Buffer:
    """A buffer as the test expects it: ``num`` tiles of ``rows x columns``
    elements, tile ``i`` at byte ``offsets[i]`` of the region."""

    name: str
    dtype: object
    num: int
    rows: int
    columns: int
    offsets: tuple[int, ...]

    @property
    def tile_bytes(self) -> int:
        return self.rows * self.columns * self.dtype.itemsize


def run_and_compare(kernel, region_bytes, buffers, phases):
    """Launches ``kernel(in_0, out_0, in_1, out_1, ...)`` (one pair per buffer,
    in ``buffers`` order) and checks every tile read back against the replay
    of ``phases`` (lists of buffer names written in that order)."""
    generator = torch.Generator().manual_seed(0)
    inputs = {
        b.name: torch.randint(-100, 100, (b.num, b.rows, b.columns), generator=generator).to(
            b.dtype
        )
        for b in buffers
    }
    outputs = {b.name: torch.zeros_like(inputs[b.name]) for b in buffers}
    arguments = []
    for b in buffers:
        arguments += [inputs[b.name].cuda(), outputs[b.name].cuda()]
    kernel[(1,)](*arguments, num_warps=4)
    torch.cuda.synchronize()

    by_name = {b.name: b for b in buffers}
    region = torch.zeros(region_bytes, dtype=torch.uint8)
    for phase in phases:
        for name in phase:
            b = by_name[name]
            for i, offset in enumerate(b.offsets):
                region[offset : offset + b.tile_bytes] = inputs[name][i].flatten().view(torch.uint8)
    for index, b in enumerate(buffers):
        read_back = arguments[2 * index + 1].cpu()
        for i, offset in enumerate(b.offsets):
            expected = region[offset : offset + b.tile_bytes]
            got = read_back[i].flatten().view(torch.uint8)
            assert torch.equal(got, expected), f"{b.name}[{i}] at byte {offset}"


@tlx.jit
def shared_two_types(a_in, a_out, b_in, b_out):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((16, 32), ttgl.int16, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    write(a, a_in, 2, 32, 32)
    write(b, b_in, 2, 16, 32)
    read(a, a_out, 2, 32, 32)
    read(b, b_out, 2, 16, 32)


@needs_gpu
def test_shared_group_of_different_sizes_and_element_types():
    # a: 4 KiB tiles, b: 1 KiB tiles at the start of each a tile.
    run_and_compare(
        shared_two_types,
        8192,
        [
            Buffer("a", torch.int32, 2, 32, 32, (0, 4096)),
            Buffer("b", torch.int16, 2, 16, 32, (0, 4096)),
        ],
        [["a"], ["b"]],
    )


@tlx.jit
def shared_of_distinct(q_in, q_out, r_in, r_out, s_in, s_out):
    spec = tlx.storage_alias_spec()
    q = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    r = tlx.local_alloc((16, 32), ttgl.int16, 2, reuse=spec, layout=ROW_MAJOR)
    s = tlx.local_alloc((8, 64), ttgl.int8, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(q, tlx.reuse_group(r, s, group_type=DISTINCT)))
    write(q, q_in, 2, 32, 32)
    write(r, r_in, 2, 16, 32)
    write(s, s_in, 2, 8, 64)
    read(q, q_out, 2, 32, 32)
    read(r, r_out, 2, 16, 32)
    read(s, s_out, 2, 8, 64)


@needs_gpu
def test_nested_shared_of_distinct():
    # Per 4 KiB group: q | r (1 KiB) then s (512 B) right after r.
    run_and_compare(
        shared_of_distinct,
        8192,
        [
            Buffer("q", torch.int32, 2, 32, 32, (0, 4096)),
            Buffer("r", torch.int16, 2, 16, 32, (0, 4096)),
            Buffer("s", torch.int8, 2, 8, 64, (1024, 5120)),
        ],
        [["q"], ["r", "s"]],
    )


@tlx.jit
def distinct_of_shared(u_in, u_out, v_in, v_out, w_in, w_out):
    spec = tlx.storage_alias_spec()
    u = tlx.local_alloc((16, 32), ttgl.int16, 2, reuse=spec, layout=ROW_MAJOR)
    v = tlx.local_alloc((8, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    w = tlx.local_alloc((32, 32), ttgl.int8, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(
        tlx.reuse_group(tlx.reuse_group(u, v, group_type=SHARED), w, group_type=DISTINCT)
    )
    write(u, u_in, 2, 16, 32)
    write(w, w_in, 2, 32, 32)
    write(v, v_in, 2, 8, 32)
    read(u, u_out, 2, 16, 32)
    read(v, v_out, 2, 8, 32)
    read(w, w_out, 2, 32, 32)


@needs_gpu
def test_nested_distinct_of_shared():
    # Per 2 KiB group: u and v share the first 1 KiB, w has the second.
    run_and_compare(
        distinct_of_shared,
        4096,
        [
            Buffer("u", torch.int16, 2, 16, 32, (0, 2048)),
            Buffer("v", torch.int32, 2, 8, 32, (0, 2048)),
            Buffer("w", torch.int8, 2, 32, 32, (1024, 3072)),
        ],
        [["u", "w"], ["v"]],
    )


@tlx.jit
def sub_tiles(qk_in, qk_out, p_in, p_out, alpha_in, alpha_out):
    spec = tlx.storage_alias_spec()
    qk = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    p = tlx.local_alloc((32, 32), ttgl.int16, 4, reuse=spec, layout=ROW_MAJOR)
    alpha = tlx.local_alloc((2, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            qk, tlx.reuse_group(tlx.reuse_group(p, group_size=2), alpha, group_type=DISTINCT)
        )
    )
    write(qk, qk_in, 2, 32, 32)
    write(alpha, alpha_in, 2, 2, 32)
    write(p, p_in, 4, 32, 32)
    read(qk, qk_out, 2, 32, 32)
    read(p, p_out, 4, 32, 32)
    read(alpha, alpha_out, 2, 2, 32)


@needs_gpu
def test_group_size_sub_tiling():
    # Two 2 KiB p slices fill one 4 KiB qk tile. Child-major: the four slices
    # fill [0, 8 KiB) under qk's two tiles, both alphas (256 B) follow them.
    run_and_compare(
        sub_tiles,
        12288,
        [
            Buffer("qk", torch.int32, 2, 32, 32, (0, 4096)),
            Buffer("p", torch.int16, 4, 32, 32, (0, 2048, 4096, 6144)),
            Buffer("alpha", torch.int32, 2, 2, 32, (8192, 8448)),
        ],
        [["qk", "alpha"], ["p"]],
    )


@gluon.jit
def write_at_runtime(buffer, source, NUM: ttgl.constexpr, R: ttgl.constexpr, C: ttgl.constexpr):
    """As ``write``, with a runtime buffer index: the slot arithmetic runs on the GPU."""
    offsets = tile_offsets(R, C)
    for k in range(NUM):
        buffer.index(k).store(ttgl.load(source + k * R * C + offsets))


@gluon.jit
def read_at_runtime(buffer, destination, NUM: ttgl.constexpr, R: ttgl.constexpr, C: ttgl.constexpr):
    offsets = tile_offsets(R, C)
    for k in range(NUM):
        ttgl.store(destination + k * R * C + offsets, buffer.index(k).load(ROWS))


@tlx.jit
def child_major_pair(a_in, a_out, b_in, b_out, raw_in, raw_out):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((32, 32), ttgl.int16, 2, reuse=spec, layout=ROW_MAJOR)
    # Outside the tree: at offset 0, its tiles one after the other over every
    # byte of the region.
    raw = tlx.local_alloc((32, 32), ttgl.int32, 3, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    write_at_runtime(raw, raw_in, 3, 32, 32)
    write_at_runtime(a, a_in, 2, 32, 32)
    write_at_runtime(b, b_in, 2, 32, 32)
    read_at_runtime(a, a_out, 2, 32, 32)
    read_at_runtime(b, b_out, 2, 32, 32)
    read_at_runtime(raw, raw_out, 3, 32, 32)


@pytest.fixture
def compiled_afresh(monkeypatch, tmp_path):
    """A Triton cache of this test's own: the planner's warnings are emitted when the kernel
    compiles, and a kernel found in the cache (a second run of the suite) does not."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))


@needs_gpu
def test_child_major_distinct_read_through_another_view(compiled_afresh):
    # distinct(a: 4 KiB, b: 2 KiB) per group, child-major: a0 a1 in [0, 8 KiB),
    # b0 b1 in [8 KiB, 12 KiB) (group-major would need 16 KiB); raw, read last,
    # sees both.
    with pytest.warns(tlx.TLXWarning, match='buffer "raw" is not in the overlap tree'):
        run_and_compare(
            child_major_pair,
            12288,
            [
                Buffer("a", torch.int32, 2, 32, 32, (0, 4096)),
                Buffer("b", torch.int16, 2, 32, 32, (8192, 10240)),
                Buffer("raw", torch.int32, 3, 32, 32, (0, 4096, 8192)),
            ],
            [["raw"], ["a", "b"]],
        )


@tlx.jit
def periodic_counts(a_in, a_out, b_in, b_out, raw_in, raw_out):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((16, 32), ttgl.int32, 3, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    raw = tlx.local_alloc((16, 32), ttgl.int32, 7, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    write_at_runtime(raw, raw_in, 7, 16, 32)
    write_at_runtime(a, a_in, 3, 16, 32)
    write_at_runtime(b, b_in, 2, 32, 32)
    read_at_runtime(a, a_out, 3, 16, 32)
    read_at_runtime(b, b_out, 2, 32, 32)
    read_at_runtime(raw, raw_out, 7, 16, 32)


@needs_gpu
def test_periodic_layout_read_through_another_view(compiled_afresh):
    # distinct(a: 3 x 2 KiB, b: 2 x 4 KiB), counts index-aligned: every two
    # buffer groups hold a0 a1 b0 b1, then a2 follows (a[i] is slot
    # 6 (i / 2) + i % 2): 14 KiB, the ideal. raw covers all of it.
    with pytest.warns(tlx.TLXWarning, match='buffer "raw" is not in the overlap tree'):
        run_and_compare(
            periodic_counts,
            14336,
            [
                Buffer("a", torch.int32, 3, 16, 32, (0, 2048, 12288)),
                Buffer("b", torch.int32, 2, 32, 32, (4096, 8192)),
                Buffer("raw", torch.int32, 7, 16, 32, tuple(range(0, 14336, 2048))),
            ],
            [["raw"], ["a", "b"]],
        )


@tlx.jit
def epilogue_over_stage_zero(a_in, a_out, b_in, b_out, c_in, c_out):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((32, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    c = tlx.local_alloc((64, 32), ttgl.int32, 1, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(
        tlx.reuse_group(c, tlx.reuse_group(a, b, group_type=DISTINCT), group_type=SHARED)
    )
    write_at_runtime(a, a_in, 2, 32, 32)
    write_at_runtime(b, b_in, 2, 32, 32)
    write_at_runtime(c, c_in, 1, 64, 32)
    read_at_runtime(a, a_out, 2, 32, 32)
    read_at_runtime(b, b_out, 2, 32, 32)
    read_at_runtime(c, c_out, 1, 64, 32)


@needs_gpu
def test_one_buffer_shares_group_zero_of_a_ring():
    # Index-aligned counts: c (8 KiB, one buffer) shares the bytes of buffer
    # group 0, a0 and b0; a1 and b1 keep their data.
    run_and_compare(
        epilogue_over_stage_zero,
        16384,
        [
            Buffer("a", torch.int32, 2, 32, 32, (0, 8192)),
            Buffer("b", torch.int32, 2, 32, 32, (4096, 12288)),
            Buffer("c", torch.int32, 1, 64, 32, (0,)),
        ],
        [["a", "b"], ["c"]],
    )


@tlx.jit
def sized_with_padding(a_in, a_out, b_in, b_out):
    spec = tlx.storage_alias_spec(buffer_size_bytes=12288)
    a = tlx.local_alloc((32, 32), ttgl.int16, 2, reuse=spec, layout=ROW_MAJOR)
    b = tlx.local_alloc((16, 32), ttgl.int32, 2, reuse=spec, layout=ROW_MAJOR)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    write(a, a_in, 2, 32, 32)
    write(b, b_in, 2, 16, 32)
    read(a, a_out, 2, 32, 32)
    read(b, b_out, 2, 16, 32)


@needs_gpu
def test_sized_spec_with_padding():
    run_and_compare(
        sized_with_padding,
        12288,
        [
            Buffer("a", torch.int16, 2, 32, 32, (0, 4096)),
            Buffer("b", torch.int32, 2, 16, 32, (2048, 6144)),
        ],
        [["a", "b"]],
    )


@tlx.jit
def legacy_reuse(x_in, x_out, y_in, y_out):
    x = tlx.local_alloc((32, 32), ttgl.int32, 2, layout=ROW_MAJOR)
    y = tlx.local_alloc((32, 64), ttgl.int8, 2, reuse=x, layout=ROW_MAJOR)
    write(x, x_in, 2, 32, 32)
    write(y, y_in, 2, 32, 64)
    read(x, x_out, 2, 32, 32)
    read(y, y_out, 2, 32, 64)


# The legacy form is what this test runs; test_tlx_phases.py checks its DeprecationWarning.
@needs_gpu
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_legacy_reuse_of_a_buffered_tensor():
    # y's two 2 KiB tiles alias the first 4 KiB tile of x at offset 0.
    run_and_compare(
        legacy_reuse,
        8192,
        [
            Buffer("x", torch.int32, 2, 32, 32, (0, 4096)),
            Buffer("y", torch.int8, 2, 32, 64, (0, 2048)),
        ],
        [["x"], ["y"]],
    )


MMA = ttgl.constexpr(
    ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
)


@tlx.jit
def tma_into_aliased_buffer(a_desc, b_desc, c, d, TILE: ttgl.constexpr):
    spec = tlx.storage_alias_spec()
    staging = tlx.local_alloc((TILE, TILE), ttgl.float32, 1, reuse=spec, layout=ROW_MAJOR)
    a = tlx.local_alloc((TILE, TILE), ttgl.float16, 1, reuse=spec, layout=a_desc.layout)
    b = tlx.local_alloc((TILE, TILE), ttgl.float16, 1, reuse=spec, layout=b_desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(staging, a, b, group_type=DISTINCT))
    # The staging tile comes first, so a sits 16 KiB and b 24 KiB into the region.
    offsets = tile_offsets(TILE, TILE)
    staging.index(0).store(ttgl.load(d + offsets))

    barrier = ttgl.allocate_shared_memory(ttgl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(barrier, count=1)
    mbarrier.expect(barrier, 2 * TILE * TILE * 2)
    compat.tma_load(a_desc, [0, 0], barrier, a.index(0))
    compat.tma_load(b_desc, [0, 0], barrier, b.index(0))
    mbarrier.wait(barrier, 0)
    mbarrier.invalidate(barrier)

    accumulator = ttgl.convert_layout(staging.index(0).load(ROWS), MMA)
    accumulator = warpgroup_mma(a.index(0), b.index(0), accumulator)
    rows = ttgl.arange(0, TILE, layout=ttgl.SliceLayout(1, MMA))
    columns = ttgl.arange(0, TILE, layout=ttgl.SliceLayout(0, MMA))
    ttgl.store(c + rows[:, None] * TILE + columns[None, :], accumulator)


@pytest.mark.skipif(
    not GPU or torch.cuda.get_device_capability()[0] < 9, reason="TMA and wgmma need sm_90"
)
def test_tma_load_into_aliased_nvmma_buffer_feeds_warpgroup_mma():
    tile = 64
    generator = torch.Generator().manual_seed(1)
    a = torch.randn(tile, tile, generator=generator).half().cuda()
    b = torch.randn(tile, tile, generator=generator).half().cuda()
    d = torch.randn(tile, tile, generator=generator).float().cuda()
    c = torch.empty(tile, tile, dtype=torch.float32, device="cuda")
    layout = ttgl.NVMMASharedLayout.get_default_for([tile, tile], ttgl.float16)
    a_desc = TensorDescriptor.from_tensor(a, [tile, tile], layout)
    b_desc = TensorDescriptor.from_tensor(b, [tile, tile], layout)
    tma_into_aliased_buffer[(1,)](a_desc, b_desc, c, d, TILE=tile, num_warps=4)
    expected = a.float() @ b.float() + d
    torch.testing.assert_close(c, expected, atol=1e-2, rtol=1e-2)


# --- Fuzz: random trees whose plans put views at byte offsets --------------------------------

FUZZ_CASES = 16
FUZZ_DTYPES = {ttgl.float16: torch.float16, ttgl.float32: torch.float32, ttgl.int8: torch.int8}
FUZZ_POINTERS = {ttgl.float16: "*fp16", ttgl.float32: "*fp32", ttgl.int8: "*i8"}
FUZZ_TREES = ("distinct(a, b, c)", "shared(distinct(a, b), c)", "distinct(a, shared(b, c))")


@tlx.jit
def fuzz_tree(
    a_in,
    a_out,
    b_in,
    b_out,
    c_in,
    c_out,
    TREE: ttgl.constexpr,
    GROUP: ttgl.constexpr,
    A: ttgl.constexpr,
    B: ttgl.constexpr,
    C: ttgl.constexpr,
):
    """Three users (each ``(num, rows, columns, dtype, layout)``) under tree ``TREE``
    (FUZZ_TREES; ``GROUP``: the group size of distinct(a, b)); every buffer written
    with constant indices in the order a, b, c, then read back at runtime indices."""
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((A[1], A[2]), A[3], A[0], reuse=spec, layout=A[4])
    b = tlx.local_alloc((B[1], B[2]), B[3], B[0], reuse=spec, layout=B[4])
    c = tlx.local_alloc((C[1], C[2]), C[3], C[0], reuse=spec, layout=C[4])
    if TREE == 0:
        spec.set_buffer_overlap(tlx.reuse_group(a, b, c, group_type=DISTINCT))
    elif TREE == 1:
        ab = tlx.reuse_group(a, b, group_type=DISTINCT, group_size=GROUP)
        spec.set_buffer_overlap(tlx.reuse_group(ab, c, group_type=SHARED))
    else:
        bc = tlx.reuse_group(b, c, group_type=SHARED)
        spec.set_buffer_overlap(tlx.reuse_group(a, bc, group_type=DISTINCT))
    write(a, a_in, A[0], A[1], A[2])
    write(b, b_in, B[0], B[1], B[2])
    write(c, c_in, C[0], C[1], C[2])
    read_at_runtime(a, a_out, A[0], A[1], A[2])
    read_at_runtime(b, b_out, B[0], B[1], B[2])
    read_at_runtime(c, c_out, C[0], C[1], C[2])


def fuzz_user(rng, group):
    dtype = rng.choice(list(FUZZ_DTYPES))
    rows, columns = rng.choice((8, 16, 32)), rng.choice((32, 64, 128))
    row_bytes = columns * dtype.primitive_bitwidth // 8
    nvmma = row_bytes >= 128 and rng.random() < 0.5
    bits = dtype.primitive_bitwidth
    layout = ttgl.NVMMASharedLayout(128, bits, rank=2) if nvmma else ROW_MAJOR.value
    return (rng.randint(1, 3) * group, rows, columns, dtype, layout)


def has_offset_view(plan) -> bool:
    """A view at a byte offset, or any plan where the Triton writes none (3.8)."""
    return compat.OFFSET_VIEW_FORM == "slots" or any(v.base for v in plan.views)


def has_group_view(plan) -> bool:
    """A view per buffer group at a common stride (runtime_row, selected_rows), or any plan
    with a view at a byte offset where the Triton writes none (3.8)."""
    if compat.GROUP_STRIDE_VIEW_FORM == "slots":
        return has_offset_view(plan)
    return any(v.group_stride for v in plan.views)


def has_group_starts(plan) -> bool:
    """A view per buffer group at starts of its own (selected_rows with group_starts), or
    any plan with a view at a byte offset where the Triton writes none (3.8)."""
    if compat.GROUP_STRIDE_VIEW_FORM == "slots":
        return has_offset_view(plan)
    return any(v.group_starts for v in plan.views)


def fuzz_kernel(rng):
    """(constexprs, signature, tlx's SpecPlan) of one random draw of ``fuzz_tree``."""
    tree, group = rng.randrange(len(FUZZ_TREES)), rng.choice((1, 1, 2))
    users = [fuzz_user(rng, group if tree == 1 and i < 2 else 1) for i in range(3)]
    constexprs = {"TREE": tree, "GROUP": group, "A": users[0], "B": users[1], "C": users[2]}
    signature = {
        f"{user}_{way}": FUZZ_POINTERS[users[i][3]]
        for i, user in enumerate("abc")
        for way in ("in", "out")
    }
    source = tlx.ASTSource(fn=fuzz_tree, signature=signature, constexprs=constexprs)
    (spec_plan,) = tlx.kernel_plans(source, target=tlx_sm90())
    return constexprs, signature, spec_plan


def fuzz_case(seed, wanted=has_offset_view):
    """(constexprs, signature, plan) of the first draw from ``seed`` whose plan is
    ``wanted``."""
    import random

    rng = random.Random(seed)
    for _ in range(400):
        constexprs, signature, spec_plan = fuzz_kernel(rng)
        if wanted(spec_plan.plan):
            return constexprs, signature, spec_plan.plan
    raise AssertionError(f"seed {seed}: no tree that {wanted.__name__}")


def tlx_sm90():
    from triton.backends.compiler import GPUTarget

    return GPUTarget("cuda", 90, 32)


def exact_tiles(plan, users):
    """(user, index) of every tile that no tile written after it overlaps (writes go a,
    b, c, each in index order): what must read back exact."""
    tiles = []
    for user, (num, rows, columns, dtype, _) in enumerate(users):
        size = rows * columns * dtype.primitive_bitwidth // 8
        tiles += [(user, k, plan.views[user].start_of(k), size) for k in range(num)]
    return [
        (user, k)
        for n, (user, k, start, size) in enumerate(tiles)
        if not any(s < start + size and start < s + z for _, _, s, z in tiles[n + 1 :])
    ]


@pytest.mark.parametrize("seed", range(FUZZ_CASES))
def test_random_trees_with_views_at_byte_offsets(seed):
    launch_and_compare(seed, *fuzz_case(seed))


@pytest.mark.parametrize("seed", range(FUZZ_CASES))
def test_random_trees_with_a_view_per_buffer_group(seed):
    """Trees whose buffer groups end at no multiple of a user's size: on Triton 3.6 and
    3.7 that user's buffers are a view per group (runtime_row), each read back at a
    runtime index through the group's row computed at run time; on 3.9 (selected_rows)
    through the view of its group an scf.if on the group chooses."""
    launch_and_compare(seed, *fuzz_case(seed, has_group_view))


@pytest.mark.parametrize("seed", range(FUZZ_CASES))
def test_random_trees_with_groups_at_starts_of_their_own(seed):
    """Trees whose group-by-group layout puts a user's buffer groups at starts no one view
    or common stride holds (docs/planner.md, "What stays above the ideal"): that user is a
    view per group (selected_rows, ``View.group_starts``), each read back at a runtime index
    through the view of its group an scf.if on the group chooses, written on 3.6 and 3.7 as
    the backing's row at the group's start (``View.group_form`` indexed_row)."""
    constexprs, signature, plan = fuzz_case(seed, has_group_starts)
    if compat.GROUP_STRIDE_VIEW_FORM != "slots":
        user = next(view for view in plan.views if view.group_starts)
        assert user.form == "selected_rows" and user.group_form == compat.OFFSET_VIEW_FORM
    launch_and_compare(seed, constexprs, signature, plan)


def launch_and_compare(seed, constexprs, signature, plan):
    """Launches the fuzz kernel of ``constexprs`` and compares every tile no later write
    overlaps (compiles it for sm_90a without a GPU)."""
    users = [constexprs[name] for name in "ABC"]
    exact = exact_tiles(plan, users)
    if constexprs["TREE"] == 0:
        assert len(exact) == sum(user[0] for user in users)  # distinct: nothing overlaps
    if not GPU:
        source = tlx.ASTSource(fn=fuzz_tree, signature=signature, constexprs=constexprs)
        compiled = triton.compile(source, target=tlx_sm90())
        assert ".shared" in compiled.asm["ptx"] and "st.global" in compiled.asm["ptx"]
        return
    generator = torch.Generator().manual_seed(seed)
    inputs, outputs, arguments = [], [], []
    for num, rows, columns, dtype, _ in users:
        data = torch.randint(-100, 100, (num, rows, columns), generator=generator)
        inputs.append(data.to(FUZZ_DTYPES[dtype]))
        outputs.append(torch.zeros_like(inputs[-1]).cuda())
        arguments += [inputs[-1].cuda(), outputs[-1]]
    fuzz_tree[(1,)](*arguments, num_warps=4, **constexprs)
    torch.cuda.synchronize()
    for user, k in exact:
        got = outputs[user][k].cpu()
        assert torch.equal(got, inputs[user][k]), (seed, "abc"[user], k, plan.views[user])
