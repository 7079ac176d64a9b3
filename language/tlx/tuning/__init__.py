"""Plan-aware autotuning: configurations pruned by their plans before any is compiled,
those kept compiled ahead on several threads, the fastest retimed on the GPU alone.

Triton's autotuner compiles and times every configuration; a tuner that wants to skip
those that cannot fit estimates shared memory with a formula (operand tiles times
stages) that knows nothing of aliasing: it drops configurations whose buffers share
bytes and fit, and compiles ones that do not. ``tlx.autotune`` is ``triton.autotune``
with three steps in front of and after its timing, one module each:

* ``prune``: each configuration is traced by Triton's front end alone
  (``tlx.kernel_plans``: no optimisation, no PTX, no GPU), the planner plans every spec,
  and ``tlx.kernel_budget`` says whether the kernel's regions fit the target; a
  configuration that does not is dropped with the planner's reason (``tlx.PlanPruner``);
* ``compile_ahead``: those kept are compiled on several threads, through Triton's
  asynchronous compile mode, before the autotuner times (and would compile) them one by one;
* ``retime``: once a key's configurations are timed, each is timed again on the GPU alone,
  in turn, and the few fastest with more calls; the lowest median is the key's choice.

``autotuner`` puts them together around ``triton.autotune``. Every Triton internal they
touch (the autotuner's state, the asynchronous compile mode) is a name of ``tlx.compat``.
docs/autotune.md says why each step is there.
"""

from .autotuner import autotune
from .prune import ConfigVerdict, PlanPruner

__all__ = ["ConfigVerdict", "PlanPruner", "autotune"]
