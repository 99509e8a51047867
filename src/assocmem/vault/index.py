"""Incremental indexing of a vault: its notes' chunks become memories, its links the graph.

Invariants: a re-index reads only files whose stat moved and parses only those whose
content hash changed; a note that changed or went has its old memories forgotten
(taking the relations they anchor with them) before its new ones are written; each
batch of notes commits with its memories, declarations and rows together, so an
interrupted index leaves every note either as it was or as it is now; a note found
but not readable or indexable now is skipped with its reason, never failing the rest,
and one indexed before stays as it was. Vault memories live in the vault's own scope
(`vault_scope`) and carry ``meta.vault``, so an ordinary read never sees them and
vault reads see nothing else.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

from assocmem.errors import InvalidInput
from assocmem.graph import declare, traverse
from assocmem.schema import NewMemory
from assocmem.store import Store, View
from assocmem.store.protocol import NoteLink, NoteRow
from assocmem.types import STATUSES, Scope
from assocmem.vault import notes
from assocmem.vault.notes import Note
from assocmem.vault.types import IndexReport
from assocmem.vectors.space import VectorSpace
from assocmem.write import validate

if TYPE_CHECKING:
    pass

VAULT_CHANNEL = "vault"
LINK_PREDICATE = "links_to"
# Notes per transaction: large enough to amortise a commit, small enough that a
# 10,000-note index does not hold the write lock for its whole run.
BATCH_NOTES = 200
# Every vault memory's meta holds this key, so a vault read can filter on it.
MARK = {"meta.vault": True}


class Indexing(declare.DeclarationStore, Store, Protocol):
    """What indexing writes and reads: the vault's rows (the vault part), the notes'
    memories (core), their entities and relations (the graph part, and the anchor's
    access class it declares in)."""

    def vault_root(self, scope: Scope) -> str | None: ...

    def vault_notes(self, scope: Scope) -> list[NoteRow]: ...

    def vault_links(self, scope: Scope) -> list[NoteLink]: ...

    def save_vault(
        self,
        scope: Scope,
        root: str,
        notes: Sequence[NoteRow],
        links: Mapping[str, Sequence[NoteLink]],
        removed: Sequence[str],
    ) -> None: ...

    def delete_entities(self, scope: Scope, entity_ids: Sequence[int]) -> int: ...


def vault_scope(scope: Scope) -> Scope:
    """The scope a memory's vault lives in: the same agent and project, a channel of its own."""
    channel = f"{scope.channel}/{VAULT_CHANNEL}" if scope.channel else VAULT_CHANNEL
    return Scope(scope.agent_id, scope.project_id, channel, scope.role)


def entity_name(path: str) -> str:
    """The graph entity of a note: its path without ``.md``."""
    return path[:-3] if path.lower().endswith(".md") else path


@dataclass(frozen=True)
class Resolver:
    """Note names (path, file stem, title, aliases; casefolded) to the note path they name."""

    names: Mapping[str, str]

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, Sequence[str]]]) -> Resolver:
        """From ``(path, title, aliases)``: a path wins over a stem, a stem over a title
        or alias, and the first path in order wins a tie (as the rows are sorted)."""
        ranked: dict[str, tuple[int, str]] = {}
        for path, title, aliases in sorted(rows):
            keys = [(0, entity_name(path)), (1, PurePosixPath(path).stem), (2, title)]
            for rank, key in keys + [(2, a) for a in aliases]:
                folded = key.casefold()
                if folded and (folded not in ranked or ranked[folded][0] > rank):
                    ranked[folded] = (rank, path)
        return cls({key: path for key, (_, path) in ranked.items()})

    def resolve(self, source: str, link: notes.Link | NoteLink) -> str | None:
        target = unquote(link.target).strip()
        # A target ending in .md (every Markdown link's does) is tried relative to its
        # note first; the stored NoteLink then resolves exactly as the parsed Link did.
        if target.lower().endswith(".md"):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
            found = self.names.get(entity_name(joined).casefold())
            if found is not None:
                return found
        return self.names.get(entity_name(target).casefold())


