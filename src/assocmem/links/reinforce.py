"""Earned reinforcement: a read raises a returned memory's value only as far as the
read found it relevant.

Invariants: off unless the `Memory` asks for it (it makes identical reads drift);
the gain of an item is ``RATE × relevance`` of the way to ``CAP`` — diminishing as
the value nears the cap, never past it, never lowering a value; relevance is the
item's share of the top score discounted by the cube of its rank, because fused
scores are flat across ranks and a weak, frequent false positive (returned low on
many reads) must earn far less than a memory returned on top. Gains are atomic
increments in the store, so concurrent reads never lose one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.types import ReadResult

RATE = 0.05
CAP = 2.0
MIN_GAIN = 1e-6  # below this a gain is not worth a write


class Reinforced(Protocol):
    """The one write reinforcement makes: capped value gains (the procedures part of
    the store keeps values; named here so links need not import that room)."""

    def reinforce(self, gains: Sequence[tuple[int, float]], cap: float) -> None: ...


def relevance(result: ReadResult) -> list[tuple[str, float]]:
    """Each returned item's relevance in [0, 1], in order."""
    if not result.items:
        return []
    top = max(item.score for item in result.items)
    if top <= 0:
        return []
    return [
        (item.id, max(0.0, item.score / top) / (rank + 1) ** 3)
        for rank, item in enumerate(result.items)
    ]


def reinforce(store: Reinforced, seqs: dict[str, int], result: ReadResult) -> None:
    """Raise the value of the read's items by their relevance (``seqs``: id → seq)."""
    gains = [
        (seqs[i], RATE * weight)
        for i, weight in relevance(result)
        if i in seqs and RATE * weight >= MIN_GAIN
    ]
    store.reinforce(gains, CAP)
