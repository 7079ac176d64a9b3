"""Flash Attention backward on one Hopper GPU: ours (tlx_kernels) vs. cuDNN through torch SDPA.

    PYTHONPATH=language python bench/attention_backward.py [--dtype fp16|bf16 ...]
        [--head-dim 64|128 ...] [--mask causal|none ...] [--seq-len N ...] [--runs 50]
    PYTHONPATH=language python bench/attention_backward.py --aliasing [--runs 50]
    PYTHONPATH=language python bench/attention_backward.py --dq atomics vector summed \
        separate tma_add split auto any [--dtype ... --head-dim ... --mask ... --seq-len ...]
    PYTHONPATH=language python bench/attention_backward.py --turns [--dtype ... --mask ...
        --seq-len ...]
    PYTHONPATH=language python bench/attention_backward.py --persistent [--dtype ...
        --head-dim ... --mask ... --seq-len ...]
    PYTHONPATH=language python bench/attention_backward.py --delta [--dtype ... --head-dim ...
        --mask ... --seq-len ...]
    PYTHONPATH=language python bench/attention_backward.py --split [--dtype ... --head-dim ...
        --mask ... --seq-len ...]
    PYTHONPATH=language python bench/attention_backward.py --parts [--dtype ... --head-dim ...
        --mask ... --seq-len ...]

The grid: N in 512 ... 16384 at B x N = 32768 tokens, H = 16, D in {64, 128}, causal and not,
fp16 and bf16, then the grouped-query rows (H = 32, H_kv = 8, D = 128, N = 2048 and 8192,
whatever ``--seq-len`` says; ``--head-dim`` 64 leaves them out), on fresh random inputs per
row. For each row, ours (the tuned backward, tlx.autotune; the configurations it chose,
backward and forward, are printed) and cuDNN
(``SDPBackend.CUDNN_ATTENTION``) are timed in the same run: the backward alone in GPU time
(CUDA events behind a GPU sleep, round-robin: bench/gpu_timing.py) and as a user calls it
(``do_bench``, launch included), and forward + backward as a user calls it. Each row also
prints the first-call cost of the forward and of the backward, in seconds of wall time: the
first call of a key times every configuration of its space, and compiles those Triton's cache
lacks (the first row of a dtype and head dim compiles, later ones find the kernels compiled;
set TRITON_CACHE_DIR to an empty folder to measure a user's very first call). TFLOP/s count
the backward as 2.5 times the forward's 4 B H N^2 D (halved when causal). cuDNN's grouped
rows run on K and V repeated to H heads (torch's cuDNN backend takes no grouped heads): the
same products, without the sum over the group.

``--aliasing`` times every configuration of the backward's space that fits (those with
scalar dQ atomics, which it has with and without aliasing), on the D = 128 rows at N = 4096
(fp16, causal and not), and prints the best with aliasing against the best without it, in
the same run.

``--dq PASS ...`` times, on each row of the grid the other flags select, the backward tuned
with dQ summed each way named (``attention_backward.DQ_PASSES``: fp32 atomics, the same two
columns an instruction, summed over a CTA's consumers first, a dQ kernel of its own, TMA
reduce-adds from fp32 SMEM staging tiles, the same of half the columns a consumer over both
consumers' dS; ``auto``:
the tuner's default, ``attention_backward_config.dq_passes_of(None, ...)``; ``any``: the tuner's
choice among them all) and cuDNN's, in GPU time, in the same run, with the configurations
chosen and each pass's first-call (tuning) cost.

``--turns`` times, on each D = 64 row the other flags select, every configuration of the
consumers' turns at dQ (dq_pass "alternate"): the tuning space's and
``attention_backward_config.turn_variants``' (turns two steps late, other numbers of dS^T buffers),
each fixed, and cuDNN's, round-robin in GPU time, then the fastest and cuDNN as called.

``--persistent`` does the same, on each row the flags select, for
``attention_backward_config.persistent_variants`` (a CTA an SM taking the tiles in turn, with
one or two K/V slots) and the configurations they come from (a CTA a tile), then for
``attention_dq.persistent_variants`` (one or two Q slots) and theirs, the dQ kernel's, each
behind the same separate pass.

``--delta`` does the same for the dQ configurations the grid chose, behind the preprocess of
delta, and for the same computing delta in its place (``attention_dq.delta_variants``), each
behind the same separate pass: the whole backward, so the preprocess is timed where it runs.

``--split`` does the same for the space's split of dQ and its variants
(``attention_backward_config.split_variants``: one staging tile a consumer and a deeper
ring; each step's dQ issued in the next step; ``split_on_keys_variants``: the same on S^T
steps, P^T and dS^T from registers).

``--parts`` says where the GPU time of ours (tuned) and of cuDNN goes on each row the flags
select, kernel by kernel (torch's profiler): the preprocess of delta, the zeroing and
conversion of an fp32 dQ accumulator, the passes.
"""

