"""The connection every SQL module of the store speaks through: transactions,
savepoints, snapshots, scope layers, chunked statements and the store's info.

Invariants: many processes may write one store at once and no write is lost,
because every read-modify-write runs inside a write transaction no other writer
can interleave with (`_begin`); a nested `transaction()` is a savepoint, so a
failing step takes back only what it did. A cached read (layers, concepts) never
outlives the transaction that could take it back. Every value is a bound
parameter; identifiers come only from constants in this package.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from assocmem.errors import AssocmemError
from assocmem.schema import Condition
from assocmem.store.params import KEYED, chunked, in_list, qmarks, translated
from assocmem.store.parts import StorePart, hooks_of, parts_of, tables
from assocmem.store.protocol import View
from assocmem.types import Scope

# How long a writer waits for another process's transaction before StoreBusy.
# Generous: a busy store should slow writers down, not drop their writes.
BUSY_TIMEOUT_S = 30.0
SYNCHRONOUS = {"off": "OFF", "normal": "NORMAL", "full": "FULL"}
# The store_info key a forget bumps when it deletes concept names: a connection's
# cached name -> id map is stale once it moves (`_check_concept_cache`).
CONCEPTS_EPOCH = "concepts_forgotten"
_ABSENT = object()  # a seq `_per_seq` asked for and found nothing of
# The engine's tables that many stores never fill and every read would ask, checked
# for a first row as a read snapshot begins, after the parts' (`empty_checked`): a
# read skips those found empty.
SKIPPED_WHEN_EMPTY = ("authors",)
# Entries a read memo may hold and still be kept for the next snapshot: a bound on
# the memory it holds (records by seq are most of it), far above one read's needs.
KEPT_ENTRIES = 50_000
# Bound parameters one `_union` statement carries at most (SQLite allows 32,766).
UNION_PARAMETERS = 2000


def snapshot_checks(first: str, skipped_when_empty: Sequence[str]) -> str:
    """One SELECT of what a read snapshot checks as it begins: ``first``, the concept
    names' epoch (`CONCEPTS_EPOCH`), and for each table whether it is empty."""
    return (
        f"SELECT {first}, (SELECT value FROM store_info WHERE key = '{CONCEPTS_EPOCH}'), "
        + ", ".join(f"NOT EXISTS (SELECT 1 FROM {t})" for t in skipped_when_empty)
    )


def roles_of(key: str) -> list[str]:
    """The roles of an access key (roles joined by newlines; '' for everyone)."""
    return key.split("\n") if key else []


def access_key(roles: Sequence[str]) -> str:
    """The canonical form of an access list: sorted, unique, newline-joined ('' = all)."""
    return "\n".join(sorted(set(roles)))


def readable_by(access: str, role: str | None) -> bool:
    """Whether a layer of this access key is readable in ``role``."""
    return access == "" or (role is not None and role in roles_of(access))


def _in_chunks(
    sql: str, values: Sequence[Any], before: Sequence[Any], after: Sequence[Any]
) -> Iterator[tuple[str, list[Any]]]:
    """``sql`` and its parameters once per bounded chunk of ``values``, its ``(?*)``
    made the chunk's placeholders."""
    for chunk in chunked(list(values)):
        yield sql.replace("(?*)", f"({qmarks(len(chunk))})"), [*before, *chunk, *after]


