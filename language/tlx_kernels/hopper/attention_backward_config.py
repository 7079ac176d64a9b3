"""The Hopper attention backward's configurations (``Config``: tiles, stages, aliasing and
schedule of one compiled kernel) and the ways it sums dQ (``DQ_PASSES``, the tuner's default
``TUNED_DQ_PASSES``, ``dq_passes_of``). The kernel and its host code:
tlx_kernels.hopper.attention_backward."""

import dataclasses

from tlx_kernels._host import KernelConfig
from tlx_kernels.hopper.common import partition_registers

# How dQ, a sum over every key block, is summed (attention_backward_step._dq_and_release):
# "atomics", each consumer's share added with scalar fp32 atomics; "vector", the same two
# columns an instruction; "summed", the CTA's two consumers' shares summed by the tensor
# cores first, each consumer adding half of the columns, two an instruction; "separate", no
# dQ here but in a kernel of its own (attention_dq.py), without atomics; "tma_add", each
# consumer's share written to an fp32 SMEM staging tile and added by one TMA reduce-add a
# chunk of columns (``cp.reduce.async.bulk.tensor``), asynchronous: the consumer goes on while
# the TMA reads the tile; "split", FA3's: each consumer computes half of the columns of the
# CTA's dQ over both consumers' dS (the other's read from SMEM) and adds them by one TMA
# reduce-add, so that a CTA adds each element once (pipelined steps, S by queries only);
# "alternate": the consumers take turns, one computing the CTA's whole dQ of a Q block over
# both consumers' dS^T, added by one TMA reduce-add (pipelined steps, S^T, P^T from
# registers: attention_backward_step.step_taking_turns).
DQ_PASSES = ("atomics", "vector", "summed", "separate", "tma_add", "split", "alternate")
# The ways ``backward`` tunes by default (dq_pass None), by head dim: the separate pass won
# every row timed on the H200 against the in-kernel sums of one consumer's dQ
# (docs/performance.md: D 64 and 128, grouped heads, causal or not), 9-27% ahead of the best
# at D = 64, so those, a space three times its size, are tuned only when asked for (a dq_pass
# of theirs, or "any" for every way). FA3's split beat it by 3-6% at D = 128 (N 2048-8192,
# grouped or not) and lost by 2-11% at D = 64 (docs/performance.md, "The split of dQ over
# the consumers, timed"), where the consumers' turns beat it from N = 2048 on by 2-11%
# ("The consumers take turns at dQ").
TUNED_DQ_PASSES = {64: ("separate", "alternate"), 128: ("separate", "split")}
# The ways to sum dQ the pipelined steps are built for (``Config.pipelined``): none in the
# kernel, or TMA reduce-adds, whose products the steps issue before dK's
# (attention_backward_step._issue_dq), or after dV's with "split" (``_split_dq``). The other
# in-kernel sums keep the unpipelined steps ("summed" orders its products across the two
# consumers, with barriers of its own).
PIPELINED_DQ_PASSES = ("separate", "tma_add", "split", "alternate")


