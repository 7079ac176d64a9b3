"""The direct launch of a tuned kernel (``DirectLaunch``): the compiled kernel of a tuned key,
launched without the autotuner's and the JIT's argument handling (the Hopper attention and
GEMM's ``autotuned_*`` entry points)."""

import dataclasses
import functools

import torch
from tlx import cuda_context
from tlx.compat import ExpandedLaunch
from triton import knobs
from triton.runtime.driver import driver


def _descriptor_template(descriptor):
    """A copy of ``descriptor`` without its tensor (a launch must not keep one alive)."""
    template = object.__new__(type(descriptor))
    template.__dict__.update(descriptor.__dict__)
    template.base = None
    return template


def _copy_descriptor(template, tensor):
    """``template`` (a validated descriptor of the same dtype, block and layout) for
    ``tensor``, which the caller checked as the TMA needs it, without validating again: a
    copy of its fields, with the tensor's own."""
    descriptor = object.__new__(type(template))
    descriptor.__dict__.update(template.__dict__)
    descriptor.base = tensor
    descriptor.shape = list(tensor.shape)
    descriptor.strides = list(tensor.stride())
    return descriptor


# Expanded arguments a DirectLaunch keeps (a few tensors' worth each; cleared when full).
EXPANDED_ARGUMENTS_KEPT = 64
# The alignment, in bytes, Triton's JIT specializes a pointer argument on (its ``D``
# specialization); the launches are compiled from aligned tensors.
POINTER_ALIGNMENT = 16


