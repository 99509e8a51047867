"""SQLite backend: one file (or ``:memory:``), WAL, every write under BEGIN IMMEDIATE.

Invariants: BEGIN IMMEDIATE gives one writer at a time across processes (each
waiting up to the busy timeout), so the shared SQL's read-modify-write steps
cannot interleave; full-text search is FTS5 BM25 with Porter stemming, kept by
triggers in the write's transaction; sqlite3 exceptions are translated, and a path
that cannot be opened is named with what is wrong with it. A file this process may
not write is opened read-only: reads work, every write is `StoreUnavailable`.

The WAL has a ceiling (`SQLiteStore.wal_ceiling_bytes`). A reader's snapshot, ours
or any other process's, keeps every frame written after it began, so while a reader
holds one the WAL only grows. Past the ceiling a write first waits, up to
`SQLiteStore.wal_wait_s`, for the readers to let go and the WAL to be truncated;
if one still holds, the write is refused (`StoreBusy`) and writes resume once it
ends. The trade: a reader is never cut off and always sees one consistent state,
and the disk holds at most the ceiling plus one transaction of WAL, at the price
that a snapshot held long enough stops writers. A read's own write (the decay
clocks it restarts) is skipped instead, so reads keep working meanwhile.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import time
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from assocmem.errors import (
    AssocmemError,
    InvalidInput,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from assocmem.order import best_first
from assocmem.schema import Condition
from assocmem.store.checkpoints import (
    BACKSTOP_PAGES,
    CHECKPOINT_BRIEF_S,
    CHECKPOINT_RETRY_S,
    Checkpointer,
)
from assocmem.store.connection import BUSY_TIMEOUT_S, SYNCHRONOUS, snapshot_checks
from assocmem.store.core import SQLStore
from assocmem.store.lexical import common_terms
from assocmem.store.migrations import migrations
from assocmem.store.params import in_list, translated
from assocmem.store.protocol import View
from assocmem.store.refold import is_current, refold_once
from assocmem.store.where_sqlite import condition_sql
from assocmem.text import times

log = logging.getLogger(__name__)


def translate(exc: sqlite3.Error) -> AssocmemError:
    """The most specific `AssocmemError` for a sqlite3 exception."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreBusy(
            f"the store stayed locked by another writer for more than {BUSY_TIMEOUT_S:g} s"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreCorrupt(f"the store file is damaged or not an assocmem store: {exc}")
    if "unable to open" in text or "readonly" in text or "disk i/o" in text:
        return StoreUnavailable(f"cannot open or write the store: {exc}")
    return StoreError(f"storage error: {exc}")


