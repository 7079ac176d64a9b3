"""A fused MLP block Y = act(X @ W1) @ W2 for Hopper (sm_90a): one kernel, two phases.

    python tutorials/hopper_fused_mlp.py [--plans]   (PYTHONPATH=language, or the package installed)

X is [tokens, d_model], W1 [d_model, hidden], W2 [hidden, d_model] (row-major, as
``torch.matmul`` takes them; hidden is typically 4 x d_model), Y is [tokens, d_model]. The
inputs are float16 or bfloat16, both products are accumulated in float32, the hidden
activations are rounded to the inputs' dtype (as the unfused ``act(x @ w1) @ w2`` rounds them)
and Y has the inputs' dtype. ``act`` is GELU with the tanh approximation (``activation="gelu"``,
the default: ``torch.nn.functional.gelu(h, approximate="tanh")``) or ReLU (``"relu"``); both
map 0 to 0, which the zero-filled tails below rely on. Any shape works (rows whose byte length
is not a multiple of 16 are first copied into padded rows for the TMA, as hopper_gemm.py does).

The kernel
----------
One CTA computes one BLOCK_M x BLOCK_N tile of Y (128 x 256 or 128 x 128). The hidden dimension
does not fit on chip (a 128-row block of H at hidden = 16384 is 4 MiB), so the CTA walks it in
chunks of BLOCK_H columns, and per chunk runs two phases:

* phase 1: H_chunk = X[rows, :] @ W1[:, chunk], a K loop over d_model in steps of BLOCK_K
  (64) fed by a ring of X tiles [BLOCK_M, BLOCK_K] and W1 tiles [BLOCK_K, BLOCK_H]; then
  act(H_chunk), rounded to the inputs' dtype, is written to shared memory (``h_tiles``);
* phase 2: Y_tile += H_chunk @ W2[chunk, columns], one product of K = BLOCK_H fed by a W2 tile
  [BLOCK_H, BLOCK_N] and the H tile.

The Y tile stays in registers over all chunks; at the end it is written to shared memory
(``y_tiles``) and stored with TMA, which clips the rows and columns past the edges of Y.
Three warp-specialized partitions share the CTA, as in hopper_gemm.py: a loader warp issues
every TMA copy (per chunk: the d_model / BLOCK_K phase-1 steps, then the one W2 step) into
the ring(s), and two consumer warpgroups each own BLOCK_M / 2 = 64 rows: their own rows of
X, of H and of Y, so that the consumers never wait for each other except through the ring.
Reads past the edges come back as zeros: a partial d_model step adds nothing, the hidden
columns past the end are act(0) = 0 and meet zero rows of W2.

What the fusion costs and saves
-------------------------------
Y's row block needs all of H's row block, and a consumer's registers hold 64 x BLOCK_N of
Y, not 64 x d_model. So each of the d_model / BLOCK_N CTAs of a row block computes the whole
H row block again: the kernel performs 2 * tokens * d_model * hidden * (d_model / BLOCK_N)
FLOPs of phase 1 for the 2 * tokens * d_model * hidden that are needed, plus the
2 * tokens * hidden * d_model of phase 2. At d_model = 1024 and BLOCK_N = 256 that is
5 units of work for 2 useful ones (40%); at d_model = 4096, 17 for 2 (12%). What it saves
is H's round trip through global memory, 2 * tokens * hidden * 2 bytes (1 GiB at 16384 tokens
x hidden 16384, some 0.3 ms at 3.3 TB/s), small beside the 7 ms the two products of that
shape take at 600 TFLOP/s. So at these sizes the unfused ``torch`` MLP is compute-bound and
the fused kernel should lose to it by about the recompute factor (``bench/fused_mlp.py``
measures it). Fusion pays where recomputing is cheap: d_model no wider than one or two Y
tiles (BLOCK_N), where the H round trip is a larger share. The tutorial is about what two
phases do to shared memory, at the sizes of real MLP blocks.

Two phases, one region
----------------------
Per ring step the loader brings either a phase-1 step (an X tile and a W1 tile) or a phase-2
step (a W2 tile). The two kinds are never in the same stage at the same time, so they can
share it: ``layout="shared"`` makes the ring one ring of stages, each stage holding either
X_i and W1_i side by side or W2_i over the same bytes::

    distinct(shared(y_tiles, h_tiles), shared(distinct(x_ring, w1_ring), w2_ring))

(``_smem_buffers``; tlx.reuse_group with the buffer index as buffer group: stage i of X, W1
and W2 is group i of the ring, one H tile and one Y tile per consumer are groups 0 and 1 of
the other child). Each stage is as big as the larger kind of step, and the ring of S stages
serves both phases. ``layout="separate"``, the same kernel without shared phases, gives
every buffer bytes of its own: a ring of S1 X/W1 stages and a ring of S2 W2 stages::

    distinct(shared(y_tiles, h_tiles), distinct(x_ring, w1_ring), w2_ring)

At 128 x 256 tiles of Y and BLOCK_H = 64 (fp16 or bf16), a phase-1 step is 16 + 8 KiB and a
W2 tile 32 KiB; H and Y take 2 x 32 KiB. Shared: 5 stages of 32 KiB + 64 KiB = 224 KiB.
Separate, the best that fits: 4 X/W1 stages and 2 W2 stages, 96 + 64 + 64 = 224 KiB. At 128
x 128 tiles of Y and BLOCK_H = 128 both kinds of step are 32 KiB: shared, 6 stages; separate,
4 + 2. The shared ring gives phase 1 the whole ring's depth and phase 2 too (a W2 tile is
prefetched as deep as any X/W1 step), where the separate rings split the bytes between them.

The synchronization that makes it safe
--------------------------------------
Every layout runs one protocol; only the ring index differs (and ``phases`` adds the drain
below). Per stage two mbarriers,
``ready`` (the loader's expected bytes have landed) and ``empty`` (both consumers are done
reading the stage); the loader waits for ``empty`` before it writes a stage, a consumer
waits for ``ready`` before it reads one and arrives on ``empty`` once the product that read
it has completed (``warpgroup_mma_wait``). With ``layout="shared"`` the phase-1 and phase-2
steps take consecutive stages of the one ring (step t of the kernel, whichever phase, uses
stage t mod S): a W2 tile is written into stage i only after both consumers released the X
and W1 tiles stage i held, and the next chunk's X and W1 tiles are written over a W2 tile only
after both consumers' phase-2 products that read it have completed. No other bytes are
shared between the phases: stage i of W2 lies inside stage i of the X/W1 ring and nowhere
else (the buffer-group rule of the tree), which is what a per-stage barrier can protect.

H and Y are per consumer (``h_tiles.index(c)``, ``y_tiles.index(c)``) and distinct from the
ring, because the loader fills the ring with the next chunk's X and W1 while the consumers'
phase-2 products read H. A consumer writes its H tile only after its previous phase-2
product, which read it, has completed; it writes its Y tile over its own H tile (the shared
group c) after its last product completed, so neither needs the other consumer.

There are two ways to let the phases share bytes, each valid for its own reason.
``layout="shared"`` (one tree, ``tlx.reuse_group`` with ``shared``) shares per stage: stage i
of W2 lies over stage i of the X/W1 ring and nowhere else, so the per-stage barriers above
protect it and the loader prefetches across a change of phase (the next chunk's X and W1 go
into the stages the W2 tile does not hold). ``layout="phases"`` (``tlx.reuse_phases``, one
tree per phase) shares whole rings: the planner may lay the W2 ring over any bytes of the X/W1
ring, so no per-stage barrier can protect it, and the loader drains the ring at each change
of phase instead (below).

Phases: whole rings, drained
----------------------------
``layout="phases"`` keeps the rings of ``layout="separate"`` (S1 X/W1 stages with ``ready``
and ``empty``, S2 W2 stages with ``ready2`` and ``empty2``) and gives the planner one tree per
phase::

    reuse_phases(distinct(shared(y_tiles, h_tiles), distinct(x_ring, w1_ring)),
                 distinct(shared(y_tiles, h_tiles), w2_ring))

H and Y are in both phases, so they keep one place, apart from both rings (a consumer's
phase-2 product reads H while the loader fills the ring with the next chunk's X and W1). Each
phase is planned on its own: the region is as big as the larger phase, and the W2 ring lies
over the X/W1 ring's bytes. At 128 x 256 tiles of Y and BLOCK_H = 64: 6 X/W1 stages and 3 W2
stages in 208 KiB (212992 bytes, which Triton 3.8 rounds to whole 32 KiB views; 6 + 5 in 224
KiB), where ``separate`` fits 4 + 2 in 224 KiB (229376 bytes) and 5 + 2 needs 256 KiB. At
128 x 128 tiles and BLOCK_H = 128: 6 + 3 (or 6 + 4) in 224 KiB, where ``separate`` fits 4 + 2.
(``--plans`` prints the plans.)

The drain protocol. Two waits in the loader (``_load_partition``, ``DRAIN``) make the
whole-ring sharing safe; the per-stage protocol above stays as it is.

* Before a chunk's W2 load, the loader waits on the ``empty`` barrier of the chunk's last
  X/W1 step, with the parity that step's release completes. Each consumer releases its steps
  in order (``_mma_partition``), and a stage's ``empty`` phase completes only when both
  consumers arrived, so once the last step's phase completed every earlier step of the chunk
  was released too: no product reads any X/W1 byte the W2 tile may land on.
* Before the next chunk's first X/W1 load, the loader waits on the ``empty2`` barrier of the
  W2 step it just issued: both consumers' phase-2 products that read it have completed, so no
  byte of the W2 ring is still read when X and W1 tiles land on it.

What the drain costs: no prefetch across a change of phase. The W2 tile is loaded only once
the chunk's X/W1 ring is empty, and the next chunk's first X/W1 tiles only once phase 2 has
read W2, so each change of phase exposes a load's latency that ``shared`` and ``separate``
hide; and as at most one W2 tile is in flight, W2 stages past the first hold nothing (they
cost no bytes while they fit inside the X/W1 ring). What it buys: the X/W1 ring is 6 deep
where ``separate`` is 4 deep, at the same or fewer bytes.

Measured on an H100 (Triton 3.6, fp16, ``bench/fused_mlp.py``, TFLOP/s of the useful
4 x tokens x d_model x hidden FLOPs, GPU time), shared / separate / phases / torch: 222 /
199 / 207 / 548 at 4096 tokens x d_model 1024; 120 / 101 / 114 / 656 at 16384 x 2048; 65 /
54 / 69 / 700 at 8192 x 4096. Sharing the phases' bytes buys 12-19% with one ring and 4-26%
with drained phases (the deeper X/W1 ring wins more as d_model, the phase-1 loop, grows);
the recomputation of H costs the factor the paragraph on tiling predicts, so at these
widths two cuBLAS products win.

``main()`` checks the kernel against torch and times it on a Hopper GPU; without one it
compiles the kernel for sm_90a and prints the three layouts' plans (``tlx.kernel_plans``);
``--plans`` prints what the plan pruner says of every configuration of the autotuning space.
"""

