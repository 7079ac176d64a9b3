"""The Hopper Flash Attention forward on the host: its configurations, autotuning space,
launches (``attention``, ``autotuned_attention``) and CPU compiles (``kernel_source``,
``compile_for_hopper``, ``smem_plan``). The kernel: tlx_kernels.hopper.attention_kernel."""

import dataclasses
import functools
import math

import tlx
import torch
import triton

from tlx_kernels._host import COMPILE_OPTIONS, KernelConfig, KernelHost, sm_count
from tlx_kernels.hopper.attention_common import descriptors
from tlx_kernels.hopper.attention_kernel import attention_fwd_kernel
from tlx_kernels.hopper.common import (
    SM90A,
    TORCH_TO_TRITON_DTYPE,
    partition_registers,
)
from tlx_kernels.launch import DirectLaunch

LOG2E = 1.4426950408889634
HEAD_DIMS = (64, 128)


@dataclasses.dataclass(frozen=True)
class Config(KernelConfig):
    """Tile sizes and schedule of one compiled kernel: BLOCK_M rows of Q per tile, split among
    ``consumers`` warpgroups (2 or 3), BLOCK_N keys per K/V block, ``num_stages`` K/V stages,
    ``q_buffers`` Q tiles per consumer (2: the next tile's Q loads while this one's is in use),
    and where the epilogue's O tiles live: in bytes of their own (``alias_o=False``: O's TMA
    store then runs on into the next tile, which waits for it only to write its own O there),
    over the consumers' Q tiles, or (``o_over_kv``) over the K/V stage of the tile's last key
    block.
    ``q_in_registers``: each consumer reads its Q tile into registers as a tile starts, which
    frees the Q buffer for the next tile's Q at once (O cannot then lie over Q).
    ``overlap_o_store`` (with O over a K/V stage or over one of two Q buffers): the TMA store
    of O runs on while the next tile starts; the bytes under O are released after that
    tile's first S. ``store_o_during_next_s`` (with ``overlap_o_store``): O is written to SMEM
    and its TMA store issued while the tensor cores compute the next tile's first S, rather
    than before that tile starts. ``balance_tail`` (causal only): the grid's last rounds take
    single row blocks, longest first, rather than pairs (``_work_units``). ``ctas_per_sm``
    (1 or 2): CTAs that run on one SM at once, each with half its shared memory (the plan
    pruner holds each to that share: ``tlx.autotune(ctas_per_sm=...)``) and registers
    (``registers``); with two, an SM runs four consumer warpgroups' chains of S, softmax and
    P V rather than two, which short tiles, bound by those chains' latency, need."""

    ARGUMENTS = {
        "block_m": "BLOCK_M",
        "block_n": "BLOCK_N",
        "num_stages": "NUM_STAGES",
        "alias_o": "ALIAS_O",
        "consumers": "CONSUMERS",
        "q_buffers": "Q_BUFFERS",
        "o_over_kv": "O_OVER_KV",
        "q_in_registers": "Q_IN_REGISTERS",
        "overlap_o_store": "OVERLAP_O_STORE",
        "store_o_during_next_s": "STORE_O_DURING_NEXT_S",
        "balance_tail": "BALANCE_TAIL",
        "ctas_per_sm": "CTAS_PER_SM",
    }

    block_m: int
    block_n: int
    num_stages: int
    alias_o: bool
    consumers: int = 2
    q_buffers: int = 1
    o_over_kv: bool = False
    q_in_registers: bool = False
    overlap_o_store: bool = False
    store_o_during_next_s: bool = False
    balance_tail: bool = False
    ctas_per_sm: int = 1

    def __post_init__(self):
        if self.ctas_per_sm not in (1, 2):
            raise ValueError(f"ctas_per_sm must be 1 or 2, got {self.ctas_per_sm}")
        if self.ctas_per_sm == 2 and (self.consumers != 2 or self.block_n != 64):
            raise ValueError(
                f"ctas_per_sm=2 leaves a consumer thread {self.registers[1]} registers: two "
                f"consumers over 64-key blocks fit in 112, {self.consumers} over "
                f"{self.block_n}-key blocks do not"
            )
        if self.o_over_kv and not self.alias_o:
            raise ValueError("o_over_kv places O over a K/V stage: it needs alias_o=True")
        if self.q_in_registers and self.alias_o and not self.o_over_kv:
            raise ValueError(
                "q_in_registers frees Q's buffer for the next tile's Q before the epilogue: O "
                "cannot lie over Q (use o_over_kv=True or alias_o=False)"
            )
        if self.overlap_o_store and not (
            self.o_over_kv or (self.alias_o and self.q_buffers == 2 and not self.q_in_registers)
        ):
            raise ValueError(
                "overlap_o_store releases the bytes under O after the next tile's first S: "
                "it needs O over a K/V stage (o_over_kv=True) or over one of two Q buffers "
                "(alias_o=True, q_buffers=2)"
            )
        if self.store_o_during_next_s and not self.overlap_o_store:
            raise ValueError(
                "store_o_during_next_s stores O while the next tile starts, which is what "
                "overlap_o_store releases its bytes for: it needs overlap_o_store=True"
            )

    @property
    def registers(self):
        """(registers a thread at launch, a worker consumer thread's): the CTA's share of the
        SM's (``tlx_kernels.hopper.common.partition_registers``). With two CTAs an SM the
        default partition, consumer 0, gets 104 beside consumer 1's 112: the later rows of a
        causal tile, which have more key blocks."""
        return partition_registers(self.consumers, self.ctas_per_sm)

    @property
    def compile_options(self):
        """Triton's compile options: with CTAs sharing an SM, every thread launched with
        its CTA's share (``maxnreg``), which is what lets them share it."""
        if self.ctas_per_sm == 1:
            return COMPILE_OPTIONS
        return {**COMPILE_OPTIONS, "maxnreg": self.registers[0]}

    def kernel_arguments(self):
        """The fields' arguments, then what a consumer thread takes of the registers."""
        return {**super().kernel_arguments(), "CONSUMER_REGISTERS": self.registers[1]}

    def __repr__(self):
        consumers = "" if self.consumers == 2 else f" consumers={self.consumers}"
        q_buffers = "" if self.q_buffers == 1 else f" q_buffers={self.q_buffers}"
        o_over_kv = " o_over_kv" if self.o_over_kv else ""
        q_in_registers = " q_in_registers" if self.q_in_registers else ""
        overlap_o_store = " overlap_o_store" if self.overlap_o_store else ""
        store_o_during_next_s = " store_o_during_next_s" if self.store_o_during_next_s else ""
        balance_tail = " balance_tail" if self.balance_tail else ""
        ctas_per_sm = "" if self.ctas_per_sm == 1 else f" ctas_per_sm={self.ctas_per_sm}"
        return (
            f"BLOCK_M={self.block_m} BLOCK_N={self.block_n} stages={self.num_stages} "
            f"alias_o={self.alias_o}{consumers}{q_buffers}{o_over_kv}{q_in_registers}"
            f"{overlap_o_store}{store_o_during_next_s}{balance_tail}{ctas_per_sm}"
        )


