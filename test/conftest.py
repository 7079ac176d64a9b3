"""Fixtures of every test suite (test/python, test/gpu, test/mlir_python, test/package)."""

import pytest


@pytest.fixture(autouse=True)
def explicit_fp_fusion(monkeypatch):
    """FP fusion on, said explicitly: Triton 3.9 warns when TRITON_DEFAULT_FP_FUSION is
    unset, and on is the default of every supported version. The GPU suite's fuzz compiles
    for sm_90a without a GPU, so it needs it as much as the CPU suite."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
