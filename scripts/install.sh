#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a built, installed project:
# LLVM/MLIR 22 from Debian, a virtual environment .venv with stock Triton
# (newest) and a CPU build of torch, the C++ half built with CMake/Ninja,
# and a second environment .venv-triton36 with Triton 3.6 for the CPU suite.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! dpkg -s llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools ninja-build >/dev/null 2>&1; then
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools ninja-build clang-format
fi

PYTHON=${PYTHON:-python3}
TRITON_VERSION=${TRITON_VERSION:-3.9.0}
COMMON_PKGS=(torch==2.13.0 pybind11 setuptools wheel pytest hypothesis lit numpy ruff)

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "triton==$TRITON_VERSION" "${COMMON_PKGS[@]}"
.venv/bin/python -m pip install -q --no-build-isolation -e .

# Triton 3.6 (what the GPU machine has): the Python suite runs against it too.
# The planner extension is built for the same Python, so the package is used
# from the source tree.
[ -x .venv-triton36/bin/python ] || "$PYTHON" -m venv .venv-triton36
.venv-triton36/bin/python -m pip install -q --upgrade pip
.venv-triton36/bin/python -m pip install -q triton==3.6.0 "${COMMON_PKGS[@]}"

echo "install: done (activate with: source .venv/bin/activate)"
