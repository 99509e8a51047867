"""The declared graph (seed 002): declaring, retracting, `traverse` and `reconstruct`.

Entities, aliases and subject–predicate–object relations are asserted by an
agent or an operator and stored as written, with normalized twins for lookup.
Nothing here infers a relation or extracts an entity, and no model is called:
the graph is the exact path where the other arms are approximate.

Invariants (seed 002 §5): the plain `read` never consults the graph; with an
empty graph `reconstruct` equals the read it starts from; association adds
evidence inside items, bundles and roles, never an item and never a new order;
the walk is bounded and deterministic; every element says where it came from;
nothing crosses the reader's scope; no declaration outlives its endpoints (the
store's triggers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assocmem.errors import InvalidInput, UnknownEntity, UnknownMemory
from assocmem.recall import pipeline as recall
from assocmem.recall import request as requests
from assocmem.store import EntityRow, RelationRow, Store, View
from assocmem.text.concepts import normalize_text, tokenize
from assocmem.types import (
    Declared,
    Dropped,
    Entity,
    Evidence,
    Reconstructed,
    Reconstruction,
    Relation,
    Role,
    Traversal,
)
from assocmem.vectors.space import VectorSpace

DECLARERS = ("agent", "operator")
# Record-to-record predicates read as roles, subject first (seed 002 §3).
ROLES = frozenset(
    {"supports", "supersedes", "corrects", "qualifies", "contradicts", "temporal_predecessor"}
)
MAX_HOPS = 5
MAX_LIMIT = 100
DEFAULT_MAX_EVIDENCE = 5
MAX_EVIDENCE = 50
MAX_NAME_CHARS = 256
MAX_DECLARATIONS = 200
# Entities a reconstruction loads for its walk at most: the walk is bounded by
# hops and evidence, and this bounds the reading behind it.
MAX_WALK_ENTITIES = 1000
# Aliases shorter than this are too ambiguous to vote on a question ("it", "a").
MIN_ALIAS_CHARS = 2
MEM_PREFIX = "mem:"


# -- declaring -------------------------------------------------------------------


@dataclass(frozen=True)
class EntityDecl:
    name: str
    aliases: tuple[str, ...]
    item: str


@dataclass(frozen=True)
class RelationDecl:
    subject: str
    predicate: str
    object: str
    item: str


@dataclass
class _Outcome:
    entities: list[str] = field(default_factory=list)
    mentions: int = 0
    relations: list[int] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    def frozen(self) -> Declared:
        return Declared(
            entities=tuple(dict.fromkeys(self.entities)),
            mentions=self.mentions,
            relations=tuple(dict.fromkeys(self.relations)),
            dropped=tuple(self.dropped),
        )


def parse(associations: Any) -> tuple[list[EntityDecl], list[RelationDecl], list[Dropped]]:
    """Split an associations object into well-formed declarations and dropped ones."""
    if not isinstance(associations, Mapping):
        return [], [], [Dropped("associations", "must be a dict with entities and relations")]
    dropped = [
        Dropped(str(key), "unknown key (expected entities, relations)")
        for key in associations
        if key not in ("entities", "relations")
    ]
    entities, relations = [], []
    for i, raw in enumerate(_list(associations.get("entities"), "entities", dropped)):
        item = f"entities[{i}]"
        try:
            entities.append(_entity(raw, item))
        except InvalidInput as exc:
            dropped.append(Dropped(item, exc.message))
    for i, raw in enumerate(_list(associations.get("relations"), "relations", dropped)):
        item = f"relations[{i}]"
        try:
            relations.append(_relation(raw, item))
        except InvalidInput as exc:
            dropped.append(Dropped(item, exc.message))
    return entities, relations, dropped


def _list(value: Any, key: str, dropped: list[Dropped]) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        dropped.append(Dropped(key, "must be a list"))
        return []
    if len(value) > MAX_DECLARATIONS:
        dropped.append(Dropped(key, f"more than {MAX_DECLARATIONS}; the rest were dropped"))
    return list(value[:MAX_DECLARATIONS])


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not normalize_text(value) or len(value) > MAX_NAME_CHARS:
        raise InvalidInput(f"{what} must be a non-empty string of at most {MAX_NAME_CHARS} chars")
    return value.strip()


def _entity(raw: Any, item: str) -> EntityDecl:
    if isinstance(raw, str):
        return EntityDecl(_name(raw, "an entity name"), (), item)
    if not isinstance(raw, Mapping):
        raise InvalidInput("an entity must be a name or {name, aliases}")
    aliases = raw.get("aliases") or []
    if not isinstance(aliases, list | tuple):
        raise InvalidInput("aliases must be a list of names")
    return EntityDecl(
        _name(raw.get("name"), "an entity name"),
        tuple(_name(a, "an alias") for a in aliases),
        item,
    )


def _relation(raw: Any, item: str) -> RelationDecl:
    if not isinstance(raw, Mapping):
        raise InvalidInput("a relation must be {subject, predicate, object}")
    return RelationDecl(
        _name(raw.get("subject"), "a relation subject"),
        _name(raw.get("predicate"), "a predicate"),
        _name(raw.get("object"), "a relation object"),
        item,
    )


def declare(
    store: Store,
    view: View,
    associations: Any,
    *,
    anchor: int | None,
    declared_by: str,
) -> Declared:
    """Store what ``associations`` declares; the ``anchor`` memory (a seq) mentions each
    declared entity and evidences each relation. Each declaration stands or falls alone.

    Declarations live in the access class of their anchor: what is declared about a
    restricted memory is as restricted as the memory."""
    access = store.access_of([anchor])[anchor] if anchor is not None else ""
    entities, relations, dropped = parse(associations)
    outcome = _Outcome(dropped=dropped)
    context = _Context(store, view, access, anchor, declared_by)
    for decl in entities:
        try:
            with store.transaction():
                _register(context, outcome, decl)
        except (InvalidInput, UnknownMemory) as exc:
            outcome.dropped.append(Dropped(decl.item, exc.message))
    for rel in relations:
        try:
            with store.transaction():
                _relate(context, outcome, rel)
        except (InvalidInput, UnknownMemory) as exc:
            outcome.dropped.append(Dropped(rel.item, exc.message))
    return outcome.frozen()


@dataclass(frozen=True)
class _Context:
    """Where declarations go: the store, the declarer's view, the anchor's access class."""

    store: Store
    view: View
    access: str
    anchor: int | None
    declared_by: str


def _register(context: _Context, outcome: _Outcome, decl: EntityDecl) -> None:
    entity = _resolve_or_create(context, decl.name)
    for alias in decl.aliases:
        # An alias lives in the declarer's layer, whichever layer its entity is in.
        context.store.add_alias(
            context.view.scope, entity.id, alias, normalize_text(alias), context.access
        )
    outcome.entities.append(entity.name)
    anchor = context.anchor
    if anchor is not None and context.store.add_mention(entity.id, anchor, context.declared_by):
        outcome.mentions += 1


def _resolve_or_create(context: _Context, name: str) -> EntityRow:
    """The entity answering to ``name`` in the reader's layers (nearest first), else a
    new one in the declarer's layer."""
    store, normalized = context.store, normalize_text(name)
    found = store.find_entities(context.view.scope, normalized)
    if found:
        return found[0]
    entity = store.create_entity(
        context.view.scope, name, normalized, context.declared_by, context.access
    )
    return store.entities_by_id([entity])[entity]


