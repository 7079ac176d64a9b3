"""What the planner made of a kernel's specs, for people and tools.

* ``plan``: ``SpecPlan``, one record per spec of a traced kernel (what tlx passed to the
  planner, what came back, its advice), and ``JoinedBuffer``;
* ``budget``: ``tlx.kernel_budget``, what a kernel's regions use of the target's SMEM and
  TMEM, with the planner's verdict when they do not fit;
* ``svg``: a plan as a picture (``SpecPlan.to_svg()``);
* ``dump``: ``TLX_DUMP_ALIAS_IR``, a kernel's specs as a TLX-dialect module for
  ``triton-opt``;
* ``cli``: ``python -m tlx plan`` and ``python -m tlx check``.

Nothing here computes a size or an offset: every number is the planner's.
"""

from .budget import KernelBudget, StorageBudget, kernel_budget
from .plan import JoinedBuffer, SpecPlan

__all__ = ["JoinedBuffer", "KernelBudget", "SpecPlan", "StorageBudget", "kernel_budget"]
