"""A folder of Markdown notes, walked safely and each note parsed into what the index keeps.

Invariants: the walk, every read and apply_links' write go down from one open
descriptor of the root, opening each folder and note relative to its parent and never
through a link (`opened_parent`), so a link (or a folder swapped for one mid-index) is
never followed; a note is read only if it is still the regular file, inside the root,
that the walk found, and never past the size cap. A note that cannot be read as found
is reported with the reason, never raised. Parsing is pure: the same bytes give the
same `Note`. POSIX only: the descriptor walk needs ``dir_fd``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.optional import require_frontmatter

# Notes larger than this are skipped: a 2 MiB Markdown file is a dump, not a note,
# and reading it would stall every re-index.
MAX_NOTE_BYTES = 2 * 1024 * 1024
# A chunk is one heading's section, split at paragraphs past this many characters
# (well under the write limit of 64 KiB, and near what an excerpt should cover).
MAX_CHUNK_CHARS = 4_000
# No chunk runs past this, whatever its paragraphs: twice the target, so a chunk past
# its target still takes a whole ordinary paragraph, and at four UTF-8 bytes a
# character still under the store's 64 KiB text limit.
MAX_CHUNK_HARD_CHARS = 2 * MAX_CHUNK_CHARS
HASH_TAG = "b2:"  # content hashes carry their algorithm (STYLE 16)

# Why a note was skipped, as the index reports it.
LINKED = "a link (links are never followed)"
BECAME_LINK = "became a link during the index (links are never followed)"
REPLACED = "replaced during the index"
VANISHED = "vanished during the index"
MOVED_OUT = "moved out of the vault during the index"
HAS_NUL = "contains a NUL byte (not a text note)"

# Every folder and note is opened without following a link, in that place or on the
# way (O_NOFOLLOW on each step down), and never inherited by a child process; a note
# opens non-blocking, so a FIFO swapped in is refused by its fstat, not waited on.
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)  # getattr: absent where the walk cannot run
_FOLDER_FLAGS = os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
_NOTE_FLAGS = os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_PROC_FD = Path("/proc/self/fd")  # where Linux names an open descriptor's path
_READ_BYTES = 1 << 20  # one read takes most notes whole; the cap bounds the rest

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
    """A note file the walk found: its relative path, its stat, and the device and
    inode that say a later read still has the same file."""

    path: str
    size: int
    mtime_ns: int
    device: int
    inode: int


@dataclass(frozen=True)
class Read:
    """A note's bytes and its stat as read (which the index then remembers)."""

    data: bytes
    size: int
    mtime_ns: int


