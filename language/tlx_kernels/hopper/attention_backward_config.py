"""The Hopper attention backward's configurations (``Config``: tiles, stages, aliasing and
schedule of one compiled kernel), the tuner's space of them (``autotune_space``) and the
ways it sums dQ (``DQ_PASSES``, the tuner's default ``TUNED_DQ_PASSES`` and
``LONG_SEQUENCE_DQ_PASSES``, ``dq_passes_of``).
The kernel and its host code: tlx_kernels.hopper.attention_backward."""

import dataclasses

from tlx_kernels._host import KernelConfig
from tlx_kernels.hopper.attention_common import check_slots
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
# registers: attention_backward_turns.step_taking_turns).
DQ_PASSES = ("atomics", "vector", "summed", "separate", "tma_add", "split", "alternate")
# The ways ``backward`` tunes by default (dq_pass None), by head dim: the separate pass won
# every row timed on the H200 against the in-kernel sums of one consumer's dQ
# (docs/performance.md: D 64 and 128, grouped heads, causal or not), 9-27% ahead of the best
# at D = 64, so those, a space three times its size, are tuned only when asked for (a dq_pass
# of theirs, or "any" for every way). FA3's split beat it by 3-6% at D = 128 (N 2048-8192,
# grouped or not) and lost by 2-11% at D = 64 (docs/performance.md, "The split of dQ over
# the consumers, timed"), where the consumers' turns beat it from N = 2048 on by 2-11%
# ("The consumers take turns at dQ"). On an H100 the turns then took every row of the D = 64
# grid (24 rows, 2026-12-07, "The D = 64 grid again, with the tuner's calls in budgets"), so
# at D = 64 they are tuned alone: the separate pass's two spaces had made the backward's
# first call up to 3.8 times the forward's.
TUNED_DQ_PASSES = {64: ("alternate",), 128: ("separate", "split")}
# (the shortest sequence, the ways tuned there and beyond) where fewer ways than
# TUNED_DQ_PASSES' are tuned by default, by head dim. At D = 128 the split took every row
# timed from N = 4096 on (H100, 2026-12-06 and 2026-12-07: both dtypes, causal or not,
# grouped or not; docs/performance.md), the separate pass rows up to N = 2048 alone; tuning
# the separate pass's two spaces and comparing whole passes there had made the backward's
# first call 2.1-6 times the forward's (docs/autotune.md, "The kernel the forward tunes").
LONG_SEQUENCE_DQ_PASSES = {128: (4096, ("split",))}
# The ways to sum dQ the pipelined steps are built for (``Config.pipelined``): none in the
# kernel, or TMA reduce-adds, whose products the steps issue before dK's
# (attention_backward_step._issue_dq), or after dV's with "split" (``_split_dq``). The other
# in-kernel sums keep the unpipelined steps ("summed" orders its products across the two
# consumers, with barriers of its own).
PIPELINED_DQ_PASSES = ("separate", "tma_add", "split", "alternate")
# The ways to sum dQ whose consumers reduce it by TMA from staging tiles of their own, taken
# in turn (``Config.dq_staging_tiles``).
STAGED_DQ_PASSES = ("tma_add", "split")


