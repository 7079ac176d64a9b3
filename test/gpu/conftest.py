"""The GPU tests share test/python/_helpers.py with the CPU tests (pyproject.toml's pytest
pythonpath) and import the kernels from tlx_kernels;
``pytestmark = pytest.mark.hopper`` skips a module's tests without a Hopper (sm_90) GPU."""

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
