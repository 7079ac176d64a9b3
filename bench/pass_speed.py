"""Times `triton-opt --tlx-storage-alias-lowering` on modules of 300, 3 000 and 12 000
aliased allocations and checks that the passes scale linearly.

Each storage_alias_spec has three users in a nested tree, shared(distinct(a, b), c), and
every user is indexed by a runtime value, so all three steps do their full work: planning,
placement attributes, backing allocations, aliases and index arithmetic. Each size runs
5 times in a fresh `triton-opt` process with `--mlir-timing`; the table shows medians of
the process wall time, of the time inside triton-opt (parsing, the pass and printing, as
--mlir-timing totals it: process start-up and loading libMLIR/libLLVM are left out, since
at 300 allocations they would dwarf the rest), that time per allocation, and, per
allocation, the parsing of the input (verification included) and the pass alone. The best
run's time inside per allocation is shown too: on a shared machine the medians swing by
half again from one minute to the next, the best run much less.

The reference is the round trip: the same module parsed, verified and printed by the same
triton-opt without the pass, MLIR's own cost for that input. Every timed run follows a
reference run, so both see the machine in the same state, and the ratio of the two is the
figure that does not depend on how fast the machine is at that moment. (The lowered module
has 7 ops per spec where the input has 10, so its printing costs less than the input's.)

The passes are linear when the time per allocation at 12 000 (inside triton-opt, parse
and print included) is less than 1.5 times the one at 300; the exit status is 1 when it is
not. The same ratio for the pass alone is printed for information: it is the more
sensitive to other load on the machine (at 12 000 allocations the module no longer fits in
the caches). The target is under 10 us per allocation at 12 000.

Usage: python bench/pass_speed.py [--triton-opt PATH] [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = (300, 3_000, 12_000)
USERS_PER_SPEC = 3
MAX_RATIO = 1.5
TARGET_US_PER_ALLOCATION = 10.0

HEADER = """\
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @kernel(%i: i32) {
"""
FOOTER = """\
    tt.return
  }
}
"""
A_TYPE = "!ttg.memdesc<2x32x64xf16, #nvmma, #smem, mutable>"
B_TYPE = "!ttg.memdesc<2x64xf32, #shared, #smem, mutable>"
C_TYPE = "!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>"
SPEC_TYPE = "!tlx.storage_alias_spec<smem>"
DISTINCT = "!tlx.reuse_group<distinct>"
SHARED = "!tlx.reuse_group<shared>"
SPEC = """\
    %s{n} = tlx.storage_alias_spec storage = smem : {spec}
    %a{n} = tlx.storage_alias_local_alloc %s{n} : {spec} -> {a}
    %b{n} = tlx.storage_alias_local_alloc %s{n} : {spec} -> {b}
    %c{n} = tlx.storage_alias_local_alloc %s{n} : {spec} -> {c}
    %ab{n} = tlx.reuse_group(%a{n}, %b{n}) group_kind = distinct : ({a}, {b}) -> {distinct}
    %g{n} = tlx.reuse_group(%ab{n}, %c{n}) group_kind = shared : ({distinct}, {c}) -> {shared}
    tlx.set_buffer_overlap(%s{n}, %g{n}) : ({spec}, {shared}) -> ()
    %ai{n} = ttg.memdesc_index %a{n}[%i] : {a} -> !ttg.memdesc<32x64xf16, #nvmma, #smem, mutable>
    %bi{n} = ttg.memdesc_index %b{n}[%i] : {b} -> !ttg.memdesc<64xf32, #shared, #smem, mutable>
    %ci{n} = ttg.memdesc_index %c{n}[%i] : {c} -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable>
"""


def module_text(allocations: int) -> str:
    """A module with `allocations` users, three per spec."""
    specs = (
        SPEC.format(
            n=n, spec=SPEC_TYPE, a=A_TYPE, b=B_TYPE, c=C_TYPE, distinct=DISTINCT, shared=SHARED
        )
        for n in range(allocations // USERS_PER_SPEC)
    )
    return HEADER + "".join(specs) + FOOTER


def find_triton_opt(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    built = REPO / "build" / "bin" / "triton-opt"
    if built.exists():
        return built
    found = shutil.which("triton-opt")
    if found:
        return Path(found)
    sys.exit("triton-opt not found: build it (ninja -C build) or pass --triton-opt")


def timing_seconds(report: str, name: str) -> float:
    """The wall time of the line `name` of a --mlir-timing report."""
    line = re.search(rf"^\s*(?P<seconds>[0-9.]+) \(.*\)\s+{name}$", report, re.M)
    if line is None:
        sys.exit(f"no '{name}' line in the --mlir-timing report:\n{report}")
    return float(line["seconds"])


@dataclass(frozen=True)
class Timing:
    """Medians of one module's runs (and the best time inside), in seconds."""

    wall: float
    inside: float
    parse: float
    pass_alone: float
    best_inside: float
    round_trip: float


