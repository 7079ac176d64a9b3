"""What the Hopper kernels share: the target, the dtypes they take, the 128-byte-swizzled tile
layout the matrix kernels' (gemm, fused MLP) TMA descriptors and warpgroup_mma operands use,
the padding of an operand whose rows the TMA cannot address, the consumers' matrix products
over an operand ring (``ring_matmul``: gemm, fused MLP), the registers of a warp-specialized
kernel's partitions, and the printing of plans."""

import dataclasses
import functools

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_wait,
)

TORCH_TO_TRITON_DTYPE = {torch.float16: "fp16", torch.bfloat16: "bf16"}
TRITON_DTYPE_BITS = {"fp16": 16, "bf16": 16}
SM90A = GPUTarget("cuda", 90, 32)
# The TMA reads and writes rows whose byte stride is a multiple of this, from an address that
# is a multiple of it.
TMA_ALIGNMENT = 16
# Registers: an SM has 64K, shared equally by the CTAs that run on it. Triton launches every
# thread of a warp-specialized kernel with one count, then moves registers between its
# warpgroups (setmaxnreg): the loader warp's warpgroup keeps LOADER_REGISTERS a thread and the
# consumer warpgroups share the rest. Counts are multiples of 8.
SM_REGISTERS = 65536
WARPGROUP_THREADS = 128
LOADER_REGISTERS = gl.constexpr(24)


def partition_registers(consumers, ctas_per_sm=1):
    """(registers a thread at launch, a worker consumer thread's after setmaxnreg) of a kernel
    of ``consumers`` consumer warpgroups and a loader warp, ``ctas_per_sm`` CTAs an SM: the
    CTA's share of the SM's, less the loader warpgroup's, split among the consumers. Triton
    gives the default partition, the first consumer, what the others leave of the launch count
    times the warpgroups (with two consumers and two CTAs an SM, 104 beside the other's 112)."""
    cta = SM_REGISTERS // ctas_per_sm
    launch = cta // ((consumers + 1) * WARPGROUP_THREADS) // 8 * 8
    consumer = (cta - LOADER_REGISTERS.value * WARPGROUP_THREADS) // (consumers * WARPGROUP_THREADS)
    return launch, consumer // 8 * 8


def triton_dtype(dtype):
    """The Triton name of a torch dtype, "fp16" or "bf16" (either name is returned as is)."""
    name = TORCH_TO_TRITON_DTYPE.get(dtype, dtype)
    if name not in TRITON_DTYPE_BITS:
        raise ValueError(f"dtype must be float16 or bfloat16, got {dtype}")
    return name


@gluon.constexpr_function
def accumulator_layout(columns, num_warps):
    """The register layout of a warpgroup's fp32 ``warpgroup_mma`` accumulator (and result)
    of ``columns`` columns, ``num_warps`` warps along its rows: what every Hopper kernel here
    accumulates in."""
    return gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, columns, 16]
    )


@functools.cache
def tile_layout(bits, block_shape=None):
    """The shared layout of a tile (of ``block_shape``: its rank, and its rows' bytes), which
    the TMA writes and warpgroup_mma reads: 128-byte swizzle, or a row's bytes where a row is
    narrower (a GEMM tile's 16- or 32-column part, gemm_state.column_parts)."""
    if block_shape is None:
        return gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=bits, rank=2)
    row_bytes = block_shape[-1] * bits // 8
    return gl.NVMMASharedLayout(
        swizzle_byte_width=min(128, row_bytes), element_bitwidth=bits, rank=len(block_shape)
    )


@gluon.constexpr_function
def unswizzled_layout(bits, rank):
    """The shared layout of a tile of ``rank`` dimensions read element by element
    (``ld.shared``), not by the tensor cores: its rows as they are in memory, which a TMA
    may write however wide they are (the 128-byte swizzle takes rows of 128 bytes at
    most)."""
    return gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=bits, rank=rank)


@gluon.jit
def ring_matmul(
    a_ring, b_ring, ready, empty, acc, first_index, k_steps, row, INDEX_STEP: gl.constexpr = 1
):  # fmt: skip
    """``acc`` plus the products of ``k_steps`` stages of an operand ring, the stages of ring
    indices ``first_index``, ``first_index + INDEX_STEP``, ... (stage = index mod the ring's
    depth; a step of 2 walks one of two consumers' interleaved halves of the ring): rows
    [row, row + acc's rows) of each A stage times the whole B stage, on the tensor cores.
    ``ready`` (a stage landed) and ``empty`` (this warpgroup is done with it) are the ring's
    barriers. One product is in flight at a time: a stage is released once the next product
    has been issued and the previous one has read it, and the last once all completed, so
    that the loader may refill it."""
    NUM_STAGES: gl.constexpr = a_ring.shape[0]
    ROWS: gl.constexpr = acc.shape[0]
    for k in range(k_steps):
        index = first_index + k * INDEX_STEP
        stage = index % NUM_STAGES
        mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
        a = a_ring.index(stage).slice(row, ROWS)
        acc = warpgroup_mma(a, b_ring.index(stage), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=[acc])
        previous = index + NUM_STAGES - INDEX_STEP
        mbarrier.arrive(empty.index(previous % NUM_STAGES), pred=k > 0)
    acc = warpgroup_mma_wait(0, deps=[acc])
    last = first_index + (k_steps - 1) * INDEX_STEP
    mbarrier.arrive(empty.index(last % NUM_STAGES))
    return acc


