#!/usr/bin/env bash
# Runs every test suite: lit + FileCheck over the MLIR half, pytest over the
# Python half with the newest Triton, then the Python suite with Triton 3.6.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYTHONPATH="$PWD/language${PYTHONPATH:+:$PYTHONPATH}"

echo "== lit (MLIR half)"
.venv/bin/lit -sv build/test

echo "== pytest (Triton $(.venv/bin/python -c 'import triton; print(triton.__version__)'))"
.venv/bin/python -m pytest -q

echo "== pytest (Triton $(.venv-triton36/bin/python -c 'import triton; print(triton.__version__)'))"
.venv-triton36/bin/python -m pytest -q
