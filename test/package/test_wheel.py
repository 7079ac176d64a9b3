"""The wheel is the product: built with build isolation from a clean copy of the
repository (the files git tracks, plus new ones it does not ignore), installed into a
fresh virtual environment, it gives ``triton-opt``, ``python -m tlx plan``, the MLIR
Python package ``tlx_mlir`` and the kernels (``tlx_kernels``, with torch) with nothing of
the repository or its build on PATH or PYTHONPATH. Where LLVM/MLIR 22 is hidden from
CMake, the wheel holds the planner extension alone and the build ends with the line that
says so.

Slow (it builds the C++ half again): scripts/test.sh runs it once, with the newest
Triton, after the other suites. Needs LLVM/MLIR 22 (scripts/install.sh) and PyPI.
"""

import os
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ElementTree
import zipfile
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

# The kernels as a user imports them, one compiled for sm_90a on the CPU.
KERNELS = """\
import tlx_kernels
from tlx_kernels import attention, matmul
from tlx_kernels.hopper import gemm

compiled = gemm.compile_for_hopper(gemm.default_config())
print(tlx_kernels.__file__)
print(attention.__name__, matmul.__name__, len(compiled.asm["cubin"]) > 0)
"""

needs_llvm = pytest.mark.skipif(
    not Path("/usr/lib/llvm-22/lib/cmake/mlir").is_dir(),
    reason="building triton-opt needs LLVM/MLIR 22 (scripts/install.sh)",
)


def run(command, **options):
    result = subprocess.run(command, capture_output=True, text=True, check=False, **options)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def build_wheel(source: Path, wheels: Path, environment: dict) -> tuple[Path, str]:
    """The wheel pip builds from `source` with build isolation, and the build's log (pip
    shows the build backend's output, on stderr, when verbose)."""
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", wheels, source]
    built = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
    )
    assert built.returncode == 0, f"{command} failed:\n{built.stdout}"
    # pip indents what the backend prints.
    log = "\n".join(line.strip() for line in built.stdout.splitlines())
    (wheel,) = wheels.glob("tlx-*.whl")
    return wheel, log


def build_environment() -> dict:
    environment = dict(os.environ)
    for variable in ("PYTHONPATH", "TLX_BUILD_DIR", "TLX_BUILD_MLIR", "TLX_USE_MIMALLOC"):
        environment.pop(variable, None)
    environment.pop("MLIR_DIR", None)
    return environment


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
    environment = build_environment()
    wheel, log = build_wheel(source, tmp_path / "wheels", environment)
    assert not [line for line in log.splitlines() if line.startswith("tlx:")]
    names = zipfile.ZipFile(wheel).namelist()
    assert "tlx_mlir/_mlir_libs/libTLXPythonCAPI.so" in names
    assert "tlx_mlir/dialects/_tlx_ops_gen.py" in names
    assert "tlx_kernels/hopper/gemm_kernel.py" in names
    assert "tlx_kernels/blackwell/flash_attention.py" in names

    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=True)
    python = fresh / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", wheel], env=environment)
    # The kernels launch on torch tensors (the wheel's "tutorials" extra); a CPU wheel.
    run([python, "-m", "pip", "install", "-q", "torch==2.13.0"], env=environment)

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

    # The same lowering in process, with MLIR's Python bindings of the wheel.
    in_process = run(
        [
            python,
            "-c",
            "import sys\n"
            "from tlx_mlir import ir, passmanager\n"
            "with ir.Context():\n"
            "    module = ir.Module.parse(open(sys.argv[1]).read())\n"
            "    passmanager.PassManager.parse('builtin.module(tlx-storage-alias-lowering,"
            "tlx-rewrite-local-alias)').run(module.operation)\n"
            "    print(module)\n",
            REPOSITORY / "test" / "TLX" / "lowering.mlir",
        ],
        cwd=work,
        env=environment,
    )
    assert in_process == lowered

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

    kernels = run([python, "-c", KERNELS], cwd=work, env=environment).splitlines()
    assert kernels[0].startswith(str(fresh))
    assert kernels[1] == "attention autotuned_matmul True"


def test_without_llvm_the_wheel_holds_the_planner_and_says_what_is_missing(tmp_path):
    """MLIR hidden from CMake (MLIR_DIR names a directory without it): the planner
    extension is built, triton-opt and tlx_mlir are not, and the build's last word
    names them and the packages that bring them."""
    source = clean_copy(tmp_path / "source")
    environment = build_environment()
    environment["MLIR_DIR"] = str(tmp_path / "no-mlir")
    environment["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    wheel, log = build_wheel(source, tmp_path / "wheels", environment)

    line = (
        "tlx: triton-opt and the tlx_mlir Python package not built: LLVM/MLIR 22 not found "
        "(apt install llvm-22-dev libmlir-22-dev mlir-22-tools, or set MLIR_DIR)"
    )
    assert line in log.splitlines(), log
    # The build asked for nothing MLIR's Python bindings need.
    assert "xtc-mlir-dev" not in log
    names = zipfile.ZipFile(wheel).namelist()
    (planner,) = [name for name in names if name.startswith("tlx/_planner")]
    assert not [name for name in names if "triton-opt" in name or name.startswith("tlx_mlir")]

    # The planner extension stands alone (tlx itself imports Triton, which this
    # environment need not have).
    zipfile.ZipFile(wheel).extract(planner, tmp_path / "unpacked")
    plan = run(
        [
            sys.executable,
            "-c",
            "import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('tlx._planner', sys.argv[1])\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "print(module.__name__)\n",
            tmp_path / "unpacked" / planner,
        ],
        env=environment,
    )
    assert plan == "tlx._planner\n"
