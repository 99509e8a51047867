"""Precedents: what outcomes taught earlier reads that meant what this one means.

Lessons (`lessons`) key what an outcome taught on the question's concepts, so a
later question carrying the same words finds the rated memory; a question that
says the same thing in other words carries none of them. So a read rated through
its handle (`feedback(read=...)`) also keeps its meaning: the query vector the
attached embedder gave it. A new question looks up the rated reads nearest it in
that space, as semantic caches and memory-based agents look up past queries, and
each of them votes for what it was taught.

The vote is a soft nearest-neighbour one. The ten nearest rated reads each count
by how near they are compared with the nearest (`TEMPERATURE`), and the background
counts as one more neighbour that taught nothing: the median similarity to all
rated reads (questions share form and topic, so similarity between any two runs
well above zero), or, while ten or fewer reads are rated, the median similarity of
the memories the semantic arm ranks. A nearest precedent hardly nearer than the
background leaves much of the weight with it, so what it taught holds a small share.

Outcomes are aggregated, never taken from the first or latest rating: a
precedent gives each memory it rated its weight times that memory's outcome (as a
share of its strongest), a harmful rating counting against, and a memory's share
is the part of all the weight that agrees on it. A memory votes only when that is
most of it (`MAJORITY`): three near precedents that rated the right note outvote
one that rated a wrong one, which gets no vote; nearby questions answered in
different ways say nothing; a memory rated harmful as often as helpful gets
nothing. (A lesson also speaks for a concept's plurality answer, `lessons.MAJORITY`:
its outcomes are counted, where a precedent's weight is a guess from nearness that
the background shares, so only a majority of it is taken as agreement.)

How far an answer carries between questions depends on the store and the
embedder: where rewordings of a question sit nearer each other than questions
with other answers do, a near precedent is a good guess; where a reader's
questions all sit about equally near each other (one conversation's questions
about its two speakers, say) it is not. So each vote is scaled by what the
consulted precedents show about it (`_Carry`), a conformal test: for each of them,
how near the nearest one answered apart came to it is how near a question with
another answer gets here, and the question's similarity to the memory's nearest
voter is ranked among those. Nearer than every one of them, the vote keeps most of
its weight; no nearer than most, little; with none to compare, a half (Laplace's
rule of succession).

A read with no embedder has no precedent arm; one whose store holds no rated read
finds nothing in it.
"""

from __future__ import annotations

import bisect
import itertools
import math
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from assocmem.optional import require_numpy
from assocmem.store import View
from assocmem.types import Scope, Via

if TYPE_CHECKING:
    import numpy as np

# Rated reads consulted per question, nearest first: enough that a majority can
# outvote a wrong rating among several similar questions, few enough that a topic
# asked about often does not crowd out the question's own precedents.
NEAREST = 10
# Precedents a result names in `via`, nearest first.
SHOWN = 3
# How sharply nearer precedents outvote farther ones: one this much less similar to
# the question than the nearest counts 1/e as much. Rewordings of one question sit
# within a few hundredths of each other in a sentence embedder's cosine, questions
# about other things tenths apart, so the close ones vote together and the far ones
# barely count: a soft nearest-neighbour vote, not a single nearest guess.
TEMPERATURE = 0.05
# A precedent vote needs most of the nearby questions' weight to agree on the memory:
# where the nearest past questions were answered in different ways, they say nothing.
MAJORITY = 0.5


class RatedReads(Protocol):
    """What the precedent arm reads: the scope's rated reads and what each taught,
    and which of the memories they vote for the reader sees."""

    def rated_reads_mark(self, scope: Scope) -> tuple[int, int]: ...

    def rated_reads(
        self, scope: Scope, model: str, known: Collection[str]
    ) -> tuple[list[str], dict[str, bytes]]: ...

    def read_lessons(
        self, read_ids: Sequence[str]
    ) -> dict[str, tuple[tuple[str, ...], list[tuple[int, float]]]]: ...

    def visible(self, view: View, seqs: Sequence[int]) -> set[int]: ...