def dq_passes_of(dq_pass, head_dim, seq_len=1):
    """The ways to sum dQ that ``backward``'s ``dq_pass`` asks the tuner to try at
    ``head_dim`` and ``seq_len``: None, the default ones (``TUNED_DQ_PASSES``, or
    ``LONG_SEQUENCE_DQ_PASSES`` from their sequence length on); "any", every one
    (``DQ_PASSES``); else that one."""
    if dq_pass is None:
        shortest, long_sequence_passes = LONG_SEQUENCE_DQ_PASSES.get(head_dim, (None, None))
        if shortest is not None and seq_len >= shortest:
            return long_sequence_passes
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
    dK in flight (dV too with scores_by_query at HEAD_DIM 64). With "alternate",
    ``turn_delay``: the steps between a consumer's dS^T and the turn that reads it (1 or 2),
    and ``turn_buffers``: the dS^T buffers a consumer writes in turn (at least
    ``turn_delay``: a consumer's own turn reads its buffer no later than the step that
    rewrites it; attention_backward_turns.py). ``persistent``: a CTA an SM at most, taking the
    tiles in turn, with ``kv_buffers`` K/V slots (the second loads the next tile's K and V
    while one runs; docs/attention-backward.md, "Persistent CTAs"). ``keys_in_registers``
    (S^T): K and V loaded to registers once a tile, the A operands of S^T and dP^T.
    ``dq_staging_tiles`` (dq_pass "tma_add" or "split"): the fp32 staging tiles a consumer
    takes in turn for dQ's TMA reduce-adds, 1 or 2 (None: two); with one, each reduction is
    retired before the consumer's next is staged, and the ring has its 32 KiB at HEAD_DIM 128.
    ``late_dq`` (dq_pass "split"): each step's dQ products issued in the next step, so that
    a consumer waits for the other's dS a step after it is written
    (attention_backward_late_split.py). Both: ``split_variants``. The late split with S^T
    (``splits_on_keys``; ``split_on_keys_variants``) takes P^T and dS^T from registers
    for dV and dK, with ``staged_statistics`` and ``dk_from_registers``. ``statistics_ahead``
    (dq_pass "alternate"): each step loads the next step's LSE and delta, a step ahead of
    their use, as the late split's steps always do (attention_backward_turns.py).
    ``staged_statistics`` (dq_pass "alternate", or the split with S^T): the loader copies
    each Q block's LSE (in base 2) and delta by TMA into the ring's stage beside its Q and
    dO, from the preprocess's [batch * heads, 2, seq_len] copy of them, and the steps read
    them from SMEM just before their use (attention_backward_turns.py).
    ``dk_from_registers`` (the same): dK's product takes dS^T from registers rather than
    from its SMEM buffer (which dQ's turn still reads), issued before the buffer is
    written, and the step retires dK with dV.
    ``epilogue_over_scores`` (the late split in persistent CTAs): each consumer's dK and dV
    staging tiles over its dS buffers, P buffer (if any) and dQ staging tile rather than its
    K and V,
    so that K and V are freed (``kv_free``) once the last products that read them retire and
    the next tile's K and V load while the epilogue stores dK and dV
    (docs/attention-backward.md, "Persistent CTAs").

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
        "turn_delay": "TURN_DELAY",
        "turn_buffers": "TURN_BUFFERS",
        "kv_buffers": "KV_BUFFERS",
        "persistent": "PERSISTENT",
        "keys_in_registers": "KEYS_IN_REGISTERS",
        "dq_staging_tiles": "DQ_STAGING_TILES",
        "late_dq": "LATE_DQ",
        "statistics_ahead": "STATISTICS_AHEAD",
        "staged_statistics": "STAGED_STATISTICS",
        "dk_from_registers": "DK_FROM_REGISTERS",
        "epilogue_over_scores": "EPILOGUE_OVER_SCORES",
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
    turn_delay: int = 1
    turn_buffers: int = 2
    kv_buffers: int = 1
    persistent: bool = False
    keys_in_registers: bool = False
    dq_staging_tiles: int | None = None
    late_dq: bool = False
    statistics_ahead: bool = False
    staged_statistics: bool = False
    dk_from_registers: bool = False
    epilogue_over_scores: bool = False

    def __post_init__(self):
        if self.dq_pass not in DQ_PASSES:
            raise ValueError(f"dq_pass must be one of {', '.join(DQ_PASSES)}, got {self.dq_pass!r}")
        if self.dq_pass in ("summed", "split", "alternate") and self.consumers != 2:
            raise ValueError(
                f"dq_pass={self.dq_pass!r} sums the dQ shares of two consumers: consumers=2"
            )
        self._check_split()
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
        self._check_turns()
        self._check_staging()
        if self.late_dq and self.dq_pass != "split":
            raise ValueError(
                "late_dq issues the products of a step's dQ columns over both consumers' dS in "
                f"the next step, as dq_pass='split' sums them: got dq_pass={self.dq_pass!r}"
            )
        if self.statistics_ahead and self.dq_pass != "alternate":
            raise ValueError(
                "statistics_ahead has the turns' steps load the next step's LSE and delta (the "
                "late split's steps always do): it needs dq_pass='alternate', got "
                f"dq_pass={self.dq_pass!r}"
            )
        if self.staged_statistics and not (self.dq_pass == "alternate" or self.splits_on_keys):
            raise ValueError(
                "staged_statistics has the turns' steps (or the late split's with S^T) read "
                "their LSE and delta from the ring's stage: it needs dq_pass='alternate', or "
                f"'split' with scores_by_query=False, got dq_pass={self.dq_pass!r}"
            )
        if self.staged_statistics and self.statistics_ahead:
            raise ValueError(
                "staged_statistics reads a step's LSE and delta from SMEM, which "
                "statistics_ahead would load from global memory a step ahead: choose one"
            )
        if self.dk_from_registers and not (self.dq_pass == "alternate" or self.splits_on_keys):
            raise ValueError(
                "dk_from_registers has the turns' steps (or the late split's with S^T) take "
                "dS^T as dK's A operand from registers: it needs dq_pass='alternate', or "
                f"'split' with scores_by_query=False, got dq_pass={self.dq_pass!r}"
            )
        check_slots("kv_buffers", self.kv_buffers, self.persistent, "K and V")
        self._check_epilogue_over_scores()
        if self.keys_in_registers and self.scores_by_query:
            raise ValueError(
                "keys_in_registers loads K and V to registers as the A operands of S^T and dP^T; "
                "with scores_by_query they are the B operands of S and dP, read from SMEM: it "
                "needs scores_by_query=False"
            )

    @property
    def splits_on_keys(self):
        """FA3's split of dQ a step late on S^T steps (dq_pass "split" without
        ``scores_by_query``; attention_backward_late_split.step_splitting_late_by_keys)."""
        return self.dq_pass == "split" and not self.scores_by_query

    def _check_split(self):
        """dq_pass "split" runs on the pipelined steps, with S by queries (dS is dQ's A
        operand from registers), or a step late with S^T (``splits_on_keys``): P^T and dS^T
        are then dV's and dK's A operands from registers, retired within the step, dS^T goes
        to SMEM for the next step's dQ, and the statistics come with the ring's stage (read
        from registers, a quarter of a Q block's a thread, they spilled: docs/performance.md,
        "The split on S^T steps, tried")."""
        if self.dq_pass != "split":
            return
        if not self.pipelined:
            raise ValueError(
                "dq_pass='split' is built on the pipelined steps with S by queries, whose dS "
                "is dQ's A operand from registers, or a step late with S^T: it needs "
                "pipelined=True"
            )
        if self.scores_by_query:
            return
        needs = dict(
            late_dq=True,
            p_in_smem=False,
            staged_statistics=True,
            dk_from_registers=True,
            keys_in_registers=False,
        )
        wrong = [
            f"{name}={getattr(self, name)}"
            for name, value in needs.items()
            if getattr(self, name) != value
        ]
        if wrong:
            raise ValueError(
                "dq_pass='split' is built on the pipelined steps with S by queries "
                "(scores_by_query=True), or a step late with S^T, whose P^T and dS^T are dV's "
                "and dK's A operands from registers and whose LSE and delta come with the "
                "ring's stage: it needs late_dq=True, p_in_smem=False, staged_statistics=True "
                f"and dk_from_registers=True (not keys_in_registers), got {', '.join(wrong)}"
            )

    def _check_turns(self):
        """The turns of dq_pass "alternate" (attention_backward_turns.py): a dS^T is read by
        its turn ``turn_delay`` steps later, so a consumer's own turn must read its buffer no
        later than the step that rewrites it (``turn_buffers`` steps later)."""
        turns = (self.turn_delay, self.turn_buffers)
        if self.dq_pass != "alternate":
            if turns != (1, 2):
                raise ValueError(
                    "turn_delay and turn_buffers schedule the turns of dq_pass='alternate', got "
                    f"turn_delay={self.turn_delay} turn_buffers={self.turn_buffers} with "
                    f"dq_pass={self.dq_pass!r}"
                )
            return
        if self.turn_delay not in (1, 2):
            raise ValueError(f"turn_delay must be 1 or 2, got {self.turn_delay}")
        if self.turn_buffers < self.turn_delay:
            raise ValueError(
                f"turn_buffers must be at least turn_delay ({self.turn_delay}): a consumer's "
                f"turn reads its dS^T {self.turn_delay} steps after writing it, into buffer "
                f"step % turn_buffers, got turn_buffers={self.turn_buffers}"
            )

    def _check_epilogue_over_scores(self):
        """``epilogue_over_scores`` lays each consumer's dK and dV staging tiles over its two
        dS buffers, its P buffer and its dQ staging tiles (the late split's,
        attention_backward_late_split.py) to free K and V for a persistent CTA's next tile
        before the epilogue; with ``alias`` only (else nothing shares)."""
        if not self.epilogue_over_scores:
            return
        if not (self.dq_pass == "split" and self.late_dq and self.persistent and self.alias):
            raise ValueError(
                "epilogue_over_scores stages dK and dV over the late split's dS, P and dQ "
                "staging tiles, so that a persistent CTA frees K and V for its next tile "
                "before the epilogue: it needs dq_pass='split', late_dq=True, persistent=True "
                f"and alias=True, got dq_pass={self.dq_pass!r} late_dq={self.late_dq} "
                f"persistent={self.persistent} alias={self.alias}"
            )

    def _check_staging(self):
        """``dq_staging_tiles`` counts the staging tiles of the passes that reduce dQ by TMA
        from each consumer's own tiles in turn ("alternate" has one a consumer, reducing
        every other step)."""
        if self.dq_staging_tiles is None:
            return
        if self.dq_pass not in STAGED_DQ_PASSES:
            raise ValueError(
                "dq_staging_tiles counts the fp32 staging tiles a consumer reduces dQ from, with "
                f"dq_pass {' or '.join(map(repr, STAGED_DQ_PASSES))}, got dq_staging_tiles="
                f"{self.dq_staging_tiles} with dq_pass={self.dq_pass!r}"
            )
        if self.dq_staging_tiles not in (1, 2):
            raise ValueError(f"dq_staging_tiles must be 1 or 2, got {self.dq_staging_tiles}")

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
        if not self.p_in_smem and not (self.dq_pass == "alternate" or self.splits_on_keys):
            raise ValueError(
                "pipelined writes P^T to an SMEM buffer of its own, which dV reads while dS^T "
                "is written: it needs p_in_smem=True"
            )
        if self.num_stages < 2:
            raise ValueError(
                "pipelined releases a Q/dO stage one step late, so the consumers hold two: it "
                f"needs num_stages >= 2, got {self.num_stages}"
            )

    @property
    def causal_tile_order(self):
        """The order of the key blocks' tiles under a causal mask, where key block 0 meets
        the most Q blocks (attention_common.head_and_block): persistent CTAs take them in
        pairs of blocks j and ``blocks`` - 1 - j ("by_pair"); the late split's grid, a tile a
        CTA, goes head by head but for its last heads, which go key block by key block,
        longest first ("by_head_then_block"), so that the grid ends on short tiles; the
        others' head by head. On an H100 (bf16, causal, N = 1024-8192) ending block by block
        took the late split at D = 128 from 0.99-1.03x cuDNN to 1.00-1.04x, and cost the
        separate pass's kernel up to 6% and the staged turns at D = 64 up to 2%
        (docs/attention-backward.md, "The grid's last heads under a causal mask")."""
        if self.persistent:
            return "by_pair"
        if self.late_dq:
            return "by_head_then_block"
        return "by_head"

    def kernel_arguments(self):
        """The fields' arguments, the tiles' order under a causal mask
        (``causal_tile_order``), then a worker consumer thread's registers after setmaxnreg
        (``partition_registers``; the kernel passes them with two consumers only)."""
        registers = partition_registers(self.consumers)[1]
        return {
            **super().kernel_arguments(),
            "CAUSAL_TILE_ORDER": self.causal_tile_order,
            "CONSUMER_REGISTERS": registers,
        }

    def __repr__(self):
        p_in_smem = " p_in_smem" if self.p_in_smem else ""
        by_query = " scores_by_query" if self.scores_by_query else ""
        consumers = "" if self.consumers == 2 else f" consumers={self.consumers}"
        dq_pass = "" if self.dq_pass == "atomics" else f" dq={self.dq_pass}"
        pipelined = " pipelined" if self.pipelined else ""
        turns = (self.turn_delay, self.turn_buffers)
        turns = "" if turns == (1, 2) else f" turn_delay={turns[0]} turn_buffers={turns[1]}"
        persistent = " persistent" if self.persistent else ""
        kv_buffers = "" if self.kv_buffers == 1 else f" kv_buffers={self.kv_buffers}"
        keys = " keys_in_registers" if self.keys_in_registers else ""
        staging = self.dq_staging_tiles
        staging = "" if staging is None else f" dq_staging_tiles={staging}"
        staging += " late_dq" if self.late_dq else ""
        staging += " statistics_ahead" if self.statistics_ahead else ""
        staging += " staged_statistics" if self.staged_statistics else ""
        staging += " dk_from_registers" if self.dk_from_registers else ""
        staging += " epilogue_over_scores" if self.epilogue_over_scores else ""
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} stages={self.num_stages} "
            f"alias={self.alias}{consumers}{p_in_smem}{by_query}{dq_pass}{pipelined}{turns}"
            f"{persistent}{kv_buffers}{keys}{staging}"
        )


