"""The vault's maintenance: what is broken or drifting, and the one fix it may apply.

Invariants: the report only reads the store. `apply_links` is the only code that
writes a note, and it only appends (or replaces) its own marked ``## Related
(suggested)`` block: every other byte of the note stays, a second run with nothing
new changes no byte, a dry run (the default) writes nothing, and no file is ever
created, moved or deleted (its temporary file replaces the note atomically). Every
write stays inside the root whatever is swapped meanwhile: the note's folder is opened
down from the root's descriptor without following a link, the temporary file is made
and renamed within that folder's descriptor, and only over the regular file, unchanged,
that was read; a note swapped or changed is skipped and reported. Notes are dated by
their frontmatter, never by file mtime (a checkout or sync resets it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import secrets
import stat
import zlib
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Protocol

from assocmem.errors import InvalidInput
from assocmem.recall import pipeline, request
from assocmem.text.concepts import extract_concepts
from assocmem.types import Record, Scope
from assocmem.vault import index, notes
from assocmem.vault.index import MARK, entity_name
from assocmem.vault.tools import Vault, VaultReads
from assocmem.vault.types import (
    AppliedLinks,
    DeadLink,
    LinkPlan,
    MaintenanceReport,
    Orphan,
    StaleNote,
)
from assocmem.vectors.space import VectorSpace

MAX_STALE_DAYS = 36_500
# Near-duplicates: notes whose concept sets overlap this much (Jaccard). 0.6 kept
# the sample vault's rewritten pair and none of its merely related notes.
DUPLICATE_JACCARD = 0.6
DUPLICATE_MIN_CONCEPTS = 5
# MinHash bands finding candidate pairs without comparing every pair of notes.
MINHASH_BANDS, MINHASH_ROWS = 6, 2
SUGGEST_POOL = 40
SUGGEST_QUERY_CONCEPTS = 24
LINKS_PER_NOTE = 2
MAX_NOTES = 10_000

BLOCK_HEADING = "## Related (suggested)"
BLOCK_START = "<!-- assocmem:related -->"
BLOCK_END = "<!-- /assocmem:related -->"
_BLOCK = re.compile(
    "\n" + re.escape(BLOCK_HEADING) + "\n" + re.escape(BLOCK_START) + "\n(.*?)"
    + re.escape(BLOCK_END) + "\n",
    re.DOTALL,
)  # fmt: skip
_BLOCK_LINK = re.compile(r"^- \[\[([^\]]+)\]\]$", re.MULTILINE)

# Why a planned note was not written, as apply_links reports it (its re-index's skipped).
NOT_WRITTEN = "not written: "
SWAPPED = NOT_WRITTEN + "replaced, moved or made a link after it was read (never followed)"
CHANGED = NOT_WRITTEN + "changed after it was read"
GONE = NOT_WRITTEN + "vanished after it was read"
_SWAPS = {notes.LINKED, notes.BECAME_LINK, notes.REPLACED, notes.MOVED_OUT}
# The write's temporary file, made beside the note: a dot name, so that no walk lists
# it; never through a link, never over a file already there.
TEMPORARY_PREFIX = ".assocmem-"
_TEMPORARY_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
)


class Relinking(VaultReads, index.Indexing, Protocol):
    """What maintaining the vault reads and writes: the tools' reads, and indexing the
    notes it rewrites."""


def report(
    store: Relinking, scope: Scope, space: VectorSpace | None, stale_days: int, today: date
) -> MaintenanceReport:
    """Dead links, orphans with a suggestion each, stale notes, near-duplicate clusters,
    the giant component's share of notes, and archive candidates (stale and isolated)."""
    request.check_int(stale_days, "stale_days", 0, MAX_STALE_DAYS)
    vault = Vault.load(store, scope)
    near = vault.neighbours()
    orphans = [p for p, n in sorted(near.items()) if not n]
    stale = _stale(vault, today - timedelta(days=stale_days), today)
    giant = _giant(near)
    return MaintenanceReport(
        notes=len(vault.notes),
        dead_links=tuple(
            DeadLink(k.source, k.target, k.line) for k in vault.links if k.resolved is None
        ),
        orphans=tuple(_orphan(store, scope, space, vault, p) for p in orphans),
        stale=tuple(stale),
        duplicates=_duplicates(store, scope, vault),
        health=round(giant / len(vault.notes), 4) if vault.notes else 0.0,
        giant_component=giant,
        archive_candidates=tuple(s.note for s in stale if not near[s.note]),
    )


def _stale(vault: Vault, cut: date, today: date) -> list[StaleNote]:
    found = []
    for row in sorted(vault.notes.values(), key=lambda r: r.path):
        if row.dated is not None and date.fromisoformat(row.dated) < cut:
            found.append(
                StaleNote(row.path, row.dated, (today - date.fromisoformat(row.dated)).days)
            )
    return found


def _giant(near: dict[str, set[str]]) -> int:
    seen: set[str] = set()
    largest = 0
    for start in sorted(near):
        if start in seen:
            continue
        seen.add(start)
        stack, size = [start], 0
        while stack:
            node = stack.pop()
            size += 1
            for other in near[node] - seen:
                seen.add(other)
                stack.append(other)
        largest = max(largest, size)
    return largest


