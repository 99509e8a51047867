"""A whole store moved: every line of an ``--all`` export, and an import of such lines
(or of a plain export's) into the importer's scope.

Invariant: an export holds only what its reader may read; an import writes only into
the importer's own scope, one batch in one transaction, and refuses a bad line alone
(named by its number and field) while the rest of the batch is imported. What was
stored before is skipped, never overwritten, except that a link, lesson or taught
total takes the exported state, so importing one file twice changes nothing.

A line carries no more authority than its importer has, and no less accountability
than a write: one declaring as the operator is refused (`OperatorRequired`) unless
the importer may declare as the operator, and a derived record inherits its
parents' taint as a write would. Standing, attestations and receipts are not in
the format, so no line can claim them.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from assocmem.errors import AssocmemError, InvalidInput
from assocmem.graph import declare, operator
from assocmem.links.rows import (
    LearnedLesson,
    LearnedLink,
    LearnedPrecedent,
    LoggedFeedback,
    TaughtConcept,
)
from assocmem.portable import lines
from assocmem.portable.rows import ImportedMemory
from assocmem.portable.types import ImportReport, LineProblem
from assocmem.store import View
from assocmem.store.protocol import EntityRow, RelationRow, new_id
from assocmem.trust import taint
from assocmem.trust.store import TrustRow
from assocmem.types import STATUSES, Record, Scope

EXPORT_PAGE = 500
# Lines per `import_lines` call; the CLI sends a file in batches of this size.
MAX_LINES = 10_000


class GraphExported(Protocol):
    """What exporting the declared graph reads (the graph part)."""

    def aliases_in_scope(self, scope: Scope) -> list[tuple[str, int]]: ...

    def entities_by_id(
        self, ids: Sequence[int], scope: Scope | None = None
    ) -> dict[int, EntityRow]: ...

    def mentions_of(self, scope: Scope, seqs: Sequence[int]) -> dict[int, list[int]]: ...

    def relations_in_scope(self, scope: Scope) -> list[RelationRow]: ...


class Exported(GraphExported, Protocol):
    """What a whole-store export reads: the records (the portable part), what the
    links parts learned, and the declared graph."""

    def records_for_export(
        self, scope: Scope, *, after: int, limit: int
    ) -> list[tuple[int, Record, str | None]]: ...

    def learned_links(self, scope: Scope) -> list[LearnedLink]: ...

    def learned_lessons(self, scope: Scope) -> tuple[list[LearnedLesson], list[TaughtConcept]]: ...

    def learned_precedents(self, scope: Scope) -> list[LearnedPrecedent]: ...

    def feedback_log(self, scope: Scope) -> list[LoggedFeedback]: ...


class Importing(declare.DeclarationStore, Protocol):
    """What an import writes and reads: the records (the portable part) and their
    taint (trust), what the links parts learned, and declarations (graph) behind
    the operator gate."""

    def import_memories(self, scope: Scope, rows: Sequence[ImportedMemory]) -> list[str]: ...

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...

    def add_taint(self, rows: Sequence[tuple[int, str]]) -> None: ...

    def restore_links(self, scope: Scope, links: Sequence[LearnedLink]) -> None: ...

    def restore_lessons(
        self, scope: Scope, lessons: Sequence[LearnedLesson], taught: Sequence[TaughtConcept]
    ) -> list[bool]: ...

    def restore_precedents(self, scope: Scope, rows: Sequence[LearnedPrecedent]) -> list[bool]: ...

    def restore_feedback(self, scope: Scope, calls: Sequence[LoggedFeedback]) -> list[bool]: ...


def export_all(store: Exported, scope: Scope) -> Iterator[dict[str, Any]]:
    """The header, every readable record (every status, oldest first), then the learned
    state and the declared graph, as export lines."""
    yield lines.header()
    ids: dict[int, str] = {}
    after = 0
    while page := store.records_for_export(scope, after=after, limit=EXPORT_PAGE):
        for seq, record, retired_by in page:
            ids[seq] = record.id
            line = record.to_dict()
            if retired_by is not None:
                line["superseded_by"] = retired_by
            yield line
        after = page[-1][0]
    for link in store.learned_links(scope):
        yield {"line": "link", "access": list(link.access), "a": link.a, "b": link.b,
               "weight": link.weight, "count": link.count, "outcome_sum": link.outcome_sum,
               "feedback_count": link.feedback_count, "updated_at": link.updated_at}  # fmt: skip
    lessons, taught = store.learned_lessons(scope)
    for lesson in lessons:
        yield {"line": "lesson", "access": list(lesson.access), "concept": lesson.concept,
               "memory": lesson.memory_id, "weight": lesson.weight,
               "outcomes": lesson.outcomes, "updated_at": lesson.updated_at}  # fmt: skip
    for total in taught:
        yield {"line": "taught", "access": list(total.access), "concept": total.concept,
               "taught": total.taught}  # fmt: skip
    for precedent in store.learned_precedents(scope):
        yield {"line": "precedent", "read": precedent.read_id,
               "concepts": list(precedent.concepts), "model": precedent.model,
               "vector": base64.b64encode(precedent.vector).decode("ascii"),
               "taught": [{"memory": m, "weight": w, "outcomes": n}
                          for m, w, n in precedent.taught]}  # fmt: skip
    for call in store.feedback_log(scope):
        yield {"line": "feedback", "access": list(call.access), "id": call.public_id,
               "query_concepts": list(call.query_concepts), "outcome": call.outcome,
               "created_at": call.created_at, "memories": list(call.memory_ids)}  # fmt: skip
    yield from _graph_lines(store, scope, ids)


def _graph_lines(
    store: GraphExported, scope: Scope, ids: Mapping[int, str]
) -> Iterator[dict[str, Any]]:
    entity_ids = sorted({entity for _, entity in store.aliases_in_scope(scope)})
    entities = store.entities_by_id(entity_ids, scope)  # names this reader may read
    mentions: dict[int, list[str]] = {}
    for seq, mentioned in store.mentions_of(scope, sorted(ids)).items():
        for entity in mentioned:
            mentions.setdefault(entity, []).append(ids[seq])
    for entity_id in entity_ids:
        row = entities[entity_id]
        yield {"line": "entity", "name": row.name,
               "aliases": [a for a in row.aliases if a != row.name],
               "declared_by": row.declared_by, "mentions": mentions.get(entity_id, [])}  # fmt: skip

    def endpoint(kind: str, key: int) -> str | None:
        if kind == "mem":
            return declare.MEM_PREFIX + ids[key] if key in ids else None
        return entities[key].name if key in entities else None

    for relation in store.relations_in_scope(scope):
        subject = endpoint(relation.subject_kind, relation.subject_id)
        object_ = endpoint(relation.object_kind, relation.object_id)
        if subject is None or object_ is None:
            continue  # an endpoint outside this reader's view: not its to move
        yield {"line": "relation", "subject": subject, "predicate": relation.predicate,
               "object": object_, "anchor": ids.get(relation.anchor_seq),
               "declared_by": relation.declared_by}  # fmt: skip


class _Batch:
    """One call's lines sorted by kind, with what became of each."""

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.by_kind: dict[str, list[tuple[int, Any]]] = {k: [] for k in lines.LINE_KINDS}
        self.imported: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.problems: list[LineProblem] = []

    def refuse(self, number: int, exc: AssocmemError) -> None:
        field = getattr(exc, "field", None)
        self.problems.append(LineProblem(number, field, type(exc).__name__, exc.message))

    def report(self) -> ImportReport:
        return ImportReport(
            imported={k: n for k, n in sorted(self.imported.items()) if n},
            skipped={k: n for k, n in sorted(self.skipped.items()) if n},
            errors=tuple(sorted(self.problems, key=lambda p: p.line)),
        )


