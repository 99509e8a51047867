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
    # Standing marks (trust/): sent only when set, so a store that uses no standing
    # serialises every record exactly as before.
    slashed: bool = field(default=False, metadata={OMIT_UNSET: True})
    attested_key: str | None = field(default=None, metadata={OMIT_UNSET: True})


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
class Via(_Plain):
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
class ReadResult(_Plain):
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
    """The learned links around some concepts, up to a depth, its concepts shown as
    words (see `ReadResult`)."""

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
    """One reconstructed item: a directly retrieved record with its evidence (records a
    declared relation bundled into it, and records the walk reached) and roles."""

    ref: str
    text: str
    score: float
    source: str
    evidence: tuple[Evidence, ...] = ()
    roles: tuple[Role, ...] = ()


@dataclass(frozen=True)
class Reconstruction(_Plain):
    """The items of a reconstructive recall and the bounds it met (``omitted`` counts
    records the walk reached but did not keep; ``reached`` names limits that were hit)."""

    items: tuple[Reconstructed, ...]
    bounds: dict[str, Any]


@dataclass(frozen=True)
class Contradiction(_Plain):
    """Two memories flagged for review (never edited): ``kind`` is ``"key"`` (one
    supersession key, different values), ``"polarity"`` (near-identical claims, one
    negated) or ``"slot"`` (one claim, word for word, with a different value in one
    place)."""

    kind: str
    first: str
    second: str
    detail: str


@dataclass(frozen=True)
class Lifecycle(_Plain):
    """What a lifecycle call changed, and what it refused to touch and why."""

    changed: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)


# -- vault (vault/ room) ---------------------------------------------------------


@dataclass(frozen=True)
class IndexReport(_Plain):
    """What one `Memory.vault_index` did: files ``read`` (stat moved), notes ``added``,
    ``changed`` (content hash moved) and ``removed``; links that changed resolution
    without their note changing (``relinked``); chunks written; files ``skipped`` with
    the reason for each; and the seconds it took."""

    root: str
    notes: int
    read: int
    added: int
    changed: int
    removed: int
    relinked: int
    chunks: int
    skipped: dict[str, str]
    seconds: float


@dataclass(frozen=True)
class IndexStatus(_Plain):
    """The indexed vault: its root (None: never indexed), notes, chunks, links, dead
    links and notes per folder (``""`` is the root folder)."""

    root: str | None
    notes: int
    chunks: int
    links: int
    dead_links: int
    folders: dict[str, int]


@dataclass(frozen=True)
class NoteHit(_Plain):
    """A note a query found: ``score`` = ``relevance`` (the read's best chunk score,
    scaled to the top hit) × ``value`` (the accrued value of its chunks), with the best
    chunk's excerpt, heading and first line."""

    note: str
    title: str
    folder: str
    score: float
    relevance: float
    value: float
    excerpt: str
    heading: str | None
    line: int


@dataclass(frozen=True)
class CoverageGap(_Plain):
    """How far the vault covers a question: the top notes, ``completeness`` (share of
    the question's terms some note supports, in [0, 1]), its ``terms`` and the
    ``missing`` ones no note supports."""

    query: str
    notes: tuple[NoteHit, ...]
    completeness: float
    terms: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Gaps(_Plain):
    """Where the note network is blind: notes with no link either way (``isolated``),
    notes with one link in all (``under_linked``) and folders of at most a couple of
    notes (``thin_folders``, folder -> notes)."""

    isolated: tuple[str, ...]
    under_linked: tuple[str, ...]
    thin_folders: dict[str, int]


@dataclass(frozen=True)
class Bridge(_Plain):
    """A note in another folder, not linked either way, close in meaning: ``score`` and
    the ``reason`` (by vector, or the rare concepts both carry, in ``shared``)."""

    note: str
    title: str
    folder: str
    score: float
    reason: str
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim(_Plain):
    """A claim-like sentence of a note, with its line and the heading it sits under."""

    note: str
    text: str
    line: int
    heading: str | None


@dataclass(frozen=True)
class IdeaMethod(_Plain):
    """A named idea-generation recipe: what to do, step by step, and the tools it uses."""

    name: str
    summary: str
    steps: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class DeadLink(_Plain):
    """A link whose target no note answers to (by path, file name, title or alias)."""

    source: str
    target: str
    line: int


@dataclass(frozen=True)
class Orphan(_Plain):
    """A note no link reaches or leaves, with the note suggested to link it to (and why)."""

    note: str
    suggested: str | None
    reason: str


