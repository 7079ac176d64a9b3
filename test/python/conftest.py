"""Fixtures of the TLX tests of the Python half (their shared helpers are in _helpers.py;
the fixtures of every suite are in test/conftest.py)."""

import sys

import pytest


@pytest.fixture(autouse=True)
def triton_opt_follows_the_triton_under_test(monkeypatch):
    """triton-opt takes its whole-views default from a Python's Triton (docs/mlir.md): the
    one running the tests, not the first on PATH (scripts/test.sh runs every Triton's
    suite with .venv's triton-opt)."""
    monkeypatch.setenv("TLX_PYTHON", sys.executable)


@pytest.fixture
def always_compile(monkeypatch):
    """Compiles every kernel afresh (no Triton cache).
    A module asks for it with ``pytestmark = pytest.mark.usefixtures("always_compile")``."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
