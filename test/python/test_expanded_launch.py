"""tlx.compat.ExpandedLaunch and tlx_kernels.launch.DirectLaunch, which keeps a call's expanded
arguments (its TMA descriptors encoded) for the next call of the same tensors.

Without a GPU, the installed Triton's own ``CudaLauncher`` is built around a C launch function
and a descriptor encoder that record what they are given; the test checks that a launch
through ``ExpandedLaunch`` hands the C launch function exactly what ``CudaLauncher`` hands it,
for whichever of Triton 3.6 ... 3.9 is installed."""

from __future__ import annotations

import functools
import types

import pytest
import tlx
import torch
import triton
from _helpers import SM90
from tlx.compat import ExpandedLaunch, tma_load, tma_store
from tlx_kernels import launch as kernel_launch
from triton import knobs
from triton.backends.nvidia import driver as nvidia_driver
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime import driver

SIZE = 64
TILE = gl.constexpr(SIZE)
TILE_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))
DESCRIPTOR_TYPE = f"tensordesc<fp16[{SIZE},{SIZE}],{TILE_LAYOUT.value!r}>"
SIGNATURE = {"source": DESCRIPTOR_TYPE, "destination": DESCRIPTOR_TYPE, "row": "i32"}
GRID = (3, 2, 5)
STREAM = 7
FUNCTION = 0xF00


@tlx.jit
def copy_tile(source, destination, row):
    tile = gl.allocate_shared_memory(gl.float16, [TILE, TILE], TILE_LAYOUT)
    ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(ready, count=1)
    fence_async_shared()
    mbarrier.expect(ready, source.block_type.nbytes)
    tma_load(source, [row, 0], ready, tile)
    mbarrier.wait(ready, 0)
    tma_store(destination, [row, 0], tile)
    tma.store_wait(0)
    mbarrier.invalidate(ready)


@pytest.fixture
def compiled():
    source = tlx.ASTSource(fn=copy_tile, signature=SIGNATURE, constexprs={})
    return triton.compile(source, target=SM90)


class RecordingUtils:
    """The driver's C utilities: a launch function and a descriptor encoder that record."""

    def __init__(self):
        self.launches = []
        self.encoded = 0
        # Not a Python function, as the driver's C launch function is not (ExpandedLaunch
        # tells the two apart for a kernel without descriptors, which Triton launches
        # through that function unwrapped).
        self.launch = functools.partial(self._record)

    def _record(self, *arguments):
        self.launches.append(arguments)

    def fill_tma_descriptor(self, *fields):
        self.encoded += 1
        return ("CUtensorMap", *fields)

    fill_tma_descriptor_tiled = fill_tma_descriptor

    def build_signature_metadata(self, kernel_signature):
        """3.7+: the kernel signature as the C launch function reads it."""
        return ("signature", *kernel_signature)


class RecordingDriver:
    def __init__(self):
        self.utils = RecordingUtils()

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return STREAM


@pytest.fixture
def recording(monkeypatch):
    """The active driver's utilities record; 3.6's launcher module, compiled from C against
    libcuda, is that recording launch function."""
    active = RecordingDriver()
    monkeypatch.setattr(driver, "_active", active)
    monkeypatch.setattr(
        nvidia_driver,
        "compile_module_from_src",
        lambda **_: types.SimpleNamespace(launch=active.utils.launch),
        raising=False,
    )
    monkeypatch.setattr(nvidia_driver, "library_dirs", lambda: [], raising=False)
    # 3.7+: the kinds of the C launch function's arguments, set once the driver's C module
    # has been loaded.
    if hasattr(nvidia_driver, "PyKernelArg"):
        monkeypatch.setattr(nvidia_driver, "PyKernelArg", lambda nested_tuple, type: type)
        for kind in ("ARG_CONSTEXPR", "ARG_KERNEL", "ARG_TUPLE"):
            monkeypatch.setattr(nvidia_driver, kind, kind)
    return active.utils


def _set_launch_enter_hook(monkeypatch, hook):
    """A profiler's launch hook, as Triton takes it: added to the chain (3.6+)."""
    chain = knobs.runtime.launch_enter_hook
    if hasattr(chain, "calls"):
        monkeypatch.setattr(chain, "calls", [hook])
    else:
        monkeypatch.setattr(knobs.runtime, "launch_enter_hook", hook)


