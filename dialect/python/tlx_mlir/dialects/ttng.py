"""Op classes of Triton's `ttng` memory subset, generated from its ODS
(dialect/include/tlx/Dialect/TritonNvidiaGPU)."""

from ._ttng_ops_gen import *  # noqa: F403
