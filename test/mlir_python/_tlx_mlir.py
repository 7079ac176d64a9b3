"""What the tests of tlx_mlir share: where the repository and triton-opt are, and the
mark that skips them where tlx_mlir was not built (no LLVM/MLIR 22).

These tests never import Triton (tlx_mlir refuses to share a process with it):
scripts/test.sh runs them in a pytest process of their own."""

import importlib.util
import shutil
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

NOT_BUILT = "tlx_mlir is not built (it needs LLVM/MLIR 22: scripts/install.sh)"
TLX_MLIR_BUILT = importlib.util.find_spec("tlx_mlir") is not None
requires_tlx_mlir = pytest.mark.skipif(not TLX_MLIR_BUILT, reason=NOT_BUILT)


def triton_opt() -> str:
    """The triton-opt of this checkout's build, else the one on PATH."""
    built = REPOSITORY / "build" / "bin" / "triton-opt"
    found = str(built) if built.is_file() else shutil.which("triton-opt")
    if found is None:
        pytest.skip("triton-opt is not built")
    return found
