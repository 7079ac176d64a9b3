"""Builds the C++ half with CMake and Ninja for the `tlx` package.

`cmake --install` puts the planner extension (`tlx._planner`) into the package
being built (the wheel's tree, or `language/` for an editable install), and the
wheel carries `triton-opt` as a data file that pip installs into the
environment's `bin/`. TLX_BUILD_MLIR=0 builds the planner extension alone (no
LLVM/MLIR 22); TLX_USE_MIMALLOC=1 links triton-opt with mimalloc.
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
                f"-DTLX_USE_MIMALLOC={'ON' if USE_MIMALLOC else 'OFF'}",
            ]
        )
        subprocess.check_call(["cmake", "--build", str(build_dir)])
        subprocess.check_call(
            ["cmake", "--install", str(build_dir), "--prefix", str(prefix), "--component", "python"]
        )


setup(
    ext_modules=[Extension("tlx._planner", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Installed into the environment's bin/ (the wheel's data scheme).
    data_files=[("bin", [str(BUILD_DIR / "bin" / "triton-opt")])] if BUILD_MLIR else [],
)
