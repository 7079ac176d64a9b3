"""Builds the C++ half with CMake and Ninja for the `tlx` package.

`cmake --install` puts the planner extension (`tlx._planner`) into the package
being built (the wheel's tree, or `language/` for an editable install), and the
wheel carries `triton-opt` as a data file that pip installs into the
environment's `bin/`, and the MLIR Python package `tlx_mlir` next to `tlx`
(docs/mlir.md). Where LLVM/MLIR 22 is not found (MLIR_DIR, by default Debian's
/usr/lib/llvm-22/lib/cmake/mlir) the planner extension is built alone and the
build ends with one line naming what was skipped and the packages that bring
it. TLX_BUILD_MLIR=0 builds the planner extension alone on purpose;
TLX_USE_MIMALLOC=1 links triton-opt with mimalloc.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pybind11
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = Path(os.environ.get("TLX_BUILD_DIR", "build"))
BUILD_MLIR = os.environ.get("TLX_BUILD_MLIR", "1") not in ("0", "OFF", "off")
# A wheel's triton-opt must run where libmimalloc is missing: mimalloc only on
# request (the development build asks for it: bench/pass_speed.py).
USE_MIMALLOC = os.environ.get("TLX_USE_MIMALLOC", "0") not in ("0", "OFF", "off")
MLIR_DIR = os.environ.get("MLIR_DIR", "/usr/lib/llvm-22/lib/cmake/mlir")
# MLIR's Python sources (the `_mlir` extension, `ir.py`, the generated op
# classes of the upstream dialects), of the same LLVM release as Debian's
# libmlir-22-dev: tlx_mlir compiles them against that MLIR (docs/mlir.md says
# why). A build requirement only where there is an MLIR to build them against.
MLIR_PYTHON_REQUIRES = ["xtc-mlir-dev==22.1.8.4", "nanobind>=2.9,<3"]
WILL_BUILD_MLIR = BUILD_MLIR and (Path(MLIR_DIR) / "MLIRConfig.cmake").is_file()


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = ROOT / BUILD_DIR
        # The directory that holds the `tlx` package being built.
        prefix = Path(self.get_ext_fullpath(ext.name)).resolve().parent.parent
        subprocess.check_call(
            [
                "cmake",
                "-S",
                str(ROOT),
                "-B",
                str(build_dir),
                "-G",
                "Ninja",
                # The Ninja of this build (an isolated build's is in a fresh
                # directory each time), not the one a previous build cached.
                f"-DCMAKE_MAKE_PROGRAM={shutil.which('ninja')}",
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={sys.executable}",
                f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                f"-DTLX_BUILD_MLIR={'ON' if BUILD_MLIR else 'OFF'}",
                f"-DMLIR_DIR={MLIR_DIR}",
                f"-DTLX_USE_MIMALLOC={'ON' if USE_MIMALLOC else 'OFF'}",
            ]
        )
        subprocess.check_call(["cmake", "--build", str(build_dir)])
        for component in ("python", "tlx_mlir"):
            subprocess.check_call(
                ["cmake", "--install", str(build_dir), "--prefix", str(prefix)]
                + ["--component", component]
            )
        triton_opt = build_dir / "bin" / "triton-opt"
        if configured(build_dir, "TLX_MLIR_BUILT") == "ON":
            # install_data reads this same list after the build.
            self.distribution.data_files.append(("bin", [str(triton_opt)]))
        skipped = configured(build_dir, "TLX_SKIPPED")
        if skipped:
            print(f"tlx: {skipped}", file=sys.stderr)


def configured(build_dir: Path, name: str) -> str:
    """The value CMake recorded for `name` in the build's cache."""
    prefix = f"{name}:"
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(prefix):
            return line.partition("=")[2]
    return ""


setup(
    ext_modules=[Extension("tlx._planner", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # triton-opt, where it was built, goes into the environment's bin/ (the
    # wheel's data scheme): CMakeBuild adds it once CMake has found MLIR.
    data_files=[],
    # PEP 517 build requirements that depend on the machine (setuptools'
    # build backend reports them from get_requires_for_build_wheel).
    setup_requires=MLIR_PYTHON_REQUIRES if WILL_BUILD_MLIR else [],
)
