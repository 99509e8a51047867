"""The frozen records assocmem hands to callers, and the scope they are read in.

Every result is an immutable dataclass with ``to_dict()`` giving plain JSON
types, so the CLI, the HTTP server and the MCP server serialise one shape.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["working", "episodic", "semantic", "procedural"]
KINDS: tuple[str, ...] = ("working", "episodic", "semantic", "procedural")
Status = Literal["active", "superseded", "archived"]
STATUSES: tuple[str, ...] = ("active", "superseded", "archived")


# A field whose metadata holds this is left out of ``to_dict`` while it holds its
# default: an opt-in field added later keeps the JSON of results that do not use it
# exactly as it was.
OMIT_UNSET = "omit_unset"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get(OMIT_UNSET) and getattr(value, f.name) == f.default)
        }
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class Plain:
    def to_dict(self) -> dict[str, Any]:
        """This record as plain JSON-compatible types."""
        result: dict[str, Any] = _plain(self)
        return result


@dataclass(frozen=True)
class Scope(Plain):
    """Where records are written and which records a read can see.

    A read sees its own agent's records whose ``project_id`` is its project or the
    agent's global pool (``''``), and whose ``channel`` is its channel or ``''``.
    An agent never sees another agent's records, links or graph. ``role`` is the
    reader's role: a record with an ``access`` list is readable only by those roles.
    """

    agent_id: str
    project_id: str = ""
    channel: str = ""
    role: str | None = None

    @property
    def readable_projects(self) -> tuple[str, ...]:
        """Project buckets a read sees: its own and the global pool."""
        return (self.project_id, "") if self.project_id else ("",)

    @property
    def readable_channels(self) -> tuple[str, ...]:
        """Channels a read sees: its own and the shared channel."""
        return (self.channel, "") if self.channel else ("",)


@dataclass(frozen=True)
class Record(Plain):
    """One stored memory with every field of the model (SPEC C1).

    ``concepts`` are normalised; ``concept_forms`` keeps the caller's original
    spelling of each, in the same order. ``author`` is who said or wrote it and
    ``thread`` the session or conversation it belongs to. Times are ISO 8601 UTC
    strings; ``accessed_at`` is when a read last restarted its decay clock.
    """

    id: str
    text: str
    agent_id: str
    project_id: str
    channel: str
    kind: str
    concepts: tuple[str, ...]
    concept_forms: tuple[str, ...]
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
    status: str
    protected: bool
    valence: float
    created_at: str
    author: str | None = None
    thread: str | None = None
    accessed_at: str | None = None
    task: str | None = None
    source_canonical: str | None = None
    # Standing marks (trust/): sent only when set, so a store that uses no standing
    # serialises every record exactly as before.
    slashed: bool = field(default=False, metadata={OMIT_UNSET: True})
    attested_key: str | None = field(default=None, metadata={OMIT_UNSET: True})


@dataclass(frozen=True)
class Dropped(Plain):
    """A declaration that was not kept, where it was in the request, and why."""

    item: str
    reason: str


@dataclass(frozen=True)
class Declared(Plain):
    """What a declaration registered: entity names, mention count, relation ids, and
    every malformed or clashing declaration that was dropped."""

    entities: tuple[str, ...] = ()
    mentions: int = 0
    relations: tuple[int, ...] = ()
    dropped: tuple[Dropped, ...] = ()


@dataclass(frozen=True)
class WriteResult(Plain):
    """Outcome of one write: ``stored`` is False when the write was refused.

    A refused write names its ``reason``; for a duplicate, ``id`` is the record
    that already holds the same observation. An invalid item of a batch also
    names the ``error`` type and the ``field`` at fault. ``concepts`` are
    normalised, as the memory keys them; ``concept_forms`` are the same concepts as
    the write spelled them, in the same order (what to show a person).
    """

    id: str | None
    stored: bool
    reason: str | None = None
    concepts: tuple[str, ...] = ()
    error: str | None = None
    field: str | None = None
    associations: Declared | None = None
    superseded: tuple[str, ...] = ()
    # Sent only when the write stored concepts: a refused write's JSON is unchanged.
    concept_forms: tuple[str, ...] = dataclasses.field(default=(), metadata={OMIT_UNSET: True})


@dataclass(frozen=True)
class Via(Plain):
    """One learned link a read followed: ``path`` runs from a query concept to ``concept``.

    ``weight`` is the path's strength: the link weight for one hop, the weakest
    link along the path for more. An earlier rated read that meant what this one
    means (a precedent) is named ``read:<its id>``, with its similarity weight and
    its concepts as the path. Concepts are shown as words (see `ReadResult`).
    """

    concept: str
    weight: float
    path: tuple[str, ...]


@dataclass(frozen=True)
class Item(Plain):
    """One recalled memory and why it was recalled.

    ``source`` is the arm that ranked it best; ``sources`` maps every arm that
    found it to its rank there; ``via`` lists the learned links that reached it.
    """

    record: Record
    score: float
    source: str
    sources: dict[str, int]
    via: tuple[Via, ...] = ()
    parts: dict[str, float] = field(default_factory=dict)
    expired: bool = False
    # Only a read with_status=True sets it; left out of to_dict otherwise, so a
    # default read's JSON is unchanged.
    status: ConvergenceReport | None = field(default=None, metadata={OMIT_UNSET: True})

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def text(self) -> str:
        return self.record.text

    @property
    def why(self) -> str:
        """One line on why the read returned it: the arm that brought it, the concepts
        or earlier reads it came by, and the other arms that found it too."""
        said = _WHY.get(self.source, self.source)
        if self.via and self.source in ("learned", "precedent", "hebbian_retrieval"):
            said += " " + ", ".join(dict.fromkeys(v.concept for v in self.via))
        others = [arm for arm in self.sources if arm != self.source]
        return said + (f"; also found by {', '.join(others)}" if others else "")


# What each arm says of a memory it brought, as `Item.source` names the arm.
_WHY: dict[str, str] = {
    "episodic": "the question's own text, stored",
    "lexical": "its words match the question",
    "semantic": "its meaning is near the question's",
    "concept_scoped": "it is about the question's concepts",
    "learned": "rated helpful before for questions about",
    "precedent": "rated helpful for earlier questions like this one",
    "hebbian_retrieval": "linked to the question's concepts by",
    "thread": "it sits beside a match in its thread",
    "lexical_expansion": "it shares words with the best matches",
    "semantic_expansion": "its meaning is near the best matches'",
}


@dataclass(frozen=True)
class ReadResult(Plain):
    """The items of a read, with the concepts it started from and those it added.

    ``expanded_concepts`` maps each concept reached along learned links to the
    strength of the path that reached it. In evidence mode, ``gates`` maps each
    evidence gate to the ids it dropped from what a plain read would return, so an
    empty result says why. ``arms`` says which arms ran;
    ``bounds`` says whether the fan-out cap was reached (``expansion_capped``)
    and how many reached concepts it cut at least (``expanded_concepts_cut``).
    ``id`` is the read's handle: pass it to `Memory.feedback` as ``read=`` to teach
    what this read asked (see `links.precedents`).

    Concepts are shown as words, never as the stems the memory keys them by: each
    query concept, expanded concept and `Via` step is the spelling written most among
    the stem's uses in the reader's own layers (``retrying``, not ``retri``), or the
    stem itself where none was written. A word stems back to its concept, so these
    fields can be passed back as they are (``feedback(query_concepts=...)``,
    ``graph(concepts=...)``) and name the same concepts; one field each, not a stem
    and a word side by side, so every surface shows the same words without knowing
    of stems. A record's own spellings are its ``concept_forms``.
    """

    items: tuple[Item, ...]
    query_concepts: tuple[str, ...]
    expanded_concepts: dict[str, float]
    arms: dict[str, bool] = field(default_factory=dict)
    bounds: dict[str, int] = field(default_factory=dict)
    mode: str = "recall"
    gates: dict[str, list[str]] = field(default_factory=dict)
    # Two reads that found the same are equal, whatever their handles.
    id: str = field(default="", compare=False)


@dataclass(frozen=True)
class SoftRead(Plain):
    """An attention-style read: softmax weights over keyed records and their value mixture.

    This is a blend of the records' ``value`` vectors, not a record and not an
    answer: a mixture of incompatible values means nothing on its own.
    ``weights`` pairs each record id with its weight, largest first; records
    whose key or value width differs from the query's are counted in ``skipped``.
    """

    weights: tuple[tuple[str, float], ...]
    mixture: tuple[float, ...]
    temperature: float
    skipped: int = 0


@dataclass(frozen=True)
class Stats(Plain):
    """Counts for the caller's readable scope."""

    memories: int
    concepts: int
    links: int
    feedback: int
    by_kind: dict[str, int]
    by_status: dict[str, int]


# -- trust: attribution -------------------------------------


@dataclass(frozen=True)
class ConvergenceReport(Plain):
    """Convergence-backed versus adjudicated status of a claim.

    ``status`` is ``adjudicated`` when a reproduction or audit by an identity other
    than the author ratified it, ``convergence-backed`` when independent origins
    agree (agreement, not truth), else ``unsupported``. ``low_source_diversity``:
    at least two corroborating records resolving to at most one distinct origin.
    ``lineage_grade`` caps the claim's grade at its weakest ancestor's.
    """

    id: str
    status: str
    grade: str
    lineage_grade: str
    origins: tuple[str, ...]
    corroborating: int
    low_source_diversity: bool
    adjudicated_by: tuple[str, ...] = ()
