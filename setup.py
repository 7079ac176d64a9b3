"""Builds the C++ half with CMake and installs the `tlx` Python package.

`pip install --no-build-isolation -e .` configures and builds `build/` with
CMake + Ninja: the planner extension lands in `language/tlx/`, and
`triton-opt` is copied into the environment's `bin/` so it is on PATH
inside the environment. Set TLX_BUILD_MLIR=0 to build the planner alone.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def run(self):
        build_dir = Path(os.environ.get("TLX_BUILD_DIR", ROOT / "build"))
        build_mlir = os.environ.get("TLX_BUILD_MLIR", "1") not in ("0", "OFF", "off")
        import pybind11

        configure = [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(build_dir),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
            f"-DTLX_BUILD_MLIR={'ON' if build_mlir else 'OFF'}",
        ]
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", str(build_dir)])

        # The extension is written into language/tlx/ by CMake; a regular
        # (non-editable) install also needs it next to the built package.
        package_dir = Path(self.build_lib) / "tlx"
        if not self.inplace and package_dir.exists():
            for lib in (ROOT / "language" / "tlx").glob("_planner*.so"):
                shutil.copy2(lib, package_dir / lib.name)

        if build_mlir:
            scripts = Path(sysconfig.get_path("scripts"))
            scripts.mkdir(parents=True, exist_ok=True)
            shutil.copy2(build_dir / "bin" / "triton-opt", scripts / "triton-opt")


setup(
    packages=find_packages(where="language"),
    package_dir={"": "language"},
    ext_modules=[CMakeExtension("tlx._planner")],
    cmdclass={"build_ext": CMakeBuild},
)
