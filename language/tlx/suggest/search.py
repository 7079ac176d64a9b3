"""The smallest reuse tree over the pairs that may share: a search, scored by the planner.

The trees searched (docs/suggest.md says why they are enough for the tutorial kernels):

    distinct(block, block, ...)         the root: blocks never share a byte
    block = leaf | shared(part, part, ...)
    part  = item | distinct(item, item, ...)
    item  = leaf | shared(leaf, leaf, ...)   (shared only inside a distinct of two or more)
    leaf  = buffer, or reuse_group(buffer, group_size=K)   K divides the buffer's count

and the kernel's own tree (or ``reuse_phases``), which wins a tie: a suggestion is never larger
than the tree the kernel has, when the inference finds that tree safe.

A leaf's K makes K consecutive buffers one buffer group (K = its count: the whole ring is one
group, as an epilogue tile over a whole ring). Inside a ``shared`` node, group g of every part
starts at one place, so every buffer index of group g of one part may meet every buffer index
of group g of another: two leaves of different parts (or of one item) are *compatible* when no
such pair is a conflict (``pairs.Conflicts``). The search enumerates the blocks whose
overlapping leaves are pairwise compatible (those with items in a second pass, after the blocks
without), costs each by the planner's ideal footprint of its tree alone (``Plan.ideal_bytes``:
the root adds its blocks' footprints), picks the covers of the buffers by blocks of least cost
(dynamic programming over subsets), and plans the best few whole trees with the planner. A tree
is kept only when the plan's own extents (``planner.buffer_extents``) put no conflicting pair on
shared units; the smallest region wins, then the kernel's own tree, then the fewest planner
warnings, then the one that shares the fewest pairs of buffer indices. Every number is the
planner's; this module owns the shape of the search only.
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass

from .. import planner
from .pairs import Conflicts

# The most blocks enumerated, the most partial blocks visited to find them, and the covers
# planned whole.
BLOCKS = 20_000
VISITS = 200_000
COVERS = 12


def buffer_count(buffer: planner.Buffer) -> int:
    """How many buffers a user has (a TMEM tile without a buffer dimension is one)."""
    return buffer.shape[0] if planner.has_buffer_dimension(buffer) else 1


@dataclass(frozen=True)
class Candidate:
    """A tree the search planned: ``tree`` over the spec's users (a tuple of trees: the
    kernel's own ``reuse_phases``), its ``plan``, ``shared_pairs``, how many pairs of buffer
    indices of two users share units, and whether it is the kernel's ``own`` tree."""

    tree: planner.Group | tuple[planner.Group, ...]
    plan: planner.Plan
    shared_pairs: int
    own: bool = False

    @property
    def rank(self) -> tuple[int, bool, int, int]:
        """The smallest region first; of equal ones the kernel's own tree, then the one the
        planner warns of least (a warning to paste is a question to the author), then the one
        that shares the fewest pairs."""
        return (self.region_size, not self.own, len(self.plan.warnings), self.shared_pairs)

    @property
    def region_size(self) -> int:
        return self.plan.region_size


@dataclass(frozen=True)
class Search:
    """What the search found for one spec: ``best`` (None: no tree is safe and fits), the
    ``blocks`` it enumerated, whether it stopped at ``BLOCKS`` or ``VISITS`` (``bounded``),
    ``incompatible``: the pairs of users that share bytes in no grouping, each with a hazard
    that says why; ``inferred``, the best tree of the family alone (``best`` but for the
    kernel's own tree), and ``own_conflict``: where the kernel's own tree puts two buffer
    indices on shared units that the inference finds unordered ((user, index), (user, index),
    hazard; None when it has no tree or the tree is safe by the inference)."""

    best: Candidate | None
    blocks: int
    bounded: bool
    incompatible: tuple
    inferred: Candidate | None = None
    own_conflict: tuple | None = None


def _leaf(user: int, group_size: int):
    return user if group_size == 1 else planner.shared(user, group_size=group_size)


def _node(kind, children):
    return children[0] if len(children) == 1 else getattr(planner, kind)(*children)


def block_tree(block, renumber=None) -> planner.Group | int:
    """The tree of a block: a tuple of parts (``shared``), each a tuple of items
    (``distinct``), each a tuple of leaves (``shared``), each (user, group size)."""
    renumber = renumber or {}
    return _node(
        "shared",
        [
            _node(
                "distinct",
                [
                    _node("shared", [_leaf(renumber.get(user, user), size) for user, size in item])
                    for item in part
                ],
            )
            for part in block
        ],
    )


