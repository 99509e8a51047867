"""The export line format: what each line of a whole-store export holds, and the
check that turns an imported line back into what the store restores.

A line is one JSON object. A record line is exactly what `Memory.export` writes (a
`Record` as a dict; an ``--all`` export adds ``superseded_by`` where a newer value
retired it) and carries no ``line`` key, since a record's own ``kind`` is its memory
kind. Every other line names what it is in ``line``: ``header`` (first, with
``format`` and ``version``), ``link``, ``lesson``, ``taught``, ``precedent``,
``feedback``, ``entity``, ``relation``.

Invariant: a line is checked whole before anything of it is stored, by the rules a
write uses; a failure is `InvalidInput` naming the field at fault.
"""

from __future__ import annotations

import array
import base64
import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.links.rows import (
    LearnedLesson,
    LearnedLink,
    LearnedPrecedent,
    LoggedFeedback,
    TaughtConcept,
)
from assocmem.portable.rows import ImportedMemory
from assocmem.text import times
from assocmem.text.clean import check_clean
from assocmem.types import STATUSES, Record, Scope
from assocmem.write import validate

FORMAT = "assocmem-export"
# Version 1: records, links, lessons, taught totals, the feedback log, entities and
# relations; version 2 adds precedents (rated reads, `links.precedents`). A reader
# refuses a later version rather than guess at what it adds.
VERSION = 2
LINE_KINDS = (
    "record", "link", "lesson", "taught", "precedent", "feedback", "entity", "relation"
)  # fmt: skip
# The longest query vector a precedent line may carry, in dimensions.
MAX_DIMS = 8192

_RECORD_FIELDS = frozenset(f.name for f in fields(Record)) | {"superseded_by"}
# Record fields an import does not take from the line: the scope is the importer's,
# normalised concepts and the canonical source are recomputed from what was written,
# and standing marks belong to the trust room's own state, which is not exported.
_DERIVED = frozenset({"project_id", "channel", "concepts", "source_canonical", "slashed",
                      "attested_key"})  # fmt: skip
_KEYS = {
    "header": {"line", "format", "version"},
    "link": {"line", "access", "a", "b", "weight", "count", "outcome_sum", "feedback_count",
             "updated_at"},
    "lesson": {"line", "access", "concept", "memory", "weight", "outcomes", "updated_at"},
    "taught": {"line", "access", "concept", "taught"},
    "precedent": {"line", "read", "concepts", "model", "vector", "taught"},
    "feedback": {"line", "access", "id", "query_concepts", "outcome", "created_at", "memories"},
    "entity": {"line", "name", "aliases", "declared_by", "mentions"},
    "relation": {"line", "subject", "predicate", "object", "anchor", "declared_by"},
}  # fmt: skip
MAX_ID_CHARS = 64


def header() -> dict[str, Any]:
    """The first line of an ``--all`` export."""
    return {"line": "header", "format": FORMAT, "version": VERSION}


def kind_of(line: Any) -> str:
    """What a line is: ``record`` where it names no ``line``, else that name."""
    if not isinstance(line, Mapping):
        raise InvalidInput("each line must be a JSON object", field="line")
    for name, value in line.items():  # every value, before any reaches the store
        check_clean(value, name if isinstance(name, str) else "line")
    kind = line.get("line", "record")
    if not isinstance(kind, str) or (kind != "record" and kind not in _KEYS):
        raise InvalidInput(f"unknown line kind {kind!r}", field="line")
    if kind in _KEYS:
        unknown = sorted(set(line) - _KEYS[kind])
        if unknown:
            raise InvalidInput(f"unknown {kind} field {unknown[0]!r}", field=unknown[0])
    return str(kind)


def check_header(line: Mapping[str, Any]) -> None:
    """A header this reader understands."""
    if line.get("format") != FORMAT:
        raise InvalidInput(f"format must be {FORMAT!r}", field="format")
    version = line.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise InvalidInput(f"this reader takes versions 1 to {VERSION}", field="version")


def record(line: Mapping[str, Any], scope: Scope, rehome: bool) -> ImportedMemory:
    """A record line as a memory to import into ``scope``. A record of another agent is
    refused (field ``agent_id``) unless ``rehome`` takes it in as the importer's own."""
    unknown = sorted(set(line) - _RECORD_FIELDS - {"line"})
    if unknown:
        raise InvalidInput(f"unknown record field {unknown[0]!r}", field=unknown[0])
    agent = line.get("agent_id")
    if agent is not None and agent != scope.agent_id and not rehome:
        raise InvalidInput(
            f"the record belongs to agent {agent!r}; import as that agent, or rehome it",
            field="agent_id",
        )
    given = {k: v for k, v in line.items() if k in validate.WRITE_FIELDS and v is not None}
    given.pop("concepts", None)
    forms = line.get("concept_forms")
    forms = line.get("concepts") if forms is None else forms
    if forms is not None:
        given["concepts"] = forms
    memory = validate.new_memory(given)
    created = line.get("created_at")
    return ImportedMemory(
        memory=memory,
        id=_identifier(line.get("id"), "id") if line.get("id") is not None else "",
        status=validate.check_choice(line.get("status", "active"), STATUSES, "status"),
        valence=_number(line.get("valence", 0.0), "valence", -1.0, 1.0),
        created_at=_time(created, "created_at") if created is not None else times.now(),
        accessed_at=_optional_time(line.get("accessed_at"), "accessed_at"),
        superseded_by=_optional_id(line.get("superseded_by"), "superseded_by"),
    )


