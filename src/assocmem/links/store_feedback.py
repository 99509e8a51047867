"""Feedback in SQL: the append-only log of rated answers and each memory's valence.

A mixin of `SQLStore`. Invariants: the log is appended to, never edited (a
trigger refuses updates), and a call is known to its caller only by a random
id, never by the store-wide sequence; valence moves toward each outcome by a bounded rate in
one statement, so concurrent feedback never loses a move.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assocmem.store.connection import roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import new_public_id
from assocmem.text import times
from assocmem.types import Scope


class FeedbackQueries(SQLStore):
    """The feedback log and valence of the SQL store: a part mixed into `SQLStore`."""

    def forget_feedback(self, seq: int, layer: int) -> None:
        """A forget's hook: a logged call that rated nothing but forgotten memories
        would keep their trace, so it goes whole once its last rated memory goes (the
        log is append-only, never edited; what it taught is in links and lessons)."""
        rated = [f for (f,) in self._query(
            "SELECT DISTINCT feedback_id FROM feedback_items WHERE memory_seq = ?", [seq]
        )]  # fmt: skip
        if not rated:
            return
        self._conn.execute("DELETE FROM feedback_items WHERE memory_seq = ?", [seq])
        self._execute_in(
            "DELETE FROM feedback WHERE id IN (?*) AND NOT EXISTS"
            " (SELECT 1 FROM feedback_items i WHERE i.feedback_id = feedback.id)",
            rated,
        )

    def forget_feedback_naming(self, agent_id: str, names: Sequence[str]) -> None:
        """A forget's hook: a logged call whose question named a concept now erased
        would keep its name, so it goes whole."""
        if not names:
            return
        layers = self.agent_layers(agent_id)
        doomed: set[int] = set()
        for name in names:
            pattern = "%" + _like_escaped(json.dumps(name)) + "%"  # as log_feedback wrote it
            for fid, logged in self._query(
                f"SELECT id, query_concepts FROM feedback WHERE {in_list('scope_id', layers)}"
                " AND query_concepts LIKE ? ESCAPE '\\'",
                [*layers, pattern],
            ):
                if name in json.loads(logged):
                    doomed.add(int(fid))
        if doomed:
            self._execute_in("DELETE FROM feedback_items WHERE feedback_id IN (?*)", sorted(doomed))
            self._execute_in("DELETE FROM feedback WHERE id IN (?*)", sorted(doomed))

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

    part = StorePart("feedback", on_forget=forget_feedback, on_erase=forget_feedback_naming)


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
