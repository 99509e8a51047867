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


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class _Plain:
    def to_dict(self) -> dict[str, Any]:
        """This record as plain JSON-compatible types."""
        result: dict[str, Any] = _plain(self)
        return result


@dataclass(frozen=True)
class Scope(_Plain):
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
class Record(_Plain):
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
    # i19 standing marks: sent only when set, so a store that uses no standing
    # serialises every record exactly as before.
    slashed: bool = False
    attested_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """This record as plain JSON-compatible types (standing marks only when set)."""
        result: dict[str, Any] = _plain(self)
        for name, unset in (("slashed", False), ("attested_key", None)):
            if result[name] == unset:
                del result[name]
        return result


@dataclass(frozen=True)
class Dropped(_Plain):
    """A declaration that was not kept, where it was in the request, and why."""

    item: str
    reason: str


@dataclass(frozen=True)
class Declared(_Plain):
    """What a declaration registered: entity names, mention count, relation ids, and
    every malformed or clashing declaration that was dropped."""

    entities: tuple[str, ...] = ()
    mentions: int = 0
    relations: tuple[int, ...] = ()
    dropped: tuple[Dropped, ...] = ()


@dataclass(frozen=True)
class WriteResult(_Plain):
    """Outcome of one write: ``stored`` is False when the write was refused.

    A refused write names its ``reason``; for a duplicate, ``id`` is the record
    that already holds the same observation. An invalid item of a batch also
    names the ``error`` type and the ``field`` at fault.
    """

    id: str | None
    stored: bool
    reason: str | None = None
    concepts: tuple[str, ...] = ()
    error: str | None = None
    field: str | None = None
    associations: Declared | None = None
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Via(_Plain):
    """One learned link a read followed: ``path`` runs from a query concept to ``concept``.

    ``weight`` is the path's strength: the link weight for one hop, the weakest
    link along the path for more.
    """

    concept: str
    weight: float
    path: tuple[str, ...]


@dataclass(frozen=True)
class Item(_Plain):
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

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def text(self) -> str:
        return self.record.text


@dataclass(frozen=True)
class ReadResult(_Plain):
    """The items of a read, with the concepts it started from and those it added.

    ``expanded_concepts`` maps each concept reached along learned links to the
    strength of the path that reached it. In evidence mode, ``gates`` maps each
    evidence gate to the ids it dropped from what a plain read would return, so an
    empty result says why. ``arms`` says which arms ran;
    ``bounds`` says whether the fan-out cap was reached (``expansion_capped``)
    and how many reached concepts it cut at least (``expanded_concepts_cut``).
    """

    items: tuple[Item, ...]
    query_concepts: tuple[str, ...]
    expanded_concepts: dict[str, float]
    arms: dict[str, bool] = field(default_factory=dict)
    bounds: dict[str, int] = field(default_factory=dict)
    mode: str = "recall"
    gates: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge(_Plain):
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
class Graph(_Plain):
    """The learned links around some concepts, up to a depth."""

    concepts: tuple[str, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False


@dataclass(frozen=True)
class FeedbackResult(_Plain):
    """What one feedback call changed: links moved, lessons taught (see `lessons`)
    and memories re-valenced."""

    id: int
    links_updated: int
    memories_updated: int
    lessons_updated: int = 0


@dataclass(frozen=True)
class SoftRead(_Plain):
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
class Stats(_Plain):
    """Counts for the caller's readable scope."""

    memories: int
    concepts: int
    links: int
    feedback: int
    by_kind: dict[str, int]
    by_status: dict[str, int]


@dataclass(frozen=True)
class Relation(_Plain):
    """A declared relation. Endpoints read as an entity's canonical name or ``mem:<id>``;
    ``anchor`` is the record that evidences it (``mem:<id>``) or None."""

    id: int
    subject: str
    predicate: str
    object: str
    declared_by: str
    declared_at: str
    anchor: str | None = None


@dataclass(frozen=True)
class Entity(_Plain):
    """An entity in a traversal: how many hops from the start, through which relation,
    and the readable records that mention it (``refs_cut`` counts those left out)."""

    id: int
    name: str
    aliases: tuple[str, ...]
    declared_by: str
    hops: int
    via: int | None
    refs: tuple[str, ...]
    refs_cut: int = 0


@dataclass(frozen=True)
class Traversal(_Plain):
    """An entity's neighbourhood: entities in walk order, the relations between them,
    and what the bounds cut."""

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    cut: dict[str, int]


@dataclass(frozen=True)
class Evidence(_Plain):
    """A record a reconstruction attached to an item: reached by a relation walk (``hops``
    ≥ 1) or bundled by a record-to-record relation (``hops`` None)."""

    ref: str
    text: str
    why: str
    hops: int | None = None
    independence_reason: str | None = None


@dataclass(frozen=True)
class Role(_Plain):
    """A role-vocabulary relation between two records, subject first as declared."""

    role: str
    subject: str
    object: str
    relation: int


@dataclass(frozen=True)
class Reconstructed(_Plain):
    """One reconstructed item: a directly retrieved record with its evidence and roles."""

    ref: str
    text: str
    score: float
    source: str
    evidence: tuple[Evidence, ...] = ()
    roles: tuple[Role, ...] = ()
    bundled_into: str | None = None


@dataclass(frozen=True)
class Reconstruction(_Plain):
    """The items of a reconstructive recall and the bounds it met (``omitted`` counts
    records the walk reached but did not keep; ``reached`` names limits that were hit)."""

    items: tuple[Reconstructed, ...]
    bounds: dict[str, Any]


@dataclass(frozen=True)
class Contradiction(_Plain):
    """Two memories flagged for review (never edited): ``kind`` is ``"key"`` (one
    supersession key, different values) or ``"polarity"`` (near-identical claims, one
    negated)."""

    kind: str
    first: str
    second: str
    detail: str


@dataclass(frozen=True)
class Lifecycle(_Plain):
    """What a lifecycle call changed, and what it refused to touch and why."""

    changed: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)