import argparse
import functools
import time

import torch
from gpu_timing import called_ms, kernel_us, median_ms, print_header
from tlx_kernels.hopper import attention as fwd
from tlx_kernels.hopper import attention_backward as bwd
from tlx_kernels.hopper import attention_backward_config, attention_dq
from tlx_kernels.hopper.attention_autograd import attention, forward_with_lse
from torch.nn.attention import SDPBackend, sdpa_kernel

TOKENS = 32768
HEADS = 16
SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# (heads, kv heads, head dim, N) of the grouped-query rows.
GQA_ROWS = ((32, 8, 128, 2048), (32, 8, 128, 8192))


def backward_tflops(batch, heads, seq_len, head_dim, causal, ms, passes=2.5):
    flops = 4.0 * batch * heads * seq_len * seq_len * head_dim * passes
    if causal:
        flops /= 2
    return flops / (ms * 1e-3) / 1e12


def first_call_seconds(fn):
    """(wall seconds of ``fn``'s call, synchronized, and its result)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start, result


class Row:
    """One shape's inputs and the calls timed on them; ``forward_first_call_s`` is what the
    forward's first call on them took (it tunes the key where no earlier row did)."""

    def __init__(self, batch, heads, kv_heads, seq_len, head_dim, dtype, causal):
        self.shape = (batch, heads, kv_heads, seq_len, head_dim)
        self.causal = causal
        make = functools.partial(torch.randn, device="cuda", dtype=dtype)
        self.q = make(batch, heads, seq_len, head_dim)
        self.k, self.v = (make(batch, kv_heads, seq_len, head_dim) for _ in range(2))
        self.do = make(batch, heads, seq_len, head_dim)
        self.forward_first_call_s, (self.o, self.lse) = first_call_seconds(
            lambda: forward_with_lse(self.q, self.k, self.v, causal, None)
        )
        group = heads // kv_heads
        self.leaves = [t.detach().clone().requires_grad_() for t in (self.q, self.k, self.v)]
        # cuDNN: K and V repeated to the query heads (its backend takes no grouped heads).
        self.cudnn_leaves = [self.leaves[0]] + [
            t.detach().repeat_interleave(group, dim=1).requires_grad_() for t in self.leaves[1:]
        ]
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            self.cudnn_o = self._cudnn_forward()

    def _cudnn_forward(self):
        q, k, v = self.cudnn_leaves
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)

    def ours_backward(self, config=None, dq_pass=None, dq_config=None):
        return bwd.backward(
            self.do,
            self.q,
            self.k,
            self.v,
            self.o,
            self.lse,
            self.causal,
            config=config,
            dq_config=dq_config,
            dq_pass=dq_pass,
        )

    def cudnn_backward(self):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return torch.autograd.grad(self.cudnn_o, self.cudnn_leaves, self.do, retain_graph=True)

    def ours_both(self):
        o = attention(*self.leaves, causal=self.causal)
        o.backward(self.do)

    def cudnn_both(self):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            self._cudnn_forward().backward(self.do)

    def tflops(self, ms, passes=2.5):
        batch, heads, _, seq_len, head_dim = self.shape
        return backward_tflops(batch, heads, seq_len, head_dim, self.causal, ms, passes)


