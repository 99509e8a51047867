"""The Hebbian layer: learned links between concepts, how reads follow them and
how outcomes move them.

Invariants: link weights are state of their own, persisted by the store and never
recomputed from memories; a read follows only links whose weight, summed over
the scope layers it can see, reaches the threshold; feedback moves every link
between a query concept and a rated memory's concept by the outcome times how
sharply that query concept points at the memory (see `lessons.teach`), and the
weight a reader sees never drops below zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from assocmem.errors import UnknownMemory, UnknownRead
from assocmem.links import lessons, wording
from assocmem.links.types import Edge, FeedbackResult, Graph
from assocmem.order import best_first
from assocmem.store import LinkRow, Store, View
from assocmem.store.rows import AskedRead
from assocmem.types import Scope, Via

# A link is followed once its weight reaches 2: one co-occurrence can be chance,
# two is a pattern (the documented default).
DEFAULT_THRESHOLD = 2.0
MAX_HOPS = 3
# Concepts one hop may add, strongest first. Bounds the fan-out: a concept linked
# to thousands of others adds its 24 strongest, so a read never touches every memory.
MAX_EXPANSION_PER_HOP = 24
# Memories read per concept (newest first) when gathering candidates. With the
# expansion cap this bounds a read to 24 × 32 associative rows whatever the store size.
CANDIDATES_PER_CONCEPT = 32
# Each rating moves a memory's valence half-way to the outcome: one rating shows,
# three agreeing ratings take it past 0.85, and a single outlier cannot pin it.
VALENCE_RATE = 0.5
# Edges returned by `graph` at most.
MAX_GRAPH_EDGES = 500


class Neighbours(Protocol):
    """What an expansion reads: the links out of the concepts it has reached."""

    def neighbors(
        self, scope: Scope, concept_ids: Sequence[int], *, min_weight: float, limit: int
    ) -> list[tuple[int, int, float]]: ...


class ConceptPostings(Protocol):
    """What the associative arm reads: the visible memories carrying a concept."""

    def memories_with_concepts(
        self, view: View, concept_ids: Sequence[int], *, per_concept: int, skip: Sequence[int] = ()
    ) -> dict[int, list[int]]:
        """Each concept's newest ``per_concept`` visible carriers not in ``skip``, newest
        first; concepts no such memory carries are left out."""
        ...


class FeedbackStore(lessons.LessonWrites, Store, Protocol):
    """What feedback reads and moves in its one transaction: the rated memories, the
    read they came from, their links, valence and lessons, and the feedback log."""

    def asked_read(self, scope: Scope, read_id: str) -> AskedRead | None: ...

    def teach_read(self, read_id: str, rated: Sequence[tuple[int, float]]) -> None: ...

    def access_of(self, seqs: Sequence[int]) -> dict[int, str]: ...

    def links_between(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]: ...

    def adjust_links(
        self, scope: Scope, changes: Sequence[tuple[str, int, int, float]], outcome: float
    ) -> None: ...

    def move_valence(self, seqs: Sequence[int], outcome: float, rate: float) -> None: ...

    def log_feedback(
        self,
        scope: Scope,
        access: str,
        ids: Sequence[str],
        concepts: Sequence[str],
        outcome: float,
    ) -> int: ...


class LinkWalk(wording.Worded, Store, Protocol):
    """What a graph of the links reads: the links around concepts and their words."""

    def links_around(
        self, scope: Scope, concept_ids: Sequence[int], limit: int
    ) -> list[LinkRow]: ...


@dataclass(frozen=True)
class Reach:
    """A concept reached along learned links: the strongest path to it."""

    concept_id: int
    weight: float
    path: tuple[int, ...]


@dataclass(frozen=True)
class Expansion:
    """Concepts a read reached, and how many qualifying ones the per-hop cap cut.

    ``capped`` is True when a hop had more qualifying concepts than it may add;
    ``cut`` counts the ones the bounded scan saw and left: a lower bound.
    """

    reached: dict[int, Reach]
    cut: int

    @property
    def capped(self) -> bool:
        return self.cut > 0


def expand(
    store: Neighbours, scope: Scope, query_ids: Sequence[int], *, threshold: float, hops: int
) -> Expansion:
    """Follow links at or above ``threshold`` from the query concepts, up to ``hops``.

    A path's weight is its weakest link; each concept keeps its strongest path,
    found at the smallest hop count. Deterministic: ties break on concept id.
    """
    known: dict[int, Reach] = {q: Reach(q, math.inf, (q,)) for q in query_ids}
    reached: dict[int, Reach] = {}
    frontier, cut = list(query_ids), 0
    for _ in range(hops):
        if not frontier:
            break
        rows = store.neighbors(
            scope,
            frontier,
            min_weight=threshold,
            limit=MAX_EXPANSION_PER_HOP + len(known),
        )
        # Each new concept's best path, as (-weight, concept, the concept it came from):
        # a `Reach` is made only for those the hop keeps.
        step: dict[int, tuple[float, int, int]] = {}
        for src, other, weight in rows:
            if other in known:
                continue
            strength = min(known[src].weight, weight)
            if other not in step or strength > -step[other][0]:
                step[other] = (-strength, other, src)
        ranked = sorted(step.values())
        kept = ranked[:MAX_EXPANSION_PER_HOP]
        cut += len(ranked) - len(kept)
        for negative, other, src in kept:
            reach = Reach(other, -negative, (*known[src].path, other))
            known[other] = reached[other] = reach
        frontier = [other for _, other, _ in kept]
    return Expansion(reached, cut)


def associative_hits(
    store: ConceptPostings,
    view: View,
    expansion: Expansion,
    concept_ranked: Sequence[int],
    limit: int,
) -> list[tuple[int, float, list[Reach]]]:
    """The ``limit`` memories reached most strongly through expanded concepts, best first.

    Returns ``(memory seq, score, reaches)``; the score is the summed strength of
    the reached concepts a memory carries. The memories the concept arm ranks
    (``concept_ranked``) are left to it, so no memory gets both arms' votes for
    one match; leaving out that short list, not every carrier of a query concept,
    costs the store one list check per row instead of a probe per query concept.
    """
    if not expansion.reached:
        return []
    carriers = store.memories_with_concepts(
        view, list(expansion.reached), per_concept=CANDIDATES_PER_CONCEPT, skip=concept_ranked
    )
    score: dict[int, float] = {}
    for concept, reach in expansion.reached.items():
        weight = reach.weight
        for seq in carriers.get(concept, ()):
            score[seq] = score.get(seq, 0.0) + weight
    best = best_first(score, limit, higher_keys_first=True)
    # What reached them, only for the few kept.
    by_memory: dict[int, list[Reach]] = {seq: [] for seq in best}
    for concept, reach in expansion.reached.items():
        for seq in carriers.get(concept, ()):
            if seq in by_memory:
                by_memory[seq].append(reach)
    return [(seq, score[seq], by_memory[seq]) for seq in best]


def via(reaches: Sequence[Reach], names: dict[int, str]) -> tuple[Via, ...]:
    """The `Via` records of a memory's reaches, strongest first, then by name."""
    steps = [Via(names[r.concept_id], r.weight, tuple(names[c] for c in r.path)) for r in reaches]
    return tuple(sorted(steps, key=lambda v: (-v.weight, v.concept)))


