"""The Hopper fused MLP on the host: its configurations, autotuning spaces (one per SMEM
layout), launches (``fused_mlp``, ``autotuned_fused_mlp``), the torch references and CPU
compiles (``kernel_source``, ``compile_for_hopper``, ``smem_plan``). The kernel:
tlx_kernels.hopper.fused_mlp_kernel."""

import dataclasses
import functools

import tlx
import torch
import triton
from triton.compiler.errors import CompilationError

from tlx_kernels._host import KernelConfig, KernelHost
from tlx_kernels.hopper.common import (
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    tma_descriptors,
    tma_operand,
    triton_dtype,
)
from tlx_kernels.hopper.fused_mlp_kernel import fused_mlp_kernel

ACTIVATIONS = ("gelu", "relu")
LAYOUTS = ("shared", "separate", "phases")


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and SMEM layout of one compiled kernel: a BLOCK_M x BLOCK_N tile of Y per
    CTA, hidden chunks of BLOCK_H, d_model steps of BLOCK_K; ``stages`` X/W1 stages and
    ``w2_stages`` W2 stages, one ring of ``stages`` stages when ``layout`` is "shared".
    BLOCK_M is split between the two consumer warpgroups (64 rows each)."""

    ARGUMENTS = {
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "block_h": "BLOCK_H",
        "block_k": "BLOCK_K",
        "stages": "STAGES",
        "w2_stages": "W2_STAGES",
        "layout": "LAYOUT",
    }

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
    """Block shapes of the X, W1, W2 and Y descriptors: Y is stored a consumer's half at a
    time."""
    return (
        [config.block_m, config.block_k],
        [config.block_k, config.block_h],
        [config.block_h, config.block_n],
        [config.block_m // 2, config.block_n],
    )


HOST = KernelHost(
    fused_mlp_kernel,
    Config,
    descriptors=("desc_x", "desc_w1", "desc_w2", "desc_y"),
    scalars={"tokens": "i32", "d_model": "i32", "hidden": "i32"},
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
    descriptors = tma_descriptors((x, w1, w2, y), block_shapes(config))
    grid = _grid(tokens, d_model, config.block_m, config.block_n)
    fused_mlp_kernel[grid](
        *descriptors,
        tokens,
        d_model,
        hidden,
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
    return [HOST.triton_config(config) for config in configs]


@functools.cache
def autotuned_kernel(dtype, layout):
    """The kernel under ``tlx.autotune`` for one dtype and layout, keyed on the shape and the
    activation."""
    triton_dtype(dtype)
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
    dtype = triton_dtype(x.dtype)
    # The configuration's pre_hook sets each descriptor's block shape.
    descriptors = tma_descriptors((x, w1, w2, y), block_shapes(default_config(layout)))
    tuner = autotuned_kernel(dtype, layout)
    tuner[lambda meta: _grid(tokens, d_model, meta["BLOCK_M"], meta["BLOCK_N"])](
        *descriptors, tokens, d_model, hidden, ACTIVATION=activation
    )
    _last_config[dtype, layout] = config_of(tuner.best_config)
    return y if y.is_contiguous() else y.contiguous()


def chosen_config(dtype, layout="shared"):
    """The configuration the last ``autotuned_fused_mlp`` of ``dtype`` and ``layout`` ran."""
    return _last_config[triton_dtype(dtype), layout]


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the three spaces, on the CPU."""
    arguments = HOST.placeholder_arguments(
        default_config(), dtype, tokens=4096, d_model=1024, hidden=4096, ACTIVATION="gelu"
    )
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
