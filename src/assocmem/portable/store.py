"""A whole store out and back in, in SQL: records of every status with the times the
store set, read and restored by id. (Learned links, lessons, the feedback log and
relations are read and restored by the parts that keep them: links/, graph/.)

A mixin of `SQLStore`. Invariants: an export reads only the reader's layers (in its
role); an import writes only into the importer's own layers, each row into the
layer of its access class; a record keeps its id and is skipped where that id (or
the same observation) is already stored, so importing the same file twice changes
nothing; each call is one write transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assocmem.portable.rows import ImportedMemory
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.records import insert_memory_sql, memory_values
from assocmem.store.rows import stored_form
from assocmem.text import times
from assocmem.types import Record, Scope

# What `import_memories` says of each row.
IMPORTED, PRESENT, DUPLICATE, KEY_HELD = "imported", "present", "duplicate", "key_held"


# An imported record keeps its status, valence and last access as exported.
_INSERT_IMPORTED = insert_memory_sql("status", "valence", "accessed_at")


class PortableQueries(SQLStore):
    """Export and import of the SQL store (mixed into `SQLStore`)."""

    count_cooccurrence: Callable[[Sequence[tuple[int, Sequence[int]]], int], None]  # links

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
                    (layer, ids[name], seq, pos, stored_form(name, form))
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
            successors = self.own_seqs(scope, retired)
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

    part = StorePart("portable")
