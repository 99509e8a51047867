"""The shapes every room and the store agree on: a validated memory, a parsed condition.

Invariant: these are data only. Validation makes them (`write.validate`,
`recall.filters`); the store reads them and never validates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from assocmem.text.concepts import normalize_text

# Content hashes carry their algorithm so a later change of hash stays readable.
HASH_PREFIX = "b2:"


@dataclass(frozen=True)
class NewMemory:
    """A validated memory ready for the store."""

    text: str
    kind: str
    concepts: tuple[tuple[str, str], ...]  # (normalised, original)
    tags: tuple[str, ...]
    value: float
    meta: dict[str, Any]
    source: str | None
    observed_at: str
    version: str | None
    verified_at: str | None
    verification_scope: str | None
    recheck_by: str | None
    confidence: float | None
    access: tuple[str, ...]
    key: tuple[str, str] | None
    derived_from: tuple[str, ...]
    protected: bool
    author: str | None
    thread: str | None
    task: str | None
    source_canonical: str | None
    fingerprint: str
    meta_json: str
    dedupe_key: str


def content_hash(text: str) -> str:
    """Fingerprint of a text that ignores case, width and spacing differences."""
    digest = hashlib.blake2b(normalize_text(text).encode(), digest_size=16).hexdigest()
    return HASH_PREFIX + digest


def fingerprint_key(fingerprint: str) -> str:
    """The slice of a fingerprint the exact-text index holds: 8 hex digits after the
    prefix, as the `fingerprint_key` column computes them (migration 0006)."""
    return fingerprint.removeprefix(HASH_PREFIX)[:8]


COLUMNS = frozenset(
    {
        "id", "kind", "source", "observed_at", "version", "verified_at", "verification_scope",
        "recheck_by", "confidence", "value", "valence", "status", "author", "thread",
        "created_at", "tags", "access", "derived_from", "key_subject", "key_relation",
        "protected", "task", "source_canonical",
    }
)  # fmt: skip
# Columns holding JSON lists, where $contains means "has this element".
LIST_COLUMNS = frozenset({"tags", "access", "derived_from"})

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Condition:
    """One test on one field: ``field op value``; ``meta`` is True for a meta key."""

    field: str
    op: str
    value: Any
    meta: bool


@dataclass(frozen=True)
class Cue:
    """A soft preference: memories meeting every condition are boosted by ``1 + trust``."""

    conditions: tuple[Condition, ...]
    trust: float
    label: str = ""