def _relate(context: _Context, outcome: _Outcome, decl: RelationDecl) -> None:
    relation = context.store.add_relation(
        context.view.scope,
        _endpoint(context, decl.subject),
        decl.predicate,
        normalize_text(decl.predicate),
        _endpoint(context, decl.object),
        context.anchor or 0,
        context.declared_by,
        context.access,
    )
    outcome.relations.append(relation)


def _endpoint(context: _Context, name: str) -> tuple[str, int]:
    if name.startswith(MEM_PREFIX):
        return ("mem", memory_seq(context.store, context.view, name))
    return ("entity", _resolve_or_create(context, name).id)


def memory_seq(store: Store, view: View, ref: str) -> int:
    """The internal sequence of a readable ``mem:<id>`` ref (or bare id)."""
    memory_id = ref[len(MEM_PREFIX) :] if ref.startswith(MEM_PREFIX) else ref
    found = store.visible_seqs(view.scope, [memory_id])
    if memory_id not in found:
        raise UnknownMemory(f"no memory {memory_id!r} is readable here", record_id=memory_id)
    return found[memory_id]


def resolve(store: Store, view: View, entity: str, predicates: Sequence[str]) -> list[str]:
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
    found = store.entities_by_id(sorted(current))
    return sorted(found[e].name for e in found)


