"""Reconstructive recall over the declared graph: stage 1 alias votes
to the lexical arm of a plain read, stage 2 bundles and roles from declared record
relations, stage 3 a bounded walk that attaches evidence inside the read's items.

Invariants: the plain `read` never consults the graph; with an empty graph
`reconstruct` equals the read it starts from; association adds evidence inside
items, bundles and roles, never an item and never a new order; the walk is bounded
and deterministic; every element says where it came from; nothing crosses the
reader's scope.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from assocmem.graph import traverse
from assocmem.graph.declare import MEM_PREFIX
from assocmem.graph.types import Evidence, Reconstructed, Reconstruction, Role
from assocmem.recall import pipeline
from assocmem.store import RelationRow, View
from assocmem.text.concepts import normalize_text
from assocmem.types import Scope
from assocmem.vectors.space import VectorSpace


class Reconstructing(pipeline.ReadStore, traverse.AliasReads, Protocol):
    """What a reconstruction reads: the read's store, and the declared graph's mentions
    and relations of what the read found."""

    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]: ...

    def mentioning(self, view: View, entity_id: int, limit: int) -> list[int]: ...

    def entity_relations(self, scope: Scope, entity_ids: Sequence[int]) -> list[RelationRow]: ...

    def memory_relations(self, scope: Scope, seqs: Sequence[int]) -> list[RelationRow]: ...


# Record-to-record predicates read as roles, subject first.
ROLES = frozenset(
    {"supports", "supersedes", "corrects", "qualifies", "contradicts", "temporal_predecessor"}
)
DEFAULT_MAX_EVIDENCE = 5
MAX_EVIDENCE = 50
# Entities a reconstruction loads for its walk at most: the walk is bounded by
# hops and evidence, and this bounds the reading behind it.
MAX_WALK_ENTITIES = 1000


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


def walk(
    pool: Sequence[int],
    inputs: WalkInputs,
    *,
    max_hops: int,
    max_evidence: int,
    placed: Collection[int] = (),
) -> Walk:
    """Stage 3, a pure function: from each pooled record, through the entities it
    mentions and entity-to-entity relations (either direction, 1..max_hops), to the
    records mentioning the entities reached. A pooled record, or one already ``placed``
    (bundled into an item), stays where it is and a record two items reach belongs to
    the earlier item; each item keeps at most ``max_evidence``, fewer hops first, then
    the most recently declared relation, then the lower record id."""
    adjacency: dict[int, list[RelationRow]] = {}
    for row in inputs.relations:
        adjacency.setdefault(row.subject_id, []).append(row)
        adjacency.setdefault(row.object_id, []).append(row)
    claimed, evidence, omitted, limits = {*pool, *placed}, {}, 0, set()
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


def load_walk(
    store: Reconstructing, view: View, pool: Sequence[int], max_hops: int, cap: int
) -> WalkInputs:
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
    store: Reconstructing,
    space: VectorSpace | None,
    request: pipeline.ReadRequest,
    *,
    max_hops: int,
    max_evidence: int,
) -> Reconstruction:
    """Reconstructive recall: stage 1 alias votes to the lexical arm, the plain read's
    items (never added to, never reordered), stage 2 bundles and roles from declared
    record relations, stage 3 the bounded walk, evidence inside the items."""
    terms = traverse.alias_terms(store, request.view, request.query or "")
    result = pipeline.read(store, replace(request, extra_terms=terms), space)
    ids = [item.id for item in result.items]
    seqs = store.visible_seqs(request.view.scope, ids)
    pool = [seqs[i] for i in ids if i in seqs]
    texts = {seqs[i.id]: i.text for i in result.items if i.id in seqs}
    refs = {seq: MEM_PREFIX + memory_id for memory_id, seq in seqs.items()}
    stage2 = _bundles(store, request.view, pool, refs, texts)
    heads = [seq for seq in pool if seq not in stage2.folded]
    walked = walk(
        heads,
        load_walk(store, request.view, heads, max_hops, max_evidence),
        max_hops=max_hops,
        max_evidence=max_evidence,
        placed=stage2.folded,
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
    folded: frozenset[int]  # pooled records now evidence inside an earlier item
    roles: Mapping[int, list[Role]]


def _assemble(
    items: Sequence[Any],
    seqs: Mapping[str, int],
    stage2: _Stage2,
    walked: Walk,
    reached: Mapping[int, Any],
) -> list[Reconstructed]:
    """The read's items, in the read's order, each with its bundle, walk evidence and
    roles; an item bundled into an earlier one is inside it, no longer an item."""
    assembled = []
    for item in items:
        seq = seqs[item.id]
        if seq in stage2.folded:
            continue
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
            )
        )
    return assembled


def _bundles(
    store: Reconstructing,
    view: View,
    pool: Sequence[int],
    refs: Mapping[int, str],
    texts: Mapping[int, str],
) -> _Stage2:
    """Stage 2: two pooled records a declared record-to-record relation joins fold into
    one item, the earlier; a record joined to one already folded goes where that one
    went. Role-vocabulary predicates become roles on both records (a folded record's
    roles are its item's)."""
    position = {seq: i for i, seq in enumerate(pool)}
    into: dict[int, int] = {}  # folded record -> the record it was bundled with
    joined: dict[int, str] = {}  # folded record -> the predicate that bundled it
    roles: dict[int, list[Role]] = {}
    for row in store.memory_relations(view.scope, pool):
        head, member = sorted((row.subject_id, row.object_id), key=lambda s: position[s])
        if member not in into and head != member:
            into[member], joined[member] = head, row.predicate
        if normalize_text(row.predicate) in ROLES:
            role = Role(normalize_text(row.predicate), refs[row.subject_id], refs[row.object_id],
                        row.public_id)  # fmt: skip
            for seq in (row.subject_id, row.object_id):
                roles.setdefault(seq, []).append(role)
    bundles: dict[int, list[Evidence]] = {}
    item_roles: dict[int, list[Role]] = {}
    for seq in pool:  # in item order, so each item's bundle keeps the read's order
        item = _item_of(seq, into)
        if item != seq:
            bundles.setdefault(item, []).append(
                Evidence(
                    ref=refs[seq],
                    text=texts[seq],
                    why=f"relation:{joined[seq]}",
                    independence_reason="cluster:relation",
                )  # fmt: skip
            )
        for role in roles.get(seq, ()):
            if role not in item_roles.setdefault(item, []):
                item_roles[item].append(role)
    return _Stage2(bundles, frozenset(into), item_roles)


def _item_of(seq: int, into: Mapping[int, int]) -> int:
    """The item a pooled record is in: itself, or where its bundling chain ends (each
    step goes to an earlier record, so the chain ends)."""
    while seq in into:
        seq = into[seq]
    return seq
