"""The canonical sources a memory is attributed to: its own source and its taint.

Invariant: every attribution feature (receipts, monitor, budgets) reads sources
through here, so they all charge, watch and commit the same set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from assocmem.text.sources import canonical_source
from assocmem.trust.store import TrustRow

# The source a memory with none is attributed to: unsourced records share one
# budget and one detector rather than escape them.
UNATTRIBUTED = "(unattributed)"


class Attributing(Protocol):
    """What finding the sources a memory answers for reads: its standing row."""

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...


def sources(own: Iterable[str | None], taint: Iterable[str] = ()) -> tuple[str, ...]:
    """The sorted, distinct canonical sources of a memory: what it says of itself
    (its ``source``'s canonical form, its stored ``source_canonical``) and the
    sources it inherited through ``derived_from``."""
    return tuple(sorted({s for s in own if s} | {s for s in taint if s}))


def own_sources(source: str | None, stored_canonical: str | None) -> tuple[str | None, ...]:
    """A memory's own source as resolved now and as stored: two values when a relabel
    changed one of them but not the other, so neither edit hides."""
    return (canonical_source(source), stored_canonical)


def charged(store: Attributing, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The sources each memory (by seq) answers for in the monitor and the budget: its
    own canonical source and its taint, or ``UNATTRIBUTED``."""
    rows = store.trust_rows(list(seqs))
    found = {}
    for seq in seqs:
        row = rows.get(seq)
        own = [row.source] if row is not None else []
        found[seq] = sources(own, row.taint if row is not None else ()) or (UNATTRIBUTED,)
    return found