@dataclass(frozen=True)
class PrecedentHit:
    """A memory earlier rated reads vote for.

    ``share`` is the part of the consulted precedents' weight (the background's
    included) that rated it helpful, harmful ratings counted against it;
    ``confidence`` is the share times how likely an answer carries as far as the
    nearest precedent that rated it (`_Carry`): what its vote in fusion carries;
    ``precedents`` are ``(read id, similarity)`` of those that rated it helpful,
    nearest first.
    """

    seq: int
    share: float
    precedents: tuple[tuple[str, float], ...]
    confidence: float


@dataclass
class _Rated:
    """A scope's rated reads as one model saw them, as of their mark, kept up to date
    by appending what was rated since: their ids, and their vectors as the first
    ``len(ids)`` rows of ``rows`` (grown by doubling)."""

    mark: tuple[int, int]
    ids: list[str]
    rows: Any

    @property
    def matrix(self) -> Any:
        return self.rows[: len(self.ids)]


# Per store: (scope, model) -> its rated reads.
_CACHE: weakref.WeakKeyDictionary[RatedReads, dict[tuple[Scope, str], _Rated]] = (
    weakref.WeakKeyDictionary()
)


def hits(
    store: RatedReads,
    view: View,
    model: str,
    probe: np.ndarray,
    background: float,
) -> tuple[list[PrecedentHit], dict[str, tuple[str, ...]]]:
    """Readable memories the rated reads nearest ``probe`` vote for, best first, and
    the concepts of each precedent that voted (for `via`). ``background`` is the
    semantic arm's median similarity, the background while few reads are rated
    (see the module docstring)."""
    kept = _rated(store, view.scope, model)
    ids, matrix = kept.ids, kept.matrix
    if not ids:
        return [], {}
    np = require_numpy()
    similarity = (matrix @ probe).astype(np.float64)
    floor = background
    if len(ids) > NEAREST:  # enough rated reads that their median is the background
        floor = float(np.median(similarity))
    # The nearest few without sorting them all: every read at least as near as the
    # NEAREST-th (ties included), then ordered by similarity and id.
    bar = np.partition(similarity, -NEAREST)[-NEAREST] if len(ids) > NEAREST else -np.inf
    candidates = np.flatnonzero(similarity >= bar)
    order = sorted(candidates, key=lambda i: (-similarity[i], ids[i]))[:NEAREST]
    top = float(similarity[order[0]])
    if top <= floor:
        return [], {}
    near = {ids[i]: float(similarity[i]) for i in order if similarity[i] > floor}
    weights = {read_id: math.exp((s - top) / TEMPERATURE) for read_id, s in near.items()}
    taught = store.read_lessons(sorted(ids[i] for i in order))
    mass: dict[int, float] = {}
    voters: dict[int, list[tuple[str, float]]] = {}
    for read_id, weight in weights.items():
        _, rated = taught.get(read_id, ((), []))
        strongest = max((abs(outcome) for _, outcome in rated), default=0.0)
        for seq, outcome in rated:
            if strongest and outcome:
                mass[seq] = mass.get(seq, 0.0) + weight * outcome / strongest
                if outcome > 0:
                    voters.setdefault(seq, []).append((read_id, near[read_id]))
    # The background counts as one more neighbour that taught nothing.
    total = sum(weights.values()) + math.exp((floor - top) / TEMPERATURE)
    shares = {seq: m / total for seq, m in mass.items() if m / total > MAJORITY and seq in voters}
    readable = store.visible(view, sorted(shares)) if shares else set()
    found = []
    if readable:
        carries = _Carry(matrix, [(ids[i], i) for i in order], taught)
        for seq in sorted(readable, key=lambda seq: (-shares[seq], -seq)):
            by = tuple(sorted(voters[seq], key=lambda v: (-v[1], v[0])))
            found.append(PrecedentHit(seq, shares[seq], by, shares[seq] * carries.at(by[0][1])))
    concepts = {read_id: taught[read_id][0] for read_id in weights if read_id in taught}
    return found, concepts


