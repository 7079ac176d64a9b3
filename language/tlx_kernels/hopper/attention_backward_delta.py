"""The attention backward's preprocess (tlx_kernels/hopper/attention_backward.py): delta =
rowsum(dO * O), one fp32 a row of Q, which dS = P * (dP - delta) needs; or, for the
configurations with ``staged_statistics``, each row's LSE in base 2 and delta side by side
(``staged_statistics``), which the backward's loader copies by TMA beside Q and dO."""

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from tlx_kernels._host import COMPILE_OPTIONS
from tlx_kernels.hopper.attention_backward_step import LOG2E
from tlx_kernels.launch import DirectLaunch

BLOCK_ROWS = 64


@gluon.jit
def _row_deltas(o_ptr, do_ptr, rows, BLOCK: gl.constexpr, HEAD_DIM: gl.constexpr):
    """(the rows, their delta = rowsum(dO * O) in fp32) of this program's BLOCK rows of the
    [rows, HEAD_DIM] O and dO."""
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
    return row, gl.sum(o * do, axis=1)


@gluon.jit
def attention_bwd_preprocess(
    o_ptr, do_ptr, delta_ptr, rows, BLOCK: gl.constexpr, HEAD_DIM: gl.constexpr
):
    """delta = rowsum(dO * O) in fp32 for BLOCK rows of the [rows, HEAD_DIM] O and dO."""
    row, delta = _row_deltas(o_ptr, do_ptr, rows, BLOCK, HEAD_DIM)
    gl.store(delta_ptr + row, delta, mask=row < rows)


@gluon.jit
def attention_bwd_statistics(
    o_ptr,
    do_ptr,
    lse_ptr,
    statistics_ptr,
    rows,
    seq_len,
    row_stride,
    BLOCK: gl.constexpr,
    HEAD_DIM: gl.constexpr,
):
    """For BLOCK rows of the [rows, HEAD_DIM] O and dO (rows = heads * seq_len), each row's
    LSE in base 2 (from ``lse_ptr``'s natural-log one) and delta into ``statistics_ptr``,
    [heads, 2, row_stride]: a head's LSE, then its delta, each row_stride apart."""
    row, delta = _row_deltas(o_ptr, do_ptr, rows, BLOCK, HEAD_DIM)
    in_rows = row < rows
    head = (row // seq_len).to(gl.int64)
    at = head * 2 * row_stride + row % seq_len
    lse = gl.load(lse_ptr + row, mask=in_rows, other=0.0)
    gl.store(statistics_ptr + at, lse * LOG2E, mask=in_rows)
    gl.store(statistics_ptr + at + row_stride, delta, mask=in_rows)


# (kernel, device, dtype, shape) -> tlx_kernels.launch.DirectLaunch of the kernel
_launches = {}


def _launch(kernel, o, arguments):
    """``kernel`` over ``o``'s rows with ``arguments`` (launched directly: its
    ``DirectLaunch``, made at the first call of the kernel, dtype and shape)."""
    head_dim = o.shape[-1]
    key = (kernel, o.device, o.dtype, o.shape)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = DirectLaunch.compile(
            kernel,
            None,
            (triton.cdiv(arguments["rows"], BLOCK_ROWS),),
            (),
            arguments,
            dict(BLOCK=BLOCK_ROWS, HEAD_DIM=head_dim, **COMPILE_OPTIONS),
        )
    launch((), tuple(arguments.values()))


def delta(o, do):
    """delta = rowsum(dO * O), fp32, one a row, for contiguous O and dO of [..., head_dim]."""
    head_dim = o.shape[-1]
    o, do = (t.view(-1, head_dim) for t in (o, do))
    out = torch.empty(o.shape[0], device=o.device, dtype=torch.float32)
    _launch(attention_bwd_preprocess, o, dict(o_ptr=o, do_ptr=do, delta_ptr=out, rows=o.shape[0]))
    return out


def staged_statistics(o, do, lse):
    """For contiguous O and dO of [heads, seq_len, head_dim] and their natural-log ``lse``
    (fp32, heads * seq_len): [heads, 2, row_stride] fp32, each head's LSE in base 2 then its
    delta, rows ``row_stride`` (seq_len rounded up to 4: a TMA's rows are 16-byte aligned)
    apart; the elements past seq_len are left unwritten (a TMA of the first seq_len, which
    fills rows past the end with zeros, never reads them)."""
    heads, seq_len, head_dim = o.shape
    row_stride = triton.cdiv(seq_len, 4) * 4
    out = torch.empty(heads, 2, row_stride, device=o.device, dtype=torch.float32)
    o, do = (t.view(-1, head_dim) for t in (o, do))
    arguments = dict(
        o_ptr=o,
        do_ptr=do,
        lse_ptr=lse,
        statistics_ptr=out,
        rows=o.shape[0],
        seq_len=seq_len,
        row_stride=row_stride,
    )
    _launch(attention_bwd_statistics, o, arguments)
    return out
