"""The attention backward's preprocess (tlx_kernels/hopper/attention_backward.py): delta =
rowsum(dO * O), one fp32 a row of Q, which dS = P * (dP - delta) needs."""

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from tlx_kernels._host import COMPILE_OPTIONS
from tlx_kernels.launch import DirectLaunch

BLOCK_ROWS = 64


@gluon.jit
def attention_bwd_preprocess(
    o_ptr, do_ptr, delta_ptr, rows, BLOCK: gl.constexpr, HEAD_DIM: gl.constexpr
):
    """delta = rowsum(dO * O) in fp32 for BLOCK rows of the [rows, HEAD_DIM] O and dO."""
    columns_per_thread: gl.constexpr = 8
    threads_along_d: gl.constexpr = HEAD_DIM // columns_per_thread
    layout: gl.constexpr = gl.BlockedLayout(
        [1, columns_per_thread],
        [32 // threads_along_d, threads_along_d],
        [gl.num_warps(), 1],
        [1, 0],
    )
    row = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, gl.SliceLayout(1, layout))
    column = gl.arange(0, HEAD_DIM, gl.SliceLayout(0, layout))
    offsets = row[:, None].to(gl.int64) * HEAD_DIM + column[None, :]
    mask = (row[:, None] < rows) & (column[None, :] < HEAD_DIM)
    o = gl.load(o_ptr + offsets, mask=mask, other=0.0).to(gl.float32)
    do = gl.load(do_ptr + offsets, mask=mask, other=0.0).to(gl.float32)
    gl.store(delta_ptr + row, gl.sum(o * do, axis=1), mask=row < rows)


# (device, dtype, shape) -> tlx_kernels.launch.DirectLaunch of the kernel
_launches = {}


def delta(o, do):
    """delta = rowsum(dO * O), fp32, one a row, for contiguous O and dO of [..., head_dim]
    (launched directly: its ``DirectLaunch``, made at the first call of the dtype and
    shape)."""
    head_dim = o.shape[-1]
    o, do = (t.view(-1, head_dim) for t in (o, do))
    rows = o.shape[0]
    out = torch.empty(rows, device=o.device, dtype=torch.float32)
    key = (o.device, o.dtype, o.shape)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = DirectLaunch.compile(
            attention_bwd_preprocess,
            None,
            (triton.cdiv(rows, BLOCK_ROWS),),
            (),
            dict(o_ptr=o, do_ptr=do, delta_ptr=out, rows=rows),
            dict(BLOCK=BLOCK_ROWS, HEAD_DIM=head_dim, **COMPILE_OPTIONS),
        )
    launch((), (o, do, out, rows))
    return out
