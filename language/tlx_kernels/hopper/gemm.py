"""The Hopper GEMM on the host: its configurations, autotuning space, launches (``matmul``,
``autotuned_matmul``) and CPU compiles (``kernel_source``, ``compile_for_hopper``,
``smem_plan``). The kernel: tlx_kernels.hopper.gemm_kernel."""

import dataclasses
import functools

import tlx
import torch
import triton

from tlx_kernels import _host
from tlx_kernels._host import KernelConfig, KernelHost, sm_count
from tlx_kernels.hopper.common import (
    SM90A,
    TMA_ALIGNMENT,
    TORCH_TO_TRITON_DTYPE,
    tma_descriptors,
    tma_operand,
    triton_dtype,
)
from tlx_kernels.hopper.gemm_kernel import gemm_kernel
from tlx_kernels.hopper.gemm_state import column_parts as _column_parts
from tlx_kernels.hopper.gemm_state import last_wave
from tlx_kernels.hopper.split_reduction import (
    current_stream,
    last_wave_splits_to_try,
    split_buffers,
    splits_to_try,
    sums_addressable,
    tile_sums,
    wave_occupancy,
)
from tlx_kernels.launch import DirectLaunch

_TORCH_DTYPE = {name: dtype for dtype, name in TORCH_TO_TRITON_DTYPE.items()}


# Tiles of these many columns are built of power-of-two parts (``gemm_state.column_parts``),
# whose wave counts fit grids that 128 and 256 columns leave ragged (``shape_configs``).
SPLIT_COLUMN_WIDTHS = (160, 192)
column_parts = _column_parts.fn


