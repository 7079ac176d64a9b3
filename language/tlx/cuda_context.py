"""The calling thread's CUDA context, made current before a launch encodes TMA descriptors.

Triton encodes a kernel's TMA descriptors (``cuTensorMapEncodeTiled``) before its C launcher
makes a context current, and the driver refuses to encode one in a thread where no context
is: "Failed to create tensor map descriptor: invalid device context". PyTorch's autograd runs
a backward on a thread of its own, where the device's primary context is current only once
something there has used the CUDA runtime. A backward whose first kernel reads TMA
descriptors, launched by ``loss.backward()`` with nothing before it on that thread, failed so
on an H100 (bench/attention_backward.py, issue 45)."""

import ctypes
import threading

_THREAD = threading.local()
_DRIVER = None


def _driver():
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = ctypes.CDLL("libcuda.so.1")
    return _DRIVER


def _check(result, call):
    if result != 0:
        raise RuntimeError(f"{call} failed with CUDA driver error {result}")


def make_current(device_index: int) -> None:
    """Makes device ``device_index``'s primary context current on this thread unless a
    context of that device is; remembered per thread, so that a launch pays a lookup."""
    if getattr(_THREAD, "device", None) == device_index:
        return
    cuda = _driver()
    context = ctypes.c_void_p()
    _check(cuda.cuCtxGetCurrent(ctypes.byref(context)), "cuCtxGetCurrent")
    device = ctypes.c_int()
    if context.value:
        _check(cuda.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
    if not context.value or device.value != device_index:
        _check(cuda.cuDeviceGet(ctypes.byref(device), device_index), "cuDeviceGet")
        _check(
            cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
            "cuDevicePrimaryCtxRetain",
        )
        _check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    _THREAD.device = device_index