def apply_feedback(
    store: FeedbackStore,
    scope: Scope,
    ids: Sequence[str],
    outcome: float,
    query_concepts: Sequence[str],
    read: str | None = None,
) -> FeedbackResult:
    """Rate the memories an answer relied on (validated arguments), in one transaction.
    With ``read``, the concepts that read asked join ``query_concepts``, and its
    meaning is taught too (`precedents`)."""
    with store.transaction():
        seqs = store.visible_seqs(scope, ids)
        for memory_id in ids:
            if memory_id not in seqs:
                raise UnknownMemory(
                    f"no memory {memory_id!r} is readable in this scope", record_id=memory_id
                )
        asked = store.asked_read(scope, read) if read is not None else None
        if read is not None and asked is None:
            raise UnknownRead(
                f"no read {read!r} is kept in this scope (made elsewhere, forgotten with"
                " what it returned, or pruned)"
            )
        if asked is not None:
            query_concepts = list(dict.fromkeys([*asked.concepts, *query_concepts]))
            store.teach_read(asked.id, [(seq, outcome) for seq in sorted(seqs.values())])
        query_ids = sorted(set(store.intern_concepts(query_concepts).values()))
        classes = store.access_of(list(seqs.values()))
        concepts = store.concepts_of(list(seqs.values()))
        taught = lessons.teach(store, scope, classes, query_ids, outcome)
        # A pair learned from a restricted memory stays in that memory's access class,
        # so what a role may not read cannot surface as a link; a pair any public
        # memory supports is learned publicly. A link moves by the outcome times how
        # sharply its query concept points at the rated memory, so a filler asked
        # with every answer links to none of them.
        pair_class: dict[tuple[int, int], str] = {}
        scale: dict[tuple[int, int], float] = {}
        for seq, memory_concepts in concepts.items():
            for q in query_ids:
                for c in memory_concepts:
                    if q != c:
                        pair = (min(q, c), max(q, c))
                        pair_class[pair] = min(pair_class.get(pair, classes[seq]), classes[seq])
                        scale[pair] = max(scale.get(pair, 0.0), taught.shares[(q, seq)])
        pairs = sorted(pair_class)
        current = store.links_between(scope, pairs)
        changes = [
            (pair_class[pair], *pair, lessons.feedback_delta(current.get(pair, 0.0), move))
            for pair in pairs
            if (move := outcome * scale[pair])
        ]
        store.adjust_links(scope, changes, outcome)
        store.move_valence(list(seqs.values()), outcome, VALENCE_RATE)
        log_class = max(classes.values(), default="")
        feedback_id = store.log_feedback(scope, log_class, ids, query_concepts, outcome)
    return FeedbackResult(
        id=feedback_id,
        links_updated=len(changes),
        memories_updated=len(seqs),
        lessons_updated=taught.lessons,
    )


