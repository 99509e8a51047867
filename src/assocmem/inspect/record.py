"""One record opened whole: the record, its key's supersession history, the feedback
calls that rated it, the entities it mentions and the declared relations it anchors
or joins.

Invariant: the record is any readable one, whatever its status (the dashboard opens
superseded and archived records too); an id the caller cannot read raises the same
`UnknownMemory` as `get`; every part is read in the caller's layers only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.graph.traverse import relation_view
from assocmem.inspect.types import Inspection
from assocmem.lifecycle import status
from assocmem.links import wording
from assocmem.links.store_feedback import FeedbackRow
from assocmem.links.types import FeedbackEntry
from assocmem.store import Store, View
from assocmem.store.protocol import EntityRow, RelationRow
from assocmem.trust import standing
from assocmem.types import STATUSES, Scope


class Worded(Protocol):
    """What showing logged concepts reads: how the reader's layers spell them."""

    def concept_ids(self, names: Sequence[str]) -> dict[str, int]: ...

    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]: ...


class Opened(Worded, Store, Protocol):
    """What opening a record reads: the record and its key's history (lifecycle), its
    trust marks, the feedback that rated it (the feedback part), its mentions and
    relations (the graph part)."""

    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]: ...

    def key_history(self, scope: Scope, subject: str, relation: str) -> list[int]: ...

    def feedback_calls(
        self, scope: Scope, *, seq: int | None = None, limit: int | None = None
    ) -> list[FeedbackRow]: ...

    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]: ...

    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]: ...

    def relations_of(self, scope: Scope, seq: int) -> list[RelationRow]: ...


def inspection(store: Opened, scope: Scope, record_id: str) -> Inspection:
    """The record ``record_id`` with its history, feedback, mentions and relations."""
    if not isinstance(record_id, str) or not record_id:
        raise InvalidInput("id must be a memory id string", field="id")
    with store.snapshot():
        seq = store.visible_seqs(scope, [record_id], statuses=STATUSES).get(record_id)
        if seq is None:
            raise UnknownMemory(f"no memory {record_id!r} is readable here", record_id=record_id)
        record = standing.marked(store, store.records_by_seq([seq]))[seq]
        history = status.history(store, View(scope), record.key) if record.key else []
        mentioned = store.mentions_of(scope, [seq]).get(seq, [])
        entities = store.entities_by_id(mentioned, scope)
        return Inspection(
            record=record,
            history=tuple(history),
            feedback=feedback_entries(store, scope, store.feedback_calls(scope, seq=seq)),
            mentions=tuple(dict.fromkeys(entities[e].name for e in mentioned if e in entities)),
            relations=tuple(
                relation_view(store, row, scope=scope) for row in store.relations_of(scope, seq)
            ),
        )


def feedback_entries(
    store: Worded, scope: Scope, rows: list[FeedbackRow]
) -> tuple[FeedbackEntry, ...]:
    """Feedback log rows as the caller sees them, their concepts in its words (`wording`)."""
    logged = [(public, at, outcome, json.loads(concepts)) for public, at, outcome, concepts in rows]
    said = wording.shown(store, scope, {}, {c for *_, concepts in logged for c in concepts})
    return tuple(
        FeedbackEntry(id=int(public), at=at, outcome=float(outcome),
                      query_concepts=tuple(said[c] for c in concepts))
        for public, at, outcome, concepts in logged
    )  # fmt: skip
