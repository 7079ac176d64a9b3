"""Which ordering is missing between two racing accesses, in words: the hazard report's last line.

``Blame.missing(earlier, new)`` names what should have ordered the two accesses that
language/tlx/hazards/accesses.py found unordered, as exactly as the execution knows it (issue 47:
the wait that does not retire the operation, the partition that holds the wait, the barrier
whose phase is wrong, the release that comes before the access it releases):

* a release too early: the partition of the earlier access arrives on an mbarrier before the
  access (or before its asynchronous operation completes), and the later access's partition
  waits for that arrival's phase (``released_early``);
* a release waited for on the wrong phase, or never: an arrive after the earlier access on an
  mbarrier the later access's partition waits on for another phase (its parity or the
  barrier's arrival count lets it pass early), or never waits on (``released_late``);
* the wait that does not retire an asynchronous operation, or the phase a wait took that its
  TMA load does not complete, or the partition that holds a TMA store wait;
* a missing proxy fence (``missing_fence``).

``barriers`` are the execution's mbarriers by key (language/tlx/hazards/scheduling.py's
``Barrier``); ``store_waits`` and ``commits`` the first TMA store wait and tcgen05 commit of
each partition, "file:line (partition)".
"""

from __future__ import annotations

from .scheduling import happens_before

# What retires each kind of asynchronous operation a thread waits for, as reports name it.
_RETIRED_BY = {
    "dot_wait": "a warpgroup_mma wait",
    "store_wait": "a TMA store wait",
    "tcgen05": "a tcgen05 commit",
}


