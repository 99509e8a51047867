"""SQL of the declared graph, shared by both backends: entities, aliases, mentions,
relations.

A mixin of `SQLStore`, split off along the seam between the memory store and the
graph declared on it. Invariants: every row is read only in the reader's
layers; one normalized alias names at most one entity per layer (a unique
index); triggers remove every alias, mention and relation whose endpoint or
anchor is deleted, so no declaration outlives what it names. A caller sees an
entity or relation only by its random ``public_id``; the integer key, a
store-wide sequence, never leaves the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.errors import AliasClash
from assocmem.store.connection import SQLConnection, roles_of
from assocmem.store.params import in_list, translated
from assocmem.store.protocol import EntityRow, RelationRow, View, new_public_id
from assocmem.text import times
from assocmem.types import Scope

RELATION_COLUMNS = (
    "id, subject_kind, subject_id, predicate, object_kind, object_id, anchor_seq, declared_by,"
    " declared_at, public_id"
)


class GraphQueries(SQLConnection):
    """The graph half of the SQL store (mixed into `SQLStore`)."""

    @translated
    def find_entities(self, scope: Scope, normalized: str) -> list[EntityRow]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            "SELECT DISTINCT e.id FROM entity_aliases a JOIN entities e ON e.id = a.entity_id"
            f" WHERE {in_list('a.scope_id', layers)} AND a.normalized = ?",
            [*layers, normalized],
        )
        found = self.entities_by_id([r[0] for r in rows])
        order = {layer: i for i, layer in enumerate(layers)}
        return sorted(found.values(), key=lambda e: (order[e.scope_id], e.id))

    @translated
    def create_entity(
        self, scope: Scope, name: str, normalized: str, declared_by: str, access: str = ""
    ) -> int:
        with self.transaction():
            layer = self._own_layer(scope, roles_of(access))
            entity = None
            while entity is None:  # a clash of random ids is retried, never surfaced
                entity = self._conn.execute(
                    "INSERT INTO entities (scope_id, name, normalized, declared_by, created_at,"
                    " public_id) VALUES (?,?,?,?,?,?) ON CONFLICT (public_id) DO NOTHING"
                    " RETURNING id",
                    [layer, name, normalized, declared_by, times.now(), new_public_id()],
                ).fetchone()
            (entity,) = entity
            self.add_alias(scope, entity, name, normalized, access)
            return int(entity)

    @translated
    def add_alias(
        self, scope: Scope, entity_id: int, alias: str, normalized: str, access: str = ""
    ) -> None:
        # The clash is checked before anything is written but the layer (an empty
        # one is harmless): the step needs no savepoint of its own.
        with self._atomic_step():
            layer = self._own_layer(scope, roles_of(access))
            clash = self._conn.execute(
                "SELECT e.name FROM entity_aliases a JOIN entities e ON e.id = a.entity_id"
                " WHERE a.scope_id = ? AND a.normalized = ? AND a.entity_id != ?",
                [layer, normalized, entity_id],
            ).fetchone()
            if clash:
                raise AliasClash(
                    f"alias {alias!r} already names the entity {clash[0]!r} in this scope",
                    field="associations",
                )
            self._conn.execute(
                "INSERT INTO entity_aliases (entity_id, scope_id, alias, normalized)"
                " VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                [entity_id, layer, alias, normalized],
            )

    @translated
    def add_mention(self, entity_id: int, seq: int, declared_by: str) -> bool:
        # One statement: atomic by itself inside a declaring transaction.
        with self._atomic_step():
            cursor = self._conn.execute(
                "INSERT INTO entity_mentions (entity_id, memory_seq, declared_by,"
                " created_at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                [entity_id, seq, declared_by, times.now()],
            )
            return bool(cursor.rowcount > 0)

    @translated
    def add_relation(
        self,
        scope: Scope,
        subject: tuple[str, int],
        predicate: str,
        predicate_normalized: str,
        object_: tuple[str, int],
        anchor_seq: int,
        declared_by: str,
        access: str = "",
    ) -> int:
        with self.transaction():
            layer = self._own_layer(scope, roles_of(access))
            key = [layer, subject[0], subject[1], predicate_normalized, object_[0], object_[1],
                   anchor_seq]  # fmt: skip
            found = self._conn.execute(
                "SELECT public_id FROM relations WHERE scope_id = ? AND subject_kind = ?"
                " AND subject_id = ? AND predicate_normalized = ? AND object_kind = ?"
                " AND object_id = ? AND anchor_seq = ?",
                key,
            ).fetchone()
            while found is None:  # a clash of random ids is retried, never surfaced
                found = self._conn.execute(
                    "INSERT INTO relations (scope_id, subject_kind, subject_id, predicate,"
                    " predicate_normalized, object_kind, object_id, anchor_seq, declared_by,"
                    " declared_at, public_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                    " ON CONFLICT (public_id) DO NOTHING RETURNING public_id",
                    [layer, subject[0], subject[1], predicate, predicate_normalized, object_[0],
                     object_[1], anchor_seq, declared_by, times.now(), new_public_id()],
                ).fetchone()  # fmt: skip
            return int(found[0])

    @translated
    def entities_by_id(self, ids: Sequence[int]) -> dict[int, EntityRow]:
        unique = list(dict.fromkeys(ids))
        aliases: dict[int, list[str]] = {}
        for entity, alias in self._query_in(
            "SELECT a.entity_id, a.alias FROM entity_aliases a"
            " JOIN entities e ON e.id = a.entity_id WHERE a.entity_id IN (?*)"
            " ORDER BY a.entity_id, a.normalized <> e.normalized, a.alias",  # name first
            unique,
        ):
            aliases.setdefault(entity, []).append(alias)
        rows = self._query_in(
            "SELECT id, scope_id, name, declared_by, created_at, public_id FROM entities"
            " WHERE id IN (?*)",
            unique,
        )
        return {
            entity: EntityRow(
                entity, layer, name, by, created, tuple(aliases.get(entity, [])), public
            )  # fmt: skip
            for entity, layer, name, by, created, public in rows
        }

    @translated
    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT normalized, entity_id FROM entity_aliases WHERE {in_list('scope_id', layers)}",
            layers,
        )
        return [(alias, int(entity)) for alias, entity in rows]

    @translated
    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]:
        layers = self._layers(scope)
        found: dict[int, list[int]] = {}
        for seq, entity in self._query_in(
            "SELECT m.memory_seq, m.entity_id FROM entity_mentions m"
            " JOIN entities e ON e.id = m.entity_id"
            f" WHERE m.memory_seq IN (?*) AND {in_list('e.scope_id', layers)}"
            " ORDER BY m.memory_seq, m.entity_id",
            seqs if layers else (),
            after=layers,
        ):
            found.setdefault(seq, []).append(entity)
        return found

    @translated
    def mentioning(self, view: View, entity_id: int, limit: int) -> list[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            "SELECT m.seq FROM entity_mentions x JOIN memories m ON m.seq = x.memory_seq"
            f" WHERE x.entity_id = ? AND {where} ORDER BY m.seq LIMIT ?",
            [entity_id, *params, limit],
        )
        return [seq for (seq,) in rows]

    @translated
    def entity_relations(self, scope: Scope, entity_ids: Sequence[int]) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers or not entity_ids:
            return []
        ids = list(entity_ids)
        rows = self._query(
            f"SELECT {RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " AND subject_kind = 'entity' AND object_kind = 'entity'"
            f" AND ({in_list('subject_id', ids)} OR {in_list('object_id', ids)}) ORDER BY id",
            [*layers, *ids, *ids],
        )
        return [RelationRow(*row) for row in rows]

    @translated
    def memory_relations(self, scope: Scope, seqs: Sequence[int]) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers or len(seqs) < 2:
            return []
        ids = list(seqs)
        rows = self._query(
            f"SELECT {RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " AND subject_kind = 'mem' AND object_kind = 'mem'"
            f" AND {in_list('subject_id', ids)} AND {in_list('object_id', ids)} ORDER BY id",
            [*layers, *ids, *ids],
        )
        return [RelationRow(*row) for row in rows]

    @translated
    def retract(
        self, scope: Scope, relation_ids: Sequence[int], mentions: Sequence[tuple[int, int]]
    ) -> tuple[int, int]:
        layers = self._layers(scope)
        if not layers:
            return 0, 0
        with self.transaction():
            removed = self._execute_in(
                f"DELETE FROM relations WHERE public_id IN (?*) AND {in_list('scope_id', layers)}",
                relation_ids,
                after=layers,
            )
            unmentioned = 0
            for entity, seq in mentions:
                unmentioned += self._conn.execute(
                    "DELETE FROM entity_mentions WHERE entity_id = ? AND memory_seq = ?"
                    " AND entity_id IN"
                    f" (SELECT id FROM entities WHERE {in_list('scope_id', layers)})",
                    [entity, seq, *layers],
                ).rowcount
            return removed, unmentioned

    @translated
    def delete_entities(self, scope: Scope, entity_ids: Sequence[int]) -> int:
        layers = self._layers(scope)
        if not layers:
            return 0
        with self.transaction():
            return self._execute_in(
                f"DELETE FROM entities WHERE id IN (?*) AND {in_list('scope_id', layers)}",
                entity_ids,
                after=layers,
            )
