"""What the learned links and the feedback log report: the link graph around concepts, what
a rating taught, and the log read back."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.types import Plain


@dataclass(frozen=True)
class Edge(Plain):
    """A learned link between two concepts.

    ``count`` is how often they were written together; ``weight`` starts at that
    count and moves with feedback; ``valence`` is the mean feedback outcome it
    received (0 when never rated).
    """

    source: str
    target: str
    weight: float
    count: int
    valence: float
    updated_at: str


@dataclass(frozen=True)
class Graph(Plain):
    """The learned links around some concepts, up to a depth, its concepts shown as
    words (see `ReadResult`)."""

    concepts: tuple[str, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False


@dataclass(frozen=True)
class FeedbackResult(Plain):
    """What one feedback call changed: links moved, lessons taught (see `lessons`)
    and memories re-valenced."""

    id: int
    links_updated: int
    memories_updated: int
    lessons_updated: int = 0


@dataclass(frozen=True)
class FeedbackEntry(Plain):
    """One call of `feedback` as logged: its public id, when, the outcome and the
    concepts the question was about, in the reader's words (see `ReadResult`)."""

    id: int
    at: str
    outcome: float
    query_concepts: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackCall(Plain):
    """One call of `feedback` as the log keeps it: its public id, when, who (the scope
    it was given in), the outcome, the concepts the question was about (in the reader's
    words, see `ReadResult`), and the rated memories the reader may still read (a
    forgotten memory leaves the log)."""

    id: int
    at: str
    agent_id: str
    project_id: str
    channel: str
    outcome: float
    query_concepts: tuple[str, ...]
    memory_ids: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackLog(Plain):
    """One page of the feedback log, newest first; ``total`` counts every call, for paging."""

    items: tuple[FeedbackCall, ...]
    total: int
    limit: int
    offset: int