def _kernel(compiled):
    """``compiled`` with the run, function and metadata it has once loaded on a GPU: Triton's
    own launcher around the recording launch function."""
    run = nvidia_driver.CudaLauncher(compiled.src, compiled.metadata)
    # Values no other argument of the launch takes, so that each is found in its place.
    run.launch_cooperative_grid, run.launch_pdl = "cooperative", "pdl"
    return types.SimpleNamespace(
        run=run,
        src=compiled.src,
        metadata=compiled.metadata,
        function=FUNCTION,
        packed_metadata=("packed metadata",),
        launch_metadata=lambda grid, stream, *arguments: None,
    )


def _descriptors(rows):
    tensors = [torch.zeros(rows, SIZE, dtype=torch.float16) for _ in range(2)]
    layout = TILE_LAYOUT.value
    return tensors, [TensorDescriptor.from_tensor(t, [SIZE, SIZE], layout) for t in tensors]


def test_it_launches_what_tritons_launcher_launches(compiled, recording):
    kernel = _kernel(compiled)
    _, descriptors = _descriptors(256)
    arguments = (*descriptors, 64)
    kernel.run(*GRID, STREAM, FUNCTION, kernel.packed_metadata, None, None, None, *arguments)
    assert recording.encoded == 2

    launch = ExpandedLaunch(kernel)
    assert launch.usable
    expanded = launch.expand(arguments)
    assert recording.encoded == 4
    assert launch.launch(GRID, STREAM, expanded)
    assert recording.encoded == 4  # the launch encodes nothing
    assert len(recording.launches) == 2
    assert recording.launches[1] == recording.launches[0]


def test_it_declines_a_kernel_with_scratch_and_a_launch_with_hooks(
    compiled, recording, monkeypatch
):
    kernel = _kernel(compiled)
    launch = ExpandedLaunch(kernel)
    _, descriptors = _descriptors(128)
    expanded = launch.expand((*descriptors, 0))
    _set_launch_enter_hook(monkeypatch, lambda metadata: None)
    assert not launch.launch(GRID, STREAM, expanded)
    assert recording.launches == []

    kernel.run.global_scratch_size = 128
    assert not ExpandedLaunch(kernel).usable


def _direct_launch(compiled):
    _, descriptors = _descriptors(128)
    launch = kernel_launch.DirectLaunch.of_compiled(
        _kernel(compiled), copy_tile, None, GRID, descriptors, {"row": 0}, {}
    )
    return kernel_launch, launch


def test_a_direct_launch_encodes_a_call_of_the_same_tensors_once(compiled, recording):
    _, launch = _direct_launch(compiled)
    tensors, _ = _descriptors(256)
    launch(tensors, (64,))
    launch(tensors, (64,))
    assert recording.encoded == 2 and len(recording.launches) == 2
    assert recording.launches[0] == recording.launches[1]
    # Another row, other tensors of the same shape, or another shape: encoded again.
    launch(tensors, (128,))
    assert recording.encoded == 4
    others, _ = _descriptors(256)
    launch(others, (64,))
    assert recording.encoded == 6
    assert recording.launches[-1] != recording.launches[0]  # the new tensors' addresses
    taller, _ = _descriptors(512)
    launch(taller, (64,))
    assert recording.encoded == 8 and len(launch.expanded) == 4


def test_a_direct_launch_keeps_a_bounded_number(compiled, recording, monkeypatch):
    common, launch = _direct_launch(compiled)
    monkeypatch.setattr(common, "EXPANDED_ARGUMENTS_KEPT", 2)
    tensors, _ = _descriptors(256)
    for row in range(5):
        launch(tensors, (row,))
        assert len(launch.expanded) <= 2
    assert recording.encoded == 10


def test_a_direct_launch_with_hooks_goes_through_tritons_launcher(compiled, recording, monkeypatch):
    _, launch = _direct_launch(compiled)
    tensors, _ = _descriptors(256)
    launch(tensors, (64,))
    seen = []
    _set_launch_enter_hook(monkeypatch, seen.append)
    launch(tensors, (64,))
    # Encoded again by Triton's launcher, which the recording launch function stands for
    # (it would call the hook).
    assert recording.encoded == 4 and len(recording.launches) == 2
    assert recording.launches[1][:3] == GRID


@tlx.jit
def fill(out_ptr, value, BLOCK: gl.constexpr, count):
    offsets = gl.arange(0, BLOCK, gl.BlockedLayout([1], [32], [4], [0]))
    gl.store(out_ptr + offsets, gl.full([BLOCK], value, gl.float32, offsets.type.layout),
             mask=offsets < count)  # fmt: skip


