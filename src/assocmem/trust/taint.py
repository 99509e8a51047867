"""Taint: the canonical sources a memory inherits through ``derived_from``.

Invariant: a derived memory's taint is the union, over its parents, of each
parent's own canonical source and the parent's taint, stored at write time, so a
summary of a summary carries every origin that fed it; a memory without parents
has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.trust.store import TrustRow


class Inheriting(Protocol):
    """What recording taint asks of the store: the parents' standing rows, and the
    taint rows to add."""

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...

    def add_taint(self, rows: Sequence[tuple[int, str]]) -> None: ...


def inherit(
    store: Inheriting, derived: Sequence[tuple[int, Sequence[int]]]
) -> list[frozenset[str]]:
    """Record the taint of each ``(seq, parent seqs)`` (inside the write's transaction);
    each one's taint, in order (what its receipt commits)."""
    parents = sorted({p for _, ps in derived for p in ps})
    rows = store.trust_rows(parents)
    taints = []
    for _, ps in derived:
        sources: set[str] = set()
        for parent in ps:
            row = rows.get(parent)
            if row is not None:
                sources |= row.taint | ({row.source} if row.source else set())
        taints.append(frozenset(sources))
    store.add_taint(
        [(seq, source) for (seq, _), found in zip(derived, taints, strict=True)
         for source in sorted(found)]
    )  # fmt: skip
    return taints
