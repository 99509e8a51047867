"""The thinking tools over an indexed vault: retrieval and structure, never reasoning.

Invariants: every tool reads the store only (never the notes' files), in the vault's
own scope and only memories marked as vault chunks; relevance comes from the real
read pipeline; no model is called and every answer is deterministic for one store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from assocmem.errors import InvalidInput, NotFound
from assocmem.recall import pipeline, request
from assocmem.store.protocol import NoteLink, NoteRow
from assocmem.text.concepts import extract_concepts
from assocmem.types import Record, Scope
from assocmem.vault.index import MARK, Resolver, entity_name
from assocmem.vault.types import Bridge, Claim, CoverageGap, Gaps, IdeaMethod, IndexStatus, NoteHit
from assocmem.vectors.space import VectorSpace

MAX_K = 100
EXCERPT_CHARS = 280
# Chunks read per note wanted: a note has a few chunks, and the best of each note
# should survive the cut (a bench-free margin: 8 covered every sample query's notes).
CHUNKS_PER_NOTE = 8
# Terms of a question checked for support: a question of more is a document.
MAX_TERMS = 12
# A folder of at most this many notes is "thin", reported as a gap to fill.
THIN_FOLDER = 2
# Candidates a bridge search reads before filtering to other, unlinked folders.
BRIDGE_POOL = 200
BRIDGE_QUERY_CONCEPTS = 24
# A shared concept names a bridge's reason only if at most this share of the pool's
# chunks (relative to its most common concept) carry it.
RARE_SHARE = 0.5
# A sentence is claim-like only past this many words (shorter ones are labels).
CLAIM_MIN_WORDS = 6
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_CLAIM_MARKERS = re.compile(
    r"\b(is|are|was|were|causes?|means?|leads? to|increases?|decreases?|reduces?|improves?|"
    r"depends? on|requires?|always|never|must|should|will|cannot|because|therefore|so that|"
    r"more|less|faster|slower|better|worse|most|least)\b|\d",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]|[*_`>]+")


class VaultRows(Protocol):
    """What loading the vault's tables reads (the vault part), in one snapshot."""

    def snapshot(self) -> AbstractContextManager[None]: ...

    def vault_root(self, scope: Scope) -> str | None: ...

    def vault_notes(self, scope: Scope) -> list[NoteRow]: ...

    def vault_links(self, scope: Scope) -> list[NoteLink]: ...


class VaultReads(pipeline.ReadStore, VaultRows, Protocol):
    """What the vault's tools read: the vault's rows, reads over the notes' memories,
    and those memories by id."""

    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]: ...


@dataclass(frozen=True)
class Vault:
    """One snapshot of the vault's tables: its notes, links and a name resolver."""

    root: str | None
    notes: dict[str, NoteRow]
    links: list[NoteLink]

    @classmethod
    def load(cls, store: VaultRows, scope: Scope) -> Vault:
        with store.snapshot():
            root = store.vault_root(scope)
            notes = {n.path: n for n in store.vault_notes(scope)}
            return cls(root, notes, store.vault_links(scope))

    def resolver(self) -> Resolver:
        return Resolver.of((n.path, n.title, n.aliases) for n in self.notes.values())

    def note(self, name: object, field: str = "note") -> NoteRow:
        """The note ``name`` answers to (path, file name, title or alias)."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(f"{field} must name a note", field=field)
        path = self.resolver().names.get(_key(name))
        if path is None:
            raise NotFound(f"no indexed note answers to {name!r}")
        return self.notes[path]

    def neighbours(self) -> dict[str, set[str]]:
        """Each note's linked notes, either direction, itself left out."""
        near: dict[str, set[str]] = {p: set() for p in self.notes}
        for link in self.links:
            target = link.resolved
            if target and target != link.source and target in near and link.source in near:
                near[link.source].add(target)
                near[target].add(link.source)
        return near


def _key(name: str) -> str:
    return entity_name(name.strip()).casefold()


def index_status(store: VaultRows, scope: Scope) -> IndexStatus:
    """What is indexed: the root, notes, chunks, links, dead links and folder spread."""
    vault = Vault.load(store, scope)
    folders = Counter(n.folder for n in vault.notes.values())
    return IndexStatus(
        root=vault.root,
        notes=len(vault.notes),
        chunks=sum(len(n.memory_ids) for n in vault.notes.values()),
        links=len(vault.links),
        dead_links=sum(1 for k in vault.links if k.resolved is None),
        folders=dict(sorted(folders.items())),
    )


