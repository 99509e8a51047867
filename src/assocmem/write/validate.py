"""Validation of what callers write: raw arguments in, a checked `NewMemory` out.

Invariant: nothing reaches the store unless every field passed here. Each
failure is a typed `InvalidInput` naming the field, raised before any write
begins, so a refused write leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from assocmem.errors import EmptyText, InvalidConcept, InvalidInput, InvalidOutcome, TextTooLong
from assocmem.schema import HASH_PREFIX, NewMemory, content_hash
from assocmem.text import times
from assocmem.text.clean import check_clean
from assocmem.text.concepts import (
    MAX_CONCEPT_CHARS,
    extract_concepts,
    normalize_concept,
    unique_concepts,
)
from assocmem.text.sources import canonical_source
from assocmem.types import KINDS

# Size limits. 64 KiB of UTF-8 holds a long document section; anything larger
# belongs in a file the memory points to, and unbounded rows hurt every scan.
MAX_TEXT_BYTES = 65_536
MAX_META_BYTES = 65_536
# Caller-given concepts per memory: 32 concepts are 496 link pairs per write.
MAX_CONCEPTS = 32
MAX_TAGS = 64
MAX_DERIVED_FROM = 256
# Importance is a relative weight; the cap keeps one memory from dwarfing all others.
MAX_VALUE = 1000.0

WRITE_FIELDS = frozenset(
    {
        "text", "concepts", "kind", "tags", "value", "meta", "source", "observed_at",
        "version", "verified_at", "verification_scope", "recheck_by", "confidence",
        "access", "key", "derived_from", "protected", "author", "thread", "task",
    }
)  # fmt: skip


def new_memory(fields: Mapping[str, Any]) -> NewMemory:
    """Validate one write's fields (the keyword arguments of `Memory.write`)."""
    unknown = set(fields) - WRITE_FIELDS
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidInput(f"unknown write field {name!r}", field=name)
    for name, value in fields.items():  # per item, so one bad item of a batch is refused alone
        check_clean(value, name)
    text = check_text(fields.get("text"))
    kind = fields.get("kind") or "episodic"
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, got {kind!r}", field="kind")
    given = fields.get("concepts")
    concepts = tuple(check_concepts(given) if given is not None else extract_concepts(text))
    meta, meta_json = _check_meta(fields.get("meta"))
    observed_at = _optional_time(fields.get("observed_at"), "observed_at") or times.now()
    source = _optional_str(fields.get("source"), "source")
    task = _optional_str(fields.get("task"), "task")
    if (kind == "working") != (task is not None):
        raise InvalidInput(
            "working memory needs a task (task=...), and only working memory takes one",
            field="task",
        )
    return NewMemory(
        text=text,
        kind=kind,
        concepts=concepts,
        tags=_str_list(fields.get("tags"), "tags", MAX_TAGS),
        value=_check_number(fields.get("value", 1.0), "value", 0.0, MAX_VALUE),
        meta=meta,
        source=source,
        observed_at=observed_at,
        version=_optional_str(fields.get("version"), "version"),
        verified_at=_optional_time(fields.get("verified_at"), "verified_at"),
        verification_scope=_optional_str(fields.get("verification_scope"), "verification_scope"),
        recheck_by=_optional_time(fields.get("recheck_by"), "recheck_by"),
        confidence=_optional_number(fields.get("confidence"), "confidence", 0.0, 1.0),
        access=_roles(fields.get("access")),
        key=check_key(fields.get("key")) if fields.get("key") is not None else None,
        derived_from=_str_list(fields.get("derived_from"), "derived_from", MAX_DERIVED_FROM),
        protected=check_bool(fields.get("protected", False), "protected"),
        author=_optional_str(fields.get("author"), "author"),
        thread=_optional_str(fields.get("thread"), "thread"),
        task=task,
        source_canonical=canonical_source(source),
        fingerprint=content_hash(text),
        meta_json=meta_json,
        dedupe_key=_dedupe_key(text, kind, observed_at, source, meta_json, task),
    )


# `json.dumps(..., ensure_ascii=False)` without building an encoder for every write.
_BASIS = json.JSONEncoder(ensure_ascii=False)


