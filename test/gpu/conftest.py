"""The GPU tests share test/python/_helpers.py with the CPU tests (pyproject.toml's pytest
pythonpath) and import the kernels from tlx_kernels;
``pytestmark = pytest.mark.hopper`` skips a module's tests without a Hopper (sm_90) GPU.

A kernel that never ends (a barrier no one completes) would hold the GPU, and the whole run,
until the machine's own limit: ``_watchdog`` ends the process instead once a test has run
TLX_GPU_TEST_TIMEOUT seconds (default 900; 0 for none), with every thread's stack on stderr
(seen with ``-s``; with pytest-xdist the worker's crash names the test)."""

import faulthandler
import os

import pytest
import torch


def _has_hopper_gpu() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


def pytest_collection_modifyitems(config, items):
    if _has_hopper_gpu():
        return
    skip = pytest.mark.skip(reason="needs a Hopper (sm_90) GPU")
    for item in items:
        if item.get_closest_marker("hopper"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _watchdog():
    seconds = float(os.environ.get("TLX_GPU_TEST_TIMEOUT", "900"))
    if seconds > 0:
        faulthandler.dump_traceback_later(seconds, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
