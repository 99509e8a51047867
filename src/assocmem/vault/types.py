"""What the vault's tools report: indexing, notes found, gaps, bridges, claims and
maintenance."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.types import Plain


@dataclass(frozen=True)
class IndexReport(Plain):
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
class IndexStatus(Plain):
    """The indexed vault: its root (None: never indexed), notes, chunks, links, dead
    links and notes per folder (``""`` is the root folder)."""

    root: str | None
    notes: int
    chunks: int
    links: int
    dead_links: int
    folders: dict[str, int]


@dataclass(frozen=True)
class NoteHit(Plain):
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
class CoverageGap(Plain):
    """How far the vault covers a question: the top notes, ``completeness`` (share of
    the question's terms some note supports, in [0, 1]), its ``terms`` and the
    ``missing`` ones no note supports."""

    query: str
    notes: tuple[NoteHit, ...]
    completeness: float
    terms: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Gaps(Plain):
    """Where the note network is blind: notes with no link either way (``isolated``),
    notes with one link in all (``under_linked``) and folders of at most a couple of
    notes (``thin_folders``, folder -> notes)."""

    isolated: tuple[str, ...]
    under_linked: tuple[str, ...]
    thin_folders: dict[str, int]


@dataclass(frozen=True)
class Bridge(Plain):
    """A note in another folder, not linked either way, close in meaning: ``score`` and
    the ``reason`` (by vector, or the rare concepts both carry, in ``shared``)."""

    note: str
    title: str
    folder: str
    score: float
    reason: str
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim(Plain):
    """A claim-like sentence of a note, with its line and the heading it sits under."""

    note: str
    text: str
    line: int
    heading: str | None


@dataclass(frozen=True)
class IdeaMethod(Plain):
    """A named idea-generation recipe: what to do, step by step, and the tools it uses."""

    name: str
    summary: str
    steps: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class DeadLink(Plain):
    """A link whose target no note answers to (by path, file name, title or alias)."""

    source: str
    target: str
    line: int


@dataclass(frozen=True)
class Orphan(Plain):
    """A note no link reaches or leaves, with the note suggested to link it to (and why)."""

    note: str
    suggested: str | None
    reason: str


@dataclass(frozen=True)
class StaleNote(Plain):
    """A note whose own date (frontmatter, never file mtime) is older than the cut."""

    note: str
    dated: str
    days: int


@dataclass(frozen=True)
class MaintenanceReport(Plain):
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
class LinkPlan(Plain):
    """The ``## Related (suggested)`` block one note gets: its links and whether the
    note's bytes change (False: the block is already there, as planned)."""

    note: str
    links: tuple[str, ...]
    changes: bool


@dataclass(frozen=True)
class AppliedLinks(Plain):
    """What `Memory.apply_links` planned and, unless ``dry_run``, wrote (``written``
    notes), then the re-index that picked the new links up (None: nothing written)."""

    dry_run: bool
    plans: tuple[LinkPlan, ...]
    written: int
    index: IndexReport | None = None