FILL_SIGNATURE = {"out_ptr": "*fp32", "value": "fp32", "BLOCK": "constexpr", "count": "i32"}


@pytest.fixture
def compiled_fill():
    source = tlx.ASTSource(fn=fill, signature=FILL_SIGNATURE, constexprs={"BLOCK": 128})
    return triton.compile(source, target=SM90)


def test_a_direct_launch_takes_pointers_and_parameters_after_the_constexprs(
    compiled_fill, recording
):
    """A kernel without descriptors whose call sets a pointer and a parameter that follows
    a constexpr (as the attention forward's ``lse_ptr``): the call's tensor is launched as
    its address, the configuration's value in its place, and another tensor is expanded
    anew."""
    out = torch.zeros(128)
    launch = kernel_launch.DirectLaunch.of_compiled(
        _kernel(compiled_fill), fill, None, (1,), (), {"out_ptr": out, "count": 128},
        {"value": 2.5, "BLOCK": 128},
    )  # fmt: skip
    assert launch.call_names == ("out_ptr", "count")
    assert launch.arguments((), (out, 100)) == (out, 2.5, 128, 100)
    launch((), (out, 100))
    (launched,) = recording.launches
    # 3.9's launch function takes the kernel's arguments as one tuple, its last.
    arguments = launched[-1] if isinstance(launched[-1], tuple) else launched
    assert out.data_ptr() in arguments and 2.5 in arguments and 100 in arguments
    assert not any(isinstance(argument, torch.Tensor) for argument in arguments)
    launch((), (out, 100))
    assert len(launch.expanded) == 1
    launch((), (torch.zeros(128), 100))
    assert len(launch.expanded) == 2


def test_a_direct_launch_refuses_a_misaligned_pointer_and_an_unknown_parameter(
    compiled_fill, recording
):
    """The compiled kernel assumes 16-byte aligned pointers (Triton's specialization of the
    tensor it was compiled for): a call's tensor elsewhere is an error naming the parameter
    and the address; a call cannot set what the kernel does not take."""
    launch = kernel_launch.DirectLaunch.of_compiled(
        _kernel(compiled_fill), fill, None, (1,), (), {"out_ptr": torch.zeros(128), "count": 1},
        {"value": 1.0, "BLOCK": 128},
    )  # fmt: skip
    shifted = torch.zeros(129)[1:]
    with pytest.raises(
        ValueError, match=r"out_ptr \(a tensor of shape \(128,\)\) is at address 0x"
    ):
        launch((), (shifted, 128))
    assert recording.launches == []
    with pytest.raises(ValueError, match=r"cannot set \['size'\]: its parameters after the 0 "):
        kernel_launch.DirectLaunch.of_compiled(
            _kernel(compiled_fill), fill, None, (1,), (), {"size": 1}, {}
        )


def test_a_kernel_hosts_launch_is_made_once_a_configuration_grid_and_dtypes(monkeypatch):
    """``KernelHost.launch`` makes a kernel's ``DirectLaunch`` at the first call of a
    configuration, grid, constexprs and tensors' dtypes and shapes, and launches every later
    call of them through it."""
    from tlx_kernels._host import KernelHost

    made = []

    def direct_launch(self, config, grid, tensors, call_arguments, **call_constexprs):
        calls = []
        made.append((config, grid, call_constexprs, calls))
        return lambda tensors, call_arguments: calls.append((tensors, call_arguments))

    monkeypatch.setattr(KernelHost, "direct_launch", direct_launch)
    host = KernelHost(copy_tile, None, ("source", "destination"), {"row": "i32"}, None, SM90)
    tall, wide = (torch.zeros(256, SIZE, dtype=torch.float16) for _ in range(2))
    host.launch("config", (2, 1), (tall, wide), (0,), SIZE=64)
    host.launch("config", (2, 1), (wide, tall), (64,), SIZE=64)
    assert len(made) == 1 and len(made[0][3]) == 2
    assert made[0][3][1][1] == (64,)
    host.launch("config", (2, 1), (tall[:128], wide), (0,), SIZE=64)
    host.launch("config", (4, 1), (tall, wide), (0,), SIZE=64)
    host.launch("other", (2, 1), (tall, wide), (0,), SIZE=64)
    host.launch("config", (2, 1), (tall, wide), (0,), SIZE=128)
    host.launch("config", (2, 1), (tall.float(), wide), (0,), SIZE=64)
    assert len(made) == 6
    assert made[4][2] == {"SIZE": 128}
