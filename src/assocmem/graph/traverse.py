"""Following the declared graph: `resolve` (exact predicate paths), `entities_named`,
`traverse` (an entity's bounded neighbourhood) and `alias_terms` (the declared names
a question mentions).

Invariants: only what the reader's scope layers hold is read or reached, and an
entity is named only by the aliases those layers declare; every walk
here is bounded (hops, entities, refs) and deterministic, and what a bound cut is
counted; nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from assocmem.errors import InvalidInput, UnknownEntity
from assocmem.graph.declare import MEM_PREFIX
from assocmem.graph.store import GraphQueries
from assocmem.graph.types import Entity, Relation, Traversal
from assocmem.recall import request
from assocmem.store import EntityRow, RelationRow, Store, View
from assocmem.text.concepts import normalize_text, tokenize
from assocmem.types import Record, Scope

MAX_HOPS = 5
MAX_LIMIT = 100
# Aliases shorter than this are too ambiguous to vote on a question ("it", "a").
MIN_ALIAS_CHARS = 2


class NamedEntities(Protocol):
    """What finding entities by name reads."""

    def find_entities(self, scope: Scope, normalized: str) -> list[EntityRow]: ...


class RelationEnds(Protocol):
    """What naming a relation's ends reads: entities and memory rows."""

    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...


class AliasReads(Protocol):
    """What finding the entities a question mentions reads: aliases and entities."""

    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]: ...

    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]: ...


def resolve(store: GraphQueries, view: View, entity: str, predicates: Sequence[str]) -> list[str]:
    """Names reached from ``entity`` by following each predicate in turn, subject to object."""
    if not predicates or not all(isinstance(p, str) and p.strip() for p in predicates):
        raise InvalidInput("resolve needs one or more predicates", field="predicates")
    current = {e.id for e in entities_named(store, view, entity)}
    for predicate in predicates:
        wanted = normalize_text(predicate)
        current = {
            r.object_id
            for r in store.entity_relations(view.scope, sorted(current))
            if r.subject_id in current and normalize_text(r.predicate) == wanted
        }
    found = store.entities_by_id(sorted(current), view.scope)
    return sorted(found[e].name for e in found)


def entities_named(store: NamedEntities, view: View, name: str) -> list[EntityRow]:
    """Every readable entity answering to ``name``; `UnknownEntity` when none does."""
    if not isinstance(name, str) or not normalize_text(name):
        raise InvalidInput("an entity name must be a non-empty string", field="entity")
    found = store.find_entities(view.scope, normalize_text(name))
    if not found:
        raise UnknownEntity(f"no entity readable here answers to {name!r}")
    return found


def traverse(store: GraphQueries, view: View, name: str, max_hops: int, limit: int) -> Traversal:
    """An entity's neighbourhood: every readable entity answering to ``name`` is a start;
    entities come by hops, then the most recently declared relation that reached them,
    then id; ``limit`` bounds entities and refs per entity, and the cut is counted."""
    starts = entities_named(store, view, name)
    reached: dict[int, tuple[int, int | None]] = {e.id: (0, None) for e in starts}
    relations: dict[int, RelationRow] = {}
    frontier = [e.id for e in starts]
    for hop in range(1, max_hops + 1):
        if not frontier:
            break
        rows = store.entity_relations(view.scope, frontier)
        relations.update((r.id, r) for r in rows)
        reached_now = _step(rows, set(frontier), reached, hop)
        frontier = sorted(reached_now)
    order = sorted(reached, key=lambda e: (reached[e][0], -(reached[e][1] or 0), e))
    kept = order[:limit]
    rows_by_id = store.entities_by_id(kept, view.scope)
    entities = []
    refs_cut_total = 0
    for entity_id in kept:
        row = rows_by_id[entity_id]
        seqs = store.mentioning(view, entity_id, limit + 1)
        refs = _refs(store, seqs[:limit])
        refs_cut = _count_beyond(store, view, entity_id, limit) if len(seqs) > limit else 0
        refs_cut_total += refs_cut
        hops, via = reached[entity_id]
        # A caller sees public ids only: the internal ones count every agent's rows.
        via_id = relations[via].public_id if via is not None else None
        entities.append(Entity(row.public_id, row.name, row.aliases, row.declared_by, hops,
                               via_id, refs, refs_cut))  # fmt: skip
    names = {entity_id: rows_by_id[entity_id].name for entity_id in kept}
    listed = [
        relation_view(store, r, names)
        for r in sorted(relations.values(), key=lambda r: r.id)
        if r.subject_id in names and r.object_id in names
    ]
    return Traversal(
        entities=tuple(entities),
        relations=tuple(listed),
        cut={"entities": len(order) - len(kept), "refs": refs_cut_total},
    )


