"""GPU timing shared by the benchmarks: the median time of several contenders, timed
round-robin (one call of each in turn) with CUDA events after a warm-up, so that clock and
temperature drift affects every contender alike.

Before each timed call the GPU sleeps for a moment, so that the call is queued before the
start event is reached: the events time the GPU's work, not the host's launch overhead (the
Python launch of a Triton kernel and the descriptors it builds, torch's dispatch to cuBLAS or
cuDNN), which would otherwise count for one contender more than another. `called_ms` times the other
way, as a user calls a function, launch included."""

import collections
import functools
import statistics
import subprocess
import time

import torch
import triton

# Warm-up: at least this many calls of each contender and this long in all (clocks settle).
WARMUP_RUNS = 10
WARMUP_SECONDS = 1.0
# GPU cycles to sleep before each timed call (about 0.5 ms), longer than the host takes to
# launch any contender.
SLEEP_CYCLES = 1_000_000


def time_ms(fn, before=None):
    """Milliseconds of one call of `fn` on the GPU, queued behind a sleep (see above); `before`,
    where given, is queued ahead of the sleep (``l2_clearer``'s clearing, for a cold L2)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    if before is not None:
        before()
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def median_ms(fns, runs, before=None):
    """Median milliseconds of each of `fns` over `runs` timed calls (``time_ms``, each behind
    `before` where given)."""
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
            samples.append(time_ms(fn, before))
    return [statistics.median(samples) for samples in times]


def rotated_median_ms(fns, runs, rotation):
    """``median_ms`` of ``fns`` timed round-robin from ``fns[rotation]`` on (each in turn after
    a different one than in ``fns``'s order), returned in ``fns``'s order."""
    order = list(range(rotation, len(fns))) + list(range(rotation))
    times = dict(zip(order, median_ms([fns[i] for i in order], runs), strict=True))
    return [times[i] for i in range(len(fns))]


def l2_clearer():
    """A function that queues on the GPU what ``triton.testing.do_bench`` queues before each
    call it times: a write of a buffer larger than the L2, which leaves none of a call's
    inputs there."""
    driver = triton.runtime.driver.active
    cache = driver.get_empty_cache_for_benchmark()
    return functools.partial(driver.clear_cache, cache)


def called_ms(fn):
    """Median milliseconds of `fn` as a user calls it: `triton.testing.do_bench`, which times
    calls back to back (the L2 cleared between them), the host's launch included wherever it
    takes longer than the GPU's work."""
    return triton.testing.do_bench(fn, return_mode="median")


def host_us(fn, calls=200):
    """Microseconds the host spends in one call of `fn`: `calls` calls queued back to back
    (fewer than the GPU's launch queue holds, so none waits for the GPU), then one wait."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def kernel_us(fn, runs):
    """{kernel: microseconds a call} of the GPU work ``fn`` launches (kernels, memsets,
    copies), from ``runs`` calls under torch's profiler after one outside it, the longest
    first; a kernel's name is cut at its template or argument list."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    totals = collections.Counter()
    for event in profile.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            name = event.name.split("<")[0].split("(")[0].strip()
            totals[name] += event.device_time_total / runs
    return dict(totals.most_common())


def line_fit(xs, ys):
    """(intercept, slope, largest residual) of the least-squares line through (xs, ys)."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
    intercept = mean_y - slope * mean_x
    residual = max(abs(y - intercept - slope * x) for x, y in zip(xs, ys, strict=True))
    return intercept, slope, residual


def line_costs(label, xs, calls_at, names, runs, fit_xs=None, per="x"):
    """The GPU time of two contenders over ``xs``, and each one's least-squares line
    t(x) = fixed + slope x: what a call pays whatever x, and what each unit of x costs. At
    each x, ``calls_at(x)`` gives one call per name (ours, then the reference), timed with
    ``median_ms``; a row prints ``label``, x, both times in microseconds and the reference's
    over ours. Then each line, fitted over the xs in ``fit_xs`` (default: all), as fixed
    microseconds plus microseconds per 1024 of ``per``, with its largest residual. Returns
    {name: [microseconds at each x]}."""
    times = {name: [] for name in names}
    for x in xs:
        for name, ms in zip(names, median_ms(calls_at(x), runs), strict=True):
            times[name].append(ms * 1e3)
        ours, reference = (times[name][-1] for name in names)
        print(
            f"{label:>12} {x:>5} | {ours:9.2f} {reference:9.2f} {reference / ours:5.3f}", flush=True
        )
    fit_xs = xs if fit_xs is None else fit_xs
    for name, ys in times.items():
        fit_ys = [y for x, y in zip(xs, ys, strict=True) if x in fit_xs]
        fixed, slope, residual = line_fit(fit_xs, fit_ys)
        print(
            f"{label:>12} {name:>6}: t = {fixed:7.2f} us + {slope * 1024:6.2f} us per 1024 {per} "
            f"(largest residual {residual:.2f} us)"
        )
    return times


def print_header(header):
    """A table's header line and a rule as wide."""
    print(header)
    print("-" * len(header))


def line_costs_header(x_name, names):
    """The header of ``line_costs``'s rows."""
    print_header(f"{'':>12} {x_name:>5} | {names[0] + ' us':>9} {names[1] + ' us':>9} ratio")


# What `under_load` samples: the SM clock (MHz), the board's power (W) and its limit, and whether
# the driver is holding the clocks down for power (nvidia-smi --help-query-gpu; drivers before
# 535 name the last field clocks_throttle_reasons).
LOAD_FIELDS = "clocks.sm,power.draw,power.limit"
POWER_CAP_FIELDS = ("clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap")
SAMPLE_MS = 20


def load_summary(lines):
    """(median SM clock in MHz, median power in W, power limit in W, fraction of samples the
    power cap was holding the clocks down) of nvidia-smi's CSV lines (``LOAD_FIELDS`` and a
    power-cap field, no header, no units)."""
    samples = []
    for line in lines:
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 4:
            continue
        try:
            samples.append((float(fields[0]), float(fields[1]), float(fields[2]), fields[3]))
        except ValueError:
            continue
    if not samples:
        raise ValueError(f"no nvidia-smi samples in {lines!r}")
    clocks, powers, limits, capped = zip(*samples, strict=True)
    return (
        statistics.median(clocks),
        statistics.median(powers),
        max(limits),
        sum(state.lower() == "active" for state in capped) / len(capped),
    )


def _nvidia_smi_query(device):
    """nvidia-smi's arguments sampling ``device`` (a torch device index), named by its UUID
    since nvidia-smi's indices need not be torch's."""
    known = subprocess.run(
        ["nvidia-smi", "--help-query-gpu"], capture_output=True, text=True, check=True
    ).stdout
    power_cap = next(field for field in POWER_CAP_FIELDS if field in known)
    address = f"GPU-{torch.cuda.get_device_properties(device).uuid}"
    return [
        "nvidia-smi",
        f"--query-gpu={LOAD_FIELDS},{power_cap}",
        "--format=csv,noheader,nounits",
        f"--loop-ms={SAMPLE_MS}",
        f"--id={address}",
    ]


def under_load(fn, seconds=1.5):
    """(``load_summary`` of the GPU, milliseconds of GPU time a call) while ``fn`` runs back
    to back for about ``seconds`` (after as long a warm-up, so that clocks and power have
    settled). The calls are queued without waiting, so a call that keeps the GPU busy longer
    than its launch takes on the host is timed without gaps between calls."""
    query = _nvidia_smi_query(torch.cuda.current_device())
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fn()
    torch.cuda.synchronize()
    sampler = subprocess.Popen(query, stdout=subprocess.PIPE, text=True)
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)
    calls = 0
    start_event.record()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fn()
        calls += 1
    end_event.record()
    torch.cuda.synchronize()
    sampler.terminate()
    output, _ = sampler.communicate()
    return load_summary(output.splitlines()), start_event.elapsed_time(end_event) / calls
