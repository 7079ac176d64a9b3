"""What the Hopper matrix tutorials (hopper_gemm.py, hopper_fused_mlp.py) share on the host:
the target, the dtypes they take, the 128-byte-swizzled tile layout their TMA descriptors and
warpgroup_mma operands use, and the padding of an operand whose rows the TMA cannot address.
Both tutorials import it from their own folder."""

import functools

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl

TORCH_TO_TRITON_DTYPE = {torch.float16: "fp16", torch.bfloat16: "bf16"}
TRITON_DTYPE_BITS = {"fp16": 16, "bf16": 16}
SM90A = GPUTarget("cuda", 90, 32)
# The TMA reads and writes rows whose byte stride is a multiple of this, from an address that
# is a multiple of it.
TMA_ALIGNMENT = 16


def triton_dtype(dtype):
    """The Triton name of a torch dtype, "fp16" or "bf16" (either name is returned as is)."""
    name = TORCH_TO_TRITON_DTYPE.get(dtype, dtype)
    if name not in TRITON_DTYPE_BITS:
        raise ValueError(f"dtype must be float16 or bfloat16, got {dtype}")
    return name


@functools.cache
def tile_layout(bits):
    """The shared layout of every tile: 128-byte swizzle, which the TMA writes and
    warpgroup_mma reads."""
    return gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=bits, rank=2)


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


def print_plan_verdicts(pruner, triton_configs, arguments, config_of):
    """What ``pruner`` (a ``tlx.PlanPruner``) says of each configuration for ``arguments``,
    one line each: the SMEM it plans, or the planner's reasons for dropping it."""
    import tlx

    for triton_config in triton_configs:
        verdict = pruner.verdict(triton_config, arguments)
        config = config_of(triton_config)
        if verdict.fits:
            smem = verdict.budget.storage(tlx.storage_kind.smem).used_units
            print(f"    {config}: fits, {smem} bytes of SMEM region ({verdict.seconds:.2f} s)")
        else:
            print(f"    {config}: pruned: {'; '.join(verdict.reasons)}")


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
