"""A reuse tree written as the ``tlx.reuse_group`` code that builds it, to paste into a kernel."""

from __future__ import annotations

from .. import planner

_INDENT = "    "
_LINE = 88


def _node(tree, names, depth: int) -> str:
    if isinstance(tree, int):
        return names[tree]
    children = [_node(child, names, depth + 1) for child in tree.children]
    arguments = list(children)
    if tree.kind == "distinct":
        arguments.append("group_type=tlx.reuse_group_type.distinct")
    if tree.group_size != 1:
        arguments.append(f"group_size={tree.group_size}")
    flat = f"tlx.reuse_group({', '.join(arguments)})"
    if len(flat) + len(_INDENT) * depth <= _LINE and "\n" not in flat:
        return flat
    inner = _INDENT * (depth + 1)
    body = "".join(f"{inner}{argument},\n" for argument in arguments)
    return f"tlx.reuse_group(\n{body}{_INDENT * depth})"


def _phases(phases, names) -> str:
    trees = [_node(tree, names, 2) for tree in phases]
    body = "".join(f"{_INDENT * 2}{tree},\n" for tree in trees)
    return f"tlx.reuse_phases(\n{body}{_INDENT})"


def tree_code(spec_name: str, tree: planner.Group | tuple, buffer_names) -> str:
    """``spec.set_buffer_overlap(tlx.reuse_group(...))`` for ``tree`` over the buffers
    named ``buffer_names`` (the Python variables of their ``local_alloc``); a tuple of trees
    is a ``tlx.reuse_phases``."""
    names = list(buffer_names)
    body = _phases(tree, names) if isinstance(tree, tuple) else _node(tree, names, 1)
    return f"{spec_name}.set_buffer_overlap(\n{_INDENT}{body}\n)"