# The consumers' turns reading their statistics from the ring's stage, dK taking dS^T from
# registers: the turns the D = 64 grid chose (docs/performance.md).
STAGED_TURNS = dict(
    dq_pass="alternate", pipelined=True, staged_statistics=True, dk_from_registers=True
)


def default_config(head_dim):
    """Two consumers over 128 keys, 64-row Q blocks through four stages, the epilogue over K
    and V: the configuration the GPU tests run without tuning (``autotune_space``'s)."""
    return Config(64, 128, 4)


def autotune_space(head_dim):
    """The configurations the tuner searches for ``head_dim``: two consumers over 128 keys
    with two or four Q/dO stages, P^T from registers or through SMEM, aliased or not (at
    HEAD_DIM 128 the planner drops four stages without aliasing: 272 KiB), 128-row Q blocks
    at HEAD_DIM 64, and one consumer over 64 keys (twice the CTAs, each half the work); then
    the other ways to sum dQ (``DQ_PASSES``) on the configurations chosen most (the TMA
    reduce-add's with the stages that fit beside its staging tiles), and the pipelined steps
    (with dQ in its pass of its own, or by TMA reduce-adds)."""
    configs = [
        Config(64, 128, stages, alias, p_in_smem=p_in_smem)
        for p_in_smem in (False, True)
        for stages in (2, 4)
        for alias in (True, False)
    ]
    if head_dim == 64:
        configs += [Config(128, 128, stages) for stages in (2, 3)]
    configs.append(Config(64, 64, 4, consumers=1))
    # S and dP with queries as rows (attention_backward_step.py): no column vectors of LSE,
    # delta and query numbers a thread, dS from registers for dQ; spills at HEAD_DIM 128 (ptxas
    # on sm_90a, the 4-stage aliased kernel): 552 bytes a thread where S^T's spills 1424.
    by_query = dict(p_in_smem=True, scores_by_query=True)
    configs += [
        Config(64, 128, stages, alias, **by_query) for stages in (2, 4) for alias in (True, False)
    ]
    if head_dim == 64:
        # The ring as deep as fits beside K, V and the aliased P/dS (176 KiB), and 128-row Q
        # blocks.
        configs += [Config(64, 128, 8, **by_query), Config(128, 128, 3, **by_query)]
    # The configurations the bf16 grid chose (docs/performance.md), with dQ's vector adds,
    # summed over the CTA's consumers, or in a pass of its own.
    chosen = (
        Config(64, 128, 4),
        Config(64, 128, 2),
        Config(64, 128, 4, p_in_smem=True),
        Config(64, 128, 4, **by_query),
    )
    configs += [config.replace(dq_pass=dq) for dq in ("vector", "summed") for config in chosen]
    # At HEAD_DIM 128 the separate pass's kernels with S^T trailed the fastest with S by
    # queries by 2-22% on every row the tuner timed on an H100 (bf16, N = 512 and 2048,
    # causal or not, 2026-12-07; docs/autotune.md, "The spaces cut to their winners"): they
    # are left out there, where a short sequence's first call spent time tuning them.
    configs += [
        config.replace(dq_pass="separate")
        for config in chosen
        if head_dim == 64 or config.scores_by_query
    ]
    # dQ by TMA reduce-adds from fp32 staging tiles, two a consumer (64 KiB at BLOCK_M 64):
    # at HEAD_DIM 128 the ring has room for two stages (208 KiB), at 64 for four (176 KiB);
    # P^T from registers or SMEM, S^T or S, and one consumer.
    tma_stages = (2,) if head_dim == 128 else (2, 4)
    configs += [
        Config(64, 128, stages, dq_pass="tma_add", **steps)
        for steps in ({}, dict(p_in_smem=True), by_query)
        for stages in tma_stages
    ]
    configs.append(Config(64, 64, 4, consumers=1, dq_pass="tma_add"))
    # dV and dK left in flight into the next step (``pipelined``: P and dS in buffers of their
    # own, dQ in its pass), S^T or S; at HEAD_DIM 128 four stages take 224 KiB.
    pipelined = dict(p_in_smem=True, pipelined=True)
    configs += [
        Config(64, 128, stages, dq_pass="separate", **pipelined, **by_keys)
        for by_keys in ({}, dict(scores_by_query=True))
        for stages in (2, 4)
        if head_dim == 64 or by_keys
    ]
    if head_dim == 64:
        # 128-row Q blocks with S (ptxas: about 300 bytes of spills a thread; S^T's spill
        # 4.6 KiB, docs/attention-backward.md); four stages take 224 KiB.
        pipelined_by_query = dict(scores_by_query=True, **pipelined)
        configs += [
            Config(128, 128, stages, dq_pass="separate", **pipelined_by_query) for stages in (2, 4)
        ]
    # The same with dQ's TMA reduce-adds (its products issued before dK's, with S the first
    # before dV's), the staging tiles beside the rest: two or four stages at HEAD_DIM 64
    # (160 / 192 KiB), two at 128 (224 KiB), where S^T, spilling 1.7 KiB a thread, is left
    # out.
    configs += [
        Config(64, 128, stages, dq_pass="tma_add", **pipelined, **by_keys)
        for by_keys in ({}, dict(scores_by_query=True))
        for stages in tma_stages
        if head_dim == 64 or by_keys
    ]
    # FA3's split of dQ over the two consumers (``_split_dq``): half the columns each, over
    # both consumers' dS, one TMA reduce-add of 64 x D/2 a consumer and step; its staging
    # tiles are half "tma_add"'s at HEAD_DIM 64, as large at 128.
    split = dict(dq_pass="split", **pipelined, scores_by_query=True)
    if head_dim == 64:
        configs += [Config(64, 128, stages, **split) for stages in tma_stages]
    else:
        # With one staging tile a consumer rather than two, and with each step's dQ issued in
        # the next step (``split_variants``): on the H100 the first 2-3% faster than the two
        # tiles on every bf16 row timed (N = 2048, 8192), and 0.6-4% on every row the tuner
        # timed since (N = 512 and 2048, 2026-12-07), where the two tiles are left out; the
        # second the fastest at N = 8192 (+3-6%).
        one_tile = dict(**split, dq_staging_tiles=1)
        configs += [Config(64, 128, 2, **one_tile), Config(64, 128, 2, **one_tile, late_dq=True)]
    if head_dim == 64:
        # And with 128-row Q blocks, as the separate pass's best at HEAD_DIM 64 (224 KiB;
        # ptxas: 196 bytes of spills a thread, 868 with the causal mask).
        configs.append(Config(128, 128, 2, **split))
    if head_dim == 64:
        # The consumers taking turns (``step_taking_turns``): one computes the CTA's dQ of a Q
        # block over both consumers' dS^T, one TMA reduce-add of 64 x D every other step a
        # consumer, P^T from registers; the ring four to eight stages beside two dS^T buffers
        # and one staging tile a consumer (160-224 KiB). Not at 128, where S^T's registers
        # spill 1.4 KiB a thread and the two stages that fit ran at 0.65x "split"
        # (docs/performance.md). The steps load their own LSE and delta (the deepest ring),
        # load them a step ahead (``statistics_ahead``, four or eight stages), or read them
        # from the ring's stage (``staged_statistics``, four or seven: a stage's 512 bytes of
        # them leave no room for eight). On an H100 the last were the fastest on 5 of 6 bf16
        # rows (N = 2048-8192, with and without the causal mask, up to 7% above the others),
        # a step ahead on the sixth, loading their own on none (docs/performance.md); with
        # dK's dS^T from registers (``dk_from_registers``) they ran 0.4-1.6% faster still on
        # the four bf16 rows timed (docs/attention-backward.md). Their four stages in
        # persistent CTAs with two K/V slots (``persistent_winners``: the next tile's K and V
        # land while one runs) ran 3-6% faster again without the mask on an H100, and a third
        # slower with it, where a persistent CTA's tiles are fixed in advance
        # (docs/attention-backward.md, "Persistent CTAs").
        turns = dict(dq_pass="alternate", pipelined=True)
        configs.append(Config(64, 128, 8, **turns))
        configs += [Config(64, 128, stages, **turns, statistics_ahead=True) for stages in (4, 8)]
        configs += [Config(64, 128, stages, **STAGED_TURNS) for stages in (4, 7)]
    return configs + persistent_winners(head_dim)


