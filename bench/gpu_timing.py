"""GPU timing shared by the benchmarks: the median time of several contenders, timed
round-robin (one call of each in turn) with CUDA events after a warm-up, so that clock and
temperature drift affects every contender alike."""

import statistics
import time

import torch

# Warm-up: at least this many calls of each contender and this long in all (clocks settle).
WARMUP_RUNS = 10
WARMUP_SECONDS = 1.0


def time_ms(fn, sleep_cycles=0):
    """Milliseconds of one call of `fn` on the GPU. With `sleep_cycles`, the GPU first sleeps
    that long, so that the call is queued before the start event is reached: the events then
    time the GPU's work, not the host's launch overhead."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    if sleep_cycles:
        torch.cuda._sleep(sleep_cycles)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def median_ms(fns, runs, sleep_cycles=0):
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
            samples.append(time_ms(fn, sleep_cycles))
    return [statistics.median(samples) for samples in times]