def block_shapes(config, arguments):
    """Block shapes of the Q, K, V and O descriptors, which address [batch * heads, seq_len,
    head_dim] (``arguments``: HEAD_DIM among them): a consumer's rows of Q and O, a block of
    K and V."""
    q_rows = config.block_m // config.consumers
    head_dim = arguments["HEAD_DIM"]
    return (
        [1, q_rows, head_dim],
        [1, config.block_n, head_dim],
        [1, config.block_n, head_dim],
        [1, q_rows, head_dim],
    )


HOST = KernelHost(
    attention_fwd_kernel,
    Config,
    descriptors=("desc_q", "desc_k", "desc_v", "desc_o"),
    scalars={"qk_scale": "fp32", "seq_len": "i32", "batch_heads": "i32"},
    block_shapes=block_shapes,
    target=SM90A,
)


def default_config(head_dim):
    """The fastest configuration measured on an H100 (bench/flash_attention.py --sweep).
    HEAD_DIM 128: BLOCK_M = BLOCK_N = 128 and as many K/V stages as fit with O aliasing (3).
    A second Q buffer does not fit beside them, so O takes the K/V stage of the tile's last
    block rather than Q (1-2.5% faster than O over Q), and each consumer reads its Q into
    registers as the tile starts: the next tile's Q loads a whole tile ahead into the one
    buffer (1.5-3.5% faster at N = 512 to 2048 than Q read from SMEM by every S, which frees
    it only after the tile's last S; 0-2% from N = 4096 up). The TMA store of O runs on into
    the next tile (2-4% faster without a mask at N = 512 and 1024, 0-0.5% from 2048 up, but
    2% slower with a causal mask at 512 and 1024, where the tuner takes other tiles). HEAD_DIM
    64: the exponentials of the softmax take about as long as both matrix products of a
    block, so three consumer warpgroups (BLOCK_M = 192) keep the tensor cores busier than two;
    two Q buffers per consumer, O over Q (5-6% faster than one Q buffer, with O over Q or over
    the last stage: the next tile's Q is there when this one ends) and 5 stages (within 1% of
    4)."""
    if head_dim == 128:
        return Config(
            128, 128, 3, alias_o=True, o_over_kv=True, q_in_registers=True, overlap_o_store=True
        )
    return Config(192, 128, 5, alias_o=True, consumers=3, q_buffers=2)


