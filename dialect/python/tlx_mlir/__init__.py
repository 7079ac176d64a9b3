"""MLIR's Python bindings with the `tlx` dialect, the Triton memory subset
(`tt`, `ttg`, `ttng`) and the storage alias passes: what triton-opt knows,
in process (docs/mlir.md).

    from tlx_mlir import ir, passmanager
    from tlx_mlir.dialects import tlx

Every `ir.Context` knows the dialects, and `PassManager.parse` the passes.
The package holds LLVM/MLIR 22; Triton holds its own LLVM and MLIR, and two
builds of them in one process collide (each its own TypeIDs, option
registries and signal handlers). So importing tlx_mlir where Triton was
imported is refused, and so is importing Triton (or `tlx`, which imports it)
once tlx_mlir is imported: run the other half in a subprocess.
"""

import importlib.abc
import sys

_COLLISION = (
    "two builds of LLVM/MLIR in one process collide (tlx_mlir's LLVM/MLIR 22, "
    "Triton's inside libtriton.so): use tlx_mlir and Triton (or tlx, which "
    "imports it) in separate processes, e.g. run one half with subprocess, or "
    "reach the MLIR half through the triton-opt executable"
)


def _is_triton(name):
    return name == "triton" or name.startswith("triton.")


if any(_is_triton(name) for name in sys.modules):
    raise ImportError(
        f"tlx_mlir cannot be imported in a process that has imported Triton: {_COLLISION}"
    )


class _RefuseTriton(importlib.abc.MetaPathFinder):
    """Refuses `import triton` in a process that has imported tlx_mlir."""

    def find_spec(self, fullname, path=None, target=None):
        if _is_triton(fullname):
            raise ImportError(
                f"Triton cannot be imported in a process that has imported tlx_mlir: {_COLLISION}"
            )
        return None


sys.meta_path.insert(0, _RefuseTriton())


def register_dialects(context):
    """Makes `context` know the `tlx` dialect, the Triton memory subset and
    the upstream dialects Triton prints, and loads them (a Context of this
    package knows them already; this is for a Context made before the
    package's dialects were registered, or to load them eagerly)."""
    from ._mlir_libs import _tlxRegistration
    from .ir import DialectRegistry

    registry = DialectRegistry()
    _tlxRegistration.insert_dialects(registry)
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
