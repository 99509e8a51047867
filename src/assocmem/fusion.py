"""Rank fusion: pure functions that turn each arm's ranking into one ordering.

Invariant: fusion sees only ranks, never raw arm scores, so arms with unrelated
score scales (BM25, cosine, link weights) combine without calibration; ties
break on the memory id, so the same inputs always give the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", int, str)

# Reciprocal Rank Fusion constant from Cormack, Clarke & Büttcher (SIGIR 2009),
# who found k = 60 robust across collections; it damps the gap between top ranks.
RRF_K = 60.0

# Arm order: on equal rank, the earlier arm is named as an item's source.
ARM_ORDER: tuple[str, ...] = ("concept_scoped", "hebbian_retrieval")

# Weight of each arm's vote. An associative hit is one step removed from what was
# asked, so its vote counts half: a memory reached through a link ranks below a
# direct match of similar rank, yet above the long tail of weak direct matches.
ARM_WEIGHTS: Mapping[str, float] = {"concept_scoped": 1.0, "hebbian_retrieval": 0.5}


@dataclass(frozen=True)
class Fused(Generic[K]):
    """One candidate after fusion: its score, its rank in each arm, its best arm."""

    key: K
    score: float
    ranks: dict[str, int]
    parts: dict[str, float]
    source: str


def rrf(
    rankings: Mapping[str, Sequence[K]],
    *,
    weights: Mapping[str, float] = ARM_WEIGHTS,
    k: float = RRF_K,
    order: Sequence[str] = ARM_ORDER,
) -> list[Fused[K]]:
    """Weighted Reciprocal Rank Fusion of ranked key lists, best first.

    ``rankings`` maps an arm name to its keys, best first (rank 1). A key's score
    is the sum over arms of ``weight / (k + rank)``; its source is the arm where
    it ranked best (earlier in ``order`` on ties). Equal scores order by key.
    """
    ranks: dict[K, dict[str, int]] = {}
    for arm, keys in rankings.items():
        for rank, key in enumerate(keys, start=1):
            ranks.setdefault(key, {}).setdefault(arm, rank)
    position = {arm: i for i, arm in enumerate(order)}
    fused = []
    for key, by_arm in ranks.items():
        parts = {arm: weights.get(arm, 1.0) / (k + rank) for arm, rank in by_arm.items()}
        source = min(by_arm, key=lambda arm: (by_arm[arm], position.get(arm, len(position)), arm))
        fused.append(Fused(key, sum(parts.values()), dict(by_arm), parts, source))
    fused.sort(key=lambda f: (-f.score, f.key))
    return fused