class SQLiteStore(SQLStore):
    """A store in one SQLite file.

    Parameters:
        path: file path, created if missing, or ``:memory:``.
        synchronous: ``"normal"`` (default; WAL keeps every committed transaction
            across a process crash, a power loss may drop the last few) or
            ``"full"`` (also survives power loss, at one fsync per commit).
        read_only: open for reads only (every write is refused with
            `StoreUnavailable`); None (default) does so when the file exists and this
            process may not write it or its folder.
        wal_ceiling_bytes: the most WAL a reader's snapshot may pin before writes
            wait for it and then are refused (default `wal_ceiling_bytes`, 256 MiB).
    """

    driver_errors = (sqlite3.Error,)
    dialect = "sqlite"
    buffers_link_counts = True
    # -- WAL bounds --
    # A thread checkpoints soon after commits (store/checkpoints.py); the writer's own
    # checkpoint copies the rest every `wal_pages` pages and, when no reader still
    # needs its frames, restarts the WAL; `wal_limit_bytes` is what the file
    # is truncated back to then. A reader holding an old snapshot stops a restart, so
    # after a commit that finds the WAL over the limit, the writer retries one
    # truncating checkpoint (waiting on readers no longer than `CHECKPOINT_BRIEF_S`) at
    # most every `wal_retry_s` seconds: once the reader lets go, the WAL shrinks again.
    wal_pages = BACKSTOP_PAGES
    wal_limit_bytes = 64 * 1024 * 1024
    wal_retry_s = 1.0
    # -- the WAL's ceiling (see the module docstring) --
    # Four times `wal_limit_bytes`, which the backstop and the truncating retries keep
    # ordinary writes near: only a WAL a reader pins gets this far.
    wal_ceiling_bytes = 256 * 1024 * 1024
    # A pinning reader is waited on as long as a writer waits on another writer's lock
    # (the busy timeout): both are someone else's transaction the write needs ended.
    wal_wait_s = BUSY_TIMEOUT_S

    def __init__(
        self,
        path: str,
        *,
        synchronous: str = "normal",
        read_only: bool | None = None,
        wal_ceiling_bytes: int | None = None,
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise StoreError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        if wal_ceiling_bytes is not None:
            if (
                isinstance(wal_ceiling_bytes, bool)
                or not isinstance(wal_ceiling_bytes, int)
                or wal_ceiling_bytes <= 0
            ):
                raise InvalidInput(
                    "wal_ceiling_bytes must be a positive number of bytes",
                    field="wal_ceiling_bytes",
                )
            self.wal_ceiling_bytes = wal_ceiling_bytes
        self.path = path
        self.read_only = _not_writable(path) if read_only is None else read_only
        self._init_state()
        # Asked only when the store changed since the last snapshot (`_open_snapshot`).
        self._snapshot_checks = snapshot_checks("0", self._skipped_when_empty)
        self._checked: tuple[Any, frozenset[str]] = (None, frozenset())
        self._checkpointer: Checkpointer | None = None
        # -- open/connect: a failure says what is wrong with the path, not only
        # sqlite's "unable to open database file".
        _check_path(path)
        try:
            self._conn = sqlite3.connect(
                _read_only_uri(path) if self.read_only else path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
                uri=self.read_only,
            )
        except sqlite3.Error as exc:
            raise _open_error(path, exc) from exc
        try:
            self._configure(SYNCHRONOUS[synchronous])
            if self.read_only:
                self._check_current()
            else:
                self._migrate()
                refold_once(self)  # BEGIN IMMEDIATE serialises it, as it does migrations
                self._open_parts()
        except sqlite3.Error as exc:
            self._conn.close()
            raise _open_error(path, exc) from exc
        except AssocmemError:
            self._conn.close()
            raise
        if not self.read_only and path != ":memory:":
            self._checkpointer = Checkpointer(path)
            # A store dropped without close still stops its thread and connection.
            weakref.finalize(self, self._checkpointer.close)

    def close(self) -> None:
        self._close_parts()
        if self._checkpointer is not None:  # its connection first: the last one checkpoints
            self._checkpointer.close()
        super().close()

    def _configure(self, synchronous: str) -> None:
        conn = self._conn
        self._settings = _settings(synchronous)
        conn.execute(self._settings[0])  # the busy timeout, before anything that may wait
        if not self.read_only:  # switching the journal mode writes the header
            conn.execute("PRAGMA journal_mode = WAL")
        for pragma in self._settings[1:]:
            conn.execute(pragma)
        conn.execute(f"PRAGMA wal_autocheckpoint = {self.wal_pages}")
        conn.execute(f"PRAGMA journal_size_limit = {self.wal_limit_bytes}")
        self._wal_retry_at = 0.0
        self._scrub_pending = False  # a forget's WAL truncation a reader blocked

    def fold_worker_settings(self) -> tuple[str, tuple[str, ...]] | None:
        if self.read_only or self.path == ":memory:":
            return None
        return self.path, self._settings

    def _migrate(self) -> None:
        with self.transaction():
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {r[0] for r in self._conn.execute("SELECT name FROM schema_migrations")}
            known = migrations("sqlite", self.migration_packages())
            unknown = applied - {name for name, _ in known}
            if unknown:
                raise SchemaTooNew(
                    f"store {self.path!r} has migrations this assocmem does not know "
                    f"({', '.join(sorted(unknown))}); upgrade assocmem to open it"
                )
            for name, sql in known:
                if name not in applied:
                    for statement in _statements(sql):
                        self._conn.execute(statement)
                    self._conn.execute(
                        "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                        (name, times.now()),
                    )
                    log.info("store %s: applied migration %s", self.path, name)

    def _check_current(self) -> None:
        """A read-only store is read as it is: refused unless it needs no migration
        or refolding (either would write)."""
        tables = self._query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        )
        applied = (
            {r[0] for r in self._query("SELECT name FROM schema_migrations")} if tables else set()
        )
        known = {name for name, _ in migrations("sqlite", self.migration_packages())}
        if applied - known:
            raise SchemaTooNew(
                f"store {self.path!r} has migrations this assocmem does not know "
                f"({', '.join(sorted(applied - known))}); upgrade assocmem to open it"
            )
        if known - applied or not is_current(self):
            raise StoreUnavailable(
                f"store {self.path!r} is read-only and needs upgrading by this assocmem;"
                " open it once where it is writable"
            )

    def translate(self, exc: BaseException) -> AssocmemError:
        if self.read_only and isinstance(exc, sqlite3.Error) and "readonly" in str(exc).lower():
            return self._refused()
        return translate(exc) if isinstance(exc, sqlite3.Error) else StoreError(str(exc))

    def _refused(self) -> StoreUnavailable:
        return StoreUnavailable(f"store {self.path!r} is open read-only; writes are refused")

    def _may_write_clocks(self) -> bool:
        # Not while a reader pins the WAL at its ceiling: that write would wait on it.
        return self._wal_bytes() <= self.wal_ceiling_bytes

    def _begin(self) -> None:
        if self.read_only:
            raise self._refused()
        self._check_wal_ceiling()
        self._conn.execute("BEGIN IMMEDIATE")

    def _check_wal_ceiling(self) -> None:
        """Refuse to write more while the WAL is past its ceiling and a reader's
        snapshot keeps it there, after waiting `wal_wait_s` for that reader to end."""
        if self._wal_bytes() <= self.wal_ceiling_bytes or self._checkpoint(wait=self.wal_wait_s):
            return
        raise StoreBusy(
            f"a reader has held its snapshot while the WAL grew past its ceiling of"
            f" {self.wal_ceiling_bytes} bytes; writes resume once it ends"
        )

    # -- update: a memory moved to another access class --
    def _move_lexical_counts(self, seq: int, old: int, new: int) -> None:
        (tokens,) = self._conn.execute(
            "SELECT COALESCE((SELECT tokens FROM lexical_lengths WHERE seq = ?), 0)", [seq]
        ).fetchone()
        self._conn.execute(
            "UPDATE lexical_layers SET docs = docs - 1, tokens = tokens - ? WHERE scope_id = ?",
            [tokens, old],
        )
        self._conn.execute(
            "INSERT INTO lexical_layers (scope_id, docs, tokens) VALUES (?, 1, ?)"
            " ON CONFLICT (scope_id) DO UPDATE SET docs = docs + 1,"
            " tokens = tokens + excluded.tokens",
            [new, tokens],
        )

    def _data_version(self) -> Any:
        return self._query("PRAGMA data_version")[0][0]

    def _open_snapshot(self) -> None:
        self._conn.execute(self.snapshot_begin)
        # Its first read begins the read transaction: what follows sees this version.
        version = self._data_version()
        self._version_in = (self._transactions, version)
        # data_version moves with other connections' commits, total_changes with this
        # one's writes (committed or not): equal, nothing changed since the last read.
        if not self._keep_memo((version, self._conn.total_changes)):
            _, epoch, *empty = self._query(self._snapshot_checks)[0]
            self._checked = (epoch, self._empty_tables(empty))
        epoch, self._empty_in_snapshot = self._checked
        self._note_concepts_epoch(epoch, self._transactions)

    # -- erasure and the WAL --------------------------------------------------

    def _purge_text_index(self) -> None:
        # FTS5's 'delete' only appends a tombstone; the deleted row's terms stay in
        # the older segments until they are merged. 'optimize' merges every segment
        # into one, rewriting the index without them (the freed pages are zeroed by
        # secure_delete). SQLite 3.42's 'secure-delete' option would avoid the full
        # rewrite; this library supports older SQLite.
        self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")

    def _scrub_files(self) -> None:
        # The old pages of everything the forget rewrote are still frames of the
        # WAL: copy the WAL back and truncate it to zero bytes.
        # A reader still in an old snapshot blocks that for up to the busy timeout;
        # then the caller hears so, and every later commit retries until it passes.
        self._scrub_pending = not self._checkpoint(wait=BUSY_TIMEOUT_S)
        if self._scrub_pending:
            raise StoreBusy(
                "the memories are forgotten, but a reader holding an old snapshot keeps"
                " their bytes in the WAL; the next checkpoint after it ends erases them"
            )

    def _after_commit(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.committed()
        if not self._scrub_pending and (
            self._wal_retry_at > time.monotonic() or self._wal_bytes() <= self.wal_limit_bytes
        ):
            return
        if self._checkpoint(wait=CHECKPOINT_BRIEF_S):
            self._scrub_pending = False
        self._wal_retry_at = time.monotonic() + self.wal_retry_s

    def _wal_bytes(self) -> int:
        try:
            return os.stat(self.path + "-wal").st_size
        except OSError:  # ':memory:', or no WAL yet
            return 0

    # -- inspection: sizes on disk (inspect/store.py) --
    @translated
    def storage(self) -> tuple[str, int, int | None]:
        try:
            size = os.stat(self.path).st_size if self.path != ":memory:" else 0
        except OSError:
            size = 0
        return "sqlite", size, self._wal_bytes()

    def _checkpoint(self, *, wait: float) -> bool:
        """Copy the WAL into the file and truncate it; whether it went through (a
        reader of an old snapshot blocks it, for up to ``wait`` seconds).

        Another connection's checkpoint (a checkpointer thread, this one's or another
        process's) makes SQLite refuse at once rather than wait, so a call tries again
        until its time is up. A checkpoint that need not wait is given
        `CHECKPOINT_BRIEF_S`, about one background checkpoint's length (a reader's
        snapshot, which may last any time, is waited on no longer than that either)."""
        deadline = time.monotonic() + wait
        with self._lock:
            if self._depth:
                return False
            try:
                while True:
                    left = max(0, int((deadline - time.monotonic()) * 1000))
                    self._conn.execute(f"PRAGMA busy_timeout = {left}")
                    (busy, _, _) = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                    if not busy or time.monotonic() >= deadline:
                        return not busy
                    time.sleep(CHECKPOINT_RETRY_S)
            except sqlite3.Error:
                return False
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    def _condition_sql(self, condition: Condition, alias: str) -> tuple[str, list[Any]]:
        return condition_sql(condition, alias)

    @translated
    def lexical(self, view: View, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        layers = self._layers(view.scope)
        if not terms or not layers:
            return []
        docs, tokens, everyone = self._layer_stats(layers)
        if not docs:
            return []
        where, params = self._view_sql(view, layers, "m")
        frequencies = self._frequencies(view.scope, terms)
        common = common_terms(terms, frequencies)
        if docs == everyone:
            # The reader's layers are the whole index: its statistics are the reader's,
            # and FTS5's own bm25() is exactly the per-reader BM25, at C speed.
            return self._ranked(terms, common, layers, where, params, limit)
        # Per term: the memories of the reader's layers it matches, with their length,
        # the term's frequency in each and whether the view admits it; BM25 is summed
        # here, over the statistics of the reader's layers.
        postings: dict[str, list[tuple[int, int, int, int]]] = {}
        rare = [term for term in dict.fromkeys(terms) if term not in common]
        for term in rare:
            postings[term] = self._postings(_phrase(term), where, params, layers)
        if common:
            start, _ = self._window(layers)
            # Instances of the rare terms in each memory holding one.
            held: Counter[int] = Counter()
            for term in rare:
                held.update({seq: count for seq, _, count, _ in postings[term]})
            either = " OR ".join(_phrase(term) for term in rare)
            for term in common:
                newest = self._postings(_phrase(term), where, params, layers, after=start)
                # Older memories holding a rare term too: the highlight marks both
                # terms, whose tokens differ (their counts do), so the rare ones are
                # taken back out.
                beside = (
                    self._postings(f"{_phrase(term)} AND ({either})", where, params, layers,
                                   before=start)
                    if rare and start
                    else []
                )  # fmt: skip
                postings[term] = newest + [
                    (seq, length, max(1, count - held[seq]), visible)
                    for seq, length, count, visible in beside
                ]
        scores = bm25(
            postings,
            list(terms),
            docs=int(docs),
            tokens=int(tokens),
            frequencies={term: frequencies[term] for term in common},
        )
        return [(seq, scores[seq]) for seq in best_first(scores, limit)]

    def _ranked(
        self,
        terms: Sequence[str],
        common: set[str],
        layers: Sequence[int],
        where: str,
        params: Sequence[Any],
        limit: int,
    ) -> list[tuple[int, float]]:
        """FTS5's BM25 of ``terms`` (a reader who sees the whole index), ranking the
        postings of common terms only beside a rare term or in the window (lexical.py).

        Each statement scores its rows against every phrase it holds: memories with a
        rare and a common term against all of them (their whole score), memories with
        a rare term against the rare ones (whole where they hold no common term, and
        below their whole score otherwise), and the window against all. A memory's
        best score is its whole one, and no statement's best ``limit`` can miss one of
        the overall best ``limit``."""
        ranked = (
            "SELECT m.seq, -f.rank FROM memories_fts f JOIN memories m ON m.seq = f.rowid"
            " WHERE memories_fts MATCH ?{bound} AND {where} ORDER BY f.rank, m.seq LIMIT ?"
        )
        every = " OR ".join(_phrase(term) for term in terms)
        if not common:
            plain = ranked.format(bound="", where=where)
            # The read snapshot's rankings of this view at this limit, by their terms.
            kept = self._memo(("ranked", where, tuple(params), limit))
            found = self._extended(kept, terms, plain, params, limit) if kept else None
            if found is None:
                rows = self._query(plain, [every, *params, limit])
                found = [(seq, float(score)) for seq, score in rows]
            if kept is not None:
                kept[tuple(terms)] = found
            return found
        rare = " OR ".join(_phrase(term) for term in terms if term not in common)
        start, _ = self._window(layers)
        statements = [(ranked.format(bound=" AND f.rowid > ?", where=where), [every, start])]
        if rare:
            usual = " OR ".join(_phrase(term) for term in terms if term in common)
            plain = ranked.format(bound="", where=where)
            statements += [(plain, [f"({rare}) AND ({usual})"]), (plain, [rare])]
        scores: dict[int, float] = {}
        for sql, values in statements:
            for seq, score in self._query(sql, [*values, *params, limit]):
                scores[seq] = max(float(score), scores.get(seq, float(score)))
        return [(seq, scores[seq]) for seq in best_first(scores, limit)]

    def _extended(
        self,
        kept: dict[tuple[str, ...], list[tuple[int, float]]],
        terms: Sequence[str],
        plain: str,
        params: Sequence[Any],
        limit: int,
    ) -> list[tuple[int, float]] | None:
        """``terms``' best ``limit`` from a kept ranking of their leading terms (a read
        searching again with words added, lexical expansion), in two statements that
        rank fewer memories than the whole search would; None where none is kept.

        BM25 sums over the query's terms, so a memory's score is its leading terms'
        plus the added terms'. Memories holding both are ranked whole by ``(leading)
        AND (added)``; one holding only the added terms scores what ``(added)`` gives
        it; one holding only leading terms keeps its kept score. A memory holding an
        added term that neither statement returns is beaten by the ``limit`` one of
        them returns, and one holding only leading terms that the kept ranking lacks is
        beaten by all of that ranking: so the merge is the whole search's ranking,
        scores and ties included (each score sums the same terms in the same order; a
        term a memory lacks adds zero)."""
        for cut in range(len(terms) - 1, 0, -1):
            known = kept.get(tuple(terms[:cut]))
            if known is not None:
                break
        else:
            return None
        leading, added = terms[:cut], terms[cut:]
        if len(set(added)) < len(added) or set(added) & set(leading):
            return None  # a repeated term counts twice: only the whole search ranks it
        either = " OR ".join(_phrase(term) for term in leading)
        more = " OR ".join(_phrase(term) for term in added)
        scores = dict(known)
        for match in (f"({either}) AND ({more})", more):
            # A memory holding both gets its whole score from the first statement and
            # less from the other two; the largest is its own.
            for seq, score in self._query(plain, [match, *params, limit]):
                scores[seq] = max(float(score), scores.get(seq, float(score)))
        return [(seq, scores[seq]) for seq in best_first(scores, limit)]

    def _postings(
        self,
        match: str,
        where: str,
        params: Sequence[Any],
        layers: Sequence[int],
        *,
        after: int | None = None,
        before: int | None = None,
    ) -> list[tuple[int, int, int, int]]:
        """``(seq, length, instances, visible)`` of each memory of ``layers`` the FTS5
        query ``match`` finds (seq over ``after``, up to ``before``): highlight marks
        each instance of its terms. CROSS JOIN: the index's matches are the outer loop."""
        bounds, values = "", []
        if after is not None:
            bounds, values = " AND f.rowid > ?", [after]
        if before is not None:
            bounds, values = bounds + " AND f.rowid <= ?", [*values, before]
        rows = self._query(
            "SELECT m.seq, l.tokens, highlight(memories_fts, 0, char(1), ''),"
            f" CASE WHEN {where} THEN 1 ELSE 0 END"
            " FROM memories_fts f CROSS JOIN memories m ON m.seq = f.rowid"
            " CROSS JOIN lexical_lengths l ON l.seq = f.rowid"
            f" WHERE memories_fts MATCH ?{bounds} AND {in_list('m.scope_id', layers)}",
            [*params, match, *values, *layers],
        )
        return [(seq, size, marked.count("\x01"), seen) for seq, size, marked, seen in rows]

    def _count_matches(
        self, layers: Sequence[int], terms: Sequence[str], cap: int, after: int = 0
    ) -> dict[str, int]:
        docs, everyone = self._layer_docs(layers)
        # Where the reader's layers are the whole index, the index's count is theirs;
        # otherwise CROSS JOIN keeps the index's matches the outer loop (the other
        # order runs the MATCH once per memory of the layers).
        sql, before = (
            ("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid > ?", [])
            if docs == everyone
            else (
                "SELECT f.rowid FROM memories_fts f CROSS JOIN memories m ON m.seq = f.rowid"
                f" WHERE memories_fts MATCH ? AND f.rowid > ? AND {in_list('m.scope_id', layers)}",
                layers,
            )
        )
        # Every term's count in one statement, each cut by its own LIMIT.
        counted = f"SELECT {{n}}, COUNT(*) FROM ({sql} LIMIT ?)"
        parts = [(counted, [_phrase(term), after, *before, cap]) for term in terms]
        return {terms[index]: int(count) for index, (count,) in self._union(parts)}

    def _layer_stats(self, layers: Sequence[int]) -> tuple[int, int, int]:
        """Memories and tokens in these layers, and memories in the whole index: read
        once per snapshot (a read's arms and its size all ask)."""
        stats: tuple[int, int, int] = self._remembered(
            ("layer stats", tuple(layers)), lambda: self._read_layer_stats(layers)
        )
        return stats

    def _read_layer_stats(self, layers: Sequence[int]) -> tuple[int, int, int]:
        docs, tokens, everyone = self._query(
            f"SELECT COALESCE(SUM(CASE WHEN {in_list('scope_id', layers)} THEN docs END), 0),"
            f" COALESCE(SUM(CASE WHEN {in_list('scope_id', layers)} THEN tokens END), 0),"
            " COALESCE(SUM(docs), 0) FROM lexical_layers",
            [*layers, *layers],
        )[0]
        return int(docs), int(tokens), int(everyone)

    def _layer_docs(self, layers: Sequence[int]) -> tuple[int, int]:
        """Memories in these layers, and in the whole index."""
        docs, _, everyone = self._layer_stats(layers)
        return docs, everyone

    def _layer_size(self, layers: Sequence[int]) -> int:
        return self._layer_stats(layers)[0]

    def _meta_is_array(self, alias: str, key: str) -> str:
        return f"json_type({alias}.meta, '$.{key}') = 'array'"


# -- open/connect: read-only detection and the errors that name the path --------------


def _settings(synchronous: str) -> tuple[str, ...]:
    """The settings of each connection of the store's (its writer's, a fold worker's):
    the busy timeout first."""
    return (
        f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}",
        f"PRAGMA synchronous = {synchronous}",
        "PRAGMA temp_store = MEMORY",
        "PRAGMA cache_size = -262144",  # 256 MiB page cache
        "PRAGMA mmap_size = 268435456",  # 256 MiB of the file mapped
        # Deleted content is overwritten with zeros, so a forgotten text leaves no
        # bytes in freed cells or pages.
        "PRAGMA secure_delete = ON",
    )


def _not_writable(path: str) -> bool:
    """Whether ``path`` is an existing file this process may not write (the file, or
    its folder, where the WAL's side files live)."""
    if path == ":memory:" or not os.path.isfile(path):
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return not (os.access(path, os.W_OK) and os.access(folder, os.W_OK))


def _read_only_uri(path: str) -> str:
    """A ``mode=ro`` URI for ``path``; where no WAL side files exist and none can be
    made (a read-only folder), the file is read as immutable: nothing else can
    have written to it since its last writer closed it cleanly."""
    absolute = os.path.abspath(path)
    uri = f"file:{quote(absolute)}?mode=ro"
    folder_writable = os.access(os.path.dirname(absolute), os.W_OK)
    if not folder_writable and not os.path.exists(absolute + "-wal"):
        uri += "&immutable=1"
    return uri


def _check_path(path: str) -> None:
    """Refuse a path sqlite could only answer with "unable to open database file"."""
    if path == ":memory:" or path == "":
        return
    target = Path(path)
    if target.is_dir():
        raise StoreUnavailable(
            f"store path {path!r} is a directory; name a file in it, such as "
            f"{str(target / 'memory.db')!r}"
        )
    folder = target.parent
    if not folder.exists():
        hint = ' ("~" is not expanded here; expand it first)' if path.startswith("~") else ""
        raise StoreUnavailable(
            f"the folder {str(folder)!r} of store path {path!r} does not exist{hint};"
            " create it first"
        )
    if not folder.is_dir():
        raise StoreUnavailable(f"store path {path!r} is inside {str(folder)!r}, which is a file")


def _open_error(path: str, exc: sqlite3.Error) -> AssocmemError:
    """`translate`, with the path named where the file could not be opened."""
    error = translate(exc)
    if isinstance(error, StoreUnavailable | StoreCorrupt):
        return type(error)(f"store {path!r}: {error.message}")
    return error


# FTS5's BM25 constants (Robertson et al.), so that a reader alone in a store ranks
# exactly as FTS5's own bm25() would.
BM25_K1 = 1.2
BM25_B = 0.75


def bm25(
    postings: dict[str, list[tuple[int, int, int, int]]],
    terms: Sequence[str],
    *,
    docs: int,
    tokens: int,
    frequencies: dict[str, int] | None = None,
) -> dict[int, float]:
    """BM25 of the visible memories, as FTS5 computes it, over the statistics given:
    ``docs`` memories of ``tokens`` tokens in all, and per term its postings
    ``(seq, length, frequency, visible)`` and its document frequency (the number of
    its postings, unless ``frequencies`` gives it). A term repeated in ``terms``
    counts once per repetition, as a repeated FTS5 phrase does; an IDF at or under
    zero is 1e-6."""
    average = tokens / docs if docs else 0.0
    scores: dict[int, float] = {}
    for term in terms:
        rows = postings[term]
        matched = (frequencies or {}).get(term, len(rows))
        idf = math.log((docs - matched + 0.5) / (matched + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        for seq, length, frequency, visible in rows:
            if visible:
                norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average) if average else BM25_K1
                share = idf * (frequency * (BM25_K1 + 1.0)) / (frequency + norm)
                scores[seq] = scores.get(seq, 0.0) + share
    return scores


def _phrase(term: str) -> str:
    """``term`` as one FTS5 string, so no caller text is read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements, keeping trigger bodies whole."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()
    ):
        raise StoreError("a migration ends with an incomplete statement")
