"""TTGIR text, as stock Triton prints it, read back as a tree of operations.

The hazard check (``tlx.hazards``) executes a kernel's TTGIR abstractly. Triton's
Python bindings cannot walk an operation's locations, attributes or blocks, and
the project may not link Triton's MLIR, so this module reads the text Triton
prints (``str(module)``, with its debug locations): every operation is one line,
a region opens at a line's trailing ``{`` and closes at a ``}`` line. It keeps,
per operation, its results, its operands (every ``%value`` on its line, in order),
its regions with their block arguments, its attribute text and its location; per
``!ttg.memdesc`` its shape, element type, encoding and memory space. Nothing here
knows what an operation means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LOC_SUFFIX = re.compile(r"\s+loc\((.*)\)\s*$")
_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_ALIAS_DEF = re.compile(r"^(#[\w.]+) = (.*)$")
_RESULTS = re.compile(r"^((?:%[\w.$-]+(?::\d+)?)(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*")
_MEMDESC = re.compile(r"!ttg\.memdesc<([^<>]*(?:<[^<>]*>[^<>]*)*)>")
_ELEMENT_BITS = {"i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16}
_ELEMENT_BITS.update({"f32": 32, "f64": 64, "tf32": 32})


@dataclass(frozen=True)
class MemDescType:
    """``!ttg.memdesc<shape x element, encoding, memory space[, mutable][, alloc shape]>``."""

    shape: tuple[int, ...]
    element: str
    encoding: str  # the encoding attribute, aliases resolved
    memory_space: str  # "smem" or "tmem"
    alloc_shape: tuple[int, ...]

    @property
    def element_bits(self) -> int:
        if self.element in _ELEMENT_BITS:
            return _ELEMENT_BITS[self.element]
        digits = re.findall(r"\d+", self.element)
        return int(digits[0]) if digits else 8

    def encoding_int(self, key: str, default: int = 0) -> int:
        found = re.search(rf"\b{key}\s*=\s*(\d+)", self.encoding)
        return int(found.group(1)) if found else default

    def encoding_flag(self, key: str) -> bool:
        return re.search(rf"\b{key}\s*=\s*true", self.encoding) is not None


@dataclass
class Region:
    """A region's block: its arguments and operations (one block per region)."""

    arguments: list[str] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    label: str = ""  # "default", "partition0", ... for ttg.warp_specialize
    argument_types: list[str] = field(default_factory=list)  # of a function's arguments


@dataclass
class Operation:
    """One operation: its results, its operands (every ``%value`` of its line), its
    regions, its text for attributes, and its location."""

    name: str
    results: list[str]
    operands: list[str]
    text: str  # the operation's line, locations removed
    location: str  # a #loc reference or an inline location
    regions: list[Region] = field(default_factory=list)
    line: int = 0  # line in the TTGIR text

    def attribute_int(self, key: str) -> int | None:
        found = re.search(rf"\b{key}\s*=\s*(-?\d+)", self.text)
        return int(found.group(1)) if found else None

    def has_word(self, word: str) -> bool:
        return re.search(rf"\b{re.escape(word)}\b", _STRING.sub('""', self.text)) is not None

    def string_attribute(self, key: str) -> str | None:
        found = re.search(rf'{re.escape(key)}\s*=\s*"([^"]*)"', self.text)
        return found.group(1) if found else None


