"""TLX storage aliasing on a GPU: bytes written through one view are read back
through another at the offsets worked out by hand here (group-major,
child-major and periodic layouts, index-aligned counts, runtime and constant
indices), and a TMA load into an aliased NVMMA-swizzled buffer at a non-zero
offset feeds warpgroup_mma.

Each byte kernel writes whole buffers from global memory in phases (Triton's
barrier analysis orders the phases: every view is of one allocation), then
reads every buffer back. The host replays the writes on a byte image of the
region placed by the expected offsets and compares every byte read.
Skipped without a CUDA GPU (the TMA test needs sm_90 or newer)."""

from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

import tlx  # noqa: E402
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


def test_child_major_distinct_read_through_another_view():
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


def test_periodic_layout_read_through_another_view():
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


@pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 9, reason="TMA and wgmma need sm_90")
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
