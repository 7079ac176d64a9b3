"""The hazard check (``tlx.check_hazards``): the races between aliased buffers, found on the CPU.

docs/hazards.md says what it finds and how. Its modules, by job:

* ``check``: the public entries, ``check_hazards`` (``check_hazards_at``: several CTAs):
  the kernel's TTGIR made by Triton (``kernel_ttgir``), checked (``check_ttgir``), reported;
* ``ttgir``: the TTGIR text Triton prints, read back as a tree of operations;
* ``ops``: the table of what each TTGIR operation reads, writes and how it completes;
* ``execution``: the abstract execution of one CTA, an operation-name dispatch table;
* ``values``: the integer scalars it computes (constants, ``arith``, program ids);
* ``memory``: which units each allocation and view occupies, from the plan's extents;
* ``accesses``: the accesses to a spec's memory and the race test between them;
* ``blame``: which ordering is missing between two racing accesses, in words;
* ``scheduling``: partitions, vector clocks, asynchronous completion, mbarriers, waits;
* ``report``: ``HazardReport``, ``Hazard``, ``AmbiguousWait``, with Python names and lines.
"""

from .check import check_hazards, check_hazards_at
from .report import Access, AmbiguousWait, BarrierRace, Hazard, HazardReport

__all__ = [
    "Access",
    "AmbiguousWait",
    "BarrierRace",
    "Hazard",
    "HazardReport",
    "check_hazards",
    "check_hazards_at",
]
