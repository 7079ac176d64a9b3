"""Retiming a key's configurations on the GPU alone, once Triton's autotuner has timed them.

Triton's autotuner times each configuration once, one after the other, and keeps the
fastest. ``do_bench`` varies by several percent from call to call on one configuration,
more than a kernel's best configurations differ, and where the host takes longer to launch
a call than the GPU to run it, it times the launch: that choice is partly chance.
``retiming_run`` makes the autotuner time every configuration again on the GPU alone,
call by call in turn, then the few fastest of that survey with more calls, and keep the
one whose median is lowest (``retime``). The autotuner's state is read and changed through
``tlx.compat`` (``autotuner_timings``, ``set_autotuner_choice``, ...).

Since the survey, not the autotuner's timing, picks the finalists, ``tlx.autotune`` gives the
autotuner ``screen`` for its benchmark: a launch that proves the configuration runs and one
timed call, in place of ``do_bench``'s 125 ms of calls a configuration.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence

from .. import compat
from .prune import config_text, log, log_asked

# GPU cycles slept before each call the retiming times (about half a millisecond): longer
# than the host takes to launch it, so that the call is queued before its start event.
RETIME_SLEEP_CYCLES = 1_000_000
# Calls of each configuration before the retiming's timed ones (compilation, clocks).
RETIME_WARMUP_CALLS = 3
# Timed calls of each configuration in the retiming's survey, which picks its finalists.
SURVEY_ROUNDS = 10


def screen(kernel_call, quantiles) -> list:
    """A benchmark for Triton's autotuner (``do_bench``'s signature) when the retiming picks
    the choice: ``kernel_call`` launched once, which compiles it if it is not yet and raises
    what a configuration that cannot run raises (``OutOfResources``, ...), then once more
    between two events, whose time it gives for each of ``quantiles``."""
    kernel_call()
    start = compat.timing_event()
    end = compat.timing_event()
    start.record()
    kernel_call()
    end.record()
    end.synchronize()
    return [start.elapsed_time(end)] * len(quantiles)


def _first_time(timing) -> float:
    """The time ``do_bench`` gave (the median, with quantiles a list led by it)."""
    return timing[0] if isinstance(timing, (list, tuple)) else timing


def gpu_times(calls: Mapping, rounds: int) -> dict:
    """{key: median milliseconds of ``calls[key]()`` over ``rounds`` calls}, the calls made
    in turn (one of each, then again) so that the GPU's clocks drift alike for all. Each is
    timed on the GPU alone: the L2 cleared before it as ``do_bench`` clears it, then queued
    behind a GPU sleep, so that its events time the GPU's work and not the host's launch,
    which costs every configuration of a kernel the same but varies from call to call."""
    flush_l2 = compat.l2_flush()
    for _ in range(RETIME_WARMUP_CALLS):
        for call in calls.values():
            call()
    samples = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            start = compat.timing_event()
            end = compat.timing_event()
            flush_l2()
            compat.gpu_sleep(RETIME_SLEEP_CYCLES)
            start.record()
            call()
            end.record()
            end.synchronize()
            samples[key].append(start.elapsed_time(end))
    return {key: statistics.median(times) for key, times in samples.items()}


def retime(tuner, key, args: Sequence, kwargs: Mapping, top: int, rounds: int) -> dict | None:
    """Times every configuration of ``tuner``'s last timing (``key``'s) again on the GPU
    alone (``gpu_times``), ``SURVEY_ROUNDS`` calls each in turn, then the ``top`` fastest of
    that survey ``rounds`` calls each, and makes the one with the lowest median ``key``'s
    choice (``compat.set_autotuner_choice``). A GPU's clocks drift over the seconds a
    key's configurations take to time one after another, and ``do_bench`` varies by several
    percent from call to call: more than a kernel's best configurations differ. Where the
    host takes longer to launch a call than the GPU to clear the L2 and run it, ``do_bench``
    times the launch, the same for every configuration: its ranking is then noise, so the
    finalists come from the survey, not from it. ``args`` and ``kwargs`` are the launch's, as
    the tuner benchmarks with them. Returns {configuration: median ms} of the finalists, or
    None when fewer than two configurations were timed."""
    timings = compat.autotuner_timings(tuner)
    timed = [config for config in timings if math.isfinite(_first_time(timings[config]))]
    if len(timed) < 2:
        return None
    calls = compat.autotuner_kernel_calls(tuner, timed, args, kwargs)
    survey = gpu_times(calls, SURVEY_ROUNDS)
    finalists = sorted(timed, key=survey.get)[:top]
    medians = gpu_times({config: calls[config] for config in finalists}, rounds)
    best = min(finalists, key=medians.get)
    compat.set_autotuner_choice(tuner, key, best)
    return medians


def retiming_run(tuner, kernel_name: str, top: int, rounds: int, retimed: dict) -> Callable:
    """A wrapper of ``tuner``'s ``run`` (``compat.wrap_autotuner_run``) that, after a key's
    first timing, retimes its configurations (``retime``), records the finalists' medians
    in ``retimed[key]`` and launches the kernel again with the choice: the timing runs
    overwrote its outputs."""

    def wrap(run):
        def run_and_retime(*args, **kwargs):
            known = compat.autotuner_keys(tuner)
            timed_before = compat.autotuner_timings(tuner)
            result = run(*args, **kwargs)
            new_keys = compat.autotuner_keys(tuner) - known
            timings = compat.autotuner_timings(tuner)
            if len(new_keys) != 1 or timings is None or timings is timed_before:
                return result  # no key was timed by this call
            (key,) = new_keys
            first_choice = compat.autotuner_choice(tuner, key)
            medians = retime(tuner, key, args, kwargs, top, rounds)
            if medians is None:
                return result
            retimed[key] = medians
            if log_asked():
                _log_retiming(tuner, kernel_name, key, first_choice, medians, rounds)
            return run(*args, **kwargs)

        return run_and_retime

    return wrap


def _log_retiming(tuner, kernel_name: str, key, first_choice, medians: dict, rounds: int) -> None:
    chosen = compat.autotuner_choice(tuner, key)
    timings = compat.autotuner_timings(tuner)
    surveyed = sum(math.isfinite(_first_time(timing)) for timing in timings.values())
    first = f"{medians[first_choice] * 1e3:.1f} us" if first_choice in medians else "not a finalist"
    log(
        f"tlx.autotune {kernel_name}: surveyed {surveyed} configurations "
        f"over {SURVEY_ROUNDS} calls each, retimed {len(medians)} finalists over "
        f"{rounds} calls each for key {key}: chose {config_text(chosen)} "
        f"({medians[chosen] * 1e3:.1f} us; first timing's choice {first})"
    )
