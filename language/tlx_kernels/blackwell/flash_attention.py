"""Forward Flash Attention for Blackwell (sm_100a): tcgen05 MMAs into tensor memory, with the
S / P / alpha / l / m tiles of each Q tile sharing one TMEM region through tlx: the kernel,
its CPU compiles and plans, and ``attention``. The design:
tutorials/blackwell_flash_attention.py."""

import functools

import tlx
import triton
from tlx.compat import aggregate, tma_store, tmem_reg_layout
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    fence_async_shared,
    mbarrier,
    tcgen05_commit,
    tcgen05_mma,
    tma,
)

from tlx_kernels._host import COMPILE_OPTIONS
from tlx_kernels.hopper.attention_common import (
    block_range,
    descriptor_signature,
    descriptors,
    load_partition,
)

# Kernel constants (constexpr globals, readable in kernels; host code uses their .value).
LOG2E = gl.constexpr(1.4426950408889634)
GROUP_M = gl.constexpr(128)  # rows of one MMA group: one TMEM lane per row
NUM_MMA_GROUPS = gl.constexpr(2)
NUM_MMA_SLICES = gl.constexpr(2)
HEAD_DIMS = (64, 128)


@aggregate
class AttentionBuffers:
    """The CTA's tiles, which the partitions take: in SMEM Q (one per MMA group), the K/V
    stages and the epilogue's O tiles over Q; in TMEM S of each group with P (in slices),
    alpha, l and m over it, and the O accumulators."""

    q_tiles: tlx.buffered_tensor
    k_tiles: tlx.buffered_tensor
    v_tiles: tlx.buffered_tensor
    o_smem_tiles: tlx.buffered_tensor
    qk_tiles: tlx.buffered_tensor
    p_tiles: tlx.buffered_tensor
    alpha_tiles: tlx.buffered_tensor
    l_tiles: tlx.buffered_tensor
    m_tiles: tlx.buffered_tensor
    o_tiles: tlx.buffered_tensor

    @gluon.constexpr_function
    def __init__(
        self,
        q_tiles,
        k_tiles,
        v_tiles,
        o_smem_tiles,
        qk_tiles,
        p_tiles,
        alpha_tiles,
        l_tiles,
        m_tiles,
        o_tiles,
    ):
        self.q_tiles = q_tiles
        self.k_tiles = k_tiles
        self.v_tiles = v_tiles
        self.o_smem_tiles = o_smem_tiles
        self.qk_tiles = qk_tiles
        self.p_tiles = p_tiles
        self.alpha_tiles = alpha_tiles
        self.l_tiles = l_tiles
        self.m_tiles = m_tiles
        self.o_tiles = o_tiles


@aggregate
class AttentionBarriers:
    """The CTA's mbarriers (``_barriers``): Q landed, a K/V stage landed or released, S ready,
    a slice of P ready, alpha ready, O corrected, O's product done, l and m ready."""

    q_ready: gl.shared_memory_descriptor
    k_ready: gl.shared_memory_descriptor
    v_ready: gl.shared_memory_descriptor
    kv_empty: gl.shared_memory_descriptor
    s_ready: gl.shared_memory_descriptor
    p_ready: gl.shared_memory_descriptor
    alpha_ready: gl.shared_memory_descriptor
    o_corrected: gl.shared_memory_descriptor
    o_ready: gl.shared_memory_descriptor
    l_ready: gl.shared_memory_descriptor

    @gluon.constexpr_function
    def __init__(
        self,
        q_ready,
        k_ready,
        v_ready,
        kv_empty,
        s_ready,
        p_ready,
        alpha_ready,
        o_corrected,
        o_ready,
        l_ready,
    ):
        self.q_ready = q_ready
        self.k_ready = k_ready
        self.v_ready = v_ready
        self.kv_empty = kv_empty
        self.s_ready = s_ready
        self.p_ready = p_ready
        self.alpha_ready = alpha_ready
        self.o_corrected = o_corrected
        self.o_ready = o_ready
        self.l_ready = l_ready


