"""What the TLX tests share: the compile targets, the helpers their kernels fill
buffers with, compiling a kernel, reading TTGIR, finding triton-opt and loading
the example of README.md. test/gpu imports it too (test/gpu/conftest.py)."""

from __future__ import annotations

import importlib.util
import re
import runpy
import shutil
import sys
from pathlib import Path

import pytest
import tlx
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

REPOSITORY = Path(__file__).resolve().parents[2]
SM90 = GPUTarget("cuda", 90, 32)
# Compiling (or tracing) every configuration of a kernel's tuning space takes minutes of
# CI's time a Triton, cold in its cache: the newest supported Triton does it; the older ones
# compile the configurations the rest of the suite does (scripts/test.sh).
NEWEST_TRITON = (3, 9)
whole_space_on_newest_triton = pytest.mark.skipif(
    tlx.compat.TRITON_VERSION != NEWEST_TRITON,
    reason="compiles or traces every configuration of a tuning space: the newest supported "
    "Triton does",
)
SM100 = GPUTarget("cuda", 100, 32)
ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
TMEM_ROWS = ttgl.constexpr(ttgl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1]))


@gluon.jit
def fill(buffer):
    buffer.store(ttgl.full(buffer.shape, 0, buffer.dtype, ROWS))


@gluon.jit
def fill_tmem(buffer):
    buffer.store(ttgl.full(buffer.shape, 0, buffer.dtype, TMEM_ROWS))


def compile_kernel(kernel, signature=None, target=SM90, **constexprs):
    source = tlx.ASTSource(fn=kernel, signature=signature or {}, constexprs=constexprs)
    return triton.compile(source, target=target)


def constant_slots(ttgir: str, view: str) -> list[int]:
    """The constant slots ``view`` is indexed with, in order."""
    return [int(slot) for slot in re.findall(rf"ttg\.memdesc_index %{view}\[%c(\d+)_i32\]", ttgir)]


def find_triton_opt() -> Path | None:
    """The freshly built triton-opt (build/bin), else the one on PATH."""
    built = REPOSITORY / "build" / "bin" / "triton-opt"
    if built.is_file():
        return built
    found = shutil.which("triton-opt")
    return Path(found) if found else None


def load_api_example(directory: Path):
    """The first ```python block of README.md, imported as a module (Triton
    reads a kernel's source from its file)."""
    api_doc = REPOSITORY / "README.md"
    block = re.search(r"```python\n(.*?)```", api_doc.read_text(), re.DOTALL).group(1)
    path = directory / "api_example.py"
    path.write_text(block)
    spec = importlib.util.spec_from_file_location("api_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tutorial(file_name: str, *arguments: str) -> int:
    """Runs tutorials/``file_name`` as a script (``python tutorials/<file_name> arguments``)
    in this process, so that capsys sees what it prints; returns its exit status."""
    path = REPOSITORY / "tutorials" / file_name
    argv = sys.argv
    sys.argv = [str(path), *arguments]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exit_:
        return exit_.code or 0
    finally:
        sys.argv = argv
    return 0


def tutorial_globals(file_name: str) -> dict:
    """The globals of tutorials/``file_name`` run as a script without its main: a tutorial
    that keeps its own small kernel (01-aliasing-basics.py)."""
    return runpy.run_path(str(REPOSITORY / "tutorials" / file_name))