@dataclass(frozen=True)
class StaleNote(_Plain):
    """A note whose own date (frontmatter, never file mtime) is older than the cut."""

    note: str
    dated: str
    days: int


@dataclass(frozen=True)
class MaintenanceReport(_Plain):
    """The vault's chores: dead links, orphans (each with a suggestion), stale notes,
    near-duplicate clusters, ``health`` (share of notes in the link graph's giant
    component, 0 to 1) and archive candidates (stale and isolated)."""

    notes: int
    dead_links: tuple[DeadLink, ...]
    orphans: tuple[Orphan, ...]
    stale: tuple[StaleNote, ...]
    duplicates: tuple[tuple[str, ...], ...]
    health: float
    giant_component: int
    archive_candidates: tuple[str, ...]


@dataclass(frozen=True)
class LinkPlan(_Plain):
    """The ``## Related (suggested)`` block one note gets: its links and whether the
    note's bytes change (False: the block is already there, as planned)."""

    note: str
    links: tuple[str, ...]
    changes: bool


@dataclass(frozen=True)
class AppliedLinks(_Plain):
    """What `Memory.apply_links` planned and, unless ``dry_run``, wrote (``written``
    notes), then the re-index that picked the new links up (None: nothing written)."""

    dry_run: bool
    plans: tuple[LinkPlan, ...]
    written: int
    index: IndexReport | None = None


# -- standing (the trust room) ------------------------------------------------


@dataclass(frozen=True)
class Standing(_Plain):
    """What a memory's standing rests on, and whether it passes the influence gate.

    ``good``/``bad`` count the application's outcomes (`credit`) banked while not
    slashed; ``origins`` are the distinct canonical origins (under strict
    corroboration: the distinct verified keys) of the memory and the active memories
    restating it. ``earned`` is ``not slashed and not stale and (good > bad or
    len(origins) >= 2)``; ``basis`` says which: ``credited``, ``corroborated``,
    ``slashed``, ``stale`` (derived from a memory since superseded or slashed, and not
    re-credited since: see `Memory.stale_derived`) or ``neither``.
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
    superseded or slashed (``reasons``: ``"<ancestor id>: <what>"``). ``demoted``: a
    superseded or slashed ancestor no re-credit has cleared costs it its standing and
    half its read score (a contradiction only flags it)."""

    id: str
    reasons: tuple[str, ...]
    demoted: bool = False


# -- trust: attribution -------------------------------------


@dataclass(frozen=True)
class AttributionMismatch(_Plain):
    """An active memory whose current canonical sources differ from its receipt's."""

    id: str
    committed: tuple[str, ...]
    current: tuple[str, ...]


@dataclass(frozen=True)
class AttributionReport(_Plain):
    """What `verify_attribution` found.

    ``chain_intact`` is False from the first receipt whose link, hash or signature
    fails (``broken_at`` is its position, ``broken_reason`` why). ``mismatches`` are
    active memories whose current sources no longer match what was committed;
    ``receipts`` counts the active memories read here that carry a receipt and
    ``unreceipted`` those written without one (not an alarm); the chain itself is
    store-wide, so ``broken_at`` is a position in it.
    ``signed_by`` is the public key the signatures were checked against, if any.
    """

    chain_intact: bool
    receipts: int
    broken_at: int | None = None
    broken_reason: str | None = None
    mismatches: tuple[AttributionMismatch, ...] = ()
    unreceipted: int = 0
    signed_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.chain_intact and not self.mismatches


@dataclass(frozen=True)
class Ratified(_Plain):
    """What a `ratify` call recorded: ``stored`` is False for a duplicate."""

    id: str
    kind: str
    by_key: str
    lens: str | None
    stored: bool


@dataclass(frozen=True)
class Grade(_Plain):
    """A claim's evidence grade: ``grade`` is claimed, corroborated, verified or
    settled; ``novel`` only after an empty prior-art search; ``why`` names what
    earned each rung."""

    id: str
    grade: str
    novel: bool
    why: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case(_Plain):
    """A case the monitor raised against a source: its CUSUM statistic at breach
    and the memory ids whose outcomes drove it."""

    id: int
    source: str
    raised_at: str
    statistic: float
    evidence: tuple[str, ...]
    status: str = "open"


@dataclass(frozen=True)
class SourceStatistic(_Plain):
    """One attributed source's CUSUM state after a `monitor` call."""

    source: str
    statistic: float
    observations: int
    bad: int


