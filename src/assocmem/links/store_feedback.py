"""Feedback in SQL: the append-only log of rated answers and each memory's valence;
the log read back (pages, a memory's calls, outcomes by memory), counted for `stats`,
and out and back in with a whole store.

A mixin of `SQLStore`. Invariants: the log is appended to, never edited (a
trigger refuses updates), and a call is known to its caller only by a random
id, never by the store-wide sequence; valence moves toward each outcome by a bounded rate in
one statement, so concurrent feedback never loses a move.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assocmem.links.rows import LoggedFeedback
from assocmem.links.types import FeedbackCall
from assocmem.store.connection import roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import new_public_id
from assocmem.text import times
from assocmem.types import Scope

# A feedback log row as read back: (public id, created_at, outcome, query concepts JSON).
FeedbackRow = tuple[int, str, float, str]


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

    def forget_feedback_naming(self, layers: Sequence[int], names: Sequence[str]) -> None:
        """A forget's hook: a logged call of the agent (in ``layers``) whose question
        named a concept now erased would keep its name, so it goes whole."""
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

    def count_feedback(self, where: str, layers: Sequence[int]) -> dict[str, int]:
        """The stats hook: the feedback calls logged in ``layers``."""
        (count,) = self._query(f"SELECT COUNT(*) FROM feedback WHERE {where}", layers)[0]
        return {"feedback": int(count)}

    # -- inspect: the log read back

    @translated
    def feedback_page(
        self, scope: Scope, limit: int, offset: int, seq: int | None = None
    ) -> tuple[list[FeedbackCall], int]:
        layers = self._layers(scope)
        if not layers:
            return [], 0
        calls, params = _feedback_of(layers, seq, "JOIN scopes s ON s.id = f.scope_id")
        with self.snapshot():  # the page, its total and its rated memories from one state
            (total,) = self._query(f"SELECT COUNT(*) {calls}", params)[0]
            rows = self._query(
                "SELECT f.id, f.public_id, f.created_at, s.agent_id, s.project_id, s.channel,"
                f" f.outcome, f.query_concepts {calls} ORDER BY f.id DESC LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
            rated: dict[int, list[str]] = {}
            for feedback_id, memory_id in self._query_in(
                "SELECT i.feedback_id, m.id FROM feedback_items i"
                " JOIN memories m ON m.seq = i.memory_seq WHERE i.feedback_id IN (?*)"
                f" AND {in_list('m.scope_id', layers)} ORDER BY i.feedback_id, m.seq",
                [row[0] for row in rows],
                after=layers,
            ):
                rated.setdefault(feedback_id, []).append(memory_id)
        page = [
            FeedbackCall(
                id=int(public), at=at, agent_id=agent, project_id=project, channel=channel,
                outcome=float(outcome), query_concepts=tuple(json.loads(concepts)),
                memory_ids=tuple(rated.get(fid, ())),
            )
            for fid, public, at, agent, project, channel, outcome, concepts in rows
        ]  # fmt: skip
        return page, int(total)

    @translated
    def feedback_calls(
        self, scope: Scope, *, seq: int | None = None, limit: int | None = None
    ) -> list[FeedbackRow]:
        layers = self._layers(scope)
        if not layers:
            return []
        calls, params = _feedback_of(layers, seq)
        sql = f"SELECT f.public_id, f.created_at, f.outcome, f.query_concepts {calls}"
        if limit is None:
            return [tuple(row) for row in self._query(sql + " ORDER BY f.id", params)]
        rows = self._query(sql + " ORDER BY f.id DESC LIMIT ?", [*params, limit])
        return [tuple(row) for row in rows]

    @translated
    def outcomes_of(self, seqs: Sequence[int]) -> dict[int, list[float]]:
        """The feedback outcomes each memory was rated with, in log order."""
        found: dict[int, list[float]] = {}
        rows = self._query_in(
            "SELECT fi.memory_seq, f.outcome FROM feedback_items fi"
            " JOIN feedback f ON f.id = fi.feedback_id WHERE fi.memory_seq IN (?*)"
            " ORDER BY f.id",
            seqs,
        )
        for seq, outcome in rows:
            found.setdefault(seq, []).append(float(outcome))
        return found

    # -- portable: the whole log out and back in

    @translated
    def feedback_log(self, scope: Scope) -> list[LoggedFeedback]:
        layers = self._layers(scope)
        if not layers:
            return []
        with self.snapshot():
            calls = self._query(
                "SELECT f.id, s.access, f.public_id, f.query_concepts, f.outcome, f.created_at"
                " FROM feedback f JOIN scopes s ON s.id = f.scope_id"
                f" WHERE {in_list('f.scope_id', layers)} ORDER BY f.id",
                layers,
            )
            rated: dict[int, list[str]] = {}
            for feedback_id, memory_id in self._query_in(
                "SELECT i.feedback_id, m.id FROM feedback_items i"
                " JOIN memories m ON m.seq = i.memory_seq WHERE i.feedback_id IN (?*)"
                " ORDER BY i.feedback_id, m.seq",
                [c[0] for c in calls],
            ):
                rated.setdefault(feedback_id, []).append(memory_id)
        return [
            LoggedFeedback(
                tuple(roles_of(access)),
                int(public),
                tuple(json.loads(concepts)),
                float(outcome),
                created,
                tuple(rated.get(fid, ())),
            )  # fmt: skip
            for fid, access, public, concepts, outcome, created in calls
        ]

    @translated
    def restore_feedback(self, scope: Scope, calls: Sequence[LoggedFeedback]) -> list[bool]:
        """Whether each call was appended (False: its public id is already logged)."""
        appended = []
        with self.transaction():
            seqs = self.own_seqs(scope, sorted({i for c in calls for i in c.memory_ids}))
            for call in calls:
                row = self._conn.execute(
                    "INSERT INTO feedback (scope_id, query_concepts, outcome, created_at,"
                    " public_id) VALUES (?,?,?,?,?) ON CONFLICT (public_id) DO NOTHING"
                    " RETURNING id",
                    (
                        self._own_layer(scope, call.access),
                        json.dumps(list(call.query_concepts)),
                        call.outcome,
                        call.created_at,
                        call.public_id,
                    ),  # fmt: skip
                ).fetchone()
                appended.append(row is not None)
                if row is not None:
                    self._conn.executemany(
                        "INSERT INTO feedback_items (feedback_id, memory_seq) VALUES (?,?)"
                        " ON CONFLICT DO NOTHING",
                        [(row[0], seqs[i]) for i in call.memory_ids if i in seqs],
                    )
        return appended

    part = StorePart(
        "feedback",
        tables=("feedback", "feedback_items"),  # created with the engine's first tables
        on_forget=forget_feedback,
        on_erase=forget_feedback_naming,
        stats=count_feedback,
        forget_tables=("feedback", "feedback_items"),
    )


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _feedback_of(
    layers: Sequence[int], seq: int | None, join: str = ""
) -> tuple[str, list[object]]:
    """``FROM`` to ``WHERE`` of the feedback calls given in ``layers`` (that rated memory
    ``seq``, if given) as ``f``, with ``join`` added, and its parameters."""
    calls = f"FROM feedback f {join}".rstrip()
    params: list[object] = []
    if seq is not None:
        calls += " JOIN feedback_items i ON i.feedback_id = f.id AND i.memory_seq = ?"
        params.append(seq)
    return f"{calls} WHERE {in_list('f.scope_id', layers)}", [*params, *layers]