# -- standing (i19: the trust room) ------------------------------------------------


@dataclass(frozen=True)
class Standing(_Plain):
    """What a memory's standing rests on, and whether it passes the influence gate.

    ``good``/``bad`` count the application's outcomes (`credit`) banked while not
    slashed; ``origins`` are the distinct canonical origins (under strict
    corroboration: the distinct verified keys) of the memory and the active memories
    restating it. ``earned`` is ``not slashed and (good > bad or len(origins) >= 2)``;
    ``basis`` says which: ``credited``, ``corroborated``, ``slashed`` or ``neither``.
    ``pre_slash`` is the ``(good, bad)`` a restore brings back.
    """

    id: str
    good: int
    bad: int
    source: str | None
    taint: tuple[str, ...]
    origins: tuple[str, ...]
    slashed: bool
    earned: bool
    basis: str
    pre_slash: tuple[int, int] | None = None
    attested_key: str | None = None


@dataclass(frozen=True)
class GateReport(_Plain):
    """The influence gate's live cost on a store: ``would_block_frac`` of its
    ``active`` memories would be filtered by ``read(..., influence_only=True)``;
    ``breakdown`` counts each basis (credited, corroborated, slashed, neither)."""

    active: int
    would_block: int
    would_block_frac: float
    breakdown: dict[str, int]
    strict: bool
    advice: str


@dataclass(frozen=True)
class StaleDerived(_Plain):
    """A memory whose derived_from ancestry holds a memory since contradicted,
    superseded or slashed (``reasons``: ``"<ancestor id>: <what>"``). Flagged only."""

    id: str
    reasons: tuple[str, ...]


# -- i18 procedures: procedures and graduation ----------------------------------------


@dataclass(frozen=True)
class Procedure(_Plain):
    """One version of a procedure and where it stands at the promotion gate.

    ``status`` is ``candidate`` (proposed; not readable as a procedure), ``rejected``
    (the gate refused it: ``reason``), ``promoted`` (``record_id`` is its
    ``procedural`` memory), ``superseded`` (a later version replaced it) or
    ``retired``. ``supporting`` are the successful episodes its preconditions cover,
    ``counterexamples`` the failed ones they cover, and ``check_results`` each check
    case with the response the procedure gave.
    """

    id: str
    name: str | None
    version: int
    status: str
    steps: tuple[Any, ...]
    preconditions: dict[str, Any]
    checks: tuple[dict[str, Any], ...]
    episodes: tuple[str, ...]
    supporting: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    check_results: tuple[dict[str, Any], ...] = ()
    reason: str | None = None
    record_id: str | None = None
    supersedes: str | None = None


@dataclass(frozen=True)
class Graduated(_Plain):
    """A memory whose kind moved, and the evidence that moved it (``basis``: helpful
    feedback, a good credit, or corroborating origins)."""

    id: str
    from_kind: str
    to_kind: str
    basis: tuple[str, ...]
    evidence: dict[str, Any]


@dataclass(frozen=True)
class GraduationReport(_Plain):
    """What a graduation pass looked at and what moved."""

    considered: int
    graduated: tuple[Graduated, ...]