def grid_rows(dtype_names, head_dims, masks, seq_lens):
    for dtype_name in dtype_names:
        for head_dim in head_dims:
            for causal in masks:
                for seq_len in seq_lens:
                    yield dtype_name, (TOKENS // seq_len, HEADS, HEADS, seq_len, head_dim, causal)
        for heads, kv_heads, head_dim, seq_len in GQA_ROWS:
            if head_dim in head_dims:
                for causal in masks:
                    batch = TOKENS // seq_len
                    yield dtype_name, (batch, heads, kv_heads, seq_len, head_dim, causal)


def describe(choice):
    """A tuned (configuration, dQ kernel's configuration or None) as one line."""
    config, dq_config = choice
    return str(config) if dq_config is None else f"{config}, {dq_config}"


def dq_passes(runs, passes, dtype_names, head_dims, masks, seq_lens):
    """Each way of summing dQ (tuned among its configurations; ``auto``: the default ways;
    ``any``: among all) and cuDNN, round-robin in GPU time, on each row."""
    print_header(
        f"{'dtype':>5} {'B':>3} {'H':>3} {'Hkv':>3} {'N':>5} {'D':>4} {'causal':>6} | bwd GPU "
        f"TFLOP/s: " + " ".join(f"{name:>8}" for name in passes) + f" {'cuDNN':>6} | chosen"
    )
    for dtype_name, (batch, heads, kv_heads, seq_len, head_dim, causal) in grid_rows(
        dtype_names, head_dims, masks, seq_lens
    ):
        row = Row(batch, heads, kv_heads, seq_len, head_dim, DTYPES[dtype_name], causal)
        calls = [
            functools.partial(row.ours_backward, dq_pass=None if name == "auto" else name)
            for name in passes
        ]
        first_calls = [first_call_seconds(call)[0] for call in calls]  # tunes each
        times = median_ms([*calls, row.cudnn_backward], runs)
        tflops = " ".join(f"{row.tflops(ms):8.1f}" for ms in times[:-1])
        chosen = "; ".join(
            f"{name} ({seconds:.0f} s): "
            f"{describe(bwd.chosen_config(row.q, row.k, causal, call.keywords['dq_pass']))}"
            for name, seconds, call in zip(passes, first_calls, calls, strict=True)
        )
        print(
            f"{dtype_name:>5} {batch:>3} {heads:>3} {kv_heads:>3} {seq_len:>5} {head_dim:>4} "
            f"{causal!s:>6} | bwd GPU TFLOP/s: {tflops} {row.tflops(times[-1]):6.1f} | {chosen}",
            flush=True,
        )


def turn_configs(head_dim):
    """Every configuration of the consumers' turns (HEAD_DIM 64), the space's and the
    variants outside it, as (configuration, None) pairs."""
    configs = [c for c in bwd.autotune_space(head_dim) if c.dq_pass == "alternate"]
    return [(config, None) for config in configs + attention_backward_config.turn_variants()]


def persistent_bases(head_dim):
    """The configurations the backward kernel's persistent variants come from (one tile a
    CTA): those the grid's short rows chose."""
    variants = attention_backward_config.persistent_variants(head_dim)
    bases = (
        c.replace(persistent=False, kv_buffers=1, epilogue_over_scores=False) for c in variants
    )
    return list(dict.fromkeys(bases))


def separate_pass(head_dim):
    """The first configuration of ``persistent_bases`` with dQ in a pass of its own."""
    return next(config for config in persistent_bases(head_dim) if config.dq_pass == "separate")


def persistent_configs(head_dim):
    """(configuration, dQ kernel's configuration) pairs: the persistent variants of the
    backward kernel and the configurations they come from (one tile a CTA), each with the
    dQ kernel's default where it has dQ in a pass of its own; then ``separate_pass`` with
    the dQ kernel's persistent variants and the configurations they come from."""
    variants = attention_backward_config.persistent_variants(head_dim)
    dq_variants = attention_dq.persistent_variants(head_dim)
    dq_bases = list(dict.fromkeys(c.replace(persistent=False, q_buffers=1) for c in dq_variants))
    return [(config, None) for config in persistent_bases(head_dim) + variants] + [
        (separate_pass(head_dim), dq_config) for dq_config in dq_bases + dq_variants
    ]


def delta_configs(head_dim):
    """``separate_pass`` with each dQ configuration the grid chose, behind the preprocess,
    and with the same computing delta in its place (``attention_dq.delta_variants``)."""
    separate = separate_pass(head_dim)
    dq_configs = attention_dq.grid_choices(head_dim) + attention_dq.delta_variants(head_dim)
    return [(separate, dq_config) for dq_config in dq_configs]


def split_configs(head_dim):
    """The space's split of dQ, the two-stage splits of two staging tiles a consumer that its
    variants (``attention_backward_config.split_variants``) come from (at HEAD_DIM 128 no
    longer in the space), the variants, and the late split on S^T steps
    (``split_on_keys_variants``), each once, as (configuration, None) pairs."""
    configs = [c for c in bwd.autotune_space(head_dim) if c.dq_pass == "split"]
    variants = attention_backward_config.split_variants(head_dim)
    bases = [c.replace(num_stages=2, dq_staging_tiles=None, late_dq=False) for c in variants]
    on_keys = attention_backward_config.split_on_keys_variants(head_dim)
    return [(config, None) for config in dict.fromkeys(configs + bases + variants + on_keys)]


def fixed(runs, configs_of, dtype_names, head_dims, masks, seq_lens):
    """Each (configuration, dQ kernel's configuration or None: its default) pair
    ``configs_of(head_dim)`` lists, fixed, and cuDNN, round-robin in GPU time, on each row;
    then the fastest and cuDNN as a user calls them."""
    for head_dim in head_dims:
        configs = configs_of(head_dim)
        for number, (config, dq_config) in enumerate(configs):
            dq = "" if dq_config is None else f"; {dq_config}"
            print(f"D={head_dim} [{number}] {config}{dq}")
        print_header(
            f"{'dtype':>5} {'B':>3} {'H':>3} {'Hkv':>3} {'N':>5} {'D':>4} {'causal':>6} | bwd GPU "
            "TFLOP/s: "
            + " ".join(f"{f'[{number}]':>6}" for number in range(len(configs)))
            + f" {'cuDNN':>6} | best / cuDNN | called: {'best':>6} {'cuDNN':>6} {'ratio':>5}"
        )
        for dtype_name, (batch, heads, kv_heads, seq_len, _, causal) in grid_rows(
            dtype_names, [head_dim], masks, seq_lens
        ):
            row = Row(batch, heads, kv_heads, seq_len, head_dim, DTYPES[dtype_name], causal)
            calls = [
                functools.partial(row.ours_backward, config, dq_config=dq_config)
                for config, dq_config in configs
            ]
            tflops = [row.tflops(ms) for ms in median_ms([*calls, row.cudnn_backward], runs)]
            best = max(range(len(configs)), key=tflops.__getitem__)
            called = [row.tflops(called_ms(fn)) for fn in (calls[best], row.cudnn_backward)]
            print(
                f"{dtype_name:>5} {batch:>3} {heads:>3} {kv_heads:>3} {seq_len:>5} {head_dim:>4} "
                f"{causal!s:>6} | bwd GPU TFLOP/s: "
                + " ".join(f"{value:6.1f}" for value in tflops)
                + f" | [{best}] {tflops[best] / tflops[-1]:.2f} | called: {called[0]:6.1f} "
                f"{called[1]:6.1f} {called[0] / called[1]:5.2f}",
                flush=True,
            )


def parts(runs, dtype_names, head_dims, masks, seq_lens):
    """Where the backward's GPU time goes, ours (tuned) and cuDNN's, on each row: each one's
    GPU time (``median_ms``), then each kernel it launches (the preprocess, the zeroing and
    conversion of an fp32 dQ, the passes) in microseconds a call and its share of that."""
    for dtype_name, (batch, heads, kv_heads, seq_len, head_dim, causal) in grid_rows(
        dtype_names, head_dims, masks, seq_lens
    ):
        row = Row(batch, heads, kv_heads, seq_len, head_dim, DTYPES[dtype_name], causal)
        row.ours_backward()  # tunes the key
        calls = {"ours": row.ours_backward, "cuDNN": row.cudnn_backward}
        whole = dict(zip(calls, median_ms(list(calls.values()), runs), strict=True))
        print(
            f"{dtype_name} B={batch} H={heads}/{kv_heads} N={seq_len} D={head_dim} "
            f"causal={causal} | ours {describe(bwd.chosen_config(row.q, row.k, causal))}",
            flush=True,
        )
        for name, fn in calls.items():
            us = whole[name] * 1e3
            print(f"    {name:>5}: {us:8.1f} us a call, {row.tflops(whole[name]):6.1f} TFLOP/s")
            for kernel, kernel_time in kernel_us(fn, runs).items():
                print(f"    {name:>5}   {kernel_time:8.1f} us {kernel_time / us:6.1%}  {kernel}")


def grid(runs, dtype_names, head_dims, masks, seq_lens):
    print_header(
        f"{'dtype':>5} {'B':>3} {'H':>3} {'Hkv':>3} {'N':>5} {'D':>4} {'causal':>6} | "
        f"bwd GPU: {'ours':>6} {'cuDNN':>6} {'ratio':>5} | bwd called: {'ours':>6} "
        f"{'cuDNN':>6} {'ratio':>5} | fwd+bwd called: {'ours':>6} {'cuDNN':>6} {'ratio':>5} | "
        f"first call s: {'fwd':>5} {'bwd':>5} | chosen"
    )
    below = 0
    for dtype_name, (batch, heads, kv_heads, seq_len, head_dim, causal) in grid_rows(
        dtype_names, head_dims, masks, seq_lens
    ):
        row = Row(batch, heads, kv_heads, seq_len, head_dim, DTYPES[dtype_name], causal)
        backward_first_call_s, _ = first_call_seconds(row.ours_backward)  # tunes the key
        row.ours_both()
        gpu = [row.tflops(ms) for ms in median_ms([row.ours_backward, row.cudnn_backward], runs)]
        called = [row.tflops(called_ms(fn)) for fn in (row.ours_backward, row.cudnn_backward)]
        both = [row.tflops(called_ms(fn), 3.5) for fn in (row.ours_both, row.cudnn_both)]
        below += gpu[0] < gpu[1]
        chosen = describe(bwd.chosen_config(row.q, row.k, causal))
        forward_chosen = fwd.chosen_config(row.q.dtype, head_dim)
        first_calls = f"{row.forward_first_call_s:5.1f} {backward_first_call_s:5.1f}"
        print(
            f"{dtype_name:>5} {batch:>3} {heads:>3} {kv_heads:>3} {seq_len:>5} {head_dim:>4} "
            f"{causal!s:>6} | bwd GPU: {gpu[0]:6.1f} {gpu[1]:6.1f} {gpu[0] / gpu[1]:5.2f} | "
            f"bwd called: {called[0]:6.1f} {called[1]:6.1f} {called[0] / called[1]:5.2f} | "
            f"fwd+bwd called: {both[0]:6.1f} {both[1]:6.1f} {both[0] / both[1]:5.2f} | "
            f"first call s: {first_calls} | bwd {chosen}; fwd {forward_chosen}",
            flush=True,
        )
    print(f"rows below cuDNN in backward GPU time: {below}")


def aliasing(runs):
    """The best configuration with aliasing against the best without, same run, among those
    that sum dQ with scalar atomics (the space's other dQ passes are on aliased
    configurations only)."""
    for causal in (False, True):
        row = Row(TOKENS // 4096, HEADS, HEADS, 4096, 128, torch.float16, causal)
        configs = []
        for config in (c for c in bwd.autotune_space(128) if c.dq_pass == "atomics"):
            try:
                row.ours_backward(config)
            except Exception as error:  # noqa: BLE001 - a configuration that does not fit
                print(f"    {config}: does not compile ({type(error).__name__})")
                continue
            configs.append(config)
        times = median_ms([functools.partial(row.ours_backward, c) for c in configs], runs)
        tflops = {config: row.tflops(ms) for config, ms in zip(configs, times, strict=True)}
        for config, value in tflops.items():
            print(f"causal={causal!s:5} {config}: {value:6.1f} TFLOP/s")
        aliased = max((c for c in configs if c.alias), key=tflops.get)
        unaliased = max((c for c in configs if not c.alias), key=tflops.get)
        print(
            f"causal={causal!s:5} best with aliasing {aliased}: {tflops[aliased]:.1f}; best "
            f"without {unaliased}: {tflops[unaliased]:.1f} "
            f"({tflops[aliased] / tflops[unaliased]:.3f}x)"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="timed runs per measurement")
    parser.add_argument("--dtype", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--head-dim", nargs="+", type=int, default=[64, 128], choices=[64, 128])
    parser.add_argument("--mask", nargs="+", default=["none", "causal"], choices=["none", "causal"])
    parser.add_argument("--seq-len", nargs="+", type=int, default=list(SEQ_LENS))
    parser.add_argument("--aliasing", action="store_true", help="best aliased vs. unaliased")
    parser.add_argument(
        "--dq",
        nargs="+",
        choices=[*bwd.DQ_PASSES, "auto", "any"],
        help="time the backward tuned with dQ summed each of these ways, and cuDNN",
    )
    parser.add_argument(
        "--turns",
        action="store_true",
        help="time each configuration of the consumers' turns at dQ (D = 64), and cuDNN",
    )
    parser.add_argument(
        "--persistent",
        action="store_true",
        help="time the persistent variants and the configurations they come from, and cuDNN",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="time the split of dQ and its variants, and cuDNN",
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="where ours and cuDNN's GPU time goes, kernel by kernel",
    )
    parser.add_argument(
        "--delta",
        action="store_true",
        help="time the dQ pass computing delta against the preprocess, and cuDNN",
    )
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    if args.aliasing:
        aliasing(args.runs)
        return
    masks = [mask == "causal" for mask in args.mask]
    if args.parts:
        parts(args.runs, args.dtype, args.head_dim, masks, args.seq_len)
        return
    if args.turns:
        fixed(args.runs, turn_configs, args.dtype, [64], masks, args.seq_len)
        return
    fixed_configs = {"persistent": persistent_configs, "delta": delta_configs}
    fixed_configs["split"] = split_configs
    for flag, configs_of in fixed_configs.items():
        if getattr(args, flag):
            fixed(args.runs, configs_of, args.dtype, args.head_dim, masks, args.seq_len)
            return
    if args.dq:
        dq_passes(args.runs, args.dq, args.dtype, args.head_dim, masks, args.seq_len)
        return
    grid(args.runs, args.dtype, args.head_dim, masks, args.seq_len)


if __name__ == "__main__":
    main()
