"""The rows a whole-store import restores of the records themselves (see
`transfer.py`); what the links parts learned travels as their own rows
(`assocmem.links.rows`).

Invariant: every one is frozen and names memories as a caller does (by id), never
by a store's internal keys, so a row read from one store means the same in
another. Times are ISO 8601 UTC strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.schema import NewMemory


@dataclass(frozen=True)
class ImportedMemory:
    """A validated memory to import with what the store set when it was first written."""

    memory: NewMemory
    id: str
    status: str
    valence: float
    created_at: str
    accessed_at: str | None
    superseded_by: str | None  # the id of the record that retired it