def _dedupe_key(
    text: str, kind: str, observed_at: str, source: str | None, meta: str, task: str | None
) -> str:
    # Two writes are the same observation when text, kind, time, source, meta and
    # task all agree: a retried write is refused as a duplicate, a repeated event
    # observed at another time is stored.
    basis = _BASIS.encode([text, kind, observed_at, source, meta, task])
    return HASH_PREFIX + hashlib.blake2b(basis.encode(), digest_size=16).hexdigest()


def check_text(text: Any) -> str:
    """A memory's text: a non-empty string within `MAX_TEXT_BYTES`."""
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, got {type(text).__name__}", field="text")
    if not text.strip():
        raise EmptyText("text must not be empty", field="text")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise TextTooLong(
            f"text is {size} bytes; the limit is {MAX_TEXT_BYTES} bytes of UTF-8", field="text"
        )
    if "\x00" in text:
        raise InvalidInput("text must not contain NUL characters", field="text")
    return text


def check_concepts(concepts: Any, *, field: str = "concepts") -> list[tuple[str, str]]:
    """Caller-given concepts as ``(normalised, original)`` pairs, repeats dropped."""
    if isinstance(concepts, str) or not isinstance(concepts, Iterable):
        raise InvalidConcept(f"{field} must be a list of strings", field=field)
    pairs = []
    for concept in concepts:
        if not isinstance(concept, str):
            raise InvalidConcept(
                f"{field} must contain only strings, got {type(concept).__name__}", field=field
            )
        normalized = normalize_concept(concept)
        if not normalized:
            raise InvalidConcept(f"{field} contains an empty concept", field=field)
        if len(normalized) > MAX_CONCEPT_CHARS:
            raise InvalidConcept(
                f"concept {concept[:20]!r}… is longer than {MAX_CONCEPT_CHARS} characters",
                field=field,
            )
        pairs.append((normalized, concept))
    unique = unique_concepts(pairs)
    if len(unique) > MAX_CONCEPTS:
        raise InvalidConcept(
            f"{field} has {len(unique)} concepts; the limit is {MAX_CONCEPTS}", field=field
        )
    return unique


def check_outcome(outcome: Any) -> float:
    """A feedback outcome: a finite number in [-1, 1]."""
    if isinstance(outcome, bool) or not isinstance(outcome, int | float):
        raise InvalidOutcome("outcome must be a number in [-1, 1]", field="outcome")
    if not math.isfinite(outcome) or not -1.0 <= outcome <= 1.0:
        raise InvalidOutcome(f"outcome must be in [-1, 1], got {outcome!r}", field="outcome")
    return float(outcome)


def check_number(value: Any, field: str, positive: bool) -> float:
    """A finite number, at least 0 (above 0 when ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{field} must be a finite number", field=field)
    if value < 0 or (positive and value == 0):
        raise InvalidInput(f"{field} must be {'positive' if positive else '>= 0'}", field=field)
    return float(value)


def check_read_id(read: Any, *, field: str = "read") -> str:
    """A read handle: the ``id`` of a read's result (a ULID; letters and digits)."""
    if not isinstance(read, str) or not 1 <= len(read) <= 64 or not read.isalnum():
        raise InvalidInput(f"{field} must be the id of a read's result", field=field)
    return read


def check_ids(ids: Any, *, field: str = "ids") -> list[str]:
    """A non-empty list of memory id strings, order kept, repeats dropped."""
    if isinstance(ids, str) or not isinstance(ids, Iterable):
        raise InvalidInput(f"{field} must be a list of memory ids", field=field)
    given = list(ids)
    if not given or not all(isinstance(i, str) and i for i in given):
        raise InvalidInput(f"{field} must be a non-empty list of memory id strings", field=field)
    return list(dict.fromkeys(given))


def _check_meta(meta: Any) -> tuple[dict[str, Any], str]:
    """The meta object and its canonical JSON."""
    if meta is None:
        return {}, "{}"
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise InvalidInput("meta must be a JSON object with string keys", field="meta")
    try:
        encoded = json.dumps(dict(meta), allow_nan=False, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"meta must be JSON-serialisable: {exc}", field="meta") from exc
    if len(encoded.encode()) > MAX_META_BYTES:
        raise InvalidInput(f"meta is larger than {MAX_META_BYTES} bytes of JSON", field="meta")
    decoded: dict[str, Any] = json.loads(encoded)
    return decoded, encoded