@aggregate
class AttentionWork:
    """What this CTA computes: the descriptors, the log-sum-exp output, the scale of S in base
    2, the sequence length, its (batch, head) and first row, and its key blocks (without a
    mask, then all)."""

    desc_q: tma.tensor_descriptor
    desc_k: tma.tensor_descriptor
    desc_v: tma.tensor_descriptor
    desc_o: tma.tensor_descriptor
    lse_ptr: gl.tensor
    qk_scale: gl.tensor
    seq_len: gl.tensor
    off_bh: gl.tensor
    off_m: gl.tensor
    n_unmasked: gl.tensor
    n_blocks: gl.tensor

    @gluon.constexpr_function
    def __init__(
        self,
        desc_q,
        desc_k,
        desc_v,
        desc_o,
        lse_ptr,
        qk_scale,
        seq_len,
        off_bh,
        off_m,
        n_unmasked,
        n_blocks,
    ):
        self.desc_q = desc_q
        self.desc_k = desc_k
        self.desc_v = desc_v
        self.desc_o = desc_o
        self.lse_ptr = lse_ptr
        self.qk_scale = qk_scale
        self.seq_len = seq_len
        self.off_bh = off_bh
        self.off_m = off_m
        self.n_unmasked = n_unmasked
        self.n_blocks = n_blocks