@functools.cache
def unaliased_search(head_dim):
    """The default configuration without aliasing, tried with fewer and fewer stages. Returns
    (the first whose kernel compiles, ((configuration, error message), ...) for those that do
    not: their region does not fit, and the planner's message states the bytes it needs)."""
    return HOST.unaliased_search(
        default_config(head_dim),
        lambda base, stages: base.replace(
            num_stages=stages, alias_o=False, o_over_kv=False, overlap_o_store=False
        ),
        HEAD_DIM=head_dim,
        CAUSAL=False,
    )


def best_unaliased_config(head_dim):
    """The default configuration without aliasing, with as many stages as the planner fits."""
    return unaliased_search(head_dim)[0]


def benchmark_configs(head_dim):
    """(with aliasing, best without aliasing)."""
    return default_config(head_dim), best_unaliased_config(head_dim)


def all_configs(head_dim):
    """The configurations bench/flash_attention.py --sweep times. Measured too on an H100, at
    HEAD_DIM 64: BLOCK_N = 256 spills registers and ran 10-30% slower; BLOCK_M = 256, 128 rows
    per consumer, ran 1-7% slower; computing 1 to 5 of every 8 exponentials by a polynomial on
    the FMA units instead of the MUFU unit ran 2% to 21% slower (the softmax is bound by the
    instructions it issues, not by the MUFU unit). At HEAD_DIM 128: BLOCK_N = 64 with four to
    six stages (and one or two Q buffers) ran 7-12% slower."""
    base = default_config(head_dim)
    configs = [
        base,
        base.replace(num_stages=2),
        best_unaliased_config(head_dim),
        Config(128, 64, 6, alias_o=True),
    ]
    if head_dim == 64:
        # Three consumer warpgroups of 64 rows: each K/V block feeds 192 rows of Q.
        configs += [base.replace(num_stages=stages) for stages in (3, 4)]
        configs.append(base.replace(q_buffers=1))
        configs.append(base.replace(block_n=64))
        configs.append(Config(128, 128, 5, alias_o=True, q_buffers=2))
        configs.append(base.replace(q_buffers=1, o_over_kv=True))
    else:
        configs.append(base.replace(overlap_o_store=False))
        configs.append(base.replace(q_in_registers=False, overlap_o_store=False))
        configs.append(base.replace(o_over_kv=False, q_in_registers=False, overlap_o_store=False))
    return list(dict.fromkeys(configs))


