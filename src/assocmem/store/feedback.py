"""Feedback in SQL: the append-only log of rated answers and each memory's valence.

A mixin of `SQLStore`. Invariants: the log is appended to, never edited (a
trigger refuses updates), and a call is known to its caller only by a random
id, never by the store-wide sequence; valence moves toward each outcome by a bounded rate in
one statement, so concurrent feedback never loses a move.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assocmem.store.connection import SQLConnection, roles_of
from assocmem.store.params import translated
from assocmem.store.protocol import new_public_id
from assocmem.text import times
from assocmem.types import Scope


class FeedbackQueries(SQLConnection):
    """The feedback log and valence of the SQL store (mixed into `SQLStore`)."""

    @translated
    def move_valence(self, seqs: Sequence[int], outcome: float, rate: float) -> None:
        with self.transaction():
            self._execute_in(
                "UPDATE memories SET valence = valence + ? * (? - valence) WHERE seq IN (?*)",
                seqs,
                before=[rate, outcome],
            )

    @translated
    def access_of(self, seqs: Sequence[int]) -> dict[int, str]:
        return dict(
            self._query_in(
                "SELECT m.seq, s.access FROM memories m JOIN scopes s ON s.id = m.scope_id"
                " WHERE m.seq IN (?*)",
                seqs,
            )
        )

    @translated
    def log_feedback(
        self,
        scope: Scope,
        access: str,
        ids: Sequence[str],
        concepts: Sequence[str],
        outcome: float,
    ) -> int:
        with self.transaction():
            layer, row = self._own_layer(scope, roles_of(access)), None
            while row is None:  # a clash of random ids is retried, never surfaced
                public_id = new_public_id()
                row = self._conn.execute(
                    "INSERT INTO feedback (scope_id, query_concepts, outcome, created_at,"
                    " public_id) VALUES (?,?,?,?,?) ON CONFLICT (public_id) DO NOTHING"
                    " RETURNING id",
                    (layer, json.dumps(list(concepts)), outcome, times.now(), public_id),
                ).fetchone()
            (feedback_id,) = row
            self._conn.executemany(
                "INSERT INTO feedback_items (feedback_id, memory_seq)"
                " SELECT ?, seq FROM memories WHERE id = ? ON CONFLICT DO NOTHING",
                [(feedback_id, memory_id) for memory_id in ids],
            )
            return public_id
