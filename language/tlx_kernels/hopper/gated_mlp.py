"""The Hopper gated (SwiGLU) MLP on the host: Y = (silu(X W_gate) * (X W_up)) W_down, its
first half H = silu(X W_gate) * (X W_up) one kernel whose gate and up products share X's
loads (tlx_kernels.hopper.gated_mlp_kernel), the down projection the tuned GEMM
(tlx_kernels.hopper.gemm). Its configurations, autotuning space, launches (``gated_up``,
``gated_mlp``, ``autotuned_gated_up``, ``autotuned_gated_mlp``), the torch contenders and
reference, and CPU compiles (``kernel_source``, ``compile_for_hopper``, ``smem_plan``)."""

import dataclasses
import functools

import tlx
import torch
import triton

from tlx_kernels._host import KernelConfig, KernelHost, sm_count
from tlx_kernels.hopper import gemm
from tlx_kernels.hopper.common import (
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    tma_descriptors,
    tma_operand,
    triton_dtype,
)
from tlx_kernels.hopper.gated_mlp_kernel import gated_mlp_kernel
from tlx_kernels.launch import DirectLaunch

_TORCH_DTYPE = {name: dtype for dtype, name in TORCH_TO_TRITON_DTYPE.items()}


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and schedule of one compiled kernel: a BLOCK_M x BLOCK_N tile of H per CTA
    (BLOCK_N columns of the gate and as many of the up projection: two accumulators), d_model
    steps of BLOCK_K, a ring of ``num_stages`` stages (an X tile, a W_gate and a W_up tile
    each). BLOCK_M is split between the two consumer warpgroups (64 rows each). One tile a
    CTA, H's staging tile over the dead ring; or ``persistent``, one CTA an SM walking the
    tiles, the staging tile beside the ring (the next tile's loads fill the ring while this
    one's H is stored)."""

    # GROUP_M, then the constexprs, in the kernel's order.
    ARGUMENTS = {
        "group_m": "GROUP_M",
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "block_k": "BLOCK_K",
        "num_stages": "NUM_STAGES",
        "persistent": "PERSISTENT",
    }

    block_n: int
    num_stages: int
    persistent: bool = False
    block_m: int = 128
    block_k: int = 64
    group_m: int = 8

    def __post_init__(self):
        if self.block_m != 128:
            raise ValueError(f"block_m={self.block_m}: each consumer warpgroup takes 64 rows")
        if self.num_stages < 2:
            raise ValueError(f"the ring needs at least two stages, got {self.num_stages}")

    def __repr__(self):
        schedule = "persistent, H beside the ring" if self.persistent else "H over the ring"
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} BLOCK_K={self.block_k} "
            f"stages={self.num_stages} GROUP_M={self.group_m} {schedule}"
        )


# Triton's compile options of every configuration.
COMPILE_OPTIONS = Config.COMPILE_OPTIONS


def default_config():
    """128 x 128 tiles of H (gate and up: the tensor-core work and SMEM bytes of a step of
    the GEMM's 128 x 256 tile, which is level with cuBLAS), four stages of 48 KiB, H over
    the ring."""
    return Config(128, 4)