def via(hit: PrecedentHit, concepts: Mapping[str, tuple[str, ...]]) -> tuple[Via, ...]:
    """The `Via` records of a precedent hit: each earlier read that voted for it
    (``read:<id>``), with its similarity to this question and its concepts as the path."""
    return tuple(
        Via(f"read:{read_id}", round(weight, 6), concepts.get(read_id, ()))
        for read_id, weight in hit.precedents[:SHOWN]
    )


def _rated(store: RatedReads, scope: Scope, model: str) -> _Rated:
    """The reader's rated reads and their vectors, cached per store: while their mark
    is unchanged a read asks one aggregate; reads rated since are appended, and only
    a read no longer there (forgotten) rebuilds the whole."""
    cache = _CACHE.setdefault(store, {})
    mark = store.rated_reads_mark(scope)
    known = cache.get((scope, model))
    if known is not None and known.mark == mark:
        return known
    have = set(known.ids) if known is not None else set()
    ids, fresh = store.rated_reads(scope, model, have)
    np = require_numpy()
    if known is None or not have <= set(ids):
        if known is not None:  # reads were deleted: fetch them whole again
            ids, fresh = store.rated_reads(scope, model, ())
        vectors = [np.frombuffer(fresh[i], dtype=np.float32) for i in ids]
        rows = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        cache[(scope, model)] = known = _Rated(mark, ids, rows)
        return known
    added = [i for i in ids if i not in have]
    if added:
        new = np.stack([np.frombuffer(fresh[i], dtype=np.float32) for i in added])
        used = len(known.ids)
        if known.rows.shape[0] < used + len(added):
            grown = np.zeros((2 * (used + len(added)), new.shape[1]), dtype=np.float32)
            if used:  # with no rows yet, the matrix has no width either
                grown[:used] = known.matrix
            known.rows = grown
        known.rows[used : used + len(added)] = new
        known.ids.extend(added)
    known.mark = mark
    return known


class _Carry:
    """How far an answer carries between questions here, read off the consulted
    precedents: for each one that taught something, how near the nearest of the
    others that was answered apart (taught none of the same memories) came to it.
    That is how near a question answered otherwise gets in this neighbourhood; a
    question no nearer its voter than that is no evidence the voter's answer applies.
    (This is a conformal test: those nearest-apart similarities are the calibration
    scores against which the question's similarity is ranked.)"""

    def __init__(
        self,
        matrix: Any,
        consulted: list[tuple[str, int]],
        taught: Mapping[str, tuple[tuple[str, ...], list[tuple[int, float]]]],
    ) -> None:
        helped = {
            read_id: {seq for seq, outcome in taught[read_id][1] if outcome > 0}
            for read_id, _ in consulted
            if read_id in taught
        }
        answered = [(read_id, row) for read_id, row in consulted if helped.get(read_id)]
        rows = [row for _, row in answered]
        similarity: Any = matrix[rows] @ matrix[rows].T
        nearest: dict[int, float] = {}
        for a, b in itertools.combinations(range(len(answered)), 2):
            if not helped[answered[a][0]] & helped[answered[b][0]]:  # answered apart
                for row in (a, b):
                    nearest[row] = max(nearest.get(row, -1.0), float(similarity[a, b]))
        self.nearest_apart = sorted(nearest.values())

    def at(self, similarity: float) -> float:
        """The chance that a question this near a precedent was answered as it was:
        the share of consulted precedents whose nearest differently answered one is
        farther than that, by Laplace's rule of succession (a half with none to go on)."""
        below = bisect.bisect_left(self.nearest_apart, similarity)
        return (below + 1) / (len(self.nearest_apart) + 2)
