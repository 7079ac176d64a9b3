"""The direct launch of a tuned kernel (``DirectLaunch``): the compiled kernel of a tuned key,
launched without the autotuner's and the JIT's argument handling (the Hopper attention and
GEMM's ``autotuned_*`` entry points)."""

import dataclasses
import functools

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


@dataclasses.dataclass(frozen=True)
class DirectLaunch:
    """The compiled kernel of a tuned key, launched without the autotuner's and the JIT's
    argument handling (binding, specializing, looking up), which cost the host some 50 us a
    call: more than the GPU's work of a small problem. The kernels do not
    specialize on their shape arguments, and a descriptor's type is fixed by its dtype, block
    and layout, so one compiled kernel serves every call of the key. A kernel's arguments are
    its descriptors, then the arguments of each call (scalars), then its configuration's.

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
    config_arguments: tuple
    # (the call's scalars, then each tensor's (address, shape, strides)) -> expanded arguments
    expanded: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def compile(cls, jit_kernel, config, grid, descriptors, call_arguments, config_arguments):
        """The launch of ``jit_kernel`` with ``config_arguments`` (a dict: its constexprs and
        compile options), compiled for (or found in the cache as) the types of
        ``descriptors`` and ``call_arguments``."""
        kernel = jit_kernel.warmup(*descriptors, *call_arguments, **config_arguments, grid=grid)
        return cls.of_compiled(
            kernel, jit_kernel, config, grid, descriptors, call_arguments, config_arguments
        )

    @classmethod
    def of_compiled(
        cls, kernel, jit_kernel, config, grid, descriptors, call_arguments, config_arguments
    ):
        """The launch of ``kernel``, ``jit_kernel`` compiled (by ``triton.compile`` or its
        ``warmup``) with ``config_arguments``, taking arguments of the types of
        ``descriptors`` and ``call_arguments``."""
        # The kernel's parameters after the descriptors and the call's arguments, in order.
        names = [param.name for param in jit_kernel.params][
            len(descriptors) + len(call_arguments) :
        ]
        return cls(
            config,
            kernel,
            (*grid, *(1,) * (3 - len(grid))),
            tuple(_descriptor_template(descriptor) for descriptor in descriptors),
            tuple(config_arguments[name] for name in names),
        )

    @functools.cached_property
    def expanded_launch(self):
        """The kernel's ``tlx.compat.ExpandedLaunch`` (made at the first call: it loads the
        kernel onto the GPU)."""
        return ExpandedLaunch(self.kernel)

    def __call__(self, tensors, call_arguments):
        """Launches the kernel on ``tensors`` (one per descriptor, each as the TMA addresses
        it) on the current stream."""
        device_index = tensors[0].get_device()
        launch = self.expanded_launch
        if launch.usable:
            key = (call_arguments, *[(t.data_ptr(), t.shape, t.stride()) for t in tensors])
            expanded = self.expanded.get(key)
            if expanded is None:
                if len(self.expanded) >= EXPANDED_ARGUMENTS_KEPT:
                    self.expanded.clear()
                expanded = launch.expand(self.arguments(tensors, call_arguments))
                self.expanded[key] = expanded
            stream = driver.active.get_current_stream(device_index)
            if launch.launch(self.grid, stream, expanded):
                return
        self.run(device_index, self.arguments(tensors, call_arguments))

    def arguments(self, tensors, call_arguments):
        """The kernel's arguments for ``tensors`` and ``call_arguments``: the descriptors, the
        call's arguments, the configuration's."""
        descriptors = [
            _copy_descriptor(template, tensor)
            for template, tensor in zip(self.templates, tensors, strict=True)
        ]
        return (*descriptors, *call_arguments, *self.config_arguments)

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
