"""tlx_mlir and Triton in one process are refused, whichever comes first: each holds
its own build of LLVM/MLIR (tlx_mlir/__init__.py, tlx/_single_llvm.py). Each order
runs in a fresh interpreter of its own."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _tlx_mlir import REPOSITORY, requires_tlx_mlir

pytestmark = requires_tlx_mlir


def run_python(code):
    environment = dict(os.environ, PYTHONPATH=str(REPOSITORY / "language"))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment
    )


def triton_installed():
    found = run_python("import importlib.util; assert importlib.util.find_spec('triton')")
    return found.returncode == 0


needs_triton = pytest.mark.skipif(not triton_installed(), reason="Triton is not installed")


def test_tlx_mlir_alone_imports():
    result = run_python("from tlx_mlir import ir; from tlx_mlir.dialects import tlx; print('ok')")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


@needs_triton
def test_tlx_mlir_after_triton_is_refused():
    result = run_python("import triton\nimport tlx_mlir")
    assert result.returncode != 0
    assert (
        "ImportError: tlx_mlir cannot be imported in a process that has imported Triton: "
        "two builds of LLVM/MLIR in one process collide" in result.stderr
    ), result.stderr


@needs_triton
def test_tlx_mlir_after_tlx_is_refused():
    result = run_python("import tlx\nimport tlx_mlir")
    assert result.returncode != 0
    assert "ImportError: tlx_mlir cannot be imported in a process that has imported Triton" in (
        result.stderr
    ), result.stderr


@needs_triton
@pytest.mark.parametrize("module", ["triton", "triton.language", "triton.experimental.gluon"])
def test_triton_after_tlx_mlir_is_refused(module):
    result = run_python(f"from tlx_mlir import ir\nimport {module}")
    assert result.returncode != 0
    assert (
        "ImportError: Triton cannot be imported in a process that has imported tlx_mlir: "
        "two builds of LLVM/MLIR in one process collide" in result.stderr
    ), result.stderr


@needs_triton
def test_tlx_after_tlx_mlir_is_refused():
    result = run_python("import tlx_mlir\nimport tlx")
    assert result.returncode != 0
    assert (
        "ImportError: tlx cannot be imported in a process that has imported tlx_mlir: tlx "
        "imports Triton" in result.stderr
    ), result.stderr


@needs_triton
def test_the_refusal_loads_no_mlir():
    """Refused before tlx_mlir's MLIR is loaded: the process maps no library of it."""
    result = run_python(
        "import triton\n"
        "try:\n"
        "    import tlx_mlir\n"
        "except ImportError:\n"
        "    pass\n"
        "print(open('/proc/self/maps').read())"
    )
    assert result.returncode == 0, result.stderr
    assert "libTLXPythonCAPI" not in result.stdout
    assert str(Path("tlx_mlir") / "_mlir_libs") not in result.stdout