def entities_named(store: Store, view: View, name: str) -> list[EntityRow]:
    """Every readable entity answering to ``name``; `UnknownEntity` when none does."""
    if not isinstance(name, str) or not normalize_text(name):
        raise InvalidInput("an entity name must be a non-empty string", field="entity")
    found = store.find_entities(view.scope, normalize_text(name))
    if not found:
        raise UnknownEntity(f"no entity readable here answers to {name!r}")
    return found


# -- traverse ---------------------------------------------------------------------


def traverse(store: Store, view: View, name: str, max_hops: int, limit: int) -> Traversal:
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
    rows_by_id = store.entities_by_id(kept)
    entities = []
    refs_cut_total = 0
    for entity_id in kept:
        row = rows_by_id[entity_id]
        seqs = store.mentioning(view, entity_id, limit + 1)
        refs = _refs(store, seqs[:limit])
        refs_cut = _count_beyond(store, view, entity_id, limit) if len(seqs) > limit else 0
        refs_cut_total += refs_cut
        hops, via = reached[entity_id]
        entities.append(
            Entity(row.id, row.name, row.aliases, row.declared_by, hops, via, refs, refs_cut)
        )
    names = {e.id: e.name for e in entities}
    listed = [
        _relation_view(store, r, names)
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


def _count_beyond(store: Store, view: View, entity_id: int, limit: int) -> int:
    return len(store.mentioning(view, entity_id, 1_000_000)) - limit


def _refs(store: Store, seqs: Sequence[int]) -> tuple[str, ...]:
    records = store.records_by_seq(list(seqs))
    return tuple(MEM_PREFIX + records[s].id for s in seqs if s in records)


def _relation_view(store: Store, row: RelationRow, names: Mapping[int, str]) -> Relation:
    def end(kind: str, ident: int) -> str:
        if kind == "entity":
            return names.get(ident) or store.entities_by_id([ident])[ident].name
        return _refs(store, [ident])[0]

    anchor = _refs(store, [row.anchor_seq])[0] if row.anchor_seq else None
    return Relation(
        id=row.id,
        subject=end(row.subject_kind, row.subject_id),
        predicate=row.predicate,
        object=end(row.object_kind, row.object_id),
        declared_by=row.declared_by,
        declared_at=row.declared_at,
        anchor=anchor,
    )


# -- reconstruct -----------------------------------------------------------------


def alias_terms(store: Store, view: View, query: str) -> tuple[str, ...]:
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
    rows = store.entities_by_id(entities)
    asked = set(tokenize(query))
    terms = [t for e in dict.fromkeys(entities) for a in rows[e].aliases for t in tokenize(a)]
    return tuple(t for t in dict.fromkeys(terms) if t not in asked)


@dataclass(frozen=True)
class WalkInputs:
    """What the walk reads, loaded before it runs: the entities each pooled record
    mentions, entity-to-entity relations, and records mentioning each reached entity
    (lowest id first, at most ``max_evidence`` + 1 so a cut can be seen)."""

    mentions: Mapping[int, Sequence[int]]
    relations: Sequence[RelationRow]
    mentioned_by: Mapping[int, Sequence[int]]


@dataclass(frozen=True)
class Reached:
    """A record the walk attached to an item, and the relation that reached it."""

    seq: int
    hops: int
    relation: RelationRow


@dataclass(frozen=True)
class Walk:
    """The walk's result: evidence per pooled record and the bounds it met."""

    evidence: Mapping[int, Sequence[Reached]]
    omitted: int
    reached: tuple[str, ...]


def walk(pool: Sequence[int], inputs: WalkInputs, *, max_hops: int, max_evidence: int) -> Walk:
    """Stage 3, a pure function: from each pooled record, through the entities it
    mentions and entity-to-entity relations (either direction, 1..max_hops), to the
    records mentioning the entities reached. A pooled record stays where retrieval
    put it and a record two items reach belongs to the earlier item; each item keeps
    at most ``max_evidence``, fewer hops first, then the most recently declared
    relation, then the lower record id."""
    adjacency: dict[int, list[RelationRow]] = {}
    for row in inputs.relations:
        adjacency.setdefault(row.subject_id, []).append(row)
        adjacency.setdefault(row.object_id, []).append(row)
    claimed, evidence, omitted, limits = set(pool), {}, 0, set()
    for seq in pool:
        best, hops_hit = _reach(inputs.mentions.get(seq, ()), adjacency, max_hops)
        if hops_hit:
            limits.add("max_hops")
        candidates: dict[int, Reached] = {}
        for entity, (hops, relation) in best.items():
            readable = inputs.mentioned_by.get(entity, ())
            if len(readable) > max_evidence:
                limits.add("max_evidence")
            for record in readable[:max_evidence]:
                if record in claimed:
                    continue
                found = Reached(record, hops, relation)
                if record not in candidates or _order(found) < _order(candidates[record]):
                    candidates[record] = found
        ranked = sorted(candidates.values(), key=_order)
        kept = ranked[:max_evidence]
        omitted += len(ranked) - len(kept)
        claimed.update(r.seq for r in kept)
        if kept:
            evidence[seq] = kept
    return Walk(evidence=evidence, omitted=omitted, reached=tuple(sorted(limits)))


def _order(reached: Reached) -> tuple[int, int, int]:
    return (reached.hops, -reached.relation.id, reached.seq)


def _reach(
    start: Sequence[int], adjacency: Mapping[int, Sequence[RelationRow]], max_hops: int
) -> tuple[dict[int, tuple[int, RelationRow]], bool]:
    """Entities reachable in 1..max_hops from ``start``, each by its best relation, and
    whether relations went on beyond the last hop."""
    seen = set(start)
    best: dict[int, tuple[int, RelationRow]] = {}
    frontier = sorted(seen)
    for hop in range(1, max_hops + 1):
        step: dict[int, RelationRow] = {}
        for entity in frontier:
            for row in adjacency.get(entity, ()):
                other = row.object_id if row.subject_id == entity else row.subject_id
                if other in seen:
                    continue
                if other not in step or step[other].id < row.id:
                    step[other] = row
        for other, row in step.items():
            best[other] = (hop, row)
        seen.update(step)
        frontier = sorted(step)
    beyond = any(
        (row.object_id if row.subject_id == e else row.subject_id) not in seen
        for e in frontier
        for row in adjacency.get(e, ())
    )
    return best, beyond


def load_walk(store: Store, view: View, pool: Sequence[int], max_hops: int, cap: int) -> WalkInputs:
    """Read what the walk needs, bounded: hops, entities, records per entity."""
    mentions = store.mentions_of(view.scope, pool)
    seen = {e for es in mentions.values() for e in es}
    relations: dict[int, RelationRow] = {}
    frontier = sorted(seen)
    for _ in range(max_hops):
        if not frontier or len(seen) >= MAX_WALK_ENTITIES:
            break
        rows = store.entity_relations(view.scope, frontier)
        relations.update((r.id, r) for r in rows)
        ends = {e for r in rows for e in (r.subject_id, r.object_id)} - seen
        frontier = sorted(ends)[: MAX_WALK_ENTITIES - len(seen)]
        seen.update(frontier)
    mentioned_by = {e: store.mentioning(view, e, cap + 1) for e in sorted(seen)}
    return WalkInputs(mentions, list(relations.values()), mentioned_by)


def reconstruct(
    store: Store,
    space: VectorSpace | None,
    request: recall.ReadRequest,
    *,
    max_hops: int,
    max_evidence: int,
) -> Reconstruction:
    """Reconstructive recall: stage 1 alias votes to the lexical arm, the plain read's
    items (never added to, never reordered), stage 2 bundles and roles from declared
    record relations, stage 3 the bounded walk, evidence inside the items."""
    terms = alias_terms(store, request.view, request.query or "")
    result = recall.read(store, replace(request, extra_terms=terms), space)
    ids = [item.id for item in result.items]
    seqs = store.visible_seqs(request.view.scope, ids)
    pool = [seqs[i] for i in ids if i in seqs]
    texts = {seqs[i.id]: i.text for i in result.items if i.id in seqs}
    refs = {seq: MEM_PREFIX + memory_id for memory_id, seq in seqs.items()}
    stage2 = _bundles(store, request.view, pool, refs, texts)
    walked = walk(
        pool,
        load_walk(store, request.view, pool, max_hops, max_evidence),
        max_hops=max_hops,
        max_evidence=max_evidence,
    )
    reached = store.records_by_seq([r.seq for rs in walked.evidence.values() for r in rs])
    items = _assemble(result.items, seqs, stage2, walked, reached)
    return Reconstruction(
        items=tuple(items),
        bounds={
            "max_hops": max_hops,
            "max_evidence": max_evidence,
            "omitted": walked.omitted,
            "reached": list(walked.reached),
        },
    )


@dataclass(frozen=True)
class _Stage2:
    bundles: Mapping[int, list[Evidence]]
    bundled_into: Mapping[int, str]
    roles: Mapping[int, list[Role]]


def _assemble(
    items: Sequence[Any],
    seqs: Mapping[str, int],
    stage2: _Stage2,
    walked: Walk,
    reached: Mapping[int, Any],
) -> list[Reconstructed]:
    """The read's items, in the read's order, each with its bundle, walk evidence and roles."""
    assembled = []
    for item in items:
        seq = seqs[item.id]
        evidence = [
            Evidence(
                ref=MEM_PREFIX + reached[r.seq].id,
                text=reached[r.seq].text,
                why=f"relation:{r.relation.predicate}",
                hops=r.hops,
            )
            for r in walked.evidence.get(seq, ())
        ]
        assembled.append(
            Reconstructed(
                ref=MEM_PREFIX + item.id,
                text=item.text,
                score=item.score,
                source=item.source,
                evidence=tuple(stage2.bundles.get(seq, []) + evidence),
                roles=tuple(stage2.roles.get(seq, [])),
                bundled_into=stage2.bundled_into.get(seq),
            )
        )
    return assembled


def _bundles(
    store: Store,
    view: View,
    pool: Sequence[int],
    refs: Mapping[int, str],
    texts: Mapping[int, str],
) -> _Stage2:
    """Stage 2: pooled records joined by a declared record-to-record relation bundle
    into the earlier item; role-vocabulary predicates become roles on both items."""
    position = {seq: i for i, seq in enumerate(pool)}
    bundles: dict[int, list[Evidence]] = {}
    bundled_into: dict[int, str] = {}
    roles: dict[int, list[Role]] = {}
    for row in store.memory_relations(view.scope, pool):
        head, member = sorted((row.subject_id, row.object_id), key=lambda s: position[s])
        if member not in bundled_into and head != member:
            bundled_into[member] = refs[head]
            bundles.setdefault(head, []).append(
                Evidence(
                    ref=refs[member],
                    text=texts[member],
                    why=f"relation:{row.predicate}",
                    independence_reason="cluster:relation",
                )
            )
        if normalize_text(row.predicate) in ROLES:
            role = Role(normalize_text(row.predicate), refs[row.subject_id], refs[row.object_id],
                        row.id)  # fmt: skip
            for seq in (row.subject_id, row.object_id):
                roles.setdefault(seq, []).append(role)
    return _Stage2(bundles, bundled_into, roles)


def check_bounds(max_hops: Any, limit: Any, name: str = "limit", cap: int = MAX_LIMIT) -> None:
    """Validate hop and size bounds of a graph call."""
    requests.check_int(max_hops, "max_hops", 1, MAX_HOPS)
    requests.check_int(limit, name, 1, cap)


def check_declarer(declared_by: Any) -> str:
    """``agent`` or ``operator``."""
    if declared_by not in DECLARERS:
        raise InvalidInput("declared_by must be 'agent' or 'operator'", field="declared_by")
    return str(declared_by)
