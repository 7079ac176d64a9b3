"""Makes every Context of tlx_mlir know the tlx dialects and passes.

MLIR's `_mlir_libs/__init__.py` imports `_site_initialize_<i>` modules when
the package is first used: their `register_dialects` fills the registry that
each new Context appends.
"""

from ._tlxRegistration import insert_dialects, register_passes

register_passes()


def register_dialects(registry):
    insert_dialects(registry)
