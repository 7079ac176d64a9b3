"""Op classes of Triton's `tt` memory subset, generated from its ODS
(dialect/include/tlx/Dialect/Triton)."""

from ._tt_ops_gen import *  # noqa: F403