def graph(store: LinkWalk, scope: Scope, concepts: Sequence[str], depth: int) -> Graph:
    """The links around ``concepts`` out to ``depth`` hops (any weight), breadth first.

    Each edge points away from the concept it was reached from; one between two
    concepts reached at the same hop points from the name that sorts first. Concept
    ids are store-wide and in creation order, so no orientation may depend on them:
    it would tell whether another agent used a word first. Concepts are shown as
    this scope wrote them (`wording`); the orientation reads their stems.
    """
    with store.snapshot():  # the links and the words they are shown in, from one state
        edges, tied, truncated = _walked(store, scope, store.concept_ids(concepts).values(), depth)
        ends = sorted({c for src, dst, _ in edges.values() for c in (src, dst)})
        names = store.concept_names(ends)
        said = wording.shown(store, scope, names, concepts)
    for pair in tied:
        src, dst, row = edges[pair]
        if names[dst] < names[src]:
            edges[pair] = (dst, src, row)
    result = [
        Edge(
            source=said[names[src]],
            target=said[names[dst]],
            weight=row.weight,
            count=row.count,
            valence=row.outcome_sum / row.feedback_count if row.feedback_count else 0.0,
            updated_at=row.updated_at,
        )
        for src, dst, row in edges.values()
    ]
    result.sort(key=lambda e: (-e.weight, e.source, e.target))
    shown = tuple(said[c] for c in concepts)
    return Graph(concepts=shown, edges=tuple(result), truncated=truncated)


def _walked(
    store: LinkWalk, scope: Scope, start: Iterable[int], depth: int
) -> tuple[dict[tuple[int, int], tuple[int, int, LinkRow]], set[tuple[int, int]], bool]:
    """The links out to ``depth`` hops from ``start``, each ``(a, b)`` pair as ``(from,
    to, row)``; the pairs whose ends were reached at the same hop; whether the edge
    limit cut the walk."""
    seen = set(start)
    frontier, truncated = list(seen), False
    edges: dict[tuple[int, int], tuple[int, int, LinkRow]] = {}
    tied: set[tuple[int, int]] = set()
    for _ in range(depth):
        if not frontier:
            break
        budget = MAX_GRAPH_EDGES - len(edges)
        rows = store.links_around(scope, frontier, budget + 1)
        truncated = truncated or len(rows) > budget
        in_frontier, nxt = set(frontier), []
        for row in rows[:budget]:
            if (row.a, row.b) in edges:
                continue
            src, dst = (row.a, row.b) if row.a in in_frontier else (row.b, row.a)
            if dst in in_frontier:
                tied.add((row.a, row.b))  # both ends reached at this hop: oriented by name
            edges[(row.a, row.b)] = (src, dst, row)
            if dst not in seen:
                seen.add(dst)
                nxt.append(dst)
        frontier = nxt
    return edges, tied, truncated