def index(
    store: Indexing,
    scope: Scope,
    root: Path,
    space: VectorSpace | None = None,
    max_bytes: int = notes.MAX_NOTE_BYTES,
) -> IndexReport:
    """Index the vault at ``root`` (resolved) into ``scope`` (a `vault_scope`)."""
    started = time.perf_counter()
    known = {row.path: row for row in store.vault_notes(scope)}
    # Another folder than last time: every old note goes, every new one is read.
    known_root_changed = bool(known) and store.vault_root(scope) != str(root)
    rows = {} if known_root_changed else known
    with notes.opened(root) as folder:
        walked = notes.walk(folder, max_bytes)
        reads = _read(folder, root, walked.found, rows, max_bytes)
    # A note the walk found but that could not be read or indexed now stays as the
    # index had it: a save or a swap mid-index must not cost it its memories.
    kept = reads.skipped.keys() & rows.keys()
    present = {f.path for f in walked.found if f.path not in reads.skipped} | kept
    removed = sorted(p for p in known if known_root_changed or p not in present)
    removed_set = set(removed)
    changed = reads.changed
    rewritten = {f.path for f, _, _, _ in changed}
    resolver = Resolver.of(
        [(r.path, r.title, r.aliases) for p, r in known.items()
         if p not in removed_set and p not in rewritten]
        + [(n.path, n.title, n.aliases) for _, _, n, _ in changed]
    )  # fmt: skip
    before = Resolver.of((r.path, r.title, r.aliases) for r in known.values())
    _remove(store, scope, [known[p] for p in removed], str(root))
    chunks = _write(store, scope, space, str(root), changed, resolver, known)
    # Untouched notes' links resolve differently only if some name came or went.
    relinked = (
        _relink(store, scope, resolver, str(root), rewritten, known)
        if resolver.names != before.names
        else 0
    )
    store.save_vault(scope, str(root), reads.touched, {}, [])  # also remembers the root
    added = sum(1 for f, _, _, _ in changed if f.path not in rows)
    return IndexReport(
        root=str(root),
        notes=len(present),
        read=reads.read,
        added=added,
        changed=len(changed) - added,
        removed=len(removed),
        relinked=relinked,
        chunks=chunks,
        skipped=dict(sorted((walked.skipped | reads.skipped).items())),
        seconds=round(time.perf_counter() - started, 4),
    )


# A note to write: as found (with the stat it was read at), its hash, parsed, and
# the memories its chunks become.
Changed = tuple[notes.Found, str, Note, list[NewMemory]]


@dataclass
class _Reads:
    """What reading the found notes gave: notes to write, rows whose stat alone moved,
    how many files were read, and the notes skipped with the reason for each."""

    changed: list[Changed] = field(default_factory=list)
    touched: list[NoteRow] = field(default_factory=list)
    read: int = 0
    skipped: dict[str, str] = field(default_factory=dict)


def _read(
    folder: int,
    root: Path,
    found: Sequence[notes.Found],
    rows: Mapping[str, NoteRow],
    max_bytes: int,
) -> _Reads:
    """Read the notes whose stat moved since ``rows``; parse those whose hash moved."""
    reads = _Reads()
    for entry in found:
        row = rows.get(entry.path)
        if row is not None and (row.size, row.mtime_ns) == (entry.size, entry.mtime_ns):
            continue
        try:
            got = notes.read(folder, root, entry, max_bytes)
        except notes.Unreadable as exc:
            reads.skipped[entry.path] = exc.reason
            continue
        reads.read += 1
        entry = replace(entry, size=got.size, mtime_ns=got.mtime_ns)
        digest = notes.content_hash(got.data)
        if row is not None and row.hash == digest:
            reads.touched.append(replace(row, size=entry.size, mtime_ns=entry.mtime_ns))
            continue
        parsed = notes.parse(entry.path, got.data)
        try:
            memories = _memories(parsed)
        except InvalidInput as exc:  # validated here, so one bad note never fails a batch
            reads.skipped[entry.path] = f"not indexable: {exc.message}"
            continue
        reads.changed.append((entry, digest, parsed, memories))
    return reads


def _seqs(store: Indexing, scope: Scope, ids: Sequence[str]) -> list[int]:
    return list(store.visible_seqs(scope, list(ids), statuses=STATUSES).values())


def _remove(store: Indexing, scope: Scope, rows: Sequence[NoteRow], root: str) -> None:
    """Forget the removed notes' memories and delete their entities (and relations)."""
    view = View(scope)
    for start in range(0, len(rows), BATCH_NOTES):
        batch = rows[start : start + BATCH_NOTES]
        with store.transaction():
            store.delete_memories(
                scope, _seqs(store, scope, [i for r in batch for i in r.memory_ids])
            )
            for row in batch:
                found = traverse.entities_named(store, view, entity_name(row.path))
                store.delete_entities(scope, [e.id for e in found])
            store.save_vault(scope, root, [], {}, [r.path for r in batch])


