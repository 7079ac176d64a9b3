"""Fixtures of the TLX tests (their shared helpers are in _helpers.py)."""

import sys

import pytest


@pytest.fixture(autouse=True)
def explicit_fp_fusion(monkeypatch):
    """FP fusion on, said explicitly: Triton 3.9 warns when TRITON_DEFAULT_FP_FUSION is
    unset, and on is the default of every supported version."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


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