_PARSERS = {"link": lines.link, "lesson": lines.lesson, "taught": lines.taught,
            "precedent": lines.precedent, "feedback": lines.feedback,
            "entity": lines.entity, "relation": lines.relation}  # fmt: skip


def import_lines(
    store: Importing,
    scope: Scope,
    given: Sequence[Any],
    *,
    first_line: int,
    rehome: bool,
    operator: bool,
) -> ImportReport:
    """Import export lines (``given``) into ``scope``: records first (in order), then links,
    lessons, taught totals, precedents, the feedback log, entities and relations. ``operator``:
    whether the importer may declare as the operator (the operator gate)."""
    if isinstance(given, str | Mapping) or not isinstance(given, Sequence):
        raise InvalidInput("lines must be a list of export line objects", field="lines")
    if len(given) > MAX_LINES:
        raise InvalidInput(f"one call takes at most {MAX_LINES} lines", field="lines")
    batch = _Batch(first_line)
    for offset, line in enumerate(given):
        number = first_line + offset
        try:
            kind = lines.kind_of(line)
            if kind == "header":
                lines.check_header(line)
                continue
            item = lines.record(line, scope, rehome) if kind == "record" else _PARSERS[kind](line)
        except AssocmemError as exc:
            batch.refuse(number, exc)
            continue
        batch.by_kind[kind].append((number, item))
    with store.transaction():
        _records(store, scope, batch)
        _learned(store, scope, batch)
        _declared(store, scope, batch, operator)
    return batch.report()


