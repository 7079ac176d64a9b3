"""The smallest complete use of tlx storage aliasing: two views of the same shared-memory bytes.

    python tutorials/01-aliasing-basics.py     (PYTHONPATH=language, or the package installed)

One ``storage_alias_spec`` holds three buffers. ``as_float`` (float32) and ``as_bits`` (int32)
are in a ``shared`` group: they start at the same byte. ``other`` is ``distinct`` from both: the
planner places it after them. The kernel writes a tile through ``as_float`` and ``other``, then
reads the tile back through ``as_bits``: what it reads is the float32 bit pattern of what it
wrote (both views have the same 32-bit elements and the same layout, so element (i, j) of one
is element (i, j) of the other), and ``other`` still holds its own data.

On a Hopper GPU the script runs the kernel and checks both facts; without one it compiles the
kernel for sm_90a and shows the single backing allocation and its views in the TTGIR.
"""

import sys

import tlx
import torch
import triton
from tlx.compat import cta_barrier
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl

TILE = 64
SM90A = GPUTarget("cuda", 90, 32)


@tlx.jit
def aliasing_basics_kernel(x_ptr, y_ptr, bits_ptr, other_ptr, TILE: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    as_float = tlx.local_alloc((TILE, TILE), gl.float32, 1, reuse=spec)
    as_bits = tlx.local_alloc((TILE, TILE), gl.int32, 1, reuse=spec)
    other = tlx.local_alloc((TILE, TILE), gl.float32, 1, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            tlx.reuse_group(as_float, as_bits, group_type=tlx.reuse_group_type.shared),
            other,
            group_type=tlx.reuse_group_type.distinct,
        )
    )

    layout: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [gl.num_warps(), 1], [1, 0])
    rows = gl.arange(0, TILE, gl.SliceLayout(1, layout))
    cols = gl.arange(0, TILE, gl.SliceLayout(0, layout))
    offsets = rows[:, None] * TILE + cols[None, :]

    as_float.index(0).store(gl.load(x_ptr + offsets))
    other.index(0).store(gl.load(y_ptr + offsets))
    cta_barrier()
    gl.store(bits_ptr + offsets, as_bits.index(0).load(layout))
    gl.store(other_ptr + offsets, other.index(0).load(layout))


def kernel_source():
    """The kernel as ``triton.compile`` and ``tlx.kernel_plans`` take it."""
    signature = {
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "bits_ptr": "*i32",
        "other_ptr": "*fp32",
        "TILE": "constexpr",
    }
    return tlx.ASTSource(fn=aliasing_basics_kernel, signature=signature, constexprs={"TILE": TILE})


def smem_plan():
    """The plan tlx makes for the kernel's spec when it compiles it for sm_90a (a
    ``tlx.SpecPlan``; ``tlx.kernel_plans`` only traces the kernel)."""
    (spec,) = tlx.kernel_plans(kernel_source(), target=SM90A)
    return spec


def compile_for_hopper():
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return triton.compile(kernel_source(), target=SM90A)


def main():
    spec = smem_plan()
    print(f"one SMEM region of {spec.plan.size_bytes} bytes:")
    for buffer, view in zip(spec.buffers, spec.plan.views, strict=True):
        print(f"    {buffer.name:8s} at byte offset {view.offset}")
    if not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9):
        print("No Hopper GPU: the kernel compiled for sm_90a allocates and views the region as")
        for line in compile_for_hopper().asm["ttgir"].splitlines():
            if "ttg.local_alloc" in line or "ttg.memdesc_reinterpret" in line:
                print("   ", line.split(" loc(")[0].strip())
        return 0
    x = torch.randn(TILE, TILE, device="cuda")
    y = torch.randn(TILE, TILE, device="cuda")
    bits = torch.empty(TILE, TILE, device="cuda", dtype=torch.int32)
    other = torch.empty_like(y)
    aliasing_basics_kernel[(1,)](x, y, bits, other, TILE)
    same_bytes = torch.equal(bits, x.view(torch.int32))
    distinct_kept = torch.equal(other, y)
    print(f"as_bits reads the bytes written through as_float: {same_bytes}")
    print(f"other is untouched by them: {distinct_kept}")
    return 0 if same_bytes and distinct_kept else 1


if __name__ == "__main__":
    sys.exit(main())