def relevant_notes(
    store: VaultReads, scope: Scope, space: VectorSpace | None, query: str, k: int = 5
) -> list[NoteHit]:
    """The ``k`` notes most relevant to ``query``: relevance × accrued value."""
    request.check_int(k, "k", 1, MAX_K)
    asked = request.read_request(
        scope, query, k=min(1000, k * CHUNKS_PER_NOTE), where=MARK, explain=False
    )
    items = pipeline.read(store, asked, space).items
    best: dict[str, tuple[float, Record]] = {}
    for item in items:
        note = str(item.record.meta.get("note", ""))
        if note and (note not in best or item.score > best[note][0]):
            best[note] = (item.score, item.record)
    top = max((score for score, _ in best.values()), default=0.0) or 1.0
    hits = [_hit(note, score / top, record) for note, (score, record) in best.items()]
    hits.sort(key=lambda h: (-h.score, h.note))
    return hits[:k]


def _hit(note: str, relevance: float, record: Record) -> NoteHit:
    # Accrued value: the chunk's importance moved by what feedback taught (valence in
    # [-1, 1]); a cold index has valence 0, so it ranks by relevance alone.
    value = max(0.0, record.value * (1.0 + record.valence))
    meta = record.meta
    return NoteHit(
        note=note,
        title=str(meta.get("title", note)),
        folder=note.rpartition("/")[0],
        score=round(relevance * value, 6),
        relevance=round(relevance, 6),
        value=round(value, 6),
        excerpt=_excerpt(record.text),
        heading=meta.get("heading"),
        line=int(meta.get("line", 1)),
    )


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1].rstrip() + "…"


def coverage_gap(
    store: VaultReads, scope: Scope, space: VectorSpace | None, query: str, k: int = 5
) -> CoverageGap:
    """The top notes for ``query``, the share of its terms some note supports, and the rest."""
    hits = relevant_notes(store, scope, space, query, k)
    terms = [form for _, form in extract_concepts(query, MAX_TERMS)]
    missing = [t for t in terms if not _supported(store, scope, t)]
    completeness = (len(terms) - len(missing)) / len(terms) if terms else 0.0
    return CoverageGap(
        query=query,
        notes=tuple(hits),
        completeness=round(completeness, 4),
        terms=tuple(terms),
        missing=tuple(missing),
    )


def _supported(store: VaultReads, scope: Scope, term: str) -> bool:
    """Whether some vault chunk carries the term as a concept (no learned-link hops)."""
    asked = request.read_request(
        scope, None, concepts=[term], k=1, hops=0, where=MARK, explain=False
    )
    return bool(pipeline.read(store, asked, None).items)


def find_gaps(store: VaultReads, scope: Scope) -> Gaps:
    """Isolated notes, notes with a single link, and folders of few notes."""
    vault = Vault.load(store, scope)
    near = vault.neighbours()
    folders = Counter(n.folder for n in vault.notes.values())
    thin = (
        {f: c for f, c in sorted(folders.items()) if c <= THIN_FOLDER} if len(folders) > 1 else {}
    )
    return Gaps(
        isolated=tuple(p for p, n in sorted(near.items()) if not n),
        under_linked=tuple(p for p, n in sorted(near.items()) if len(n) == 1),
        thin_folders=thin,
    )


def bridge_candidates(
    store: VaultReads, scope: Scope, space: VectorSpace | None, name: str, k: int = 5
) -> list[Bridge]:
    """Notes in other folders, linked neither way to ``name``, that are close in meaning."""
    request.check_int(k, "k", 1, MAX_K)
    vault = Vault.load(store, scope)
    source = vault.note(name)
    linked = vault.neighbours()[source.path]
    own = store.records(scope, list(source.memory_ids))
    if not own:
        return []
    concepts = _concepts(own)
    query = " ".join([source.title, *concepts[:BRIDGE_QUERY_CONCEPTS]])[: request.MAX_QUERY_CHARS]
    asked = request.read_request(scope, query, k=BRIDGE_POOL, where=MARK, explain=False)
    pool = pipeline.read(store, asked, space).items
    rarity = Counter(c for item in pool for c in set(item.record.concepts))
    # Rare in the candidate pool: a concept half the pool carries explains nothing.
    common = max(2, int(max(rarity.values(), default=0) * RARE_SHARE))
    best: dict[str, tuple[float, Record]] = {}
    for item in pool:
        note = str(item.record.meta.get("note", ""))
        row = vault.notes.get(note)
        if row is None or note == source.path or note in linked or row.folder == source.folder:
            continue
        if note not in best or item.score > best[note][0]:
            best[note] = (item.score, item.record)
    top = max((s for s, _ in best.values()), default=0.0) or 1.0
    bridges = [
        _bridge(vault.notes[n], s / top, r, set(concepts), rarity, common, space is not None)
        for n, (s, r) in best.items()
    ]
    bridges.sort(key=lambda b: (-b.score, b.note))
    return bridges[:k]