def dq_passes_of(dq_pass, head_dim):
    """The ways to sum dQ that ``backward``'s ``dq_pass`` asks the tuner to try at
    ``head_dim``: None, the default ones (``TUNED_DQ_PASSES``); "any", every one
    (``DQ_PASSES``); else that one."""
    if dq_pass is None:
        return TUNED_DQ_PASSES[head_dim]
    if dq_pass == "any":
        return DQ_PASSES
    if dq_pass not in DQ_PASSES:
        raise ValueError(
            f"dq_pass={dq_pass!r}: the ways to sum dQ are {', '.join(DQ_PASSES)}, 'any' (the "
            "tuner tries every one) or None (the default ones)"
        )
    return (dq_pass,)


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and schedule of one compiled backward kernel: BLOCK_N keys a CTA, split
    among ``consumers`` warpgroups (1 or 2), Q blocks of BLOCK_M rows streaming through
    ``num_stages`` Q/dO stages; ``p_in_smem``: P^T goes through SMEM for dV (sharing dS^T's
    buffer with ``alias``) rather than from registers; ``alias``: the dK/dV staging tiles
    over K and V (and P^T with dS^T), else every tile in bytes of its own;
    ``scores_by_query`` (with ``p_in_smem``): S and dP with queries as rows rather than keys
    (attention_backward_step.py: fewer registers a consumer thread); ``dq_pass``, how dQ is
    summed over the key blocks (``DQ_PASSES``); ``pipelined`` (with dq_pass "separate",
    "tma_add" or "split" and ``p_in_smem``, or "alternate" without): a step's dK (and dV)
    stay in flight into the next step, P and dS each in a buffer of its own, and the step's
    Q/dO stage is released in the next step;
    with "tma_add" dQ's products are issued before dK's, and the step's wait for them leaves
    dK in flight (dV too with scores_by_query at HEAD_DIM 64).

    The ring with ``pipelined``: the consumers hold two stages at a time, the step's and the
    previous one, released only once the step's wait for S has retired the previous step's
    dV and dK. A stage is refilled a step later than without ``pipelined``, so NUM_STAGES
    stages run as far ahead as NUM_STAGES - 1 do unpipelined: with two, the next Q block's Q
    and dO load during the current step (from its wait for S on), with four, three steps
    ahead. Fewer than two would deadlock: the release of stage i waits for step i + 1's Q and
    dO, which, in the same stage, wait for that release."""

    ARGUMENTS = {
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "num_stages": "NUM_STAGES",
        "alias": "ALIAS",
        "consumers": "CONSUMERS",
        "p_in_smem": "P_IN_SMEM",
        "scores_by_query": "SCORES_BY_QUERY",
        "dq_pass": "DQ_PASS",
        "pipelined": "PIPELINED",
    }

    block_m: int
    block_n: int
    num_stages: int
    alias: bool = True
    consumers: int = 2
    p_in_smem: bool = False
    scores_by_query: bool = False
    dq_pass: str = "atomics"
    pipelined: bool = False

    def __post_init__(self):
        if self.dq_pass not in DQ_PASSES:
            raise ValueError(f"dq_pass must be one of {', '.join(DQ_PASSES)}, got {self.dq_pass!r}")
        if self.dq_pass in ("summed", "split", "alternate") and self.consumers != 2:
            raise ValueError(
                f"dq_pass={self.dq_pass!r} sums the dQ shares of two consumers: consumers=2"
            )
        if self.dq_pass == "split" and not (self.scores_by_query and self.pipelined):
            raise ValueError(
                "dq_pass='split' is built on the pipelined steps with S by queries, whose dS "
                "is dQ's A operand from registers: it needs scores_by_query=True and "
                "pipelined=True"
            )
        if self.dq_pass == "alternate" and not (
            self.pipelined and not self.scores_by_query and not self.p_in_smem
        ):
            raise ValueError(
                "dq_pass='alternate' is built on the pipelined steps with S^T, whose P^T is dV's "
                "A operand from registers: it needs pipelined=True, scores_by_query=False and "
                "p_in_smem=False"
            )
        if self.consumers not in (1, 2):
            raise ValueError(f"consumers must be 1 or 2, got {self.consumers}")
        if self.block_n != 64 * self.consumers:
            raise ValueError(
                f"each consumer warpgroup owns 64 keys: block_n must be {64 * self.consumers} "
                f"with {self.consumers} consumers, got {self.block_n}"
            )
        if self.scores_by_query and not self.p_in_smem:
            raise ValueError(
                "scores_by_query writes P to SMEM, where dV = P^T dO reads its transpose: it "
                "needs p_in_smem=True"
            )
        if self.pipelined:
            self._check_pipelined()

    def _check_pipelined(self):
        """``pipelined`` leaves dK (and dV) in flight into the next step (attention_backward_step
        ``_wait_for_scores``): a wait for dQ's products must not retire them, which the steps
        arrange for dq_pass "tma_add" only (its products issued before dK's:
        ``_issue_dq``; "separate" has none), P^T must be in SMEM of its own while dV reads it
        (but with "alternate", whose steps retire dV before they end), and the ring must hold
        the step's stage and the previous one, still unreleased."""
        if self.dq_pass not in PIPELINED_DQ_PASSES:
            raise ValueError(
                "pipelined leaves dK and dV in flight into the next step, which a wait for dQ's "
                "products issued after them would retire: it is built for dq_pass "
                f"{' or '.join(map(repr, PIPELINED_DQ_PASSES))}, got {self.dq_pass!r}"
            )
        if not self.p_in_smem and self.dq_pass != "alternate":
            raise ValueError(
                "pipelined writes P^T to an SMEM buffer of its own, which dV reads while dS^T "
                "is written: it needs p_in_smem=True"
            )
        if self.num_stages < 2:
            raise ValueError(
                "pipelined releases a Q/dO stage one step late, so the consumers hold two: it "
                f"needs num_stages >= 2, got {self.num_stages}"
            )

    def kernel_arguments(self):
        """The fields' arguments, then a worker consumer thread's registers after setmaxnreg
        (``partition_registers``; the kernel passes them with two consumers only)."""
        registers = partition_registers(self.consumers)[1]
        return {**super().kernel_arguments(), "CONSUMER_REGISTERS": registers}

    def __repr__(self):
        p_in_smem = " p_in_smem" if self.p_in_smem else ""
        by_query = " scores_by_query" if self.scores_by_query else ""
        consumers = "" if self.consumers == 2 else f" consumers={self.consumers}"
        dq_pass = "" if self.dq_pass == "atomics" else f" dq={self.dq_pass}"
        pipelined = " pipelined" if self.pipelined else ""
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} stages={self.num_stages} "
            f"alias={self.alias}{consumers}{p_in_smem}{by_query}{dq_pass}{pipelined}"
        )