def _write(
    store: Indexing,
    scope: Scope,
    space: VectorSpace | None,
    root: str,
    changed: Sequence[Changed],
    resolver: Resolver,
    known: Mapping[str, NoteRow],
) -> int:
    """Write the changed notes in batches (``known``: the rows before); how many chunks
    were written."""
    written = 0
    for start in range(0, len(changed), BATCH_NOTES):
        batch = changed[start : start + BATCH_NOTES]
        flat = [m for _, _, _, ms in batch for m in ms]
        vectors = space.embed([(m.text, m.author) for m in flat]) if space and flat else None
        with store.transaction():
            old = [i for _, _, n, _ in batch if n.path in known for i in known[n.path].memory_ids]
            store.delete_memories(scope, _seqs(store, scope, old))
            results = store.write(scope, flat, vectors) if flat else []
            ids = iter(r.id for r in results)
            per_note = [
                tuple(i for i in (next(ids) for _ in ms) if i is not None) for *_, ms in batch
            ]
            # Each note's first chunk anchors its relations: one lookup for the batch.
            anchors = store.visible_seqs(scope, [n[0] for n in per_note if n], statuses=STATUSES)
            rows, links = [], {}
            for (found, digest, note, _), note_ids in zip(batch, per_note, strict=True):
                note_links = _links(note, resolver)
                anchor = anchors.get(note_ids[0]) if note_ids else None
                _declare(store, scope, note, anchor, note_links)
                rows.append(_row(found, digest, note, note_ids))
                links[note.path] = note_links
            store.save_vault(scope, root, rows, links, [])
        written += len(flat)
    return written


def _memories(note: Note) -> list[NewMemory]:
    return [
        validate.new_memory(
            {
                "text": chunk.text,
                "kind": "semantic",
                "tags": list(note.tags[: validate.MAX_TAGS]),
                "source": note.path,
                "meta": {
                    "vault": True,
                    "note": note.path,
                    "title": note.title,
                    "heading": chunk.heading,
                    "line": chunk.line,
                },
            }
        )  # fmt: skip
        for chunk in note.chunks
    ]


def _links(note: Note, resolver: Resolver) -> list[NoteLink]:
    seen: dict[str, NoteLink] = {}
    for link in note.links:
        if link.target not in seen:
            resolved = resolver.resolve(note.path, link)
            seen[link.target] = NoteLink(note.path, link.target, resolved, link.line)
    return list(seen.values())


def _row(found: notes.Found, digest: str, note: Note, ids: tuple[str, ...]) -> NoteRow:
    return NoteRow(
        path=note.path, hash=digest, size=found.size, mtime_ns=found.mtime_ns,
        title=note.title, aliases=note.aliases, tags=note.tags, dated=note.dated,
        folder=note.folder, memory_ids=ids, words=note.words,
    )  # fmt: skip


def _declare(
    store: Indexing, scope: Scope, note: Note, anchor: int | None, links: Sequence[NoteLink]
) -> None:
    """The note as an entity (its title and aliases as aliases) and a ``links_to``
    relation per resolved link, anchored by its first chunk (``anchor``, its seq) so
    forgetting it retracts them."""
    name = entity_name(note.path)
    aliases = [
        a for a in dict.fromkeys((note.title, *note.aliases)) if a.casefold() != name.casefold()
    ]
    targets = sorted({k.resolved for k in links if k.resolved and k.resolved != note.path})
    associations: dict[str, Any] = {
        "entities": [{"name": name, "aliases": aliases}],
        "relations": [
            {"subject": name, "predicate": LINK_PREDICATE, "object": entity_name(t)}
            for t in targets
        ],
    }
    declare.declare(store, View(scope), associations, anchor=anchor, declared_by="agent")


def _relink(
    store: Indexing,
    scope: Scope,
    resolver: Resolver,
    root: str,
    written: set[str],
    known: Mapping[str, NoteRow],
) -> int:
    """Re-resolve the links of notes not re-read (a target came or went); declare the
    relations that now resolve. Returns how many links changed resolution."""
    by_source: dict[str, list[NoteLink]] = {}
    for link in store.vault_links(scope):
        if link.source not in written:
            by_source.setdefault(link.source, []).append(link)
    moved, fresh = 0, []
    for source, links in by_source.items():
        now = [replace(k, resolved=resolver.resolve(source, k)) for k in links]
        changes = [n for n, o in zip(now, links, strict=True) if n.resolved != o.resolved]
        if not changes:
            continue
        moved += len(changes)
        fresh.append((source, now, [c for c in changes if c.resolved]))
    for start in range(0, len(fresh), BATCH_NOTES):
        with store.transaction():
            for source, now, gained in fresh[start : start + BATCH_NOTES]:
                row = known.get(source)
                anchor = _seqs(store, scope, row.memory_ids[:1]) if row else []
                relations = [
                    {"subject": entity_name(source), "predicate": LINK_PREDICATE,
                     "object": entity_name(c.resolved or "")}
                    for c in gained if c.resolved != source
                ]  # fmt: skip
                first = anchor[0] if anchor else None
                declare.declare(store, View(scope), {"relations": relations},
                                     anchor=first, declared_by="agent")  # fmt: skip
                store.save_vault(scope, root, [], {source: now}, [])
    return moved
