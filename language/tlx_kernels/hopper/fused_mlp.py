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

from tlx_kernels.hopper.common import (
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    TRITON_DTYPE_BITS,
    print_plan_verdicts,
    tile_layout,
    tma_operand,
)
from tlx_kernels.hopper.common import triton_dtype as _triton_dtype
from tlx_kernels.hopper.fused_mlp_kernel import fused_mlp_kernel

ACTIVATIONS = ("gelu", "relu")
LAYOUTS = ("shared", "separate", "phases")
# The default partition is one consumer warpgroup; the other consumer (4 warps) and the loader
# (1 warp) are workers.
COMPILE_OPTIONS = {"num_warps": 4}


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
