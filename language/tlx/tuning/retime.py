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
from typing import NamedTuple

from .. import compat
from .prune import config_text, log, log_asked

# GPU cycles slept before each call the retiming times (about half a millisecond): longer
# than the host takes to launch it, so that the call is queued before its start event.
RETIME_SLEEP_CYCLES = 1_000_000
# Calls of each configuration before the retiming's timed ones (clocks), at most: fewer
# where a call is long, so that with the screen's two (``screen``) a configuration's warm-up
# takes WARMUP_MS (``warmup_calls_for``).
RETIME_WARMUP_CALLS = 3
WARMUP_MS = 5.0
SCREEN_CALLS = 2
# A configuration whose screened call took more than SCREEN_MARGIN times the fastest's is not
# retimed, where the fastest's takes SCREENED_MS or more (``contenders``): one call of a
# millisecond or more varies by a few percent, the clocks' drift over the screen by a few
# more (docs/autotune.md, "Fewer calls where a call is long"), and what the host adds before
# a call starts (its launch, the tuner's resets) is alike for every configuration, bringing
# the times closer, not apart. Shorter calls can time the host's launch alone, whose
# hiccups a single call does not average out: they are all retimed.
SCREENED_MS = 1.0
SCREEN_MARGIN = 1.25
# Timed calls of each configuration in the retiming's survey, which picks its finalists, at
# most.
SURVEY_ROUNDS = 10
# GPU time in milliseconds that the survey's timed calls take a configuration, and the
# finalists' a finalist, at the fastest's time a call (as ``do_bench``'s ``rep`` sizes its
# calls): below these, calls are as many as SURVEY_ROUNDS and ``retime_rounds`` say; a
# kernel that runs longer has fewer, at least FEWEST_ROUNDS. Timed in turn, configurations
# share the clocks' drift, most of the spread of calls of a millisecond or more: with these
# budgets the attention backward chose as with 10 and 25 calls on every row timed, its
# first call taking 30-60% of the time (docs/autotune.md, "Fewer calls where a call is
# long").
SURVEY_MS = 12.0
FINALIST_MS = 30.0
FEWEST_ROUNDS = 3


def screen(kernel_call, quantiles) -> list:
    """A benchmark for Triton's autotuner (``do_bench``'s signature) when the retiming picks
    the choice: ``kernel_call`` launched once, which compiles it if it is not yet and raises
    what a configuration that cannot run raises (``OutOfResources``, ...), then once more
    between two events, whose time it gives for each of ``quantiles``."""
    kernel_call()
    return [_timed_call(kernel_call)] * len(quantiles)


def _first_time(timing) -> float:
    """The time ``do_bench`` gave (the median, with quantiles a list led by it)."""
    return timing[0] if isinstance(timing, (list, tuple)) else timing


def rounds_within(budget_ms: float, call_ms: float, most: int, fewest: int = FEWEST_ROUNDS) -> int:
    """Calls of a configuration whose calls take ``call_ms``: as many as ``budget_ms`` holds,
    at least ``fewest``, at most ``most`` (all of them where the time is unknown)."""
    if not call_ms > 0:
        return most
    return min(most, max(fewest, math.ceil(budget_ms / call_ms)))


def warmup_calls_for(call_ms: float) -> int:
    """Calls of a configuration before its timed ones where a call takes ``call_ms``: as
    many as WARMUP_MS holds, less the screen's calls, at most RETIME_WARMUP_CALLS; none
    where the screen's took WARMUP_MS already."""
    if not call_ms > 0:
        return RETIME_WARMUP_CALLS
    return min(RETIME_WARMUP_CALLS, max(0, math.ceil(WARMUP_MS / call_ms) - SCREEN_CALLS))


def contenders(screened: Mapping) -> list:
    """The configurations of ``screened`` ({configuration: milliseconds of its screened
    call}) worth retiming: where the fastest's call took SCREENED_MS or more, those within
    SCREEN_MARGIN of it; else all."""
    fastest_ms = min(screened.values())
    if fastest_ms < SCREENED_MS:
        return list(screened)
    return [config for config, ms in screened.items() if ms <= SCREEN_MARGIN * fastest_ms]


def gpu_times(calls: Mapping, rounds: int, warmup_calls: int = RETIME_WARMUP_CALLS) -> dict:
    """{key: median milliseconds of ``calls[key]()`` over ``rounds`` calls}, the calls made
    in turn (one of each, then again) so that the GPU's clocks drift alike for all, after
    ``warmup_calls`` of each. Each is timed on the GPU alone: the L2 cleared before it as
    ``do_bench`` clears it, then queued behind a GPU sleep, so that its events time the GPU's
    work and not the host's launch, which costs every configuration of a kernel the same but
    varies from call to call."""
    for _ in range(warmup_calls):
        for call in calls.values():
            call()
    return _median_times(calls, rounds, gpu_alone=True)


def called_times(calls: Mapping, most_rounds: int) -> dict:
    """{key: median milliseconds of ``calls[key]()`` as a user calls it}: each call made
    once, timed, for the calls' length, then in turn, back to back, after the L2 is cleared
    as ``do_bench`` clears it, as many times as FINALIST_MS holds at the fastest's length (at
    most ``most_rounds``). Unlike ``gpu_times``, what the host takes to launch a call counts
    where it outlasts the GPU's work: for calls of several kernels, such as a pass of a
    kernel and its preprocess, whose launches differ in number."""
    first = {key: _timed_call(call) for key, call in calls.items()}
    rounds = rounds_within(FINALIST_MS, min(first.values()), most_rounds)
    return _median_times(calls, rounds, gpu_alone=False)


