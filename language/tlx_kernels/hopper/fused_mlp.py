"""The Hopper fused MLP on the host: its configurations, autotuning spaces (one per SMEM
layout; on request, with splits of the hidden dimension where the row blocks leave SMs idle),
launches (``fused_mlp``, ``autotuned_fused_mlp``), the torch references and CPU compiles
(``kernel_source``, ``compile_for_hopper``, ``smem_plan``). The kernel:
tlx_kernels.hopper.fused_mlp_kernel."""

import dataclasses
import functools

import tlx
import torch
import triton
from triton.compiler.errors import CompilationError

from tlx_kernels._host import KernelConfig, KernelHost, sm_count
from tlx_kernels.hopper.common import (
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    tma_descriptors,
    tma_operand,
    triton_dtype,
)
from tlx_kernels.hopper.fused_mlp_kernel import fused_mlp_kernel
from tlx_kernels.hopper.split_reduction import (
    current_stream,
    leaves_sms_idle,
    split_buffers,
    splits_to_try,
    sums_addressable,
    tile_sums,
)
from tlx_kernels.launch import DirectLaunch

ACTIVATIONS = ("gelu", "relu")
# BLOCK_M: 128 rows split between the consumers, or 64 whose hidden chunks they split, each
# consumer a partial of the whole tile of Y of CHUNK_SPLIT_COLUMNS columns.
BLOCK_ROWS = (128, 64)
CHUNK_SPLIT_ROWS = 64
CHUNK_SPLIT_COLUMNS = 128
LAYOUTS = ("shared", "separate", "phases")


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and SMEM layout of one compiled kernel: a BLOCK_M x BLOCK_N tile of Y per
    CTA, hidden chunks of BLOCK_H, d_model steps of BLOCK_K; ``stages`` X/W1 stages and
    ``w2_stages`` W2 stages, one ring of ``stages`` stages when ``layout`` is "shared".
    BLOCK_M = 128 is split between the two consumer warpgroups (64 rows each, a warpgroup's
    MMA rows); BLOCK_M = 64, twice the CTAs at few tokens, splits the hidden chunks instead:
    each consumer takes every other chunk for all 64 rows, H in registers, and accumulates a
    partial of the whole tile of Y (BLOCK_N = 128), the two summed through SMEM at the end
    (tlx_kernels.hopper.fused_mlp_kernel ``_consume_chunks``). ``hidden_splits``
    CTAs share each tile of Y, each the hidden chunks of its slice of the hidden dimension
    (at most one slice a chunk: the launch refuses more splits than chunks); their fp32
    partial Ys are summed by the last to arrive (tlx_kernels.hopper.split_reduction)."""

    ARGUMENTS = {
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "block_h": "BLOCK_H",
        "block_k": "BLOCK_K",
        "stages": "STAGES",
        "w2_stages": "W2_STAGES",
        "layout": "LAYOUT",
        "hidden_splits": "HIDDEN_SPLITS",
    }

    block_n: int
    block_h: int
    stages: int
    w2_stages: int
    layout: str
    block_m: int = 128
    block_k: int = 64
    hidden_splits: int = 1

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.layout == "shared" and self.w2_stages != self.stages:
            raise ValueError(
                "shared phases run one ring: w2_stages must equal stages, got "
                f"{self.w2_stages} and {self.stages}"
            )
        if self.block_m not in BLOCK_ROWS:
            raise ValueError(
                f"block_m={self.block_m}: 128 (each consumer warpgroup takes 64 rows) or 64 "
                "(the consumers take every other hidden chunk)"
            )
        if self.block_m == CHUNK_SPLIT_ROWS and self.block_n != CHUNK_SPLIT_COLUMNS:
            raise ValueError(
                f"block_m=64 takes block_n={CHUNK_SPLIT_COLUMNS}, got {self.block_n}: each "
                "consumer holds a partial of the whole 64-row tile of Y in registers beside a "
                "chunk of H, and 64 x 256 tiles (224 of a consumer's 232 registers) failed to "
                "launch on an H200"
            )
        if self.block_m == CHUNK_SPLIT_ROWS and (
            self.layout == "phases" or self.stages % 2 or self.w2_stages % 2
        ):
            raise ValueError(
                f"block_m=64 gives each consumer half of each ring's stages, read in turn: "
                f"it takes even stages and w2_stages (got {self.stages} and "
                f"{self.w2_stages}) and rings that are not drained at each change of phase "
                f'(got layout={self.layout!r}; "phases" would serialize the consumers)'
            )
        if self.stages < 2:
            raise ValueError(f"the X/W1 ring needs at least two stages, got {self.stages}")
        if not isinstance(self.hidden_splits, int) or self.hidden_splits < 1:
            raise ValueError(
                f"hidden_splits={self.hidden_splits!r}: a number of CTAs a tile of Y's hidden "
                "dimension is split among, 1 or more"
            )

    def __repr__(self):
        ring = (
            f"ring={self.stages}"
            if self.layout == "shared"
            else f"x/w1 stages={self.stages} w2 stages={self.w2_stages}"
        )
        splits = f" hidden_splits={self.hidden_splits}" if self.hidden_splits > 1 else ""
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_H={self.block_h} "
            f"BLOCK_K={self.block_k} {self.layout}: {ring}{splits}"
        )


# Triton's compile options of every configuration.
COMPILE_OPTIONS = Config.COMPILE_OPTIONS


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
    if activation is None:
        return HOST.constexprs(config)
    return HOST.constexprs(config, ACTIVATION=_check_activation(activation))


def config_of(arguments):
    """The ``Config`` of the kernel's arguments (a ``triton.Config``, its kwargs, or the
    arguments the autotuner hands a hook)."""
    return Config.of_arguments(arguments)


def _check_activation(activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    return activation


def block_shapes(config, arguments=None):
    """Block shapes of the X, W1, W2 and Y descriptors: Y is stored a consumer's half of the
    rows at a time, or with BLOCK_M = 64 whole."""
    if config.block_m == CHUNK_SPLIT_ROWS:
        y_block = [config.block_m, config.block_n]
    else:
        y_block = [config.block_m // 2, config.block_n]
    return (
        [config.block_m, config.block_k],
        [config.block_k, config.block_h],
        [config.block_h, config.block_n],
        y_block,
    )


HOST = KernelHost(
    fused_mlp_kernel,
    Config,
    descriptors=("desc_x", "desc_w1", "desc_w2", "desc_y"),
    scalars={
        "tokens": "i32",
        "d_model": "i32",
        "hidden": "i32",
        "workspace": "*fp32",
        "counters": "*i32",
    },
    block_shapes=block_shapes,
    target=SM90A,
)


def kernel_source(config, dtype="fp16", activation="gelu"):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it."""
    return HOST.kernel_source(config, dtype, ACTIVATION=_check_activation(activation))


