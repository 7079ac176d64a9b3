"""Op classes of Triton's `ttg` memory subset, generated from its ODS
(dialect/include/tlx/Dialect/TritonGPU)."""

from ._ttg_ops_gen import *  # noqa: F403