def block_shapes(config, arguments=None):
    """Block shapes of the X, W_gate, W_up and H descriptors: H is stored a consumer's half
    at a time."""
    return (
        [config.block_m, config.block_k],
        [config.block_k, config.block_n],
        [config.block_k, config.block_n],
        [config.block_m // 2, config.block_n],
    )


HOST = KernelHost(
    gated_mlp_kernel,
    Config,
    descriptors=("desc_x", "desc_wg", "desc_wu", "desc_h"),
    scalars={"tokens": "i32", "d_model": "i32", "hidden": "i32", "GROUP_M": "i32"},
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


def constexprs(config):
    """The kernel's constexpr arguments for ``config``."""
    return HOST.constexprs(config)


def config_of(arguments):
    """The ``Config`` of the kernel's arguments (a ``triton.Config``, its kwargs, or the
    arguments the autotuner hands a hook)."""
    return Config.of_arguments(arguments)


# Inputs -------------------------------------------------------------------------------------


def _check_inputs(x, w_gate, w_up, w_down=None):
    """Refuses, naming the tensor and its shape, inputs of other shapes than x [tokens,
    d_model], w_gate and w_up [d_model, hidden], w_down [hidden, d_model], of another dtype
    than x's or than float16 and bfloat16, or not on a CUDA device."""
    named = {"x": x, "w_gate": w_gate, "w_up": w_up}
    if w_down is not None:
        named["w_down"] = w_down
    for name, t in named.items():
        if t.dim() != 2:
            raise ValueError(f"{name} must be a matrix, got shape {tuple(t.shape)}")
    d_model = x.shape[1]
    if w_gate.shape[0] != d_model:
        raise ValueError(
            f"w_gate must be [d_model, hidden] with d_model = {d_model} (x's columns; x is "
            f"{tuple(x.shape)}), got shape {tuple(w_gate.shape)}"
        )
    if w_up.shape != w_gate.shape:
        raise ValueError(
            f"w_up must be [d_model, hidden] as w_gate is, {tuple(w_gate.shape)}, got shape "
            f"{tuple(w_up.shape)}"
        )
    if w_down is not None and w_down.shape != (w_gate.shape[1], d_model):
        raise ValueError(
            f"w_down must be [hidden, d_model] = {(w_gate.shape[1], d_model)}, got shape "
            f"{tuple(w_down.shape)}"
        )
    if x.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(f"x must be float16 or bfloat16, got {x.dtype}")
    for name, t in named.items():
        if t.dtype != x.dtype:
            raise ValueError(f"{name} must have x's dtype, {x.dtype}, got {t.dtype}")
    for name, t in named.items():
        if not t.is_cuda:
            raise ValueError(f"{name} must be a CUDA tensor, got one on {t.device}")


def _operands(x, w_gate, w_up):
    """(x, w_gate, w_up, h, (tokens, d_model, hidden)): the operands as the TMA can address
    them and the output H, or h None when H is empty or zero (d_model 0: silu(0) * 0)."""
    _check_inputs(x, w_gate, w_up)
    (tokens, d_model), hidden = x.shape, w_gate.shape[1]
    shape = (tokens, d_model, hidden)
    if tokens == 0 or d_model == 0 or hidden == 0:
        return x, w_gate, w_up, None, shape
    h = tma_operand(x.new_empty(tokens, hidden))
    return tma_operand(x), tma_operand(w_gate), tma_operand(w_up), h, shape


def _grid(tokens, hidden, config, device):
    """One CTA per tile of H, or (persistent) one per SM while there are more tiles."""
    tiles = triton.cdiv(tokens, config.block_m) * triton.cdiv(hidden, config.block_n)
    return (min(tiles, sm_count(device)) if config.persistent else tiles,)


def _result(h):
    """H as the caller gets it: contiguous (a padded output is copied out of its rows)."""
    return h if h.is_contiguous() else h.contiguous()


# Launches -----------------------------------------------------------------------------------


def gated_up(x, w_gate, w_up, config=None):
    """silu(x @ w_gate) * (x @ w_up) in one kernel for CUDA tensors x [tokens, d_model],
    w_gate and w_up [d_model, hidden] of one dtype (float16 or bfloat16): both products
    accumulated in float32 from one load of each X tile, the activation and the product in
    float32, the result rounded once to the inputs' dtype. ``config``: a ``Config``
    (default: ``default_config()``)."""
    x, w_gate, w_up, h, (tokens, d_model, hidden) = _operands(x, w_gate, w_up)
    if h is None:
        return torch.zeros(tokens, hidden, device=x.device, dtype=x.dtype)
    config = config or default_config()
    descriptors = tma_descriptors((x, w_gate, w_up, h), block_shapes(config))
    gated_mlp_kernel[_grid(tokens, hidden, config, x.device)](
        *descriptors,
        tokens,
        d_model,
        hidden,
        **config.kernel_arguments(),
        **config.compile_options,
    )
    return _result(h)


def gated_mlp(x, w_gate, w_up, w_down, config=None, down_config=None):
    """(silu(x @ w_gate) * (x @ w_up)) @ w_down for CUDA tensors x [tokens, d_model], w_gate
    and w_up [d_model, hidden], w_down [hidden, d_model] of one dtype (float16 or bfloat16):
    ``gated_up`` with ``config``, then ``tlx_kernels.hopper.gemm.matmul`` with
    ``down_config``; the hidden activations are rounded to the inputs' dtype."""
    _check_inputs(x, w_gate, w_up, w_down)
    return gemm.matmul(gated_up(x, w_gate, w_up, config), w_down, down_config)


def torch_gated_mlp(x, w_gate, w_up, w_down):
    """The unfused gated MLP in torch: two cuBLAS matmuls (gate, up), silu, the product, the
    down matmul."""
    return (torch.nn.functional.silu(x @ w_gate) * (x @ w_up)) @ w_down


def concatenated_weights(w_gate, w_up):
    """[w_gate | w_up], [d_model, 2 x hidden]: one matmul computes both projections."""
    return torch.cat((w_gate, w_up), dim=1)


def torch_concatenated_gated_mlp(x, w_gate_up, w_down):
    """The unfused gated MLP in torch with one matmul on the concatenated weights
    (``concatenated_weights``), then silu of its first half times its second, the down
    matmul."""
    gate, up = (x @ w_gate_up).chunk(2, dim=1)
    return (torch.nn.functional.silu(gate) * up) @ w_down


def reference_gated_up(x, w_gate, w_up):
    """silu(x @ w_gate) * (x @ w_up) in float32."""
    x = x.float()
    return torch.nn.functional.silu(x @ w_gate.float()) * (x @ w_up.float())


def reference_gated_mlp(x, w_gate, w_up, w_down):
    """The gated MLP in float32, the hidden activations rounded to the inputs' dtype as the
    kernel rounds them."""
    return reference_gated_up(x, w_gate, w_up).to(x.dtype).float() @ w_down.float()


def random_inputs(tokens, d_model, hidden, dtype, device="cuda"):
    """x, w_gate, w_up, w_down with entries of the scale of a trained MLP's: x ~ N(0, 1), the
    weights scaled by 1 / sqrt(fan-in), so that the products and Y stay near 1."""
    x = torch.randn(tokens, d_model, device=device, dtype=dtype)
    w_gate = (torch.randn(d_model, hidden, device=device) / d_model**0.5).to(dtype)
    w_up = (torch.randn(d_model, hidden, device=device) / d_model**0.5).to(dtype)
    w_down = (torch.randn(hidden, d_model, device=device) / hidden**0.5).to(dtype)
    return x, w_gate, w_up, w_down


# Autotuning ---------------------------------------------------------------------------------


def autotune_space():
    """The ``Config``s ``autotuned_gated_up`` searches (tlx.autotune): tiles of 128 x 128
    (two 64 x 128 accumulators a consumer: 128 registers a thread, as the GEMM's 64 x 256)
    with 3 or 4 stages of 48 KiB, or of 128 x 64 (a small product's tiles spread over more
    SMs) with 4 or 6 stages of 32 KiB (each step half the work: twice the stages hold the
    same time in flight); each with one tile a CTA and H over the ring, or persistent with H
    beside it. All fit: 4 stages of 48 KiB with H's 32 KiB beside them are 224 KiB, and a
    fifth stage fits neither way (240 KiB of ring alone)."""
    return [
        Config(block_n, stages, persistent)
        for block_n, depths in ((128, (3, 4)), (64, (4, 7)))
        for stages in depths
        for persistent in (False, True)
    ]


def autotune_configs():
    """The space ``autotuned_gated_up`` searches, as ``triton.Config``s."""
    return [HOST.triton_config(config) for config in autotune_space()]


@functools.cache
def autotuned_kernel(dtype):
    """The kernel under ``tlx.autotune`` for one dtype, keyed on the shape."""
    triton_dtype(dtype)
    return tlx.autotune(configs=autotune_configs(), key=["tokens", "d_model", "hidden"])(
        gated_mlp_kernel
    )


# (device, dtype, (tokens, d_model, hidden)) -> tlx_kernels.launch.DirectLaunch, and dtype ->
# the configuration last run.
_launches = {}
_last_config = {}


def _tune(x, w_gate, w_up, h, shape):
    """Runs the tuner on the call (it writes h) and returns the ``DirectLaunch`` of the
    configuration it chose, for the later calls of the shape."""
    tokens, d_model, hidden = shape
    # The configuration's pre_hook sets each descriptor's block shape.
    descriptors = tma_descriptors((x, w_gate, w_up, h), block_shapes(default_config()))
    tuner = autotuned_kernel(triton_dtype(x.dtype))
    tuner[lambda meta: _grid(tokens, hidden, config_of(meta), x.device)](
        *descriptors, tokens, d_model, hidden
    )
    config = config_of(tuner.best_config)
    return DirectLaunch.compile(
        gated_mlp_kernel,
        config,
        _grid(tokens, hidden, config, x.device),
        tma_descriptors((x, w_gate, w_up, h), block_shapes(config)),
        dict(zip(("tokens", "d_model", "hidden"), shape, strict=True)),
        {**config.kernel_arguments(), **config.compile_options},
    )


def autotuned_gated_up(x, w_gate, w_up):
    """``gated_up`` with the configuration tlx.autotune finds fastest for the shape and dtype
    (the first call of a shape times every configuration, later ones launch the chosen
    kernel directly)."""
    x, w_gate, w_up, h, shape = _operands(x, w_gate, w_up)
    tokens, _, hidden = shape
    if h is None:
        return torch.zeros(tokens, hidden, device=x.device, dtype=x.dtype)
    key = (x.device, x.dtype, shape)
    launch = _launches.get(key)
    if launch is None:
        launch = _launches[key] = _tune(x, w_gate, w_up, h, shape)
    else:
        launch((x, w_gate, w_up, h), shape)
    _last_config[x.dtype] = launch.config
    return _result(h)


def autotuned_gated_mlp(x, w_gate, w_up, w_down):
    """(silu(x @ w_gate) * (x @ w_up)) @ w_down: ``autotuned_gated_up``, then the tuned GEMM
    (``tlx_kernels.hopper.gemm.autotuned_matmul``) for the down projection."""
    _check_inputs(x, w_gate, w_up, w_down)
    return gemm.autotuned_matmul(autotuned_gated_up(x, w_gate, w_up), w_down)


def chosen_config(dtype):
    """The configuration the last ``autotuned_gated_up`` of ``dtype`` ran (a ``Config``)."""
    return _last_config[dtype if isinstance(dtype, torch.dtype) else _TORCH_DTYPE[dtype]]


def placeholder_arguments(dtype="fp16", tokens=4096, d_model=4096, hidden=14336):
    """Arguments the plan pruner types, on the CPU (``KernelHost.placeholder_arguments``)."""
    return HOST.placeholder_arguments(
        default_config(), dtype, tokens=tokens, d_model=d_model, hidden=hidden, GROUP_M=8
    )


def print_autotune_plans(dtype="fp16"):
    """What the plan pruner says of every configuration of the space, on the CPU."""
    HOST.print_plan_verdicts(autotune_configs(), placeholder_arguments(dtype))
