"""A 2-CTA tcgen05 MMA (sm_100a) whose accumulator shares tensor memory with its own fp16 copy:
the kernel and its CPU compile and plans. The story: tutorials/blackwell_two_cta_mma.py."""

import tlx
import triton
from tlx.compat import tensor_memory_layout, tmem_reg_layout
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell

from tlx_kernels._host import COMPILE_OPTIONS as HOST_OPTIONS

BLOCK_M, BLOCK_N, BLOCK_K = 256, 128, 64
SM100A = GPUTarget("cuda", 100, 32)
COMPILE_OPTIONS = {**HOST_OPTIONS, "num_ctas": 2}
# The CTA pair splits the M dimension: CTA i holds rows [128 i, 128 i + 128).
SPLIT_M = [[1, 0]]
SPLIT_N = [[0, 1]]
ACC_LAYOUT = gl.constexpr(
    tensor_memory_layout((128, BLOCK_N), col_stride=1, cga_layout=SPLIT_M, two_ctas=True)
)
# A is split along M and B along N between the two CTAs, as cta_group::2 reads them.
A_SMEM = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2, cga_layout=SPLIT_M))
B_SMEM = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2, cga_layout=SPLIT_N))
A_REGS = gl.constexpr(gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=SPLIT_M))
B_REGS = gl.constexpr(gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], cga_layout=SPLIT_N))


@tlx.jit
def two_cta_matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
):
    tmem = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc(
        (BLOCK_M, BLOCK_N), gl.float32, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_LAYOUT
    )
    acc_half = tlx.local_alloc(
        (BLOCK_M, BLOCK_N), gl.float16, 1, tlx.storage_kind.tmem, reuse=tmem, layout=ACC_LAYOUT
    )
    tmem.set_buffer_overlap(tlx.reuse_group(acc, acc_half))

    a_rows = gl.arange(0, BLOCK_M, gl.SliceLayout(1, A_REGS))
    a_cols = gl.arange(0, BLOCK_K, gl.SliceLayout(0, A_REGS))
    a = gl.load(a_ptr + a_rows[:, None] * BLOCK_K + a_cols[None, :])
    b_rows = gl.arange(0, BLOCK_K, gl.SliceLayout(1, B_REGS))
    b_cols = gl.arange(0, BLOCK_N, gl.SliceLayout(0, B_REGS))
    b = gl.load(b_ptr + b_rows[:, None] * BLOCK_N + b_cols[None, :])
    a_smem = gl.allocate_shared_memory(gl.float16, [BLOCK_M, BLOCK_K], A_SMEM, a)
    b_smem = gl.allocate_shared_memory(gl.float16, [BLOCK_K, BLOCK_N], B_SMEM, b)

    # Without mbarriers the MMA is synchronous: the accumulator is ready after it.
    blackwell.tcgen05_mma(a_smem, b_smem, acc.index(0), use_acc=False)
    acc_regs: gl.constexpr = tmem_reg_layout(gl.float32, (BLOCK_M, BLOCK_N), ACC_LAYOUT, 4)
    result = acc.index(0).load(acc_regs)
    # The same columns, now as float16: every thread has read its part first.
    acc_half.index(0).store(result.to(gl.float16))
    half_regs: gl.constexpr = tmem_reg_layout(gl.float16, (BLOCK_M, BLOCK_N), ACC_LAYOUT, 4)
    out = acc_half.index(0).load(half_regs)
    c_rows = gl.arange(0, BLOCK_M, gl.SliceLayout(1, half_regs))
    c_cols = gl.arange(0, BLOCK_N, gl.SliceLayout(0, half_regs))
    gl.store(c_ptr + c_rows[:, None] * BLOCK_N + c_cols[None, :], out)


def kernel_source():
    """The kernel as ``triton.compile`` and ``tlx.kernel_plans`` take it."""
    return tlx.ASTSource(
        fn=two_cta_matmul_kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
        constexprs={"BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N, "BLOCK_K": BLOCK_K},
    )


def spec_plans():
    """The plans of the kernel's specs for sm_100a (Triton's front end only)."""
    return tlx.kernel_plans(kernel_source(), target=SM100A, options=COMPILE_OPTIONS)


def compile_for_blackwell():
    return triton.compile(kernel_source(), target=SM100A, options=COMPILE_OPTIONS)
