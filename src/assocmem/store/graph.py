"""SQL of the declared graph, shared by both backends: entities, aliases, mentions,
relations, deletion.

A mixin of `SQLStore`, split off along the seam between the memory store and the
graph declared on it. Invariants: every row is read only in the reader's
layers; one normalized alias names at most one entity per layer (a unique
index); triggers remove every alias, mention and relation whose endpoint or
anchor is deleted, so no declaration outlives what it names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from itertools import combinations
from typing import Any

from assocmem.errors import AliasClash
from assocmem.store.params import in_list
from assocmem.store.protocol import EntityRow, RelationRow, View
from assocmem.text import times
from assocmem.types import Scope


def roles_of(key: str) -> list[str]:
    """The roles of an access key (roles joined by newlines; '' for everyone)."""
    return key.split("\n") if key else []


_RELATION_COLUMNS = (
    "id, subject_kind, subject_id, predicate, object_kind, object_id, anchor_seq, declared_by,"
    " declared_at"
)


class GraphQueries:
    """The graph half of the SQL store (mixed into `SQLStore`)."""

    _conn: Any
    _query: Callable[..., list[Any]]
    _query_in: Callable[..., list[Any]]
    _execute_in: Callable[..., int]
    _layers: Callable[[Scope], list[int]]
    _own_layer: Callable[..., int]
    _view_sql: Callable[..., tuple[str, list[Any]]]
    _fold_links: Callable[[], None]
    transaction: Callable[[], AbstractContextManager[None]]

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

    def create_entity(
        self, scope: Scope, name: str, normalized: str, declared_by: str, access: str = ""
    ) -> int:
        with self.transaction():
            layer = self._own_layer(scope, roles_of(access))
            (entity,) = self._conn.execute(
                "INSERT INTO entities (scope_id, name, normalized, declared_by, created_at)"
                " VALUES (?,?,?,?,?) RETURNING id",
                [layer, name, normalized, declared_by, times.now()],
            ).fetchone()
            self.add_alias(scope, entity, name, normalized, access)
            return int(entity)

    def add_alias(
        self, scope: Scope, entity_id: int, alias: str, normalized: str, access: str = ""
    ) -> None:
        with self.transaction():
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

    def add_mention(self, entity_id: int, seq: int, declared_by: str) -> bool:
        with self.transaction():
            cursor = self._conn.execute(
                "INSERT INTO entity_mentions (entity_id, memory_seq, declared_by,"
                " created_at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                [entity_id, seq, declared_by, times.now()],
            )
            return bool(cursor.rowcount > 0)

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
            self._conn.execute(
                "INSERT INTO relations (scope_id, subject_kind, subject_id, predicate,"
                " predicate_normalized, object_kind, object_id, anchor_seq, declared_by,"
                " declared_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                [layer, subject[0], subject[1], predicate, predicate_normalized, object_[0],
                 object_[1], anchor_seq, declared_by, times.now()],
            )  # fmt: skip
            (relation,) = self._conn.execute(
                "SELECT id FROM relations WHERE scope_id = ? AND subject_kind = ?"
                " AND subject_id = ? AND predicate_normalized = ? AND object_kind = ?"
                " AND object_id = ? AND anchor_seq = ?",
                key,
            ).fetchone()
            return int(relation)

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
            "SELECT id, scope_id, name, declared_by, created_at FROM entities WHERE id IN (?*)",
            unique,
        )
        return {
            entity: EntityRow(entity, layer, name, by, created, tuple(aliases.get(entity, [])))
            for entity, layer, name, by, created in rows
        }

    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT normalized, entity_id FROM entity_aliases WHERE {in_list('scope_id', layers)}",
            layers,
        )
        return [(alias, int(entity)) for alias, entity in rows]

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

    def mentioning(self, view: View, entity_id: int, limit: int) -> list[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            "SELECT m.seq FROM entity_mentions x JOIN memories m ON m.seq = x.memory_seq"
            f" WHERE x.entity_id = ? AND {where} ORDER BY m.seq LIMIT ?",
            [entity_id, *params, limit],
        )
        return [seq for (seq,) in rows]

    def entity_relations(self, scope: Scope, entity_ids: Sequence[int]) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers or not entity_ids:
            return []
        ids = list(entity_ids)
        rows = self._query(
            f"SELECT {_RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " AND subject_kind = 'entity' AND object_kind = 'entity'"
            f" AND ({in_list('subject_id', ids)} OR {in_list('object_id', ids)}) ORDER BY id",
            [*layers, *ids, *ids],
        )
        return [RelationRow(*row) for row in rows]

    def memory_relations(self, scope: Scope, seqs: Sequence[int]) -> list[RelationRow]:
        layers = self._layers(scope)
        if not layers or len(seqs) < 2:
            return []
        ids = list(seqs)
        rows = self._query(
            f"SELECT {_RELATION_COLUMNS} FROM relations WHERE {in_list('scope_id', layers)}"
            " AND subject_kind = 'mem' AND object_kind = 'mem'"
            f" AND {in_list('subject_id', ids)} AND {in_list('object_id', ids)} ORDER BY id",
            [*layers, *ids, *ids],
        )
        return [RelationRow(*row) for row in rows]

    def retract(
        self, scope: Scope, relation_ids: Sequence[int], mentions: Sequence[tuple[int, int]]
    ) -> tuple[int, int]:
        layers = self._layers(scope)
        if not layers:
            return 0, 0
        with self.transaction():
            removed = self._execute_in(
                f"DELETE FROM relations WHERE id IN (?*) AND {in_list('scope_id', layers)}",
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

    def delete_memories(self, scope: Scope, seqs: Sequence[int]) -> int:
        layers = self._layers(scope)
        if not layers or not seqs:
            return 0
        with self.transaction():
            # Taking a memory's pairs back needs them all in `links`, none pending.
            self._fold_links()
            found = self._query(
                f"SELECT seq, scope_id FROM memories WHERE {in_list('seq', list(seqs))}"
                f" AND {in_list('scope_id', layers)}",
                [*seqs, *layers],
            )
            for seq, layer in found:
                rows = self._query(
                    "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
                )
                concepts = [c for (c,) in rows]
                key = self._query(
                    "SELECT agent_id, project_id, channel, key_subject, key_relation FROM memories"
                    " WHERE seq = ? AND key_subject IS NOT NULL AND status = 'active'",
                    [seq],
                )
                self._uncount_cooccurrence(seq, layer)
                self._conn.execute("DELETE FROM memory_concepts WHERE memory_seq = ?", [seq])
                # What outcomes taught about this memory points at nothing once it is gone.
                self._conn.execute("DELETE FROM lessons WHERE memory_seq = ?", [seq])
                self._conn.execute("DELETE FROM memories WHERE seq = ?", [seq])
                if key:
                    self._reactivate(key[0])
                self._drop_orphan_links(scope.agent_id, concepts)
            return len(found)

    def _reactivate(self, key: Sequence[Any]) -> None:
        # The key's current value was forgotten: the latest remaining observation of
        # it is current again, as it would be had the forgotten one never been written.
        self._conn.execute(
            "UPDATE memories SET status = 'active' WHERE seq = (SELECT seq FROM memories"
            " WHERE agent_id = ? AND project_id = ? AND channel = ? AND key_subject = ?"
            " AND key_relation = ? AND status = 'superseded' ORDER BY observed_at DESC, seq DESC"
            " LIMIT 1)",
            list(key),
        )

    def _drop_orphan_links(self, agent_id: str, concepts: Sequence[int]) -> None:
        # A concept no memory of the agent carries any more must not survive as the
        # end of a link, learned or counted: it would give the forgotten text back.
        agent_layers = [r[0] for r in self._query("SELECT id FROM scopes WHERE agent_id = ?",
                                                   [agent_id])]  # fmt: skip
        for concept in concepts:
            carried = self._query(
                f"SELECT 1 FROM memory_concepts WHERE {in_list('scope_id', agent_layers)}"
                " AND concept_id = ? LIMIT 1",
                [*agent_layers, concept],
            )
            if not carried:
                self._conn.execute(
                    f"DELETE FROM links WHERE {in_list('scope_id', agent_layers)}"
                    " AND (a = ? OR b = ?)",
                    [*agent_layers, concept, concept],
                )
                for table in ("lessons", "lesson_concepts"):
                    self._conn.execute(
                        f"DELETE FROM {table} WHERE {in_list('scope_id', agent_layers)}"
                        " AND concept_id = ?",
                        [*agent_layers, concept],
                    )

    def _uncount_cooccurrence(self, seq: int, layer: int) -> None:
        # What a memory's write added to its layer's links (1 per pair, to count and
        # weight) is taken back; what feedback added stays: it was learned from answers.
        concepts = sorted(
            c for (c,) in self._query(
                "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
            )
        )  # fmt: skip
        pairs = Counter(combinations(concepts, 2))
        rows = [(n, n, layer, a, b) for (a, b), n in sorted(pairs.items())]
        self._conn.executemany(
            "UPDATE links SET count = count - ?, weight = weight - ? WHERE scope_id = ?"
            " AND a = ? AND b = ?",
            rows,
        )
        # A link nothing but this memory made leaves no row behind: its mere
        # existence would say the two concepts were once written together.
        self._conn.executemany(
            "DELETE FROM links WHERE scope_id = ? AND a = ? AND b = ? AND count <= 0"
            " AND feedback_count = 0",
            [(layer, a, b) for _, _, layer, a, b in rows],
        )