def turn_variants():
    """Configurations of dq_pass "alternate" (HEAD_DIM 64) whose turns come two steps after
    their dS^T, or whose consumers keep one or three dS^T buffers (``Config.turn_delay``,
    ``turn_buffers``), each with the deepest ring that fits (224 KiB): the space's 8-stage
    turns' SMEM with two buffers, one stage more with one, one less with three; and the
    space's 8-stage turns with K and V in registers (``keys_in_registers``: the A operands of
    S^T and dP^T loaded once a tile, 16 of a step's 72 KiB of SMEM reads a consumer saved for
    32 registers a thread; ptxas on Triton 3.6: 80 / 288 bytes of spills a thread without /
    with the causal mask, against 40 / 152). Outside ``autotune_space``: on an H100 none
    beat the space's 8-stage turns (``bench/attention_backward.py --turns`` times them beside
    them; docs/attention-backward.md)."""
    turns = dict(dq_pass="alternate", pipelined=True)
    return [
        Config(64, 128, 8, **turns, keys_in_registers=True),
        Config(64, 128, 8, **turns, turn_delay=2, turn_buffers=2),
        Config(64, 128, 7, **turns, turn_delay=2, turn_buffers=3),
        Config(64, 128, 9, **turns, turn_delay=1, turn_buffers=1),
        Config(64, 128, 7, **turns, turn_delay=1, turn_buffers=3),
    ]


