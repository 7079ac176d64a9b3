"""The enumerations of the TLX API."""

from __future__ import annotations

import enum


class _NamedMembers(enum.EnumMeta):
    """An enumeration whose unknown members are AttributeErrors that list the
    valid ones (``tlx.reuse_group_type.share`` names ``shared`` and ``distinct``)."""

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        members = ", ".join(cls.__members__)
        raise AttributeError(
            f"tlx.{cls.__name__} has no member {name!r}; its members are {members}"
        )


class storage_kind(enum.Enum, metaclass=_NamedMembers):
    """Where a buffer lives: ``smem`` (shared memory), ``tmem`` (Blackwell tensor
    memory) or ``smemCluster`` (distributed shared memory of a CTA cluster; not
    supported by storage aliasing). ``.value`` is the name."""

    smem = "smem"
    tmem = "tmem"
    smemCluster = "smemCluster"


class reuse_group_type(enum.Enum, metaclass=_NamedMembers):
    """How the children of a ``reuse_group`` share memory at each buffer index:
    ``shared`` (they may overlap; at the same offset) or ``distinct`` (never
    overlap; placed one after another)."""

    shared = "shared"
    distinct = "distinct"