def compile_for_hopper(config, dtype="fp16", activation="gelu"):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return HOST.compile(config, dtype, ACTIVATION=_check_activation(activation))


def smem_plan(config, dtype="fp16"):
    """The plan of the kernel's SMEM spec (``KernelHost.smem_plan``), with GELU."""
    return HOST.smem_plan(config, dtype, ACTIVATION="gelu")


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


def _grid(tokens, d_model, config):
    """Y's column tiles, its row blocks, and each tile's splits of the hidden dimension."""
    return (
        triton.cdiv(d_model, config.block_n),
        triton.cdiv(tokens, config.block_m),
        config.hidden_splits,
    )


def _tiles(tokens, d_model, config):
    """The tiles of Y of ``config``'s launch at tokens x d_model."""
    return triton.cdiv(d_model, config.block_n) * triton.cdiv(tokens, config.block_m)


def check_hidden_splits(config, hidden):
    """Refuses more splits than hidden chunks of BLOCK_H: the kernel slices the hidden
    dimension by whole chunks (balanced, so S need not divide them), and a split of none
    would only add a zero partial."""
    chunks = triton.cdiv(hidden, config.block_h)
    if config.hidden_splits > chunks:
        raise ValueError(
            f"hidden_splits={config.hidden_splits} is more than the {chunks} hidden chunks of "
            f"BLOCK_H={config.block_h} in hidden={hidden}: each split needs at least one chunk"
        )