def persistent_variants(head_dim):
    """The persistent forms (``Config.persistent``: a CTA an SM, taking the tiles in turn) of
    the configurations the grid's rows chose (docs/performance.md: the separate pass with
    128- or 64-row Q blocks at HEAD_DIM 64's short rows, the staged turns with dK from
    registers from N = 1024, the late split and the separate pass at 128), with one K/V slot
    (their own ring) and with two (the next tile's K and V load while a tile runs) where a
    second slot fits beside a ring of the same depth (at HEAD_DIM 128 the split's two stages
    leave no room: there its epilogue over its dS, P and dQ staging tiles,
    ``Config.epilogue_over_scores``, lets the next tile's K and V load under the epilogue).
    ``bench/attention_backward.py --persistent`` times them beside the configurations they
    come from; those of ``persistent_winners`` are in the space too."""
    by_query = dict(p_in_smem=True, scores_by_query=True, pipelined=True)
    persistent = dict(persistent=True)
    two_slots = dict(persistent=True, kv_buffers=2)
    if head_dim == 64:
        separate = [
            Config(block_m, 128, 2, dq_pass="separate", **by_query) for block_m in (128, 64)
        ]
        turns = Config(64, 128, 4, **STAGED_TURNS)
        return [
            config.replace(**slots)
            for config in (*separate, turns)
            for slots in (persistent, two_slots)
        ]
    late_split = Config(64, 128, 2, dq_pass="split", **by_query, dq_staging_tiles=1, late_dq=True)
    separate = Config(64, 128, 2, dq_pass="separate", **by_query)
    return [
        late_split.replace(**persistent),
        late_split.replace(**persistent, epilogue_over_scores=True),
        separate.replace(**persistent),
        separate.replace(**two_slots),
    ]