def link(line: Mapping[str, Any]) -> LearnedLink:
    """A link line."""
    return LearnedLink(
        access=_access(line),
        a=_concept(line.get("a"), "a"),
        b=_concept(line.get("b"), "b"),
        weight=_number(line.get("weight"), "weight"),
        count=_count(line.get("count"), "count"),
        outcome_sum=_number(line.get("outcome_sum", 0.0), "outcome_sum"),
        feedback_count=_count(line.get("feedback_count", 0), "feedback_count"),
        updated_at=_time(line.get("updated_at"), "updated_at"),
    )


def lesson(line: Mapping[str, Any]) -> LearnedLesson:
    """A lesson line."""
    return LearnedLesson(
        access=_access(line),
        concept=_concept(line.get("concept"), "concept"),
        memory_id=_identifier(line.get("memory"), "memory"),
        weight=_number(line.get("weight"), "weight"),
        outcomes=_count(line.get("outcomes"), "outcomes"),
        updated_at=_time(line.get("updated_at"), "updated_at"),
    )


def precedent(line: Mapping[str, Any]) -> LearnedPrecedent:
    """A precedent line: a rated read, its vector as base64 of little-endian float32."""
    read_id = validate.check_read_id(line.get("read"))
    concepts = validate.check_concepts(line.get("concepts", []), field="concepts")
    model = line.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 256:
        raise InvalidInput("model must name the embedder of the vector", field="model")
    try:
        vector = base64.b64decode(str(line.get("vector", "")), validate=True)
    except ValueError as exc:
        raise InvalidInput("vector must be base64", field="vector") from exc
    values = array.array("f", vector) if len(vector) % 4 == 0 else None
    if not values or len(values) > MAX_DIMS or not all(math.isfinite(v) for v in values):
        raise InvalidInput(f"vector must hold 1 to {MAX_DIMS} finite float32s", field="vector")
    rows = line.get("taught", [])
    if isinstance(rows, str) or not isinstance(rows, list) or not rows:
        raise InvalidInput("taught must be a non-empty list", field="taught")
    taught = []
    for row in rows:
        if not isinstance(row, Mapping) or set(row) != {"memory", "weight", "outcomes"}:
            raise InvalidInput("taught holds {memory, weight, outcomes} objects", field="taught")
        taught.append((_identifier(row["memory"], "taught"), _number(row["weight"], "taught"),
                       _count(row["outcomes"], "taught")))  # fmt: skip
    return LearnedPrecedent(read_id, tuple(n for n, _ in concepts), model, vector, tuple(taught))


def taught(line: Mapping[str, Any]) -> TaughtConcept:
    """A taught-total line."""
    return TaughtConcept(
        access=_access(line),
        concept=_concept(line.get("concept"), "concept"),
        taught=_number(line.get("taught"), "taught"),
    )


def feedback(line: Mapping[str, Any]) -> LoggedFeedback:
    """A feedback-log line."""
    public = line.get("id")
    if isinstance(public, bool) or not isinstance(public, int) or not 0 < public < 2**53:
        raise InvalidInput("id must be a positive integer below 2**53", field="id")
    concepts = validate.check_concepts(line.get("query_concepts", []), field="query_concepts")
    return LoggedFeedback(
        access=_access(line),
        public_id=public,
        query_concepts=tuple(name for name, _ in concepts),
        outcome=validate.check_outcome(line.get("outcome")),
        created_at=_time(line.get("created_at"), "created_at"),
        memory_ids=tuple(_ids(line.get("memories", []), "memories")),
    )


def entity(line: Mapping[str, Any]) -> dict[str, Any]:
    """An entity line, checked for shape (its names are checked by `declare`)."""
    for name in ("aliases", "mentions"):
        if name in line:
            _ids(line[name], name)
    return dict(line)


def relation(line: Mapping[str, Any]) -> dict[str, Any]:
    """A relation line, checked for shape (its names are checked by `declare`)."""
    _optional_id(line.get("anchor"), "anchor")
    return dict(line)


def _access(line: Mapping[str, Any]) -> tuple[str, ...]:
    roles = line.get("access", [])
    if isinstance(roles, str) or not isinstance(roles, list | tuple):
        raise InvalidInput("access must be a list of roles", field="access")
    if not all(isinstance(r, str) and r.strip() and "\n" not in r for r in roles):
        raise InvalidInput("access must hold non-empty roles on one line", field="access")
    return tuple(roles)


def _concept(value: Any, field: str) -> str:
    pairs = validate.check_concepts([value] if isinstance(value, str) else value, field=field)
    if len(pairs) != 1 or pairs[0][0] != value:
        raise InvalidInput(f"{field} must be one normalised concept", field=field)
    return pairs[0][0]


def _identifier(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise InvalidInput(f"{field} must be a memory id (≤ {MAX_ID_CHARS} chars)", field=field)
    return value


def _optional_id(value: Any, field: str) -> str | None:
    return None if value is None else _identifier(value, field)


def _ids(value: Any, field: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(f"{field} must be a list of strings", field=field)
    return [_identifier(v, field) for v in value]


def _number(value: Any, field: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{field} must be a finite number", field=field)
    if not low <= value <= high:
        raise InvalidInput(f"{field} must be in [{low:g}, {high:g}]", field=field)
    return float(value)


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise InvalidInput(f"{field} must be a non-negative integer", field=field)
    return value


def _time(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be an ISO 8601 time", field=field)
    return times.parse_time(value, field=field)


def _optional_time(value: Any, field: str) -> str | None:
    return None if value is None else _time(value, field)
