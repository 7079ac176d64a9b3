"""The host protocol of a kernel family, written once: what a configuration sets of its
kernel's arguments, the kernel's signature for a configuration (TMA descriptors, scalars,
constexprs), its CPU compile and tlx plan, the autotuner's ``triton.Config``s and their
pre-hook, the search for the best configuration without aliasing, and the placeholder
arguments the plan pruner types.

Each family fills it in: its ``Config`` derives from ``KernelConfig`` (``ARGUMENTS`` maps its
fields to the kernel's parameters), and its host module makes one ``KernelHost`` of its kernel,
descriptor names, scalar parameters and block shapes (tlx_kernels.hopper.gemm, .attention,
.fused_mlp)."""

import dataclasses
import functools
from collections.abc import Callable
from typing import ClassVar

import tlx
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError

from tlx_kernels.hopper.common import (
    TRITON_DTYPE_BITS,
    tile_layout,
    triton_dtype,
    unswizzled_layout,
)
from tlx_kernels.launch import DirectLaunch

# The default partition is one consumer warpgroup; the other consumers (4 warps each) and the
# loader (1 warp) are workers. Every kernel here asks for FMA contraction (the softmax's scale
# and subtract, the epilogues' scaling) rather than take Triton's default, which 3.9 warns
# is about to change and 3.10 turns off.
COMPILE_OPTIONS = {"num_warps": 4, "enable_fp_fusion": True}
# Compile options a ``triton.Config`` has no parameter for: a launch takes them by keyword
# beside the kernel's arguments, so ``KernelHost.triton_config`` puts them among its kwargs.
BACKEND_OPTIONS = ("enable_fp_fusion", "launch_pdl")


class KernelConfig:
    """Base of a family's ``Config`` (a frozen dataclass): ``ARGUMENTS`` maps each field the
    kernel takes to the name of its parameter, in the order the kernel's arguments are
    written; ``COMPILE_OPTIONS`` are Triton's compile options."""

    ARGUMENTS: ClassVar[dict[str, str]] = {}
    COMPILE_OPTIONS: ClassVar[dict] = COMPILE_OPTIONS

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    @property
    def compile_options(self):
        """Triton's compile options of the kernel of this configuration."""
        return self.COMPILE_OPTIONS

    def kernel_arguments(self):
        """{parameter: value} of every kernel argument this configuration sets (a
        ``triton.Config``'s kwargs)."""
        return {parameter: getattr(self, field) for field, parameter in self.ARGUMENTS.items()}

    @classmethod
    def of_arguments(cls, arguments):
        """The configuration of the kernel's arguments (a ``triton.Config``, its kwargs, or
        the arguments the autotuner hands a hook)."""
        arguments = getattr(arguments, "kwargs", arguments)
        return cls(**{field: arguments[parameter] for field, parameter in cls.ARGUMENTS.items()})


# The element bits of the dtypes a descriptor may have: the inputs', or an fp32 accumulator's
# (``KernelHost.descriptor_dtypes``).
DESCRIPTOR_DTYPE_BITS = {**TRITON_DTYPE_BITS, "fp32": 32}


def descriptor_type(dtype, block_shape, layout):
    """The signature entry of a TMA descriptor of ``dtype`` ("fp16", "bf16" or "fp32") whose
    block is ``block_shape``, in the shared ``layout``."""
    return f"tensordesc<{dtype}[{','.join(str(size) for size in block_shape)}],{layout!r}>"


@functools.cache
def sm_count(device):
    """The streaming multiprocessors of a CUDA device."""
    return torch.cuda.get_device_properties(device).multi_processor_count