def persistent_winners(head_dim):
    """The persistent variants in the tuner's space: at HEAD_DIM 64 the staged turns' four
    stages with two K/V slots, 3-6% faster than one tile a CTA without the mask on an H100
    (bf16, N = 2048-8192; one slot at four or seven stages gained 1-3%), with it 4% faster at
    N = 2048 and level at 8192 since its tiles go in pairs (docs/performance.md, "Persistent
    turns", "The epilogue over the scores and key blocks in pairs"); at 128 the late split
    with its epilogue over its dS, P and dQ staging tiles, 1-1.6% faster than one tile a CTA
    without the mask (N = 1024-8192) and 8% slower with it, where the persistent late split
    with its epilogue over K and V ran level or slower."""
    return [
        config
        for config in persistent_variants(head_dim)
        if (config.dq_pass == "alternate" and config.kv_buffers == 2) or config.epilogue_over_scores
    ]


def split_variants(head_dim):
    """FA3's split of dQ (the tuner's at HEAD_DIM 128, docs/performance.md) outside the
    space: with one fp32 staging tile a consumer (``Config.dq_staging_tiles``) rather than
    two, each TMA reduce-add retired before the consumer stages its next, a step later, and
    the bytes of the second tiles holding one more Q/dO stage (at HEAD_DIM 128 the split's
    two stages become three, 224 KiB, and the two-stage kernel with one tile, 192 KiB, times
    the cost of the wait alone; at 64 the 128-row Q blocks' two stages become three, 224
    KiB); and with each step's dQ issued in the next step (``Config.late_dq``: the
    consumers need not be in step; two dS buffers a consumer), at HEAD_DIM 128 beside one
    staging tile and two stages (208 KiB), at 64 the ring as deep as fits (seven stages,
    224 KiB, where the turns' deepest in the space has eight). ``bench/attention_backward.py
    --split`` times them beside the space's split and the two-tile splits they come from;
    the two that won on an H100 (HEAD_DIM 128, two stages, one tile, and the same a step
    late) are in ``autotune_space`` too, where the two tiles no longer are."""
    split = dict(dq_pass="split", p_in_smem=True, scores_by_query=True, pipelined=True)
    if head_dim == 64:
        return [
            Config(128, 128, 3, **split, dq_staging_tiles=1),
            Config(64, 128, 7, **split, late_dq=True),
        ]
    return [
        *(Config(64, 128, stages, **split, dq_staging_tiles=1) for stages in (2, 3)),
        Config(64, 128, 2, **split, dq_staging_tiles=1, late_dq=True),
    ]


