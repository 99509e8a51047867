"""The core store interface: what every room may ask of the shared engine.

The memory rows, their scopes and visibility, their text index and concepts,
transactions and snapshots: every capability's own queries are in its part of the
store, in its folder (`parts.py`), and a room that needs them types its store as
that part, or as a Protocol extending this one with just the methods it calls.

Invariant: a room sees rows and records, never a connection, a cursor or a
backend exception (the shapes are in `rows.py`, re-exported here).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from assocmem.schema import NewMemory
from assocmem.store.rows import (
    ConceptLessons,
    EntityRow,
    LinkRow,
    NoteLink,
    NoteRow,
    RankFields,
    RelationRow,
    VectorRows,
    View,
    new_id,
    new_public_id,
)
from assocmem.types import Record, Scope, Stats, WriteResult

if TYPE_CHECKING:
    import numpy as np


__all__ = [
    "ConceptLessons",
    "EntityRow",
    "LinkRow",
    "NoteLink",
    "NoteRow",
    "RankFields",
    "RelationRow",
    "Store",
    "VectorRows",
    "View",
    "new_id",
    "new_public_id",
]


class Store(Protocol):
    """What the engine needs from a backend. All methods translate backend errors."""

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; nested calls become savepoints."""

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction: the queries inside see one consistent state."""

    @abc.abstractmethod
    def write(
        self, scope: Scope, memories: Sequence[NewMemory], vectors: np.ndarray | None = None
    ) -> list[WriteResult]:
        """Store memories in one transaction, adding co-occurrence to their links;
        ``vectors`` (row i for memory i) are stored with them when given."""

    @abc.abstractmethod
    def layers(self, scope: Scope) -> list[int]:
        """Ids of the existing scope layers a reader in ``scope`` sees."""

    @abc.abstractmethod
    def visible(self, view: View, seqs: Sequence[int]) -> set[int]:
        """The memories among ``seqs`` that ``view`` may see."""

    @abc.abstractmethod
    def lexical(self, view: View, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """``(seq, BM25 score)`` of visible memories matching any of ``terms``, best first."""

    @abc.abstractmethod
    def match_counts(self, scope: Scope, terms: Sequence[str], cap: int) -> dict[str, int]:
        """How many memories of the reader's layers (any status) the full-text index
        matches for each term, up to ``cap``: a statistic, like BM25's document
        frequency, that no other tenant's writes change. Counted below
        `lexical.COMMON_POSTINGS`; above, estimated from the newest memories, so the
        work is bounded (store/lexical.py)."""

    @abc.abstractmethod
    def size(self, scope: Scope | None = None) -> int:
        """How many memories the reader's layers hold (any status); with no scope, an
        upper bound on the whole store's, for readiness checks only (never a read's
        statistic: it counts other tenants)."""

    @abc.abstractmethod
    def fingerprint_matches(self, view: View, fingerprint: str, limit: int) -> list[int]:
        """Visible memories whose text has this fingerprint, newest first."""

    @abc.abstractmethod
    def authors(self, scope: Scope) -> list[str]:
        """Distinct authors of memories in the reader's layers (`forget` drops a name
        once no memory of its layer carries it)."""

    @abc.abstractmethod
    def touch(self, ids: Sequence[str], when: str) -> None:
        """Record a read: restart these memories' decay clocks at ``when``. The new
        clocks may wait in the process for its next write (records it reads carry
        them meanwhile)."""

    @abc.abstractmethod
    def keep_access_clock_in(self, writer: Store) -> None:
        """Send every later `touch` to ``writer``: a store that only reads (a server's
        reader connection) then never writes, and reads still restart clocks."""

    @abc.abstractmethod
    def info(self, key: str) -> str | None:
        """A fact recorded about the store, such as the embedder that filled it."""

    @abc.abstractmethod
    def set_info(self, key: str, value: str) -> None:
        """Record a fact about the store."""

    @abc.abstractmethod
    def keyed_records(self, view: View, limit: int) -> list[Record]:
        """Visible records whose meta carries numeric ``key`` and ``value`` lists."""

    @abc.abstractmethod
    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]:
        """The readable records among ``ids``, in the order given; unknown ids skipped."""

    @abc.abstractmethod
    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        """Records by internal sequence number (callers got the seqs from a scoped query)."""

    @abc.abstractmethod
    def rank_fields(self, seqs: Sequence[int]) -> dict[int, RankFields]:
        """The ranking fields of memories by sequence number."""

    @abc.abstractmethod
    def visible_seqs(
        self, scope: Scope, ids: Sequence[str], statuses: Sequence[str] = ("active",)
    ) -> dict[str, int]:
        """Internal sequence numbers of the readable memories among ``ids`` (of these statuses)."""

    @abc.abstractmethod
    def concept_ids(self, names: Sequence[str]) -> dict[str, int]:
        """Ids of the known concepts among ``names``; unknown names are absent."""

    @abc.abstractmethod
    def concept_names(self, ids: Sequence[int]) -> dict[int, str]:
        """Names of concept ids."""

    @abc.abstractmethod
    def intern_concepts(self, names: Sequence[str]) -> dict[str, int]:
        """Ids for ``names``, creating the missing ones (inside a transaction)."""

    @abc.abstractmethod
    def concepts_of(self, seqs: Sequence[int]) -> dict[int, list[int]]:
        """Concept ids of each memory."""

    @abc.abstractmethod
    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]:
        """Readable active records in arrival order after sequence ``after``, paged."""

    @abc.abstractmethod
    def stats(self, scope: Scope) -> Stats:
        """Counts in the reader's view."""

    @abc.abstractmethod
    def delete_memories(self, scope: Scope, seqs: Sequence[int]) -> int:
        """Delete memories for good, with everything that points at them, and subtract
        the co-occurrence they added to their layer's links."""

    @abc.abstractmethod
    def update_memory(
        self, seq: int, columns: Mapping[str, Any], access: Sequence[str] | None = None
    ) -> None:
        """Assign these allow-listed columns (``tags value meta protected access``, as
        stored) of one memory, never its text; with ``access``, move it into the layer
        of that access class (refused, `InvalidInput` naming ``access``, where that
        layer holds the same observation or its key's active value)."""

    @classmethod
    @abc.abstractmethod
    def hooks(cls, name: str) -> tuple[Callable[..., Any], ...]:
        """The hooks called ``name`` that the capabilities' parts mixed into this store
        declare (`parts.py`), in registration order: what a read's gates ask."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections. Safe to call twice."""
