"""What an operator and the dashboard look at: pages of memories, the feedback log, one
record whole, the store's health."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.graph.types import Relation
from assocmem.links.types import FeedbackEntry
from assocmem.types import Plain, Record


@dataclass(frozen=True)
class MemoryPage(Plain):
    """One page of memories, newest first; ``total`` counts every match, for paging."""

    items: tuple[Record, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class Inspection(Plain):
    """One record with what surrounds it: the supersession history of its key (oldest
    first), the feedback that rated it, the entities it mentions and the declared
    relations it anchors or joins."""

    record: Record
    history: tuple[Record, ...]
    feedback: tuple[FeedbackEntry, ...]
    mentions: tuple[str, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True)
class Health(Plain):
    """The state of the store as the caller sees it: counts (as `stats`), sizes on
    disk, the embedder and its vectors, and the latest feedback. The sizes are the
    whole store's, so a served caller without the operator role gets None for them
    (another tenant's writes would move them)."""

    backend: str
    memories: int
    by_kind: dict[str, int]
    by_status: dict[str, int]
    concepts: int
    links: int
    feedback: int
    store_bytes: int | None
    wal_bytes: int | None
    embedder: str | None
    vectors: int
    pending_vectors: int
    recent_feedback: tuple[FeedbackEntry, ...]