def suggestions(
    store: Relinking, scope: Scope, space: VectorSpace | None, vault: Vault, path: str, n: int
) -> list[tuple[str, tuple[str, ...]]]:
    """Up to ``n`` notes ``path`` should link to, nearest first, with the concepts they share."""
    row = vault.notes[path]
    own = [r for r in store.records(scope, list(row.memory_ids)) if not _is_block(r)]
    counts: dict[str, int] = {}
    for record in own:
        for concept in record.concepts:
            counts[concept] = counts.get(concept, 0) + 1
    concepts = sorted(counts, key=lambda c: (-counts[c], c))
    query = " ".join([row.title, *concepts[:SUGGEST_QUERY_CONCEPTS]])[: request.MAX_QUERY_CHARS]
    asked = request.read_request(scope, query, k=SUGGEST_POOL, where=MARK, explain=False)
    picked: dict[str, tuple[str, ...]] = {}
    for item in pipeline.read(store, asked, space).items:
        note = str(item.record.meta.get("note", ""))
        if (
            note in vault.notes
            and note != path
            and note not in picked
            and not _is_block(item.record)
        ):
            picked[note] = tuple(sorted(set(item.record.concepts) & set(counts))[:5])
            if len(picked) == n:
                break
    return list(picked.items())


def _is_block(record: Record) -> bool:
    return record.meta.get("heading") == BLOCK_HEADING.removeprefix("## ")


def _orphan(
    store: Relinking, scope: Scope, space: VectorSpace | None, vault: Vault, path: str
) -> Orphan:
    found = suggestions(store, scope, space, vault, path, 1)
    if not found:
        return Orphan(path, None, "no other note shares its terms")
    target, shared = found[0]
    why = f"shares {', '.join(shared)}" if shared else "the nearest note by the read"
    return Orphan(path, target, why)


def _duplicates(store: Relinking, scope: Scope, vault: Vault) -> tuple[tuple[str, ...], ...]:
    # Every chunk in one read, not one read per note.
    chunks = {
        r.id: r
        for r in store.records(scope, [i for n in vault.notes.values() for i in n.memory_ids])
    }
    sets: dict[str, frozenset[str]] = {}
    for row in vault.notes.values():
        own = (chunks[i] for i in row.memory_ids if i in chunks)
        text = "\n".join(r.text for r in own if not _is_block(r))
        concepts = frozenset(c for c, _ in extract_concepts(text, 100_000))
        if len(concepts) >= DUPLICATE_MIN_CONCEPTS:
            sets[row.path] = concepts
    buckets: dict[tuple[int, int], list[str]] = {}
    for path, concepts in sorted(sets.items()):
        signature = [
            min(zlib.crc32(f"{seed}:{c}".encode()) for c in concepts)
            for seed in range(MINHASH_BANDS * MINHASH_ROWS)
        ]
        for band in range(MINHASH_BANDS):
            rows = signature[band * MINHASH_ROWS : (band + 1) * MINHASH_ROWS]
            buckets.setdefault((band, hash(tuple(rows))), []).append(path)
    parent = {p: p for p in sets}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for members in buckets.values():
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if root(a) != root(b) and _jaccard(sets[a], sets[b]) >= DUPLICATE_JACCARD:
                    parent[max(root(a), root(b))] = min(root(a), root(b))
    clusters: dict[str, list[str]] = {}
    for path in sorted(sets):
        clusters.setdefault(root(path), []).append(path)
    return tuple(tuple(c) for c in sorted(clusters.values()) if len(c) > 1)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b)


# A planned note: the file as found, its bytes, its text with the block, and the plan.
Planned = tuple[notes.Found, bytes, str, LinkPlan]


def plan_links(
    store: Relinking,
    scope: Scope,
    space: VectorSpace | None,
    root: Path,
    folder: int,
    names: Sequence[str] | None,
) -> list[Planned]:
    """Each target note as found under ``folder`` (the descriptor of ``root``), its
    bytes, its text with the block, and the plan.

    Targets are the named notes, else the orphans. A note already holding its block
    keeps the block's links while they still resolve, so a re-run is a no-op."""
    vault = Vault.load(store, scope)
    if names is None:
        targets = [p for p, n in sorted(vault.neighbours().items()) if not n]
    else:
        if isinstance(names, str) or not isinstance(names, Sequence) or len(names) > MAX_NOTES:
            raise InvalidInput(
                f"notes must be a list of at most {MAX_NOTES} note names", field="notes"
            )
        targets = sorted({vault.note(n, "notes").path for n in names})
    resolver = vault.resolver()
    plans = []
    for path in targets:
        current = _current(folder, root, path)
        if current is None:
            continue  # a note we could not read back exactly is never rewritten
        found, data, text = current
        held = _BLOCK.search(text)
        kept = _BLOCK_LINK.findall(held.group(1)) if held else []
        if kept and all(resolver.names.get(t.casefold()) for t in kept):
            links = kept
        else:
            links = [
                entity_name(p)
                for p, _ in suggestions(store, scope, space, vault, path, LINKS_PER_NOTE)
            ]
        if not links:
            continue
        new = _with_block(text, held, links)
        plans.append((found, data, new, LinkPlan(path, tuple(links), new != text)))
    return plans


