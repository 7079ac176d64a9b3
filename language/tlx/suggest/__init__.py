"""Suggested reuse trees (``tlx.suggest_reuse``, ``python -m tlx suggest``): the smallest tree
a kernel's own synchronization makes safe, found from the hazard check's execution, scored by
the planner and proved by the hazard check. docs/suggest.md. Its modules, by job:

* ``override``: tracing a kernel with other trees than its own (stripped, or suggested);
* ``pairs``: the pairs of buffer indices every access of which the kernel orders;
* ``search``: the smallest tree over those pairs, by the planner's numbers;
* ``code``: a tree as the ``tlx.reuse_group`` code that builds it;
* ``suggestion``: the three steps together, and the report.
"""

from .suggestion import SpecSuggestion, Suggestion, suggest_reuse

__all__ = ["SpecSuggestion", "Suggestion", "suggest_reuse"]
