"""A folder of Markdown notes, walked safely and each note parsed into what the index keeps.

Invariants: the walk yields only regular ``.md`` files whose resolved path stays
inside the resolved root, so a symlink or junction pointing elsewhere is never
followed (nor a symlinked folder walked); a file over the size cap is reported,
never read. Parsing is pure: the same bytes give the same `Note`.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from assocmem.optional import require_frontmatter

# Notes larger than this are skipped: a 2 MiB Markdown file is a dump, not a note,
# and reading it would stall every re-index.
MAX_NOTE_BYTES = 2 * 1024 * 1024
# A chunk is one heading's section, split at paragraphs past this many characters
# (well under the write limit of 64 KiB, and near what an excerpt should cover).
MAX_CHUNK_CHARS = 4_000
HASH_TAG = "b2:"  # content hashes carry their algorithm (STYLE 16)

_WIKILINK = re.compile(r"!?\[\[([^\[\]\n|#]*)(#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>]+\.md)(?:#[^)\s]*)?>?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_DATE_KEYS = ("updated", "modified", "date", "created")


@dataclass(frozen=True)
class Chunk:
    """One section of a note: its heading (None before the first), text and first line."""

    heading: str | None
    text: str
    line: int


@dataclass(frozen=True)
class Link:
    """A link as written: its target (a note name or relative .md path) and line."""

    target: str
    line: int


@dataclass(frozen=True)
class Note:
    """A parsed note; ``path`` is relative to the vault root, ``/``-joined."""

    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    dated: str | None
    chunks: tuple[Chunk, ...]
    links: tuple[Link, ...]
    words: int

    @property
    def folder(self) -> str:
        parent = str(PurePosixPath(self.path).parent)
        return "" if parent == "." else parent


@dataclass(frozen=True)
class Found:
    """A note file the walk found: its relative path, absolute path and stat."""

    path: str
    absolute: Path
    size: int
    mtime_ns: int


@dataclass
class Walk:
    """What a walk found, and what it skipped with the reason for each."""

    found: list[Found] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def walk(root: Path, max_bytes: int = MAX_NOTE_BYTES) -> Walk:
    """Every note file under ``root`` (already resolved), in path order."""
    result = Walk()
    for absolute, relative in _files(root, root, result):
        try:
            info = absolute.lstat()
        except OSError as exc:
            result.skipped[relative] = f"unreadable: {exc.strerror}"
            continue
        if info.st_size > max_bytes:
            result.skipped[relative] = f"too large: {info.st_size} bytes > {max_bytes}"
            continue
        result.found.append(Found(relative, absolute, info.st_size, info.st_mtime_ns))
    result.found.sort(key=lambda f: f.path)
    return result


def _files(root: Path, folder: Path, result: Walk) -> Iterator[tuple[Path, str]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        result.skipped[_relative(root, folder) + "/"] = f"unreadable: {exc.strerror}"
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # .obsidian/, .git/, .trash/: tool state, not notes
        path = Path(entry.path)
        relative = _relative(root, path)
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode) or _is_junction(path):
            result.skipped[relative] = "a link (links are never followed)"
        elif stat.S_ISDIR(mode):
            yield from _files(root, path, result)
        elif stat.S_ISREG(mode) and entry.name.lower().endswith(".md"):
            # Every folder on the way was entered as a real folder (links are never
            # descended into), so a regular file found here lies inside the root.
            yield path, relative


def _is_junction(path: Path) -> bool:
    is_junction = getattr(os.path, "isjunction", None)  # Windows junctions (Python 3.12+)
    return bool(is_junction(path)) if is_junction else False


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def content_hash(data: bytes) -> str:
    """The tagged hash of a note's bytes."""
    return HASH_TAG + hashlib.blake2b(data, digest_size=16).hexdigest()


def parse(path: str, data: bytes) -> Note:
    """A note from its bytes (UTF-8; undecodable bytes replaced) and relative path."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    frontmatter = require_frontmatter()
    try:
        post = frontmatter.loads(text)
        metadata, body = dict(post.metadata), post.content
    except Exception:  # a malformed header is kept as text, not a failed index
        metadata, body = {}, text
    # Lines count from the file's top: the header's lines come before the body's.
    start = text.find(body) if body else -1
    offset = text[:start].count("\n") if start > 0 else 0
    stem = PurePosixPath(path).stem
    return Note(
        path=path,
        title=str(metadata.get("title") or stem).strip() or stem,
        aliases=_strings(metadata.get("aliases") or metadata.get("alias")),
        tags=_strings(metadata.get("tags") or metadata.get("tag")),
        dated=_dated(metadata),
        chunks=tuple(chunks(body, offset + 1)),
        links=tuple(links(body, offset + 1)),
        words=len(body.split()),
    )


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v] if "," in value else [value]
    if not isinstance(value, list | tuple):
        return ()
    seen: dict[str, None] = {}
    for item in value:
        text = str(item).strip().lstrip("#") if item is not None else ""
        if text:
            seen.setdefault(text[:256])
    return tuple(seen)


def _dated(metadata: dict[str, Any]) -> str | None:
    """The note's own date: updated, else date, else created (ISO date), or None."""
    for key in _DATE_KEYS:
        value = metadata.get(key)
        if isinstance(value, datetime):
            return value.date().isoformat()
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, str):
            try:
                return date.fromisoformat(value.strip()[:10]).isoformat()
            except ValueError:
                continue
    return None


def _code_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside fenced code, where a ``#`` or ``[[`` is not Markdown."""
    inside, fenced = False, set()
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            inside = not inside
            fenced.add(i)
        elif inside:
            fenced.add(i)
    return fenced


def chunks(body: str, first_line: int = 1) -> Iterator[Chunk]:
    """The body's sections by heading, each split at paragraphs past `MAX_CHUNK_CHARS`."""
    lines = body.split("\n")
    code = _code_lines(lines)
    heading: str | None = None
    start, buffer = 0, list[str]()
    for i, line in enumerate(lines):
        match = _HEADING.match(line) if i not in code else None
        if match:
            yield from _sections(heading, buffer, first_line + start)
            heading, start, buffer = match.group(2), i, [line]
        else:
            buffer.append(line)
    yield from _sections(heading, buffer, first_line + start)


def _sections(heading: str | None, lines: list[str], line: int) -> Iterator[Chunk]:
    part: list[str] = []
    at = line
    for i, text in enumerate(lines):
        if not text.strip() and sum(len(t) + 1 for t in part) > MAX_CHUNK_CHARS:
            if "\n".join(part).strip():
                yield Chunk(heading, "\n".join(part).strip(), at + _leading_blank(part))
            part, at = [], line + i
        part.append(text[:MAX_CHUNK_CHARS])
    if "\n".join(part).strip():
        yield Chunk(heading, "\n".join(part).strip(), at + _leading_blank(part))


def _leading_blank(lines: list[str]) -> int:
    return next((i for i, t in enumerate(lines) if t.strip()), 0)


def links(body: str, first_line: int = 1) -> Iterator[Link]:
    """Every wikilink and Markdown link to a note, outside code, with its line."""
    lines = body.split("\n")
    code = _code_lines(lines)
    for i, line in enumerate(lines):
        if i in code:
            continue
        for match in _WIKILINK.finditer(line):
            if match.group(1).strip():
                yield Link(match.group(1).strip(), first_line + i)
        for match in _MDLINK.finditer(line):
            target = match.group(1)
            if "://" not in target:
                yield Link(target, first_line + i)
