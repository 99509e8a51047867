"""The SQL store both backends share: every statement and transaction of the engine.

Invariants: many processes may write one store at once and no write, link
increment or feedback is lost, because every read-modify-write runs inside a
write transaction no other writer can interleave with (`_begin`) and increments
are single upsert statements. Every value is a bound parameter; identifiers come
only from constants in this package. Backend exceptions are translated to the
`AssocmemError` tree before they leave.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from assocmem.errors import AssocmemError
from assocmem.optional import require_numpy
from assocmem.schema import Condition, NewMemory, fingerprint_key
from assocmem.store import pending_links
from assocmem.store.graph import GraphQueries, roles_of
from assocmem.store.lessons import LessonQueries
from assocmem.store.params import chunked, in_list, qmarks, translated
from assocmem.store.pending_links import PendingLinks
from assocmem.store.protocol import LinkRow, RankFields, Store, VectorRows, View, new_id
from assocmem.text import times
from assocmem.types import Record, Scope, Stats, WriteResult

if TYPE_CHECKING:
    import numpy as np

# How long a writer waits for another process's transaction before StoreBusy.
# Generous: a busy store should slow writers down, not drop their writes.
BUSY_TIMEOUT_S = 30.0
_SYNCHRONOUS = {"off": "OFF", "normal": "NORMAL", "full": "FULL"}

_MEMORY_COLUMNS = (
    "seq, id, agent_id, project_id, channel, text, kind, tags, value, meta, source, "
    "observed_at, version, verified_at, verification_scope, recheck_by, confidence, access, "
    "key_subject, key_relation, derived_from, status, protected, valence, created_at, "
    "author, thread, accessed_at, task, source_canonical"
)


def access_key(roles: Sequence[str]) -> str:
    """The canonical form of an access list: sorted, unique, newline-joined ('' = all)."""
    return "\n".join(sorted(set(roles)))


def readable_by(access: str, role: str | None) -> bool:
    """Whether a layer of this access key is readable in ``role``."""
    return access == "" or (role is not None and role in roles_of(access))


def _link_row(a: int, b: int, w: float, c: int, o: float, f: int, at: int) -> LinkRow:
    """A `links` row summed over layers; its time is stored in microseconds."""
    return LinkRow(a, b, float(w), int(c), float(o), int(f), times.from_micros(int(at)))


def _in_chunks(
    sql: str, values: Sequence[Any], before: Sequence[Any], after: Sequence[Any]
) -> Iterator[tuple[str, list[Any]]]:
    """``sql`` and its parameters once per bounded chunk of ``values``, its ``(?*)``
    made the chunk's placeholders."""
    for chunk in chunked(list(values)):
        yield sql.replace("(?*)", f"({qmarks(len(chunk))})"), [*before, *chunk, *after]


