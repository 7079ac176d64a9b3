"""The integer scalars of the abstract execution: constants, ``arith``, casts, program ids.

An SSA value of a thread's environment (``Thread.env``, language/tlx/hazards/scheduling.py) is
an ``int`` where the check can compute it, a ``Memory`` (language/tlx/hazards/memory.py) for a
``!ttg.memdesc``, ``DATA`` for what the check does not compute (a tensor, a float, a value read
from global memory: a load's, an atomic's), or ``None``: an integer that depends on an argument
the check was not given. Integers decide loop trips, buffer indices, mbarrier phases and
predicates; ``None`` and ``DATA`` only become an error (``Incomplete``) where one of those
needs it. A branch on ``DATA`` (split-K's last CTA to arrive, by an atomic) is executed both
ways (language/tlx/hazards/execution.py, ``run_if``).

Each function here is the handler of its operations in the execution's dispatch table
(``Execution.HANDLERS``, language/tlx/hazards/execution.py): ``handler(execution, thread,
operation)``. ``SCALAR_HANDLERS`` maps every operation name to its handler; adding an
operation is one row (of ``BINARY`` for a binary one).
"""

from __future__ import annotations

from .memory import Memory

_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}


def _divide(a, b):
    if b == 0:
        return None
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _remainder(a, b):
    if b == 0:
        return None
    return a - b * _divide(a, b)


BINARY = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _divide,
    "arith.divui": _divide,
    "arith.remsi": _remainder,
    "arith.remui": _remainder,
    "arith.ceildivsi": lambda a, b: -_divide(-a, b) if b else None,
    "arith.ceildivui": lambda a, b: -_divide(-a, b) if b else None,
    "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.shrui": lambda a, b: a >> b,
    "arith.minsi": min,
    "arith.minui": min,
    "arith.maxsi": max,
    "arith.maxui": max,
}
INTEGERS = frozenset({"i1", "i8", "i16", "i32", "i64"})
# Integer parameter types as a kernel's signature writes them.
INTEGER_SIGNATURES = INTEGERS | {"u1", "u8", "u16", "u32", "u64"}
_CASTS = frozenset({"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"})


class _Data:
    """The value of what the check does not compute (``DATA``)."""

    def __repr__(self) -> str:
        return "DATA"


DATA = _Data()


def _combined(operands):
    """``None`` when an operand depends on an argument not given, else ``DATA`` when one is
    data, else ``...`` (every operand is an integer)."""
    if any(operand is None for operand in operands):
        return None
    if any(not isinstance(operand, int) for operand in operands):
        return DATA
    return ...


def constant(execution, thread, operation) -> None:
    """``arith.constant``: an integer or boolean; a dense tensor or a float is ``DATA``."""
    text = operation.text
    if "dense<" in text:
        thread.env[operation.results[0]] = DATA
        return
    word = text.split("arith.constant", 1)[1].strip().split(" ")[0].rstrip(":")
    if word in ("true", "false"):
        thread.env[operation.results[0]] = int(word == "true")
        return
    try:
        thread.env[operation.results[0]] = int(word)
    except ValueError:
        thread.env[operation.results[0]] = DATA


def binary(execution, thread, operation) -> None:
    env = thread.env
    a, b = env.get(operation.operands[0]), env.get(operation.operands[1])
    known = _combined((a, b))
    env[operation.results[0]] = BINARY[operation.name](a, b) if known is ... else known


def compare(execution, thread, operation) -> None:
    env = thread.env
    predicate = operation.text.split("arith.cmpi", 1)[1].strip().split(",")[0]
    a, b = env.get(operation.operands[0]), env.get(operation.operands[1])
    known = _combined((a, b))
    env[operation.results[0]] = int(_COMPARE[predicate](a, b)) if known is ... else known


def select(execution, thread, operation) -> None:
    """A scalar, or a memory descriptor: both are chosen by a known condition."""
    env = thread.env
    condition = env.get(operation.operands[0])
    chosen = condition
    choices = [env.get(operand) for operand in operation.operands[1:]]
    if not isinstance(condition, int) and any(isinstance(c, Memory) for c in choices):
        execution.unmodelled_operation(
            operation, " (selects a memory descriptor by a value the check does not compute)"
        )
    if isinstance(condition, int):
        chosen = env.get(operation.operands[1 if condition else 2])
    elif condition is DATA:
        chosen = _combined(choices)
        chosen = DATA if chosen is ... else chosen
    env[operation.results[0]] = chosen


def cast(execution, thread, operation) -> None:
    thread.env[operation.results[0]] = thread.env.get(operation.operands[0])


def _axis(text: str) -> int:
    for axis, word in enumerate((" x", " y", " z")):
        if word + " " in text + " " or word + ":" in text:
            return axis
    return 0


def program_id(execution, thread, operation) -> None:
    thread.env[operation.results[0]] = execution.program_id[_axis(operation.text)]


def num_programs(execution, thread, operation) -> None:
    thread.env[operation.results[0]] = execution.num_programs[_axis(operation.text)]


def opaque(execution, thread, operation) -> None:
    """An operation the check does not evaluate (pure arithmetic on tensors or floats, a
    global-memory access, ...): its results are ``DATA``. One that takes a memory descriptor
    may touch a spec's memory, which the check cannot follow."""
    env = thread.env
    if any(isinstance(env.get(operand), Memory) for operand in operation.operands):
        execution.unmodelled_operation(operation, " (uses a memory descriptor)")
    for result in operation.results:
        env[result] = DATA


SCALAR_HANDLERS = {
    "arith.constant": constant,
    **dict.fromkeys(BINARY, binary),
    "arith.cmpi": compare,
    "arith.select": select,
    **dict.fromkeys(_CASTS, cast),
    "tt.get_program_id": program_id,
    "tt.get_num_programs": num_programs,
}
