"""Fixtures of the TLX tests (their shared helpers are in _helpers.py)."""

import pytest


@pytest.fixture(autouse=True)
def explicit_fp_fusion(monkeypatch):
    """FP fusion on, said explicitly: Triton 3.9 warns when TRITON_DEFAULT_FP_FUSION is
    unset, and on is the default of every supported version."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


@pytest.fixture
def always_compile(monkeypatch):
    """Compiles every kernel afresh (no Triton cache).
    A module asks for it with ``pytestmark = pytest.mark.usefixtures("always_compile")``."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
