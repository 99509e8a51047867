"""One record opened whole: the record, its key's supersession history, the feedback
calls that rated it, the entities it mentions and the declared relations it anchors
or joins.

Invariant: the record is any readable one, whatever its status (the dashboard opens
superseded and archived records too); an id the caller cannot read raises the same
`UnknownMemory` as `get`; every part is read in the caller's layers only.
"""

from __future__ import annotations

import json

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.graph.traverse import relation_view
from assocmem.lifecycle import status
from assocmem.links import wording
from assocmem.store import Store, View
from assocmem.trust import standing as standings
from assocmem.types import STATUSES, FeedbackEntry, Inspection, Scope


def inspection(store: Store, scope: Scope, record_id: str) -> Inspection:
    """The record ``record_id`` with its history, feedback, mentions and relations."""
    if not isinstance(record_id, str) or not record_id:
        raise InvalidInput("id must be a memory id string", field="id")
    with store.snapshot():
        seq = store.visible_seqs(scope, [record_id], statuses=STATUSES).get(record_id)
        if seq is None:
            raise UnknownMemory(f"no memory {record_id!r} is readable here", record_id=record_id)
        record = standings.marked(store, store.records_by_seq([seq]))[seq]
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
    store: Store, scope: Scope, rows: list[tuple[int, str, float, str]]
) -> tuple[FeedbackEntry, ...]:
    """Feedback log rows as the caller sees them, their concepts in its words (`wording`)."""
    logged = [(public, at, outcome, json.loads(concepts)) for public, at, outcome, concepts in rows]
    said = wording.shown(store, scope, {}, {c for *_, concepts in logged for c in concepts})
    return tuple(
        FeedbackEntry(id=int(public), at=at, outcome=float(outcome),
                      query_concepts=tuple(said[c] for c in concepts))
        for public, at, outcome, concepts in logged
    )  # fmt: skip
