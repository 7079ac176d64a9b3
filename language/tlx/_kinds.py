"""The enumerations of the TLX API."""

from __future__ import annotations

import enum


class storage_kind(enum.Enum):
    """Where a buffer lives: ``smem`` (shared memory), ``tmem`` (Blackwell tensor
    memory) or ``smemCluster`` (distributed shared memory of a CTA cluster; not
    supported by storage aliasing). ``.value`` is the name."""

    smem = "smem"
    tmem = "tmem"
    smemCluster = "smemCluster"


class reuse_group_type(enum.Enum):
    """How the children of a ``reuse_group`` share memory at each buffer index:
    ``shared`` (they may overlap; at the same offset) or ``distinct`` (never
    overlap; placed one after another)."""

    shared = "shared"
    distinct = "distinct"