@dataclasses.dataclass(frozen=True)
class DirectLaunch:
    """The compiled kernel of a tuned key, launched without the autotuner's and the JIT's
    argument handling (binding, specializing, looking up), which cost the host some 50 us a
    call (100 us for a kernel of many constexprs, such as the attention forward's): more than
    the GPU's work of a small problem. The kernels do not specialize on their shape
    arguments, and a descriptor's type is fixed by its dtype, block and layout, so one
    compiled kernel serves every call of the key. A call gives a tensor for each of the
    kernel's descriptors (its first parameters) and the values of the parameters the launch
    was compiled to take from each call (``call_names``: scalars, and tensors for pointers,
    which must be 16-byte aligned as the compiled kernel assumes); the configuration fixes
    the rest.

    The arguments of a call, its TMA descriptors encoded, are kept for the next call of the
    same tensors' addresses, shapes and strides and the same scalars
    (``tlx.compat.ExpandedLaunch``): a call again on the same operands, or on new ones that
    PyTorch's allocator placed where the last ones were, skips building and encoding them
    and Triton's Python launch path: a tuned 1024-cubed GEMM call took 15.3 us of the host
    where it took 22 (cuBLAS 13.1; H200 host, ``bench/gemm.py --launch``). At most
    ``EXPANDED_ARGUMENTS_KEPT`` are kept."""

    config: object
    kernel: object
    # (x, y, z) CTAs
    grid: tuple
    templates: tuple
    # The parameters each call sets, in the order a call gives their values.
    call_names: tuple
    # The values the configuration fixes, in the kernel's order.
    config_arguments: tuple
    # For each parameter after the descriptors, in the kernel's order: its value's index in
    # (*the call's values, *config_arguments).
    order: tuple
    # (the call's scalars and pointers, then each tensor's (address, shape, strides)) ->
    # expanded arguments
    expanded: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def compile(cls, jit_kernel, config, grid, descriptors, call_arguments, config_arguments):
        """The launch of ``jit_kernel`` with ``config_arguments`` (a dict: its constexprs and
        compile options, and the values of the other parameters that every call shares),
        compiled for (or found in the cache as) the types of ``descriptors`` and
        ``call_arguments`` (a dict: the parameters each call sets, in the order its calls
        give them, with values of their types)."""
        kernel = jit_kernel.warmup(*descriptors, **call_arguments, **config_arguments, grid=grid)
        return cls.of_compiled(
            kernel, jit_kernel, config, grid, descriptors, call_arguments, config_arguments
        )

    @classmethod
    def of_compiled(
        cls, kernel, jit_kernel, config, grid, descriptors, call_arguments, config_arguments
    ):
        """The launch of ``kernel``, ``jit_kernel`` compiled (by ``triton.compile`` or its
        ``warmup``) with ``config_arguments``, taking arguments of the types of
        ``descriptors`` and ``call_arguments`` (``compile``'s)."""
        call_names = tuple(call_arguments)
        names = [param.name for param in jit_kernel.params][len(descriptors) :]
        unknown = [name for name in call_names if name not in names]
        if unknown:
            raise ValueError(
                f"a call of {jit_kernel.__name__} cannot set {unknown}: its parameters after "
                f"the {len(descriptors)} descriptors are {names}"
            )
        fixed = [name for name in names if name not in call_names]
        order = tuple(
            call_names.index(name) if name in call_names else len(call_names) + fixed.index(name)
            for name in names
        )
        return cls(
            config,
            kernel,
            (*grid, *(1,) * (3 - len(grid))),
            tuple(_descriptor_template(descriptor) for descriptor in descriptors),
            call_names,
            tuple(config_arguments[name] for name in fixed),
            order,
        )

    @functools.cached_property
    def expanded_launch(self):
        """The kernel's ``tlx.compat.ExpandedLaunch`` (made at the first call: it loads the
        kernel onto the GPU)."""
        return ExpandedLaunch(self.kernel)

    def __call__(self, tensors, call_arguments):
        """Launches the kernel on ``tensors`` (one per descriptor, each as the TMA addresses
        it) and ``call_arguments`` (the values of ``call_names``) on the current stream."""
        values = tuple(
            self._address(index, value) if isinstance(value, torch.Tensor) else value
            for index, value in enumerate(call_arguments)
        )
        # A kernel without descriptors runs on its pointers' device.
        tensors_given = tensors or [v for v in call_arguments if isinstance(v, torch.Tensor)]
        device_index = tensors_given[0].get_device()
        if device_index >= 0:  # (the CPU tests' recording driver takes CPU tensors)
            cuda_context.make_current(device_index)
        launch = self.expanded_launch
        if launch.usable:
            key = (values, *[(t.data_ptr(), t.shape, t.stride()) for t in tensors])
            expanded = self.expanded.get(key)
            if expanded is None:
                if len(self.expanded) >= EXPANDED_ARGUMENTS_KEPT:
                    self.expanded.clear()
                expanded = launch.expand(self.arguments(tensors, values))
                self.expanded[key] = expanded
            stream = driver.active.get_current_stream(device_index)
            if launch.launch(self.grid, stream, expanded):
                return
        self.run(device_index, self.arguments(tensors, call_arguments))

    def _address(self, index, tensor):
        """The address of the call's tensor for parameter ``call_names[index]``, which the
        compiled kernel assumes 16-byte aligned."""
        address = tensor.data_ptr()
        if address % POINTER_ALIGNMENT:
            raise ValueError(
                f"{self.call_names[index]} (a tensor of shape {tuple(tensor.shape)}) is at "
                f"address {address:#x}, not a multiple of {POINTER_ALIGNMENT}: the kernel was "
                f"compiled for aligned pointers"
            )
        return address

    def arguments(self, tensors, call_arguments):
        """The kernel's arguments for ``tensors`` and ``call_arguments``: the descriptors,
        then the other parameters, the call's values and the configuration's in the kernel's
        order."""
        descriptors = [
            _copy_descriptor(template, tensor)
            for template, tensor in zip(self.templates, tensors, strict=True)
        ]
        values = (*call_arguments, *self.config_arguments)
        return (*descriptors, *[values[i] for i in self.order])

    def run(self, device_index, arguments):
        """Launches the kernel with ``arguments`` (``self.arguments``) on the current stream
        of the device, as Triton's JIT launches a compiled kernel, with its launch hooks
        (profilers): each descriptor encoded again."""
        kernel = self.kernel
        stream = driver.active.get_current_stream(device_index)
        kernel.run(
            *self.grid, stream, kernel.function, kernel.packed_metadata,
            kernel.launch_metadata(self.grid, stream, *arguments),
            knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *arguments,
        )  # fmt: skip
