"""The GPU tests share test/python/_helpers.py with the CPU tests and import the tutorials;
``pytestmark = pytest.mark.hopper`` skips a module's tests without a Hopper (sm_90) GPU."""

import sys
from pathlib import Path

import pytest
import torch

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "test" / "python"))
sys.path.insert(0, str(REPOSITORY / "tutorials"))


def _has_hopper_gpu() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


def pytest_collection_modifyitems(config, items):
    if _has_hopper_gpu():
        return
    skip = pytest.mark.skip(reason="needs a Hopper (sm_90) GPU")
    for item in items:
        if item.get_closest_marker("hopper"):
            item.add_marker(skip)
