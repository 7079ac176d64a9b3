"""The `tlx` dialect: op classes generated from its ODS
(dialect/include/tlx/Dialect/TLX/TLXOps.td), its enums, and the attributes
the storage alias passes record, `BackingAttr` (on a sized
`tlx.storage_alias_spec`) and `PlacementAttr` (on a placed
`tlx.storage_alias_local_alloc`)."""

from .._mlir_libs._tlxDialects import BackingAttr, PlacementAttr  # noqa: F401
from ._tlx_enum_gen import *  # noqa: F403
from ._tlx_ops_gen import *  # noqa: F403