def split_on_keys_variants(head_dim):
    """The late split on S^T steps (``Config.splits_on_keys``) outside the space: each
    consumer's P^T and dS^T are dV's and dK's A operands from registers, where the split with
    S by queries reads P and dS back from SMEM, so a consumer's step reads 128 KiB of wgmma
    operands at HEAD_DIM 128 rather than 144 and writes no P (docs/attention-backward.md,
    "On S^T steps"). One fp32 staging tile a consumer, two dS^T buffers, the
    ring with its statistics two or three stages deep at HEAD_DIM 128 (193 or 226 KiB), eight
    at 64 (212 KiB): as deep as fits; at HEAD_DIM 128 also two stages in persistent CTAs,
    each consumer's dK and dV staged over its dS^T buffers and staging tile. On an H100 they
    ran 3-11% slower than the late split with S by queries, so the space has none
    (``bench/attention_backward.py --split`` times them beside the split's other variants)."""
    on_keys = dict(
        dq_pass="split",
        pipelined=True,
        dq_staging_tiles=1,
        late_dq=True,
        staged_statistics=True,
        dk_from_registers=True,
    )
    if head_dim == 64:
        return [Config(64, 128, 8, **on_keys)]
    # And in persistent CTAs with the epilogue over the dS^T buffers and staging tile, the
    # form the tuner takes at N = 1024 and 2048 with S by queries (``autotune_space``).
    persistent = dict(persistent=True, epilogue_over_scores=True)
    return [
        *(Config(64, 128, depth, **on_keys) for depth in (2, 3)),
        Config(64, 128, 2, **on_keys, **persistent),
    ]
