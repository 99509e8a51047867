"""Changes to learned links that a write or feedback has recorded but not yet
folded into `links`.

Upserting each pair of a write into `links` dirties a random page of the table
and of both weight indexes per pair: at 100k memories that page traffic, not the
SQL, was most of a write's cost. So a SQLite write appends one row per memory to
`pending_links`, holding its concept ids (every pair of them gains a count), and
feedback one row per pair it moved: a few pages at the end of one table. They are
folded into `links` in one sorted pass once enough pair changes wait (`fold_at`),
by the store's fold worker or the writer (`folding`): each touched page is
rewritten once per fold instead of once per commit. Between folds `links` does not
change at all.

Every read adds what is pending to what `links` holds, so nothing a write taught
is ever invisible. Readers keep a copy of the pending rows (`PendingLinks`),
extended by id after each commit: ids only grow and are never reused, rows are
only appended, and a fold deletes every one up to the last it counted (all of them,
or all but what was appended while a fold worker planned it), so "the first id
changed" means "reload". Because `links` is fixed until that happens, the copy also
remembers each pending pair's weight in `links` once it has been looked up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from assocmem.order import heaviest_first

# When to fold: once the pending pair changes reach a quarter of the rows of
# `links`, so a fold (which rewrites most pages of the links B-trees) is paid once
# per that many changes at any store size, and a connection's copy (~200 bytes a
# pair, measured) stays in proportion to the store; never fewer than FOLD_MIN, so a
# young store does not fold at every write, and never more than FOLD_MAX, which
# bounds the copy (~20 MB; a server holds one per pooled connection) and a fold's
# time (about half a second at 100k memories).
FOLD_RATIO = 4
FOLD_MIN = 10_000
FOLD_MAX = 100_000


def fold_at(links: int) -> int:
    """Pending pair changes that start a fold when `links` holds ``links`` rows."""
    return min(FOLD_MAX, max(FOLD_MIN, links // FOLD_RATIO))


class PendingPair:
    """One pair's pending changes in one layer, summed, and its weight in `links`.

    Kept small, as a copy may hold 100k of them: co-occurrence adds to `count` (a
    small int, shared by Python), and only feedback gives a pair float fields of
    its own (`moved`, `outcome_sum`), so most pairs share the zeros.
    """

    __slots__ = ("count", "moved", "outcome_sum", "feedback_count", "last_row", "stored")

    def __init__(self) -> None:
        self.count = 0
        self.moved = 0.0  # weight moved by feedback
        self.outcome_sum = 0.0
        self.feedback_count = 0
        self.last_row = 0  # id of the latest pending row of the pair
        # Weight folded so far: its `links` row's, 1 if once-seen (`once_seen`), else 0;
        # None: not looked up.
        self.stored: float | None = None

    @property
    def weight(self) -> float:
        """The pending change of the pair's weight: its count plus what feedback moved."""
        return self.count + self.moved


class PendingSide:
    """The pending pairs of one concept in one layer where it is the lower id (or
    the higher): ``{other end: PendingPair}``."""

    __slots__ = ("pairs", "unresolved", "rowless", "settled", "_ranked", "_lowered")

    def __init__(self) -> None:
        self.pairs: dict[int, PendingPair] = {}
        # Other ends of pairs whose folded weight is not known yet (a pair is only
        # looked up once it could matter: `LinkQueries._resolve_pending`).
        self.unresolved: list[int] = []
        # Those of them found to have no row, not yet looked for in a memory
        # (once-seen or nothing: `once_seen`).
        self.rowless: set[int] = set()
        # (bound on an unfetched pair's folded weight, bar) when last resolved: None
        # once a row for this side arrives.
        self.settled: tuple[float, float] | None = None
        self._ranked: list[tuple[int, float]] | None = None
        self._lowered: int | None = None

    def changed(self) -> None:
        self._ranked = self._lowered = self.settled = None

    def resolved(self, settled: tuple[float, float]) -> None:
        """Folded weights were read for some of its pairs under ``settled``."""
        self._ranked = None
        self.settled = settled

    def lowered(self) -> int:
        """How many pairs pending feedback has lowered (a negative pending weight)."""
        if self._lowered is None:
            self._lowered = sum(p.weight < 0 for p in self.pairs.values())
        return self._lowered

    def resolve(self, other: int, stored: float) -> None:
        pair = self.pairs.get(other)
        if pair is not None and pair.stored is None:
            pair.stored = stored
            self.rowless.discard(other)

    def ranked(self) -> list[tuple[int, float]]:
        """``(other end, stored + pending weight)``, strongest first, ties on the lower
        id; a pair not yet resolved counts its pending weight alone. Kept until the
        next row for this side (`changed`) or a resolution (`resolved`)."""
        if self._ranked is None:
            self._ranked = heaviest_first(
                [(other, (p.stored or 0.0) + p.weight) for other, p in self.pairs.items()]
            )
        return self._ranked