def _median_times(calls: Mapping, rounds: int, gpu_alone: bool) -> dict:
    """{key: median milliseconds of ``calls[key]()`` over ``rounds`` calls made in turn},
    each behind a clearing of the L2; with ``gpu_alone``, each also queued behind a GPU sleep
    and waited for (``gpu_times``), else back to back (``called_times``)."""
    flush_l2 = compat.l2_flush()
    events = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            start = compat.timing_event()
            end = compat.timing_event()
            flush_l2()
            if gpu_alone:
                compat.gpu_sleep(RETIME_SLEEP_CYCLES)
            start.record()
            call()
            end.record()
            if gpu_alone:
                end.synchronize()
            events[key].append((start, end))
    end.synchronize()  # the last call's: every one before it is done
    return {
        key: statistics.median(start.elapsed_time(end) for start, end in pairs)
        for key, pairs in events.items()
    }


def _timed_call(call) -> float:
    """Milliseconds of one call of ``call``, its launch included."""
    start = compat.timing_event()
    end = compat.timing_event()
    start.record()
    call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


class Retiming(NamedTuple):
    """What ``retime`` did for a key: the finalists' medians in ms, the configurations the
    screen timed, how many of them it left out (``contenders``), the survey's calls of each
    (0: no survey, all the others were finalists) and the finalists'."""

    medians: dict
    screened: int
    left_out: int
    survey_rounds: int
    finalist_rounds: int


def retime(tuner, key, args: Sequence, kwargs: Mapping, top: int, rounds: int) -> Retiming | None:
    """Times the configurations of ``tuner``'s last timing (``key``'s) that its screen did
    not rule out (``contenders``) again on the GPU alone (``gpu_times``), in turn, where
    there are more than ``top``: a survey, then the ``top`` fastest of it; else all of them
    as finalists. The finalists are timed up to
    ``rounds`` calls each, in turn, and the one with the lowest median becomes ``key``'s choice
    (``compat.set_autotuner_choice``). Where the fastest's calls are long, the survey and the
    finalists have fewer (``rounds_within``: SURVEY_MS, FINALIST_MS). A GPU's clocks drift
    over the seconds a key's configurations take to time one after another, and ``do_bench``
    varies by several percent from call to call: more than a kernel's best configurations
    differ. Where the host takes longer to launch a call than the GPU to clear the L2 and run
    it, ``do_bench`` times the launch, the same for every configuration: its ranking is then
    noise, so the finalists come from the survey, not from it. ``args`` and ``kwargs`` are the
    launch's, as the tuner benchmarks with them. None when fewer than two configurations were
    timed."""
    timings = compat.autotuner_timings(tuner)
    screened = {
        config: _first_time(timing)
        for config, timing in timings.items()
        if math.isfinite(_first_time(timing))
    }
    if len(screened) < 2:
        return None
    retimed = contenders(screened)
    calls = compat.autotuner_kernel_calls(tuner, retimed, args, kwargs)
    fastest_ms = min(screened.values())
    finalists, survey_rounds, warmup_calls = retimed, 0, warmup_calls_for(fastest_ms)
    if len(retimed) > top:
        survey_rounds = rounds_within(SURVEY_MS, fastest_ms, SURVEY_ROUNDS)
        survey = gpu_times(calls, survey_rounds, warmup_calls)
        finalists = sorted(retimed, key=survey.get)[:top]
        # The survey's calls warmed the finalists.
        fastest_ms, warmup_calls = survey[finalists[0]], 0
    rounds = rounds_within(FINALIST_MS, fastest_ms, rounds)
    medians = gpu_times({config: calls[config] for config in finalists}, rounds, warmup_calls)
    compat.set_autotuner_choice(tuner, key, min(finalists, key=medians.get))
    return Retiming(medians, len(screened), len(screened) - len(retimed), survey_rounds, rounds)


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
            retiming = retime(tuner, key, args, kwargs, top, rounds)
            if retiming is None:
                return result
            retimed[key] = retiming.medians
            if log_asked():
                _log_retiming(tuner, kernel_name, key, first_choice, retiming)
            return run(*args, **kwargs)

        return run_and_retime

    return wrap


def _log_retiming(tuner, kernel_name: str, key, first_choice, retiming: Retiming) -> None:
    chosen = compat.autotuner_choice(tuner, key)
    medians = retiming.medians
    first = f"{medians[first_choice] * 1e3:.1f} us" if first_choice in medians else "not a finalist"
    retimed = retiming.screened - retiming.left_out
    surveyed = (
        f"surveyed {retimed} configurations over {retiming.survey_rounds} calls each"
        if retiming.survey_rounds
        else f"timed {retimed} configurations, too few for a survey"
    )
    if retiming.left_out:
        surveyed = (
            f"left out {retiming.left_out} of {retiming.screened} screened over "
            f"{SCREEN_MARGIN}x the fastest, {surveyed}"
        )
    log(
        f"tlx.autotune {kernel_name}: {surveyed}, retimed {len(medians)} finalists over "
        f"{retiming.finalist_rounds} calls each for key {key}: chose {config_text(chosen)} "
        f"({medians[chosen] * 1e3:.1f} us; first timing's choice {first})"
    )
