"""Soft (attention-style) reads: softmax weights over keyed memories and their value mixture.

Invariant: the result is a mixture with its weights, never a record: averaging
the values of different records can produce a vector no record holds (a version
1.6), which is a feature blend, not evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from assocmem.errors import InvalidInput
from assocmem.recall import filters
from assocmem.store import View
from assocmem.types import Record, SoftRead

# Keyed memories a soft read considers at most; it is a read over a small,
# deliberately keyed set, not over a whole store.
MAX_KEYED = 10_000


class KeyedStore(filters.FieldProbe, Protocol):
    """What a soft read reads: the keyed memories a view sees, its fields checked."""

    def keyed_records(self, view: View, limit: int) -> list[Record]: ...


def soft_read(
    store: KeyedStore, view: View, query_key: Sequence[float], temperature: float
) -> SoftRead:
    """Softmax(q·k / temperature) over visible keyed memories, and Σ weight · value."""
    query = _vector(query_key, "query_key")
    filters.check_fields(store, view)
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise InvalidInput("temperature must be a positive number", field="temperature")
    if not math.isfinite(temperature) or temperature <= 0:
        raise InvalidInput("temperature must be a positive number", field="temperature")
    scored, values, skipped = [], [], 0
    for record in store.keyed_records(view, MAX_KEYED):
        key, value = record.meta.get("key") or [], record.meta.get("value") or []
        if not _numeric(key) or not _numeric(value) or len(key) != len(query):
            skipped += 1
            continue
        scored.append((record.id, sum(q * k for q, k in zip(query, key, strict=True))))
        values.append([float(v) for v in value])
    if not scored:
        return SoftRead(weights=(), mixture=(), temperature=float(temperature), skipped=skipped)
    if len({len(v) for v in values}) > 1:
        raise InvalidInput("keyed memories hold value vectors of different widths", field="where")
    weights = _softmax([score / temperature for _, score in scored])
    mixture = [
        sum(w * v[i] for w, v in zip(weights, values, strict=True)) for i in range(len(values[0]))
    ]
    ranked = sorted(zip((i for i, _ in scored), weights, strict=True), key=lambda p: (-p[1], p[0]))
    return SoftRead(
        weights=tuple(ranked),
        mixture=tuple(mixture),
        temperature=float(temperature),
        skipped=skipped,
    )


def _softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)  # shift for stability: exp of large scores would overflow
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _numeric(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and all(math.isfinite(v) for v in value)
    )


def _vector(value: Sequence[float], field: str) -> list[float]:
    items = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    if not items or not _numeric(items):
        raise InvalidInput(f"{field} must be a non-empty list of finite numbers", field=field)
    return [float(v) for v in items]
