"""The MLIR half prints Triton IR that the installed stock Triton parses and verifies.

`triton-opt` runs in a subprocess on test/TLX/ops-triton-subset*.mlir (this process never
loads LLVM/MLIR 22); each module it prints is handed to stock Triton's
`ir.parse_mlir_module` in a context with Triton's and the NVIDIA backend's dialects, and
must verify. A file whose first line is `// stock-triton: 3.6` (a list of major.minor
versions) holds syntax only those Triton versions print and accept; it is checked with
those versions only. Skipped when triton-opt is not built.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
from _helpers import REPOSITORY, find_triton_opt  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402
from triton._C.libtriton import nvidia as triton_nvidia  # noqa: E402

SUBSET_TESTS = sorted((REPOSITORY / "test" / "TLX").glob("ops-triton-subset*.mlir"))
TRITON_VERSION = ".".join(triton.__version__.split(".")[:2])
VERSIONS_HEADER = re.compile(r"//\s*stock-triton:\s*(?P<versions>[\d.,\s]+)$")


TRITON_OPT = find_triton_opt()
pytestmark = pytest.mark.skipif(
    TRITON_OPT is None,
    reason="triton-opt is neither on PATH nor in build/bin: build the MLIR half "
    "(`ninja -C build` or scripts/install.sh) to check its output against stock Triton",
)


def stock_versions(test: Path) -> list[str] | None:
    """The Triton versions a test file is limited to, or None for every version."""
    first_line = test.read_text().splitlines()[0]
    match = VERSIONS_HEADER.match(first_line)
    if match is None:
        return None
    return [version.strip() for version in match["versions"].split(",") if version.strip()]


def printed_modules(test: Path) -> list[str]:
    """The modules triton-opt prints for `test`, one per split of the input."""
    result = subprocess.run(
        [str(TRITON_OPT), str(test), "--split-input-file"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"triton-opt failed on {test.name}:\n{result.stderr}"
    return [module for module in result.stdout.split("// -----") if module.strip()]


def test_subset_tests_exist():
    names = {test.name for test in SUBSET_TESTS}
    assert "ops-triton-subset.mlir" in names


@pytest.mark.parametrize("test", SUBSET_TESTS, ids=lambda test: test.name)
def test_stock_triton_parses_and_verifies(test: Path, tmp_path: Path):
    versions = stock_versions(test)
    if versions is not None and TRITON_VERSION not in versions:
        pytest.skip(
            f"{test.name} holds syntax of Triton {', '.join(versions)} only, "
            f"this is Triton {TRITON_VERSION}"
        )
    modules = printed_modules(test)
    assert modules, f"triton-opt printed nothing for {test.name}"
    context = ir.context()
    ir.load_dialects(context)
    triton_nvidia.load_dialects(context)
    for index, text in enumerate(modules):
        path = tmp_path / f"{test.stem}.{index}.mlir"
        path.write_text(text)
        try:
            module = ir.parse_mlir_module(str(path), context)
        except RuntimeError as error:
            pytest.fail(
                f"Triton {triton.__version__} cannot parse module #{index} that "
                f"triton-opt printed for {test.name} ({error}):\n{text}"
            )
        assert module.verify(), (
            f"Triton {triton.__version__} does not verify module #{index} that triton-opt "
            f"printed for {test.name}:\n{text}"
        )