def _members(block) -> list[int]:
    return [user for part in block for item in part for user, _ in item]


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
        self.visits = 0

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
        """Every block whose overlapping leaves are pairwise compatible, users in ascending
        order within it: singletons of group size 1 and blocks of two or more parts; first
        those whose parts are lists of leaves, then (within ``BLOCKS`` in all) those with a
        part that lays a ``shared`` item after another item. True when ``BLOCKS`` stopped
        the enumeration."""
        users = len(self.buffers)
        found = [((((u, 1),),),) for u in range(users)]
        for nested in (False, True):
            for user in range(users):
                for size in self.groupings[user]:
                    if self._extend(found, user + 1, ((((user, size),),),), nested):
                        return found, True
        return found, False

    def _placements(self, parts, leaf, nested):
        """The blocks ``parts`` grows into with ``leaf``: a new part, a new item of a part,
        or (``nested``) a leaf of an item, where the leaf is compatible with every leaf it
        may overlap (those of the other parts and of its own item)."""
        for position in range(len(parts) + 1):
            others = [item for number, p in enumerate(parts) if number != position for item in p]
            if not all(self.compatible(leaf, o) for item in others for o in item):
                continue
            if position == len(parts):
                yield (*parts, ((leaf,),))
                continue
            part = parts[position]
            choices = [(*part, (leaf,))]
            if nested:
                choices += [
                    (*part[:number], (*item, leaf), *part[number + 1 :])
                    for number, item in enumerate(part)
                    if all(self.compatible(leaf, o) for o in item)
                ]
            for grown in choices:
                yield (*parts[:position], grown, *parts[position + 1 :])

    def _extend(self, found, next_user, parts, nested) -> bool:
        """Adds every block that grows from ``parts`` with users from ``next_user`` on: in
        the ``nested`` pass, only those with a ``shared`` item in a part of two or more items
        (the others are the first pass's, and an item alone in its part is a part of its
        own). True when ``BLOCKS`` stopped it."""
        for user in range(next_user, len(self.buffers)):
            for size in self.groupings[user]:
                for grown in self._placements(parts, (user, size), nested):
                    self.visits += 1
                    if len(found) >= BLOCKS or self.visits >= VISITS:
                        return True
                    items = [(len(part), len(item)) for part in grown for item in part]
                    kept = len(grown) >= 2 and (
                        not nested
                        or (
                            any(leaves > 1 for count, leaves in items if count > 1)
                            and all(leaves == 1 for count, leaves in items if count == 1)
                        )
                    )
                    if kept:
                        found.append(grown)
                    if self._extend(found, user + 1, grown, nested):
                        return True
        return False

    def cost(self, block) -> int | None:
        """The planner's ideal footprint of the block's tree alone (None: it plans no
        region, e.g. a buffer over the target's limit)."""
        known = self.cost_cache.get(block, -1)
        if known != -1:
            return known
        users = sorted(_members(block))
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
            members = _members(block)
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
        return self.planned(tree)

    def planned(self, tree, own=False) -> Candidate | None:
        """``tree`` (or phases) planned whole with the spec (explicit size kept), if it fits
        and its extents put no conflicting pair on shared units."""
        plan = planner.plan(self.full_spec, self.buffers, tree)
        if not plan.ok:
            return None
        shared = unsafe_pairs(plan, self.buffers, self.conflicts)
        if shared is None:
            return None
        return Candidate(tree, plan, shared, own)


def _overlapping(plan: planner.Plan, buffers):
    """Every two buffer indices ((user, index), (user, index)) of two users that ``plan``
    puts on shared units."""
    extents = planner.buffer_extents(plan, buffers)
    for number, first in enumerate(extents):
        for second in extents[number + 1 :]:
            if first.user != second.user and first.start < second.end and second.start < first.end:
                yield (first.user, first.index), (second.user, second.index)


def unsafe_pairs(plan: planner.Plan, buffers, conflicts: Conflicts) -> int | None:
    """How many pairs of buffer indices of two users ``plan`` puts on shared units, or None
    when one of them is a conflict."""
    shared = 0
    for first, second in _overlapping(plan, buffers):
        if conflicts.conflict(first, second):
            return None
        shared += 1
    return shared


def first_conflict(plan: planner.Plan, buffers, conflicts: Conflicts) -> tuple | None:
    """The first two buffer indices ``plan`` puts on shared units that are a conflict, with
    its hazard: ((user, index), (user, index), hazard), or None."""
    for first, second in _overlapping(plan, buffers):
        hazard = conflicts.conflict(first, second)
        if hazard:
            return first, second, hazard
    return None


def search(spec: planner.Spec, buffers, conflicts: Conflicts, own=None) -> Search:
    """The smallest safe tree of the family for ``buffers`` of ``spec``, or the kernel's
    ``own`` tree (or phases; None: it has none) when that is safe and no larger."""
    searcher = _Searcher(spec, buffers, conflicts)
    blocks, bounded = searcher.blocks()
    found = [searcher.candidate(cover) for _, cover in searcher.covers(blocks)]
    inferred = min(filter(None, found), key=lambda candidate: candidate.rank, default=None)
    best, own_conflict = inferred, None
    if own is not None:
        kept = searcher.planned(own, own=True)
        own_plan = planner.plan(spec, buffers, own)
        if kept is None and own_plan.ok:
            own_conflict = first_conflict(own_plan, searcher.buffers, conflicts)
        if kept is not None and (best is None or kept.rank < best.rank):
            best = kept
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
    return Search(best, len(blocks), bounded, incompatible, inferred, own_conflict)