# Whether the GEMM launches with programmatic dependent launch (Triton's ``launch_pdl``): its
# prologue then runs beside the grid before it in the stream, whose writes it waits for before
# it reads A or B (gemm_kernel, ``common.wait_for_prior_grids``). bench/dependent_launch.py
# times the kernel launched both ways.
LAUNCH_PDL = False


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and schedule of one compiled kernel. BLOCK_M is split between the two
    consumer warpgroups, so BLOCK_M / 2 must be a multiple of 64 (one warpgroup's MMA rows).
    Without warp specialization the kernel's 4 warps are its one warpgroup, whose tile may
    be 64 rows (``SKINNY_TILES``)."""

    COMPILE_OPTIONS = {**_host.COMPILE_OPTIONS, "launch_pdl": LAUNCH_PDL}
    # GROUP_M, then the constexprs, in the kernel's order.
    ARGUMENTS = {
        "group_m": "GROUP_M",
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "block_k": "BLOCK_K",
        "num_stages": "NUM_STAGES",
        "alias_c": "ALIAS_C",
        "persistent": "PERSISTENT",
        "warp_specialize": "WARP_SPECIALIZE",
        "stagger": "STAGGER",
        "split_k": "SPLIT_K",
        "last_wave_split": "LAST_WAVE_SPLIT",
    }

    block_m: int
    block_n: int
    block_k: int
    num_stages: int
    alias_c: bool
    group_m: int = 8
    persistent: bool = False
    warp_specialize: bool = True
    stagger: int = 0
    split_k: int = 1
    # Persistent: the tiles of a ragged last wave (past the waves every CTA runs a tile of)
    # each split along K into this many units, which the CTAs share and split-K's reduction
    # adds up (tlx_kernels.hopper.gemm_state.split_unit).
    last_wave_split: int = 1

    def __post_init__(self):
        rows = 128 if self.warp_specialize else 64
        if self.block_m % rows:
            raise ValueError(
                f"block_m={self.block_m}: "
                + (
                    "the two consumer warpgroups take half of the rows each, a multiple of 64 "
                    "(a warpgroup's MMA rows): a multiple of 128"
                    if self.warp_specialize
                    else "a multiple of 64 (a warpgroup's MMA rows)"
                )
            )
        if self.block_n not in SPLIT_COLUMN_WIDTHS and (
            not 16 <= self.block_n <= 256 or self.block_n & (self.block_n - 1)
        ):
            raise ValueError(
                f"block_n={self.block_n}: a power of two from 16 to 256 (Gluon's tiles have "
                f"power-of-two shapes), or one of {SPLIT_COLUMN_WIDTHS}, a tile of two "
                "power-of-two column parts"
            )
        if self.persistent and self.alias_c:
            raise ValueError(
                "a persistent kernel loads a CTA's next tile while it stores C: C cannot alias "
                "the ring (alias_c=False)"
            )
        if self.persistent and not self.warp_specialize:
            raise ValueError(
                "a persistent kernel loads a CTA's next tile in a loader warp while the "
                "consumers store C: it needs warp_specialize=True"
            )
        if self.stagger < 0:
            raise ValueError(f"stagger={self.stagger}: a number of K steps, 0 or more")
        if self.stagger and (self.alias_c or not self.warp_specialize):
            raise ValueError(
                f"stagger={self.stagger}: the first consumer stores its half of C while the "
                "second still reads the ring, so staggered consumers need warp_specialize=True "
                "and C beside the ring (alias_c=False)"
            )
        if self.stagger > self.num_stages:
            raise ValueError(
                f"stagger={self.stagger} > num_stages={self.num_stages}: the ring must hold the "
                "stages of every K step the second consumer leaves until the first is done"
            )
        # Before split-K's own check, which refuses a persistent kernel too.
        if self.last_wave_split < 1:
            raise ValueError(
                f"last_wave_split={self.last_wave_split}: a number of K splits, 1 or more"
            )
        if self.last_wave_split > 1 and (not self.persistent or self.split_k > 1):
            raise ValueError(
                f"last_wave_split={self.last_wave_split}: the last wave's split units follow a "
                "persistent CTA's whole tiles: it needs persistent=True and split_k=1"
            )
        if self.split_k < 1:
            raise ValueError(f"split_k={self.split_k}: a number of K splits, 1 or more")
        if len(column_parts(self.block_n)) > 1 and (
            not self.warp_specialize or self.stagger or self.split_k > 1 or self.last_wave_split > 1
        ):
            raise ValueError(
                f"block_n={self.block_n} (a {column_parts(self.block_n)} split of B and C) is "
                "built by the warp-specialized kernel's consumers only: it needs "
                "warp_specialize=True, stagger=0, split_k=1 and last_wave_split=1"
            )
        if self.split_k > 1 and (self.persistent or self.stagger):
            raise ValueError(
                f"split_k={self.split_k}: each split of a tile is a CTA of its own, which "
                "reduces the partials: it needs persistent=False and stagger=0"
            )

    def __repr__(self):
        persistent = " persistent" if self.persistent else ""
        pipelined = "" if self.warp_specialize else " pipelined"
        stagger = f" stagger={self.stagger}" if self.stagger else ""
        split_k = f" split_k={self.split_k}" if self.split_k > 1 else ""
        split_last = f" last_wave_split={self.last_wave_split}" if self.last_wave_split > 1 else ""
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_K={self.block_k} "
            f"stages={self.num_stages} alias_c={self.alias_c} GROUP_M={self.group_m}"
            f"{persistent}{pipelined}{stagger}{split_k}{split_last}"
        )


# Triton's compile options of every configuration.
COMPILE_OPTIONS = Config.COMPILE_OPTIONS


def default_config(dtype="fp16"):
    """128 x 256 x 64 tiles and four stages, with C aliasing the ring (the same for fp16 and
    bf16: both are 16 bits wide). Measured on an H100 against it: GROUP_M = 16 within 0.3%,
    GROUP_M = 4 up to 3% slower, BLOCK_K = 128 with two stages 30% slower."""
    triton_dtype(dtype)
    return Config(128, 256, 64, 4, alias_c=True)


@functools.cache
def unaliased_search(dtype="fp16"):
    """The default configuration without aliasing, tried with fewer and fewer stages. Returns
    (the first whose kernel compiles, ((configuration, error message), ...) for those that do
    not: their region does not fit, and the planner's message states the bytes it needs)."""
    return HOST.unaliased_search(
        default_config(dtype),
        lambda base, stages: base.replace(num_stages=stages, alias_c=False),
        dtype,
    )


def best_unaliased_config(dtype="fp16"):
    """The default configuration without aliasing, with as many stages as the planner fits."""
    return unaliased_search(dtype)[0]


def benchmark_configs(dtype="fp16"):
    """(with aliasing, best without aliasing)."""
    return default_config(dtype), best_unaliased_config(dtype)


def block_shapes(config, arguments=None):
    """Block shapes of the A, B and C descriptors: C is stored a consumer's half at a time; a
    tile of two column parts (``SPLIT_COLUMN_WIDTHS``) copies B and C its narrower part's
    width at a time (``column_parts``)."""
    return (
        [config.block_m, config.block_k],
        [config.block_k, column_parts(config.block_n)[-1]],
        [config.block_m // 2, column_parts(config.block_n)[-1]],
    )


HOST = KernelHost(
    gemm_kernel,
    Config,
    descriptors=("desc_a", "desc_b", "desc_c"),
    scalars={
        "M": "i32",
        "N": "i32",
        "K": "i32",
        "workspace": "*fp32",
        "counters": "*i32",
        "GROUP_M": "i32",
    },
    block_shapes=block_shapes,
    target=SM90A,
)


def kernel_source(config, dtype="fp16"):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    return HOST.kernel_source(config, dtype)


def compile_for_hopper(config, dtype="fp16"):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return HOST.compile(config, dtype)


def smem_plan(config, dtype="fp16"):
    """The plan of the kernel's SMEM spec (``KernelHost.smem_plan``)."""
    return HOST.smem_plan(config, dtype)


def _check_inputs(a, b):
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a must be [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a.dtype != b.dtype or a.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(f"a and b must both be float16 or bfloat16, got {a.dtype} and {b.dtype}")


def _operands(a, b):
    """(a, b, c, (M, N, K)): the operands as the TMA can address them and the output, or c
    None when the product is empty."""
    _check_inputs(a, b)
    if not (a.is_cuda and b.is_cuda):
        raise ValueError(f"a and b must be CUDA tensors, got {a.device} and {b.device}")
    (M, K), N = a.shape, b.shape[1]
    if M == 0 or N == 0 or K == 0:
        return a, b, None, (M, N, K)
    return tma_operand(a), tma_operand(b), tma_operand(a.new_empty(M, N)), (M, N, K)


def matmul(a, b, config=None):
    """a @ b for CUDA tensors a [M, K] and b [K, N] of one dtype (float16 or bfloat16),
    accumulated in float32; the result has the inputs' dtype. Operands whose rows the TMA
    cannot address (a row not a multiple of 16 bytes) are first copied into padded rows."""

    a, b, c, (M, N, K) = _operands(a, b)
    if c is None:
        return torch.zeros(M, N, device=a.device, dtype=a.dtype)
    config = config or default_config(a.dtype)
    desc_a, desc_b, desc_c = tma_descriptors((a, b, c), block_shapes(config))
    _check_splits(config, K)
    grid = _launch_grid(M, N, config, a.device)
    workspace, counters = split_k_buffers(a.device, [config], M, N)
    gemm_kernel[grid](
        desc_a,
        desc_b,
        desc_c,
        M,
        N,
        K,
        workspace,
        counters,
        **config.kernel_arguments(),
        **config.compile_options,
    )
    return c if c.is_contiguous() else c.contiguous()


def _check_splits(config, K):
    """Refuses a last-wave schedule of more splits than K steps: a persistent CTA's unit of no
    K step would release a ring stage twice (``common.ring_matmul``). (A split-K CTA's is a
    kernel of its own, whose partial is zeros.)"""
    if config.last_wave_split > triton.cdiv(K, config.block_k):
        raise ValueError(
            f"last_wave_split={config.last_wave_split} splits of K={K}, more than its "
            f"{triton.cdiv(K, config.block_k)} steps of {config.block_k}: take fewer splits"
        )


def _launch_grid(M, N, config, device):
    """One CTA per tile of C, (persistent) one per SM while there are more tiles, or
    (split-K) one per split of each tile."""
    tiles = triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n)
    return (min(tiles, sm_count(device)) if config.persistent else tiles * config.split_k,)


def split_tiles(config, M, N, sms):
    """(the tiles whose K steps ``config`` splits at M x N on ``sms`` SMs, into how many
    splits): split-K's every tile, the last-wave schedule's ragged tiles past its whole waves
    (``gemm_state.last_wave``, as the kernel reckons them, on the grid ``_launch_grid``
    launches), or none."""
    tiles = triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n)
    if config.split_k > 1:
        return tiles, config.split_k
    if config.last_wave_split > 1:
        return last_wave.fn(tiles, min(tiles, sms))[1], config.last_wave_split
    return 0, 1


def split_k_sums(config, M, N, sms):
    """The fp32 sums ``config``'s split tiles at M x N on ``sms`` SMs add into
    (``split_tiles``; ``split_reduction.tile_sums``: a whole tile's for each split tile)."""
    return tile_sums(*split_tiles(config, M, N, sms), config.block_m, config.block_n)


def split_k_buffers(device, configs, M, N, sms=None):
    """(workspace, counters) for launches of ``configs`` at M x N on ``sms`` SMs (default:
    the device's, asked only of a last-wave schedule): ``split_reduction.split_buffers`` of
    their split tiles (``split_tiles``), shared with the fused MLP's. Refuses a product whose
    sums the kernel's 32-bit offsets cannot address."""
    if sms is None and any(config.last_wave_split > 1 for config in configs):
        sms = sm_count(device)
    return split_buffers(
        device,
        [(*split_tiles(config, M, N, sms), config.block_m, config.block_n) for config in configs],
    )


# Autotuning ---------------------------------------------------------------------------------


# Tiles of 256 x 128 (each consumer 128 rows: a mid-sized product's tiles in other waves than
# 128 x 256's): C over a ring of the most stages that fit, or beside the most that fit with a
# persistent CTA.
MID_TILES = (
    Config(256, 128, 64, 4, alias_c=True),
    Config(256, 128, 64, 3, alias_c=False, persistent=True),
)
# 64 x 64 tiles of one warpgroup (pipelined): twice the CTAs of 128 x 64 tiles where those
# leave SMs idle, a product of few rows (``shape_configs``). cuBLAS runs 64 x 64 tiles there
# (128 CTAs at 128 x 4096 x 4096 and 512 x 1024 x 4096, H200). Deep rings: as a user calls
# it (``do_bench``, the L2 cleared before each call) such a product streams B from DRAM, and
# a CTA needs many K steps in flight. K steps of 64 with 8 stages (C over the ring or beside
# it), 12 or 14; of 128 with 6 or 7 (fewer barrier waits a byte). On the H200, L2 cleared,
# 14 stages of 64 or 7 of 128 ran 128 x 4096 x 4096 at 1.05-1.07x cuBLAS where 8 of 64 ran
# 0.94x, and 7 of 128 ran 512 x 1024 x 4096 at 1.11x where 8 of 64 ran 0.88x
# (docs/performance.md, "Deep rings for a cold L2").
SKINNY_TILES = (
    *(Config(64, 64, 64, 8, alias_c, warp_specialize=False) for alias_c in (True, False)),
    *(Config(64, 64, 64, stages, True, warp_specialize=False) for stages in (12, 14)),
    *(Config(64, 64, 128, stages, True, warp_specialize=False) for stages in (6, 7)),
)
# Split-K's tiles, (BLOCK_M, BLOCK_N, stages) with C over the ring, and its splits (and the
# 64 x 64 tiles of one warpgroup, 8 stages, split so: ``autotune_space``). The 128 x 64 and
# 64 x 64 tiles (twice and four times the CTAs of 128 x 128 for a few rows) are tried only
# where K is long, SPLIT_K_LONG_STEPS K steps or more: a narrow tile loads more operand bytes
# a product, which only a long K loop split many ways keeps busy.
SPLIT_K_TILES = ((128, 256, 4), (256, 128, 4), (128, 128, 6), (128, 64, 8))
SPLIT_K_FACTORS = (2, 3, 4, 5, 6, 8, 12, 16)
SPLIT_K_LONG_STEPS = 64
# A split of fewer K steps spends more of its time filling the ring and reducing than in it.
SPLIT_K_MIN_STEPS = 4
# The last-wave schedule's persistent tiles, (BLOCK_M, BLOCK_N, stages) with C beside the
# ring (the tuner's persistent choices on the square grid and at 6144 x 3072 x 5120), and its
# splits of the last wave's tiles.
LAST_WAVE_TILES = ((128, 256, 3), (256, 128, 3), (128, 128, 5))
LAST_WAVE_FACTORS = (2, 3, 4, 6, 8)


# The tiles of two column parts (``SPLIT_COLUMN_WIDTHS``). 128 x 192: persistent with C
# beside a ring of 3 or 4 stages of 40 KiB (4: 48 + 160 KiB), and one tile a CTA with C over
# a ring of 4 or 5 stages. 128 x 160: persistent with C beside a ring of 4 or 5 stages of
# 36 KiB (5: 40 + 180 KiB), the configurations measured at 1536 cubed (docs/performance.md).
SPLIT_COLUMN_TILES = (
    [Config(128, 192, 64, stages, alias_c=False, persistent=True) for stages in (3, 4)]
    + [Config(128, 192, 64, stages, alias_c=True) for stages in (4, 5)]
    + [Config(128, 160, 64, stages, alias_c=False, persistent=True) for stages in (4, 5)]
)


def split_columns_width(M, N, sms):
    """The width of ``SPLIT_COLUMN_WIDTHS`` whose 128-row tiles keep the SMs busiest with C's
    columns over their waves at M x N on ``sms`` SMs (``wave_occupancy``, times the share of
    the tiles' columns that N fills: columns past N are work thrown away), if busier than
    both 128 x 128 and 128 x 256 tiles; else None. On 132 SMs: 160 at 1536 cubed, 192 at
    3072 cubed and 512 x 6144; none at 4096 cubed."""
    tiles_m = triton.cdiv(M, 128)

    def occupancy(block_n):
        tiles_n = triton.cdiv(N, block_n)
        return wave_occupancy(tiles_m * tiles_n, sms) * N / (tiles_n * block_n)

    best = max(SPLIT_COLUMN_WIDTHS, key=occupancy)
    return best if occupancy(best) > max(occupancy(128), occupancy(256)) else None


def autotune_space():
    """The ``Config``s ``autotuned_matmul`` searches (tlx.autotune), before its shape prunes
    them (``shape_configs``): 64, 128 or 256 columns per tile (a narrow tile gives a small
    matrix more CTAs), 2 to 6 stages (to 8 for 64 columns, which the tuner takes at 1024
    cubed: a short K loop, whose fill a deep ring hides), C over the ring or beside it,
    persistent kernels (C beside the ring) whose next tile loads while this one's C is
    stored, and for the 256-column tiles, whose order decides most what L2 holds, groups of
    4, 8 or 16 tile rows (GROUP_M is an argument: the variants share one compiled kernel),
    and 64-column tiles without warp specialization (K steps of 64 with 4, 6 or 8 stages, or
    of 128 with 4; C over the ring or beside it), which the tuner takes at 1024 cubed; and
    for the 256-column tiles with C beside a ring of 2 or 3 stages, the same with staggered
    consumers over the whole ring (what the tuner takes at 2048 cubed). The planner drops,
    before compiling, the 24 of these 87 whose SMEM does not fit: 256 columns fit 3 stages
    with C beside the ring and 4 with C over it (a tiles-times-stages formula would drop that
    one too); 64 and 128 columns fit all their stages. Then the mid tiles (``MID_TILES``:
    256 x 128) and split-K (``SPLIT_K_TILES`` and 64 x 64 tiles of one warpgroup, x
    ``SPLIT_K_FACTORS``), C over the ring: its
    fp32 partials are added from registers to the workspace and need no SMEM; and the
    persistent last-wave schedule (``LAST_WAVE_TILES`` x ``LAST_WAVE_FACTORS``, C beside the
    ring: the split units' partials too are added to the workspace); and the 128 x 192 tiles
    and 128 x 160 tiles (``SPLIT_COLUMN_TILES``, a 128- and a 64- or 32-column part:
    ``column_parts``); and 64 x 64
    tiles of one warpgroup (``SKINNY_TILES``)."""
    configs = [
        Config(128, block_n, 64, stages, alias_c)
        for block_n in (64, 128, 256)
        for stages in range(2, 9 if block_n == 64 else 7)
        for alias_c in (True, False)
    ]
    configs += [
        Config(128, block_n, 64, stages, alias_c=False, persistent=True)
        for block_n in (128, 256)
        for stages in (3, 4, 5, 6)
    ]
    configs += [
        config.replace(stagger=config.num_stages)
        for config in configs
        if config.block_n == 256 and not config.alias_c and config.num_stages <= 3
    ]
    configs += [
        config.replace(group_m=group_m)
        for config in configs
        if config.block_n == 256
        for group_m in (4, 16)
    ]
    configs += [
        Config(128, 64, block_k, stages, alias_c, warp_specialize=False)
        for block_k, stages in ((64, 4), (64, 6), (64, 8), (128, 4))
        for alias_c in (True, False)
    ]
    configs += MID_TILES
    configs += SPLIT_COLUMN_TILES
    configs += SKINNY_TILES
    configs += [
        Config(block_m, block_n, 64, stages, alias_c=True, split_k=split_k)
        for block_m, block_n, stages in SPLIT_K_TILES
        for split_k in SPLIT_K_FACTORS
    ]
    configs += [
        Config(64, 64, 64, 8, alias_c=True, warp_specialize=False, split_k=split_k)
        for split_k in SPLIT_K_FACTORS
    ]
    configs += [
        Config(block_m, block_n, 64, stages, alias_c=False, persistent=True, last_wave_split=s)
        for block_m, block_n, stages in LAST_WAVE_TILES
        for s in LAST_WAVE_FACTORS
    ]
    return configs


def autotune_configs():
    """The space ``autotuned_matmul`` searches, as ``triton.Config``s (``autotune_space``)."""
    return [HOST.triton_config(config) for config in autotune_space()]


def shape_configs(M, N, K, sms, space=None):
    """The configurations of ``space`` (default: ``autotune_space()``) the tuner times at M x
    N x K on ``sms`` SMs: every one that splits no K, but the mid tiles only where 128 x 256
    tiles make fewer than four waves, and no 256-row tile where M fits 128-row ones; split-K
    where its tiles make less than one wave, which leaves at least a tenth of the SMs idle,
    each split of at least ``SPLIT_K_MIN_STEPS`` K steps (the 128 x 64 tiles only where K
    has ``SPLIT_K_LONG_STEPS``), the splits whose waves keep at least 90% of the SMs busy
    and, of those, the two that keep the most busy (``split_reduction.splits_to_try``, the
    fused MLP's rule too); and the last-wave schedule where its tiles make a wave or more
    and a last wave that keeps less than 90% of the SMs busy, each split of at least
    ``SPLIT_K_MIN_STEPS`` K steps, the two splits whose units keep the most SMs busy, more
    than the last wave unsplit (``split_reduction.last_wave_splits_to_try``); the tiles of
    two column parts only where 128 x 256 tiles make fewer than four waves (a ragged last
    wave costs little after more), and only those of the width whose waves keep the SMs
    busiest, busier than 128 x 128 and 128 x 256 tiles do (``split_columns_width``); the
    64 x 64 tiles (``SKINNY_TILES``) only where 128 x 64 tiles leave SMs idle; so that
    elsewhere the tuner times no more. Split tiles whose sums 32-bit offsets cannot address
    are not tried."""
    space = autotune_space() if space is None else space
    few_waves = triton.cdiv(M, 128) * triton.cdiv(N, 256) < 4 * sms
    few_rows = triton.cdiv(M, 128) * triton.cdiv(N, 64) < sms
    split_width = split_columns_width(M, N, sms) if few_waves else None
    kept, splits = [], {}
    for config in space:
        if config.block_m > 128 * triton.cdiv(M, 128):
            continue  # rows of a 256-row tile past M's 128-row multiple: work thrown away
        if len(column_parts(config.block_n)) > 1 and config.block_n != split_width:
            continue
        if config in SKINNY_TILES and not few_rows:
            continue
        k_steps = triton.cdiv(K, config.block_k)
        if not sums_addressable(split_k_sums(config, M, N, sms)):
            continue
        if config.split_k > 1:
            if k_steps >= SPLIT_K_MIN_STEPS * config.split_k and (
                config.block_n >= 128 or k_steps >= SPLIT_K_LONG_STEPS
            ):
                key = (config.block_m, config.block_n, "split_k")
                splits.setdefault(key, []).append((config.split_k, config))
        elif config.last_wave_split > 1:
            if k_steps >= SPLIT_K_MIN_STEPS * config.last_wave_split and (
                few_waves or config.replace(last_wave_split=1) not in MID_TILES
            ):
                key = (config.block_m, config.block_n, "last_wave")
                splits.setdefault(key, []).append((config.last_wave_split, config))
        elif few_waves or config not in MID_TILES:
            kept.append(config)
    for (block_m, block_n, schedule), candidates in splits.items():
        tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
        counts = [count for count, _ in candidates]
        if schedule == "split_k":
            tried = splits_to_try(tiles, sms, counts)
        else:
            _, ragged = last_wave.fn(tiles, min(tiles, sms))
            tried = last_wave_splits_to_try(ragged, sms, counts) if tiles >= sms else []
        kept += [config for count in tried for c, config in candidates if c == count]
    return kept


def prune_by_shape(configs, named_args, **kwargs):
    """The tuner's ``early_config_prune``: ``configs`` (``triton.Config``s) that
    ``shape_configs`` keeps for the call's shape and device."""
    M, N, K = named_args["M"], named_args["N"], named_args["K"]
    sms = sm_count(named_args["desc_a"].base.device)
    candidates = [config_of(config) for config in configs]
    kept = set(shape_configs(M, N, K, sms, candidates))
    return [
        config for config, candidate in zip(configs, candidates, strict=True) if candidate in kept
    ]


def constexprs(config):
    """The kernel's constexpr arguments for ``config``."""
    return HOST.constexprs(config)


def config_of(arguments):
    """The ``Config`` of the kernel's arguments (a ``triton.Config``, its kwargs, or the
    arguments the autotuner hands a hook)."""
    return Config.of_arguments(arguments)


@functools.cache
def autotuned_kernel(dtype):
    """The kernel under ``tlx.autotune`` for one dtype, keyed on the shape (the dtype has a
    tuner of its own)."""
    triton_dtype(dtype)
    return tlx.autotune(
        configs=autotune_configs(),
        key=["M", "N", "K"],
        prune_configs_by={"early_config_prune": prune_by_shape},
    )(gemm_kernel)


def tuner_grid(meta):
    """The grid of a launch under the tuner, of the configuration in ``meta``."""
    return _launch_grid(meta["M"], meta["N"], config_of(meta), meta["desc_a"].base.device)


# (device, stream, dtypes, shapes) -> tlx_kernels.launch.DirectLaunch, and dtype -> the
# configuration last run. A launch keeps the split-K buffers of its stream
# (split_reduction.split_buffers): split launches on two streams at once sum apart.
_launches = {}
_last_config = {}


def _direct_operand(t):
    """True when ``t`` is a CUDA matrix the TMA addresses as it is: contiguous rows of a
    multiple of 16 bytes, from a 16-byte aligned start."""
    return (
        t.is_cuda
        and t.is_contiguous()
        and (t.shape[1] * t.element_size()) % TMA_ALIGNMENT == 0
        and t.data_ptr() % TMA_ALIGNMENT == 0
    )


def tuner_arguments(a, b):
    """(c, the kernel's arguments for c = a @ b under the tuner: descriptors whose block
    shapes each configuration's pre_hook sets, M, N, K, split-K's buffers for the shape's
    configurations); the arguments are None when the product is empty, and c is then its
    zeros."""

    a, b, c, (M, N, K) = _operands(a, b)
    if c is None:
        return torch.zeros(M, N, device=a.device, dtype=a.dtype), None
    descriptors = tma_descriptors((a, b, c), block_shapes(default_config()))
    configs = shape_configs(M, N, K, sm_count(a.device))
    return c, (*descriptors, M, N, K, *split_k_buffers(a.device, configs, M, N))


def launch_arguments(config, device, M, N):
    """The arguments a ``DirectLaunch`` of ``config`` at M x N fixes after the call's M, N,
    K: split-K's buffers (the launch keeps them: a device's grow to later shapes' without
    moving these), the configuration's arguments and its compile options."""
    workspace, counters = split_k_buffers(device, [config], M, N)
    return {
        "workspace": workspace,
        "counters": counters,
        **config.kernel_arguments(),
        **config.compile_options,
    }


def _launch_key(a, b):
    return (a.device, current_stream(a.device), a.dtype, b.dtype, *a.shape, *b.shape)


def direct_launch(a, b):
    """The ``tlx_kernels.launch.DirectLaunch`` of ``a @ b``'s tuned key, when the key is tuned and
    the TMA addresses ``a`` and ``b`` as they are; else None."""
    launch = _launches.get(_launch_key(a, b))
    if launch is not None and _direct_operand(a) and _direct_operand(b):
        return launch
    return None


def compiled_launch(kernel, a, b, config):
    """The ``tlx_kernels.launch.DirectLaunch`` of ``kernel`` (``compile_for_hopper(config, ...)``'s)
    for products of ``a``'s and ``b``'s shapes and dtype, which the TMA addresses as they
    are."""

    M, K = a.shape
    N = b.shape[1]
    _check_splits(config, K)
    c = torch.empty(M, N, device=a.device, dtype=a.dtype)
    descriptors = tma_descriptors((a, b, c), block_shapes(config))
    return DirectLaunch.of_compiled(
        kernel,
        gemm_kernel,
        config,
        _launch_grid(M, N, config, a.device),
        descriptors,
        dict(M=M, N=N, K=K),
        launch_arguments(config, a.device, M, N),
    )


def autotuned_matmul(a, b):
    """``matmul`` with the configuration tlx.autotune finds fastest for the shape and dtype
    (the first call of a shape times every configuration that fits, later ones launch the
    chosen kernel directly)."""
    launch = direct_launch(a, b)
    if launch is not None:
        _last_config[a.dtype] = launch.config
        M, K = a.shape
        N = b.shape[1]
        c = a.new_empty((M, N))
        launch((a, b, c), (M, N, K))
        return c

    c, arguments = tuner_arguments(a, b)
    if arguments is None:
        return c
    desc_a, desc_b, desc_c, M, N, K, _, _ = arguments
    tuner = autotuned_kernel(triton_dtype(a.dtype))
    tuner[tuner_grid](*arguments)
    config = config_of(tuner.best_config)
    _last_config[a.dtype] = config
    key = _launch_key(a, b)
    if key not in _launches and c.is_contiguous():
        _launches[key] = DirectLaunch.compile(
            gemm_kernel,
            config,
            _launch_grid(M, N, config, a.device),
            (desc_a, desc_b, desc_c),
            dict(M=M, N=N, K=K),
            launch_arguments(config, a.device, M, N),
        )
    return c if c.is_contiguous() else c.contiguous()


def chosen_config(dtype):
    """The configuration the last ``autotuned_matmul`` of ``dtype`` ran (a ``Config``)."""
    return _last_config[dtype if isinstance(dtype, torch.dtype) else _TORCH_DTYPE[dtype]]


def placeholder_arguments(dtype="fp16", M=4096, N=4096, K=4096):
    """Arguments the plan pruner types, on the CPU (``KernelHost.placeholder_arguments``):
    split-K's buffers are CPU tensors, never read."""
    return HOST.placeholder_arguments(
        default_config(),
        dtype,
        M=M,
        N=N,
        K=K,
        workspace=torch.empty(1, dtype=torch.float32),
        counters=torch.zeros(1, dtype=torch.int32),
    )


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the space, on the CPU."""
    arguments = placeholder_arguments(dtype)
    HOST.print_plan_verdicts(autotune_configs(), arguments)
