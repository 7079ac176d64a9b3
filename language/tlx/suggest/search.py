"""The smallest reuse tree over the pairs that may share: a search, scored by the planner.

The trees searched (every tree of the tutorials is one of them, docs/suggest.md):

    distinct(block, block, ...)         the root: blocks never share a byte
    block = leaf | shared(part, part, ...)
    part  = leaf | distinct(leaf, leaf, ...)
    leaf  = buffer, or reuse_group(buffer, group_size=K)   K divides the buffer's count

A leaf's K makes K consecutive buffers one buffer group (K = its count: the whole ring is one
group, as an epilogue tile over a whole ring). Inside a ``shared`` node, group g of every part
starts at one place, so every buffer index of group g of one part may meet every buffer index
of group g of another: two leaves of different parts are *compatible* when no such pair is a
conflict (``pairs.Conflicts``). The search enumerates the blocks whose parts are pairwise
compatible, costs each by the planner's ideal footprint of its tree alone (``Plan.ideal_bytes``:
the root adds its blocks' footprints), picks the covers of the buffers by blocks of least cost
(dynamic programming over subsets), and plans the best few whole trees with the planner. A tree
is kept only when the plan's own extents (``planner.buffer_extents``) put no conflicting pair on
shared units; the smallest region wins, then the one that shares the fewest pairs of buffer
indices. Every number is the planner's; this module owns the shape of the search only.
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass

from .. import planner
from .pairs import Conflicts

# The most blocks enumerated and the covers planned whole.
BLOCKS = 20_000
COVERS = 12


def buffer_count(buffer: planner.Buffer) -> int:
    """How many buffers a user has (a TMEM tile without a buffer dimension is one)."""
    return buffer.shape[0] if planner.has_buffer_dimension(buffer) else 1


@dataclass(frozen=True)
class Candidate:
    """A tree the search planned: ``tree`` over the spec's users, its ``plan``, and
    ``shared_pairs``, how many pairs of buffer indices of two users share units."""

    tree: planner.Group
    plan: planner.Plan
    shared_pairs: int

    @property
    def region_size(self) -> int:
        return self.plan.region_size


@dataclass(frozen=True)
class Search:
    """What the search found for one spec: ``best`` (None: no tree of the family is safe and
    fits), the ``blocks`` it enumerated, whether it stopped at ``BLOCKS`` (``bounded``), and
    ``incompatible``: the pairs of users that share bytes in no grouping, each with a hazard
    that says why."""

    best: Candidate | None
    blocks: int
    bounded: bool
    incompatible: tuple


def _leaf(user: int, group_size: int):
    return user if group_size == 1 else planner.shared(user, group_size=group_size)


def block_tree(block, renumber=None) -> planner.Group | int:
    """The tree of a block: a tuple of parts, each a tuple of (user, group size)."""
    renumber = renumber or {}
    parts = []
    for part in block:
        leaves = [_leaf(renumber.get(user, user), size) for user, size in part]
        parts.append(leaves[0] if len(leaves) == 1 else planner.distinct(*leaves))
    if len(parts) == 1:
        return parts[0]
    return planner.shared(*parts)


class _Searcher:
    def __init__(self, spec: planner.Spec, buffers, conflicts: Conflicts):
        self.spec = dataclasses.replace(spec, explicit_size_bytes=None)
        self.full_spec = spec
        self.buffers = tuple(buffers)
        self.conflicts = conflicts
        self.counts = [buffer_count(buffer) for buffer in self.buffers]
        self.groupings = [
            [size for size in range(1, count + 1) if count % size == 0] for count in self.counts
        ]
        users = len(self.buffers)
        self.index_pairs = {(u, v): [] for u in range(users) for v in range(users) if u != v}
        for (first, second), _ in conflicts.pairs.items():
            self.index_pairs[(first[0], second[0])].append((first[1], second[1]))
            self.index_pairs[(second[0], first[0])].append((second[1], first[1]))
        self.compatible_cache: dict = {}
        self.cost_cache: dict = {}

    def compatible(self, first, second) -> bool:
        """Whether leaves (user, group size) may be parts of one shared node."""
        key = (first, second)
        known = self.compatible_cache.get(key)
        if known is None:
            (u, ku), (v, kv) = first, second
            known = all(i // ku != j // kv for i, j in self.index_pairs[(u, v)])
            self.compatible_cache[key] = known
        return known

    def blocks(self) -> tuple[list, bool]:
        """Every block (a tuple of parts) whose parts are pairwise compatible, users in
        ascending order within it; singletons of group size 1 and blocks of two or more
        parts. True when ``BLOCKS`` stopped the enumeration."""
        users = len(self.buffers)
        found = [(((u, 1),),) for u in range(users)]
        bounded = False

        def extend(next_user, parts):
            nonlocal bounded
            for user in range(next_user, users):
                for size in self.groupings[user]:
                    leaf = (user, size)
                    for position in range(len(parts) + 1):
                        others = [p for number, p in enumerate(parts) if number != position]
                        if not all(self.compatible(leaf, o) for part in others for o in part):
                            continue
                        if position == len(parts):
                            grown = (*parts, (leaf,))
                        else:
                            grown = tuple(
                                (*p, leaf) if number == position else p
                                for number, p in enumerate(parts)
                            )
                        if len(found) >= BLOCKS:
                            bounded = True
                            return
                        if len(grown) >= 2:
                            found.append(grown)
                        extend(user + 1, grown)

        for user in range(users):
            for size in self.groupings[user]:
                extend(user + 1, (((user, size),),))
        return found, bounded

    def cost(self, block) -> int | None:
        """The planner's ideal footprint of the block's tree alone (None: it plans no
        region, e.g. a buffer over the target's limit)."""
        known = self.cost_cache.get(block, -1)
        if known != -1:
            return known
        users = sorted({user for part in block for user, _ in part})
        renumber = {user: position for position, user in enumerate(users)}
        tree = block_tree(block, renumber)
        if isinstance(tree, int):
            tree = planner.shared(tree)
        plan = planner.plan(self.spec, [self.buffers[user] for user in users], tree)
        known = plan.ideal_bytes if plan.ok else None
        self.cost_cache[block] = known
        return known

    def covers(self, blocks) -> list:
        """The ``COVERS`` covers of every user by disjoint blocks of least total cost."""
        users = len(self.buffers)
        by_lowest: dict[int, list] = {}
        for block in blocks:
            members = [user for part in block for user, _ in part]
            mask = sum(1 << user for user in members)
            by_lowest.setdefault(min(members), []).append((mask, block))
        best: dict[int, list] = {0: [(0, ())]}
        for mask in range(1, 1 << users):
            lowest = (mask & -mask).bit_length() - 1
            options = []
            for block_mask, block in by_lowest.get(lowest, ()):
                if block_mask & mask != block_mask:
                    continue
                rest = best.get(mask ^ block_mask)
                if not rest:
                    continue
                cost = self.cost(block)
                if cost is None:
                    continue
                options.extend((cost + total, (*blocks_, block)) for total, blocks_ in rest)
            if options:
                best[mask] = heapq.nsmallest(COVERS, options, key=lambda o: (o[0], len(o[1])))
        return best.get((1 << users) - 1, [])

    def candidate(self, blocks) -> Candidate | None:
        """The cover's tree planned whole with the spec (explicit size kept), if it fits and
        its extents put no conflicting pair on shared units."""
        trees = [block_tree(block) for block in blocks]
        tree = trees[0] if len(trees) == 1 else planner.distinct(*trees)
        if isinstance(tree, int):
            tree = planner.shared(tree)
        plan = planner.plan(self.full_spec, self.buffers, tree)
        if not plan.ok:
            return None
        shared = unsafe_pairs(plan, self.buffers, self.conflicts)
        if shared is None:
            return None
        return Candidate(tree, plan, shared)


def unsafe_pairs(plan: planner.Plan, buffers, conflicts: Conflicts) -> int | None:
    """How many pairs of buffer indices of two users ``plan`` puts on shared units, or None
    when one of them is a conflict."""
    extents = planner.buffer_extents(plan, buffers)
    shared = 0
    for number, first in enumerate(extents):
        for second in extents[number + 1 :]:
            if first.user == second.user:
                continue
            if first.start < second.end and second.start < first.end:
                if conflicts.conflict((first.user, first.index), (second.user, second.index)):
                    return None
                shared += 1
    return shared


def search(spec: planner.Spec, buffers, conflicts: Conflicts) -> Search:
    """The smallest safe tree of the family for ``buffers`` of ``spec``."""
    searcher = _Searcher(spec, buffers, conflicts)
    blocks, bounded = searcher.blocks()
    best = None
    for _, cover in searcher.covers(blocks):
        candidate = searcher.candidate(cover)
        if candidate is None:
            continue
        rank = (candidate.region_size, candidate.shared_pairs)
        if best is None or rank < (best.region_size, best.shared_pairs):
            best = candidate
    users = len(searcher.buffers)
    incompatible = tuple(
        (u, v, conflicts.between(u, v)[0])
        for u in range(users)
        for v in range(u + 1, users)
        if not any(
            searcher.compatible((u, ku), (v, kv))
            for ku in searcher.groupings[u]
            for kv in searcher.groupings[v]
        )
    )
    return Search(best, len(blocks), bounded, incompatible)
