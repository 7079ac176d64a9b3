"""What the Hopper and Blackwell Flash Attention kernels share: the block range one CTA
covers, the TMA loader partition (and the Hopper backward's and dQ kernel's loaders' copies),
and on the host the tile layout, the tensor descriptors and the kernel signature."""

from tlx.compat import tma_load
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

from tlx_kernels._host import sm_count


@gluon.jit
def key_blocks(seq_len, off_m, ROWS: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """(n_unmasked, n_blocks) of the ROWS rows of Q from ``off_m`` on: how many K/V blocks
    they visit and how many of those, from the first, need no mask."""
    if CAUSAL:
        n_blocks = gl.cdiv(gl.minimum(seq_len, off_m + ROWS), BLOCK_N)
        n_unmasked = gl.minimum(off_m // BLOCK_N, n_blocks)
    else:
        n_blocks = gl.cdiv(seq_len, BLOCK_N)
        n_unmasked = seq_len // BLOCK_N
    return n_unmasked, n_blocks


@gluon.jit
def block_range(seq_len, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """(off_bh, off_m, n_unmasked, n_blocks) of this CTA (grid: (row blocks, batch * heads)):
    its (batch, head), its first row, how many K/V blocks need no causal mask and how many it
    visits."""
    off_bh = gl.program_id(1)
    if CAUSAL:
        # Longest rows first, so the short ones fill the tail of the grid.
        start_m = gl.num_programs(0) - 1 - gl.program_id(0)
    else:
        start_m = gl.program_id(0)
    off_m = start_m * BLOCK_M
    n_unmasked, n_blocks = key_blocks(seq_len, off_m, BLOCK_M, BLOCK_N, CAUSAL)
    return off_bh, off_m, n_unmasked, n_blocks


# Two rounds of CTAs on a 132-SM H100: enough short tiles at the grid's end to even out
# the SMs' last long ones.
TAIL_TILES = gl.constexpr(264)


@gluon.jit
def head_and_block(tile, heads, blocks, ORDER: gl.constexpr, programs):
    """(head, block) of tile ``tile`` of ``heads`` x ``blocks`` in ``ORDER``:

    * "by_head": a head's blocks consecutive, so that CTAs running at once share the head's
      tiles in the L2;
    * "by_block": block 0 of every head, then block 1, ...: a persistent CTA's tiles under a
      causal mask, whose blocks differ in length, block 0 the longest, so that each round of
      the CTAs' turns hands out tiles of one length and every CTA takes about as much work;
    * "by_pair" (``programs`` persistent CTAs taking every ``programs``-th tile): CTA c's
      tiles 2i and 2i + 1 are blocks j and ``blocks`` - 1 - j of one head, equal work
      together under a causal mask, and the CTAs of a round take consecutive pairs, so that
      the heads they run at once share Q and dO in the L2 as "by_head"'s do. The tiles past
      the last whole double round take the pairs left in order; with an odd ``blocks``
      (a middle block with no partner) the order is "by_block"'s.
    * "by_head_then_block" (a CTA a tile, under a causal mask): "by_head", except that the
      heads of the grid's last ``TAIL_TILES`` or more tiles go "by_block" among themselves,
      so that the grid ends on short tiles and no SM is left with a long one while the
      others idle. By head, the last round is made of whole heads, tiles of every length
      (docs/attention-backward.md, "The grid's last heads under a causal mask").
    """
    if ORDER == "by_pair":
        double_rounds = heads * blocks // (2 * programs) * (2 * programs)
        round_of_cta = tile // programs
        paired = (round_of_cta // 2 * programs + tile % programs) * 2 + round_of_cta % 2
        in_pairs = gl.where(tile < double_rounds, paired, tile)
        pairs = gl.maximum(blocks // 2, 1)
        j = in_pairs // 2 % pairs
        block = gl.where(in_pairs % 2 == 0, j, blocks - 1 - j)
        odd = blocks % 2 == 1
        pair = (
            gl.where(odd, tile % heads, in_pairs // 2 // pairs),
            gl.where(odd, tile // heads, block),
        )
    elif ORDER == "by_block":
        pair = (tile % heads, tile // heads)
    elif ORDER == "by_head_then_block":
        tail_heads = gl.minimum(gl.cdiv(TAIL_TILES, blocks), heads)
        tail_start = (heads - tail_heads) * blocks
        in_tail = tile - tail_start
        pair = (
            gl.where(in_tail < 0, tile // blocks, heads - tail_heads + in_tail % tail_heads),
            gl.where(in_tail < 0, tile % blocks, in_tail // tail_heads),
        )
    else:
        pair = (tile // blocks, tile % blocks)
    return pair


@gluon.jit
def tiles_of_cta(tiles, PERSISTENT: gl.constexpr):
    """(first, end, step) of this CTA's tiles among ``tiles``: its program's own, or with
    PERSISTENT (a grid of at most one CTA an SM) every num_programs-th from it on (the
    Hopper backward's kernels)."""
    if PERSISTENT:
        taken = (gl.program_id(0), tiles, gl.num_programs(0))
    else:
        taken = (gl.program_id(0), gl.program_id(0) + 1, 1)
    return taken


@gluon.jit
def load_q_tiles(desc_q, q_tiles, q_ready, first, COUNT: gl.constexpr, off_bh, off_m):
    """TMA copies of ``COUNT`` consecutive tiles of Q rows from ``off_m`` on into buffers
    ``first``, ``first + 1``, ... of ``q_tiles``, each landing on its ``q_ready`` barrier."""
    Q_ROWS: gl.constexpr = q_tiles.shape[1]
    HEAD_DIM: gl.constexpr = q_tiles.shape[2]
    for tile in gl.static_range(COUNT):
        mbarrier.expect(q_ready.index(first + tile), desc_q.block_type.nbytes)
        tma_load(
            desc_q,
            [off_bh, off_m + tile * Q_ROWS, 0],
            q_ready.index(first + tile),
            q_tiles.index(first + tile).reshape([1, Q_ROWS, HEAD_DIM]),
        )


@gluon.jit
def load_kv_blocks(
    desc_k,
    desc_v,
    k_tiles,
    v_tiles,
    k_ready,
    v_ready,
    kv_empty,
    off_bh,
    first_block,
    end_block,
    ring_start,
):
    """TMA copies of K and V blocks first_block .. end_block - 1 of a head into the ring of
    stages. ``ring_start`` counts the blocks the ring held before block 0 of this head (a
    persistent CTA's earlier tiles): block j goes to stage (ring_start + j) % NUM_STAGES once
    the consumers released it (kv_empty) and lands on k_ready / v_ready."""
    NUM_STAGES: gl.constexpr = k_tiles.shape[0]
    BLOCK_N: gl.constexpr = k_tiles.shape[1]
    HEAD_DIM: gl.constexpr = k_tiles.shape[2]
    for j in range(first_block, end_block):
        index = ring_start + j
        stage = index % NUM_STAGES
        mbarrier.wait(kv_empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
        mbarrier.expect(k_ready.index(stage), desc_k.block_type.nbytes)
        tma_load(
            desc_k,
            [off_bh, j * BLOCK_N, 0],
            k_ready.index(stage),
            k_tiles.index(stage).reshape([1, BLOCK_N, HEAD_DIM]),
        )
        mbarrier.expect(v_ready.index(stage), desc_v.block_type.nbytes)
        tma_load(
            desc_v,
            [off_bh, j * BLOCK_N, 0],
            v_ready.index(stage),
            v_tiles.index(stage).reshape([1, BLOCK_N, HEAD_DIM]),
        )


@gluon.jit
def load_pairs_once(
    desc_a, desc_b, a_tiles, b_tiles, landed, head, first_row, first_buffer, COUNT: gl.constexpr
):
    """The tiles a CTA loads once a tile, a pair a consumer (the backward's K and V, its dQ
    kernel's Q and dO): buffer ``first_buffer + c`` of ``a_tiles`` and ``b_tiles``, c < COUNT,
    takes the [1, rows, head_dim] tiles of ``desc_a`` and ``desc_b`` at (``head``,
    ``first_row + c * rows``); ``landed`` completes when all have landed."""
    ROWS: gl.constexpr = a_tiles.shape[1]
    HEAD_DIM: gl.constexpr = a_tiles.shape[2]
    mbarrier.expect(landed, COUNT * (desc_a.block_type.nbytes + desc_b.block_type.nbytes))
    for c in gl.static_range(COUNT):
        row = first_row + c * ROWS
        a_tile = a_tiles.index(first_buffer + c).reshape([1, ROWS, HEAD_DIM])
        b_tile = b_tiles.index(first_buffer + c).reshape([1, ROWS, HEAD_DIM])
        tma_load(desc_a, [head, row, 0], landed, a_tile)
        tma_load(desc_b, [head, row, 0], landed, b_tile)


@gluon.jit
def load_pair_into_ring(desc_a, desc_b, a_tiles, b_tiles, ready, empty, index, head, row):
    """One step of a loader that fills a ring of NUM_STAGES stages with pairs of tiles
    (the backward's Q and dO, its dQ kernel's K and V): once the consumers have released stage
    ``index % NUM_STAGES`` (``empty``), the [1, rows, head_dim] tiles of ``desc_a`` and
    ``desc_b`` at (``head``, ``row``) are copied into it, and ``ready`` completes when both
    have landed."""
    NUM_STAGES: gl.constexpr = a_tiles.shape[0]
    ROWS: gl.constexpr = a_tiles.shape[1]
    HEAD_DIM: gl.constexpr = a_tiles.shape[2]
    stage = index % NUM_STAGES
    mbarrier.wait(empty.index(stage), ((index // NUM_STAGES) & 1) ^ 1)
    mbarrier.expect(ready.index(stage), desc_a.block_type.nbytes + desc_b.block_type.nbytes)
    tma_load(
        desc_a,
        [head, row, 0],
        ready.index(stage),
        a_tiles.index(stage).reshape([1, ROWS, HEAD_DIM]),
    )
    tma_load(
        desc_b,
        [head, row, 0],
        ready.index(stage),
        b_tiles.index(stage).reshape([1, ROWS, HEAD_DIM]),
    )


@gluon.jit
def load_partition(buffers, barriers, work):
    """The loader warp of a CTA that computes one tile: every tile of Q in ``q_tiles`` once,
    then K_j and V_j into the ring of stages (k_ready / v_ready: the copy landed; kv_empty:
    the consumers are done with the stage). The tile sizes are the buffers' own. ``buffers``,
    ``barriers`` and ``work`` are aggregates with those fields (the Blackwell kernel's)."""
    q_tiles, k_tiles, v_tiles = buffers.q_tiles, buffers.k_tiles, buffers.v_tiles
    q_ready, k_ready = barriers.q_ready, barriers.k_ready
    v_ready, kv_empty = barriers.v_ready, barriers.kv_empty
    desc_q, desc_k, desc_v = work.desc_q, work.desc_k, work.desc_v
    off_bh, off_m, n_blocks = work.off_bh, work.off_m, work.n_blocks
    load_q_tiles(desc_q, q_tiles, q_ready, 0, q_tiles.shape[0], off_bh, off_m)
    load_kv_blocks(
        desc_k, desc_v, k_tiles, v_tiles, k_ready, v_ready, kv_empty, off_bh, 0, n_blocks, 0
    )


def check_slots(field, slots, persistent, loaded):
    """The slots of a kernel that loops over ``tiles_of_cta`` (the backward's K/V slots, its
    dQ kernel's Q slots): 1 or 2, where the second lets a persistent CTA load its next
    tile's ``loaded`` while a tile runs, which a CTA of one tile has no use for."""
    if slots not in (1, 2):
        raise ValueError(f"{field} must be 1 or 2, got {slots}")
    if slots == 2 and not persistent:
        raise ValueError(
            f"{field}=2 loads a CTA's next tile's {loaded} while this one runs: it needs "
            "persistent=True (a CTA of one tile has no next tile)"
        )


def launch_grid(tiles, persistent, device):
    """The grid of a kernel of ``tiles`` tiles that loops over ``tiles_of_cta``: a CTA a tile,
    or, ``persistent``, one an SM while there are more tiles."""
    return (min(tiles, sm_count(device)) if persistent else tiles,)


def tile_layout(element_bits):
    # Descriptors address [batch * heads, seq_len, head_dim]: the TMA zero-fills and clips
    # along seq_len per head, so any sequence length works.
    return gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=element_bits, rank=3)


def descriptor_signature(dtype, q_rows, kv_rows, head_dim):
    """The signature entries of desc_q, desc_k, desc_v and desc_o for ``tlx.ASTSource``."""
    layout = tile_layout(16)
    q_desc = f"tensordesc<{dtype}[1,{q_rows},{head_dim}],{layout!r}>"
    kv_desc = f"tensordesc<{dtype}[1,{kv_rows},{head_dim}],{layout!r}>"
    return {"desc_q": q_desc, "desc_k": kv_desc, "desc_v": kv_desc, "desc_o": q_desc}


def descriptors(q, k, v, q_rows, kv_rows):
    """(o, desc_q, desc_k, desc_v, desc_o) for (batch, heads, seq_len, head_dim) tensors (k and
    v may have fewer heads than q): o is the output, [batch * heads, seq_len, head_dim] like
    the views the descriptors address."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    seq_len, head_dim = q.shape[2:]
    q3, k3, v3 = (t.contiguous().view(-1, seq_len, head_dim) for t in (q, k, v))
    o = q3.new_empty(q3.shape)
    layout = tile_layout(q.element_size() * 8)
    return (
        o,
        TensorDescriptor.from_tensor(q3, [1, q_rows, head_dim], layout),
        TensorDescriptor.from_tensor(k3, [1, kv_rows, head_dim], layout),
        TensorDescriptor.from_tensor(v3, [1, kv_rows, head_dim], layout),
        TensorDescriptor.from_tensor(o, [1, q_rows, head_dim], layout),
    )