def _check_inputs(q, k, v):
    shapes_agree = q.dim() == k.dim() == 4 and k.shape == v.shape
    if shapes_agree:
        (batch, heads, seq_len, head_dim), kv_heads = q.shape, k.shape[1]
        shapes_agree = (k.shape[0], k.shape[2], k.shape[3]) == (batch, seq_len, head_dim)
        shapes_agree = shapes_agree and kv_heads > 0 and heads % kv_heads == 0
    if not shapes_agree:
        raise ValueError(
            f"q, k, v must share one (batch, heads, seq_len, head_dim) shape, got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)} (k and v may have fewer "
            f"heads, a divisor of q's)"
        )
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in TORCH_TO_TRITON_DTYPE:
        raise ValueError(
            f"q, k, v must all be float16 or bfloat16, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if q.shape[3] not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {q.shape[3]}")


def _persistent_grid(device, batch_heads, seq_len, block_m, ctas_per_sm):
    # Persistent: as many CTAs an SM as run on one at once, and no more than there are row
    # blocks; a CTA with no work unit left returns at once.
    return (min(ctas_per_sm * sm_count(device), batch_heads * triton.cdiv(seq_len, block_m)),)


def kv_group(q, k):
    """The kernel's ``kv_group`` for q and k: the query heads a K/V head serves, or None
    where every query head has its own (the kernel is then the one without grouped heads)."""
    group = q.shape[1] // k.shape[1]
    return group if group > 1 else None


def _call_arguments(q, sm_scale):
    """The kernel's arguments after the descriptors: the scale of S in base 2, the sequence
    length and the number of (batch, head) pairs."""
    batch, heads, seq_len, head_dim = q.shape
    sm_scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(head_dim)
    return sm_scale * LOG2E, seq_len, batch * heads


