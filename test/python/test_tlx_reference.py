"""The reference TLX's names (tlx/api/_reference.py, docs/porting.md): each builtin emits
its Gluon operation (checked in the IR Triton's front end makes, sm_90a and sm_100a),
each misuse says what to write, and the names with no single meaning say what to use."""

import re

import pytest
import tlx
import triton
from _helpers import ROWS, SM90, SM100
from tlx.api._jit import front_end
from triton.compiler.errors import CompilationError
from triton.experimental.gluon import language as ttgl

TMEM = ttgl.constexpr(tlx.storage_kind.tmem)
ROW_MAJOR = ttgl.constexpr(ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
TILE_LAYOUT = ttgl.NVMMASharedLayout(128, 16, rank=2)
DESCRIPTOR = f"tensordesc<fp16[64,64],{TILE_LAYOUT!r}>"
pytestmark = pytest.mark.usefixtures("always_compile")


def traced_ir(kernel, target=SM90, signature=None, **constexprs) -> str:
    """The IR of ``kernel`` as Triton's front end makes it (tlx lowering included)."""
    source = tlx.ASTSource(fn=kernel, signature=signature or {}, constexprs=constexprs)
    module, _, _, _ = front_end(source, target, {"num_warps": 4}, "traced_ir")
    return str(module)


def error_of(kernel, target=SM90, signature=None, **constexprs) -> str:
    with pytest.raises(CompilationError) as caught:
        traced_ir(kernel, target, signature, **constexprs)
    return str(caught.value)


# --- buffers ------------------------------------------------------------------


@tlx.jit
def smem_buffers(x_ptr, i):
    a = tlx.local_alloc((64, 64), tlx.dtype_of(x_ptr), 2)
    ttgl.static_assert(tlx.size_of(tlx.dtype_of(a)) == 2)
    tlx.local_store(a[0], ttgl.full([64, 64], 1, ttgl.float16, ROWS))
    x = tlx.local_load(a[i], layout=ROWS)
    right = tlx.local_slice(a[1], [0, 32], [64, 32])
    tlx.local_store(right, ttgl.full([64, 32], 2, ttgl.float16, ROWS))
    t = tlx.local_load(tlx.local_trans(a[1], (1, 0)), layout=ROWS)
    tlx.local_store(tlx.local_reinterpret(a[0], ttgl.int16, [64, 64]), (x + t).to(ttgl.int16))
    b = tlx.local_alloc((4, 64), ttgl.float32, 1, layout=ROW_MAJOR)
    tlx.local_store(tlx.local_reshape(b[0], [2, 128]), ttgl.full([2, 128], 0, ttgl.float32, ROWS))


def test_smem_buffers_are_indexed_loaded_stored_and_viewed_with_gluon_ops():
    ir = traced_ir(smem_buffers, signature={"x_ptr": "*fp16", "i": "i32"})
    assert re.search(r"%x\w* = ttg\.memdesc_index %a\[%i\]", ir)  # a[i]
    assert "!ttg.memdesc<2x64x64xf16" in ir  # dtype_of(x_ptr)
    for op in (
        "ttg.local_store",
        "ttg.local_load",
        "ttg.memdesc_subslice",  # local_slice: columns 32..64
        "ttg.memdesc_trans",
        "ttg.memdesc_reshape",
    ):
        assert op in ir, op
    assert re.search(r"ttg\.memdesc_subslice %\w+\[0, 32\]", ir)
    assert re.search(r"memdesc_reinterpret %\w+ : !ttg\.memdesc<64x64xf16.* -> .*64x64xi16", ir)


@tlx.jit
def tmem_buffers():
    acc = tlx.local_alloc((128, 64), ttgl.float32, 2, TMEM)
    REG: ttgl.constexpr = tlx.compat.tmem_reg_layout(ttgl.float32, [128, 64], acc[0].layout, 4)
    tlx.local_store(acc[0], ttgl.full([128, 64], 0, ttgl.float32, REG))
    half = tlx.subslice(acc[1], 32, 32)
    HALF: ttgl.constexpr = tlx.compat.tmem_reg_layout(ttgl.float32, [128, 32], half.layout, 4)
    left = tlx.local_slice(acc[0], [0, 0], [128, 32])
    tlx.local_store(half, tlx.local_load(left, layout=HALF))


def test_tmem_buffers_are_loaded_stored_and_sliced_by_columns():
    ir = traced_ir(tmem_buffers, SM100)
    assert "ttng.tmem_store" in ir and "ttng.tmem_load" in ir
    # The column offset: "N" in Triton 3.6, "offset" later.
    assert re.search(r"ttng\.tmem_subslice %\w+ \{(N|offset) = 32 : i32\}", ir)
    assert re.search(r"ttng\.tmem_subslice %\w+ \{(N|offset) = 0 : i32\}", ir)


# --- barriers, copies, fences -------------------------------------------------


@tlx.jit
def barriers_and_copies(source, destination, phase):
    tile = tlx.local_alloc((64, 64), ttgl.float16, 1, layout=source.layout)
    bars = tlx.alloc_barriers(3, arrive_count=2)
    tlx.barrier_expect_bytes(bars[0], 64 * 64 * tlx.size_of(tlx.dtype_of(source)))
    tlx.async_descriptor_load(source, tile[0], [0, 64], bars[0])
    tlx.barrier_wait(bars[phase], phase)
    tlx.barrier_arrive(bars[1])
    tlx.fence("async_shared")
    tlx.async_descriptor_store(destination, tile[0], [64, 0])
    tlx.async_descriptor_store_wait(0)


def test_barriers_and_tma_copies_are_gluon_ops():
    signature = {"source": DESCRIPTOR, "destination": DESCRIPTOR, "phase": "i32"}
    ir = traced_ir(barriers_and_copies, signature=signature)
    assert "!ttg.memdesc<3x1xi64" in ir
    assert len(re.findall(r"ttng\.init_barrier %\w+, 2 :", ir)) == 3
    assert re.search(r"ttng\.barrier_expect %\w+, 8192,", ir)
    assert re.search(r"= ttg\.memdesc_index %bars\[%phase\]", ir)  # bars[phase]
    assert re.search(r"ttng\.wait_barrier %\w+, %phase,", ir)
    assert "ttng.arrive_barrier" in ir and "ttng.fence_async_shared" in ir
    assert "ttng.async_tma_copy_global_to_local" in ir
    assert "ttng.async_tma_copy_local_to_global" in ir and "ttng.async_tma_store_wait" in ir


@tlx.jit
def reducing_store(destination):
    tile = tlx.local_alloc((64, 64), ttgl.float16, 1, layout=destination.layout)
    tlx.async_descriptor_store(destination, tile[0], [0, 0], store_reduce="add")


def test_a_reducing_store_is_a_tma_reduction():
    """On every supported Triton: 3.6 and 3.7 through compat's builtin (no Gluon wrapper)."""
    signature = {"destination": DESCRIPTOR}
    assert "ttng.async_tma_reduce add," in traced_ir(reducing_store, signature=signature)


# --- matrix products ----------------------------------------------------------

WGMMA = ttgl.constexpr(
    ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
)


@tlx.jit
def hopper_dot():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    b = tlx.local_alloc((64, 64), ttgl.float16, 2)
    acc = ttgl.zeros((64, 64), ttgl.float32, WGMMA)
    acc = tlx.async_dot(a[0], b[1], acc)
    acc = tlx.async_dot_wait(0, acc)
    tlx.local_store(a[1], acc.to(ttgl.float16))


def test_async_dot_on_hopper_is_an_asynchronous_wgmma_and_its_wait():
    ir = traced_ir(hopper_dot)
    assert re.search(r"ttng\.warp_group_dot .*isAsync = true", ir)
    assert "ttng.warp_group_dot_wait" in ir


@tlx.jit
def blackwell_dot():
    a = tlx.local_alloc((128, 64), ttgl.float16, 2)
    b = tlx.local_alloc((64, 128), ttgl.float16, 2)
    acc = tlx.local_alloc((128, 128), ttgl.float32, 1, TMEM)
    bars = tlx.alloc_barriers(2)
    tlx.async_dot(a[0], b[0], acc[0], use_acc=False, mBarriers=[bars[0]])
    tlx.tcgen05_commit(bars[1])
    tlx.barrier_wait(bars[1], 0)
    scales = tlx.local_alloc((128, 32), ttgl.float32, 1)
    scales_tmem = tlx.local_alloc((128, 32), ttgl.float32, 1, TMEM)
    tlx.tmem_copy(scales[0], scales_tmem[0])


def test_async_dot_on_blackwell_is_tcgen05_with_its_barriers():
    ir = traced_ir(blackwell_dot, SM100)
    assert re.search(r"ttng\.tc_gen5_mma %\w+, %\w+, %\w+\[\], %false, %true, %\w+\[", ir)
    assert "ttng.tc_gen5_commit" in ir and "ttng.tmem_copy" in ir


def test_blackwell_builtins_compile_to_a_cubin():
    source = tlx.ASTSource(fn=blackwell_dot, signature={}, constexprs={})
    assert triton.compile(source, target=SM100).asm["cubin"]


# --- errors: what Gluon needs, and what to write -------------------------------


@tlx.jit
def smem_load_without_layout():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    tlx.local_load(a[0])


@tlx.jit
def tmem_load_without_layout():
    acc = tlx.local_alloc((128, 64), ttgl.float32, 2, TMEM)
    tlx.local_load(acc[1])


def test_a_load_without_layout_names_one_that_would_do():
    message = error_of(smem_load_without_layout)
    assert "tlx.local_load of a[0] needs its register layout, layout=" in message
    assert "ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])" in message
    message = error_of(tmem_load_without_layout, SM100)
    assert "tlx.compat.tmem_reg_layout(ttgl.float32, [128, 64], acc[1].layout, 4)" in message


@tlx.jit
def hopper_dot_without_acc():
    a = tlx.local_alloc((64, 64), ttgl.float16, 1)
    b = tlx.local_alloc((64, 128), ttgl.float16, 1)
    tlx.async_dot(a[0], b[0])


@tlx.jit
def blackwell_dot_with_register_acc():
    a = tlx.local_alloc((128, 64), ttgl.float16, 1)
    b = tlx.local_alloc((64, 128), ttgl.float16, 1)
    tlx.async_dot(a[0], b[0], ttgl.zeros((128, 128), ttgl.float32, ROWS))


@tlx.jit
def wait_on_blackwell():
    tlx.async_dot_wait(0, ttgl.zeros((128, 128), ttgl.float32, ROWS))


def test_async_dot_says_which_accumulator_each_target_needs():
    message = error_of(hopper_dot_without_acc)
    assert "needs the accumulator acc= in registers" in message
    assert "acc=ttgl.zeros([64, 128], ttgl.float32, ttgl.NVMMADistributedLayout(" in message
    assert "instr_shape=[16, 128, 16]" in message
    message = error_of(blackwell_dot_with_register_acc, SM100)
    assert "needs acc=, one TMEM buffer" in message
    assert "wait on them with tlx.barrier_wait" in error_of(wait_on_blackwell, SM100)


@tlx.jit
def whole_buffer_loaded():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    tlx.local_load(a, layout=ROWS)


@tlx.jit
def tmem_transposed():
    acc = tlx.local_alloc((128, 64), ttgl.float32, 1, TMEM)
    tlx.local_trans(acc[0])


@tlx.jit
def unknown_fence():
    tlx.fence("gpu")


@tlx.jit
def barrier_array_given_whole():
    bars = tlx.alloc_barriers(2)
    tlx.barrier_wait(bars, 0)


@tlx.jit
def reinterpret_to_another_width():
    a = tlx.local_alloc((64, 64), ttgl.float16, 1)
    tlx.local_reinterpret(a[0], ttgl.float32, [64, 32])


@pytest.mark.parametrize(
    ("kernel", "target", "fragment"),
    [
        (whole_buffer_loaded, SM90, "src is all 2 buffers of a tlx.local_alloc: give one, src[i]"),
        (tmem_transposed, SM100, "buffer is a TMEM buffer; Gluon has this operation for SMEM"),
        (unknown_fence, SM90, "tlx.fence: scope 'gpu' has no Gluon fence"),
        (barrier_array_given_whole, SM90, "expects one mbarrier, got an array of 2"),
        (reinterpret_to_another_width, SM90, "needs layout=: the buffer's own layout is for 16"),
    ],
    ids=["whole-buffer", "tmem-trans", "fence-scope", "barrier-array", "reinterpret"],
)
def test_misuses_say_what_to_write(kernel, target, fragment):
    assert fragment in error_of(kernel, target)


# --- names with no single meaning here ----------------------------------------


@tlx.jit
def reference_warp_specialization():
    with tlx.async_tasks():
        pass


def test_a_name_with_no_single_meaning_says_what_to_use_instead():
    message = error_of(reference_warp_specialization)
    assert "tlx.async_tasks of the reference TLX has no single meaning" in message
    assert "ttgl.warp_specialize(" in message
    with pytest.raises(tlx.TLXNameError, match="ampere.async_copy"):
        tlx.async_load  # noqa: B018
    assert not hasattr(tlx, "named_barrier_wait")  # still an AttributeError to hasattr
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'") as caught:
        tlx.no_such_name  # noqa: B018
    assert not isinstance(caught.value, tlx.TLXError)
