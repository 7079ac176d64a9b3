"""Times `triton-opt --tlx-storage-alias-lowering` on modules of 300, 3 000 and 12 000
aliased allocations and checks that the passes scale linearly.

Each storage_alias_spec has three users in a nested tree, shared(distinct(a, b), c), and
every user is indexed by a runtime value, so all three steps do their full work: planning,
placement attributes, backing allocations, aliases and index arithmetic. Each size runs
5 times in a fresh `triton-opt` process with `--mlir-timing`; the table shows medians of
the process wall time, of the time inside triton-opt (parsing, the pass and printing, as
--mlir-timing totals it: process start-up and loading libMLIR/libLLVM are left out, since
at 300 allocations they would dwarf the rest), that time per allocation, and the pass
alone per allocation. The best run's time inside per allocation is shown too: on a shared
machine the medians swing by half again from one minute to the next, the best run much less.

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
    pass_alone: float
    best_inside: float


def time_lowering(triton_opt: Path, path: Path, repeat: int) -> Timing:
    """Runs `triton-opt --tlx-storage-alias-lowering path` `repeat` times."""
    walls, insides, passes = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run(
            [str(triton_opt), str(path), "--tlx-storage-alias-lowering", "--mlir-timing"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        walls.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"triton-opt failed on {path}:\n{result.stderr}")
        insides.append(timing_seconds(result.stderr, "Total"))
        passes.append(timing_seconds(result.stderr, "TLXStorageAliasLowering"))
    median = statistics.median
    return Timing(median(walls), median(insides), median(passes), min(insides))


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
    columns = (
        "allocations",
        "specs",
        "wall ms",
        "inside ms",
        "us/alloc",
        "pass us/alloc",
        "best us/alloc",
    )
    widths = (12, 6, 9, 10, 9, 14, 14)
    print(" ".join(f"{name:>{width}}" for name, width in zip(columns, widths, strict=True)))
    for allocations, timing in timings.items():
        print(
            f"{allocations:>12} {allocations // USERS_PER_SPEC:>6} {timing.wall * 1e3:>9.1f} "
            f"{timing.inside * 1e3:>10.1f} {timing.inside * 1e6 / allocations:>9.2f} "
            f"{timing.pass_alone * 1e6 / allocations:>14.2f} "
            f"{timing.best_inside * 1e6 / allocations:>14.2f}"
        )
    first, last = SIZES[0], SIZES[-1]
    per_alloc = {n: (t.inside / n, t.pass_alone / n) for n, t in timings.items()}
    ratio = per_alloc[last][0] / per_alloc[first][0]
    linear = ratio < MAX_RATIO
    print(
        f"us/alloc ratio {last}/{first}: {ratio:.2f} "
        f"({'ok' if linear else 'NOT LINEAR'}: must be < {MAX_RATIO}); "
        f"the pass alone: {per_alloc[last][1] / per_alloc[first][1]:.2f}"
    )
    us_at_last = per_alloc[last][0] * 1e6
    print(
        f"us/alloc at {last}: {us_at_last:.2f} "
        f"({'ok' if us_at_last < TARGET_US_PER_ALLOCATION else 'over target'}: "
        f"target < {TARGET_US_PER_ALLOCATION}; the pass alone: {per_alloc[last][1] * 1e6:.2f})"
    )
    return 0 if linear else 1


if __name__ == "__main__":
    sys.exit(main())
