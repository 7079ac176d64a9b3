"""GPU timing shared by the benchmarks: the median time of several contenders, timed
round-robin (one call of each in turn) with CUDA events after a warm-up, so that clock and
temperature drift affects every contender alike.

Before each timed call the GPU sleeps for a moment, so that the call is queued before the
start event is reached: the events time the GPU's work, not the host's launch overhead (the
Python launch of a Triton kernel and the descriptors it builds, torch's dispatch to cuBLAS or
cuDNN), which would otherwise count for one contender more than another."""

import statistics
import time

import torch

# Warm-up: at least this many calls of each contender and this long in all (clocks settle).
WARMUP_RUNS = 10
WARMUP_SECONDS = 1.0
# GPU cycles to sleep before each timed call (about 0.5 ms), longer than the host takes to
# launch any contender.
SLEEP_CYCLES = 1_000_000


def time_ms(fn):
    """Milliseconds of one call of `fn` on the GPU, queued behind a sleep (see above)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def median_ms(fns, runs):
    """Median milliseconds of each of `fns` over `runs` timed calls."""
    warmup_start = time.perf_counter()
    warmup_runs = 0
    while warmup_runs < WARMUP_RUNS or time.perf_counter() - warmup_start < WARMUP_SECONDS:
        for fn in fns:
            fn()
        torch.cuda.synchronize()
        warmup_runs += 1
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, samples in zip(fns, times, strict=True):
            samples.append(time_ms(fn))
    return [statistics.median(samples) for samples in times]