@gluon.jit
def _issue_pv(g: gl.constexpr, block, buffers, barriers):
    """O_g += P_g(block) V_block, slice by slice, asynchronously: o_ready[g] fires when the last
    slice's product is done (the products of one thread complete in order); the barrier arrive
    of the earlier slices is predicated off, which keeps them asynchronous."""
    p_tiles, v_tiles, o_tiles = buffers.p_tiles, buffers.v_tiles, buffers.o_tiles
    v_ready, p_ready = barriers.v_ready, barriers.p_ready
    o_corrected, o_ready = barriers.o_corrected, barriers.o_ready
    NUM_STAGES: gl.constexpr = v_tiles.shape[0]
    BLOCK_N: gl.constexpr = v_tiles.shape[1]
    SLICE_N: gl.constexpr = BLOCK_N // NUM_MMA_SLICES
    stage = block % NUM_STAGES
    mbarrier.wait(v_ready.index(stage), (block // NUM_STAGES) & 1)
    if block > 0:
        # The correction partition has rescaled O_g by alpha(block).
        mbarrier.wait(o_corrected.index(g), (block - 1) & 1)
    for sl in gl.static_range(NUM_MMA_SLICES):
        mbarrier.wait(p_ready.index(g * NUM_MMA_SLICES + sl), block & 1)
        v_rows = v_tiles.index(stage).slice(sl * SLICE_N, SLICE_N)
        # The first slice of block 0 starts the accumulator.
        use_acc = True if sl > 0 else block > 0
        tcgen05_mma(
            p_tiles.index(g * NUM_MMA_SLICES + sl),
            v_rows,
            o_tiles.index(g),
            use_acc=use_acc,
            mbarriers=[o_ready.index(g)],
            mbarrier_preds=[sl == NUM_MMA_SLICES - 1],
        )


@gluon.jit
def _mma_partition(buffers, barriers, work):
    """The MMA warp: per key block and group, O += P V of the last block, then S = Q K^T."""
    q_tiles, k_tiles, qk_tiles = buffers.q_tiles, buffers.k_tiles, buffers.qk_tiles
    q_ready, k_ready, kv_empty = barriers.q_ready, barriers.k_ready, barriers.kv_empty
    s_ready, n_blocks = barriers.s_ready, work.n_blocks
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    for g in gl.static_range(NUM_MMA_GROUPS):
        mbarrier.wait(q_ready.index(g), 0)
    for j in range(n_blocks):
        stage = j % NUM_STAGES
        mbarrier.wait(k_ready.index(stage), (j // NUM_STAGES) & 1)
        for g in gl.static_range(NUM_MMA_GROUPS):
            # S_g(j) overwrites P_g(j - 1): issue the product that reads P first (tcgen05
            # operations of one thread run in order).
            if j > 0:
                _issue_pv(g, j - 1, buffers, barriers)
            tcgen05_mma(
                q_tiles.index(g),
                k_tiles.index(stage).permute((1, 0)),
                qk_tiles.index(g),
                use_acc=False,
                mbarriers=[s_ready.index(g)],
            )
        if j > 0:
            tcgen05_commit(kv_empty.index((j - 1) % NUM_STAGES))
    last = n_blocks - 1
    for g in gl.static_range(NUM_MMA_GROUPS):
        _issue_pv(g, last, buffers, barriers)
    tcgen05_commit(kv_empty.index(last % NUM_STAGES))


@gluon.jit
def _mask_scores(s, off_m, off_n, seq_len, SLICE_N: gl.constexpr, CAUSAL: gl.constexpr):
    cols = off_n + gl.arange(0, SLICE_N, gl.SliceLayout(0, s.type.layout))
    if CAUSAL:
        rows = off_m + gl.arange(0, GROUP_M, gl.SliceLayout(1, s.type.layout))
        keep = cols[None, :] <= rows[:, None]
    else:
        keep = (cols < seq_len)[None, :]
    return gl.where(keep, s, float("-inf"))


@gluon.jit
def _softmax_partition(g: gl.constexpr, buffers, barriers, work, CAUSAL: gl.constexpr):
    """The softmax of row group ``g``."""
    qk_tiles, p_tiles, alpha_tiles = buffers.qk_tiles, buffers.p_tiles, buffers.alpha_tiles
    l_tiles, m_tiles = buffers.l_tiles, buffers.m_tiles
    s_ready, p_ready = barriers.s_ready, barriers.p_ready
    alpha_ready, l_ready = barriers.alpha_ready, barriers.l_ready
    qk_scale, off_m, seq_len = work.qk_scale, work.off_m, work.seq_len
    n_unmasked, n_blocks = work.n_unmasked, work.n_blocks
    BLOCK_N: gl.constexpr = qk_tiles.shape[2]
    gl.static_assert(NUM_MMA_SLICES == 2, "the softmax splits S into two column halves")
    SLICE_N: gl.constexpr = BLOCK_N // NUM_MMA_SLICES
    num_warps: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = tmem_reg_layout(
        gl.float32, [GROUP_M, SLICE_N], TensorMemoryLayout((GROUP_M, SLICE_N), 1), num_warps
    )
    p_layout: gl.constexpr = tmem_reg_layout(
        p_tiles.dtype, [GROUP_M, SLICE_N], p_tiles.layout, num_warps
    )
    column_layout: gl.constexpr = tmem_reg_layout(
        gl.float32, [GROUP_M, 1], alpha_tiles.layout, num_warps
    )
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    off_m = off_m + g * GROUP_M
    qk = qk_tiles.index(g)
    m_i = gl.full([GROUP_M], float("-inf"), gl.float32, row_layout)
    l_i = gl.full([GROUP_M], 0.0, gl.float32, row_layout)
    for j in range(n_blocks):
        mbarrier.wait(s_ready.index(g), j & 1)
        s0 = qk.slice(0, SLICE_N).load(s_layout)
        s1 = qk.slice(SLICE_N, SLICE_N).load(s_layout)
        if j >= n_unmasked:
            s0 = _mask_scores(s0, off_m, j * BLOCK_N, seq_len, SLICE_N, CAUSAL)
            s1 = _mask_scores(s1, off_m, j * BLOCK_N + SLICE_N, seq_len, SLICE_N, CAUSAL)
        m_new = gl.maximum(m_i, gl.maximum(gl.max(s0, 1), gl.max(s1, 1)) * qk_scale)
        alpha = gl.exp2(m_i - m_new)
        if j > 0:
            alpha_tiles.index(g).store(gl.convert_layout(alpha[:, None], column_layout))
            mbarrier.arrive(alpha_ready.index(g))
        # One slice at a time, so that the product on slice 0 starts while slice 1 is
        # exponentiated and only one slice of P is live in registers.
        l_i = l_i * alpha
        p0 = gl.exp2(s0 * qk_scale - m_new[:, None])
        l_i = l_i + gl.sum(p0, 1)
        p_tiles.index(g * NUM_MMA_SLICES).store(gl.convert_layout(p0.to(p_tiles.dtype), p_layout))
        mbarrier.arrive(p_ready.index(g * NUM_MMA_SLICES))
        p1 = gl.exp2(s1 * qk_scale - m_new[:, None])
        l_i = l_i + gl.sum(p1, 1)
        p_tiles.index(g * NUM_MMA_SLICES + 1).store(
            gl.convert_layout(p1.to(p_tiles.dtype), p_layout)
        )
        mbarrier.arrive(p_ready.index(g * NUM_MMA_SLICES + 1))
        m_i = m_new
    l_tiles.index(g).store(gl.convert_layout(l_i[:, None], column_layout))
    m_tiles.index(g).store(gl.convert_layout(m_i[:, None], column_layout))
    mbarrier.arrive(l_ready.index(g))


@gluon.jit
def _correction_partition(buffers, barriers, work):
    """The default partition: O rescaled by alpha before each next P V, then the epilogue
    (O / l through SMEM and a TMA store, and the log-sum-exp)."""
    o_tiles, o_smem_tiles = buffers.o_tiles, buffers.o_smem_tiles
    alpha_tiles, l_tiles, m_tiles = buffers.alpha_tiles, buffers.l_tiles, buffers.m_tiles
    alpha_ready, o_corrected = barriers.alpha_ready, barriers.o_corrected
    o_ready, l_ready = barriers.o_ready, barriers.l_ready
    desc_o, lse_ptr, off_bh, off_m = work.desc_o, work.lse_ptr, work.off_bh, work.off_m
    seq_len, n_blocks = work.seq_len, work.n_blocks
    HEAD_DIM: gl.constexpr = o_tiles.shape[2]
    HALF_D: gl.constexpr = HEAD_DIM // 2
    num_warps: gl.constexpr = gl.num_warps()
    o_layout: gl.constexpr = tmem_reg_layout(
        gl.float32, [GROUP_M, HALF_D], TensorMemoryLayout((GROUP_M, HALF_D), 1), num_warps
    )
    column_layout: gl.constexpr = tmem_reg_layout(
        gl.float32, [GROUP_M, 1], alpha_tiles.layout, num_warps
    )
    o_rows: gl.constexpr = gl.SliceLayout(1, o_layout)
    for j in range(1, n_blocks):
        for g in gl.static_range(NUM_MMA_GROUPS):
            mbarrier.wait(o_ready.index(g), (j - 1) & 1)
            mbarrier.wait(alpha_ready.index(g), (j - 1) & 1)
            alpha = gl.convert_layout(gl.sum(alpha_tiles.index(g).load(column_layout), 1), o_rows)
            for half in gl.static_range(2):
                o_half = o_tiles.index(g).slice(half * HALF_D, HALF_D)
                o_half.store(o_half.load(o_layout) * alpha[:, None])
            mbarrier.arrive(o_corrected.index(g))

    for g in gl.static_range(NUM_MMA_GROUPS):
        mbarrier.wait(o_ready.index(g), (n_blocks - 1) & 1)
        mbarrier.wait(l_ready.index(g), 0)
        l_i = gl.convert_layout(gl.sum(l_tiles.index(g).load(column_layout), 1), o_rows)
        m_i = gl.convert_layout(gl.sum(m_tiles.index(g).load(column_layout), 1), o_rows)
        # A reciprocal a row, then a multiply an element, as in the Hopper attention's
        # epilogue: a division an element takes the MUFU once for each element of O.
        inverse_l = 1.0 / l_i
        o_smem = o_smem_tiles.index(g)
        for half in gl.static_range(2):
            o_half = o_tiles.index(g).slice(half * HALF_D, HALF_D).load(o_layout)
            o_smem.slice(half * HALF_D, HALF_D, dim=1).store(
                (o_half * inverse_l[:, None]).to(o_smem.dtype)
            )
        rows = off_m + g * GROUP_M + gl.arange(0, GROUP_M, o_rows)
        lse = (m_i + gl.log2(l_i)) / LOG2E
        gl.store(lse_ptr + off_bh * seq_len + rows, lse, mask=rows < seq_len)
        fence_async_shared()
        tma_store(desc_o, [off_bh, off_m + g * GROUP_M, 0], o_smem.reshape([1, GROUP_M, HEAD_DIM]))
    tma.store_wait(0)


@gluon.jit
def _barriers(NUM_STAGES: gl.constexpr):
    """The kernel's mbarriers, initialized (an ``AttentionBarriers``)."""
    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    q_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    s_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    alpha_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    o_corrected = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    o_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    l_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS, 1], bar_layout)
    p_ready = gl.allocate_shared_memory(gl.int64, [NUM_MMA_GROUPS * NUM_MMA_SLICES, 1], bar_layout)
    k_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    v_ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    kv_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], bar_layout)
    for g in gl.static_range(NUM_MMA_GROUPS):
        mbarrier.init(q_ready.index(g), count=1)
        mbarrier.init(s_ready.index(g), count=1)
        mbarrier.init(alpha_ready.index(g), count=1)
        mbarrier.init(o_corrected.index(g), count=1)
        mbarrier.init(o_ready.index(g), count=1)
        mbarrier.init(l_ready.index(g), count=1)
    for i in gl.static_range(NUM_MMA_GROUPS * NUM_MMA_SLICES):
        mbarrier.init(p_ready.index(i), count=1)
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(kv_empty.index(i), count=1)
    fence_async_shared()
    return AttentionBarriers(
        q_ready,
        k_ready,
        v_ready,
        kv_empty,
        s_ready,
        p_ready,
        alpha_ready,
        o_corrected,
        o_ready,
        l_ready,
    )