class PendingLinks:
    """A reader's copy of `pending_links`, reachable from either end of each pair."""

    def __init__(self) -> None:
        self.first: int | None = None  # id of the first row copied (None: none yet)
        self.last = 0  # id of the last row copied
        # (layer, concept, concept is the lower id) -> its side; both ends of a pair
        # share one PendingPair.
        self._sides: dict[tuple[int, int, bool], PendingSide] = {}
        self._ids: dict[int, int] = {}  # one int object per concept id, however many pairs

    def clear(self) -> None:
        self.first, self.last = None, 0
        self._sides.clear()
        self._ids.clear()

    def __bool__(self) -> bool:
        return bool(self._sides)

    def add(self, rows: Iterable[Sequence[Any]]) -> None:
        """Copy rows ``(id, layer, concept ids as a JSON array, count, moved, outcome)``
        of `pending_links` read in id order: every pair of the ids changes by them
        (``moved`` and ``outcome`` are None on co-occurrence rows). The pairs are
        made here rather than in SQL (the `pending_pairs` view): it takes a quarter
        of the time."""
        sides, ids = self._sides, self._ids
        for row_id, layer, concepts, count, moved, outcome in rows:
            if self.first is None:
                self.first = row_id
            self.last = row_id
            for a, b in combinations(sorted(json.loads(concepts)), 2):
                a, b = ids.setdefault(a, a), ids.setdefault(b, b)
                lower = sides.get((layer, a, True)) or sides.setdefault(
                    (layer, a, True), PendingSide()
                )
                upper = sides.get((layer, b, False)) or sides.setdefault(
                    (layer, b, False), PendingSide()
                )
                pair = lower.pairs.get(b)
                if pair is None:
                    pair = lower.pairs[b] = upper.pairs[a] = PendingPair()
                    lower.unresolved.append(b)
                    upper.unresolved.append(a)
                pair.count += count
                if outcome is not None:
                    pair.moved += moved
                    pair.outcome_sum += outcome
                    pair.feedback_count += 1
                pair.last_row = row_id
                lower.changed()
                upper.changed()

    def side(self, layer: int, concept: int, *, concept_is_a: bool) -> PendingSide | None:
        """``concept``'s pending pairs in ``layer`` where it is the lower id
        (``concept_is_a``) or the higher one; None if it has none."""
        return self._sides.get((layer, concept, concept_is_a))

    def pair(self, layer: int, a: int, b: int) -> PendingPair | None:
        """The pending changes of pair ``(a, b)`` (``a < b``) in ``layer``."""
        side = self._sides.get((layer, a, True))
        return side.pairs.get(b) if side else None

    def around(
        self, layers: Sequence[int], concepts: Sequence[int]
    ) -> dict[tuple[int, int], list[PendingPair]]:
        """The pending pairs with an end in ``concepts``: ``{(a, b): one per layer}``."""
        found: dict[tuple[int, int], list[PendingPair]] = {}
        asked = set(concepts)
        for layer in layers:
            for concept in asked:
                for concept_is_a in (True, False):
                    side = self._sides.get((layer, concept, concept_is_a))
                    for other, pair in side.pairs.items() if side else ():
                        if not concept_is_a and other in asked:
                            continue  # both ends asked: taken once, from the lower one
                        key = (concept, other) if concept_is_a else (other, concept)
                        found.setdefault(key, []).append(pair)
        return found