def split_sums(device, tokens, d_model, configs):
    """(workspace, counters) for launches of ``configs`` at tokens x d_model: the
    ``split_reduction.split_buffers`` of their tiles of Y, each split ``hidden_splits`` ways
    (shared with the GEMM's)."""
    return split_buffers(
        device,
        [
            (_tiles(tokens, d_model, config), config.hidden_splits, config.block_m, config.block_n)
            for config in configs
        ],
    )


def fused_mlp(x, w1, w2, config=None, activation="gelu"):
    """act(x @ w1) @ w2 in one kernel for CUDA tensors x [tokens, d_model], w1 [d_model,
    hidden] and w2 [hidden, d_model] of one dtype (float16 or bfloat16), accumulated in
    float32, the hidden activations rounded to the inputs' dtype; the result has the inputs'
    dtype. ``config``: a ``Config`` (default: ``default_config("shared")``); one of hidden
    splits takes the buffers of tlx_kernels.hopper.split_reduction (one launch at a time a
    stream)."""
    _check_activation(activation)
    x, w1, w2, y, (tokens, d_model, hidden) = _operands(x, w1, w2)
    if y is None:
        return torch.zeros(tokens, d_model, device=x.device, dtype=x.dtype)
    config = config or default_config()
    check_hidden_splits(config, hidden)
    workspace, counters = split_sums(x.device, tokens, d_model, [config])
    descriptors = tma_descriptors((x, w1, w2, y), block_shapes(config))
    fused_mlp_kernel[_grid(tokens, d_model, config)](
        *descriptors,
        tokens,
        d_model,
        hidden,
        workspace,
        counters,
        **constexprs(config, activation),
        **config.compile_options,
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


# The 64 x 128 tiles (the consumers take every other hidden chunk) of the layouts whose rings
# are not drained, the most even stages that fit: twice the CTAs of the 128-row tiles, timed
# where those leave SMs idle (shape_configs).
CHUNK_SPLIT_CONFIGS = {
    "shared": (Config(128, 128, 6, 6, "shared", block_m=64),),
    "separate": (Config(128, 128, 6, 2, "separate", block_m=64),),
    "phases": (),
}
# The space's tiles with the most stages that fit, each layout's: the bases of its splits of
# the hidden dimension (with split_hidden=True).
SPLIT_BASES = {
    "shared": (Config(256, 64, 5, 5, "shared"), Config(128, 128, 6, 6, "shared"))
    + CHUNK_SPLIT_CONFIGS["shared"],
    "separate": (Config(256, 64, 4, 2, "separate"), Config(128, 128, 4, 2, "separate"))
    + CHUNK_SPLIT_CONFIGS["separate"],
    "phases": (Config(256, 64, 6, 3, "phases"), Config(128, 128, 6, 3, "phases"))
    + CHUNK_SPLIT_CONFIGS["phases"],
}
# The CTAs a tile's hidden dimension may be split among: 132 SMs are 33 row blocks x 4, 22 x 6,
# 11 x 12, ... (shape_configs keeps the splits that fill them).
HIDDEN_SPLIT_FACTORS = (2, 3, 4, 6, 8, 12, 16)


def autotune_space(layout="shared", split_hidden=False):
    """The ``Config``s ``autotuned_fused_mlp`` searches for ``layout`` (tlx.autotune), before
    its shape prunes them (``shape_configs``): 128 x 256 tiles of Y with hidden chunks of 64
    (a quarter of the recompute of 128-column tiles), or 128 x 128 with chunks of 128 (phase-1
    products twice as wide), each with the most stages that fit, one fewer and one more (which
    the planner drops before compiling); and 64 x 128 tiles with chunks of 128 whose consumers
    take every other hidden chunk (``CHUNK_SPLIT_CONFIGS``, the most stages that fit), which
    ``shape_configs`` keeps only where the 128-row blocks leave SMs idle. With
    ``split_hidden``, also each tile's most stages that fit (``SPLIT_BASES``) with its hidden
    dimension split among ``HIDDEN_SPLIT_FACTORS`` CTAs (``autotuned_fused_mlp``'s default;
    ``shape_configs`` keeps them only where the row blocks leave SMs idle)."""
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
    configs += CHUNK_SPLIT_CONFIGS[layout]
    if split_hidden:
        configs += [
            base.replace(hidden_splits=splits)
            for base in SPLIT_BASES[layout]
            for splits in HIDDEN_SPLIT_FACTORS
        ]
    return configs


def autotune_configs(layout="shared", split_hidden=False):
    """The space ``autotuned_fused_mlp`` searches for ``layout`` (with ``split_hidden``: and
    its splits of the hidden dimension), as ``triton.Config``s (``autotune_space``)."""
    return [HOST.triton_config(config) for config in autotune_space(layout, split_hidden)]


def shape_configs(tokens, d_model, hidden, sms, space):
    """The configurations of ``space`` the tuner times at tokens x d_model x hidden on ``sms``
    SMs: every one of one split with 128-row tiles, and with 64-row tiles where a wave of
    the 128-row tiles of their width keeps under 90% of the SMs busy
    (``split_reduction.leaves_sms_idle``); of each base's splits of the hidden dimension,
    those with at least one hidden chunk a split and sums the reduction addresses, that
    ``split_reduction.splits_to_try`` keeps for the base's tiles: none where a wave of the
    tiles alone keeps 90% of the SMs busy, else the (at most two) whose waves keep the most
    busy, at least 90%."""
    kept, splits = [], {}
    for config in space:
        if config.block_m == CHUNK_SPLIT_ROWS and not leaves_sms_idle(
            triton.cdiv(d_model, config.block_n) * triton.cdiv(tokens, BLOCK_ROWS[0]), sms
        ):
            continue
        if config.hidden_splits == 1:
            kept.append(config)
        elif config.hidden_splits <= triton.cdiv(hidden, config.block_h) and (
            sums_addressable(
                tile_sums(
                    _tiles(tokens, d_model, config),
                    config.hidden_splits,
                    config.block_m,
                    config.block_n,
                )
            )
        ):
            splits.setdefault(config.replace(hidden_splits=1), []).append(config)
    for base, candidates in splits.items():
        tiles = _tiles(tokens, d_model, base)
        tried = splits_to_try(tiles, sms, [config.hidden_splits for config in candidates])
        kept += [
            config for split in tried for config in candidates if config.hidden_splits == split
        ]
    return kept


def prune_by_shape(configs, named_args, **kwargs):
    """The tuner's ``early_config_prune``: ``configs`` (``triton.Config``s) that
    ``shape_configs`` keeps for the call's shape and device."""
    tokens, d_model, hidden = (named_args[name] for name in ("tokens", "d_model", "hidden"))
    sms = sm_count(named_args["desc_x"].base.device)
    candidates = [config_of(config) for config in configs]
    kept = set(shape_configs(tokens, d_model, hidden, sms, candidates))
    return [
        config for config, candidate in zip(configs, candidates, strict=True) if candidate in kept
    ]


@functools.cache
def autotuned_kernel(dtype, layout, split_hidden=True):
    """The kernel under ``tlx.autotune`` for one dtype and layout, with or without the splits
    of the hidden dimension (a tuner each), keyed on the shape and the activation."""
    triton_dtype(dtype)
    return tlx.autotune(
        configs=autotune_configs(layout, split_hidden),
        key=["tokens", "d_model", "hidden", "ACTIVATION"],
        prune_configs_by={"early_config_prune": prune_by_shape},
    )(fused_mlp_kernel)


# (device, stream, dtype, shape, layout, activation, split_hidden) ->
# tlx_kernels.launch.DirectLaunch, and (dtype, layout) -> the configuration last run. A launch
# keeps the split buffers of its stream (split_reduction.split_buffers).
_launches = {}
_last_config = {}


def _tune(x, w1, w2, y, shape, layout, activation, split_hidden):
    """Runs ``layout``'s tuner on the call (it writes y) and returns the ``DirectLaunch`` of the
    configuration it chose, for the later calls of the key."""
    tokens, d_model, hidden = shape
    # The configuration's pre_hook sets each descriptor's block shape.
    descriptors = tma_descriptors((x, w1, w2, y), block_shapes(default_config(layout)))
    space = autotune_space(layout, split_hidden)
    configs = shape_configs(tokens, d_model, hidden, sm_count(x.device), space)
    workspace, counters = split_sums(x.device, tokens, d_model, configs)
    tuner = autotuned_kernel(triton_dtype(x.dtype), layout, split_hidden)
    tuner[lambda meta: _grid(tokens, d_model, config_of(meta))](
        *descriptors, tokens, d_model, hidden, workspace, counters, ACTIVATION=activation
    )
    config = config_of(tuner.best_config)
    # The launch keeps the buffers of its own configuration: a device's grow to later keys'
    # without moving these.
    workspace, counters = split_sums(x.device, tokens, d_model, [config])
    return DirectLaunch.compile(
        fused_mlp_kernel,
        config,
        _grid(tokens, d_model, config),
        tma_descriptors((x, w1, w2, y), block_shapes(config)),
        dict(zip(("tokens", "d_model", "hidden"), shape, strict=True)),
        {
            "workspace": workspace,
            "counters": counters,
            **constexprs(config, activation),
            **config.compile_options,
        },
    )


def autotuned_fused_mlp(x, w1, w2, layout="shared", activation="gelu", split_hidden=True):
    """``fused_mlp`` with the configuration of ``layout``'s space that tlx.autotune finds
    fastest for the shape, dtype and activation (the first call of a shape times every
    configuration that ``shape_configs`` keeps and the planner fits; later ones launch the
    chosen kernel directly). The space holds the splits of each tile's hidden dimension among
    several CTAs (``Config.hidden_splits``), timed where the row blocks leave SMs idle (few
    tokens); ``split_hidden=False`` leaves them out."""
    _check_activation(activation)
    x, w1, w2, y, shape = _operands(x, w1, w2)
    if y is None:
        return torch.zeros(shape[:2], device=x.device, dtype=x.dtype)
    key = (x.device, current_stream(x.device), x.dtype, shape, layout, activation, split_hidden)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = _tune(x, w1, w2, y, shape, layout, activation, split_hidden)
    else:
        launch((x, w1, w2, y), shape)
    _last_config[triton_dtype(x.dtype), layout] = launch.config
    return y if y.is_contiguous() else y.contiguous()


def chosen_config(dtype, layout="shared"):
    """The configuration the last ``autotuned_fused_mlp`` of ``dtype`` and ``layout`` ran."""
    return _last_config[triton_dtype(dtype), layout]


def placeholder_arguments(dtype="fp16"):
    """Arguments the plan pruner types, on the CPU (``KernelHost.placeholder_arguments``), with
    GELU: the split partials' buffers are CPU tensors, never read."""
    return HOST.placeholder_arguments(
        default_config(),
        dtype,
        tokens=4096,
        d_model=1024,
        hidden=4096,
        workspace=torch.empty(1, dtype=torch.float32),
        counters=torch.zeros(1, dtype=torch.int32),
        ACTIVATION="gelu",
    )


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the three spaces, on the CPU."""
    arguments = placeholder_arguments(dtype)
    spaces = [config for layout in LAYOUTS for config in autotune_configs(layout)]
    HOST.print_plan_verdicts(spaces, arguments)


def planner_message(error):
    """The message of the planner's error inside the CompilationError ``error`` (Triton wraps
    an error once per function call it passes through: here ``_smem_buffers``)."""
    while error.error_message is None and isinstance(error.__cause__, CompilationError):
        error = error.__cause__
    return error.error_message


def random_inputs(tokens, d_model, hidden, dtype, device="cuda"):
    """x, w1, w2 with entries of the scale of a trained MLP's: x ~ N(0, 1), the weights
    scaled by 1 / sqrt(fan-in), so that H and Y stay near 1."""
    x = torch.randn(tokens, d_model, device=device, dtype=dtype)
    w1 = (torch.randn(d_model, hidden, device=device) / d_model**0.5).to(dtype)
    w2 = (torch.randn(hidden, d_model, device=device) / hidden**0.5).to(dtype)
    return x, w1, w2
