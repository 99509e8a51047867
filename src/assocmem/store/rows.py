"""The shapes the store hands the engine: a view, and rows read without a whole record.

Invariant: every one is frozen, and holds only what the query that made it read.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assocmem.schema import Condition
from assocmem.types import Scope

if TYPE_CHECKING:
    import numpy as np

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Two characters for each 10 bits: a ULID is 13 look-ups instead of 26 (a batch makes many).
_CROCKFORD_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]


def new_id() -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, 26 Crockford characters.

    Time-ordered, so ids sort roughly by arrival, yet they reveal nothing about
    how many records other agents wrote (sequential integers would).
    """
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join([_CROCKFORD_PAIRS[(value >> shift) & 1023] for shift in range(120, -1, -10)])


# A memory's concept row holds the caller's spelling only where it differs from the
# concept's name; the empty string, which takes no bytes on disk, stands for the name
# itself, as most short words are written. A spelling is never empty, and a refold
# writes the old name out before it renames a concept.
SAME_AS_NAME = ""


def stored_form(name: str, form: str) -> str:
    """What a concept row holds for a memory that wrote concept ``name`` as ``form``."""
    return SAME_AS_NAME if form == name else form


def read_form(name: str, stored: str) -> str:
    """The spelling a concept row of concept ``name`` holding ``stored`` stands for."""
    return stored or name


# Public integer ids are drawn from [1, 2^53 - 1]: exact as a JSON number anywhere.
PUBLIC_ID_MAX = 2**53 - 1


def new_public_id() -> int:
    """A random id for a feedback call, entity or relation as a caller sees it.

    The row's integer key counts every agent's rows; this one counts nothing, so
    no caller learns from it how much anyone else did.
    """
    return secrets.randbelow(PUBLIC_ID_MAX) + 1


@dataclass(frozen=True)
class View:
    """What a read may see: its scope's layers, these statuses and kinds, these conditions.

    Every read query of the store applies the whole view in SQL before any
    ranking, so no arm ever scores a record the reader may not see.
    """

    scope: Scope
    statuses: tuple[str, ...] = ("active",)
    kinds: tuple[str, ...] | None = None
    conditions: tuple[Condition, ...] = ()
    # Working memory belongs to a task: a view sees the working memory of ``task``
    # only, and none when ``task`` is None unless ``kinds`` names "working".
    task: str | None = None


@dataclass(frozen=True)
class VectorRows:
    """Stored vectors as of change number ``last``: row i is memory ``seqs[i]`` in
    layer ``layers[i]``; ``removed`` are memories whose vector is gone (a catch-up's
    deletions: nothing is left of them but their number)."""

    seqs: list[int]
    layers: list[int]
    matrix: np.ndarray
    last: int = 0
    removed: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class RankFields:
    """The fields ranking folds into a score (the text for its question form),
    read without the rest of the record."""

    id: str
    kind: str
    value: float
    valence: float
    observed_at: str
    accessed_at: str | None
    text: str
    derived: bool = False  # has derived_from parents (`trust.stale` may demote it)


@dataclass(frozen=True)
class EntityRow:
    """A declared entity with every alias it answers to (its name included).

    ``id`` is the internal key (creation order, for the engine's joins and ties);
    ``public_id`` is the random id a caller sees.
    """

    id: int
    scope_id: int
    name: str
    declared_by: str
    created_at: str
    aliases: tuple[str, ...]
    public_id: int


@dataclass(frozen=True)
class RelationRow:
    """A declared relation as stored: endpoints are entity ids or memory seqs.

    ``id`` is the internal key (creation order: "the most recent relation" is the
    highest); ``public_id`` is the random id a caller sees (0: not read).
    """

    id: int
    subject_kind: str
    subject_id: int
    predicate: str
    object_kind: str
    object_id: int
    anchor_seq: int
    declared_by: str
    declared_at: str
    public_id: int = 0


@dataclass(frozen=True)
class LinkRow:
    """One learned link summed over the scope layers a reader can see."""

    a: int
    b: int
    weight: float
    count: int
    outcome_sum: float
    feedback_count: int
    updated_at: str


@dataclass(frozen=True)
class ConceptLessons:
    """What outcomes taught about one concept, summed over a reader's layers.

    ``taught``: the helpful outcomes of feedback calls whose query carried it;
    ``spread``: how many memories its lessons point at; ``strongest``: ``(memory
    seq, lesson weight)`` of the heaviest of them, heaviest first.
    """

    taught: float
    spread: int
    strongest: tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class AskedRead:
    """What one read asked, kept so feedback can name it: its id (the read's
    handle), its concept names, and its query vector (unit float32 bytes) with the
    embedder that made it, where one was attached."""

    id: str
    concepts: tuple[str, ...]
    model: str | None = None
    vector: bytes | None = None


# -- vault (vault/ room) ---------------------------------------------------------


@dataclass(frozen=True)
class NoteRow:
    """One indexed note of a vault, as its table keeps it (paths relative, ``/``-joined)."""

    path: str
    hash: str
    size: int
    mtime_ns: int
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    dated: str | None
    folder: str
    memory_ids: tuple[str, ...]
    words: int


@dataclass(frozen=True)
class NoteLink:
    """A link one note makes: the raw target, the note it resolves to (None: dead), its line."""

    source: str
    target: str
    resolved: str | None
    line: int
