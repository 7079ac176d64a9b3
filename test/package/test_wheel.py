"""The wheel is the product: built with build isolation from a clean copy of the
repository (the files git tracks, plus new ones it does not ignore), installed into a
fresh virtual environment, it gives ``triton-opt`` and ``python -m tlx plan`` with
nothing of the repository or its build on PATH or PYTHONPATH.

Slow (it builds the C++ half again): scripts/test.sh runs it once, with the newest
Triton, after the other suites. Needs LLVM/MLIR 22 (scripts/install.sh) and PyPI.
"""

import os
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

KERNEL = """\
import tlx
from triton.experimental.gluon import language as gl


@tlx.jit
def ring_and_tile(x_ptr, STAGES: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((128, 64), gl.float16, STAGES, reuse=spec)
    b = tlx.local_alloc((64, 256), gl.float16, STAGES, reuse=spec)
    c = tlx.local_alloc((128, 256), gl.float16, 1, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            c,
            tlx.reuse_group(
                tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct),
                group_size=STAGES,
            ),
            group_type=tlx.reuse_group_type.shared,
        )
    )
"""

needs_llvm = pytest.mark.skipif(
    not Path("/usr/lib/llvm-22/lib/cmake/mlir").is_dir(),
    reason="building triton-opt needs LLVM/MLIR 22 (scripts/install.sh)",
)


def run(command, **options):
    result = subprocess.run(command, capture_output=True, text=True, check=False, **options)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def clean_copy(destination: Path) -> Path:
    """What a clean clone of the working tree has: tracked files and new files git
    does not ignore (no build/, no .venv, no built extension)."""
    listed = run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPOSITORY
    )
    for name in filter(None, listed.split("\0")):
        source = REPOSITORY / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


@needs_llvm
def test_the_wheel_carries_triton_opt_and_the_plan_cli(tmp_path):
    source = clean_copy(tmp_path / "source")
    wheels = tmp_path / "wheels"
    environment = dict(os.environ)
    for variable in ("PYTHONPATH", "TLX_BUILD_DIR", "TLX_BUILD_MLIR", "TLX_USE_MIMALLOC"):
        environment.pop(variable, None)
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source],
        env=environment,
    )
    (wheel,) = wheels.glob("tlx-*.whl")

    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", wheel], env=environment)

    # Only the fresh environment and the system's own tools on PATH, outside the repository.
    environment["PATH"] = f"{fresh / 'bin'}:/usr/bin:/bin"
    environment["TRITON_DEFAULT_FP_FUSION"] = "1"
    work = tmp_path / "work"
    work.mkdir()
    triton_opt = shutil.which("triton-opt", path=environment["PATH"])
    assert triton_opt == str(fresh / "bin" / "triton-opt")

    lowered = run(
        [
            triton_opt,
            "--tlx-storage-alias-lowering",
            "--tlx-rewrite-local-alias",
            REPOSITORY / "test" / "TLX" / "lowering.mlir",
        ],
        cwd=work,
        env=environment,
    )
    assert "ttg.local_alloc" in lowered and "tlx.storage_alias_spec" not in lowered

    package = run(
        [python, "-c", "import tlx, tlx.planner; print(tlx.__file__)"], cwd=work, env=environment
    )
    assert package.startswith(str(fresh))

    (work / "kernel.py").write_text(KERNEL)
    report = run(
        [
            python,
            "-m",
            "tlx",
            "plan",
            "kernel.py::ring_and_tile",
            "--target",
            "sm_90a",
            "--signature",
            "x_ptr=*fp16",
            "--constexpr",
            "STAGES=4",
            "--svg",
            "pictures",
        ],
        cwd=work,
        env=environment,
    )
    assert "smem region: 196608 bytes (ideal 196608, padding 0)" in report
    assert "  smem: 196608 of 232448 bytes (35840 left): spec 196608" in report
    picture = ElementTree.parse(work / "pictures" / "ring_and_tile.spec.svg").getroot()
    texts = {element.text for element in picture.iter("{http://www.w3.org/2000/svg}text")}
    assert {"a", "b", "c", "c[0]"} <= texts