@dataclasses.dataclass(frozen=True)
class KernelHost:
    """A kernel and what its host code needs to know of it: ``descriptors``, the names of its
    TMA descriptor parameters (its first); ``scalars``, {name: signature type} of the
    parameters after them that are no constexprs (``"*{dtype}"``: a pointer to the inputs'
    dtype); ``block_shapes(config, arguments)``, the descriptors' block shapes
    (``arguments``: the call's constexprs, or every argument of a launch); ``target``, what
    it compiles for on the CPU; ``descriptor_dtypes``, {name: dtype} of the descriptors whose
    dtype is their own (an fp32 accumulator's), not the inputs'; ``unswizzled``, the names of
    the descriptors whose tiles the kernel reads element by element (``unswizzled_layout``),
    where the others' are the tensor cores' (``common.tile_layout``)."""

    kernel: object
    config_type: type
    descriptors: tuple
    scalars: dict
    block_shapes: Callable
    target: GPUTarget
    descriptor_dtypes: dict = dataclasses.field(default_factory=dict)
    unswizzled: tuple = ()
    # (device, configuration, grid, the call's constexprs, the tensors' dtypes and shapes) ->
    # the DirectLaunch that ``launch`` made for them
    launches: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def layout(self, name, bits, block_shape):
        """The shared layout of descriptor ``name``'s tiles of ``bits``-bit elements."""
        if name in self.unswizzled:
            return unswizzled_layout(bits, len(block_shape))
        return tile_layout(bits, tuple(block_shape))

    def descriptor_bits(self, name, dtype):
        """The element bits of descriptor ``name`` for inputs of ``dtype``."""
        return DESCRIPTOR_DTYPE_BITS[self.descriptor_dtypes.get(name, dtype)]

    def constexprs(self, config, **call_constexprs):
        """The kernel's constexpr arguments: ``config``'s, then the call's, then the default
        of each parameter with one that neither gives and that is no scalar (as a launch
        leaves it: Triton makes a None argument a constexpr)."""
        arguments = config.kernel_arguments()
        configured = {name: value for name, value in arguments.items() if name not in self.scalars}
        given = {**configured, **call_constexprs}
        defaults = {
            param.name: param.default
            for param in self.kernel.params
            if param.has_default and param.name not in given and param.name not in self.scalars
        }
        return {**given, **defaults}

    def kernel_source(self, config, dtype="fp16", **call_constexprs):
        """The kernel with ``config``'s tiles for inputs of ``dtype``, as ``triton.compile``
        and ``tlx.kernel_plans`` take it."""
        dtype = triton_dtype(dtype)
        constexprs = self.constexprs(config, **call_constexprs)
        shapes = self.block_shapes(config, constexprs)
        signature = {
            **{
                name: descriptor_type(
                    self.descriptor_dtypes.get(name, dtype),
                    shape,
                    self.layout(name, self.descriptor_bits(name, dtype), shape),
                )
                for name, shape in zip(self.descriptors, shapes, strict=True)
            },
            **{name: kind.format(dtype=dtype) for name, kind in self.scalars.items()},
            **dict.fromkeys(constexprs, "constexpr"),
        }
        return tlx.ASTSource(fn=self.kernel, signature=signature, constexprs=constexprs)

    def compile(self, config, dtype="fp16", **call_constexprs):
        """Compiles the kernel for the target without a GPU; returns Triton's compiled
        kernel."""
        source = self.kernel_source(config, dtype, **call_constexprs)
        return triton.compile(source, target=self.target, options=config.compile_options)

    def smem_plan(self, config, dtype="fp16", **call_constexprs):
        """The plan of the kernel's SMEM spec (a ``tlx.SpecPlan``) as tlx makes it when the
        kernel is compiled with ``config``: ``tlx.kernel_plans`` traces the kernel (no GPU, no
        PTX). A configuration that does not fit raises the CompilationError compiling it
        raises."""
        source = self.kernel_source(config, dtype, **call_constexprs)
        (smem,) = tlx.kernel_plans(source, target=self.target, options=config.compile_options)
        return smem

    def make_descriptors(self, config, tensors, **call_constexprs):
        """A TMA descriptor of each of ``tensors`` (one a descriptor parameter) in its block
        shape with ``config`` and the call's constexprs, in the tiles' shared layout."""
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

        shapes = self.block_shapes(config, call_constexprs)
        return [
            TensorDescriptor.from_tensor(
                tensor, list(shape), self.layout(name, tensor.element_size() * 8, shape)
            )
            for name, tensor, shape in zip(self.descriptors, tensors, shapes, strict=True)
        ]

    def direct_launch(self, config, grid, tensors, call_arguments, **call_constexprs):
        """The ``DirectLaunch`` of the kernel with ``config`` and the call's constexprs on
        ``grid`` (compiled now, or found in Triton's cache), for calls of ``tensors``' dtypes
        and shapes (``make_descriptors``') and of ``call_arguments``' types (the ``scalars``, in
        their order)."""
        return DirectLaunch.compile(
            self.kernel,
            config,
            grid,
            self.make_descriptors(config, tensors, **call_constexprs),
            dict(zip(self.scalars, call_arguments, strict=True)),
            {**self.constexprs(config, **call_constexprs), **config.compile_options},
        )

    def launch(self, config, grid, tensors, call_arguments, **call_constexprs):
        """Launches the kernel with ``config`` and the call's constexprs on ``grid``: one
        ``tensors`` a descriptor, ``call_arguments`` the ``scalars`` (tensors for pointers),
        through the ``direct_launch`` made at the first call of the configuration, grid,
        constexprs and tensors' dtypes and shapes."""
        key = (
            tensors[0].device,
            config,
            grid,
            *call_constexprs.items(),
            *[(tensor.dtype, tensor.shape) for tensor in tensors],
        )
        launch = self.launches.get(key)
        if launch is None:
            launch = self.launches[key] = self.direct_launch(
                config, grid, tensors, call_arguments, **call_constexprs
            )
        launch(tensors, call_arguments)

    def set_block_shapes(self, arguments):
        """The configuration's tiles, and their layouts, on the descriptors: the autotuner runs
        this before each launch, and the plan pruner before it types the arguments."""
        shapes = self.block_shapes(self.config_type.of_arguments(arguments), arguments)
        for name, shape in zip(self.descriptors, shapes, strict=True):
            descriptor = arguments[name]
            descriptor.block_shape = list(shape)
            descriptor.layout = self.layout(name, descriptor.layout.element_bitwidth, shape)

    def triton_config(self, config):
        """``config`` as the autotuner takes it (``BACKEND_OPTIONS`` among its kwargs)."""
        options = dict(config.compile_options)
        backend = {name: options.pop(name) for name in BACKEND_OPTIONS if name in options}
        return triton.Config(
            {**config.kernel_arguments(), **backend}, pre_hook=self.set_block_shapes, **options
        )

    def unaliased_search(self, base, unaliased, *plan_arguments, **plan_constexprs):
        """``base`` without aliasing (``unaliased(base, stages)``), tried with fewer and fewer
        stages. Returns (the first whose kernel compiles, ((configuration, error message), ...)
        for those that do not: their region does not fit, and the planner's message states
        the bytes it needs)."""
        rejected = []
        for num_stages in range(base.num_stages, 0, -1):
            config = unaliased(base, num_stages)
            try:
                self.smem_plan(config, *plan_arguments, **plan_constexprs)
            except CompilationError as error:
                if num_stages == 1:
                    raise
                rejected.append((config, error.error_message))
            else:
                return config, tuple(rejected)

    def placeholder_arguments(self, config, dtype, **scalars):
        """Arguments the plan pruner types, on the CPU: descriptors of ``config``'s blocks over
        a 4096 x 4096 matrix of ``dtype`` (their tensor never read), then ``scalars``."""
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

        dtype = triton_dtype(dtype)
        tensor = torch.empty(16, 16, dtype=torch.float16 if dtype == "fp16" else torch.bfloat16)
        arguments = {}
        for name, shape in zip(self.descriptors, self.block_shapes(config, {}), strict=True):
            layout = self.layout(name, TRITON_DTYPE_BITS[dtype], shape)
            arguments[name] = TensorDescriptor(tensor, [4096, 4096], [4096, 1], list(shape), layout)
        return {**arguments, **scalars}

    def print_plan_verdicts(self, triton_configs, arguments):
        """What the plan pruner says of each configuration for ``arguments``, one line each:
        the SMEM it plans, or the planner's reasons for dropping it."""
        pruner = tlx.PlanPruner(self.kernel, target=self.target)
        for triton_config in triton_configs:
            verdict = pruner.verdict(triton_config, arguments)
            config = self.config_type.of_arguments(triton_config)
            if verdict.fits:
                smem = verdict.budget.storage(tlx.storage_kind.smem).used_units
                print(f"    {config}: fits, {smem} bytes of SMEM region ({verdict.seconds:.2f} s)")
            else:
                print(f"    {config}: pruned: {'; '.join(verdict.reasons)}")