class Blame:
    """Names the missing ordering of a pair of accesses (``RecordedAccess``)."""

    def __init__(self, barriers: dict, store_waits: dict, commits: dict):
        self.barriers = barriers
        self.store_waits = store_waits
        self.commits = commits

    def missing_fence(self, earlier, new) -> str:
        elsewhere = ""
        if new.thread is not earlier.thread:
            elsewhere = (
                f", nor in {new.access.partition} between acquiring the write and the "
                f"{new.access.operation}"
            )
        return (
            f"no fence_async_shared in {earlier.access.partition} between its "
            f"{earlier.access.operation} (a generic-proxy write) and the "
            f"{new.access.operation}{elsewhere}, which accesses shared memory through the "
            "async proxy"
        )

    def released_early(self, earlier, new) -> tuple[str, str]:
        """The release that comes before the access it releases: the phase a wait of
        ``new``'s partition took holds an arrival of ``earlier``'s partition made before
        ``earlier`` (after it issued it and before it completes, for an asynchronous one
        that no wait of its partition passed: one that did is named by that wait); the
        latest such arrival names it. (the words, the arrival), or ("", "")."""
        agent = earlier.agent
        if agent is not None and agent.passed_by:
            return "", ""
        issuer = agent.thread if agent is not None else earlier.thread
        issued = agent.clock.get(issuer.component, 0) if agent is not None else 0
        found = None
        for key, (where, took, early, _) in new.thread.waited.items():
            barrier = self.barriers.get(key)
            if early or took < 0 or barrier is None or took >= len(barrier.phase_arrivals):
                continue
            if agent is not None and key == agent.barrier:
                continue
            for clock, source, owner in barrier.phase_arrivals[took]:
                at = clock.get(issuer.component, 0)
                if (
                    owner == issuer.component
                    and at >= issued
                    and clock.get(earlier.component, 0) < earlier.epoch
                    and (found is None or at > found[0])
                ):
                    found = (at, source, barrier, where, took)
        if found is None:
            return "", ""
        _, source, barrier, where, took = found
        what = earlier.access.operation
        before = f"the {what}"
        if agent is not None:
            before = f"{_RETIRED_BY[agent.completion]} retires the {what}"
        return (
            f"the release comes before the access it releases: {source} arrives on mbarrier "
            f"{barrier.name} before {before}, and the wait of {new.access.partition} on it at "
            f"{where} takes that arrival's phase {took}",
            source,
        )

    def released_late(self, earlier, new) -> tuple[str, str]:
        """The missing ordering named by the mbarrier that should carry it: an arrive after
        ``earlier`` (by its partition, or by whoever waited for its asynchronous operation)
        on an mbarrier that ``new``'s partition waits on for another phase, or never waits
        on. (the words, the arrival), or ("", "") when nothing arrives after ``earlier``.
        The mbarrier an asynchronous ``earlier`` completes at is not one (``missing`` names
        it)."""
        own = earlier.agent.barrier if earlier.agent is not None else None
        waited = new.thread.waited
        found = []
        for key, barrier in self.barriers.items():
            if key == own:
                continue
            for phase, arrivals in enumerate((*barrier.phase_arrivals, barrier.arrivals)):
                for clock, source, _ in arrivals:
                    after = clock.get(earlier.component, 0)
                    if after >= earlier.epoch and not happens_before(clock, new.clock):
                        found.append((key not in waited, after, phase, source, key, barrier))
        if earlier.agent is not None:
            # Its own partition issues the access over it: only a release it waits on for
            # the wrong phase is named; else ``missing`` says no release is waited for.
            found = [candidate for candidate in found if not candidate[0]]
        if not found:
            return "", ""
        unwaited, _, phase, source, key, barrier = min(found, key=lambda f: f[:2])
        partition, what = new.access.partition, earlier.access.operation
        if unwaited:
            return (
                f"{partition} never waits on mbarrier {barrier.name}, which {source} arrives "
                f"on after the {what}",
                source,
            )
        where, took, _, _ = waited[key]
        if took < 0:
            took_text = "passed before its first phase completed (by its parity), before"
        else:
            took_text = f"took phase {took}, which completed without"
        arrivals = "arrival" if barrier.count == 1 else "arrivals"
        return (
            f"the wait of {partition} on mbarrier {barrier.name} at {where} {took_text} "
            f"the arrive after the {what}: {source}, on phase {phase} ({barrier.name} "
            f"completes a phase at {barrier.count} {arrivals}); the wait's parity or the "
            "barrier's arrival count lets it pass early",
            source,
        )

    def missing(self, earlier, new) -> str:
        """Which ordering is missing between ``earlier`` and ``new``, in words."""
        agent = earlier.agent
        reader = new.access.partition
        if (
            agent is not None
            and agent.completion == "tcgen05"
            and new.agent is not None
            and new.agent.completion == "tcgen05"
            and agent.thread is new.thread
        ):
            return (
                f"PTX runs a tcgen05_mma after an earlier tcgen05 operation of its partition "
                f"only with the same accumulator and shape (or after a copy, or its "
                f"accumulator writes after the earlier MMA's operand reads): the "
                f"{agent.what} runs until its commit barrier, which {reader} does not wait on "
                f"before the {new.access.operation}"
            )
        late, late_source = "", ""
        if (agent is None and earlier.thread is not new.thread) or (
            agent is not None and agent.completion == "mbarrier" and agent.thread is new.thread
        ):
            late, late_source = self.released_late(earlier, new)
        # A release never waited for is the plainest account. A release that comes before
        # the access (not for a TMA load: its release is its own barrier's phase) is the
        # account when the release after the access is that same arrive, a later trip of it
        # (else that other release, waited for on the wrong phase, is).
        if late.startswith(f"{new.access.partition} never waits on"):
            return late
        issuer = agent.thread if agent is not None else earlier.thread
        if (
            issuer is not new.thread
            and (agent is None or agent.completion != "mbarrier")
            and not self._store_waits_elsewhere(earlier)
        ):
            early, early_source = self.released_early(earlier, new)
            if early and (not late or late_source == early_source):
                return early
        if late:
            return late
        if agent is not None:
            return self._not_retired(earlier, new)
        if earlier.thread is new.thread:
            return (
                f"the {new.access.operation} is asynchronous: program order does not put it "
                f"after the {earlier.access.operation}"
            )
        return (
            f"neither is ordered before the other: {earlier.access.partition} and {reader} wait on "
            "no mbarrier phase that the other arrives on after its access"
        )

    def _not_retired(self, earlier, new) -> str:
        """An asynchronous ``earlier`` that nothing retires before ``new``: the wait that
        leaves it outstanding, or the one that took another phase than its completion's."""
        agent = earlier.agent
        reader, what = new.access.partition, new.access.operation
        if agent.completion == "mbarrier" and agent.barrier is not None:
            return self._load_not_waited(agent, new)
        if agent.completion == "dot_wait":
            if agent.thread is new.thread and agent.passed_by:
                return (
                    f"the {agent.what} reads until a warpgroup_mma wait retires it, and the "
                    f"{agent.passed_by} between it and the {what} leaves it outstanding (it "
                    "retires all but the newest)"
                )
            if agent.thread is new.thread:
                return (
                    f"the {agent.what} reads until a warpgroup_mma wait retires it, and there is "
                    f"none between it and the {what}"
                )
            outstanding = ""
            if agent.passed_by:
                outstanding = f" (the {agent.passed_by} leaves it outstanding)"
            return (
                f"the {agent.what} reads until a warpgroup_mma wait retires it{outstanding}, and "
                f"{reader} waits on no mbarrier phase arrived after a wait that retires it "
                f"before the {what}"
            )
        if agent.completion == "store_wait":
            if agent.passed_by:
                return (
                    f"the {agent.what} reads until a TMA store wait retires it, and the "
                    f"{agent.passed_by} before the {what} leaves it outstanding"
                )
            elsewhere = self._store_waits_elsewhere(earlier)
            if elsewhere:
                return (
                    f"the {agent.what} reads until a TMA store wait of its own partition "
                    f"({earlier.access.partition}) retires it; the TMA store wait at "
                    f"{elsewhere[0]} retires only that partition's stores"
                )
            return (
                f"the {agent.what} reads until a TMA store wait retires it, and there is none "
                f"between it and the {what}"
            )
        return self._tcgen05_not_waited(agent, new)

    def _store_waits_elsewhere(self, earlier) -> list[str]:
        """The TMA store waits of other partitions than that of ``earlier``, a TMA store
        that no wait of its own partition passed: the wait the report names."""
        agent = earlier.agent
        if agent is None or agent.completion != "store_wait" or agent.passed_by:
            return []
        return [
            where
            for partition, where in self.store_waits.items()
            if partition != earlier.access.partition
        ]

    def _took(self, waited) -> str:
        """What a wait (``Thread.waited``'s entry) took, in words."""
        _, took, early, _ = waited
        took_text = "passed at once on the fresh barrier" if took < 0 else f"took phase {took}"
        if early:
            took_text += f" by its parity, in the timing where phase {took + 1} completes after it"
        return took_text

    def _tcgen05_not_waited(self, agent, new) -> str:
        """A tcgen05 operation ``new``'s partition does not wait for: the wait that took
        another phase than its commit's, the barrier its commit arrives on that the partition
        never waits on, or no commit of its partition at all (one of another partition
        tracks only that partition's operations)."""
        reader, what = new.access.partition, new.access.operation
        signalled = []
        for key, barrier in self.barriers.items():
            for phase, arrivals in enumerate((*barrier.phase_arrivals, barrier.arrivals)):
                found = [source for clock, source, _ in arrivals if clock.get(agent.component)]
                if found:
                    signalled.append((key not in new.thread.waited, phase, found[0], key))
                    break
        if signalled:
            unwaited, phase, source, key = min(signalled)
            name = self.barriers[key].name
            completes = f"completes at phase {phase} of mbarrier {name} ({source})"
            if unwaited:
                return (
                    f"the {agent.what} {completes}, which {reader} never waits on before the {what}"
                )
            waited = new.thread.waited[key]
            if waited[1] < phase:
                return (
                    f"the {agent.what} {completes}, and the wait of {reader} on it at "
                    f"{waited[0]} {self._took(waited)}"
                )
            return (
                f"the {agent.what} {completes}, and {reader} does not wait for that phase "
                f"before the {what}"
            )
        others = [
            where for partition, where in self.commits.items() if partition != agent.thread.name
        ]
        elsewhere = ""
        if others:
            elsewhere = (
                f"; the tcgen05 commit at {others[0]} tracks only that partition's tcgen05 "
                "operations"
            )
        return (
            f"the {agent.what} runs until a tcgen05 commit of its own partition "
            f"({agent.thread.name}) arrives on an mbarrier, and none does before the {what}"
            f"{elsewhere}"
        )

    def _issued_early(self, agent, took: int, new) -> str:
        """A TMA load issued over bytes a reader still reads (for the phase ``took`` of the
        load's barrier): the latest wait of the load's partition before it, when it passed on
        a fresh barrier or early, is the release it did not wait for; "" when it did not."""
        if not agent.waited:
            return ""
        key, wait = max(agent.waited.items(), key=lambda found: found[1][3])
        if wait[1] >= 0 and not wait[2]:
            return ""
        barrier = self.barriers.get(key)
        name = barrier.name if barrier else "its mbarrier"
        return (
            f"{agent.thread.name} issues the {agent.what} over bytes {new.access.partition} "
            f"reads after its wait for phase {took}, with no release of them: the wait of "
            f"{agent.thread.name} on mbarrier {name} at {wait[0]} {self._took(wait)}"
        )

    def _load_not_waited(self, agent, new) -> str:
        """A TMA load that ``new``'s partition does not wait for: it never waits on its
        mbarrier, its wait there took another phase (the wait named), or it issues a TMA
        load over it with no release waited for."""
        barrier = self.barriers.get(agent.barrier)
        name = barrier.name if barrier else "its mbarrier"
        reader, what = new.access.partition, new.access.operation
        completes = f"completes at mbarrier {name} only after the {what} (in this timing)"
        if agent.phase >= 0:
            completes = f"completes phase {agent.phase} of mbarrier {name}"
            if agent.landed_late:
                completes += (
                    " (in the timing where it lands after a later arrival on it, which "
                    "completes the phase before in its place)"
                )
        waited = new.thread.waited.get(agent.barrier)
        if (
            agent.thread is not new.thread
            and waited is not None
            and 0 <= waited[1]
            and (agent.phase < 0 or waited[1] < agent.phase)
        ):
            # The reader took the phase it names, an earlier one: the load came too soon.
            overran = self._issued_early(agent, waited[1], new)
            if overran:
                return overran
        if waited is not None and (agent.phase < 0 or waited[1] != agent.phase):
            return (
                f"the {agent.what} {completes}, and the wait of {reader} on it at {waited[0]} "
                f"{self._took(waited)}"
            )
        if agent.thread is new.thread:
            return (
                f"the {agent.what} {completes}, and {reader} issues the {what} over the same "
                "bytes waiting for no release of them: no mbarrier phase it waits on is arrived "
                "on after that phase (a consumer's release, on an empty barrier)"
            )
        if waited is None:
            return f"the {agent.what} {completes}, which {reader} never waits on before the {what}"
        return (
            f"the {agent.what} {completes}, and {reader} does not wait for that phase before the "
            f"{what}"
        )