def _records(store: Importing, scope: Scope, batch: _Batch) -> None:
    rows: list[tuple[int, ImportedMemory]] = batch.by_kind["record"]
    rows = [(n, r if r.id else _with_new_id(r)) for n, r in rows]
    outcomes = store.import_memories(scope, [r for _, r in rows])
    for (number, _), outcome in zip(rows, outcomes, strict=True):
        if outcome == "imported":
            batch.imported["record"] += 1
        elif outcome in ("present", "duplicate"):
            batch.skipped["record"] += 1
        else:
            batch.refuse(number, InvalidInput("an active record holds this key", field="key"))
    derived = [r for (_, r), o in zip(rows, outcomes, strict=True) if o == "imported"]
    _inherit_taint(store, scope, [r for r in derived if r.memory.derived_from])


def _inherit_taint(store: Importing, scope: Scope, rows: Sequence[ImportedMemory]) -> None:
    """Give each derived record the taint a write gives it, so an import cannot shed
    the sources a slash reaches it by. One at a time, in line order (oldest first): a
    parent imported in the same batch has its own taint before its children read it."""
    for row in rows:
        seqs = store.visible_seqs(scope, [row.id, *row.memory.derived_from], statuses=STATUSES)
        parents = [seqs[p] for p in row.memory.derived_from if p in seqs]
        if row.id in seqs and parents:
            taint.inherit(store, [(seqs[row.id], parents)])


def _with_new_id(row: ImportedMemory) -> ImportedMemory:
    return replace(row, id=new_id())


def _learned(store: Importing, scope: Scope, batch: _Batch) -> None:
    links = [link for _, link in batch.by_kind["link"]]
    store.restore_links(scope, links)
    batch.imported["link"] += len(links)
    lessons = batch.by_kind["lesson"]
    taught = [t for _, t in batch.by_kind["taught"]]
    found = store.restore_lessons(scope, [x for _, x in lessons], taught)
    for (number, _), kept in zip(lessons, found, strict=True):
        if kept:
            batch.imported["lesson"] += 1
        else:
            batch.refuse(number, InvalidInput("its memory is not here", field="memory"))
    batch.imported["taught"] += len(taught)
    precedents = batch.by_kind["precedent"]
    restored = store.restore_precedents(scope, [p for _, p in precedents])
    for (number, _), kept in zip(precedents, restored, strict=True):
        if kept:
            batch.imported["precedent"] += 1
        else:
            batch.refuse(number, InvalidInput("none of its memories is here", field="taught"))
    calls = batch.by_kind["feedback"]
    appended = store.restore_feedback(scope, [c for _, c in calls])
    for done in appended:
        (batch.imported if done else batch.skipped)["feedback"] += 1


def _declared(store: Importing, scope: Scope, batch: _Batch, as_operator: bool) -> None:
    """Entities and relations, declared again as `declare` would (ids and times new),
    behind the same operator gate."""
    view = View(scope)
    for number, line in batch.by_kind["entity"] + batch.by_kind["relation"]:
        try:
            kind = line["line"]
            declarer = declare.check_declarer(line.get("declared_by", "agent"))
            operator.check_declarer(declarer, as_operator)
            if kind == "entity":
                _declare_entity(store, view, line, declarer)
            else:
                anchor = line.get("anchor")
                seq = declare.memory_seq(store, view, anchor) if anchor else None
                relation = {k: line.get(k) for k in ("subject", "predicate", "object")}
                _declared_or_refused(
                    declare.declare(
                        store, view, {"relations": [relation]}, anchor=seq, declared_by=declarer
                    )  # fmt: skip
                )
            batch.imported[kind] += 1
        except AssocmemError as exc:
            batch.refuse(number, exc)


def _declare_entity(store: Importing, view: View, line: Mapping[str, Any], declarer: str) -> None:
    named = {"name": line.get("name"), "aliases": list(line.get("aliases", []))}
    mentions = [declare.memory_seq(store, view, m) for m in line.get("mentions", [])]
    # The entity lives in its first mention's access class, as a declaration anchored
    # there would put it; then every other memory mentioning it mentions it again.
    first = mentions[0] if mentions else None
    _declared_or_refused(
        declare.declare(
            store, view, {"entities": [named]}, anchor=first, declared_by=declarer
        )  # fmt: skip
    )
    for seq in mentions[1:]:
        declare.declare(store, view, {"entities": [{"name": named["name"]}]}, anchor=seq,
                             declared_by=declarer)  # fmt: skip


def _declared_or_refused(declared: Any) -> None:
    if declared.dropped:
        raise InvalidInput(declared.dropped[0].reason, field="associations")
