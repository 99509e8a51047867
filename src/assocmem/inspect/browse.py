"""Browsing memories: pages newest first, filtered by kind, tag, status, source and
the `where` grammar.

Invariant: a page holds only what the caller's scope may read (every status unless
one is asked for, every kind, working memory of every task included), and ``total``
counts the same rows the pages are cut from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from assocmem.errors import InvalidInput, UnknownMemory
from assocmem.inspect.types import MemoryPage
from assocmem.links import wording
from assocmem.links.types import FeedbackCall, FeedbackLog
from assocmem.recall import filters, request
from assocmem.store import Store, View
from assocmem.trust import standing
from assocmem.types import KINDS, STATUSES, Record, Scope
from assocmem.write import validate

MAX_PAGE = 500
MAX_OFFSET = 2**62


class Paged(Protocol):
    """What a page of memories reads: the page's seqs (the inspection part), whether a
    field names anything (lifecycle's select), the records and their trust marks."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def memory_page(
        self, view: View, source: str | None, limit: int, offset: int
    ) -> tuple[list[int], int]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...

    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]: ...


class FeedbackPaged(Store, Protocol):
    """What a page of the feedback log reads: the rated memory, the page (the feedback
    part) and how the reader's layers spell its concepts."""

    def feedback_page(
        self, scope: Scope, limit: int, offset: int, seq: int | None = None
    ) -> tuple[list[FeedbackCall], int]: ...

    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]: ...


def page(
    store: Paged,
    scope: Scope,
    *,
    limit: int,
    offset: int,
    kind: str | None,
    tag: str | None,
    status: str | None,
    source: str | None,
    where: Mapping[str, Any] | None,
) -> MemoryPage:
    """One page of the memories ``scope`` reads, newest created first, with the total."""
    request.check_int(limit, "limit", 1, MAX_PAGE)
    request.check_int(offset, "offset", 0, MAX_OFFSET)
    conditions = filters.parse_where(where)
    if tag is not None:
        conditions += filters.parse_where({"tags": {"$contains": _text(tag, "tag")}})
    statuses = STATUSES if status is None else (validate.check_choice(status, STATUSES, "status"),)
    view = View(
        scope,
        statuses=statuses,
        kinds=KINDS if kind is None else (validate.check_choice(kind, KINDS, "kind"),),
        conditions=conditions,
    )
    filters.check_fields(store, view)
    wanted_source = _text(source, "source") if source is not None else None
    seqs, total = store.memory_page(view, wanted_source, limit, offset)
    found = standing.marked(store, store.records_by_seq(seqs))
    return MemoryPage(
        items=tuple(found[s] for s in seqs if s in found), total=total, limit=limit, offset=offset
    )


def feedback_page(
    store: FeedbackPaged, scope: Scope, *, limit: int, offset: int, memory_id: str | None
) -> FeedbackLog:
    """One page of the feedback calls ``scope`` reads, newest first, with the total."""
    request.check_int(limit, "limit", 1, MAX_PAGE)
    request.check_int(offset, "offset", 0, MAX_OFFSET)
    with store.snapshot():
        seq = None
        if memory_id is not None:
            wanted = _text(memory_id, "memory_id")
            seq = store.visible_seqs(scope, [wanted], statuses=STATUSES).get(wanted)
            if seq is None:
                raise UnknownMemory(f"no memory {wanted!r} is readable here", record_id=wanted)
        calls, total = store.feedback_page(scope, limit, offset, seq)
        said = wording.shown(store, scope, {}, {c for call in calls for c in call.query_concepts})
    shown = [
        replace(call, query_concepts=tuple(said[c] for c in call.query_concepts)) for call in calls
    ]
    return FeedbackLog(items=tuple(shown), total=total, limit=limit, offset=offset)


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string", field=field)
    return value