def attention(q, k, v, causal, sm_scale=None, config=None, return_lse=False):
    """softmax(q k^T * sm_scale) v for (batch, heads, seq_len, head_dim) CUDA tensors (k and
    v may have fewer heads, dividing q's: query head h attends with K/V head h // (heads /
    kv_heads)); with ``return_lse``, (O, the log-sum-exp of each row's scaled scores: fp32,
    (batch * heads, seq_len)), which the backward pass takes."""
    _check_inputs(q, k, v)
    batch, heads, seq_len, head_dim = q.shape
    config = config or default_config(head_dim)
    o, *descs = descriptors(q, k, v, config.block_m // config.consumers, config.block_n)
    grid = _persistent_grid(q.device, batch * heads, seq_len, config.block_m, config.ctas_per_sm)
    lse = q.new_empty(batch * heads, seq_len, dtype=torch.float32) if return_lse else None
    attention_fwd_kernel[grid](
        *descs,
        *_call_arguments(q, sm_scale),
        HEAD_DIM=head_dim,
        CAUSAL=causal,
        **config.kernel_arguments(),
        **config.compile_options,
        lse_ptr=lse,
        kv_group=kv_group(q, k),
    )
    o = o.view(batch, heads, seq_len, head_dim)
    return (o, lse) if return_lse else o


# Autotuning ---------------------------------------------------------------------------------


def autotune_space(head_dim):
    """The configurations ``autotuned_attention`` searches for ``head_dim`` (tlx.autotune):
    the sweep's (``all_configs``), and for short sequences, where a CTA's tiles are few and
    short, narrower tiles: 128 rows in two consumers with 64- or 128-key blocks (O over the
    last K/V stage) and 192 rows in three with 64-key blocks. Each compiles in a few seconds
    on first use, so the space stays small; the planner drops those whose SMEM does not fit
    before any is compiled (at HEAD_DIM 128, four 128-key stages)."""
    short = [
        Config(128, 128, 3, alias_o=True, o_over_kv=True),
        Config(128, 128, 4, alias_o=True, o_over_kv=True),
        Config(128, 64, 4, alias_o=True, o_over_kv=True),
        Config(128, 64, 6, alias_o=True, o_over_kv=True),
        Config(192, 64, 4, alias_o=True, consumers=3),
    ]
    # The next tile's Q loaded a whole tile ahead: a short tile waits for little else
    # (bench/flash_attention.py --tile-cost). At HEAD_DIM 128 a second Q buffer fits only
    # beside 64-key stages, and Q read into registers (one buffer, free once read) ran
    # 1.5-3.5% faster than either at N = 512 to 2048 (H100). At HEAD_DIM 64, 64-key blocks
    # with two Q buffers were 1.04-1.12x the space's best with a causal mask at N = 512 and
    # 1024, and 128 rows with Q in registers over five 128-key stages the best at 2048.
    qreg = dict(alias_o=True, o_over_kv=True, q_in_registers=True)
    # O stored while the tensor cores compute the next tile's first S (H200, fp16, without a
    # mask): 2.8-3.6% faster at N = 512 to 2048 for the HEAD_DIM 128 default, 3-6% at N = 512
    # and 1024 for the HEAD_DIM 64 default with overlap_o_store; with a causal mask 0-2%
    # slower, where the tuner keeps the variants without it.
    store_late = dict(overlap_o_store=True, store_o_during_next_s=True)
    if head_dim == 128:
        short += [
            Config(128, block_n, stages, **qreg) for block_n, stages in ((128, 3), (64, 4), (64, 6))
        ]
        short.append(default_config(head_dim).replace(**store_late))
        # With a causal mask, the grid's last rounds dealt tile by tile (H200, fp16, against
        # the same kernels dealing pairs): 2% at N = 2048 for the default, which lost 4% at
        # 1024; with Q in registers over six 64-key stages, 3.9% at N = 512 and 0.8% at 1024.
        short += [
            Config(128, 64, 6, **qreg, balance_tail=True),
            default_config(head_dim).replace(balance_tail=True),
        ]
        # O in bytes of its own, its store running on into the next tile: with a causal mask
        # the first consumer, a block short of the second in each tile, goes on to its next
        # tile where O over the last K/V stage holds it until the second has read that stage
        # (H200, fp16, against cuDNN): 1.052-1.056x at N = 512, 1.063-1.066x at 1024 and
        # 1.052x at 2048, where six stages with O over the last ran 0.994-0.997x, 1.035x and
        # 1.045x.
        short.append(Config(128, 64, 5, alias_o=False, q_in_registers=True, balance_tail=True))
    else:
        two_ctas = Config(
            128, 64, 4, alias_o=True, q_buffers=2, overlap_o_store=True, ctas_per_sm=2
        )
        # O's store overlapping the next tile: 1.5-2.5% at N = 512 and 1024 with a causal
        # mask for the 64-key blocks, 1% from N = 1024 up without a mask for the default.
        short += [
            Config(128, 64, 6, alias_o=True, q_buffers=2, overlap_o_store=True),
            Config(128, 128, 5, **qreg),
            default_config(head_dim).replace(overlap_o_store=True),
            default_config(head_dim).replace(**store_late),
            # Two consumers, two Q buffers, O over Q: 0.963x cuDNN without a mask at N = 512
            # on an H100, where the default with it reached 0.909x.
            Config(128, 128, 5, alias_o=True, q_buffers=2, **store_late),
            # With a causal mask, the grid's last rounds dealt tile by tile (H200, fp16, against
            # the same kernels dealing pairs): 1-7% at N = 512 to 4096 for the 64-key blocks
            # with two Q buffers, 1-2% from 2048 up for the default.
            Config(128, 64, 6, alias_o=True, q_buffers=2, overlap_o_store=True, balance_tail=True),
            default_config(head_dim).replace(balance_tail=True),
            # 192 rows over six 64-key stages with O's store overlapping the next tile:
            # 1.016x cuDNN with a causal mask at N = 2048, where the kernel the tuner took
            # (five stages, the store not overlapped) ran 0.998x (H200, fp16).
            Config(192, 64, 6, alias_o=True, consumers=3, q_buffers=2, overlap_o_store=True),
            # Two CTAs an SM, each with two consumers over four 64-key stages (113 KiB):
            # with a causal mask 1.008x cuDNN at N = 512 (without balance_tail), 1.033x at
            # 1024 and 1.022x at 2048 (with it), where the space's best ran 0.953x, 0.929x and
            # 1.02x (H200, fp16). Five stages: 1.050x at N = 512 where four ran 1.042x; O
            # stored during the next tile's first S: 0.981x without a mask at N = 512 where
            # the space's best ran 0.965x.
            two_ctas,
            two_ctas.replace(balance_tail=True),
            two_ctas.replace(num_stages=5),
            two_ctas.replace(store_o_during_next_s=True),
        ]
    return list(dict.fromkeys([*all_configs(head_dim), *short]))


def autotune_configs(head_dim):
    """``autotune_space(head_dim)`` as ``triton.Config``s."""
    return [HOST.triton_config(config) for config in autotune_space(head_dim)]


def config_of(triton_config):
    """The ``Config`` of a ``triton.Config`` of ``autotune_configs``."""
    return Config.of_arguments(triton_config)


@functools.cache
def autotuned_kernel(dtype, head_dim, retime_top=3):
    """The kernel under ``tlx.autotune`` for one dtype and head dim, keyed on the sequence
    length, the number of heads, the mask and the head grouping (``retime_top``:
    tlx.autotune's)."""
    return tlx.autotune(
        configs=autotune_configs(head_dim),
        key=["seq_len", "batch_heads", "CAUSAL", "kv_group"],
        prune_configs_by={"early_config_prune": causal_only_pruned},
        ctas_per_sm="CTAS_PER_SM",
        retime_top=retime_top,
    )(attention_fwd_kernel)


def causal_only_pruned(configs, named_args, **kwargs):
    """``configs`` less those whose only difference is with a causal mask (``balance_tail``)
    when the call has none: the kernel they compile to is the one without it."""
    if kwargs["CAUSAL"]:
        return configs
    return [config for config in configs if not config.kwargs["BALANCE_TAIL"]]


# (device, dtype, q's shape, K/V heads, mask, whether it saves the LSE) ->
# tlx_kernels.launch.DirectLaunch, and (dtype, head dim) -> the configuration last run.
_launches = {}
_last_config = {}

# The kernel's parameters after the descriptors that each call sets (``_call_arguments``);
# the kernel that saves the LSE takes ``lse_ptr`` too.
CALL_NAMES = ("qk_scale", "seq_len", "batch_heads")


def run_tuner(tuner, q, k, v, causal, sm_scale=None, lse=None):
    """Launches ``tuner`` (an ``autotuned_kernel``) on the inputs, which times every
    configuration on a key's first call; given ``lse`` (an fp32 tensor of the LSE's shape),
    it times and runs the kernel that saves each row's LSE there. Returns O."""
    base = default_config(q.shape[-1])
    # The configuration's pre_hook sets each descriptor's block shape.
    o, *descs = descriptors(q, k, v, base.block_m // base.consumers, base.block_n)

    def grid(meta):
        return _persistent_grid(
            q.device, meta["batch_heads"], meta["seq_len"], meta["BLOCK_M"], meta["CTAS_PER_SM"]
        )

    tuner[grid](
        *descs,
        *_call_arguments(q, sm_scale),
        HEAD_DIM=q.shape[-1],
        CAUSAL=causal,
        kv_group=kv_group(q, k),
        lse_ptr=lse,
    )
    return o


def direct_launch(config, q, k, v, causal, lse=None):
    """The ``DirectLaunch`` of ``config``'s kernel for calls of q's, k's and v's key and the
    mask; given ``lse`` (an fp32 tensor of the LSE's shape), of the kernel that saves each
    row's LSE where its call's ``lse_ptr`` says."""
    batch, heads, seq_len, head_dim = q.shape
    _, *descs = descriptors(q, k, v, config.block_m // config.consumers, config.block_n)
    call_arguments = dict(zip(CALL_NAMES, _call_arguments(q, None), strict=True))
    fixed = {
        **config.kernel_arguments(),
        "HEAD_DIM": head_dim,
        "CAUSAL": causal,
        **config.compile_options,
        "kv_group": kv_group(q, k),
    }
    if lse is None:
        fixed["lse_ptr"] = None
    else:
        call_arguments["lse_ptr"] = lse
    grid = _persistent_grid(q.device, batch * heads, seq_len, config.block_m, config.ctas_per_sm)
    return DirectLaunch.compile(attention_fwd_kernel, config, grid, descs, call_arguments, fixed)


def autotuned_attention(q, k, v, causal=False, sm_scale=None, return_lse=False):
    """``attention`` with the configuration tlx.autotune finds fastest for the shape, dtype,
    mask and head grouping (the first call of a key times every configuration that fits,
    later ones launch the chosen kernel directly). With ``return_lse``, ``attention``'s (O,
    LSE). A key's first call tunes the kernel it asks for (with the LSE or without), so
    training compiles the chosen configuration once; a later call of the key that asks for
    the other kernel compiles the same configuration's."""
    _check_inputs(q, k, v)
    batch, heads, seq_len, head_dim = q.shape
    key = (q.device, q.dtype, tuple(q.shape), k.shape[1], causal)
    launch = _launches.get((*key, return_lse))
    lse = q.new_empty(batch * heads, seq_len, dtype=torch.float32) if return_lse else None
    if launch is None:
        other = _launches.get((*key, not return_lse))
        if other is None:
            tuner = autotuned_kernel(q.dtype, head_dim)
            o = run_tuner(tuner, q, k, v, causal, sm_scale, lse)
            config = _last_config[q.dtype, head_dim] = config_of(tuner.best_config)
            _launches[(*key, return_lse)] = direct_launch(config, q, k, v, causal, lse)
            o = o.view(batch, heads, seq_len, head_dim)
            return (o, lse) if return_lse else o
        launch = _launches[(*key, return_lse)] = direct_launch(other.config, q, k, v, causal, lse)
    _last_config[q.dtype, head_dim] = launch.config
    q3, k3, v3 = (t.contiguous().view(-1, seq_len, head_dim) for t in (q, k, v))
    o = q3.new_empty(q3.shape)
    call_arguments = _call_arguments(q, sm_scale)
    if return_lse:
        launch((q3, k3, v3, o), (*call_arguments, lse))
        return o.view(batch, heads, seq_len, head_dim), lse
    launch((q3, k3, v3, o), call_arguments)
    return o.view(batch, heads, seq_len, head_dim)


def chosen_config(dtype, head_dim):
    """The configuration the last ``autotuned_attention`` of ``dtype`` and ``head_dim`` ran."""
    return _last_config[dtype, head_dim]


def kernel_source(config, head_dim, dtype="fp16", causal=False, save_lse=False, grouped=False):
    """The kernel with ``config``'s tile sizes, as ``triton.compile`` and ``tlx.kernel_plans``
    take it; with ``save_lse``, the kernel that saves each row's log-sum-exp (``lse_ptr``);
    with ``grouped``, the kernel of grouped-query heads (``kv_group``, an int)."""
    source = HOST.kernel_source(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)
    if not (save_lse or grouped):
        return source
    constexprs = HOST.constexprs(config, HEAD_DIM=head_dim, CAUSAL=causal)
    signature = dict(source.signature)
    for name, type_name, given in (("lse_ptr", "*fp32", save_lse), ("kv_group", "i32", grouped)):
        if given:
            constexprs.pop(name)
            signature[name] = type_name
    return tlx.ASTSource(fn=attention_fwd_kernel, signature=signature, constexprs=constexprs)


def compile_for_hopper(config, head_dim, dtype="fp16", causal=False):
    """Compiles the kernel for sm_90a without a GPU; returns Triton's compiled kernel."""
    return HOST.compile(config, dtype, HEAD_DIM=head_dim, CAUSAL=causal)


def smem_plan(config, head_dim):
    """The plan of the kernel's SMEM spec (``KernelHost.smem_plan``), without a mask."""
    return HOST.smem_plan(config, HEAD_DIM=head_dim, CAUSAL=False)
