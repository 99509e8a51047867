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
background leaves much of the weight with it, so what it taught holds no majority.

Outcomes are aggregated, never taken from the first or latest rating: a
precedent gives each memory it rated its weight times that memory's outcome (as a
share of its strongest), a harmful rating counting against, and a memory's share
is the part of all the weight that agrees on it. It votes only when that is most
of it (`MAJORITY`), as a lesson speaks sharply only for a concept's majority
answer: three near precedents that rated the right note outvote one that rated a
wrong one, nearby questions answered in different ways say nothing, and a memory
rated harmful as often as helpful gets nothing. A read with no embedder has no
precedent arm; one whose store holds no rated read finds nothing in it.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assocmem.optional import require_numpy
from assocmem.store import Store, View
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
# A precedent vote needs most of the nearby questions' weight to agree on the memory,
# as a lesson needs most of a concept's outcomes (`lessons.MAJORITY`): where the
# nearest past questions were answered in different ways, they say nothing of this one.
MAJORITY = 0.5


@dataclass(frozen=True)
class PrecedentHit:
    """A memory earlier rated reads vote for.

    ``share`` is the part of the consulted precedents' weight (the background's
    included) that rated it helpful, harmful ratings counted against it: the
    confidence its vote in fusion carries;
    ``precedents`` are ``(read id, similarity)`` of those that rated it helpful,
    nearest first.
    """

    seq: int
    share: float
    precedents: tuple[tuple[str, float], ...]


# Per store: (scope, model) -> (the rated reads' mark, their ids, their vectors as rows).
_Rated = tuple[tuple[int, int], list[str], Any]
_CACHE: weakref.WeakKeyDictionary[Store, dict[tuple[Scope, str], _Rated]] = (
    weakref.WeakKeyDictionary()
)


def hits(
    store: Store,
    view: View,
    model: str,
    probe: np.ndarray,
    background: float,
) -> tuple[list[PrecedentHit], dict[str, tuple[str, ...]]]:
    """Readable memories the rated reads nearest ``probe`` vote for, best first, and
    the concepts of each precedent that voted (for `via`). ``background`` is the
    semantic arm's median similarity, the background while few reads are rated
    (see the module docstring)."""
    ids, matrix = _rated(store, view.scope, model)
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
    taught = store.read_lessons(sorted(weights))
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
    helped = {seq: m for seq, m in mass.items() if m / total > MAJORITY and seq in voters}
    readable = store.visible(view, sorted(helped)) if helped else set()
    found = [
        PrecedentHit(
            seq,
            helped[seq] / total,
            tuple(sorted(voters[seq], key=lambda v: (-v[1], v[0]))),
        )
        for seq in helped
        if seq in readable
    ]
    found.sort(key=lambda hit: (-hit.share, -hit.seq))
    concepts = {read_id: taught[read_id][0] for read_id in weights if read_id in taught}
    return found, concepts


def via(hit: PrecedentHit, concepts: Mapping[str, tuple[str, ...]]) -> tuple[Via, ...]:
    """The `Via` records of a precedent hit: each earlier read that voted for it
    (``read:<id>``), with its similarity to this question and its concepts as the path."""
    return tuple(
        Via(f"read:{read_id}", round(weight, 6), concepts.get(read_id, ()))
        for read_id, weight in hit.precedents[:SHOWN]
    )


def _rated(store: Store, scope: Scope, model: str) -> tuple[list[str], Any]:
    """The reader's rated reads and their vectors as one matrix, cached per store:
    while their mark is unchanged a read asks one aggregate, and a change fetches
    only the vectors of reads rated since."""
    cache = _CACHE.setdefault(store, {})
    mark = store.rated_reads_mark(scope)
    known_mark, known_ids, known_rows = cache.get((scope, model), ((0, 0), [], None))
    if mark == known_mark:
        return known_ids, known_rows
    known = {read_id: row for row, read_id in enumerate(known_ids)}
    ids, fresh = store.rated_reads(scope, model, known)
    rows = [fresh[i] if i in fresh else known_rows[known[i]].tobytes() for i in ids]
    np = require_numpy()
    matrix = np.stack([np.frombuffer(b, dtype=np.float32) for b in rows]) if rows else None
    cache[(scope, model)] = (mark, ids, matrix)
    return ids, matrix