@gluon.jit
def ring_matmul_pair(
    a_ring, b_ring, b_second, ready, empty, acc, acc_second, first_index, k_steps, row
):  # fmt: skip
    """``ring_matmul`` of two B operands on one A ring: each stage's A rows times its
    ``b_ring`` stage into ``acc`` and its ``b_second`` stage into ``acc_second``, the A in
    SMEM read by both products (a GEMM tile's two column parts, gemm_kernel.py; a gated
    MLP's gate and up projections, gated_mlp_kernel.py). One step's two products are in
    flight at a time (each is a wgmma group of its own: ``warpgroup_mma_wait(2)`` leaves the
    newest two pending): a stage is released once the next step's two have been issued and
    the previous step's have read it, the last once all completed."""
    NUM_STAGES: gl.constexpr = a_ring.shape[0]
    ROWS: gl.constexpr = acc.shape[0]
    for k in range(k_steps):
        index = first_index + k
        stage = index % NUM_STAGES
        mbarrier.wait(ready.index(stage), (index // NUM_STAGES) & 1)
        a = a_ring.index(stage).slice(row, ROWS)
        acc = warpgroup_mma(a, b_ring.index(stage), acc, is_async=True)
        acc_second = warpgroup_mma(a, b_second.index(stage), acc_second, is_async=True)
        acc, acc_second = warpgroup_mma_wait(2, deps=[acc, acc_second])
        mbarrier.arrive(empty.index((index + NUM_STAGES - 1) % NUM_STAGES), pred=k > 0)
    acc, acc_second = warpgroup_mma_wait(0, deps=[acc, acc_second])
    mbarrier.arrive(empty.index((first_index + k_steps + NUM_STAGES - 1) % NUM_STAGES))
    return acc, acc_second


@gluon.jit
def ring_barriers(NUM_STAGES: gl.constexpr, CONSUMERS: gl.constexpr):
    """(ready, empty), the barriers of a ring of NUM_STAGES operand stages (or of a
    persistent CTA's slots), initialized: ``ready`` completes once a stage's copies have
    landed (one arrival, the loader's ``expect``), ``empty`` once each of the CONSUMERS
    consumers has released the stage."""
    layout: gl.constexpr = mbarrier.MBarrierLayout()
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], layout)
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], layout)
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=CONSUMERS)
    return ready, empty


def tma_operand(t):
    """``t`` if the TMA can address it (unit column stride, row stride and start aligned to
    16 bytes), else a copy whose rows are padded to 16 bytes (a view of the same shape)."""
    row_bytes = t.stride(0) * t.element_size()
    if (
        t.stride(1) == 1
        and row_bytes % TMA_ALIGNMENT == 0
        and t.data_ptr() % TMA_ALIGNMENT == 0
        and t.stride(0) >= t.shape[1]
    ):
        return t
    per_row = TMA_ALIGNMENT // t.element_size()
    padded = t.new_empty(t.shape[0], triton.cdiv(t.shape[1], per_row) * per_row)
    view = padded[:, : t.shape[1]]
    view.copy_(t)
    return view


