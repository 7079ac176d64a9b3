#!/usr/bin/env bash
# Runs every test suite: lit + FileCheck over the MLIR half, then pytest over
# the Python half with the newest Triton and with each older supported one.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYTHONPATH="$PWD/language${PYTHONPATH:+:$PYTHONPATH}"

echo "== lit (MLIR half)"
.venv/bin/lit -sv build/test

for venv in .venv .venv-triton36 .venv-triton37 .venv-triton38; do
  echo "== pytest (Triton $("$venv/bin/python" -c 'import triton; print(triton.__version__)'))"
  "$venv/bin/python" -m pytest -q
done
