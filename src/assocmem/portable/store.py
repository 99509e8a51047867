"""A whole store out and back in, in SQL: records of every status with the times the
store set, learned links, lessons and the feedback log, read and restored by name.

A mixin of `SQLStore`. Invariants: an export reads only the reader's layers (in its
role); an import writes only into the importer's own layers, each row into the
layer of its access class; a record keeps its id and is skipped where that id (or
the same observation) is already stored; a restored link, lesson or taught total
takes exactly the exported state (pending counts folded first), so importing the
same file twice changes nothing; each call is one write transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from assocmem.graph.store import RELATION_COLUMNS
from assocmem.portable.rows import (
    ImportedMemory,
    LearnedLesson,
    LearnedLink,
    LoggedFeedback,
    TaughtConcept,
)
from assocmem.store.connection import roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.records import insert_memory_sql, memory_values
from assocmem.store.rows import RelationRow
from assocmem.text import times
from assocmem.types import Record, Scope

# What `import_memories` says of each row.
IMPORTED, PRESENT, DUPLICATE, KEY_HELD = "imported", "present", "duplicate", "key_held"


# An imported record keeps its status, valence and last access as exported.
_INSERT_IMPORTED = insert_memory_sql("status", "valence", "accessed_at")


class PortableQueries(SQLStore):
    """Export and import of the SQL store (mixed into `SQLStore`)."""

    fold_links: Callable[[], None]
    count_cooccurrence: Callable[[Sequence[tuple[int, Sequence[int]]], int], None]
    records_by_seq: Callable[[Sequence[int]], dict[int, Record]]
    intern_concepts: Callable[[Sequence[str]], dict[str, int]]

    # -- export -----------------------------------------------------------------

    @translated
    def records_for_export(
        self, scope: Scope, *, after: int, limit: int
    ) -> list[tuple[int, Record, str | None]]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            "SELECT m.seq, r.id FROM memories m LEFT JOIN memories r ON r.seq = m.superseded_by"
            f" WHERE {in_list('m.scope_id', layers)} AND m.seq > ? ORDER BY m.seq LIMIT ?",
            [*layers, after, limit],
        )
        found = self.records_by_seq([seq for seq, _ in rows])
        return [(seq, found[seq], retired_by) for seq, retired_by in rows]

    @translated
    def learned_links(self, scope: Scope) -> list[LearnedLink]:
        layers = self._layers(scope)
        if not layers:
            return []
        where = in_list("l.scope_id", layers)
        joined = (
            " JOIN scopes s ON s.id = l.scope_id JOIN concepts ca ON ca.id = l.a"
            f" JOIN concepts cb ON cb.id = l.b WHERE {where}"
            " GROUP BY s.access, ca.name, cb.name"
        )
        sums: dict[tuple[str, str, str], list[Any]] = {}
        with self.snapshot():
            parts = [
                "SELECT s.access, ca.name, cb.name, SUM(l.weight), SUM(l.count),"
                " SUM(l.outcome_sum), SUM(l.feedback_count), MAX(l.updated_at) FROM links l"
                + joined
            ]
            if self.buffers_link_counts:  # the pending rows, summed as the fold sums them
                parts.append(
                    "SELECT s.access, ca.name, cb.name, SUM(l.count) + TOTAL(l.moved),"
                    " SUM(l.count), TOTAL(l.outcome), COUNT(l.outcome), MAX(l.at)"
                    " FROM pending_pairs l" + joined
                )
            for sql in parts:
                for access, a, b, w, c, o, f, at in self._query(sql, layers):
                    row = sums.setdefault((access, a, b), [0.0, 0, 0.0, 0, 0])
                    row[0] += float(w)
                    row[1] += int(c)
                    row[2] += float(o)
                    row[3] += int(f)
                    row[4] = max(row[4], int(at))
        return [
            LearnedLink(tuple(roles_of(access)), a, b, w, c, o, f, times.from_micros(at))
            for (access, a, b), (w, c, o, f, at) in sorted(sums.items())
        ]

    @translated
    def learned_lessons(self, scope: Scope) -> tuple[list[LearnedLesson], list[TaughtConcept]]:
        layers = self._layers(scope)
        if not layers:
            return [], []
        where = in_list("l.scope_id", layers)
        with self.snapshot():
            lessons = self._query(
                "SELECT s.access, c.name, m.id, SUM(l.weight), SUM(l.outcomes),"
                " MAX(l.updated_at) FROM lessons l JOIN scopes s ON s.id = l.scope_id"
                " JOIN concepts c ON c.id = l.concept_id JOIN memories m ON m.seq = l.memory_seq"
                f" WHERE {where} GROUP BY s.access, c.name, m.id, m.seq"
                " ORDER BY s.access, m.seq, c.name",
                layers,
            )
            taught = self._query(
                "SELECT s.access, c.name, SUM(l.taught) FROM lesson_concepts l"
                " JOIN scopes s ON s.id = l.scope_id JOIN concepts c ON c.id = l.concept_id"
                f" WHERE {where} GROUP BY s.access, c.name ORDER BY s.access, c.name",
                layers,
            )
        return (
            [
                LearnedLesson(tuple(roles_of(a)), c, m, float(w), int(n), times.from_micros(u))
                for a, c, m, w, n, u in lessons
            ],
            [TaughtConcept(tuple(roles_of(a)), c, float(t)) for a, c, t in taught],
        )

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
    def relations_in_scope(self, scope: Scope) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT {RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " ORDER BY id",
            layers,
        )
        return [RelationRow(*row) for row in rows]

    # -- import -----------------------------------------------------------------

    @translated
    def import_memories(self, scope: Scope, rows: Sequence[ImportedMemory]) -> list[str]:
        now = times.now()
        outcomes: list[str] = []
        with self.transaction():
            stored: list[tuple[int, int, ImportedMemory]] = []
            for row in rows:
                outcome, seq, layer = self._import_one(scope, row)
                outcomes.append(outcome)
                if seq is not None:
                    stored.append((seq, layer, row))
            names = [n for _, _, r in stored for n, _ in r.memory.concepts]
            ids = self.intern_concepts(names)
            self._conn.executemany(
                "INSERT INTO memory_concepts (scope_id, concept_id, memory_seq, position, form)"
                " VALUES (?,?,?,?,?)",
                [
                    (layer, ids[name], seq, pos, form)
                    for seq, layer, r in stored
                    for pos, (name, form) in enumerate(r.memory.concepts)
                ],
            )
            # The co-occurrence a write of these records would have counted; a link an
            # export carries sets its pair to the exported state afterwards.
            self.count_cooccurrence(
                [(layer, [ids[n] for n, _ in r.memory.concepts]) for _, layer, r in stored],
                times.to_micros(now),
            )
            retired = [r.superseded_by for _, _, r in stored if r.superseded_by]
            successors = self._seqs_here(scope, retired)
            self._conn.executemany(
                "UPDATE memories SET superseded_by = ? WHERE seq = ?",
                [(successors[r.superseded_by], seq) for seq, _, r in stored
                 if r.superseded_by in successors],
            )  # fmt: skip
        return outcomes

    def _import_one(self, scope: Scope, row: ImportedMemory) -> tuple[str, int | None, int]:
        memory = row.memory
        layer = self._own_layer(scope, memory.access)
        if self._conn.execute("SELECT 1 FROM memories WHERE id = ?", [row.id]).fetchone():
            return PRESENT, None, layer
        if memory.key and row.status == "active":
            held = self._conn.execute(
                "SELECT 1 FROM memories WHERE scope_id = ? AND key_subject = ?"
                " AND key_relation = ? AND status = 'active'",
                [layer, *memory.key],
            ).fetchone()
            if held:
                return KEY_HELD, None, layer
        inserted = self._conn.execute(
            _INSERT_IMPORTED,
            (
                *memory_values(row.id, layer, scope, memory, row.created_at),
                row.status, row.valence, row.accessed_at,
            ),
        ).fetchone()  # fmt: skip
        if inserted is None:
            return DUPLICATE, None, layer
        return IMPORTED, int(inserted[0]), layer

    @translated
    def restore_links(self, scope: Scope, links: Sequence[LearnedLink]) -> None:
        if not links:
            return
        with self.transaction():
            self.fold_links()  # the exported state replaces the pair's whole count
            ids = self.intern_concepts([n for link in links for n in (link.a, link.b)])
            self._conn.executemany(
                "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
                " updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (scope_id, a, b) DO UPDATE SET"
                " weight = excluded.weight, count = excluded.count,"
                " outcome_sum = excluded.outcome_sum, feedback_count = excluded.feedback_count,"
                " updated_at = excluded.updated_at",
                sorted(
                    (
                        self._own_layer(scope, link.access),
                        *sorted((ids[link.a], ids[link.b])),
                        link.weight,
                        link.count,
                        link.outcome_sum,
                        link.feedback_count,
                        times.to_micros(link.updated_at),
                    )  # fmt: skip
                    for link in links
                    if ids[link.a] != ids[link.b]
                ),
            )

    @translated
    def restore_lessons(
        self, scope: Scope, lessons: Sequence[LearnedLesson], taught: Sequence[TaughtConcept]
    ) -> list[bool]:
        """Whether each lesson was restored (False: its memory is not readable here)."""
        with self.transaction():
            names = [x.concept for x in lessons] + [t.concept for t in taught]
            ids = self.intern_concepts(names)
            seqs = self._seqs_here(scope, [lesson.memory_id for lesson in lessons])
            kept = [lesson for lesson in lessons if lesson.memory_id in seqs]
            self._conn.executemany(
                "INSERT INTO lessons (scope_id, concept_id, memory_seq, weight, outcomes,"
                " updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT (scope_id, concept_id, memory_seq)"
                " DO UPDATE SET weight = excluded.weight, outcomes = excluded.outcomes,"
                " updated_at = excluded.updated_at",
                [
                    (
                        self._own_layer(scope, x.access),
                        ids[x.concept],
                        seqs[x.memory_id],
                        x.weight,
                        x.outcomes,
                        times.to_micros(x.updated_at),
                    )  # fmt: skip
                    for x in kept
                ],
            )
            self._conn.executemany(
                "INSERT INTO lesson_concepts (scope_id, concept_id, taught) VALUES (?,?,?)"
                " ON CONFLICT (scope_id, concept_id) DO UPDATE SET taught = excluded.taught",
                [(self._own_layer(scope, t.access), ids[t.concept], t.taught) for t in taught],
            )
        return [lesson.memory_id in seqs for lesson in lessons]

    @translated
    def restore_feedback(self, scope: Scope, calls: Sequence[LoggedFeedback]) -> list[bool]:
        """Whether each call was appended (False: its public id is already logged)."""
        appended = []
        with self.transaction():
            seqs = self._seqs_here(scope, sorted({i for c in calls for i in c.memory_ids}))
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

    def _seqs_here(self, scope: Scope, ids: Sequence[str]) -> dict[str, int]:
        """The seqs of the importer's own memories with these ids, in any of its access
        classes (by the record's own columns: a layer made earlier in this transaction
        is not yet among `_layers`)."""
        if not ids:
            return {}
        projects, channels = scope.readable_projects, scope.readable_channels
        return dict(
            self._query_in(
                "SELECT id, seq FROM memories WHERE agent_id = ?"
                f" AND {in_list('project_id', projects)} AND {in_list('channel', channels)}"
                " AND id IN (?*)",
                ids,
                before=[scope.agent_id, *projects, *channels],
            )
        )

    part = StorePart("portable")