import dataclasses
import functools
import sys

import tlx
import torch
import triton
from hopper_common import (
    LOADER_REGISTERS,
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    TRITON_DTYPE_BITS,
    partition_registers,
    print_plan_verdicts,
    print_spec_plan,
    ring_matmul,
    tile_layout,
    tma_operand,
)
from hopper_common import triton_dtype as _triton_dtype
from tlx.compat import tma_load, tma_store
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

# Kernel side -------------------------------------------------------------------------------

# GELU(h) with the tanh approximation: 0.5 h (1 + tanh(c (h + 0.044715 h^3))), c = sqrt(2/pi),
# is h * sigmoid(2 c (h + 0.044715 h^3)) = h / (1 + 2^(-2 c log2(e) (h + 0.044715 h^3))).
_GELU_EXP2_SCALE = gl.constexpr(-2.0 * 0.7978845608028654 * 1.4426950408889634)


@gluon.jit
def _activation(h, ACTIVATION: gl.constexpr):
    """act(h) elementwise: "gelu" (tanh approximation) or "relu"."""
    if ACTIVATION == "relu":
        out = gl.maximum(h, 0.0)
    else:
        # A large negative h makes the power inf and the quotient -0: GELU's limit.
        out = h / (1.0 + gl.exp2(_GELU_EXP2_SCALE * (h + 0.044715 * h * h * h)))
    return out


