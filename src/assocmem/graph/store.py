"""SQL of the declared graph, shared by both backends: entities, aliases, mentions,
relations; what inspection and export read of them, and the operator gate's check.

A mixin of `SQLStore`, split off along the seam between the memory store and the
graph declared on it. Invariants: every row is read only in the reader's
layers; one normalized alias names at most one entity per layer (the key of the
alias table); an entity is visible to a reader only through what the reader may
read: a memory of its layers mentioning it, a relation of its layers naming it, a
name declared in its layers with no memory, or, when nothing declares it any more,
its own layer; triggers remove every alias, mention and relation whose endpoint or
anchor is deleted, so no declaration outlives what it names. A caller sees an
entity or relation only by its random ``public_id``; the integer key, a store-wide
sequence, never leaves the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assocmem.errors import AliasClash
from assocmem.store.connection import access_key, roles_of
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import EntityRow, RelationRow, View, new_public_id
from assocmem.text import times
from assocmem.types import Scope

RELATION_COLUMNS = (
    "id, subject_kind, subject_id, predicate, object_kind, object_id, anchor_seq, declared_by,"
    " declared_at, public_id"
)


class GraphQueries(SQLStore):
    """The graph half of the SQL store (mixed into `SQLStore`)."""

    @translated
    def find_entities(self, scope: Scope, normalized: str) -> list[EntityRow]:
        layers = self._layers(scope)
        if not layers:
            return []
        visible, params = self._visible_entity("a.entity_id", layers)
        rows = self._query(
            "SELECT a.entity_id, a.scope_id FROM entity_aliases a"
            f" WHERE {in_list('a.scope_id', layers)} AND a.normalized = ? AND {visible}",
            [*layers, normalized, *params],
        )
        order = {layer: i for i, layer in enumerate(layers)}
        nearest: dict[int, int] = {}
        for entity, layer in rows:
            nearest[entity] = min(nearest.get(entity, len(layers)), order[layer])
        found = self.entities_by_id(list(nearest), scope)
        return sorted(found.values(), key=lambda e: (nearest[e.id], e.id))

    @translated
    def entity_in_layer(self, scope: Scope, normalized: str, access: str = "") -> int | None:
        row = self._query(
            "SELECT a.entity_id FROM entity_aliases a JOIN scopes s ON s.id = a.scope_id"
            " WHERE s.agent_id = ? AND s.project_id = ? AND s.channel = ? AND s.access = ?"
            " AND a.normalized = ?",
            [scope.agent_id, scope.project_id, scope.channel, access_key(roles_of(access)),
             normalized],
        )  # fmt: skip
        return int(row[0][0]) if row else None

    def _visible_entity(self, column: str, layers: Sequence[int]) -> tuple[str, list[Any]]:
        """A predicate: the entity ``column`` names is visible to a reader of ``layers``
        (see the module's invariants). ``column`` is a column of this module's SQL."""
        # Each probe starts from the entity: the CROSS JOIN keeps SQLite from starting
        # at the reader's memories, and the unary plus keeps it off the layer index,
        # either of which reads a whole layer per entity.
        subject = (
            f"SELECT 1 FROM relations r WHERE r.subject_kind = 'entity' AND r.subject_id = {column}"
        )
        object_ = (
            f"SELECT 1 FROM relations r WHERE r.object_kind = 'entity' AND r.object_id = {column}"
        )
        within = in_list("+r.scope_id", layers)
        sql = (
            "(EXISTS (SELECT 1 FROM entity_mentions x CROSS JOIN memories m"
            f" WHERE x.entity_id = {column} AND m.seq = x.memory_seq"
            f" AND {in_list('+m.scope_id', layers)})"
            f" OR EXISTS ({subject} AND {within}) OR EXISTS ({object_} AND {within})"
            f" OR EXISTS (SELECT 1 FROM entity_aliases s WHERE s.entity_id = {column}"
            f" AND s.standalone = 1 AND {in_list('+s.scope_id', layers)})"
            f" OR (EXISTS (SELECT 1 FROM entities h WHERE h.id = {column}"
            f" AND {in_list('h.scope_id', layers)})"
            f" AND NOT EXISTS (SELECT 1 FROM entity_mentions y WHERE y.entity_id = {column})"
            f" AND NOT EXISTS ({subject}) AND NOT EXISTS ({object_})))"
        )
        return sql, [*layers, *layers, *layers, *layers, *layers]

    @translated
    def create_entity(
        self,
        scope: Scope,
        name: str,
        normalized: str,
        declared_by: str,
        access: str = "",
        *,
        standalone: bool = False,
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
            self.add_alias(scope, entity, name, normalized, access, standalone=standalone)
            return int(entity)

    @translated
    def add_alias(
        self,
        scope: Scope,
        entity_id: int,
        alias: str,
        normalized: str,
        access: str = "",
        *,
        standalone: bool = False,
    ) -> None:
        # The clash is checked before anything is written but the layer (an empty
        # one is harmless): the step needs no savepoint of its own.
        with self._atomic_step():
            layer = self._own_layer(scope, roles_of(access))
            # The other entity is named as this layer names it, never by another class.
            clash = self._conn.execute(
                "SELECT COALESCE(n.alias, a.alias) FROM entity_aliases a"
                " JOIN entities e ON e.id = a.entity_id"
                " LEFT JOIN entity_aliases n ON n.scope_id = a.scope_id"
                " AND n.entity_id = a.entity_id AND n.normalized = e.normalized"
                " WHERE a.scope_id = ? AND a.normalized = ? AND a.entity_id != ?",
                [layer, normalized, entity_id],
            ).fetchone()
            if clash:
                raise AliasClash(
                    f"alias {alias!r} already names the entity {clash[0]!r} in this scope",
                    field="associations",
                )
            # A name once declared with no memory stays so (see `_visible_entity`).
            self._conn.execute(
                "INSERT INTO entity_aliases (entity_id, scope_id, alias, normalized, standalone)"
                " VALUES (?,?,?,?,?) ON CONFLICT (scope_id, normalized)"
                " DO UPDATE SET standalone = 1 WHERE excluded.standalone = 1",
                [entity_id, layer, alias, normalized, int(standalone)],
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
    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]:
        unique = list(dict.fromkeys(ids))
        layers = self._layers(scope) if scope is not None else None
        rows = self._query_in(
            "SELECT id, scope_id, name, normalized, declared_by, created_at, public_id"
            " FROM entities WHERE id IN (?*)",
            unique,
        )
        names = self._names(unique, layers) if layers != [] else {}
        order = {layer: i for i, layer in enumerate(layers or [])}
        found = {}
        for entity, home, name, normalized, by, created, public in rows:
            # The name first, as the entity's own layer spells it, else the nearest
            # layer; then the other aliases alphabetically, one spelling each.
            ranked = sorted(names.get(entity, []), key=lambda n: (
                n[1] != normalized, n[0] if n[1] != normalized else "", n[2] != home,
                order.get(n[2], 0), n[0]))  # fmt: skip
            spelled: dict[str, str] = {}
            for alias, key, _ in ranked:
                spelled.setdefault(key, alias)
            aliases = tuple(spelled.values())
            # A reader knows the entity by the names its layers declare, not by another
            # class's name for it.
            shown = aliases[0] if scope is not None and aliases else name
            found[entity] = EntityRow(entity, home, shown, by, created, aliases, public)
        return found

    def _names(
        self, entity_ids: Sequence[int], layers: Sequence[int] | None
    ) -> dict[int, list[tuple[str, str, int]]]:
        """``(alias, normalized, layer)`` of each entity, in ``layers`` only when given."""
        within = f" AND {in_list('scope_id', layers)}" if layers is not None else ""
        names: dict[int, list[tuple[str, str, int]]] = {}
        for entity, alias, normalized, layer in self._query_in(
            f"SELECT entity_id, alias, normalized, scope_id FROM entity_aliases"
            f" WHERE entity_id IN (?*){within}",
            entity_ids,
            after=layers or (),
        ):
            names.setdefault(entity, []).append((alias, normalized, layer))
        return names

    @translated
    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]:
        layers = self._layers(scope)
        if not layers:
            return []
        visible, params = self._visible_entity("a.entity_id", layers)
        rows = self._query(
            "SELECT DISTINCT a.normalized, a.entity_id FROM entity_aliases a"
            f" WHERE {in_list('a.scope_id', layers)} AND {visible}",
            [*layers, *params],
        )
        return [(alias, int(entity)) for alias, entity in rows]

    @translated
    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]:
        layers = self._layers(scope)
        found: dict[int, list[int]] = {}
        # A mention is as readable as the memory that makes it, wherever its entity lives.
        for seq, entity in self._query_in(
            "SELECT x.memory_seq, x.entity_id FROM entity_mentions x"
            " JOIN memories m ON m.seq = x.memory_seq"
            f" WHERE x.memory_seq IN (?*) AND {in_list('m.scope_id', layers)}"
            " ORDER BY x.memory_seq, x.entity_id",
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
                    " AND memory_seq IN"
                    f" (SELECT seq FROM memories WHERE {in_list('scope_id', layers)})",
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

    # -- inspect and portable: relations read back, and who declared what

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

    part = StorePart(
        "graph",
        migrations="assocmem.graph",
        forget_tables=("entity_mentions", "relations"),
    )
