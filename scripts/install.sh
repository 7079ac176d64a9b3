#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a built, installed project:
# LLVM/MLIR 22 from Debian, a virtual environment .venv with stock Triton
# (newest) and a CPU build of torch, the C++ half built with CMake/Ninja
# (triton-opt, the planner extension and the MLIR Python package tlx_mlir),
# and one environment per older supported Triton (.venv-triton36, -37, -38)
# for the version matrix of the Python suite.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# libmimalloc-dev: triton-opt links mimalloc, which MLIR's allocation-heavy
# parser and printer run about a quarter faster on (bench/pass_speed.py).
APT_PKGS=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools ninja-build
  libmimalloc-dev git)
if ! dpkg -s "${APT_PKGS[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${APT_PKGS[@]}"
fi

PYTHON=${PYTHON:-python3}
TRITON_VERSION=${TRITON_VERSION:-3.9.0}
COMMON_PKGS=(torch==2.13.0 pybind11 setuptools wheel pytest pytest-xdist hypothesis lit numpy)
# The lint gates of scripts/test.sh (and .pre-commit-config.yaml), pinned so
# that every machine formats alike.
LINT_PKGS=(ruff==0.17.6 clang-format==19.1.7)

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "triton==$TRITON_VERSION" "${COMMON_PKGS[@]}" "${LINT_PKGS[@]}"
# What the build backend asks for besides the above (setup.py): MLIR's Python
# sources and nanobind, for the tlx_mlir package, where LLVM/MLIR 22 is found.
mapfile -t BUILD_PKGS < <(.venv/bin/python - <<'EOF'
import contextlib, io
from setuptools import build_meta
with contextlib.redirect_stdout(io.StringIO()):
    requires = build_meta.get_requires_for_build_editable()
print("\n".join(requires))
EOF
)
.venv/bin/python -m pip install -q "${BUILD_PKGS[@]}"
TLX_USE_MIMALLOC=1 .venv/bin/python -m pip install -q --no-build-isolation -e .
# The editable install builds build/bin/triton-opt; the environment runs that
# one, so that a rebuild (`cmake --build build`) is what triton-opt runs.
ln -sf "$PWD/build/bin/triton-opt" .venv/bin/triton-opt

# Older Triton releases (3.6 is what the GPU machine has): the Python suite
# runs against each. The planner extension is built for the same Python, so
# the package is used from the source tree.
for version in 3.6.0 3.7.1 3.8.0; do
  venv=".venv-triton$(echo "$version" | cut -d. -f1,2 | tr -d .)"
  [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "triton==$version" "${COMMON_PKGS[@]}"
done

echo "install: done (activate with: source .venv/bin/activate)"