@dataclass
class Module:
    """A module's functions by name, with its attribute aliases and location definitions."""

    functions: dict[str, Operation]
    aliases: dict[str, str]
    locations: dict[str, str]

    def memdesc(self, text: str) -> MemDescType | None:
        """The last ``!ttg.memdesc`` type written in ``text`` (an operation's result)."""
        found = _MEMDESC.findall(text)
        return self.parse_memdesc(found[-1]) if found else None

    def parse_memdesc(self, body: str) -> MemDescType:
        parts = split_top_level(body)
        dims = parts[0].split("x")
        shape = tuple(int(d) for d in dims[:-1])
        encoding = self.aliases.get(parts[1].strip(), parts[1].strip()) if len(parts) > 1 else ""
        space = "tmem" if len(parts) > 2 and "tensor_memory" in parts[2] else "smem"
        alloc_shape = shape
        if parts and re.fullmatch(r"\s*\d+(x\d+)*\s*", parts[-1]) and len(parts) > 3:
            alloc_shape = tuple(int(d) for d in parts[-1].strip().split("x"))
        return MemDescType(shape, dims[-1], encoding, space, alloc_shape)

    def source_location(
        self, location: str, depth: int = 0
    ) -> tuple[str, int, list[tuple[str, int]]]:
        """(file, line, callers) of a location: name locations are looked through,
        a call site gives the callee's line and its callers' (outermost last)."""
        text = location.strip()
        if depth > 50:
            return ("?", 0, [])
        if text.startswith("loc(") and text.endswith(")"):
            text = text[4:-1]
        if text.startswith("#loc"):
            return self.source_location(self.locations.get(text, "unknown"), depth + 1)
        found = re.match(r'^"([^"]*)":(\d+):\d+', text)
        if found:
            return (found.group(1), int(found.group(2)), [])
        called = re.match(r"^callsite\((.*) at (.*)\)$", text)
        if called:
            file_name, line, callers = self.source_location(called.group(1), depth + 1)
            caller = self.source_location(called.group(2), depth + 1)
            return (file_name, line, [*callers, (caller[0], caller[1]), *caller[2]])
        named = re.match(r'^"[^"]*"\((.*)\)$', text)
        if named:
            return self.source_location(named.group(1), depth + 1)
        fused = re.match(r"^fused(?:<[^>]*>)?\[(.*)\]$", text)
        if fused:
            return self.source_location(split_top_level(fused.group(1))[0], depth + 1)
        return ("?", 0, [])


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """``text`` split at ``separator`` outside brackets: a tensor descriptor type
    (``tensordesc<fp16[64,64],...>``) keeps its commas."""
    parts, depth, current = [], 0, []
    for character in text:
        if character in "<[({":
            depth += 1
        elif character in ">])}":
            depth -= 1
        if character == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(character)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _strip_location(line: str) -> tuple[str, str]:
    """(the line without its trailing ``loc(...)``, the location text)."""
    depth = 0
    # Find a trailing " loc(" whose parentheses close at the end of the line.
    index = line.rfind(" loc(")
    while index != -1:
        tail = line[index + 1 :]
        depth = 0
        closed_at = -1
        for position, character in enumerate(tail):
            if character == "(":
                depth += 1
            elif character == ")":
                depth -= 1
                if depth == 0:
                    closed_at = position
                    break
        if closed_at == len(tail.rstrip()) - 1:
            return line[:index].rstrip(), tail.strip()
        index = line.rfind(" loc(", 0, index)
    return line, ""


def _block_arguments(text: str) -> list[str]:
    """``%a: type loc(...), %b: type`` -> ``["%a", "%b"]``."""
    return [part.split(":")[0].strip() for part in split_top_level(text) if part.startswith("%")]


def _argument_types(text: str) -> list[str]:
    """``%a: i32 loc(...), %b: !tt.ptr<f16>`` -> ``["i32", "!tt.ptr<f16>"]``."""
    return [
        _strip_location(part.split(":", 1)[1].strip())[0].split(" {")[0].strip()
        for part in split_top_level(text)
        if part.startswith("%") and ":" in part
    ]


def _results(names: str) -> list[str]:
    results = []
    for part in names.split(","):
        part = part.strip()
        if ":" in part:
            name, count = part.split(":")
            results.extend(f"{name}#{i}" for i in range(int(count)))
        else:
            results.append(part)
    return results


def _operands(text: str) -> list[str]:
    return _VALUE.findall(_STRING.sub('""', text))