def _concepts(records: Iterable[Record]) -> list[str]:
    counts = Counter(c for r in records for c in r.concepts)
    return [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _bridge(
    row: NoteRow,
    score: float,
    record: Record,
    concepts: set[str],
    rarity: Counter[str],
    common: int,
    semantic: bool,
) -> Bridge:
    forms = dict(zip(record.concepts, record.concept_forms, strict=False))
    shared = [
        forms.get(c, c).casefold()
        for c in sorted(set(record.concepts) & concepts, key=lambda c: (rarity[c], c))
        if rarity[c] <= common
    ][:5]
    how = "close by meaning (vector and lexical arms)" if semantic else "close by wording"
    reason = f"{how}; both carry {', '.join(shared)}" if shared else how
    return Bridge(
        note=row.path, title=row.title, folder=row.folder, score=round(score, 6),
        reason=f"{reason}; other folder, no link either way", shared=tuple(shared),
    )  # fmt: skip


def extract_claims(store: VaultReads, scope: Scope, name: str) -> list[Claim]:
    """Claim-like sentences of a note with their lines: declarative, long enough, and
    carrying an assertion marker (a copula, a causal or comparative word, a number)."""
    vault = Vault.load(store, scope)
    note = vault.note(name)
    claims: list[Claim] = []
    for record in store.records(scope, list(note.memory_ids)):
        first = int(record.meta.get("line", 1))
        for offset, line in enumerate(record.text.split("\n")):
            if line.lstrip().startswith("#"):
                continue
            for match in _SENTENCE.finditer(line):
                sentence = _plain_text(match.group(0))
                if _claim_like(sentence):
                    claims.append(
                        Claim(note.path, sentence, first + offset, record.meta.get("heading"))
                    )
    claims.sort(key=lambda c: (c.line, c.text))
    return claims


def _plain_text(text: str) -> str:
    text = _MARKUP.sub(
        lambda m: (m.group(2) or m.group(1) or "") if m.group(0).startswith("[[") else "", text
    )
    return " ".join(text.strip(" -+\t").split())


def _claim_like(sentence: str) -> bool:
    return (
        len(sentence.split()) >= CLAIM_MIN_WORDS
        and not sentence.endswith("?")
        and bool(_CLAIM_MARKERS.search(sentence))
    )


IDEA_METHODS: tuple[IdeaMethod, ...] = (
    IdeaMethod("Hidden-Connection Bridge", "join two distant notes that share a mechanism",
               ("bridge_candidates on a note", "name the shared mechanism",
                "write the mapping or reject it"), ("bridge_candidates", "extract_claims")),
    IdeaMethod("Missing Reciprocity", "a note links out but nothing links back: ask why",
               ("find_gaps for under-linked notes", "read both ends",
                "state what the target says about the source"), ("find_gaps", "relevant_notes")),
    IdeaMethod("Negative Space", "list what a question needs that no note supports",
               ("coverage_gap on the question", "turn each missing term into a question"),
               ("coverage_gap",)),
    IdeaMethod("Claim Inversion", "take a note's strongest claim and argue the opposite",
               ("extract_claims on a note", "pick the most load-bearing claim",
                "find notes that would survive its inversion"),
               ("extract_claims", "relevant_notes")),
    IdeaMethod("Orphan Adoption", "an isolated note is an unasked question",
               ("maintenance_report for orphans", "ask which note it should answer"),
               ("maintenance_report", "relevant_notes")),
    IdeaMethod("Cross-Folder Transfer", "move a method from one domain into another",
               ("pick a procedure note", "bridge_candidates in other folders",
                "rewrite the method in the target's terms"), ("bridge_candidates",)),
    IdeaMethod("Stale Revisit", "an old note read with today's knowledge",
               ("maintenance_report for stale notes", "relevant_notes on its title",
                "list what changed since"), ("maintenance_report", "relevant_notes")),
    IdeaMethod("Duplicate Merge", "two near-duplicates hide a distinction or a merge",
               ("maintenance_report for duplicate clusters", "diff their claims"),
               ("maintenance_report", "extract_claims")),
    IdeaMethod("Thin-Folder Expansion", "a folder of one or two notes is a frontier",
               ("find_gaps for thin folders", "coverage_gap on the folder's theme"),
               ("find_gaps", "coverage_gap")),
    IdeaMethod("Constraint Flip", "remove a constraint a claim depends on",
               ("extract_claims", "find the 'because' or 'requires'", "imagine it gone"),
               ("extract_claims",)),
)  # fmt: skip


def idea_methods() -> list[IdeaMethod]:
    """The named idea-generation recipes, as data (the agent runs them)."""
    return list(IDEA_METHODS)
