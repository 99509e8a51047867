"""Validation of read arguments: raw keyword arguments in, a checked `ReadRequest` out.

Invariant: a read runs only on arguments that passed here; every failure is an
`InvalidInput` naming the argument, raised before any store is touched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.links import hebbian
from assocmem.recall import filters, pipeline, profiles
from assocmem.recall.profiles import GENERAL
from assocmem.store import View
from assocmem.text import times
from assocmem.text.clean import check_clean
from assocmem.text.concepts import extract_concepts
from assocmem.types import KINDS, Scope
from assocmem.write import validate

MAX_K = 1000
MAX_QUERY_CHARS = 10_000
MAX_READ_CONCEPTS = 64
# "recall" and "auto" are one: every arm, fused with the embedder's when one is attached.
MODES = ("recall", "auto", "lexical", "semantic", "evidence")


def read_request(
    scope: Scope,
    query: str | None,
    *,
    concepts: Sequence[str] | None = None,
    k: int = 10,
    hops: int = 1,
    threshold: float = hebbian.DEFAULT_THRESHOLD,
    where: Mapping[str, Any] | None = None,
    prefer: Mapping[str, Any] | Sequence[Any] | None = None,
    prefer_trust: float | None = None,
    prefer_max_boost: float | None = None,
    kinds: Sequence[str] | None = None,
    explain: bool = True,
    as_of: str | datetime | None = None,
    mode: str = "recall",
    role: str | None = None,
    task: str | None = None,
    include_superseded: bool = False,
    profile: str = GENERAL.name,
) -> pipeline.ReadRequest:
    """A validated `ReadRequest` for `Memory.read`'s arguments."""
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise InvalidInput("query must be a non-empty string", field="query")
    if query is not None and len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS} characters", field="query")
    if query is None and concepts is None:
        raise InvalidInput("read needs a query, concepts, or both", field="query")
    if concepts is not None:
        names = [n for n, _ in validate.check_concepts(concepts)]
    else:
        names = [n for n, _ in extract_concepts(query or "", limit=MAX_READ_CONCEPTS)]
    check_int(k, "k", 1, MAX_K)
    check_int(hops, "hops", 0, hebbian.MAX_HOPS)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
        or threshold <= 0
    ):
        raise InvalidInput("threshold must be a positive number", field="threshold")
    for name, flag in (("explain", explain), ("include_superseded", include_superseded)):
        if not isinstance(flag, bool):
            raise InvalidInput(f"{name} must be true or false", field=name)
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}", field="mode")
    if mode == "semantic" and query is None:
        raise InvalidInput("mode 'semantic' reads a query's meaning: give a query", field="query")
    chosen = profiles.named(profile)
    view = View(
        reader(scope, role),
        statuses=("active", "superseded") if include_superseded else ("active",),
        kinds=check_kinds(kinds),
        conditions=filters.parse_where(where),
        task=_optional_name(task, "task"),
    )
    return pipeline.ReadRequest(
        query=query,
        concepts=tuple(names),
        concepts_given=concepts is not None,
        k=k,
        hops=hops,
        threshold=float(threshold),
        view=view,
        cues=filters.parse_prefer(prefer, prefer_trust),
        max_boost=filters.check_max_boost(prefer_max_boost),
        explain=explain,
        as_of=times.parse_time(as_of, field="as_of") if as_of is not None else None,
        mode=mode,
        profile=chosen,
    )


def reader(scope: Scope, role: str | None) -> Scope:
    """The scope read in ``role`` (the memory's own role when None)."""
    return scope if role is None else replace(scope, role=check_role(role))


def check_role(role: Any) -> str:
    """A role: a non-empty single-line string."""
    if not isinstance(role, str) or not role.strip() or "\n" in role or len(role) > 256:
        raise InvalidInput("role must be a non-empty single-line string", field="role")
    check_clean(role, "role")
    return role


def check_int(value: Any, field: str, low: int, high: int) -> None:
    """An integer within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{field} must be an integer from {low} to {high}", field=field)


def check_kinds(kinds: Sequence[str] | None) -> tuple[str, ...] | None:
    """A list of memory kinds, or None for every long-term kind."""
    if kinds is None:
        return None
    listed = isinstance(kinds, Iterable) and not isinstance(kinds, str)
    if not listed or not all(kind in KINDS for kind in kinds):
        raise InvalidInput(f"kinds must be a list drawn from {', '.join(KINDS)}", field="kinds")
    return tuple(dict.fromkeys(kinds))


def _optional_name(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 256:
        raise InvalidInput(f"{field} must be a non-empty string", field=field)
    return value
