#!/usr/bin/env bash
# Runs every test suite: the lint gates, lit + FileCheck over the MLIR half,
# pytest over the Python half with the newest Triton and with each older
# supported one, pytest over tlx_mlir (MLIR's Python bindings), then the
# package test (the wheel built from a clean copy of
# the repository, installed into a fresh virtual environment).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYTHONPATH="$PWD/language${PYTHONPATH:+:$PYTHONPATH}"

echo "== lint (ruff, clang-format)"
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
find dialect planner python -name '*.cpp' -o -name '*.h' | xargs .venv/bin/clang-format --dry-run -Werror

echo "== lit (MLIR half)"
.venv/bin/lit -sv build/test

# One pytest worker a core (pytest-xdist): the suites are Triton's compiles, a core each.
# The newest Triton and 3.6 (the GPU machine's), the two ends of every API difference
# tlx.compat bridges, run the whole suite, but for the tests that compile or trace every
# configuration of a tuning space: the newest Triton's alone (test/python/_helpers.py,
# whole_space_on_newest_triton). 3.7 and 3.8 run all but the suites that compile
# the kernel package's kernels (each configuration of the attention backward, the GEMM and
# the MLPs, the kernels on suggested trees, cold in each Triton's cache): their compat paths
# are the ones the rest of the suite compiles, and the run stays within CI's time. The
# planner's property suites import no Triton: the newest Triton's run is theirs.
KERNEL_PACKAGE_SUITES=(test_attention_backward.py test_attention_backward_variants.py
  test_attention_autograd.py test_tutorial_spaces.py test_tutorial_hopper_gemm.py
  test_tutorial_hopper_fused_mlp.py test_gated_mlp.py test_gemm_shapes.py test_suggest_compile.py)
PLANNER_ALONE_SUITES=(test_planner_properties.py test_planner_group_by_group.py
  test_planner_group_stride.py)
for venv in .venv .venv-triton36 .venv-triton37 .venv-triton38; do
  echo "== pytest (Triton $("$venv/bin/python" -c 'import triton; print(triton.__version__)'))"
  skip=()
  if [ "$venv" != .venv ]; then
    for suite in "${PLANNER_ALONE_SUITES[@]}"; do skip+=(--ignore "test/python/$suite"); done
  fi
  if [ "$venv" = .venv-triton37 ] || [ "$venv" = .venv-triton38 ]; then
    for suite in "${KERNEL_PACKAGE_SUITES[@]}"; do skip+=(--ignore "test/python/$suite"); done
  fi
  "$venv/bin/python" -m pytest -q -n auto "${skip[@]}"
done

# tlx_mlir refuses to share a process with Triton (docs/mlir.md): its tests
# run in a pytest process of their own.
echo "== pytest (tlx_mlir, MLIR's Python bindings, without Triton)"
.venv/bin/python -m pytest -q test/mlir_python

echo "== package (wheel from a clean copy, fresh virtual environment)"
.venv/bin/python -m pytest -q test/package