class Unreadable(Exception):
    """A note the walk found that cannot be read as found; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Walk:
    """What a walk found, and what it skipped with the reason for each."""

    found: list[Found] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@contextmanager
def opened(root: Path) -> Iterator[int]:
    """The root folder (already resolved), held open so that the walk and every read
    start from the same folder whatever happens to its path meanwhile."""
    try:
        folder = os.open(root, _FOLDER_FLAGS)
    except OSError as exc:
        raise InvalidInput(
            f"the vault folder {str(root)!r} cannot be opened: {exc.strerror}", field="path"
        ) from exc
    try:
        yield folder
    finally:
        os.close(folder)


def walk(folder: int, max_bytes: int = MAX_NOTE_BYTES) -> Walk:
    """Every note file under ``folder`` (the root's descriptor), in path order."""
    result = Walk()
    for relative, info in _files(folder, "", result):
        if info.st_size > max_bytes:
            result.skipped[relative] = f"too large: {info.st_size} bytes > {max_bytes}"
            continue
        result.found.append(
            Found(relative, info.st_size, info.st_mtime_ns, info.st_dev, info.st_ino)
        )
    result.found.sort(key=lambda f: f.path)
    return result


def _files(folder: int, prefix: str, result: Walk) -> Iterator[tuple[str, os.stat_result]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        result.skipped[prefix or "./"] = why(exc)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # .obsidian/, .git/, .trash/: tool state, not notes
        relative = prefix + entry.name
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError as exc:
            result.skipped[relative] = why(exc)
            continue
        if stat.S_ISLNK(info.st_mode):
            result.skipped[relative] = LINKED
        elif stat.S_ISDIR(info.st_mode):
            yield from _subfolder(folder, entry.name, info, relative, result)
        elif stat.S_ISREG(info.st_mode) and entry.name.lower().endswith(".md"):
            yield relative, info


def _subfolder(
    parent: int, name: str, info: os.stat_result, relative: str, result: Walk
) -> Iterator[tuple[str, os.stat_result]]:
    try:
        folder = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as exc:
        result.skipped[relative] = why(exc)
        return
    try:
        if _identity(os.fstat(folder)) != _identity(info):
            result.skipped[relative] = REPLACED
        else:
            yield from _files(folder, relative + "/", result)
    finally:
        os.close(folder)


def find(folder: int, path: str, max_bytes: int = MAX_NOTE_BYTES) -> Found:
    """The note at ``path`` as it is now, looked up down from ``folder`` (the root's
    descriptor) without following a link: what a later `read` checks it still is.
    Raises `Unreadable` with the reason for anything but a regular file under the cap."""
    try:
        with opened_parent(folder, path) as (at, name):
            info = os.stat(name, dir_fd=at, follow_symlinks=False)
    except OSError as exc:
        raise Unreadable(why(exc)) from exc
    if stat.S_ISLNK(info.st_mode):
        raise Unreadable(LINKED)
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(REPLACED)
    if info.st_size > max_bytes:
        raise Unreadable(f"too large: {info.st_size} bytes > {max_bytes}")
    return Found(path, info.st_size, info.st_mtime_ns, info.st_dev, info.st_ino)


@contextmanager
def opened_parent(folder: int, path: str) -> Iterator[tuple[int, str]]:
    """The folder holding ``path`` (relative to ``folder``, the root's descriptor),
    opened one folder at a time without following a link, and the name in it; an
    `OSError` says which step failed (`why` names it)."""
    *parents, name = path.split("/")
    with ExitStack() as stack:
        at = folder
        for part in parents:
            at = os.open(part, _FOLDER_FLAGS, dir_fd=at)
            stack.callback(os.close, at)
        yield at, name


def read(folder: int, root: Path, found: Found, max_bytes: int = MAX_NOTE_BYTES) -> Read:
    """The bytes of a note the walk found, opened down from ``folder`` (the descriptor
    of ``root``) step by step without following a link, and only while it is still the
    same regular file inside the root; raises `Unreadable` with the reason otherwise."""
    try:
        with opened_parent(folder, found.path) as (at, name):
            return read_in(at, name, root, found, max_bytes)
    except OSError as exc:
        raise Unreadable(why(exc)) from exc


def read_in(at: int, name: str, root: Path, found: Found, max_bytes: int = MAX_NOTE_BYTES) -> Read:
    """`read` within the folder ``at`` already opened (see `opened_parent`), so that a
    writer replaces the note in the very folder it checked; raises `Unreadable`, or an
    `OSError` as the note's open fails."""
    note = os.open(name, _NOTE_FLAGS, dir_fd=at)
    try:
        info = os.fstat(note)
        _check(note, info, root, found, max_bytes)
        data = _read_at_most(note, max_bytes)
    finally:
        os.close(note)
    if b"\x00" in data:
        raise Unreadable(HAS_NUL)  # a binary or UTF-16 file, which no memory may hold
    return Read(data, info.st_size, info.st_mtime_ns)


def _check(note: int, info: os.stat_result, root: Path, found: Found, max_bytes: int) -> None:
    """Refuse an open note that is not the regular file the walk found, too large, or
    (where /proc says) no longer inside the root."""
    if not stat.S_ISREG(info.st_mode) or _identity(info) != (found.device, found.inode):
        raise Unreadable(REPLACED)
    if info.st_size > max_bytes:
        raise Unreadable(f"too large: {info.st_size} bytes > {max_bytes}")
    try:
        where = Path(os.readlink(_PROC_FD / str(note)))
    except OSError:
        return  # no /proc: the link-free descent from the root's descriptor suffices
    if not where.is_relative_to(root):
        raise Unreadable(MOVED_OUT)  # a folder on its path was renamed out meanwhile


def _read_at_most(note: int, max_bytes: int) -> bytes:
    """The whole file, refusing one that grew past the cap since its fstat."""
    parts, size = [], 0
    while piece := os.read(note, _READ_BYTES):
        size += len(piece)
        if size > max_bytes:
            raise Unreadable(f"too large: over {max_bytes} bytes")
        parts.append(piece)
    return b"".join(parts)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def why(exc: OSError) -> str:
    """The reason a note is skipped, for an `OSError` met opening it or its folders."""
    if exc.errno == errno.ENOENT:
        return VANISHED
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: O_NOFOLLOW on a link on BSDs
        return BECAME_LINK
    if exc.errno == errno.ENOTDIR:
        return REPLACED  # a folder on the way is a file now
    return f"unreadable: {exc.strerror}"


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
    """The body's sections by heading, each split at paragraphs past `MAX_CHUNK_CHARS`
    and, whatever its paragraphs, before it runs past `MAX_CHUNK_HARD_CHARS`."""
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
    part: list[tuple[int, str]] = []
    size = 0
    for number, text in _pieces(lines, line):
        past_target = size > MAX_CHUNK_CHARS and not text.strip()
        if part and (past_target or size + len(text) + 1 > MAX_CHUNK_HARD_CHARS):
            yield from _chunk(heading, part)
            part, size = [], 0
        part.append((number, text))
        size += len(text) + 1
    yield from _chunk(heading, part)


def _pieces(lines: list[str], first_line: int) -> Iterator[tuple[int, str]]:
    """Each line with its number; a line past `MAX_CHUNK_CHARS` is cut after a space
    (or, with none, at the limit) into pieces that keep its number."""
    for i, text in enumerate(lines):
        while len(text) > MAX_CHUNK_CHARS:
            cut = text.rfind(" ", 0, MAX_CHUNK_CHARS) + 1 or MAX_CHUNK_CHARS
            yield first_line + i, text[:cut]
            text = text[cut:]
        yield first_line + i, text


def _chunk(heading: str | None, part: list[tuple[int, str]]) -> Iterator[Chunk]:
    text = "\n".join(t for _, t in part).strip()
    if text:
        yield Chunk(heading, text, next(n for n, t in part if t.strip()))


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
