"""How the persistent Hopper attention kernel deals its work: the work units of the grid
(``_work_units``) and the tiles of a unit (``_unit_tiles``), balanced for causal masks."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def _work_units(
    seq_len, batch_heads, BLOCK_M: gl.constexpr, CAUSAL: gl.constexpr, BALANCE_TAIL: gl.constexpr
):
    """(work, work units): the grid's CTAs take work units round-robin, ``_unit_tiles`` says
    which tiles a unit is from ``work`` (row blocks per head, work units per head, tail heads,
    batch_heads, whether the last row block is short). A unit is
    one row block of a head; causal, it is the pair of row blocks i and n - 1 - i (n row
    blocks), whose key blocks add up to about n + 1 whatever i, so that every CTA gets as much
    work as the others (the middle block of an odd n is a unit alone). Pairs leave the grid's
    last round part empty, a pair's worth of work idle on the CTAs without one: with
    BALANCE_TAIL, the last ``tail heads`` heads (the pairs of that last round and of one round
    more) are rather dealt tile by tile, longest first."""
    n_row_blocks = gl.cdiv(seq_len, BLOCK_M)
    if CAUSAL:
        units_per_head = (n_row_blocks + 1) // 2
    else:
        units_per_head = n_row_blocks
    n_units = units_per_head * batch_heads
    tail_heads = 0
    if CAUSAL and BALANCE_TAIL:
        programs = gl.num_programs(0)
        tail_units = n_units % programs + programs
        tail_heads = gl.minimum(gl.cdiv(tail_units, units_per_head), batch_heads)
        n_units += tail_heads * (n_row_blocks - units_per_head)
    short_last = seq_len % BLOCK_M != 0
    return (n_row_blocks, units_per_head, tail_heads, batch_heads, short_last), n_units


@gluon.jit
def _unit_tiles(unit, work, CAUSAL: gl.constexpr, BALANCE_TAIL: gl.constexpr):
    """(off_bh, first row block, row block step, tiles) of a work unit, ``work`` as
    _work_units finds it. A unit's tiles are row blocks first, first + step, ..., the longest
    first when causal.

    A tail head's tiles are units of one tile each: row block n - 1 of every tail head, then
    n - 2, ... The CTAs take them in rounds of num_programs tiles whose direction alternates
    from the last round, which is partial and goes to the first CTAs: so that those get the
    shortest tiles of the round before it, and every CTA ends within about a short tile of the
    others (against a pair's worth of work when the tail is dealt in pairs).

    When the last row block is short, the other units are dealt in rounds of num_programs
    rotated by one CTA a round: CTA c takes unit c + r of round r. A round keeps its units (the
    same heads run side by side, their K/V shared in L2), but a CTA no longer takes the same
    row block of a head every round when the units per head divide num_programs: with
    192-row tiles at N = 1024 on 132 SMs, 22 CTAs took every short last row block and the
    others only full ones (3% of the call, H200)."""
    n_row_blocks, units_per_head, tail_heads, batch_heads, short_last = work
    programs = gl.num_programs(0)
    body_units = (batch_heads - tail_heads) * units_per_head
    dealt = unit
    if short_last:
        if unit < body_units:
            round_start = unit - unit % programs
            in_round = gl.minimum(programs, body_units - round_start)
            dealt = round_start + (unit - round_start + unit // programs) % in_round
    off_bh = dealt // units_per_head
    first = dealt % units_per_head
    step = 0
    n_tiles = 1
    if CAUSAL:
        i = first
        first = n_row_blocks - 1 - i
        step = i - first
        n_tiles = gl.minimum(first - i, 1) + 1
        if BALANCE_TAIL:
            if unit >= body_units:
                tail_tile = unit - body_units
                tail_round = tail_tile // programs
                position = tail_tile % programs
                tail_rounds = gl.cdiv(tail_heads * n_row_blocks, programs)
                if (tail_rounds - 1 - tail_round) % 2 == 1:
                    position = programs - 1 - position
                rank = tail_round * programs + position
                off_bh = batch_heads - tail_heads + rank % tail_heads
                first = n_row_blocks - 1 - rank // tail_heads
                step = 0
                n_tiles = 1
    return off_bh, first, step, n_tiles