class SQLConnection:
    """The connection half of `SQLStore`; a backend opens ``_conn`` and supplies the
    dialect: how a write transaction begins, its error translation, its `where`
    compiler, and full-text and JSON queries.

    ``_conn`` must offer ``execute(sql, params)`` (returning a cursor with
    ``fetchone``/``fetchall``/``rowcount``) and ``executemany``, with ``?`` placeholders.
    """

    driver_errors: tuple[type[BaseException], ...] = ()
    # The backend's SQL dialect ("sqlite" or "postgres"), for a part whose statements
    # differ between them: the part branches on it, the engine overrides none of its
    # methods.
    dialect: ClassVar[str]
    snapshot_begin = "BEGIN"
    # Writes append co-occurrence counts to a pending list and fold them into the
    # links in bulk (links/pending_links.py), where True; else they upsert each link.
    buffers_link_counts = False
    path: str  # the store's file or URL
    # Opened only to read (a SQLite file it may not write): nothing it queues is written.
    read_only: bool = False
    _conn: Any

    @classmethod
    def parts(cls) -> tuple[StorePart, ...]:
        """The capabilities' parts mixed into this store, in registration order."""
        return parts_of(cls)

    @classmethod
    def hooks(cls, name: str) -> tuple[Callable[..., Any], ...]:
        """The parts' hooks called ``name``, in registration order."""
        return hooks_of(cls, name)

    @classmethod
    def migration_packages(cls) -> list[str]:
        """The packages whose migrations this store applies besides the engine's."""
        return [p.migrations for p in cls.parts() if p.migrations]

    def _init_state(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._concept_cache: dict[str, int] = {}
        # And the other way, id -> name, for the names a read reports; both are
        # dropped together (`_drop_concept_caches`).
        self._concept_names: dict[int, str] = {}
        # Tables the open read snapshot found empty as it began (see `_empty`).
        self._empty_in_snapshot: frozenset[str] = frozenset()
        # Readable layers per (agent, projects, channels), valid while the backend's
        # data version is unchanged (no other connection committed).
        self._layer_cache: dict[tuple[Any, ...], tuple[Any, list[tuple[int, str]]]] = {}
        # The data version as read once in the open transaction or snapshot:
        # (its token, the version). Nothing another connection commits shows
        # inside one, so one check serves all of its reads.
        self._version_in: tuple[int, Any] | None = None
        # The layer each (agent, project, channel, access) writes to. Layers are never
        # deleted, so a committed id holds for good; ids made in the open transaction
        # wait in `_pending_layers` until it commits, like concepts.
        self._own_layers: dict[tuple[str, str, str, str], int] = {}
        self._pending_layers: dict[tuple[str, str, str, str], int] = {}
        # Concepts created inside the open transaction: cached only once it commits,
        # or a rolled-back id could be handed out again for another name.
        self._pending_concepts: dict[str, int] = {}
        # The CONCEPTS_EPOCH the concept cache was filled under, and the transaction
        # token it was last read in (a forget elsewhere deletes names; see forget.py).
        self._concepts_epoch: Any = None
        self._epoch_read_in: int | None = None
        # The data version a write transaction last read CONCEPTS_EPOCH under: until
        # another connection commits, no forget elsewhere can have moved it (one here
        # drops the caches itself).
        self._epoch_version: Any = None
        # Outermost transactions and snapshots begun on this connection: a token that
        # tells one transaction's cached reads from the next one's.
        self._transactions = 0
        # What a read asks for more than once (match counts, records by seq), kept for
        # the open read snapshot: nothing can change it before the snapshot ends. A
        # backend that can tell the store is unchanged since the last snapshot keeps
        # it for the next one too (`_keep_memo`).
        self._in_snapshot = False
        self._snapshot_memo: dict[Any, Any] = {}
        # The store's state the memo was filled in (None: nothing is kept between
        # snapshots).
        self._memo_state: Any = None
        # The tables a snapshot checks for a first row as it begins (`snapshot_checks`).
        self._skipped_when_empty = (*tables(self.parts(), "empty_checked"), *SKIPPED_WHEN_EMPTY)
        for on_init in self.hooks("on_init"):
            on_init(self)

    def translate(self, exc: BaseException) -> AssocmemError:
        """The most specific `AssocmemError` for a backend exception."""
        raise NotImplementedError

    def _begin(self) -> None:
        """Begin a write transaction that no other writer can interleave with."""
        raise NotImplementedError

    def _data_version(self) -> Any:
        """A token that changes when another connection commits (None: always re-read)."""
        return None

    def _after_commit(self) -> None:
        """Work a backend does once an outermost write transaction has committed."""

    def _on_begin(self) -> None:
        """What the parts add to every outermost write transaction as it begins."""
        for on_begin in self.hooks("on_begin"):
            on_begin(self)

    def _on_commit(self) -> None:
        """What the parts do once those writes have committed."""
        for on_commit in self.hooks("on_commit"):
            on_commit(self)

    def settle(self) -> None:
        """Bring what the parts buffer into their tables (inside a write transaction),
        before rows that refer to memories or concepts are read, re-keyed or deleted."""
        for settle in self.hooks("settle"):
            settle(self)

    def _open_parts(self) -> None:
        """Each part's once-per-open work (under the lock that serialises migrations)."""
        for on_open in self.hooks("on_open"):
            on_open(self)

    def _parts_current(self) -> bool:
        """Whether no part has once-per-open work to do."""
        return all(is_current(self) for is_current in self.hooks("is_current"))

    def _close_parts(self) -> None:
        """Let each part keep what it queued, as the store closes."""
        for on_close in self.hooks("on_close"):
            on_close(self)

    def _condition_sql(self, condition: Condition, alias: str) -> tuple[str, list[Any]]:
        """One `where` condition in this dialect, with its parameters."""
        raise NotImplementedError

    def _meta_is_array(self, alias: str, key: str) -> str:
        """SQL true when meta's ``key`` (a constant of this package) holds a JSON array."""
        raise NotImplementedError

    def _view_sql(self, view: View, layers: Sequence[int], alias: str) -> tuple[str, list[Any]]:
        """A predicate on memories aliased ``alias`` that admits exactly what ``view``
        may see: its scope layers, statuses and kinds, then its `where` conditions."""
        if not layers:
            return "FALSE", []
        parts = [in_list(f"{alias}.scope_id", layers), in_list(f"{alias}.status", view.statuses)]
        params: list[Any] = [*layers, *view.statuses]
        if view.kinds is not None:
            parts.append(in_list(f"{alias}.kind", view.kinds) if view.kinds else "FALSE")
            params += view.kinds
        if view.task is not None:
            parts.append(f"({alias}.kind != 'working' OR {alias}.task = ?)")
            params.append(view.task)
        elif view.kinds is None or "working" not in view.kinds:
            parts.append(f"{alias}.kind != 'working'")
        for condition in view.conditions:
            sql, values = self._condition_sql(condition, alias)
            parts.append(sql)
            params += values
        return " AND ".join(parts), params

    # -- transactions ---------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction at the outermost level (one writer at a time, see
        `_begin`), a savepoint when nested."""
        with self._lock:
            level = self._depth
            try:
                if level == 0:
                    for before_begin in self.hooks("before_begin"):
                        before_begin(self)
                    self._begin()
                    self._transactions += 1
                    self._on_begin()
                else:
                    self._conn.execute(f"SAVEPOINT s{level}")
            except self.driver_errors as exc:
                if level == 0:
                    self._undo(0)  # a begin that failed halfway (say, on its lock) ends here
                raise self.translate(exc) from exc
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                self._undo(level)
                raise
            self._depth -= 1
            try:
                self._conn.execute("COMMIT" if level == 0 else f"RELEASE s{level}")
            except self.driver_errors as exc:
                self._undo(level)
                raise self.translate(exc) from exc
            if level == 0:
                self._on_commit()
                self._concept_cache.update(self._pending_concepts)
                self._pending_concepts.clear()
                self._own_layers.update(self._pending_layers)
                self._pending_layers.clear()
                self._after_commit()

    @contextmanager
    def _atomic_step(self) -> Iterator[None]:
        """A write of one statement, or of checks that raise before they write: inside
        an open transaction it is atomic by itself and takes no savepoint."""
        with self._lock:
            if self._depth:
                yield
                return
            with self.transaction():
                yield

    def _undo(self, level: int) -> None:
        if level == 0:
            self._pending_concepts.clear()
        # A rolled-back savepoint may have taken back a layer made inside it.
        self._pending_layers.clear()
        self._layer_cache.clear()
        for on_rollback in self.hooks("on_rollback"):
            on_rollback(self, level)
        try:
            if level == 0:
                self._conn.execute("ROLLBACK")
            else:
                self._conn.execute(f"ROLLBACK TO s{level}")
                self._conn.execute(f"RELEASE s{level}")
        except self.driver_errors:
            pass  # the transaction is already gone (the backend rolled it back itself)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction, so a multi-query read sees one consistent state."""
        with self._lock:
            if self._depth:
                yield
                return
            self._transactions += 1  # this snapshot's token, taken before it opens
            try:
                self._open_snapshot()
            except self.driver_errors as exc:
                self._forget_memo()
                raise self.translate(exc) from exc
            self._depth += 1
            self._in_snapshot = True
            try:
                yield
            finally:
                self._depth -= 1
                self._in_snapshot = False
                if self._memo_state is None:
                    self._snapshot_memo.clear()
                try:
                    self._conn.execute("COMMIT")
                except self.driver_errors:
                    self._conn.execute("ROLLBACK")

    def _open_snapshot(self) -> None:
        """Begin a read transaction (`snapshot_begin`). A backend may read, in the same
        round trip, what each snapshot checks first (see `_note_concepts_epoch`), and
        which tables were empty as it began (`_empty_in_snapshot`); one that can tell
        the store is unchanged since the last snapshot may keep its memo
        (`_keep_memo`)."""
        self._forget_memo()
        self._conn.execute(self.snapshot_begin)

    def _keep_memo(self, state: Any) -> bool:
        """Whether the memo of earlier snapshots holds for one that sees the store in
        ``state`` (a token equal only where nothing was committed in between): kept
        while it is the state they saw and the memo is not too large, else dropped."""
        if state == self._memo_state and self._memo_entries() <= KEPT_ENTRIES:
            return True
        self._snapshot_memo.clear()
        self._memo_state = state
        return False

    def _forget_memo(self) -> None:
        self._snapshot_memo.clear()
        self._memo_state = None

    def _memo_entries(self) -> int:
        return sum(len(memo) for memo in self._snapshot_memo.values())

    def _empty_tables(self, flags: Sequence[Any]) -> frozenset[str]:
        """The tables of `snapshot_checks`' emptiness ``flags`` (in their order) found empty."""
        return frozenset(t for t, none in zip(self._skipped_when_empty, flags, strict=True) if none)

    def _empty(self, table: str) -> bool:
        """Whether ``table`` was empty when the open read snapshot began; False when
        not known (outside a snapshot, or a backend that did not look)."""
        return self._in_snapshot and table in self._empty_in_snapshot

    def _memo(self, key: Any) -> dict[Any, Any] | None:
        """The memo of ``key`` kept for the open read snapshot (None outside one: a
        write transaction may change what it would remember)."""
        if not self._in_snapshot:
            return None
        memo: dict[Any, Any] = self._snapshot_memo.setdefault(key, {})
        return memo

    def _kept_lists(
        self,
        key: Any,
        wanted: Sequence[tuple[Any, int]],
        fetch: Callable[[list[tuple[Any, int]]], Mapping[Any, list[Any]]],
    ) -> dict[Any, list[Any]]:
        """Each ``(item, limit)`` of ``wanted``'s first ``limit`` rows, kept with the memo
        under ``key``: an item is fetched (``fetch(items and limits)``, which returns
        each item's rows, at most its limit, in their order) unless kept with as many
        rows, or with all it has (fewer than were asked for). The lists returned hold
        at least ``limit`` rows wherever that many exist; callers cut them."""
        memo = self._memo(("lists", key))
        kept: dict[Any, tuple[int, list[Any]]] = memo if memo is not None else {}
        missing = [
            (item, limit)
            for item, limit in wanted
            if item not in kept or (kept[item][0] < limit and len(kept[item][1]) == kept[item][0])
        ]
        if missing:
            found = fetch(missing)
            kept.update((item, (limit, found.get(item, []))) for item, limit in missing)
        return {item: kept[item][1] for item, _ in wanted}

    def _remembered(self, key: Any, fetch: Callable[[], Any]) -> Any:
        """``fetch()``, remembered for the open read snapshot under ``key``."""
        memo = self._memo(("one", key))
        if memo is None:
            return fetch()
        if "value" not in memo:
            memo["value"] = fetch()
        return memo["value"]

    def _per_seq(
        self, key: Any, seqs: Sequence[int], fetch: Callable[[list[int]], Mapping[int, Any]]
    ) -> dict[int, Any]:
        """``fetch(seqs)``, each seq's answer remembered for the open read snapshot under
        ``key``: a read that asks again for what it has (the records its later arms and
        its items share) pays only for what is new."""
        memo = self._memo(("per seq", key))
        if memo is None:
            return dict(fetch(list(seqs)))
        missing = [seq for seq in dict.fromkeys(seqs) if seq not in memo]
        if missing:
            found = fetch(missing)
            memo.update((seq, found.get(seq, _ABSENT)) for seq in missing)
        return {seq: memo[seq] for seq in seqs if memo[seq] is not _ABSENT}

    def _union(
        self, parts: Sequence[tuple[str, Sequence[Any]]], budget: int = UNION_PARAMETERS
    ) -> Iterator[tuple[int, Any]]:
        """The rows of many small SELECTs as few statements, each row tagged with the
        index of the part it came from: ``(index, rest of the row)``. A part's SQL
        selects ``{n}`` (its place in its statement) as its first column and may name
        ``{n}`` elsewhere (an alias); parts join a statement by ``UNION ALL`` while
        their parameters fit ``budget``, so each keeps its own plan and LIMIT."""
        start = 0
        while start < len(parts):
            end, bound = start + 1, len(parts[start][1])
            while end < len(parts) and bound + len(parts[end][1]) <= budget:
                bound += len(parts[end][1])
                end += 1
            chunk = parts[start:end]
            sql = " UNION ALL ".join(text.format(n=n) for n, (text, _) in enumerate(chunk))
            for n, *rest in self._query(sql, [v for _, params in chunk for v in params]):
                yield start + n, rest
            start = end

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            rows: list[Any] = self._conn.execute(sql, params).fetchall()
            return rows

    def _query_in(
        self, sql: str, values: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> list[Any]:
        """The rows of ``sql`` over all ``values``: its ``(?*)`` becomes the placeholders
        of one bounded chunk of them at a time, bound between ``before`` and ``after``."""
        return [
            row
            for statement, params in _in_chunks(sql, values, before, after)
            for row in self._query(statement, params)
        ]

    def _execute_in(
        self, sql: str, values: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> int:
        """Run ``sql`` over all ``values`` in chunks, as `_query_in`; the rows it changed."""
        with self._lock:
            return sum(
                self._conn.execute(statement, params).rowcount
                for statement, params in _in_chunks(sql, values, before, after)
            )

    def _check_concept_cache(self) -> None:
        """Drop the cached concept ids if a forget deleted concept names since they
        were read (once per transaction or snapshot; every time outside one)."""
        token = self._transactions if self._depth else None
        if token is not None and token == self._epoch_read_in:
            return
        writing = self._depth and not self._in_snapshot
        version = self._current_version() if writing else None
        if version is not None and version == self._epoch_version:
            self._epoch_read_in = token  # no one else committed since it was read
            return
        rows = self._query(KEYED + "SELECT value FROM store_info WHERE key = ?", [CONCEPTS_EPOCH])
        self._note_concepts_epoch(rows[0][0] if rows else None, token)
        self._epoch_version = version

    def _note_concepts_epoch(self, epoch: Any, token: int | None) -> None:
        """Keep the cached concept ids only if ``epoch`` (CONCEPTS_EPOCH as read in the
        transaction or snapshot ``token``) is the one they were read under."""
        if epoch != self._concepts_epoch:
            self._drop_concept_caches()
            self._concepts_epoch = epoch
        self._epoch_read_in = token

    def _names_by_id(self, ids: Sequence[int]) -> dict[int, str]:
        """The names of those concept ids that exist, cached like ids by name."""
        self._check_concept_cache()
        names = self._concept_names
        missing = [i for i in ids if i not in names]
        if missing:
            found = self._query_in(
                KEYED + "SELECT id, name FROM concepts WHERE id IN (?*)", missing
            )
            if self._depth and not self._in_snapshot:
                # A write transaction's own new concepts may still be rolled back, and
                # their ids handed out again: its answers are not kept.
                return {i: names[i] for i in ids if i in names} | dict(found)
            names.update(found)
        return {i: names[i] for i in ids if i in names}

    def _drop_concept_caches(self) -> None:
        """Forget every cached concept id and name (concept names were deleted or
        renamed: a forget, a refold)."""
        self._concept_cache.clear()
        self._concept_names.clear()

    # -- scope layers -----------------------------------------------------------

    def layers(self, scope: Scope) -> list[int]:
        return self._layers(scope)

    def _layers(self, scope: Scope) -> list[int]:
        """Ids of the existing layers a reader in ``scope`` sees, in its role."""
        key = (scope.agent_id, scope.readable_projects, scope.readable_channels)
        with self._lock:
            version = self._current_version()
            cached = self._layer_cache.get(key)
            if cached is None or version is None or cached[0] != version:
                projects, channels = scope.readable_projects, scope.readable_channels
                rows = self._query(
                    KEYED + "SELECT id, project_id, channel, access FROM scopes WHERE agent_id = ?"
                    f" AND {in_list('project_id', projects)} AND {in_list('channel', channels)}",
                    [scope.agent_id, *projects, *channels],
                )
                nearness = {(p, c): i for i, (p, c) in enumerate(
                    (p, c) for p in projects for c in channels)}  # fmt: skip
                rows.sort(key=lambda r: (nearness[(r[1], r[2])], r[3] != "", r[3], r[0]))
                cached = (version, [(r[0], r[3]) for r in rows])
                self._layer_cache[key] = cached
        return [layer for layer, access in cached[1] if readable_by(access, scope.role)]

    def _current_version(self) -> Any:
        """The data version, read once per transaction or snapshot (each statement
        outside one is its own transaction, and reads it afresh)."""
        if not self._depth:
            return self._data_version()
        if self._version_in is None or self._version_in[0] != self._transactions:
            self._version_in = (self._transactions, self._data_version())
        return self._version_in[1]

    def _own_layer(self, scope: Scope, access: Sequence[str] = ()) -> int:
        """The layer ``scope`` writes records of this ``access`` to, created if new
        (inside a transaction)."""
        row = (scope.agent_id, scope.project_id, scope.channel, access_key(access))
        known = self._own_layers.get(row) or self._pending_layers.get(row)
        if known is not None:
            return known
        found = self._conn.execute(
            "SELECT id FROM scopes WHERE agent_id = ? AND project_id = ? AND channel = ?"
            " AND access = ?",
            row,
        ).fetchone()
        if found is None:
            # Inside the write transaction no other writer can add it meanwhile.
            found = self._conn.execute(
                "INSERT INTO scopes (agent_id, project_id, channel, access) VALUES (?,?,?,?)"
                " RETURNING id",
                row,
            ).fetchone()
            self._layer_cache.clear()  # our own commits do not move data_version
        self._pending_layers[row] = int(found[0])
        return int(found[0])

    # -- store info -------------------------------------------------------------

    @translated
    def info(self, key: str) -> str | None:
        rows = self._query(KEYED + "SELECT value FROM store_info WHERE key = ?", [key])
        return str(rows[0][0]) if rows else None

    @translated
    def set_info(self, key: str, value: str) -> None:
        with self._atomic_step():
            self._conn.execute(
                "INSERT INTO store_info (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
        for on_info in self.hooks("on_info"):
            on_info(self, key, value)

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except self.driver_errors:  # pragma: no cover - close never fails in practice
                pass
