"""Updates in SQL: a memory's mutable fields changed in place, by id.

A mixin of `SQLStore`. Invariants: only allow-listed columns are assigned, never
the text (a trigger refuses that anyway), its concepts or its observation times, so
the full-text index and the vector stay valid; a change of ``access`` moves the
memory into the layer of its new access class whole (its row, concepts, vector,
full-text counts and the co-occurrence its write added), all in one write
transaction, and is refused where that layer already holds the same observation or
the active value of its key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.store.connection import SQLConnection
from assocmem.store.params import translated
from assocmem.types import Scope

# The columns `update_memory` may assign (allow-listed: the names reach SQL text).
UPDATABLE = ("tags", "value", "meta", "protected", "access")


class UpdateQueries(SQLConnection):
    """In-place updates of the SQL store (mixed into `SQLStore`)."""

    drop_orphan_authors: Callable[[Sequence[tuple[int, str]]], None]  # forget.py

    @translated
    def update_memory(
        self, seq: int, columns: Mapping[str, Any], access: Sequence[str] | None = None
    ) -> None:
        changes = [(c, columns[c]) for c in UPDATABLE if c in columns]
        with self.transaction():
            if access is not None:
                self._move_to_layer(seq, access)
            if changes:
                assignments = ", ".join(f"{column} = ?" for column, _ in changes)
                self._conn.execute(
                    f"UPDATE memories SET {assignments} WHERE seq = ?",
                    [*(v for _, v in changes), seq],
                )

    def _move_to_layer(self, seq: int, access: Sequence[str]) -> None:
        row = self._conn.execute(
            "SELECT scope_id, agent_id, project_id, channel, observed_at, dedupe_key,"
            " key_subject, key_relation, status, author FROM memories WHERE seq = ?",
            [seq],
        ).fetchone()
        if row is None:  # forgotten: like the UPDATE of a missing row, nothing to move
            return
        (old, agent, project, channel, observed, dedupe, subject, relation, status, author) = row
        new = self._own_layer(Scope(agent, project, channel), access)
        if new == old:
            return
        clash = self._conn.execute(
            "SELECT 1 FROM memories WHERE scope_id = ? AND observed_at = ? AND dedupe_key = ?",
            [new, observed, dedupe],
        ).fetchone()
        if clash is None and subject is not None and status == "active":
            clash = self._conn.execute(
                "SELECT 1 FROM memories WHERE scope_id = ? AND key_subject = ?"
                " AND key_relation = ? AND status = 'active'",
                [new, subject, relation],
            ).fetchone()
        if clash is not None:
            raise InvalidInput(
                "the new access class already holds this observation or its key's value",
                field="access",
            )
        # What the parts keep of the memory moves with it, none of it still buffered.
        self.settle()
        for on_move in self.hooks("on_move"):
            on_move(self, seq, old, new)
        self._move_lexical_counts(seq, old, new)
        for table, column in (("memories", "seq"), ("memory_concepts", "memory_seq")):
            self._conn.execute(f"UPDATE {table} SET scope_id = ? WHERE {column} = ?", [new, seq])
        if author is not None:
            self._conn.execute(
                "INSERT INTO authors (scope_id, author) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [new, author],
            )
            self.drop_orphan_authors([(old, author)])

    def _move_lexical_counts(self, seq: int, old: int, new: int) -> None:
        """Move a memory's share of the full-text statistics each backend keeps per
        layer (lexical_layers; lexical_terms too on PostgreSQL)."""
