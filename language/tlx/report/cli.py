"""``python -m tlx plan``: a kernel's memory plan, read before compiling it;
``python -m tlx check``: the races its aliased buffers allow (docs/hazards.md);
``python -m tlx suggest``: the smallest race-free reuse tree, proved (docs/suggest.md).

Runs only Triton's front end (``tlx.kernel_plans``): no GPU, no PTX. Prints,
for each spec, the planner's memory map (every buffer by its Python name, its
size, offset and stride, which buffers share units in each buffer group, the
padding and why), the under-utilisation advice, and the kernel's total against
the target's budget; ``--svg DIR`` also writes ``DIR/<kernel>.<spec>.svg``.
A plan the compiler rejects prints the compiler's error and exits with 1; bad
arguments exit with 2. docs/plan-report.md shows the output.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

from .. import planner
from ..hazards.ttgir import split_top_level
from .budget import budget_of

USAGE_ERROR = 2
PLAN_ERROR = 1
HAZARDS_FOUND = 1
NOT_CHECKED = 3

_TARGETS = {"sm_90a": 90, "sm_100a": 100}


class UsageError(Exception):
    """A bad command line: printed and exit status 2."""


def compile_error_text(error) -> str:
    """A ``CompilationError`` as printed: Triton reports an error inside a called function
    as one at the call with no message, caused by one in the function; the chain is
    printed down to the error that has a message, the call first."""
    parts = [str(error)]
    while getattr(error, "error_message", "") is None and error.__cause__ is not None:
        error = error.__cause__
        parts.append(str(error))
    return "\n".join(parts)


def parse_signature(entries: list[str]) -> dict[str, str]:
    """``["a=*fp16,i=i32"]`` -> ``{"a": "*fp16", "i": "i32"}``."""
    signature = {}
    for entry in entries:
        for item in split_top_level(entry):
            name, equals, type_text = item.partition("=")
            if not equals or not name.strip() or not type_text.strip():
                raise UsageError(f"--signature entry {item!r} is not NAME=TYPE (e.g. a=*fp16)")
            signature[name.strip()] = type_text.strip()
    return signature


def parse_constexpr(entries: list[str]) -> dict[str, object]:
    """``["N=64,CAUSAL=True", "MODE=fast", "SHAPE=(64, 64)"]`` -> ``{"N": 64, "CAUSAL": True,
    "MODE": "fast", "SHAPE": (64, 64)}``: each entry a comma list, as ``--signature`` takes
    (commas inside brackets stay with their value); Python literals, anything else a
    string."""
    constexprs = {}
    for entry in entries:
        items = split_top_level(entry)
        if not items:
            raise UsageError(f"--constexpr {entry!r} is not NAME=VALUE (e.g. BLOCK=64)")
        for item in items:
            name, equals, value_text = item.partition("=")
            if not equals or not name.strip():
                within = "" if item == entry.strip() else f" (in {entry!r})"
                raise UsageError(
                    f"--constexpr item {item!r}{within} is not NAME=VALUE (e.g. BLOCK=64)"
                )
            try:
                value = ast.literal_eval(value_text.strip())
            except (ValueError, SyntaxError):
                value = value_text.strip()
            constexprs[name.strip()] = value
    return constexprs


def load_kernel(location: str):
    """The ``@tlx.jit`` kernel ``KERNEL`` of ``FILE.py::KERNEL``."""
    from ..api import JITFunction

    file_text, separator, kernel_name = location.rpartition("::")
    if not separator or not file_text or not kernel_name:
        raise UsageError(f"{location!r} is not FILE.py::KERNEL")
    path = Path(file_text).resolve()
    if not path.is_file():
        raise UsageError(f"{file_text}: no such file")
    # A script may import the modules beside it (as the tutorials do); a module of a package
    # imports its package by name, and its folder on sys.path would shadow other modules
    # with its modules' names (tlx_kernels/hopper/gemm.py as `gemm`).
    if not (path.parent / "__init__.py").is_file():
        sys.path.insert(0, str(path.parent))
    module_name = f"_tlx_plan_{path.stem.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    kernel = getattr(module, kernel_name, None)
    if not isinstance(kernel, JITFunction):
        kernels = sorted(
            name for name, value in vars(module).items() if isinstance(value, JITFunction)
        )
        found = "is not a @tlx.jit function" if kernel is not None else "is not defined"
        raise UsageError(
            f"{kernel_name} {found} in {file_text}; its @tlx.jit kernels: "
            f"{', '.join(kernels) or 'none'}"
        )
    return kernel


def full_signature(kernel, signature: dict[str, str], constexprs: dict[str, object]):
    """The signature of every parameter of ``kernel`` (constexprs as
    ``"constexpr"``) and the constexpr values, defaults filled in."""
    names = [param.name for param in kernel.params]
    unknown = sorted(set(signature) - set(names)) + sorted(set(constexprs) - set(names))
    if unknown:
        raise UsageError(
            f"{kernel.__name__} has no parameter {', '.join(unknown)} (its parameters: "
            f"{', '.join(names)})"
        )
    constexprs = dict(constexprs)
    full, missing = {}, []
    for param in kernel.params:
        if param.name in constexprs:
            full[param.name] = "constexpr"
        elif param.name in signature:
            full[param.name] = signature[param.name]
        elif param.is_constexpr and param.has_default:
            full[param.name] = "constexpr"
            constexprs[param.name] = param.default
        else:
            missing.append(param.name)
    if missing:
        raise UsageError(
            f"parameter {', '.join(missing)} of {kernel.__name__} has no type: give "
            "--signature NAME=TYPE (e.g. *fp16, i32) or --constexpr NAME=VALUE"
        )
    return full, constexprs


def _check_ctas_per_sm(ctas_per_sm: int) -> None:
    """The planner's rule for ``--ctas-per-sm`` (``planner.checked_ctas_per_sm``), as a usage
    error of the command line."""
    try:
        planner.checked_ctas_per_sm(ctas_per_sm)
    except ValueError as error:
        raise UsageError(f"--ctas-per-sm: {error}") from None


def report(kernel_name: str, target: str, num_warps: int, spec_plans, ctas_per_sm: int = 1) -> str:
    """The text ``python -m tlx plan`` prints: the total against one CTA's share of an SM
    where ``ctas_per_sm`` CTAs (checked by ``main``) are to share one."""
    sharing = "" if ctas_per_sm == 1 else f", {ctas_per_sm} CTAs an SM"
    lines = [f"kernel {kernel_name} for {target} (num_warps={num_warps}{sharing})", ""]
    for spec_plan in spec_plans:
        lines.append(spec_plan.describe().rstrip("\n"))
        if spec_plan.advice:
            lines.append("advice:")
            lines.extend(f"  {split.message}" for split in spec_plan.advice)
        lines.append("")
    budget = budget_of(spec_plans, _TARGETS[target], ctas_per_sm)
    if budget.storages:
        lines.append("total (the kernel's tlx regions):")
        lines.extend(f"  {line}" for line in budget.describe().splitlines())
    else:
        lines.append("the kernel allocates no tlx region")
    return "\n".join(lines) + "\n"


def write_svgs(directory: Path, kernel_name: str, spec_plans) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for spec_plan in spec_plans:
        path = directory / f"{kernel_name}.{spec_plan.name}.svg"
        path.write_text(spec_plan.to_svg())
        paths.append(path)
    return paths


def parse_values(entries: list[str]) -> dict[str, int]:
    """``["K=256", "M=128"]`` -> ``{"K": 256, "M": 128}``: integer arguments."""
    values = {}
    for entry in entries:
        name, equals, value_text = entry.partition("=")
        try:
            value = int(value_text.strip(), 0)
        except ValueError:
            value = None
        if not equals or not name.strip() or value is None:
            raise UsageError(f"--value {entry!r} is not NAME=INTEGER (e.g. K=256)")
        values[name.strip()] = value
    return values


def _kernel_arguments(command) -> None:
    command.add_argument("kernel", metavar="FILE.py::KERNEL", help="the @tlx.jit kernel")
    command.add_argument("--target", choices=sorted(_TARGETS), required=True)
    command.add_argument(
        "--signature",
        action="append",
        default=[],
        metavar="NAME=TYPE,...",
        help='types of the non-constexpr parameters, e.g. "a=*fp16,n=i32"',
    )
    command.add_argument(
        "--constexpr",
        action="append",
        default=[],
        metavar="NAME=VALUE,...",
        help='values of constexpr parameters, e.g. "BLOCK=64,CAUSAL=True" (may be repeated)',
    )
    command.add_argument("--num-warps", type=int, default=4)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tlx", description="TLX storage aliasing tools."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser(
        "plan",
        help="print a kernel's memory plan (Triton's front end only; no GPU)",
        description="Print the memory plan of every storage alias spec of a @tlx.jit kernel: "
        "Triton's front end only, no GPU, no PTX.",
    )
    _kernel_arguments(plan)
    plan.add_argument("--svg", type=Path, metavar="DIR", help="write DIR/<kernel>.<spec>.svg")
    plan.add_argument(
        "--ctas-per-sm",
        type=int,
        default=1,
        metavar="N",
        help="CTAs to run on one SM at once: the total is against each one's share (default 1)",
    )
    check = commands.add_parser(
        "check",
        help="report the races between aliased buffers (on the CPU; no GPU)",
        description="Execute the kernel's TTGIR for one CTA on the CPU and report every pair of "
        "accesses to bytes two buffers share that no barrier orders (docs/hazards.md). Exit "
        "status: 0 clean, 1 hazards or a deadlock, 2 bad arguments, 3 not checked.",
    )
    suggest = commands.add_parser(
        "suggest",
        help="suggest the smallest race-free reuse tree of each spec, proved (on the CPU)",
        description="Execute the kernel's TTGIR with its trees stripped, find the buffers its "
        "synchronization lets share bytes, print the smallest tree over them as tlx.reuse_group "
        "code with its plan, and check the kernel with it (docs/suggest.md). Exit status: 0 "
        "proved, 1 no sharing is safe or the proof failed, 2 bad arguments, 3 not checked.",
    )
    for command in (check, suggest):
        _kernel_arguments(command)
        command.add_argument(
            "--value",
            action="append",
            default=[],
            metavar="NAME=INT",
            help="an integer argument's value for the execution (loop trips, indices, phases)",
        )
        command.add_argument("--program-id", type=int, default=0, help="the CTA executed (axis 0)")
        command.add_argument(
            "--num-programs", type=int, default=1, help="the grid's size on axis 0 (default 1)"
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    from triton.backends.compiler import GPUTarget
    from triton.compiler.errors import CompilationError

    from ..api import ASTSource, kernel_plans

    try:
        kernel = load_kernel(arguments.kernel)
        signature, constexprs = full_signature(
            kernel, parse_signature(arguments.signature), parse_constexpr(arguments.constexpr)
        )
        values = parse_values(arguments.value) if arguments.command != "plan" else {}
        if arguments.command == "plan":
            _check_ctas_per_sm(arguments.ctas_per_sm)
    except UsageError as error:
        print(f"python -m tlx {arguments.command}: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    source = ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
    target = GPUTarget("cuda", _TARGETS[arguments.target], 32)
    if arguments.command == "check":
        return _check(arguments, source, target, values)
    if arguments.command == "suggest":
        return _suggest(arguments, source, target, values)
    try:
        spec_plans = kernel_plans(source, target, {"num_warps": arguments.num_warps})
    except CompilationError as error:
        print(compile_error_text(error), file=sys.stderr)
        return PLAN_ERROR
    sys.stdout.write(
        report(
            kernel.__name__,
            arguments.target,
            arguments.num_warps,
            spec_plans,
            arguments.ctas_per_sm,
        )
    )
    if arguments.svg is not None:
        for path in write_svgs(arguments.svg, kernel.__name__, spec_plans):
            print(f"wrote {path}")
    return 0


def _check(arguments, source, target, values) -> int:
    from ..hazards.check import CLEAN, INCOMPLETE, check_hazards

    return _verdict(arguments, check_hazards, source, target, values, CLEAN, INCOMPLETE)


def _suggest(arguments, source, target, values) -> int:
    from ..suggest.suggestion import CLEAN, suggest_reuse
    from ..suggest.suggestion import NOT_CHECKED as UNCHECKED

    return _verdict(arguments, suggest_reuse, source, target, values, CLEAN, UNCHECKED)


def _verdict(arguments, run, source, target, values, clean, unchecked) -> int:
    """Runs ``run`` (the hazard check or the suggestion) on the CTA the command line names
    and prints what it found; the exit status is 0 when its result is ``clean``,
    NOT_CHECKED when ``unchecked``, HAZARDS_FOUND otherwise."""
    from triton.compiler.errors import CompilationError

    try:
        found = run(
            source,
            target,
            {"num_warps": arguments.num_warps},
            values=values,
            program_id=(arguments.program_id, 0, 0),
            num_programs=(arguments.num_programs, 1, 1),
        )
    except CompilationError as error:
        print(compile_error_text(error), file=sys.stderr)
        return PLAN_ERROR
    sys.stdout.write(found.describe())
    if found.result == clean:
        return 0
    return NOT_CHECKED if found.result == unchecked else HAZARDS_FOUND
