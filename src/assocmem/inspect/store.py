"""Inspection in SQL: pages of memories, the feedback log as read back, the relations
touching one memory, vector counts, and who declared what (the operator gate).

A mixin of `SQLStore`. Invariant: every query reads only the reader's scope layers
(pages apply the whole view), so nothing one tenant reads here depends on another
tenant's rows; nothing here writes. The store's sizes on disk are the backend's
(`storage`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assocmem.graph.store import RELATION_COLUMNS
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import RelationRow, View
from assocmem.types import FeedbackCall, Scope

# A feedback log row as read back: (public id, created_at, outcome, query concepts JSON).
FeedbackRow = tuple[int, str, float, str]


class InspectionQueries(SQLStore):
    """The inspection reads of the SQL store (mixed into `SQLStore`)."""

    @translated
    def memory_page(
        self, view: View, source: str | None, limit: int, offset: int
    ) -> tuple[list[int], int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        if source is not None:
            where += " AND (m.source = ? OR m.source_canonical = ?)"
            params += [source, source]
        with self.snapshot():  # the page and its total from one state
            (total,) = self._query(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)[0]
            rows = self._query(
                f"SELECT m.seq FROM memories m WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
        return [seq for (seq,) in rows], int(total)

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
    def relations_of(self, scope: Scope, seq: int) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT {RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " AND (anchor_seq = ? OR (subject_kind = 'mem' AND subject_id = ?)"
            " OR (object_kind = 'mem' AND object_id = ?)) ORDER BY id",
            [*layers, seq, seq, seq],
        )
        return [RelationRow(*row) for row in rows]

    @translated
    def vector_counts(self, scope: Scope) -> tuple[int, int]:
        layers = self._layers(scope)
        if not layers:
            return 0, 0
        rows = self._query(
            "SELECT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_seq = m.seq), COUNT(*)"
            f" FROM memories m WHERE {in_list('m.scope_id', layers)} GROUP BY 1",
            layers,
        )
        counts = {bool(has): int(n) for has, n in rows}
        return counts.get(True, 0), counts.get(False, 0)

    @translated
    def operator_declared(
        self,
        scope: Scope,
        *,
        relation_ids: Sequence[int] = (),
        mentions: Sequence[tuple[int, int]] = (),
        entity_ids: Sequence[int] = (),
    ) -> bool:
        layers = self._layers(scope)
        if not layers:
            return False
        mine = in_list("scope_id", layers)
        checks: list[tuple[str, list[Any]]] = []
        if relation_ids:
            ids = list(relation_ids)
            checks.append((f"SELECT 1 FROM relations WHERE {mine} AND {in_list('public_id', ids)}"
                           " AND declared_by = 'operator'", [*layers, *ids]))  # fmt: skip
        for entity, seq in mentions:
            checks.append(("SELECT 1 FROM entity_mentions WHERE entity_id = ? AND memory_seq = ?"
                           " AND declared_by = 'operator'", [entity, seq]))  # fmt: skip
        if entity_ids:
            # An entity takes its mentions and relations with it when it goes.
            ids = list(entity_ids)
            on = in_list("id", ids)
            checks += [
                (f"SELECT 1 FROM entities WHERE {mine} AND {on} AND declared_by = 'operator'",
                 [*layers, *ids]),
                (f"SELECT 1 FROM entity_mentions WHERE {in_list('entity_id', ids)}"
                 " AND declared_by = 'operator'", ids),
                (f"SELECT 1 FROM relations WHERE declared_by = 'operator' AND"
                 f" ((subject_kind = 'entity' AND {in_list('subject_id', ids)}) OR"
                 f" (object_kind = 'entity' AND {in_list('object_id', ids)}))", [*ids, *ids]),
            ]  # fmt: skip
        return any(self._query(sql + " LIMIT 1", params) for sql, params in checks)

    def storage(self) -> tuple[str, int, int | None]:
        """The backend's name, the store's size in bytes and its WAL's (None: not a file)."""
        raise NotImplementedError

    part = StorePart("inspection")


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