def tma_descriptors(tensors, block_shapes):
    """A TMA descriptor of each 2-D tensor of ``tensors`` (fp16 or bf16, one dtype) over tiles
    of its block shape, in the tiles' shared layout (``tile_layout``)."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    bits = tensors[0].element_size() * 8
    return [
        TensorDescriptor.from_tensor(t, shape, tile_layout(bits, tuple(shape)))
        for t, shape in zip(tensors, block_shapes, strict=True)
    ]


def print_without_aliasing(smem, rejected):
    """What a spec's buffers (a ``tlx.SpecPlan``) need with none sharing bytes (the planner's
    plan without aliasing, against the target's budget), then each configuration without
    aliasing that does not compile, with the compiler's message: ``rejected`` holds
    (configuration, message) pairs."""
    import tlx

    unaliased = tlx.kernel_budget(
        [dataclasses.replace(smem, plan=smem.plan_without_aliasing())], SM90A
    )
    need = unaliased.storage(tlx.storage_kind.smem).used_units
    verdict = "fits" if unaliased.fits else "does not fit: " + "; ".join(unaliased.reasons)
    print(
        f"    without aliasing (the planner's plan of the same buffers, none sharing bytes) they "
        f"need {need} bytes ({need / 1024:.0f} KiB): {verdict}"
    )
    for rejected_config, message in rejected:
        print(f"    {rejected_config} does not compile: {message}")


def print_spec_plan(title, smem):
    """A spec's plan (a ``tlx.SpecPlan``): its memory map, region and where each buffer's
    slots start."""
    import tlx

    plan = smem.plan
    print(f"{title}:")
    print(smem.describe())
    print(
        f"SMEM region {plan.size_bytes} bytes ({plan.size_bytes / 1024:.0f} KiB, aligned to "
        f"{plan.alignment}); the ideal footprint of the tree is {plan.ideal_bytes} bytes"
    )
    extents = tlx.planner.buffer_extents(plan, smem.buffers)
    for user, buffer in enumerate(smem.buffers):
        starts = [extent.start for extent in extents if extent.user == user]
        print(
            f"    {buffer.name:7s} {buffer.shape[0]} x {list(buffer.shape[1:])} "
            f"{buffer.element_bits}-bit: buffers at bytes {starts}"
        )


@gluon.jit
def red_add_pairs(pointers, values, mask):
    """``red.global.add.v2.f32``: adds each pair of ``values`` (two neighbouring columns a
    thread, as the ``warpgroup_mma`` accumulator holds them) to the pair at its first pointer,
    where ``mask`` holds; one 8-byte reduction where ``gl.atomic_add`` issues two 4-byte ones
    (Triton 3.6 and 3.9 emit scalar ``atom``/``red ... add.f32`` only). The result is a dummy.
    The addresses go in as integers: Triton 3.6 takes no pointers beside floats here."""
    return gl.inline_asm_elementwise(
        "{ .reg .pred use; setp.ne.b32 use, $6, 0; "
        "@use red.global.gpu.relaxed.add.v2.f32 [$2], {$4, $5}; mov.b32 $0, 0; mov.b32 $1, 0; }",
        "=r,=r,l,l,f,f,r,r",
        [pointers.to(gl.int64, bitcast=True), values, mask.to(gl.int32)],
        dtype=gl.int32,
        is_pure=False,
        pack=2,
    )


@gluon.jit
def take_pairs(pointers):
    """``atom.global.exch.b64`` of zero: each pair of fp32 values at a thread's pointers (two
    neighbouring columns, as ``red_add_pairs`` adds them), read and left zero in one atomic
    operation, where a load and then a store of zeros each wait on the L2. The pair goes in as
    one 64-bit word: Triton 3.6 and 3.9 emit no vector exchange."""
    return gl.inline_asm_elementwise(
        "{ .reg .b64 pair; atom.global.gpu.relaxed.exch.b64 pair, [$2], 0; "
        "mov.b64 {$0, $1}, pair; }",
        "=f,=f,l,l",
        [pointers.to(gl.int64, bitcast=True)],
        dtype=gl.float32,
        is_pure=False,
        pack=2,
    )


@gluon.jit
def wait_for_prior_grids():
    """``griddepcontrol.wait``: waits until the grids before this one in its stream have
    completed and their writes are visible. A kernel launched with programmatic dependent
    launch (Triton's ``launch_pdl`` option) may start while the grid before it still runs, so
    it touches no global memory before this wait; launched without it, the wait returns at
    once. The result is a dummy."""
    return gl.inline_asm_elementwise(
        "griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.jit
def let_dependent_grids_launch():
    """``griddepcontrol.launch_dependents``: the grid after this one in its stream, when it is
    launched with programmatic dependent launch, may start once every CTA of this one has
    passed here or exited (its prologue then runs beside this grid's last wave, and it waits
    in ``wait_for_prior_grids`` for this grid's writes). The result is a dummy."""
    return gl.inline_asm_elementwise(
        "griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.constexpr_function
def constexpr_unless(value, kind):
    """``value`` when it is a ``kind``, else the constexpr of it: a constexpr argument reaches
    a constexpr function (an aggregate's constructor) as its Python value, which a member
    standing in for one a configuration lacks must not stay."""
    return value if isinstance(value, kind) else gl.constexpr(value)


@gluon.jit
def block_indices(first, COUNT: gl.constexpr, layout: gl.constexpr):
    """first, first + 1, ..., first + COUNT - 1 in ``layout``, for a ``first`` that is a
    multiple of COUNT (a power of two): as ``arange | first``, which LLVM reassociates into
    the thread's base index or ``first`` in the loop and a constant each register, an
    immediate. ``first + arange`` keeps the arange's values, COUNT / 4 registers a thread of
    a 64-row accumulator's columns, live across a loop that uses them: at HEAD_DIM 128 the
    separate pass's masked step was 83 instructions longer and spilled. Not everywhere
    faster: the late split keeps the sum (docs/attention-backward.md, "The causal mask's key
    indices")."""
    return gl.arange(0, COUNT, layout) | first