def parse_module(text: str) -> Module:
    """The functions of a TTGIR module's text, with its aliases and locations."""
    aliases, locations, body = {}, {}, []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        found = _LOC_DEF.match(line)
        if found:
            locations[found.group(1)] = found.group(2)
            continue
        found = _ALIAS_DEF.match(line)
        if found and not line.startswith("#loc"):
            aliases[found.group(1)] = found.group(2)
            continue
        if line:
            body.append((number, line))

    functions: dict[str, Operation] = {}
    # The stack holds (operation, region being filled); a ttg.warp_specialize
    # waits there with no region between its partitions.
    stack: list[tuple[Operation, Region | None]] = []
    for number, raw in body:
        line, location = _strip_location(raw)
        if line.startswith("module ") or line == "}" and not stack:
            continue
        partition = re.match(
            r"^(default|partition\d+)(?:\((.*)\))?(?:\s*num_warps\(\d+\))?\s*\{$", line
        )
        if partition and stack and stack[-1][1] is None:
            operation = stack[-1][0]
            region = Region(label=partition.group(1))
            region.arguments = _block_arguments(partition.group(2) or "")
            operation.regions.append(region)
            stack.append((operation, region))
            continue
        if line.startswith("}") or line.startswith(")"):
            operation, _ = stack.pop() if stack else (None, None)
            rest = line.lstrip("})").strip()
            if operation is None:
                continue
            if location:
                operation.location = location
            if rest.endswith("{"):
                region = Region(label=rest[:-1].strip())
                operation.regions.append(region)
                stack.append((operation, region))
            elif rest.startswith(":") and stack and stack[-1][1] is None:
                stack.pop()  # the last partition of a ttg.warp_specialize
            continue
        if line.startswith("^bb"):
            found = re.match(r"^\^bb\d+(?:\((.*)\))?:$", line)
            if stack and found and found.group(1):
                stack[-1][1].arguments = _block_arguments(found.group(1))
            continue
        results = []
        found = _RESULTS.match(line)
        rest = line
        if found:
            results = _results(found.group(1))
            rest = line[found.end() :]
        name_match = re.match(r'^"?([\w.]+)"?', rest)
        if not name_match:
            continue
        name = name_match.group(1)
        opens = rest.endswith("{")
        operation = Operation(name, results, [], rest, location, [], number)
        if name in ("tt.func", "tt.func public") or rest.startswith("tt.func"):
            header = re.match(
                r"^tt\.func (?:\w+ )*@(\w+)\((.*?)\)\s*(?:->.*?)?(?:attributes.*)?\{$", rest
            )
            region = Region(
                arguments=_block_arguments(header.group(2)) if header else [],
                argument_types=_argument_types(header.group(2)) if header else [],
            )
            operation.regions.append(region)
            functions[header.group(1) if header else f"function{len(functions)}"] = operation
            stack.append((operation, region))
            continue
        if name == "scf.for":
            loop = re.match(
                r"^scf\.for (%[\w.$-]+) = (%\S+) to (%\S+) step (%\S+)(?: iter_args\((.*?)\))?",
                rest,
            )
            if loop:
                carried = split_top_level(loop.group(5)) if loop.group(5) else []
                operation.operands = [loop.group(2), loop.group(3), loop.group(4)]
                operation.operands += [part.split("=")[1].strip() for part in carried]
                region = Region(
                    arguments=[loop.group(1)] + [part.split("=")[0].strip() for part in carried]
                )
                operation.regions.append(region)
        elif name == "scf.while":
            loop = re.match(r"^scf\.while \((.*?)\)", rest)
            carried = split_top_level(loop.group(1)) if loop and loop.group(1) else []
            operation.operands = [part.split("=")[1].strip() for part in carried]
            operation.regions.append(
                Region(arguments=[part.split("=")[0].strip() for part in carried])
            )
        else:
            operation.operands = _operands(rest)
            if opens:
                operation.regions.append(Region())
        if stack and stack[-1][1] is not None:
            stack[-1][1].operations.append(operation)
        if name == "ttg.warp_specialize":
            stack.append((operation, None))
        elif opens:
            stack.append((operation, operation.regions[-1]))
    return Module(functions, aliases, locations)