def _json_list(values: Sequence[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"


class SQLStore(GraphQueries, LessonQueries, Store):
    """The SQL both backends share; a subclass opens the connection and supplies the
    dialect: how a write transaction begins, its error translation, its `where`
    compiler, and full-text and JSON queries.

    ``_conn`` must offer ``execute(sql, params)`` (returning a cursor with
    ``fetchone``/``fetchall``/``rowcount``) and ``executemany``, with ``?`` placeholders.
    """

    driver_errors: tuple[type[BaseException], ...] = ()
    snapshot_begin = "BEGIN"
    # Writes append co-occurrence counts to `pending_links` and fold them into
    # `links` in bulk (see pending_links.py), where True; else they upsert `links`.
    buffers_link_counts = False
    _conn: Any

    def _init_state(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._concept_cache: dict[str, int] = {}
        # Readable layers per (agent, projects, channels), valid while the backend's
        # data version is unchanged (no other connection committed).
        self._layer_cache: dict[tuple[Any, ...], tuple[Any, list[tuple[int, str]]]] = {}
        # Concepts created inside the open transaction: cached only once it commits,
        # or a rolled-back id could be handed out again for another name.
        self._pending_concepts: dict[str, int] = {}
        # This connection's copy of `pending_links` (empty where counts are not buffered).
        self._pending_links = PendingLinks()
        # Outermost transactions and snapshots begun on this connection: a token that
        # tells one transaction's cached reads from the next one's.
        self._transactions = 0

    def translate(self, exc: BaseException) -> AssocmemError:
        """The most specific `AssocmemError` for a backend exception."""
        raise NotImplementedError

    def _begin(self) -> None:
        """Begin a write transaction that no other writer can interleave with."""
        raise NotImplementedError

    def _data_version(self) -> Any:
        """A token that changes when another connection commits (None: always re-read)."""
        return None

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
                    self._begin()
                    self._transactions += 1
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
                self._concept_cache.update(self._pending_concepts)
                self._pending_concepts.clear()

    def _undo(self, level: int) -> None:
        if level == 0:
            self._pending_concepts.clear()
        self._pending_links.clear()  # it may hold rows this rollback takes back
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
            try:
                self._conn.execute(self.snapshot_begin)
            except self.driver_errors as exc:
                raise self.translate(exc) from exc
            self._transactions += 1
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                try:
                    self._conn.execute("COMMIT")
                except self.driver_errors:
                    self._conn.execute("ROLLBACK")

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

    # -- scope layers -----------------------------------------------------------

    def layers(self, scope: Scope) -> list[int]:
        return self._layers(scope)

    def _layers(self, scope: Scope) -> list[int]:
        """Ids of the existing layers a reader in ``scope`` sees, in its role."""
        key = (scope.agent_id, scope.readable_projects, scope.readable_channels)
        version = self._data_version()
        cached = self._layer_cache.get(key)
        if cached is None or version is None or cached[0] != version:
            projects, channels = scope.readable_projects, scope.readable_channels
            rows = self._query(
                "SELECT id, project_id, channel, access FROM scopes WHERE agent_id = ?"
                f" AND {in_list('project_id', projects)} AND {in_list('channel', channels)}",
                [scope.agent_id, *projects, *channels],
            )
            nearness = {(p, c): i for i, (p, c) in enumerate(
                (p, c) for p in projects for c in channels)}  # fmt: skip
            rows.sort(key=lambda r: (nearness[(r[1], r[2])], r[3] != "", r[3], r[0]))
            cached = (version, [(r[0], r[3]) for r in rows])
            self._layer_cache[key] = cached
        return [layer for layer, access in cached[1] if readable_by(access, scope.role)]

    def _own_layer(self, scope: Scope, access: Sequence[str] = ()) -> int:
        """The layer ``scope`` writes records of this ``access`` to, created if new
        (inside a transaction)."""
        row = (scope.agent_id, scope.project_id, scope.channel, access_key(access))
        self._conn.execute(
            "INSERT INTO scopes (agent_id, project_id, channel, access) VALUES (?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            row,
        )
        (layer,) = self._conn.execute(
            "SELECT id FROM scopes WHERE agent_id = ? AND project_id = ? AND channel = ?"
            " AND access = ?",
            row,
        ).fetchone()
        self._layer_cache.clear()  # our own commits do not move data_version
        return int(layer)

    # -- writes ---------------------------------------------------------------

    @translated
    def write(
        self, scope: Scope, memories: Sequence[NewMemory], vectors: np.ndarray | None = None
    ) -> list[WriteResult]:
        now = times.now()
        with self.transaction():
            layers: dict[str, int] = {}
            for memory in memories:
                if access_key(memory.access) not in layers:
                    layers[access_key(memory.access)] = self._own_layer(scope, memory.access)
            results, stored, embedded = [], [], []
            for i, memory in enumerate(memories):
                layer = layers[access_key(memory.access)]
                result, seq = self._insert_memory(scope, layer, memory, now)
                results.append(result)
                if seq is not None:
                    stored.append((seq, layer, memory))
                    if vectors is not None:
                        embedded.append((seq, layer, vectors[i]))
            self._put_vectors(embedded)
            ids = self.intern_concepts([n for _, _, m in stored for n, _ in m.concepts])
            self._conn.executemany(
                "INSERT INTO memory_concepts (scope_id, concept_id, memory_seq, position, form)"
                " VALUES (?,?,?,?,?)",
                [
                    (layer, ids[name], seq, pos, form)
                    for seq, layer, memory in stored
                    for pos, (name, form) in enumerate(memory.concepts)
                ],
            )
            pairs: Counter[tuple[int, int, int]] = Counter()
            for _, layer, memory in stored:
                concepts = sorted(ids[n] for n, _ in memory.concepts)
                pairs.update((layer, a, b) for a, b in itertools.combinations(concepts, 2))
            self._count_cooccurrence(pairs, times.to_micros(now))
            return results

    def _insert_memory(
        self, scope: Scope, layer: int, memory: NewMemory, now: str
    ) -> tuple[WriteResult, int | None]:
        memory_id = new_id()
        current = self._current_for_key(scope, memory) if memory.key else None
        history = current is not None and memory.observed_at < current[1]
        if current and not history:  # one active per key: retire before inserting
            self._set_status(current[0], "superseded")
        row = self._conn.execute(
            "INSERT INTO memories (id, scope_id, agent_id, project_id, channel, text, kind, tags,"
            " value, meta, source, observed_at, version, verified_at, verification_scope,"
            " recheck_by, confidence, access, key_subject, key_relation, derived_from, protected,"
            " author, thread, fingerprint, dedupe_key, created_at, task, source_canonical,"
            " status, superseded_by)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (scope_id, observed_at, dedupe_key) DO NOTHING RETURNING seq",
            (
                memory_id, layer, scope.agent_id, scope.project_id, scope.channel, memory.text,
                memory.kind, _json_list(memory.tags), memory.value, memory.meta_json,
                memory.source, memory.observed_at, memory.version, memory.verified_at,
                memory.verification_scope, memory.recheck_by, memory.confidence,
                _json_list(memory.access), memory.key[0] if memory.key else None,
                memory.key[1] if memory.key else None, _json_list(memory.derived_from),
                int(memory.protected), memory.author, memory.thread, memory.fingerprint,
                memory.dedupe_key, now, memory.task, memory.source_canonical,
                "superseded" if history else "active", current[0] if history and current else None,
            ),
        ).fetchone()  # fmt: skip
        if row is not None:
            names = tuple(n for n, _ in memory.concepts)
            if history:
                return WriteResult(
                    id=memory_id,
                    stored=True,
                    concepts=names,
                    reason="history: a later observation holds this key",
                ), row[0]
            if current:
                self._conn.execute(
                    "UPDATE memories SET superseded_by = ? WHERE seq = ?", (row[0], current[0])
                )
            retired = (current[2],) if current else ()
            return WriteResult(id=memory_id, stored=True, concepts=names,
                               superseded=retired), row[0]  # fmt: skip
        if current and not history:
            self._set_status(current[0], "active")  # a refused duplicate retires nothing
        (existing,) = self._conn.execute(
            "SELECT id FROM memories WHERE scope_id = ? AND observed_at = ? AND dedupe_key = ?",
            (layer, memory.observed_at, memory.dedupe_key),
        ).fetchone()
        return WriteResult(id=existing, stored=False, reason="duplicate"), None

    def _current_for_key(self, scope: Scope, memory: NewMemory) -> tuple[int, str, str] | None:
        """The active record holding ``memory``'s key in its scope: (seq, observed_at, id)."""
        assert memory.key is not None
        row = self._conn.execute(
            "SELECT seq, observed_at, id FROM memories WHERE agent_id = ? AND project_id = ?"
            " AND channel = ? AND key_subject = ? AND key_relation = ? AND status = 'active'",
            (scope.agent_id, scope.project_id, scope.channel, *memory.key),
        ).fetchone()
        return (int(row[0]), str(row[1]), str(row[2])) if row else None

    def _set_status(self, seq: int, status: str) -> None:
        self._conn.execute("UPDATE memories SET status = ? WHERE seq = ?", (status, seq))

    def _count_cooccurrence(self, pairs: Counter[tuple[int, int, int]], at: int) -> None:
        """Add each pair's count; ``at``: the time in microseconds (see times.py)."""
        if self.buffers_link_counts:
            self._append_pending(
                [(layer, a, b, n, at, None, None) for (layer, a, b), n in pairs.items()]
            )
            return
        # One upsert per pair: the increment happens inside the statement, so two
        # writers can never read the same count and both write count + 1. Key order
        # keeps consecutive upserts on neighbouring B-tree pages.
        self._conn.executemany(
            "INSERT INTO links (scope_id, a, b, weight, count, updated_at) VALUES (?,?,?,?,?,?)"
            " ON CONFLICT (scope_id, a, b) DO UPDATE SET weight = links.weight + excluded.count,"
            " count = links.count + excluded.count, updated_at = excluded.updated_at",
            [(layer, a, b, n, n, at) for (layer, a, b), n in sorted(pairs.items())],
        )

    def _append_pending(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Append link changes (layer, a, b, count, at, weight moved by feedback,
        outcome) to the pending list, and fold it once it is long enough. The last two
        are None on co-occurrence rows."""
        self._conn.executemany(
            "INSERT INTO pending_links (scope_id, a, b, count, at, moved, outcome)"
            " VALUES (?,?,?,?,?,?,?)",
            rows,
        )
        first, last, links = self._pending_span()
        if first is not None and last - first + 1 >= pending_links.fold_at(links):
            self._fold_links()

    def _pending_span(self) -> tuple[int | None, int, int]:
        """First and last id of the pending rows, and the rows `links` held at the last fold."""
        # One subquery each: SQLite answers a lone MIN or MAX of the key from the
        # B-tree's edge, but both in one SELECT scan the table.
        first, last, links = self._query(
            "SELECT (SELECT MIN(id) FROM pending_links), (SELECT MAX(id) FROM pending_links),"
            " (SELECT value FROM store_info WHERE key = 'links_at_fold')"
        )[0]
        return first, last or 0, int(links or 0)

    def _fold_links(self) -> None:
        """Fold every pending count into `links`, inside the caller's write transaction
        (which excludes every other writer), then empty the pending list."""
        if not self.buffers_link_counts:
            return
        self._conn.execute(
            "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
            " updated_at) SELECT scope_id, a, b, SUM(count) + TOTAL(moved), SUM(count),"
            " TOTAL(outcome), COUNT(outcome), MAX(at) FROM pending_links"
            " WHERE true GROUP BY scope_id, a, b ORDER BY scope_id, a, b"
            " ON CONFLICT (scope_id, a, b) DO UPDATE SET weight = links.weight + excluded.weight,"
            " count = links.count + excluded.count,"
            " outcome_sum = links.outcome_sum + excluded.outcome_sum,"
            " feedback_count = links.feedback_count + excluded.feedback_count,"
            " updated_at = MAX(links.updated_at, excluded.updated_at)"
        )
        self._conn.execute("DELETE FROM pending_links")
        self._conn.execute(
            "INSERT INTO store_info (key, value) SELECT 'links_at_fold', COUNT(*) FROM links"
            " WHERE true ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        self._pending_links.clear()

    def _pending(self) -> PendingLinks:
        """This connection's copy of `pending_links`, brought up to date. Call inside a
        snapshot or transaction, so it agrees with what the same read sees of `links`."""
        pending = self._pending_links
        if not self.buffers_link_counts:
            return pending
        first, last, _ = self._pending_span()
        if first is None or first != pending.first or last < pending.last:
            pending.clear()  # empty, or folded since the copy was made
        if first is not None and last > pending.last:
            with self._lock:  # rows streamed from the cursor, never all in one list
                pending.add(
                    self._conn.execute(
                        "SELECT id, scope_id, a, b, count, moved, outcome"
                        " FROM pending_links WHERE id > ? ORDER BY id",
                        [pending.last],
                    )
                )
        return pending

    @translated
    def intern_concepts(self, names: Sequence[str]) -> dict[str, int]:
        cache, pending = self._concept_cache, self._pending_concepts
        missing = [n for n in dict.fromkeys(names) if n not in cache and n not in pending]
        if missing:
            with self.transaction():
                self._conn.executemany(
                    "INSERT INTO concepts (name) VALUES (?) ON CONFLICT DO NOTHING",
                    [(n,) for n in missing],
                )
                pending.update(self._lookup_concepts(missing))
        return {n: cache[n] if n in cache else pending[n] for n in names}

    def _lookup_concepts(self, names: Sequence[str]) -> dict[str, int]:
        return dict(self._query_in("SELECT name, id FROM concepts WHERE name IN (?*)", names))

    @translated
    def adjust_links(
        self, scope: Scope, changes: Sequence[tuple[str, int, int, float]], outcome: float
    ) -> None:
        at = times.to_micros(times.now())
        with self.transaction():
            layers = {key: self._own_layer(scope, roles_of(key)) for key, *_ in changes}
            if self.buffers_link_counts:
                self._append_pending(
                    [(layers[key], a, b, 0, at, delta, outcome) for key, a, b, delta in changes]
                )
                return
            self._conn.executemany(
                "INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
                " updated_at) VALUES (?,?,?,?,0,?,1,?) ON CONFLICT (scope_id, a, b) DO UPDATE SET"
                " weight = links.weight + excluded.weight,"
                " outcome_sum = links.outcome_sum + excluded.outcome_sum,"
                " feedback_count = links.feedback_count + 1, updated_at = excluded.updated_at",
                [(layers[key], a, b, delta, outcome, at) for key, a, b, delta in sorted(changes)],
            )

    @translated
    def move_valence(self, seqs: Sequence[int], outcome: float, rate: float) -> None:
        with self.transaction():
            self._execute_in(
                "UPDATE memories SET valence = valence + ? * (? - valence) WHERE seq IN (?*)",
                seqs,
                before=[rate, outcome],
            )

    @translated
    def access_of(self, seqs: Sequence[int]) -> dict[int, str]:
        return dict(
            self._query_in(
                "SELECT m.seq, s.access FROM memories m JOIN scopes s ON s.id = m.scope_id"
                " WHERE m.seq IN (?*)",
                seqs,
            )
        )

    @translated
    def log_feedback(
        self,
        scope: Scope,
        access: str,
        ids: Sequence[str],
        concepts: Sequence[str],
        outcome: float,
    ) -> int:
        with self.transaction():
            (feedback_id,) = self._conn.execute(
                "INSERT INTO feedback (scope_id, query_concepts, outcome, created_at)"
                " VALUES (?,?,?,?) RETURNING id",
                (self._own_layer(scope, roles_of(access)), json.dumps(list(concepts)), outcome,
                 times.now()),
            ).fetchone()  # fmt: skip
            self._conn.executemany(
                "INSERT INTO feedback_items (feedback_id, memory_seq)"
                " SELECT ?, seq FROM memories WHERE id = ? ON CONFLICT DO NOTHING",
                [(feedback_id, memory_id) for memory_id in ids],
            )
            return int(feedback_id)

    # -- reads ----------------------------------------------------------------

    @translated
    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]:
        by_id = {
            r.id: r
            for r in self.records_by_seq(list(self.visible_seqs(scope, ids).values())).values()
        }
        return [by_id[i] for i in ids if i in by_id]

    @translated
    def visible_seqs(
        self, scope: Scope, ids: Sequence[str], statuses: Sequence[str] = ("active",)
    ) -> dict[str, int]:
        layers = self._layers(scope)
        if not layers:
            return {}
        return dict(
            self._query_in(
                f"SELECT id, seq FROM memories WHERE {in_list('scope_id', layers)}"
                f" AND {in_list('status', statuses)} AND id IN (?*)",
                ids,
                before=[*layers, *statuses],
            )
        )

    @translated
    def rank_fields(self, seqs: Sequence[int]) -> dict[int, RankFields]:
        rows = self._query_in(
            "SELECT seq, id, kind, value, valence, observed_at, accessed_at, text FROM memories"
            " WHERE seq IN (?*)",
            seqs,
        )
        return {seq: RankFields(*fields) for seq, *fields in rows}

    @translated
    def keyed_records(self, view: View, limit: int) -> list[Record]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            f"SELECT m.seq FROM memories m WHERE {where} AND {self._meta_is_array('m', 'key')}"
            f" AND {self._meta_is_array('m', 'value')} ORDER BY m.seq LIMIT ?",
            [*params, limit],
        )
        found = self.records_by_seq([seq for (seq,) in rows])
        return [found[seq] for (seq,) in rows]

    @translated
    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        rows = self._query_in(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE seq IN (?*)", seqs)
        concepts: dict[int, list[tuple[str, str]]] = {}
        for seq, name, form in self._query_in(
            "SELECT mc.memory_seq, c.name, mc.form FROM memory_concepts mc"
            " JOIN concepts c ON c.id = mc.concept_id"
            " WHERE mc.memory_seq IN (?*) ORDER BY mc.memory_seq, mc.position",
            seqs,
        ):
            concepts.setdefault(seq, []).append((name, form))
        return {row[0]: _record(row, concepts.get(row[0], [])) for row in rows}

    @translated
    def concept_ids(self, names: Sequence[str]) -> dict[str, int]:
        missing = [n for n in names if n not in self._concept_cache]
        if missing:
            self._concept_cache.update(self._lookup_concepts(missing))
        return {n: self._concept_cache[n] for n in names if n in self._concept_cache}

    @translated
    def concept_names(self, ids: Sequence[int]) -> dict[int, str]:
        return dict(self._query_in("SELECT id, name FROM concepts WHERE id IN (?*)", ids))

    @translated
    def concepts_of(self, seqs: Sequence[int]) -> dict[int, list[int]]:
        result: dict[int, list[int]] = {}
        for seq, concept in self._query_in(
            "SELECT memory_seq, concept_id FROM memory_concepts"
            " WHERE memory_seq IN (?*) ORDER BY memory_seq, position",
            seqs,
        ):
            result.setdefault(seq, []).append(concept)
        return result

    @translated
    def neighbors(
        self, scope: Scope, concept_ids: Sequence[int], *, min_weight: float, limit: int
    ) -> list[tuple[int, int, float]]:
        layers = self._layers(scope)
        if not layers:
            return []
        # If the summed weight over L layers reaches the threshold, one layer holds at
        # least threshold / L: scanning each layer from that floor loses no link.
        floor = min_weight / len(layers)
        found: dict[tuple[int, int], float] = {}
        with self.snapshot():
            pending = self._pending()
            for layer in layers:
                for concept in concept_ids:
                    for concept_is_a in (True, False):
                        side = self._strongest(layer, concept, concept_is_a, pending, floor, limit)
                        for other, weight in side.items():
                            found[(concept, other)] = found.get((concept, other), 0.0) + weight
            if len(layers) > 1:
                found = self._summed(scope, list(found))
        ranked = sorted(
            ((src, other, w) for (src, other), w in found.items() if w >= min_weight),
            key=lambda row: (-row[2], row[0], row[1]),
        )
        return ranked[:limit]

    def _strongest(
        self,
        layer: int,
        concept: int,
        concept_is_a: bool,
        pending: PendingLinks,
        floor: float,
        limit: int,
    ) -> dict[int, float]:
        """Up to ``limit`` of ``concept``'s strongest links in ``layer`` on one side (the
        pairs where it is the lower id, or the higher), pending counts included, at
        or above ``floor``: ``{other end: weight}``. Ties break on the other end's id,
        so the same links are chosen whether their counts are pending or folded."""
        near, far = ("a", "b") if concept_is_a else ("b", "a")
        side = pending.side(layer, concept, concept_is_a=concept_is_a)
        # Feedback may have lowered pending pairs: one more row per lowered pair keeps
        # `limit` rows whose weights nothing lowered.
        widened = limit + (side.lowered() if side else 0)
        rows = self._query(
            f"SELECT {far}, weight FROM links WHERE scope_id = ? AND {near} = ?"
            f" AND weight >= ? ORDER BY weight DESC, {far} LIMIT ?",
            [layer, concept, floor, widened],
        )
        if side is None:
            return dict(rows)
        if side.unresolved:  # pairs new since this side was last read: their weight in links
            for other, weight in rows:
                side.resolve(other, weight)
            unresolved = sorted({o for o in side.unresolved if side.pairs[o].stored is None})
            stored = dict(
                self._query_in(
                    f"SELECT {far}, weight FROM links WHERE scope_id = ? AND {near} = ?"
                    f" AND {far} IN (?*)",
                    unresolved,
                    before=[layer, concept],
                )
            )
            for other in unresolved:
                side.resolve(other, stored.get(other, 0.0))
            side.unresolved.clear()
        changed = side.pairs
        weights = {o: w + (p.weight if (p := changed.get(o)) else 0.0) for o, w in rows}
        # A pair the query did not return holds below the floor or (the query hit its
        # limit) at most the last weight returned, so with no pending change it ranks
        # below the limit-th weight so far; a pending pair joins if it reaches that.
        ranked = sorted(weights.values(), reverse=True)
        bar = max(floor, ranked[limit - 1]) if len(ranked) >= limit else floor
        for weight, other in side.ranked():
            if weight < bar:
                break
            weights.setdefault(other, weight)
        return {other: w for other, w in weights.items() if w >= floor}

    def _summed(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        ordered = [(min(s, o), max(s, o)) for s, o in pairs]
        sums = self.links_between(scope, ordered)
        return {(s, o): sums.get((min(s, o), max(s, o)), 0.0) for s, o in pairs}

    @translated
    def links_between(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        wanted, layers = set(pairs), self._layers(scope)
        if not wanted or not layers:
            return {}
        with self.snapshot():
            pending = self._pending()
            sums = {pair: row.weight for pair, row in self._rows_of(layers, list(wanted)).items()}
        for a, b in wanted if pending else ():
            for layer in layers:
                if change := pending.pair(layer, a, b):
                    sums[(a, b)] = sums.get((a, b), 0.0) + change.weight
        return sums

    @translated
    def links_around(self, scope: Scope, concept_ids: Sequence[int], limit: int) -> list[LinkRow]:
        layers = self._layers(scope)
        if not concept_ids or not layers:
            return []
        with self.snapshot():
            pending = self._pending()
            changes = pending.around(layers, concept_ids)
            # A pending change only lowers a pair by feedback; fetching one more row per
            # lowered pair keeps at least `limit` rows the query ranked truthfully.
            lowered = sum(sum(c.weight for c in change) < 0 for change in changes.values())
            rows = self._query(
                "SELECT a, b, SUM(weight) AS w, SUM(count), SUM(outcome_sum), SUM(feedback_count),"
                f" MAX(updated_at) FROM links WHERE {in_list('scope_id', layers)}"
                f" AND ({in_list('a', concept_ids)} OR {in_list('b', concept_ids)})"
                " GROUP BY a, b ORDER BY w DESC, a, b LIMIT ?",
                [*layers, *concept_ids, *concept_ids, limit + lowered],
            )
            links = {(a, b): _link_row(a, b, w, c, o, f, u) for a, b, w, c, o, f, u in rows}
            if changes:
                # A pair the query left out and nothing changed is weaker than `limit`
                # pairs it returned, so merging the pending pairs keeps the top exact.
                links.update(self._rows_of(layers, [p for p in changes if p not in links]))
                updated = self._pending_updated([c.last_row for cs in changes.values() for c in cs])
                for (a, b), change in changes.items():
                    row = links.get((a, b)) or LinkRow(a, b, 0.0, 0, 0.0, 0, "")
                    links[(a, b)] = LinkRow(
                        a, b,
                        row.weight + sum(c.weight for c in change),
                        row.count + sum(c.count for c in change),
                        row.outcome_sum + sum(c.outcome_sum for c in change),
                        row.feedback_count + sum(c.feedback_count for c in change),
                        max(row.updated_at, updated.get((a, b), "")),
                    )  # fmt: skip
        ranked = sorted(links.values(), key=lambda r: (-r.weight, r.a, r.b))[:limit]
        return [replace(row, weight=max(0.0, row.weight)) for row in ranked]

    def _rows_of(
        self, layers: Sequence[int], pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], LinkRow]:
        """The stored links of ``pairs``, summed over ``layers``."""
        found: dict[tuple[int, int], LinkRow] = {}
        for chunk in chunked(sorted(pairs)):  # two IN lists of at most CHUNK ids each
            firsts, seconds = sorted({a for a, _ in chunk}), sorted({b for _, b in chunk})
            wanted = set(chunk)
            for a, b, w, c, o, f, u in self._query(
                "SELECT a, b, SUM(weight), SUM(count), SUM(outcome_sum), SUM(feedback_count),"
                f" MAX(updated_at) FROM links WHERE {in_list('scope_id', layers)}"
                f" AND {in_list('a', firsts)} AND {in_list('b', seconds)} GROUP BY a, b",
                [*layers, *firsts, *seconds],
            ):
                if (a, b) in wanted:
                    found[(a, b)] = _link_row(a, b, w, c, o, f, u)
        return found

    def _pending_updated(self, row_ids: Sequence[int]) -> dict[tuple[int, int], str]:
        """When each pair of the pending rows ``row_ids`` was last counted."""
        latest: dict[tuple[int, int], int] = {}
        for a, b, at in self._query_in(
            "SELECT a, b, at FROM pending_links WHERE id IN (?*)", row_ids
        ):
            latest[(a, b)] = max(latest.get((a, b), at), at)
        return {pair: times.from_micros(at) for pair, at in latest.items()}

    @translated
    def memories_with_concepts(
        self,
        view: View,
        concept_ids: Sequence[int],
        *,
        per_concept: int,
        without: Sequence[int] = (),
    ) -> list[tuple[int, int]]:
        exclude = ""
        if without:
            exclude = (
                " AND NOT EXISTS (SELECT 1 FROM memory_concepts x WHERE x.scope_id = mc.scope_id"
                f" AND {in_list('x.concept_id', without)} AND x.memory_seq = mc.memory_seq)"
            )
        visible, params = self._view_sql(view, self._layers(view.scope), "m")
        found: list[tuple[int, int]] = []
        for concept in concept_ids:
            newest: list[int] = []
            for layer in self._layers(view.scope):
                newest += [
                    seq
                    for (seq,) in self._query(
                        "SELECT mc.memory_seq FROM memory_concepts mc"
                        f" JOIN memories m ON m.seq = mc.memory_seq AND {visible}"
                        f" WHERE mc.scope_id = ? AND mc.concept_id = ?{exclude}"
                        " ORDER BY mc.memory_seq DESC LIMIT ?",
                        [*params, layer, concept, *without, per_concept],
                    )
                ]
            found += [(seq, concept) for seq in sorted(newest, reverse=True)[:per_concept]]
        return found

    @translated
    def visible(self, view: View, seqs: Sequence[int]) -> set[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query_in(
            f"SELECT m.seq FROM memories m WHERE {where} AND m.seq IN (?*)", seqs, before=params
        )
        return {seq for (seq,) in rows}

    @translated
    def thread_adjacency(
        self, view: View, seqs: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        layers = self._layers(view.scope)
        near, params = self._view_sql(view, layers, "n")
        rows = self._query_in(
            "SELECT m.seq,"
            f" (SELECT MAX(n.seq) FROM memories n WHERE n.scope_id = m.scope_id"
            f"  AND n.thread = m.thread AND n.seq < m.seq AND {near}),"
            f" (SELECT MIN(n.seq) FROM memories n WHERE n.scope_id = m.scope_id"
            f"  AND n.thread = m.thread AND n.seq > m.seq AND {near})"
            " FROM memories m WHERE m.thread IS NOT NULL AND m.seq IN (?*)",
            seqs,
            before=[*params, *params],
        )
        return {seq: (before, after) for seq, before, after in rows}

    @translated
    def size(self) -> int:
        return int(self._query("SELECT COALESCE(MAX(seq), 0) FROM memories")[0][0])

    @translated
    def fingerprint_matches(self, view: View, fingerprint: str, limit: int) -> list[int]:
        layers = self._layers(view.scope)
        where, params = self._view_sql(view, layers, "m")
        rows = self._query(
            f"SELECT m.seq FROM memories m WHERE m.fingerprint_key = ? AND m.fingerprint = ?"
            f" AND {where} ORDER BY m.seq DESC LIMIT ?",
            [fingerprint_key(fingerprint), fingerprint, *params, limit],
        )
        return [seq for (seq,) in rows]

    @translated
    def authors(self, scope: Scope) -> list[str]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT DISTINCT author FROM authors WHERE {in_list('scope_id', layers)}", layers
        )
        return sorted(author for (author,) in rows)

    @translated
    def thread_neighbors(
        self, view: View, seqs: Sequence[int], window: int
    ) -> dict[int, list[tuple[int, int]]]:
        where, params = self._view_sql(view, self._layers(view.scope), "n")
        found: dict[int, list[tuple[int, int]]] = {}
        for seq in seqs:
            for direction, order in ((">", "ASC"), ("<", "DESC")):
                rows = self._query(
                    "SELECT n.seq FROM memories m JOIN memories n"
                    " ON n.scope_id = m.scope_id AND n.thread = m.thread"
                    f" WHERE m.seq = ? AND n.seq {direction} m.seq AND {where}"
                    f" ORDER BY n.seq {order} LIMIT ?",
                    [seq, *params, window],
                )
                found.setdefault(seq, []).extend((n, d) for d, (n,) in enumerate(rows, start=1))
        return found

    @translated
    def touch(self, seqs: Sequence[int], when: str) -> None:
        with self.transaction():
            self._execute_in(
                "UPDATE memories SET accessed_at = ? WHERE seq IN (?*)", seqs, before=[when]
            )

    @translated
    def vector_rows(self, after: int) -> VectorRows:
        numpy = require_numpy()
        rows = self._query(
            "SELECT memory_seq, scope_id, vector FROM vectors WHERE memory_seq > ?"
            " ORDER BY memory_seq",
            [after],
        )
        dims = int(self.info("embedder_dims") or 0)
        matrix = numpy.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=numpy.float32)
        return VectorRows(
            seqs=[r[0] for r in rows],
            layers=[r[1] for r in rows],
            matrix=matrix.reshape(len(rows), dims) if dims else matrix.reshape(len(rows), -1),
        )

    @translated
    def vectors_of(self, seqs: Sequence[int]) -> dict[int, bytes]:
        rows = self._query_in(
            "SELECT memory_seq, vector FROM vectors WHERE memory_seq IN (?*)", seqs
        )
        return {seq: bytes(vector) for seq, vector in rows}

    @translated
    def missing_vectors(self, limit: int) -> list[tuple[int, int, str, str | None]]:
        rows = self._query(
            "SELECT m.seq, m.scope_id, m.text, m.author FROM memories m"
            " WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_seq = m.seq)"
            " ORDER BY m.seq LIMIT ?",
            [limit],
        )
        return [(seq, layer, text, author) for seq, layer, text, author in rows]

    @translated
    def add_vectors(self, rows: Sequence[tuple[int, int]], matrix: np.ndarray) -> None:
        with self.transaction():
            self._put_vectors([(seq, layer, matrix[i]) for i, (seq, layer) in enumerate(rows)])

    def _put_vectors(self, rows: Sequence[tuple[int, int, np.ndarray]]) -> None:
        """Store each ``(seq, layer, vector)``, replacing a memory's earlier vector
        (inside the caller's transaction)."""
        self._conn.executemany(
            "INSERT INTO vectors (memory_seq, scope_id, vector) VALUES (?,?,?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vector = excluded.vector,"
            " scope_id = excluded.scope_id",
            [(seq, layer, vector.tobytes()) for seq, layer, vector in rows],
        )

    @translated
    def info(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM store_info WHERE key = ?", [key])
        return str(rows[0][0]) if rows else None

    @translated
    def set_info(self, key: str, value: str) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO store_info (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    @translated
    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]:
        layers = self._layers(scope)
        if not layers:
            return []
        seqs = [
            seq
            for (seq,) in self._query(
                f"SELECT seq FROM memories WHERE {in_list('scope_id', layers)}"
                " AND status = 'active' AND seq > ? ORDER BY seq LIMIT ?",
                [*layers, after, limit],
            )
        ]
        found = self.records_by_seq(seqs)
        return [(seq, found[seq]) for seq in seqs]

    @translated
    def stats(self, scope: Scope) -> Stats:
        layers = self._layers(scope)
        if not layers:
            return Stats(0, 0, 0, 0, {}, {})
        where = in_list("scope_id", layers)
        by_kind: dict[str, int] = {}
        by_status: dict[str, int] = {}
        for kind, status, n in self._query(
            f"SELECT kind, status, COUNT(*) FROM memories WHERE {where} GROUP BY kind, status",
            layers,
        ):
            by_kind[kind] = by_kind.get(kind, 0) + n
            by_status[status] = by_status.get(status, 0) + n

        def count(sql: str, uses: int = 1) -> int:  # uses: how often `where` appears
            return int(self._query(sql, layers * uses)[0][0])

        return Stats(
            memories=sum(by_kind.values()),
            concepts=count(f"SELECT COUNT(DISTINCT concept_id) FROM memory_concepts WHERE {where}"),
            links=count(
                f"SELECT COUNT(*) FROM (SELECT a, b FROM links WHERE {where}"
                f" UNION SELECT a, b FROM pending_links WHERE {where}) AS pairs",
                uses=2,
            )
            if self.buffers_link_counts
            else count(
                f"SELECT COUNT(*) FROM (SELECT 1 FROM links WHERE {where} GROUP BY a, b) AS pairs"
            ),
            feedback=count(f"SELECT COUNT(*) FROM feedback WHERE {where}"),
            by_kind=by_kind,
            by_status=by_status,
        )

    # -- lifecycle --------------------------------------------------------------

    @translated
    def select(self, view: View, limit: int) -> list[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            f"SELECT m.seq FROM memories m WHERE {where} ORDER BY m.seq LIMIT ?", [*params, limit]
        )
        return [seq for (seq,) in rows]

    @translated
    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None:
        changes = [
            (column, value)
            for column, value in (
                ("status", status),
                ("protected", protected),
                ("recheck_by", recheck_by),
            )  # fmt: skip
            if value is not None
        ]
        if not changes:
            return
        assignments = ", ".join(f"{column} = ?" for column, _ in changes)  # allow-listed names
        with self.transaction():
            self._execute_in(
                f"UPDATE memories SET {assignments} WHERE seq IN (?*)",
                seqs,
                before=[int(v) if isinstance(v, bool) else v for _, v in changes],
            )

    @translated
    def key_history(self, scope: Scope, subject: str, relation: str) -> list[int]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT seq FROM memories WHERE {in_list('scope_id', layers)} AND key_subject = ?"
            " AND key_relation = ? ORDER BY observed_at, seq",
            [*layers, subject, relation],
        )
        return [seq for (seq,) in rows]

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except self.driver_errors:  # pragma: no cover - close never fails in practice
                pass


def _record(row: Sequence[Any], concepts: list[tuple[str, str]]) -> Record:
    (
        _seq, id_, agent, project, channel, text, kind, tags, value, meta, source, observed,
        version, verified, vscope, recheck, confidence, access, key_s, key_r, derived, status,
        protected, valence, created, author, thread, accessed, task, canonical,
    ) = row  # fmt: skip
    return Record(
        id=id_,
        text=text,
        agent_id=agent,
        project_id=project,
        channel=channel,
        kind=kind,
        concepts=tuple(name for name, _ in concepts),
        concept_forms=tuple(form for _, form in concepts),
        tags=tuple(json.loads(tags)),
        value=value,
        meta=json.loads(meta),
        source=source,
        observed_at=observed,
        version=version,
        verified_at=verified,
        verification_scope=vscope,
        recheck_by=recheck,
        confidence=confidence,
        access=tuple(json.loads(access)),
        key=(key_s, key_r) if key_s is not None else None,
        derived_from=tuple(json.loads(derived)),
        status=status,
        protected=bool(protected),
        valence=valence,
        created_at=created,
        author=author,
        thread=thread,
        accessed_at=accessed,
        task=task,
        source_canonical=canonical,
    )
