"""A fused MLP block Y = act(X @ W1) @ W2 for Hopper (sm_90a): one kernel, two phases.

    python tutorials/hopper_fused_mlp.py [--plans]   (PYTHONPATH=language, or the package installed)

The kernel is ``tlx_kernels.hopper.fused_mlp_kernel``, its host code
``tlx_kernels.hopper.fused_mlp``; a model calls the tuned one as
``from tlx_kernels import fused_mlp``.

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
One CTA computes one BLOCK_M x BLOCK_N tile of Y (128 x 256 or 128 x 128; 64-row tiles for
few tokens, below). The hidden dimension does not fit on chip (a 128-row block of H at
hidden = 16384 is 4 MiB), so the CTA walks it in chunks of BLOCK_H columns, and per chunk runs
two phases:

* phase 1: H_chunk = X[rows, :] @ W1[:, chunk], a K loop over d_model in steps of BLOCK_K
  (64) fed by a ring of X tiles [BLOCK_M, BLOCK_K] and W1 tiles [BLOCK_K, BLOCK_H]; then
  act(H_chunk), rounded to the inputs' dtype, is written to shared memory (``h_tiles``);
* phase 2: Y_tile += H_chunk @ W2[chunk, columns], one product of K = BLOCK_H fed by a W2 tile
  [BLOCK_H, BLOCK_N] and the H tile.

The Y tile stays in registers over all chunks; at the end it is written to shared memory
(``y_tiles``) and stored with TMA, which clips the rows and columns past the edges of Y.
Three warp-specialized partitions share the CTA, as in hopper_gemm.py: a loader warp issues
every TMA copy (per chunk: the d_model / BLOCK_K phase-1 steps, then the one W2 step) into
the ring(s), and two consumer warpgroups each own BLOCK_M / 2 = 64 rows of a 128-row tile
(the 64-row tiles split the hidden chunks, below): their own rows of X, of H and of Y, so that the
consumers never wait for each other except through the ring.
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
measures it: 0.10-0.39x torch on an H200 at d_model 1024-4096, issue 49).

Where fusion pays, and where it does not
----------------------------------------
Fusion does not pay where d_model is wider than a tile of Y: there each CTA recomputes H for
its columns (the factor above), and what fusion saves, H's round trip, is a few percent of
two compute-bound GEMMs; cuBLAS's two products then win by the recompute factor. Nor would
keeping all of Y's row block on chip help there: 64 x d_model fp32 accumulators a consumer
fit its registers only up to d_model = 256 (128 registers a thread at 256 columns).

It pays where Y's row block is one tile: d_model <= BLOCK_N = 256 (hidden = 4 x d_model, any
token count). Then the grid has one column of CTAs, each computes its block of H exactly
once, H never goes to global memory, and nothing is recomputed: the fused kernel does the
useful FLOPs only, while the unfused MLP writes and reads H (2 x tokens x hidden x 2 bytes)
and launches three kernels, each of small arithmetic intensity at these widths (a GEMM of
K = 256 is bound by its operands' bytes, not the tensor cores). ``bench/fused_mlp.py --small``
times these rows (d_model 128 and 256, tokens 4k to 256k) for every layout against torch, in
the same run; the default rows (d_model >= 1024) show where it does not pay.

Few tokens: 64-row tiles, and splitting the hidden dimension
-----------------------------------------------------------
One CTA a tile of Y leaves most SMs idle where the tokens make few row blocks: 4096 tokens are
32 blocks of 128 rows, 32 CTAs on an H200's 132 SMs, and each streams all of W1 and W2 through
its ring. Two ways to more CTAs, both in the tuner's space.

64-row tiles (``Config(..., block_m=64)``, ``CHUNK_SPLIT_CONFIGS``: 64 x 128, hidden chunks
of 128) make twice the row blocks. A warpgroup's MMA takes 64 rows, so the two consumers
cannot split 64 rows between them; they split the hidden chunks instead (``_consume_chunks``):
consumer c takes chunks c, c + 2, ..., computes each chunk of H for all 64 rows, applies the
activation and keeps it in registers as the A operand of its product with W2, and accumulates
its own partial of the whole 64 x 128 tile of Y. Each element of H and Y's partials is computed
once and the consumers never wait for each other until the end, where consumer 1 writes its
fp32 partial to SMEM and consumer 0 adds it and stores Y.

What this buys over splitting the columns (each consumer half of a chunk's columns of H and
half of Y's, the products reading the other's half of H through SMEM, which the kernel did
before): every product is as wide as a chunk or the tile (N = 128, not 64) and H is never in
SMEM, so a product's SMEM reads are its B tile and X alone. A 64-row product of N columns
reads 2 KiB of A and N x 32 bytes of B a K step of 16 from SMEM for 2 x 64 x N x 16 FLOPs: at
N = 64 with A in SMEM that is the SMEM's 128 bytes a clock for the tensor cores' 4096 FLOPs a
clock (an SM's), at N = 128 three quarters of it, and with H in registers half. At 4096 x 256
the tiles went from 238.6 to 259-261 TFLOP/s (H200, the same session; docs/performance.md).

The protocol changes in two places. Each stage has one reader: consumer c's steps take its
half of each ring, stages c, c + 2, ... in turn (``_ring_slot``: its own step i has ring index
2 i + c, so index mod the depth is the stage and the quotient the pass, as for a ring of half
the depth), and its stages' ``empty`` barriers take one arrival a pass from one partition. (One
ring read in turn by whichever consumer's chunk a step is, with one arrival a pass, is as safe
on the GPU, but which partition's arrival completes a pass then depends on the timing, and
``python -m tlx check`` cannot order the loader's refill after the right consumer's read.)
So the depths are even, and the ``phases`` layout, whose loader drains the ring at each change
of phase and so would serialize the consumers' chunks, has no 64-row tiles. And the
epilogue lies over the rings: Y over the fp32 partial over the first stage, written once both
consumers' last products have read the rings (``rings_read``, an arrival from each), the
partial read once written (``partial_written``); consumer 0's warps meet before Y is written
over what they read. With a 64 x 128 tile the 32 KiB partial fits the first stage, so the
epilogue costs no SMEM (a seventh stage would fit, but the halves need an even depth).
Their seeded races (``test/hazards``: each wait dropped) are reported by ``python -m tlx
check``. A 64 x 256 tile would hold 128 fp32 registers of partial Y a thread beside the
chunk's 64 of H and its 32 of operand (224 of a consumer's 232); it failed to launch on an
H200 and ``Config`` refuses it. The tuner times the 64-row tiles where a wave of the 128-row
tiles of 128 columns keeps under 90% of the SMs busy.

``Config.hidden_splits`` = S launches S CTAs a tile (the grid's third axis): CTA s
walks the hidden chunks of its slice of the hidden dimension only, chunks
[s * chunks // S, (s + 1) * chunks // S), and ends with a partial Y = act(X W1[:, slice])
W2[slice, :]. The activation is per hidden unit, so the slices add up exactly to the whole.
The partial Ys are summed as the GEMM's split-K sums its K splits, by the one reduction
(``tlx_kernels.hopper.split_reduction``): each consumer adds its fp32 partial into the tile's
sum in a workspace (the L2 does the adds; a whole-tile sum a tile of Y, the GEMM's layout)
and arrives at its half tile's counter; the last split to arrive reads the sum, stores Y and
leaves the sum zero. No CTA waits for another, and the SMEM plan is the unsplit kernel's (the
partials go from registers to global memory). The price: S x tokens x d_model fp32 adds in
the L2 (rounded up to whole tiles), the sum read once, and the adds in arrival order (not
bitwise reproducible).
A split of no chunk would add nothing, so the launch refuses more splits than chunks.
``autotuned_fused_mlp`` times them (``split_hidden=False`` leaves them out; ``bench/
fused_mlp.py --no-split-hidden``), and ``fused_mlp(..., config=Config(..., hidden_splits=S))``
runs one explicitly. The tuner tries splits only where a wave of the
tiles alone keeps under 90% of the SMs busy (``shape_configs``, the GEMM's rule:
``split_reduction.splits_to_try``): of 2 to 16 splits of each tile shape's deepest ring, the
(at most two) that keep the most SMs busy. At 4096 x 128 a layout's space is then 15
configurations (the planner drops 2 before compiling), at 4096 x 256 14 (2 dropped); from
16384 tokens the 6 of one split and 128 rows (2 dropped), the default space's.

Measured on an H200 (docs/performance.md, ``bench/fused_mlp.py --small``): at 4096 tokens
the shared and separate layouts' tuners take the 64 x 128 tiles unsplit, 64 CTAs at d_model
128 and 128 at 256 (two column tiles: H computed twice); the splits lose to them (on 10-20 us
of work the partials' round trip through the L2 costs more than the SMs they would add). From
16384 tokens the 128-row tiles fill the SMs: 1.5-2.1x torch.

The gated form (SwiGLU)
-----------------------
LLM layers gate the MLP: Y = (silu(X W_gate) * (X W_up)) W_down, W_gate and W_up [d_model,
hidden], W_down [hidden, d_model] (``from tlx_kernels import gated_mlp``; the kernel is
``tlx_kernels.hopper.gated_mlp_kernel``, its host code ``tlx_kernels.hopper.gated_mlp``). Its
first half, H = silu(X W_gate) * (X W_up), is one kernel: each CTA computes a 128 x BLOCK_N tile
of H (BLOCK_N 64 or 128), and per d_model step the loader brings one X tile and the W_gate and
W_up tiles of its columns into one ring stage; each consumer issues two products on the one X
tile into two fp32 accumulators (two wgmma groups a step: ``warpgroup_mma_wait(2)`` retires the
previous step's pair before its stage is released). The epilogue computes silu(gate) * up in
fp32 and rounds once to the inputs' dtype. With one tile a CTA, its staging tile lies over the
ring, dead once both consumers' products completed (``reuse_group(h_tile, ring)``, shared);
persistent, it lies beside the ring, which the loader fills with the next tile's steps while H
is stored. The planner prices both: at 128 x 128 tiles, four 48 KiB stages take 192 KiB with H
over them, 224 KiB beside; at 128 x 64, H over the ring is what lets a seventh 32 KiB stage fit.

Why it can pay at LLM shapes, where the ungated fusion above does not: nothing is recomputed
(H's tile needs only X's row block and the weights' columns), and what fusion saves is memory
traffic. Unfused, torch's two GEMMs write G and U, silu reads G and writes S, the product reads
S and U and writes H: beyond the H that both write, 6 x tokens x hidden 2-byte elements go
through global memory (12 bytes per entry of H; the same with one GEMM on the concatenated
[W_gate | W_up]). Against the 4 x tokens x d_model x hidden FLOPs of the two products, that is
3 / d_model bytes a FLOP: at d_model = 4096, 0.35 ms at 8192 tokens x hidden 14336 (1.4 GB at
some 4 TB/s) beside 2.9 ms of products at 660 TFLOP/s, about 10% of the first half and 7% of
the whole MLP (the down projection is half the products' FLOPs again); at d_model = 2048, twice
the share. Sharing X's loads gives a step's two products the SMEM bytes per FLOP of one 128 x
256 GEMM tile, where two GEMMs of the same 128 x 128 tiles would load X twice (4/3 the bytes);
cuBLAS reaches that ratio with wider tiles of one product, and so does the concatenated GEMM:
what sets the fused kernel apart from both is the traffic above. The down projection stays a GEMM
over H in global memory
(``tlx_kernels.matmul``): a tile of Y needs a whole row block of H (3.5 MiB at hidden 14336),
and recomputing it per tile of Y is the factor the section on cost computes. ``python
bench/fused_mlp.py --gated`` times the whole MLP and its first half against torch's two GEMMs
and the concatenated one, tokens 512 to 8192 at d_model 4096 (hidden 14336) and 2048 (8192).

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

import torch
import triton
from tlx_kernels.hopper.common import TORCH_TO_TRITON_DTYPE, TRITON_DTYPE_BITS, print_spec_plan
from tlx_kernels.hopper.fused_mlp import (
    LAYOUTS,
    compile_for_hopper,
    default_config,
    fused_mlp,
    planner_message,
    print_autotune_plans,
    random_inputs,
    reference_mlp,
    smem_plan,
    torch_mlp,
)
from triton.compiler.errors import CompilationError

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
        outcome = f"does not compile: {planner_message(error)}"
    print(f"The same stages without sharing between phases ({unshared}): {outcome}")


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
