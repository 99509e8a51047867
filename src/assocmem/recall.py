"""Recall: the stages of a read, run in order in this one place.

1. scope filter: every store query below is restricted to the reader's scope
   and to active records before any ranking happens;
2. arms: each returns its own ranking (concept_scoped, hebbian_retrieval);
3. fusion: weighted Reciprocal Rank Fusion of the rankings;
4. explanation: each item names the arm that ranked it best, every arm that
   found it with its rank, its score parts, and the links that reached it.

Invariant: the same store state and request give the same items in the same order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from . import links
from .fusion import Fused, rrf
from .store import Store
from .types import Item, ReadResult, Scope

# Each arm hands fusion its best max(50, 5·k) candidates. Below that depth an RRF
# vote (≤ 1/(60 + 50)) cannot lift an item past one the arms agree on, and a
# shallow cut keeps fusion cheap when a hub concept reaches thousands of memories.
FUSION_DEPTH_MIN = 50
FUSION_DEPTH_PER_K = 5


@dataclass(frozen=True)
class ReadRequest:
    """A validated read: normalised query concepts and the bounds to respect."""

    concepts: tuple[str, ...]
    k: int
    hops: int
    threshold: float


def read(store: Store, scope: Scope, request: ReadRequest) -> ReadResult:
    """Run every stage for ``request`` in ``scope``."""
    with store.snapshot():
        query_ids = list(store.concept_ids(request.concepts).values())
        expansion = links.expand(
            store, scope, query_ids, threshold=request.threshold, hops=request.hops
        )
        direct = _concept_arm(store, scope, query_ids)
        associative = links.associative_hits(store, scope, expansion, query_ids)
        depth = max(FUSION_DEPTH_MIN, FUSION_DEPTH_PER_K * request.k)
        rankings = {
            "concept_scoped": direct[:depth],
            "hebbian_retrieval": [seq for seq, _, _ in associative[:depth]],
        }
        fused = rrf(rankings)
        reaches = {seq: r for seq, _, r in associative}
        items = _explain(store, _top(fused, request.k), reaches, request.k)
        names = store.concept_names(list(expansion.reached))
    return ReadResult(
        items=tuple(items),
        query_concepts=request.concepts,
        expanded_concepts={
            names[r.concept_id]: r.weight
            for r in sorted(
                expansion.reached.values(), key=lambda r: (-r.weight, names[r.concept_id])
            )
        },
        arms={arm: True for arm in rankings},
        bounds={
            "expansion_capped": int(expansion.capped),
            "expanded_concepts_cut": expansion.cut,
        },
    )


def _concept_arm(store: Store, scope: Scope, query_ids: Sequence[int]) -> list[int]:
    """Memories carrying a query concept: most concepts matched first, then newest."""
    rows = store.memories_with_concepts(scope, query_ids, per_concept=links.CANDIDATES_PER_CONCEPT)
    matches = Counter(seq for seq, _ in rows)
    return sorted(matches, key=lambda seq: (-matches[seq], -seq))


def _top(fused: list[Fused[int]], k: int) -> list[Fused[int]]:
    """The best ``k``, plus any candidates tied with the k-th, so ties can break on id."""
    if len(fused) <= k:
        return fused
    edge = fused[k - 1].score
    return [f for f in fused if f.score >= edge]


def _explain(
    store: Store, fused: list[Fused[int]], reaches: dict[int, list[links.Reach]], k: int
) -> list[Item]:
    records = store.records_by_seq([f.key for f in fused])
    concept_ids = {c for f in fused for r in reaches.get(f.key, []) for c in r.path}
    names = store.concept_names(sorted(concept_ids))
    items = [
        Item(
            record=records[f.key],
            score=f.score,
            source=f.source,
            sources=f.ranks,
            via=links.via(reaches.get(f.key, []), names),
            parts=f.parts,
        )
        for f in fused
        if f.key in records
    ]
    items.sort(key=lambda item: (-item.score, item.id))
    return items[:k]
