"""triton-opt's whole-views default follows the Triton of the environment, so that the
TLX_DUMP_ALIAS_IR module of the README example plans in triton-opt as the kernel did under
the Triton running this test (CI runs it under each supported one). The lookup
(dialect/include/tlx/Transforms/TritonRelease.h) is pointed at a Python by TLX_PYTHON, at a
release by TLX_TRITON_VERSION, and otherwise asks the python3 beside triton-opt, else the
first on PATH, for its sys.path; it reads the version of the first Triton found there without
importing it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tlx
from _helpers import REPOSITORY, compile_kernel, find_triton_opt, load_api_example

TRITON_OPT = find_triton_opt()
pytestmark = [
    pytest.mark.skipif(TRITON_OPT is None, reason="triton-opt is not built (build/bin)"),
    pytest.mark.usefixtures("always_compile"),
]
PRINT_PLAN = REPOSITORY / "test" / "TLX" / "print-plan.mlir"
README_SIGNATURE = {"words_ptr": "*i32", "halves_ptr": "*i16", "flags_ptr": "*i8"}
# The README example's region: 8448 bytes, 12288 where views must be whole.
PARTIAL_VIEWS, WHOLE_VIEWS = 8448, 12288


def lookup_environment(**variables: str) -> dict[str, str]:
    """This process's environment without the lookup's variables, plus `variables`."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("TLX_PYTHON", "TLX_TRITON_VERSION")
    }
    environment.update(variables)
    return environment


def spec_region(module: Path, environment: dict[str, str], triton_opt=TRITON_OPT) -> int:
    """The region triton-opt's --test-print-tlx-plan gives the module's first spec (in
    test/TLX/print-plan.mlir, the README example's)."""
    result = subprocess.run(
        [str(triton_opt), str(module), "--test-print-tlx-plan", "-o", os.devnull],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return int(re.search(r'storage_alias_spec "[^"]*": smem region (\d+) bytes', result.stderr)[1])


def fake_python(directory: Path, search_path: Path) -> Path:
    """A `python3` that prints `search_path` as its sys.path, whatever it is asked."""
    directory.mkdir(parents=True, exist_ok=True)
    python = directory / "python3"
    python.write_text(f"#!/bin/sh\necho {search_path}\n")
    python.chmod(0o755)
    return python


def site_with_triton(directory: Path, version: str, as_package: bool) -> Path:
    """A site-packages holding Triton `version`: a package with its __version__, or only
    a dist-info (an editable install keeps the package elsewhere)."""
    if as_package:
        (directory / "triton").mkdir(parents=True)
        (directory / "triton" / "__init__.py").write_text(f"__version__ = '{version}'\n")
    else:
        (directory / f"triton-{version}.dist-info").mkdir(parents=True)
    return directory


def test_the_rule_is_the_planners():
    """tlx.compat and triton-opt decide with one rule: Triton 3.8 needs whole views."""
    needs = tlx.compat.NEEDS_WHOLE_VIEWS
    assert tlx.planner.needs_whole_views(*tlx.compat.TRITON_VERSION) == needs
    assert [tlx.planner.needs_whole_views(3, minor) for minor in (6, 7, 8, 9)] == [
        False,
        False,
        True,
        False,
    ]


def test_the_readme_dump_plans_in_triton_opt_as_the_kernel_did(tmp_path, capfd, monkeypatch):
    example = load_api_example(tmp_path)
    monkeypatch.setenv("TLX_DUMP_ALIAS_IR", "1")
    compiled = compile_kernel(example.share_bytes, README_SIGNATURE, N=32)
    monkeypatch.delenv("TLX_DUMP_ALIAS_IR")
    dump = capfd.readouterr().err
    start = dump.index("// TLX storage alias specs")
    module = tmp_path / "dump.mlir"
    module.write_text(dump[start : dump.index("\n}\n", start) + 3])
    region = spec_region(module, lookup_environment(TLX_PYTHON=sys.executable))
    assert region == compiled.metadata.shared
    assert region == (WHOLE_VIEWS if tlx.compat.NEEDS_WHOLE_VIEWS else PARTIAL_VIEWS)


@pytest.mark.parametrize(
    "version, region",
    [("3.6.0", PARTIAL_VIEWS), ("3.7.1", PARTIAL_VIEWS), ("3.8.0", WHOLE_VIEWS)]
    + [("3.9.0", PARTIAL_VIEWS), ("none", WHOLE_VIEWS)],
)
def test_tlx_triton_version_sets_the_release(version, region):
    assert spec_region(PRINT_PLAN, lookup_environment(TLX_TRITON_VERSION=version)) == region


@pytest.mark.parametrize("as_package", [True, False], ids=["package", "dist-info"])
@pytest.mark.parametrize("version, region", [("3.8.0", WHOLE_VIEWS), ("3.9.1", PARTIAL_VIEWS)])
def test_tlx_python_names_the_python_asked(tmp_path, as_package, version, region):
    site = site_with_triton(tmp_path / "site", version, as_package)
    python = fake_python(tmp_path / "bin", site)
    assert spec_region(PRINT_PLAN, lookup_environment(TLX_PYTHON=str(python))) == region


def test_the_python_beside_triton_opt_comes_before_path(tmp_path):
    """A venv's bin/triton-opt (here a link to the build's) asks the venv's python3,
    whether it is started by its path or found on PATH."""
    venv_bin = tmp_path / "venv" / "bin"
    fake_python(venv_bin, site_with_triton(tmp_path / "venv-site", "3.8.0", as_package=True))
    (venv_bin / "triton-opt").symlink_to(TRITON_OPT)
    other_bin = tmp_path / "other" / "bin"
    fake_python(other_bin, site_with_triton(tmp_path / "other-site", "3.9.0", as_package=True))
    path = f"{other_bin}{os.pathsep}{os.environ['PATH']}"
    environment = lookup_environment(PATH=path)
    assert spec_region(PRINT_PLAN, environment, venv_bin / "triton-opt") == WHOLE_VIEWS
    environment["PATH"] = f"{venv_bin}{os.pathsep}{path}"
    assert spec_region(PRINT_PLAN, environment, "triton-opt") == WHOLE_VIEWS
    # Started from a directory without a python3: the first python3 on PATH.
    assert spec_region(PRINT_PLAN, lookup_environment(PATH=path)) == PARTIAL_VIEWS


def test_without_triton_the_default_stays_whole_views(tmp_path):
    python = fake_python(tmp_path / "bin", tmp_path / "empty-site")
    environment = lookup_environment(TLX_PYTHON=str(python))
    assert spec_region(PRINT_PLAN, environment) == WHOLE_VIEWS
    helped = subprocess.run(
        [str(TRITON_OPT), "--help"], capture_output=True, text=True, env=environment, check=True
    )
    assert "whole-views default is true: no Triton found" in helped.stdout