@tlx.jit
def attention_fwd_kernel(
    desc_q,
    desc_k,
    desc_v,
    desc_o,
    lse_ptr,
    qk_scale,
    seq_len,
    BLOCK_N: gl.constexpr,
    HEAD_DIM: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    CAUSAL: gl.constexpr,
):
    BLOCK_M: gl.constexpr = NUM_MMA_GROUPS * GROUP_M
    off_bh, off_m, n_unmasked, n_blocks = block_range(seq_len, BLOCK_M, BLOCK_N, CAUSAL)
    dtype: gl.constexpr = desc_q.dtype

    # SMEM: Q (one tile per MMA group), K/V stages, and the epilogue's O tiles over Q.
    tile_layout: gl.constexpr = gl.NVMMASharedLayout(
        swizzle_byte_width=128, element_bitwidth=dtype.primitive_bitwidth, rank=2
    )
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    q_tiles = tlx.local_alloc(
        (GROUP_M, HEAD_DIM), dtype, NUM_MMA_GROUPS, reuse=smem, layout=tile_layout
    )
    o_smem_tiles = tlx.local_alloc(
        (GROUP_M, HEAD_DIM), dtype, NUM_MMA_GROUPS, reuse=smem, layout=tile_layout
    )
    k_tiles = tlx.local_alloc(
        (BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=tile_layout
    )
    v_tiles = tlx.local_alloc(
        (BLOCK_N, HEAD_DIM), dtype, NUM_STAGES, reuse=smem, layout=tile_layout
    )
    smem.set_buffer_overlap(
        tlx.reuse_group(
            tlx.reuse_group(q_tiles, o_smem_tiles, group_size=NUM_MMA_GROUPS),
            tlx.reuse_group(k_tiles, group_size=NUM_STAGES),
            tlx.reuse_group(v_tiles, group_size=NUM_STAGES),
            group_type=tlx.reuse_group_type.distinct,
        )
    )

    # TMEM: S of each MMA group, with P (in slices), alpha, l and m written over it.
    qk_storage = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk_tiles = tlx.local_alloc(
        (GROUP_M, BLOCK_N), gl.float32, NUM_MMA_GROUPS, tlx.storage_kind.tmem, reuse=qk_storage
    )
    p_tiles = tlx.local_alloc(
        (GROUP_M, BLOCK_N // NUM_MMA_SLICES),
        dtype,
        NUM_MMA_GROUPS * NUM_MMA_SLICES,
        tlx.storage_kind.tmem,
        reuse=qk_storage,
    )
    alpha_tiles = tlx.local_alloc(
        (GROUP_M, 1), gl.float32, NUM_MMA_GROUPS, tlx.storage_kind.tmem, reuse=qk_storage
    )
    l_tiles = tlx.local_alloc(
        (GROUP_M, 1), gl.float32, NUM_MMA_GROUPS, tlx.storage_kind.tmem, reuse=qk_storage
    )
    m_tiles = tlx.local_alloc(
        (GROUP_M, 1), gl.float32, NUM_MMA_GROUPS, tlx.storage_kind.tmem, reuse=qk_storage
    )
    qk_storage.set_buffer_overlap(
        tlx.reuse_group(
            qk_tiles,
            tlx.reuse_group(
                tlx.reuse_group(p_tiles, group_size=NUM_MMA_SLICES),
                alpha_tiles,
                l_tiles,
                m_tiles,
                group_type=tlx.reuse_group_type.distinct,
            ),
            group_type=tlx.reuse_group_type.shared,
        )
    )
    o_tiles = tlx.local_alloc(
        (GROUP_M, HEAD_DIM), gl.float32, NUM_MMA_GROUPS, tlx.storage_kind.tmem
    )

    buffers = AttentionBuffers(
        q_tiles,
        k_tiles,
        v_tiles,
        o_smem_tiles,
        qk_tiles,
        p_tiles,
        alpha_tiles,
        l_tiles,
        m_tiles,
        o_tiles,
    )
    barriers = _barriers(NUM_STAGES)
    work = AttentionWork(
        desc_q,
        desc_k,
        desc_v,
        desc_o,
        lse_ptr,
        qk_scale,
        seq_len,
        off_bh,
        off_m,
        n_unmasked,
        n_blocks,
    )
    gl.warp_specialize(
        [
            (_correction_partition, (buffers, barriers, work)),
            (_softmax_partition, (0, buffers, barriers, work, CAUSAL)),
            (_softmax_partition, (1, buffers, barriers, work, CAUSAL)),
            (_mma_partition, (buffers, barriers, work)),
            (load_partition, (buffers, barriers, work)),
        ],
        [4, 4, 1, 1],
        [184, 184, 24, 24],
    )


BLOCK_N = 128
MAX_STAGES = 4
SM100A = GPUTarget("cuda", 100, 32)


def kernel_source(head_dim, stages, dtype="fp16", causal=False):
    """The kernel with ``stages`` K/V stages, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    constexprs = {
        "BLOCK_N": BLOCK_N,
        "HEAD_DIM": head_dim,
        "NUM_STAGES": stages,
        "CAUSAL": causal,
    }
    signature = {
        **descriptor_signature(dtype, GROUP_M.value, BLOCK_N, head_dim),
        "lse_ptr": "*fp32",
        "qk_scale": "fp32",
        "seq_len": "i32",
        **dict.fromkeys(constexprs, "constexpr"),
    }
    return tlx.ASTSource(fn=attention_fwd_kernel, signature=signature, constexprs=constexprs)


def spec_plans(head_dim, stages):
    """{name: tlx.SpecPlan} of the kernel compiled for sm_100a, as tlx plans it while tracing
    (``tlx.kernel_plans``: no GPU, no PTX): ``smem``, ``qk_storage`` and ``o_tiles_region`` (the
    TMEM region of ``o_tiles``, a local_alloc without reuse). A kernel whose tiles do not fit
    raises the CompilationError compiling it raises."""
    plans = tlx.kernel_plans(
        kernel_source(head_dim, stages), target=SM100A, options=COMPILE_OPTIONS
    )
    return {spec_plan.name: spec_plan for spec_plan in plans}


@functools.cache
def num_stages(head_dim):
    """K/V stages: as many as fit beside Q (which the epilogue's O tiles alias), at most
    MAX_STAGES; one fewer each time the planner rejects the kernel's SMEM region."""
    for stages in range(MAX_STAGES, 0, -1):
        try:
            spec_plans(head_dim, stages)
        except CompilationError:
            if stages == 1:
                raise
        else:
            return stages


def compile_for_blackwell(head_dim, dtype="fp16", causal=False):
    """Compiles the kernel for sm_100a (no GPU needed); returns Triton's compiled kernel."""
    source = kernel_source(head_dim, num_stages(head_dim), dtype, causal)
    return triton.compile(source, target=SM100A, options=COMPILE_OPTIONS)


def attention(q, k, v, causal, sm_scale=None):
    """(softmax(q k^T * sm_scale) v, log-sum-exp of the scaled scores) for (batch, heads,
    seq_len, head_dim) fp16/bf16 CUDA tensors on a Blackwell GPU."""
    import torch

    batch, heads, seq_len, head_dim = q.shape
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim}")
    sm_scale = sm_scale if sm_scale is not None else head_dim**-0.5
    o, desc_q, desc_k, desc_v, desc_o = descriptors(q, k, v, GROUP_M.value, BLOCK_N)
    lse = torch.empty(batch * heads, seq_len, device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(seq_len, NUM_MMA_GROUPS.value * GROUP_M.value), batch * heads)
    attention_fwd_kernel[grid](
        desc_q,
        desc_k,
        desc_v,
        desc_o,
        lse,
        sm_scale * LOG2E.value,
        seq_len,
        BLOCK_N,
        head_dim,
        num_stages(head_dim),
        causal,
        **COMPILE_OPTIONS,
    )
    return o.view(batch, heads, seq_len, head_dim), lse.view(batch, heads, seq_len)