@dataclass(frozen=True)
class MonitorResult(_Plain):
    """What a `monitor` call did: the credit it recorded, each attributed source's
    statistic, the cases it raised and the sources it slashed (``auto_slash`` only)."""

    credited: tuple[str, ...]
    sources: tuple[SourceStatistic, ...]
    raised: tuple[Case, ...] = ()
    slashed: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceBudget(_Plain):
    """One contributing source's irreversible budget after a spend."""

    source: str
    spent: float
    remaining: float


@dataclass(frozen=True)
class SpendResult(_Plain):
    """Whether an irreversible spend was allowed; ``binding`` names the sources that
    would have exceeded the budget (nothing is charged when any would)."""

    allowed: bool
    amount: float
    budget: float
    sources: tuple[SourceBudget, ...]
    binding: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConvergenceReport(_Plain):
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


# -- consolidation (consolidate/ room) ----------------------------------------------------


@dataclass(frozen=True)
class Consolidation(_Plain):
    """What a dream pass added to the derived layer (raw text is never rewritten):
    memories newly flagged as universal-matcher ``hubs``, near-duplicate links added,
    older state statements a newer opposite one ``superseded`` (the toggle guard), the
    ids ``archived`` under the keep-budget (`restore` brings them back), the active
    count before and after, and the ``seconds`` it took."""

    hubs: tuple[str, ...]
    duplicate_links: int
    superseded: tuple[str, ...]
    archived: tuple[str, ...]
    active_before: int
    active_after: int
    seconds: float


@dataclass(frozen=True)
class Cluster(_Plain):
    """One topic of episodic memories: its ``topic`` concept, its ``size``, and
    whether it was dense enough to be ``consolidated`` (then what that did)."""

    topic: str
    size: int
    consolidated: bool
    duplicate_links: int = 0
    superseded: tuple[str, ...] = ()
    archived: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterConsolidation(_Plain):
    """Cluster-triggered consolidation: every topic found, densest first, and the
    ``threshold`` a topic needed to be consolidated."""

    threshold: int
    clusters: tuple[Cluster, ...]
    seconds: float


@dataclass(frozen=True)
class Cohort(_Plain):
    """Value in one cohort (a tag or a time block), never per memory: how many
    memories, their mean value, and the feedback outcomes they received
    (``helpful`` > 0, ``harmful`` < 0)."""

    cohort: str
    memories: int
    mean_value: float
    ratings: int
    helpful: int
    harmful: int
    mean_outcome: float | None


@dataclass(frozen=True)
class CohortValue(_Plain):
    """Value by cohort: ``by`` is ``"tag"``, ``"month"`` or ``"week"``."""

    by: str
    cohorts: tuple[Cohort, ...]


# -- procedures and graduation (procedures/ room) ----------------------------------------


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


# -- inspection (the inspect/ room: what the dashboard and an operator look at) --


@dataclass(frozen=True)
class MemoryPage(_Plain):
    """One page of memories, newest first; ``total`` counts every match, for paging."""

    items: tuple[Record, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class FeedbackEntry(_Plain):
    """One call of `feedback` as logged: its public id, when, the outcome and the
    concepts the question was about, in the reader's words (see `ReadResult`)."""

    id: int
    at: str
    outcome: float
    query_concepts: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackCall(_Plain):
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
class FeedbackLog(_Plain):
    """One page of the feedback log, newest first; ``total`` counts every call, for paging."""

    items: tuple[FeedbackCall, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class Inspection(_Plain):
    """One record with what surrounds it: the supersession history of its key (oldest
    first), the feedback that rated it, the entities it mentions and the declared
    relations it anchors or joins."""

    record: Record
    history: tuple[Record, ...]
    feedback: tuple[FeedbackEntry, ...]
    mentions: tuple[str, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True)
class Health(_Plain):
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


# -- comforts: import ---------------------------------------------------------------


@dataclass(frozen=True)
class LineProblem(_Plain):
    """An import line that was not taken: its number (the first line is 1), the field
    at fault (None: the line as a whole), the error type and why."""

    line: int
    field: str | None
    error: str
    message: str


@dataclass(frozen=True)
class ImportReport(_Plain):
    """What an import took: counts by line kind (``record``, ``link``, ``lesson``,
    ``taught``, ``feedback``, ``entity``, ``relation``) of lines imported and of lines
    skipped because the store already held them, and every line refused."""

    imported: dict[str, int]
    skipped: dict[str, int]
    errors: tuple[LineProblem, ...] = ()