def _step(
    rows: Sequence[RelationRow],
    frontier: set[int],
    reached: dict[int, tuple[int, int | None]],
    hop: int,
) -> set[int]:
    """Entities first reached at ``hop``, each with the most recent relation reaching it."""
    new: set[int] = set()
    for row in rows:
        for near, far in ((row.subject_id, row.object_id), (row.object_id, row.subject_id)):
            if near not in frontier:
                continue
            if far not in reached or (far in new and (reached[far][1] or 0) < row.id):
                reached[far] = (hop, row.id)
                new.add(far)
    return new


def _count_beyond(store: GraphQueries, view: View, entity_id: int, limit: int) -> int:
    return len(store.mentioning(view, entity_id, 1_000_000)) - limit


def _refs(store: Store, seqs: Sequence[int]) -> tuple[str, ...]:
    records = store.records_by_seq(list(seqs))
    return tuple(MEM_PREFIX + records[s].id for s in seqs if s in records)


def relation_view(
    store: RelationEnds,
    row: RelationRow,
    names: Mapping[int, str] | None = None,
    scope: Scope | None = None,
) -> Relation:
    """A stored relation as a caller reads it: an entity end by its name (from ``names``
    when the caller already holds it, else as the reader ``scope`` names it), a memory
    end and the anchor as ``mem:<id>``."""
    known = names or {}
    ends = ((row.subject_kind, row.subject_id), (row.object_kind, row.object_id))
    entity_ids = [i for kind, i in ends if kind == "entity" and i not in known]
    seqs = [i for kind, i in ends if kind != "entity"] + (
        [row.anchor_seq] if row.anchor_seq else []
    )
    # One lookup of each kind, and none where the ends are already known.
    entities = store.entities_by_id(entity_ids, scope) if entity_ids else {}
    memories = store.records_by_seq(seqs) if seqs else {}

    def end(kind: str, ident: int) -> str:
        if kind == "entity":
            return known.get(ident) or entities[ident].name
        return MEM_PREFIX + memories[ident].id

    return Relation(
        id=row.public_id,
        subject=end(row.subject_kind, row.subject_id),
        predicate=row.predicate,
        object=end(row.object_kind, row.object_id),
        declared_by=row.declared_by,
        declared_at=row.declared_at,
        anchor=MEM_PREFIX + memories[row.anchor_seq].id if row.anchor_seq else None,
    )


def alias_terms(store: AliasReads, view: View, query: str) -> tuple[str, ...]:
    """Stage 1: the names and aliases of every entity the question mentions, as
    lexical terms (normalized match, longest alias first, on word boundaries)."""
    aliases = sorted(
        store.aliases_in_scope(view.scope), key=lambda pair: (-len(pair[0]), pair[0], pair[1])
    )
    if not aliases:
        return ()
    text = normalize_text(query)
    taken: list[tuple[int, int]] = []
    entities: list[int] = []
    for alias, entity in aliases:
        if len(alias) < MIN_ALIAS_CHARS:
            continue
        for match in re.finditer(rf"(?<!\w){re.escape(alias)}(?!\w)", text):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            taken.append(match.span())
            entities.append(entity)
    rows = store.entities_by_id(entities, view.scope)  # aliases the reader may read only
    asked = set(tokenize(query))
    terms = [t for e in dict.fromkeys(entities) for a in rows[e].aliases for t in tokenize(a)]
    return tuple(t for t in dict.fromkeys(terms) if t not in asked)


def check_bounds(max_hops: Any, limit: Any, name: str = "limit", cap: int = MAX_LIMIT) -> None:
    """Validate hop and size bounds of a graph call."""
    request.check_int(max_hops, "max_hops", 1, MAX_HOPS)
    request.check_int(limit, name, 1, cap)