def _current(folder: int, root: Path, path: str) -> tuple[notes.Found, bytes, str] | None:
    """The note as it is now, its bytes and its text, if it is a regular UTF-8 file
    inside the root."""
    try:
        found = notes.find(folder, path)
        data = notes.read(folder, root, found).data
        return found, data, data.decode("utf-8")
    except (notes.Unreadable, UnicodeDecodeError):
        return None


def _with_block(text: str, held: re.Match[str] | None, links: Sequence[str]) -> str:
    block = (
        f"\n{BLOCK_HEADING}\n{BLOCK_START}\n"
        + "".join(f"- [[{link}]]\n" for link in links)
        + f"{BLOCK_END}\n"
    )
    if held is not None:
        return text[: held.start()] + block + text[held.end() :]
    return text + ("" if text.endswith("\n") or not text else "\n") + block


def apply_links(
    store: Relinking,
    scope: Scope,
    space: VectorSpace | None,
    root: Path,
    names: Sequence[str] | None,
    dry_run: bool,
) -> AppliedLinks:
    """Plan the blocks; unless ``dry_run``, write the notes that change and re-index.

    A note swapped or changed between its read and its write is not written: the
    re-index reports it in ``skipped`` with the reason, and the other notes are written."""
    if not isinstance(dry_run, bool):
        raise InvalidInput("dry_run must be true or false", field="dry_run")
    unwritten: dict[str, str] = {}
    with notes.opened(root) as folder:
        plans = plan_links(store, scope, space, root, folder, names)
        if not dry_run:
            for found, data, new, plan in plans:
                if plan.changes and (why := _write(folder, root, found, data, new)) is not None:
                    unwritten[plan.note] = why
    written = 0 if dry_run else sum(p.changes for *_, p in plans) - len(unwritten)
    reindexed = None
    if written or unwritten:
        reindexed = index.index(store, scope, root, space)
        skipped = dict(sorted((reindexed.skipped | unwritten).items()))
        reindexed = dataclasses.replace(reindexed, skipped=skipped)
    return AppliedLinks(
        dry_run=dry_run, plans=tuple(p for *_, p in plans), written=written, index=reindexed
    )


def _write(folder: int, root: Path, found: notes.Found, data: bytes, new: str) -> str | None:
    """Write ``new`` over the note in the folder that holds it, opened down from the
    root's descriptor without following a link, only while it is still the file (and
    the bytes) planned from; None, or why it was not written."""
    try:
        with notes.opened_parent(folder, found.path) as (at, name):
            seen = notes.read_in(at, name, root, found)
            if seen.data != data:
                return CHANGED
            return _replace(folder, found, seen, at, name, new.encode("utf-8"))
    except notes.Unreadable as exc:
        return _unwritten(exc.reason)
    except OSError as exc:
        return _unwritten(notes.why(exc))


def _replace(
    folder: int, found: notes.Found, seen: notes.Read, at: int, name: str, data: bytes
) -> str | None:
    """Write ``data`` over ``name`` in the folder ``at`` atomically, keeping its
    permissions: a temporary file made there (never through a link) is renamed over
    the note there, unless `_moved` says why not."""
    mode = os.stat(name, dir_fd=at, follow_symlinks=False).st_mode & 0o7777
    temporary = f"{TEMPORARY_PREFIX}{secrets.token_hex(8)}.tmp"
    out = os.open(temporary, _TEMPORARY_FLAGS, 0o600, dir_fd=at)
    placed = False
    try:
        _fill(out, data, mode)
        why = _moved(folder, found, seen, at, name)
        if why is None:
            os.replace(temporary, name, src_dir_fd=at, dst_dir_fd=at)
            placed = True
        return why
    finally:
        if not placed:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=at)


def _fill(out: int, data: bytes, mode: int) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
        os.fchmod(out, mode)
        os.fsync(out)
    finally:
        os.close(out)


def _moved(folder: int, found: notes.Found, seen: notes.Read, at: int, name: str) -> str | None:
    """Why the note may not be replaced now: the folder at its path under the root is no
    longer ``at``, or the note is no longer the regular file, unchanged, that was read.
    Checked last, after the slow write and fsync, to leave a swap the least time."""
    with notes.opened_parent(folder, found.path) as (now, _):
        if _identity(os.fstat(now)) != _identity(os.fstat(at)):
            return SWAPPED
    info = os.stat(name, dir_fd=at, follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode) or _identity(info) != (found.device, found.inode):
        return SWAPPED
    if (info.st_size, info.st_mtime_ns) != (seen.size, seen.mtime_ns):
        return CHANGED
    return None


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _unwritten(reason: str) -> str:
    if reason in _SWAPS:
        return SWAPPED
    if reason == notes.VANISHED:
        return GONE
    return NOT_WRITTEN + reason


def today() -> date:
    """Today in UTC (the staleness cut is measured from it)."""
    return datetime.now(UTC).date()