def run_triton_opt(triton_opt: Path, path: Path, *pass_flags: str) -> tuple[float, str]:
    """Runs triton-opt once on `path`: its wall time and its --mlir-timing report."""
    start = time.perf_counter()
    result = subprocess.run(
        [str(triton_opt), str(path), *pass_flags, "--mlir-timing"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"triton-opt failed on {path}:\n{result.stderr}")
    return wall, result.stderr


def time_lowering(triton_opt: Path, path: Path, repeat: int) -> Timing:
    """Runs `triton-opt --tlx-storage-alias-lowering path` `repeat` times, each run
    right after a reference run of `triton-opt path` (the round trip without the pass)."""
    walls, insides, parses, passes, round_trips = [], [], [], [], []
    for _ in range(repeat):
        _, reference = run_triton_opt(triton_opt, path)
        round_trips.append(timing_seconds(reference, "Total"))
        wall, report = run_triton_opt(triton_opt, path, "--tlx-storage-alias-lowering")
        walls.append(wall)
        insides.append(timing_seconds(report, "Total"))
        parses.append(timing_seconds(report, "Parser"))
        passes.append(timing_seconds(report, "TLXStorageAliasLowering"))
    median = statistics.median
    return Timing(
        wall=median(walls),
        inside=median(insides),
        parse=median(parses),
        pass_alone=median(passes),
        best_inside=min(insides),
        round_trip=median(round_trips),
    )


def print_table(timings: dict[int, Timing]) -> None:
    """One row per module size; every per-allocation figure in microseconds."""
    columns = (
        ("allocations", 12),
        ("specs", 6),
        ("wall ms", 8),
        ("inside ms", 10),
        ("us/alloc", 9),
        ("best us/alloc", 14),
        ("parse us/alloc", 15),
        ("pass us/alloc", 14),
        ("round trip us/alloc", 20),
    )
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    for allocations, timing in timings.items():
        cells = (
            allocations,
            allocations // USERS_PER_SPEC,
            f"{timing.wall * 1e3:.1f}",
            f"{timing.inside * 1e3:.1f}",
            *(
                f"{seconds * 1e6 / allocations:.2f}"
                for seconds in (
                    timing.inside,
                    timing.best_inside,
                    timing.parse,
                    timing.pass_alone,
                    timing.round_trip,
                )
            ),
        )
        print(" ".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, columns, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triton-opt", help="the triton-opt to time (default: build/bin)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per size (median)")
    args = parser.parse_args()
    triton_opt = find_triton_opt(args.triton_opt)

    timings = {}
    with tempfile.TemporaryDirectory() as workdir:
        for allocations in SIZES:
            path = Path(workdir) / f"aliases_{allocations}.mlir"
            path.write_text(module_text(allocations))
            timings[allocations] = time_lowering(triton_opt, path, args.repeat)

    print(f"triton-opt: {triton_opt}, median of {args.repeat} runs")
    print_table(timings)
    first, last = SIZES[0], SIZES[-1]

    def us_per_allocation(allocations: int, seconds: float) -> float:
        return seconds * 1e6 / allocations

    ratio = us_per_allocation(last, timings[last].inside) / us_per_allocation(
        first, timings[first].inside
    )
    pass_ratio = us_per_allocation(last, timings[last].pass_alone) / us_per_allocation(
        first, timings[first].pass_alone
    )
    linear = ratio < MAX_RATIO
    print(
        f"us/alloc ratio {last}/{first}: {ratio:.2f} "
        f"({'ok' if linear else 'NOT LINEAR'}: must be < {MAX_RATIO}); "
        f"the pass alone: {pass_ratio:.2f}"
    )
    at_last = timings[last]
    us_at_last = us_per_allocation(last, at_last.inside)
    print(
        f"us/alloc at {last}: {us_at_last:.2f} "
        f"({'ok' if us_at_last < TARGET_US_PER_ALLOCATION else 'over target'}: "
        f"target < {TARGET_US_PER_ALLOCATION}); of which parsing the input: "
        f"{us_per_allocation(last, at_last.parse):.2f}, the pass: "
        f"{us_per_allocation(last, at_last.pass_alone):.2f}"
    )
    print(
        f"the reference, the same module parsed, verified and printed without the pass: "
        f"{us_per_allocation(last, at_last.round_trip):.2f} us/alloc at {last}; "
        f"the lowering takes {at_last.inside / at_last.round_trip:.2f}x that"
    )
    return 0 if linear else 1


if __name__ == "__main__":
    sys.exit(main())
