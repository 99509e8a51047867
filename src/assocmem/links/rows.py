"""What the links parts learned, as a whole-store export reads it and an import
restores it: links, lessons, taught totals, precedents and the feedback log.

Invariant: every one is frozen and names concepts and memories as a caller does (by
name and id), never by a store's internal keys, so a row read from one store means
the same in another. ``access`` is the access class (roles; empty for everyone) of
the layer the row belongs to. Times are ISO 8601 UTC strings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LearnedLink:
    """One concept pair's link in one access class, pending counts included."""

    access: tuple[str, ...]
    a: str
    b: str
    weight: float
    count: int
    outcome_sum: float
    feedback_count: int
    updated_at: str


@dataclass(frozen=True)
class LearnedLesson:
    """What outcomes taught about one memory answering one concept."""

    access: tuple[str, ...]
    concept: str
    memory_id: str
    weight: float
    outcomes: int
    updated_at: str


@dataclass(frozen=True)
class LearnedPrecedent:
    """A rated read as precedents keep it: what it asked (concept names, its query
    vector and the embedder that made it) and what each rated memory was taught
    (``(memory id, summed outcome, outcomes)``)."""

    read_id: str
    concepts: tuple[str, ...]
    model: str
    vector: bytes
    taught: tuple[tuple[str, float, int], ...]


@dataclass(frozen=True)
class TaughtConcept:
    """How much outcomes taught with one concept in all."""

    access: tuple[str, ...]
    concept: str
    taught: float


@dataclass(frozen=True)
class LoggedFeedback:
    """One call of the feedback log: its public id, question, outcome and rated memories."""

    access: tuple[str, ...]
    public_id: int
    query_concepts: tuple[str, ...]
    outcome: float
    created_at: str
    memory_ids: tuple[str, ...]