@gluon.jit
def _ring_index(own_steps, other_steps, SHARED_RING: gl.constexpr):
    """The ring index of a phase's next step: its own step count when each phase has its own
    ring, the count of both phases' steps when they share one."""
    index = own_steps
    if SHARED_RING:
        index = own_steps + other_steps
    return index


@gluon.jit
def _load_partition(
    descriptors,
    rings,
    barriers,
    schedule,
    BLOCK_K: gl.constexpr,
    SHARED_RING: gl.constexpr,
    DRAIN: gl.constexpr,
):
    """The loader warp: per hidden chunk, the X and W1 tiles of each d_model step into the
    phase-1 ring, then the chunk's W2 tile into the phase-2 ring (with ``SHARED_RING`` both are
    the one ring, and the steps take its stages in that order), each once both consumers
    released the stage's previous contents. With ``DRAIN`` (``layout="phases"``) it also
    drains the ring at each change of phase: the chunk's W2 load waits until the consumers
    released every X/W1 step of the chunk, and the next chunk's X/W1 loads until they
    released its W2 tile."""
    desc_x, desc_w1, desc_w2 = descriptors
    x_ring, w1_ring, w2_ring = rings
    ready1, empty1, ready2, empty2 = barriers
    off_m, off_n, k_steps, chunks = schedule
    STAGES1: gl.constexpr = x_ring.shape[0]
    STAGES2: gl.constexpr = w2_ring.shape[0]
    BLOCK_H: gl.constexpr = w2_ring.shape[1]
    step1_bytes: gl.constexpr = desc_x.block_type.nbytes + desc_w1.block_type.nbytes
    steps1 = 0
    steps2 = 0
    for chunk in range(chunks):
        off_h = chunk * BLOCK_H
        for k in range(k_steps):
            index = _ring_index(steps1, steps2, SHARED_RING)
            stage = index % STAGES1
            # Phase ^ 1: the first pass over the ring finds every stage free.
            mbarrier.wait(empty1.index(stage), ((index // STAGES1) & 1) ^ 1)
            mbarrier.expect(ready1.index(stage), step1_bytes)
            tma_load(desc_x, [off_m, k * BLOCK_K], ready1.index(stage), x_ring.index(stage))
            tma_load(desc_w1, [k * BLOCK_K, off_h], ready1.index(stage), w1_ring.index(stage))
            steps1 += 1
        if DRAIN:
            # The W2 ring lies over any bytes of the X/W1 ring: every X/W1 step of the chunk
            # released. Each consumer releases its steps in order (_mma_partition), so the
            # barrier phase of the last one (step j completes the phase of parity
            # (j // STAGES1) & 1 of its stage) completes after all the others.
            last1 = steps1 - 1
            mbarrier.wait(empty1.index(last1 % STAGES1), (last1 // STAGES1) & 1)
        index = _ring_index(steps2, steps1, SHARED_RING)
        stage = index % STAGES2
        mbarrier.wait(empty2.index(stage), ((index // STAGES2) & 1) ^ 1)
        mbarrier.expect(ready2.index(stage), desc_w2.block_type.nbytes)
        tma_load(desc_w2, [off_h, off_n], ready2.index(stage), w2_ring.index(stage))
        steps2 += 1
        if DRAIN:
            # The next chunk's X and W1 tiles lie over any bytes of the W2 ring: the chunk's
            # one W2 step released.
            last2 = steps2 - 1
            mbarrier.wait(empty2.index(last2 % STAGES2), (last2 // STAGES2) & 1)


@gluon.jit
def _mma_partition(
    state, consumer: gl.constexpr, ACTIVATION: gl.constexpr, SHARED_RING: gl.constexpr
):
    """Rows [consumer * SUB_M, (consumer + 1) * SUB_M) of the CTA's tile of Y, one warpgroup:
    per hidden chunk its rows of H (phase 1), act, H to shared memory, its rows of Y += H @ W2
    (phase 2); then its rows of Y stored. ``state`` holds what both consumers take."""
    desc_y, rings, h_tiles, y_tiles, barriers, schedule = state
    x_ring, w1_ring, w2_ring = rings
    ready1, empty1, ready2, empty2 = barriers
    off_m, off_n, k_steps, chunks = schedule
    STAGES2: gl.constexpr = w2_ring.shape[0]
    SUB_M: gl.constexpr = h_tiles.shape[1]
    BLOCK_H: gl.constexpr = h_tiles.shape[2]
    BLOCK_N: gl.constexpr = y_tiles.shape[2]
    num_warps: gl.constexpr = gl.num_warps()
    h_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_H, 16]
    )
    y_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    h_tile = h_tiles.index(consumer)
    acc_y = gl.zeros([SUB_M, BLOCK_N], gl.float32, y_layout)
    steps1 = 0
    steps2 = 0
    for _chunk in range(chunks):
        # Phase 1: this consumer's rows of the chunk of H.
        # The chunk's steps take consecutive ring indices in every layout.
        acc_h = gl.zeros([SUB_M, BLOCK_H], gl.float32, h_layout)
        first = _ring_index(steps1, steps2, SHARED_RING)
        acc_h = ring_matmul(
            x_ring, w1_ring, ready1, empty1, acc_h, first, k_steps, consumer * SUB_M
        )
        steps1 += k_steps

        # act(H) into this consumer's H tile: the previous chunk's phase-2 product, the last
        # reader of the tile, completed (waited below).
        h_tile.store(_activation(acc_h, ACTIVATION).to(h_tile.dtype))
        fence_async_shared()

        # Phase 2: Y += H @ W2 for the chunk.
        index = _ring_index(steps2, steps1, SHARED_RING)
        stage = index % STAGES2
        mbarrier.wait(ready2.index(stage), (index // STAGES2) & 1)
        acc_y = warpgroup_mma(h_tile, w2_ring.index(stage), acc_y, is_async=True)
        acc_y = warpgroup_mma_wait(0, deps=[acc_y])
        mbarrier.arrive(empty2.index(stage))
        steps2 += 1

    # Y over this consumer's own H tile (one shared group per consumer), whose last reader,
    # the last phase-2 product, completed.
    y_tile = y_tiles.index(consumer)
    y_tile.store(acc_y.to(y_tile.dtype))
    fence_async_shared()
    tma_store(desc_y, [off_m + consumer * SUB_M, off_n], y_tile)
    tma.store_wait(0)


@gluon.jit
def _smem_buffers(
    descriptors,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr,
    W2_STAGES: gl.constexpr,
    LAYOUT: gl.constexpr,
):
    """The kernel's SMEM buffers in one region planned by tlx, and the overlap tree (one per
    phase with ``LAYOUT == "phases"``) that says what shares bytes (the module's doc, "Two
    phases, one region"): stage i of every ring is buffer group i, H and Y tile c (consumer
    c's) are group c of theirs. The layouts are the descriptors' (128-byte swizzle), which the
    TMA and warpgroup_mma both read."""
    desc_x, desc_w1, desc_w2, desc_y = descriptors
    dtype: gl.constexpr = desc_x.dtype
    SUB_M: gl.constexpr = BLOCK_M // 2
    smem = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    x_ring = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, STAGES, reuse=smem, layout=desc_x.layout)
    w1_ring = tlx.local_alloc((BLOCK_K, BLOCK_H), dtype, STAGES, reuse=smem, layout=desc_w1.layout)
    w2_ring = tlx.local_alloc(
        (BLOCK_H, BLOCK_N), dtype, W2_STAGES, reuse=smem, layout=desc_w2.layout
    )
    h_tiles = tlx.local_alloc((SUB_M, BLOCK_H), dtype, 2, reuse=smem, layout=desc_x.layout)
    y_tiles = tlx.local_alloc((SUB_M, BLOCK_N), dtype, 2, reuse=smem, layout=desc_y.layout)

    distinct: gl.constexpr = tlx.reuse_group_type.distinct
    shared: gl.constexpr = tlx.reuse_group_type.shared
    # Y is written over its consumer's H after the last phase-2 product (every layout).
    epilogue = tlx.reuse_group(y_tiles, h_tiles, group_type=shared)
    phase1 = tlx.reuse_group(x_ring, w1_ring, group_type=distinct)
    if LAYOUT == "phases":
        # H and Y in both phases (one place in both); the W2 ring anywhere over the X/W1
        # ring's bytes, which the loader's drain makes safe.
        epilogue2 = tlx.reuse_group(y_tiles, h_tiles, group_type=shared)
        smem.set_buffer_overlap(
            tlx.reuse_phases(
                tlx.reuse_group(epilogue, phase1, group_type=distinct),
                tlx.reuse_group(epilogue2, w2_ring, group_type=distinct),
            )
        )
    else:
        if LAYOUT == "shared":
            # One ring: stage i holds X_i and W1_i side by side, or W2_i over them.
            rings = tlx.reuse_group(phase1, w2_ring, group_type=shared)
        else:
            rings = tlx.reuse_group(phase1, w2_ring, group_type=distinct)
        smem.set_buffer_overlap(tlx.reuse_group(epilogue, rings, group_type=distinct))
    return x_ring, w1_ring, w2_ring, h_tiles, y_tiles


# The shapes vary from call to call and the TMA clips at the edges: specializing on their
# divisibility would buy nothing and compile every configuration again for each new one.
@tlx.jit(do_not_specialize=["tokens", "d_model", "hidden"])
def fused_mlp_kernel(
    desc_x,
    desc_w1,
    desc_w2,
    desc_y,
    tokens,
    d_model,
    hidden,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_H: gl.constexpr,
    BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr,
    W2_STAGES: gl.constexpr,
    LAYOUT: gl.constexpr,
    ACTIVATION: gl.constexpr,
):
    gl.static_assert(
        LAYOUT == "shared" or LAYOUT == "separate" or LAYOUT == "phases",
        "LAYOUT: shared, separate or phases",
    )
    SHARED_PHASES: gl.constexpr = LAYOUT == "shared"
    # Phases whose rings the planner may lay over each other: the loader drains at each
    # change of phase (_load_partition).
    DRAIN_PHASES: gl.constexpr = LAYOUT == "phases"
    gl.static_assert(
        not SHARED_PHASES or STAGES == W2_STAGES, "shared phases run one ring: W2_STAGES == STAGES"
    )
    # A consumer releases a phase-1 stage once its next product is issued: one stage would
    # wait for itself.
    gl.static_assert(STAGES >= 2, "the X/W1 ring needs at least two stages")
    gl.static_assert(ACTIVATION == "gelu" or ACTIVATION == "relu", "ACTIVATION: gelu or relu")
    # CTAs launched together take the N tiles of one row block: they read the same rows of X
    # and walk W1 in the same order, and find both in L2.
    off_n = gl.program_id(0) * BLOCK_N
    off_m = gl.program_id(1) * BLOCK_M
    schedule = (off_m, off_n, gl.cdiv(d_model, BLOCK_K), gl.cdiv(hidden, BLOCK_H))

    x_ring, w1_ring, w2_ring, h_tiles, y_tiles = _smem_buffers(
        (desc_x, desc_w1, desc_w2, desc_y),
        BLOCK_M,
        BLOCK_N,
        BLOCK_H,
        BLOCK_K,
        STAGES,
        W2_STAGES,
        LAYOUT,
    )

    bar_layout: gl.constexpr = mbarrier.MBarrierLayout()
    ready1 = gl.allocate_shared_memory(gl.int64, [STAGES, 1], bar_layout)
    empty1 = gl.allocate_shared_memory(gl.int64, [STAGES, 1], bar_layout)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready1.index(i), count=1)
        mbarrier.init(empty1.index(i), count=2)
    if SHARED_PHASES:
        # One ring, one pair of barriers per stage, whichever phase's step it holds.
        ready2 = ready1
        empty2 = empty1
    else:
        ready2 = gl.allocate_shared_memory(gl.int64, [W2_STAGES, 1], bar_layout)
        empty2 = gl.allocate_shared_memory(gl.int64, [W2_STAGES, 1], bar_layout)
        for i in gl.static_range(W2_STAGES):
            mbarrier.init(ready2.index(i), count=1)
            mbarrier.init(empty2.index(i), count=2)
    fence_async_shared()

    rings = (x_ring, w1_ring, w2_ring)
    barriers = (ready1, empty1, ready2, empty2)
    # Both consumers take these (a tuple held in a variable keeps tensors only, so the
    # constexprs go in each call).
    consumer_state = (desc_y, rings, h_tiles, y_tiles, barriers, schedule)
    gl.warp_specialize(
        [
            (_mma_partition, (consumer_state, 0, ACTIVATION, SHARED_PHASES)),
            (_mma_partition, (consumer_state, 1, ACTIVATION, SHARED_PHASES)),
            (
                _load_partition,
                (
                    (desc_x, desc_w1, desc_w2),
                    rings,
                    barriers,
                    schedule,
                    BLOCK_K,
                    SHARED_PHASES,
                    DRAIN_PHASES,
                ),
            ),
        ],
        [4, 1],
        [CONSUMER_REGISTERS, LOADER_REGISTERS],
    )


# Host side ---------------------------------------------------------------------------------

ACTIVATIONS = ("gelu", "relu")
LAYOUTS = ("shared", "separate", "phases")
# The default partition is one consumer warpgroup; the other consumer (4 warps) and the loader
# (1 warp) are workers.
COMPILE_OPTIONS = {"num_warps": 4}
# A worker consumer thread's registers: two consumers, one CTA an SM
# (hopper_common.partition_registers).
CONSUMER_REGISTERS = gl.constexpr(partition_registers(2)[1])


@dataclasses.dataclass(frozen=True)
class Config:
    """Tile sizes and SMEM layout of one compiled kernel: a BLOCK_M x BLOCK_N tile of Y per
    CTA, hidden chunks of BLOCK_H, d_model steps of BLOCK_K; ``stages`` X/W1 stages and
    ``w2_stages`` W2 stages, one ring of ``stages`` stages when ``layout`` is "shared".
    BLOCK_M is split between the two consumer warpgroups (64 rows each)."""

    block_n: int
    block_h: int
    stages: int
    w2_stages: int
    layout: str
    block_m: int = 128
    block_k: int = 64

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.layout == "shared" and self.w2_stages != self.stages:
            raise ValueError(
                "shared phases run one ring: w2_stages must equal stages, got "
                f"{self.w2_stages} and {self.stages}"
            )
        if self.stages < 2:
            raise ValueError(f"the X/W1 ring needs at least two stages, got {self.stages}")

    def __repr__(self):
        ring = (
            f"ring={self.stages}"
            if self.layout == "shared"
            else f"x/w1 stages={self.stages} w2 stages={self.w2_stages}"
        )
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_H={self.block_h} "
            f"BLOCK_K={self.block_k} {self.layout}: {ring}"
        )


def default_config(layout="shared"):
    """128 x 256 tiles of Y, hidden chunks of 64: with shared phases a ring of five 32 KiB
    stages; separate, the most stages that fit: four X/W1 stages and two W2 stages (both
    224 KiB; test_tutorial_hopper_fused_mlp.py checks that one stage more does not fit); phases,
    six X/W1 stages and three W2 stages over them (208 KiB; seven X/W1 stages do not fit)."""
    if layout == "shared":
        return Config(256, 64, 5, 5, "shared")
    if layout == "separate":
        return Config(256, 64, 4, 2, "separate")
    if layout == "phases":
        return Config(256, 64, 6, 3, "phases")
    raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


def constexprs(config, activation="gelu"):
    """The kernel's constexpr arguments for ``config`` (and ``activation``, when given)."""
    arguments = {
        "BLOCK_M": config.block_m,
        "BLOCK_N": config.block_n,
        "BLOCK_H": config.block_h,
        "BLOCK_K": config.block_k,
        "STAGES": config.stages,
        "W2_STAGES": config.w2_stages,
        "LAYOUT": config.layout,
    }
    if activation is not None:
        arguments["ACTIVATION"] = _check_activation(activation)
    return arguments


def config_of(arguments):
    """The ``Config`` of the kernel's constexpr arguments (a ``triton.Config``'s kwargs, or
    the arguments the autotuner hands a hook)."""
    arguments = getattr(arguments, "kwargs", arguments)
    return Config(
        arguments["BLOCK_N"],
        arguments["BLOCK_H"],
        arguments["STAGES"],
        arguments["W2_STAGES"],
        arguments["LAYOUT"],
        arguments["BLOCK_M"],
        arguments["BLOCK_K"],
    )


def _check_activation(activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    return activation


@functools.cache
def _block_shapes(config):
    """Block shapes of the X, W1, W2 and Y descriptors: Y is stored a consumer's half at a
    time."""
    return (
        [config.block_m, config.block_k],
        [config.block_k, config.block_h],
        [config.block_h, config.block_n],
        [config.block_m // 2, config.block_n],
    )


DESCRIPTORS = ("desc_x", "desc_w1", "desc_w2", "desc_y")


def kernel_source(config, dtype="fp16", activation="gelu"):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    dtype = _triton_dtype(dtype)
    layout = tile_layout(TRITON_DTYPE_BITS[dtype])
    arguments = constexprs(config, activation)
    descriptors = {
        name: f"tensordesc<{dtype}[{shape[0]},{shape[1]}],{layout!r}>"
        for name, shape in zip(DESCRIPTORS, _block_shapes(config), strict=True)
    }
    signature = {
        **descriptors,
        "tokens": "i32",
        "d_model": "i32",
        "hidden": "i32",
        **dict.fromkeys(arguments, "constexpr"),
    }
    return tlx.ASTSource(fn=fused_mlp_kernel, signature=signature, constexprs=arguments)


def compile_for_hopper(config, dtype="fp16", activation="gelu"):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return triton.compile(
        kernel_source(config, dtype, activation), target=SM90A, options=COMPILE_OPTIONS
    )


def smem_plan(config, dtype="fp16"):
    """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) as tlx makes it when the kernel
    is compiled for sm_90a with ``config``: ``tlx.kernel_plans`` traces the kernel (no GPU, no
    PTX). A configuration that does not fit raises the CompilationError compiling it raises."""
    (smem,) = tlx.kernel_plans(kernel_source(config, dtype), target=SM90A, options=COMPILE_OPTIONS)
    return smem


def _check_inputs(x, w1, w2):
    if (
        x.dim() != 2
        or w1.dim() != 2
        or w2.dim() != 2
        or w1.shape[0] != x.shape[1]
        or w2.shape[0] != w1.shape[1]
        or w2.shape[1] != x.shape[1]
    ):
        raise ValueError(
            "x must be [tokens, d_model], w1 [d_model, hidden] and w2 [hidden, d_model], got "
            f"{tuple(x.shape)}, {tuple(w1.shape)} and {tuple(w2.shape)}"
        )
    if not (x.dtype == w1.dtype == w2.dtype) or x.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(
            f"x, w1 and w2 must all be float16 or bfloat16, got {x.dtype}, {w1.dtype} and "
            f"{w2.dtype}"
        )
    if not (x.is_cuda and w1.is_cuda and w2.is_cuda):
        raise ValueError(
            f"x, w1 and w2 must be CUDA tensors, got {x.device}, {w1.device} and {w2.device}"
        )


def _operands(x, w1, w2):
    """(x, w1, w2, y, (tokens, d_model, hidden)): the operands as the TMA can address them and
    the output, or y None when Y is empty or zero (no hidden units)."""
    _check_inputs(x, w1, w2)
    (tokens, d_model), hidden = x.shape, w1.shape[1]
    shape = (tokens, d_model, hidden)
    if tokens == 0 or d_model == 0 or hidden == 0:
        return x, w1, w2, None, shape
    y = tma_operand(x.new_empty(tokens, d_model))
    return tma_operand(x), tma_operand(w1), tma_operand(w2), y, shape


def _descriptors(tensors, config):
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    layout = tile_layout(tensors[0].element_size() * 8)
    return [
        TensorDescriptor.from_tensor(t, shape, layout)
        for t, shape in zip(tensors, _block_shapes(config), strict=True)
    ]


def _grid(tokens, d_model, block_m, block_n):
    return (triton.cdiv(d_model, block_n), triton.cdiv(tokens, block_m))


def fused_mlp(x, w1, w2, config=None, activation="gelu"):
    """act(x @ w1) @ w2 in one kernel for CUDA tensors x [tokens, d_model], w1 [d_model,
    hidden] and w2 [hidden, d_model] of one dtype (float16 or bfloat16), accumulated in
    float32, the hidden activations rounded to the inputs' dtype; the result has the inputs'
    dtype. ``config``: a ``Config`` (default: ``default_config("shared")``)."""
    _check_activation(activation)
    x, w1, w2, y, (tokens, d_model, hidden) = _operands(x, w1, w2)
    if y is None:
        return torch.zeros(tokens, d_model, device=x.device, dtype=x.dtype)
    config = config or default_config()
    descriptors = _descriptors((x, w1, w2, y), config)
    grid = _grid(tokens, d_model, config.block_m, config.block_n)
    fused_mlp_kernel[grid](
        *descriptors,
        tokens,
        d_model,
        hidden,
        **constexprs(config, activation),
        **COMPILE_OPTIONS,
    )
    return y if y.is_contiguous() else y.contiguous()


def torch_mlp(x, w1, w2, activation="gelu"):
    """The unfused MLP in torch: two matmuls (cuBLAS) and the activation between them."""
    h = x @ w1
    if _check_activation(activation) == "gelu":
        h = torch.nn.functional.gelu(h, approximate="tanh")
    else:
        h = torch.relu(h)
    return h @ w2


def reference_mlp(x, w1, w2, activation="gelu"):
    """act(x @ w1) @ w2 in float32, the hidden activations rounded to the inputs' dtype as the
    kernel rounds them."""
    h = x.float() @ w1.float()
    if _check_activation(activation) == "gelu":
        h = torch.nn.functional.gelu(h, approximate="tanh")
    else:
        h = torch.relu(h)
    return h.to(x.dtype).float() @ w2.float()


# Autotuning ---------------------------------------------------------------------------------


def autotune_configs(layout="shared"):
    """The space ``autotuned_fused_mlp`` searches for ``layout`` (tlx.autotune): 128 x 256
    tiles of Y with hidden chunks of 64 (a quarter of the recompute of 128-column tiles), or
    128 x 128 with chunks of 128 (phase-1 products twice as wide), each with the most stages
    that fit, one fewer and one more (which the planner drops before compiling)."""
    if layout == "shared":
        configs = [Config(256, 64, s, s, "shared") for s in (4, 5, 6)]
        configs += [Config(128, 128, s, s, "shared") for s in (5, 6, 7)]
    elif layout == "separate":
        configs = [Config(256, 64, s, 2, "separate") for s in (3, 4, 5)]
        configs += [Config(128, 128, s, 2, "separate") for s in (3, 4, 5)]
    elif layout == "phases":
        configs = [Config(256, 64, s, 3, "phases") for s in (5, 6, 7)]
        configs += [Config(128, 128, s, 3, "phases") for s in (5, 6, 7)]
    else:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return [
        triton.Config(constexprs(config, None), pre_hook=_set_block_shapes, **COMPILE_OPTIONS)
        for config in configs
    ]


def _set_block_shapes(arguments):
    """The configuration's tiles on the descriptors: the autotuner runs this before each
    launch, and the plan pruner before it types the arguments."""
    shapes = _block_shapes(config_of(arguments))
    for name, shape in zip(DESCRIPTORS, shapes, strict=True):
        arguments[name].block_shape = list(shape)


@functools.cache
def autotuned_kernel(dtype, layout):
    """The kernel under ``tlx.autotune`` for one dtype and layout, keyed on the shape and the
    activation."""
    _triton_dtype(dtype)
    return tlx.autotune(
        configs=autotune_configs(layout), key=["tokens", "d_model", "hidden", "ACTIVATION"]
    )(fused_mlp_kernel)


# (dtype, layout) -> the configuration last run.
_last_config = {}


def autotuned_fused_mlp(x, w1, w2, layout="shared", activation="gelu"):
    """``fused_mlp`` with the configuration of ``layout``'s space that tlx.autotune finds
    fastest for the shape, dtype and activation (the first call of a shape times every
    configuration that fits)."""
    _check_activation(activation)
    x, w1, w2, y, (tokens, d_model, hidden) = _operands(x, w1, w2)
    if y is None:
        return torch.zeros(tokens, d_model, device=x.device, dtype=x.dtype)
    dtype = _triton_dtype(x.dtype)
    # The configuration's pre_hook sets each descriptor's block shape.
    descriptors = _descriptors((x, w1, w2, y), default_config(layout))
    tuner = autotuned_kernel(dtype, layout)
    tuner[lambda meta: _grid(tokens, d_model, meta["BLOCK_M"], meta["BLOCK_N"])](
        *descriptors, tokens, d_model, hidden, ACTIVATION=activation
    )
    _last_config[dtype, layout] = config_of(tuner.best_config)
    return y if y.is_contiguous() else y.contiguous()


def chosen_config(dtype, layout="shared"):
    """The configuration the last ``autotuned_fused_mlp`` of ``dtype`` and ``layout`` ran."""
    return _last_config[_triton_dtype(dtype), layout]


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the three spaces, on the CPU."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    pruner = tlx.PlanPruner(fused_mlp_kernel, target=SM90A)
    t = torch.empty(16, 16, dtype=torch.float16 if dtype == "fp16" else torch.bfloat16)
    layout = tile_layout(16)
    arguments = {
        name: TensorDescriptor(t, [4096, 4096], [4096, 1], list(shape), layout)
        for name, shape in zip(DESCRIPTORS, _block_shapes(default_config()), strict=True)
    }
    arguments.update(tokens=4096, d_model=1024, hidden=4096, ACTIVATION="gelu")
    for space in LAYOUTS:
        print_plan_verdicts(pruner, autotune_configs(space), arguments, config_of)


# The script ---------------------------------------------------------------------------------

# (tokens, d_model, hidden): one token, tails of the row block, of d_model (not a multiple of
# BLOCK_K or BLOCK_N) and of hidden, rows padded for the TMA (d_model 100: 200-byte rows).
CHECK_SHAPES = [(1, 256, 1024), (100, 200, 800), (1000, 100, 400), (1000, 1024, 4096)]
BENCHMARK_SHAPES = [(4096, 1024, 4096), (8192, 2048, 8192)]


def print_smem_plans(dtype="fp16"):
    for layout in LAYOUTS:
        config = default_config(layout)
        smem = smem_plan(config, dtype)
        print_spec_plan(f"{dtype}, {config}", smem)
    shared = default_config("shared")
    unshared = dataclasses.replace(shared, layout="separate")
    try:
        outcome = f"{smem_plan(unshared, dtype).plan.size_bytes} bytes: fits"
    except CompilationError as error:
        outcome = f"does not compile: {_planner_message(error)}"
    print(f"The same stages without sharing between phases ({unshared}): {outcome}")


def _planner_message(error):
    """The message of the planner's error inside the CompilationError ``error`` (Triton wraps
    an error once per function call it passes through: here ``_smem_buffers``)."""
    while error.error_message is None and isinstance(error.__cause__, CompilationError):
        error = error.__cause__
    return error.error_message


def check_against_torch():
    failures = 0
    for dtype, name in TORCH_TO_TRITON_DTYPE.items():
        for layout in LAYOUTS:
            for tokens, d_model, hidden in CHECK_SHAPES:
                torch.manual_seed(tokens + d_model + hidden)
                x, w1, w2 = random_inputs(tokens, d_model, hidden, dtype)
                expected = reference_mlp(x, w1, w2)
                out = fused_mlp(x, w1, w2, default_config(layout)).float()
                error = ((out - expected).abs().max() / expected.abs().max()).item()
                ok = error <= (5e-3 if dtype is torch.float16 else 2e-2)
                failures += not ok
                print(
                    f"    {name} {layout:8s} {tokens}x{d_model}x{hidden}: max relative error "
                    f"{error:.1e} {'ok' if ok else 'FAILED'}"
                )
    return failures


def random_inputs(tokens, d_model, hidden, dtype, device="cuda"):
    """x, w1, w2 with entries of the scale of a trained MLP's: x ~ N(0, 1), the weights
    scaled by 1 / sqrt(fan-in), so that H and Y stay near 1."""
    x = torch.randn(tokens, d_model, device=device, dtype=dtype)
    w1 = (torch.randn(d_model, hidden, device=device) / d_model**0.5).to(dtype)
    w2 = (torch.randn(hidden, d_model, device=device) / hidden**0.5).to(dtype)
    return x, w1, w2


def benchmark():
    print(
        f"{'tokens':>6} {'d_model':>7} {'dtype':>5} {'shared':>8} {'separate':>8} {'phases':>8} "
        f"{'torch':>8}"
    )
    for dtype, name in TORCH_TO_TRITON_DTYPE.items():
        for tokens, d_model, hidden in BENCHMARK_SHAPES:
            x, w1, w2 = random_inputs(tokens, d_model, hidden, dtype)
            flops = 4.0 * tokens * d_model * hidden
            times = [
                triton.testing.do_bench(call, return_mode="median")
                for call in (
                    functools.partial(fused_mlp, x, w1, w2, default_config("shared")),
                    functools.partial(fused_mlp, x, w1, w2, default_config("separate")),
                    functools.partial(fused_mlp, x, w1, w2, default_config("phases")),
                    functools.partial(torch_mlp, x, w1, w2),
                )
            ]
            print(
                f"{tokens:>6} {d_model:>7} {name:>5} "
                + " ".join(f"{flops / ms * 1e-9:8.1f}" for ms in times)
            )
    print("TFLOP/s of the useful 4 * tokens * d_model * hidden (bench/fused_mlp.py compares more)")


def main():
    print("SMEM plans of the kernel for sm_90a (tlx.kernel_plans):")
    print_smem_plans()
    if "--plans" in sys.argv[1:]:
        print("The autotuning spaces, pruned by the planner before compiling (sm_90a):")
        print_autotune_plans()
        return 0
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9:
        name = torch.cuda.get_device_name()
        print(f"Correctness against an fp32 reference on {name}:")
        failures = check_against_torch()
        print(f"Benchmark on {name}:")
        benchmark()
        return 1 if failures else 0
    print("No Hopper GPU: compiling for sm_90a only.")
    for dtype in TRITON_DTYPE_BITS:
        for layout in LAYOUTS:
            config = default_config(layout)
            compiled = compile_for_hopper(config, dtype)
            print(
                f"    {dtype} {config}: cubin {len(compiled.asm['cubin'])} bytes, "
                f"{compiled.metadata.shared} bytes of SMEM (region + mbarriers)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