def _check_number(value: Any, field: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{field} must be a number", field=field)
    if not math.isfinite(value) or not low <= value <= high:
        raise InvalidInput(f"{field} must be in [{low:g}, {high:g}], got {value!r}", field=field)
    return float(value)


def _optional_number(value: Any, field: str, low: float, high: float) -> float | None:
    return None if value is None else _check_number(value, field, low, high)


def check_source(value: Any, field: str) -> str:
    """A source name or URL as a write takes one (non-empty, at most 2048 chars)."""
    checked = _optional_str(value, field)
    if checked is None:
        raise InvalidInput(f"{field} must be a non-empty string of at most 2048 chars", field=field)
    return checked


def _optional_str(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 2048:
        raise InvalidInput(f"{field} must be a non-empty string of at most 2048 chars", field=field)
    return value


def _optional_time(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str | datetime):
        raise InvalidInput(f"{field} must be a datetime or ISO 8601 string", field=field)
    return times.parse_time(value, field=field)


def _str_list(value: Any, field: str, limit: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput(f"{field} must be a list of strings", field=field)
    given = list(value)
    if not all(isinstance(v, str) and v.strip() and len(v) <= 256 for v in given):
        raise InvalidInput(f"{field} must contain non-empty strings (≤ 256 chars)", field=field)
    items = tuple(dict.fromkeys(given))
    if len(items) > limit:
        raise InvalidInput(f"{field} has {len(items)} entries; the limit is {limit}", field=field)
    return items


def _roles(value: Any) -> tuple[str, ...]:
    roles = _str_list(value, "access", MAX_TAGS)
    if any("\n" in role for role in roles):  # the store joins an access list's roles with \n
        raise InvalidInput("access roles must not contain a newline", field="access")
    return roles


def check_key(value: Any) -> tuple[str, str]:
    """A supersession key: a ``(subject, relation)`` pair of non-empty strings."""
    if (
        isinstance(value, str | Mapping)
        or not isinstance(value, Iterable)
        or len(items := list(value)) != 2
        or not all(isinstance(v, str) and v.strip() for v in items)
    ):
        raise InvalidInput("key must be a (subject, relation) pair of strings", field="key")
    return (items[0], items[1])


def check_choice(value: Any, allowed: tuple[str, ...], field: str) -> str:
    """``value`` if it is one of ``allowed``; anything else is refused naming ``field``."""
    if value not in allowed:
        raise InvalidInput(f"{field} must be one of {', '.join(allowed)}", field=field)
    return str(value)


def check_bool(value: Any, field: str) -> bool:
    """``value`` if it is a bool; anything else (1, "yes", None) is refused naming ``field``."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be true or false", field=field)
    return value


# -- update: the mutable fields of a stored memory --
UPDATE_FIELDS = ("tags", "value", "meta", "access", "protected")


def update_columns(fields: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...] | None]:
    """The stored columns an update assigns, checked by the rules (and error fields) of a
    write, and the new access list (None when unchanged). Fields given as None are left
    as they are; naming none is refused."""
    given = {name: value for name, value in fields.items() if value is not None}
    if not given:
        raise InvalidInput(
            f"an update names at least one of {', '.join(UPDATE_FIELDS)}", field="fields"
        )
    columns: dict[str, Any] = {}
    if "tags" in given:
        columns["tags"] = _json_list(_str_list(given["tags"], "tags", MAX_TAGS))
    if "value" in given:
        columns["value"] = _check_number(given["value"], "value", 0.0, MAX_VALUE)
    if "meta" in given:
        columns["meta"] = _check_meta(given["meta"])[1]
    if "protected" in given:
        columns["protected"] = int(check_bool(given["protected"], "protected"))
    access = _roles(given["access"]) if "access" in given else None
    if access is not None:
        columns["access"] = _json_list(access)
    return columns, access


def _json_list(values: tuple[str, ...]) -> str:
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"
