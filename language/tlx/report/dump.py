"""``TLX_DUMP_ALIAS_IR=1``: a kernel's specs as a TLX-dialect module.

The module has the kernel's specs, their users typed by the ``!ttg.memdesc``
text Triton prints, their reuse groups and ``set_buffer_overlap``, so that
``triton-opt --tlx-storage-alias-lowering`` reproduces the plan the kernel used.
It is text only: nothing here plans or computes a number.
"""

from __future__ import annotations

import os
import re
import sys

DUMP_ENVIRONMENT_VARIABLE = "TLX_DUMP_ALIAS_IR"


def dump_if_asked(trace) -> None:
    """Writes the module of ``trace``'s specs to stderr when TLX_DUMP_ALIAS_IR is set
    (to anything but 0)."""
    if os.environ.get(DUMP_ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
        sys.stderr.write(dump_module_text(trace))
        sys.stderr.flush()


_BARE_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_NOT_IN_SSA_NAME = re.compile(r"[^A-Za-z0-9_$.]")


class _Names:
    """Unique SSA names within one function."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, wanted: str) -> str:
        base = _NOT_IN_SSA_NAME.sub("_", wanted) or "v"
        if base[0].isdigit():
            base = f"v{base}"
        name, suffix = base, 1
        while name in self.used:
            name = f"{base}_{suffix}"
            suffix += 1
        self.used.add(name)
        return f"%{name}"


def _symbol(name: str) -> str:
    if _BARE_IDENTIFIER.match(name):
        return f"@{name}"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'@"{escaped}"'


def _spec_type(spec) -> str:
    size = "" if spec.explicit_size_bytes is None else f", {spec.explicit_size_bytes}"
    return f"!tlx.storage_alias_spec<{spec.storage.value}{size}>"


def _spec_lines(spec, names: _Names) -> list[str]:
    spec_type = _spec_type(spec)
    spec_name = names.fresh(spec.name)
    size = "" if spec.explicit_size_bytes is None else f", size = {spec.explicit_size_bytes}"
    lines = [
        f"{spec_name} = tlx.storage_alias_spec storage = {spec.storage.value}{size} : {spec_type}"
    ]
    user_values = []
    for user in (*spec.users, *spec.followers):
        value = names.fresh(user.name)
        user_values.append((value, user.type_text))
        lines.append(
            f"{value} = tlx.storage_alias_local_alloc {spec_name} : {spec_type} -> {user.type_text}"
        )
    if spec.overlap_phases:
        trees = [_group_lines(tree, user_values, names, lines) for tree in spec.overlap_phases]
        root, root_type = names.fresh("phases"), "!tlx.reuse_phases"
        values = ", ".join(value for value, _ in trees)
        types = ", ".join(tree_type for _, tree_type in trees)
        lines.append(f"{root} = tlx.reuse_phases({values}) : ({types}) -> {root_type}")
        lines.append(
            f"tlx.set_buffer_overlap({spec_name}, {root}) : ({spec_type}, {root_type}) -> ()"
        )
    elif spec.overlap_tree is not None:
        root, root_type = _group_lines(spec.overlap_tree, user_values, names, lines)
        lines.append(
            f"tlx.set_buffer_overlap({spec_name}, {root}) : ({spec_type}, {root_type}) -> ()"
        )
    return lines


def _group_lines(group, user_values, names: _Names, lines: list[str]) -> tuple[str, str]:
    operands = []
    for child in group.children:
        if isinstance(child, int):
            operands.append(user_values[child])
        else:
            operands.append(_group_lines(child, user_values, names, lines))
    value = names.fresh("group")
    group_type = f"!tlx.reuse_group<{group.kind}>"
    group_size = "" if group.group_size == 1 else f", group_size = {group.group_size}"
    values = ", ".join(operand for operand, _ in operands)
    types = ", ".join(operand_type for _, operand_type in operands)
    lines.append(
        f"{value} = tlx.reuse_group({values}) group_kind = {group.kind}{group_size} : "
        f"({types}) -> {group_type}"
    )
    return value, group_type


def dump_module_text(trace) -> str:
    """The TLX-dialect module of every spec ``trace`` recorded."""
    functions: dict[str, list] = {}
    for spec in trace.specs:
        functions.setdefault(spec.function_name, []).append(spec)
    options = trace.options
    lines = [
        f"// TLX storage alias specs of kernel {trace.kernel_name} ({trace.target_name})",
        f'module attributes {{"ttg.num-ctas" = {options.num_ctas} : i32, '
        f'"ttg.num-warps" = {options.num_warps} : i32, ttg.target = "{trace.target_name}", '
        f'"ttg.threads-per-warp" = {options.warp_size} : i32}} {{',
    ]
    for function_name, specs in functions.items():
        lines.append(f"  tt.func {_symbol(function_name)}() {{")
        names = _Names()
        for spec in specs:
            lines.extend(f"    {line}" for line in _spec_lines(spec, names))
        lines.append("    tt.return")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
