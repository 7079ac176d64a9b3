"""Fixtures of the TLX tests (their shared helpers are in _helpers.py)."""

import pytest


@pytest.fixture
def always_compile(monkeypatch):
    """Compiles every kernel afresh (no Triton cache), with FP fusion on.
    A module asks for it with ``pytestmark = pytest.mark.usefixtures("always_compile")``."""
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
