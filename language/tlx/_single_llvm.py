"""Refuses to import tlx where tlx_mlir was imported: tlx imports Triton, whose
libtriton.so holds its own LLVM and MLIR, and two builds of them in one process
collide (tlx_mlir, dialect/python/tlx_mlir/__init__.py, refuses the reverse
order)."""

import sys

if "tlx_mlir" in sys.modules:
    raise ImportError(
        "tlx cannot be imported in a process that has imported tlx_mlir: tlx imports "
        "Triton, and two builds of LLVM/MLIR in one process collide (tlx_mlir's "
        "LLVM/MLIR 22, Triton's inside libtriton.so); use them in separate processes, "
        "e.g. run one half with subprocess"
    )
