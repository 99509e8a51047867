"""SQLite backend: one file (or ``:memory:``), WAL, every write under BEGIN IMMEDIATE.

Invariants: many processes may write one file at once and no write, link
increment or feedback is lost, because every read-modify-write runs inside
BEGIN IMMEDIATE (one writer at a time, waiting up to the busy timeout) and
increments are single upsert statements. Every value is a bound parameter;
identifiers come only from constants in this module. sqlite3 exceptions are
translated to the `AssocmemError` tree before they leave.
"""

from __future__ import annotations

import functools
import itertools
import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from .. import times
from ..errors import (
    AssocmemError,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from ..records import NewMemory
from ..types import Record, Scope, Stats, WriteResult
from .base import LinkRow, Store, new_id
from .migrations import migrations

# How long a writer waits for another process's transaction before StoreBusy.
# Generous: a busy store should slow writers down, not drop their writes.
BUSY_TIMEOUT_S = 30.0
# Parameters per IN (...) list; SQLite allows 32766, smaller chunks keep plans simple.
_CHUNK = 500
_SYNCHRONOUS = {"off": "OFF", "normal": "NORMAL", "full": "FULL"}

_MEMORY_COLUMNS = (
    "seq, id, agent_id, project_id, channel, text, kind, tags, value, meta, source, "
    "observed_at, version, verified_at, verification_scope, recheck_by, confidence, access, "
    "key_subject, key_relation, derived_from, status, protected, valence, created_at"
)

P = ParamSpec("P")
R = TypeVar("R")


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


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            raise translate(exc) from exc

    return wrapper


def _chunks(values: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _scope_sql(scope: Scope, alias: str) -> tuple[str, list[Any]]:
    """The scope predicate for a table carrying agent/project/channel columns."""
    projects, channels = scope.readable_projects, scope.readable_channels
    sql = (
        f"{alias}.agent_id = ? AND {alias}.project_id IN ({_marks(len(projects))})"
        f" AND {alias}.channel IN ({_marks(len(channels))})"
    )
    return sql, [scope.agent_id, *projects, *channels]


class SQLiteStore(Store):
    """A store in one SQLite file.

    Parameters:
        path: file path, created if missing, or ``:memory:``.
        synchronous: ``"normal"`` (default; WAL keeps every committed transaction
            across a process crash, a power loss may drop the last few) or
            ``"full"`` (also survives power loss, at one fsync per commit).
    """

    def __init__(self, path: str, *, synchronous: str = "normal") -> None:
        if synchronous not in _SYNCHRONOUS:
            raise StoreError(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}")
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0
        self._concept_cache: dict[str, int] = {}
        # Concepts created inside the open transaction: cached only once it commits,
        # or a rolled-back id could be handed out again for another name.
        self._pending_concepts: dict[str, int] = {}
        try:
            self._conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open store {path!r}: {exc}") from exc
        try:
            self._configure(_SYNCHRONOUS[synchronous])
            self._migrate()
        except sqlite3.Error as exc:
            self._conn.close()
            raise translate(exc) from exc
        except AssocmemError:
            self._conn.close()
            raise

    def _configure(self, synchronous: str) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache
        conn.execute("PRAGMA mmap_size = 268435456")  # 256 MiB of the file mapped

    def _migrate(self) -> None:
        with self.transaction():
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {r[0] for r in self._conn.execute("SELECT name FROM schema_migrations")}
            known = migrations("sqlite")
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

    # -- transactions ---------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE at the outermost level, a savepoint when nested."""
        with self._lock:
            level = self._depth
            try:
                self._conn.execute("BEGIN IMMEDIATE" if level == 0 else f"SAVEPOINT s{level}")
            except sqlite3.Error as exc:
                raise translate(exc) from exc
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
            except sqlite3.Error as exc:
                self._undo(level)
                raise translate(exc) from exc
            if level == 0:
                self._concept_cache.update(self._pending_concepts)
                self._pending_concepts.clear()

    def _undo(self, level: int) -> None:
        if level == 0:
            self._pending_concepts.clear()
        try:
            if level == 0:
                self._conn.execute("ROLLBACK")
            else:
                self._conn.execute(f"ROLLBACK TO s{level}")
                self._conn.execute(f"RELEASE s{level}")
        except sqlite3.Error:
            pass  # the transaction is already gone (SQLite rolled it back itself)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction, so a multi-query read sees one consistent state."""
        with self._lock:
            if self._depth:
                yield
                return
            try:
                self._conn.execute("BEGIN")
            except sqlite3.Error as exc:
                raise translate(exc) from exc
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                try:
                    self._conn.execute("COMMIT")
                except sqlite3.Error:
                    self._conn.execute("ROLLBACK")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # -- writes ---------------------------------------------------------------

    @_translated
    def write(self, scope: Scope, memories: Sequence[NewMemory]) -> list[WriteResult]:
        now = times.now()
        with self.transaction():
            results, stored = [], []
            for memory in memories:
                result, seq = self._insert_memory(scope, memory, now)
                results.append(result)
                if seq is not None:
                    stored.append((seq, memory))
            ids = self.intern_concepts([n for _, m in stored for n, _ in m.concepts])
            self._conn.executemany(
                "INSERT INTO memory_concepts (agent_id, concept_id, memory_seq, project_id,"
                " channel, position, form) VALUES (?,?,?,?,?,?,?)",
                [
                    (scope.agent_id, ids[name], seq, scope.project_id, scope.channel, pos, form)
                    for seq, memory in stored
                    for pos, (name, form) in enumerate(memory.concepts)
                ],
            )
            pairs: Counter[tuple[int, int]] = Counter()
            for _, memory in stored:
                pairs.update(itertools.combinations(sorted(ids[n] for n, _ in memory.concepts), 2))
            self._count_cooccurrence(scope, pairs, now)
            return results

    def _insert_memory(
        self, scope: Scope, memory: NewMemory, now: str
    ) -> tuple[WriteResult, int | None]:
        memory_id = new_id()
        row = self._conn.execute(
            "INSERT INTO memories (id, agent_id, project_id, channel, text, kind, tags, value,"
            " meta, source, observed_at, version, verified_at, verification_scope, recheck_by,"
            " confidence, access, key_subject, key_relation, derived_from, protected,"
            " fingerprint, dedupe_key, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (agent_id, project_id, channel, dedupe_key) DO NOTHING RETURNING seq",
            (
                memory_id, scope.agent_id, scope.project_id, scope.channel, memory.text,
                memory.kind, json.dumps(memory.tags), memory.value, memory.meta_json,
                memory.source, memory.observed_at, memory.version, memory.verified_at,
                memory.verification_scope, memory.recheck_by, memory.confidence,
                json.dumps(memory.access), memory.key[0] if memory.key else None,
                memory.key[1] if memory.key else None, json.dumps(memory.derived_from),
                int(memory.protected), memory.fingerprint, memory.dedupe_key, now,
            ),
        ).fetchone()  # fmt: skip
        if row is not None:
            names = tuple(n for n, _ in memory.concepts)
            return WriteResult(id=memory_id, stored=True, concepts=names), row[0]
        (existing,) = self._conn.execute(
            "SELECT id FROM memories WHERE agent_id = ? AND project_id = ? AND channel = ?"
            " AND dedupe_key = ?",
            (scope.agent_id, scope.project_id, scope.channel, memory.dedupe_key),
        ).fetchone()
        return WriteResult(id=existing, stored=False, reason="duplicate"), None

    def _count_cooccurrence(self, scope: Scope, pairs: Counter[tuple[int, int]], now: str) -> None:
        # One upsert per pair: the increment happens inside the statement, so two
        # writers can never read the same count and both write count + 1.
        self._conn.executemany(
            "INSERT INTO links (agent_id, project_id, channel, a, b, weight, count, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (agent_id, project_id, channel, a, b)"
            " DO UPDATE SET weight = weight + excluded.count, count = count + excluded.count,"
            " updated_at = excluded.updated_at",
            [
                (scope.agent_id, scope.project_id, scope.channel, a, b, n, n, now)
                for (a, b), n in pairs.items()
            ],
        )

    @_translated
    def intern_concepts(self, names: Sequence[str]) -> dict[str, int]:
        cache, pending = self._concept_cache, self._pending_concepts
        missing = [n for n in dict.fromkeys(names) if n not in cache and n not in pending]
        if missing:
            with self.transaction():
                self._conn.executemany(
                    "INSERT OR IGNORE INTO concepts (name) VALUES (?)", [(n,) for n in missing]
                )
                pending.update(self._lookup_concepts(missing))
        return {n: cache[n] if n in cache else pending[n] for n in names}

    def _lookup_concepts(self, names: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for chunk in _chunks(list(names)):
            rows = self._query(
                f"SELECT name, id FROM concepts WHERE name IN ({_marks(len(chunk))})", chunk
            )
            found.update(dict(rows))
        return found

    @_translated
    def adjust_links(
        self, scope: Scope, changes: Sequence[tuple[int, int, float]], outcome: float
    ) -> None:
        now = times.now()
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO links (agent_id, project_id, channel, a, b, weight, count,"
                " outcome_sum, feedback_count, updated_at) VALUES (?,?,?,?,?,?,0,?,1,?)"
                " ON CONFLICT (agent_id, project_id, channel, a, b) DO UPDATE SET"
                " weight = weight + excluded.weight,"
                " outcome_sum = outcome_sum + excluded.outcome_sum,"
                " feedback_count = feedback_count + 1, updated_at = excluded.updated_at",
                [
                    (scope.agent_id, scope.project_id, scope.channel, a, b, delta, outcome, now)
                    for a, b, delta in changes
                ],
            )

    @_translated
    def move_valence(self, seqs: Sequence[int], outcome: float, rate: float) -> None:
        with self.transaction():
            for chunk in _chunks(list(seqs)):
                self._conn.execute(
                    f"UPDATE memories SET valence = valence + ? * (? - valence)"
                    f" WHERE seq IN ({_marks(len(chunk))})",
                    [rate, outcome, *chunk],
                )

    @_translated
    def log_feedback(
        self, scope: Scope, ids: Sequence[str], concepts: Sequence[str], outcome: float
    ) -> int:
        with self.transaction():
            cursor = self._conn.execute(
                "INSERT INTO feedback (agent_id, project_id, channel, memory_ids, query_concepts,"
                " outcome, created_at) VALUES (?,?,?,?,?,?,?)",
                (
                    scope.agent_id, scope.project_id, scope.channel, json.dumps(list(ids)),
                    json.dumps(list(concepts)), outcome, times.now(),
                ),
            )  # fmt: skip
            return int(cursor.lastrowid or 0)

    # -- reads ----------------------------------------------------------------

    @_translated
    def records(self, scope: Scope, ids: Sequence[str]) -> list[Record]:
        by_id = {
            r.id: r
            for r in self.records_by_seq(list(self.visible_seqs(scope, ids).values())).values()
        }
        return [by_id[i] for i in ids if i in by_id]

    @_translated
    def visible_seqs(self, scope: Scope, ids: Sequence[str]) -> dict[str, int]:
        where, params = _scope_sql(scope, "m")
        found: dict[str, int] = {}
        for chunk in _chunks(list(ids)):
            rows = self._query(
                f"SELECT m.id, m.seq FROM memories m WHERE {where}"
                f" AND m.status = 'active' AND m.id IN ({_marks(len(chunk))})",
                [*params, *chunk],
            )
            found.update(dict(rows))
        return found

    @_translated
    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        rows: list[Any] = []
        concepts: dict[int, list[tuple[str, str]]] = {}
        for chunk in _chunks(list(seqs)):
            marks = _marks(len(chunk))
            rows += self._query(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE seq IN ({marks})", chunk
            )
            for seq, name, form in self._query(
                "SELECT mc.memory_seq, c.name, mc.form FROM memory_concepts mc"
                " JOIN concepts c ON c.id = mc.concept_id"
                f" WHERE mc.memory_seq IN ({marks}) ORDER BY mc.memory_seq, mc.position",
                chunk,
            ):
                concepts.setdefault(seq, []).append((name, form))
        return {row[0]: _record(row, concepts.get(row[0], [])) for row in rows}

    @_translated
    def concept_ids(self, names: Sequence[str]) -> dict[str, int]:
        missing = [n for n in names if n not in self._concept_cache]
        if missing:
            self._concept_cache.update(self._lookup_concepts(missing))
        return {n: self._concept_cache[n] for n in names if n in self._concept_cache}

    @_translated
    def concept_names(self, ids: Sequence[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for chunk in _chunks(list(ids)):
            rows = self._query(
                f"SELECT id, name FROM concepts WHERE id IN ({_marks(len(chunk))})", chunk
            )
            found.update(dict(rows))
        return found

    @_translated
    def concepts_of(self, seqs: Sequence[int]) -> dict[int, list[int]]:
        result: dict[int, list[int]] = {}
        for chunk in _chunks(list(seqs)):
            for seq, concept in self._query(
                "SELECT memory_seq, concept_id FROM memory_concepts"
                f" WHERE memory_seq IN ({_marks(len(chunk))}) ORDER BY memory_seq, position",
                chunk,
            ):
                result.setdefault(seq, []).append(concept)
        return result

    @_translated
    def neighbors(
        self, scope: Scope, concept_ids: Sequence[int], *, min_weight: float, limit: int
    ) -> list[tuple[int, int, float]]:
        layers = [(p, c) for p in scope.readable_projects for c in scope.readable_channels]
        # If the summed weight over L layers reaches the threshold, one layer holds at
        # least threshold / L: scanning each layer from that floor loses no link.
        floor = min_weight / len(layers)
        found: dict[tuple[int, int], float] = {}
        for project, channel in layers:
            for concept in concept_ids:
                for near, far in (("a", "b"), ("b", "a")):
                    rows = self._query(
                        f"SELECT {far}, weight FROM links WHERE agent_id = ? AND project_id = ?"
                        f" AND channel = ? AND {near} = ? AND weight >= ?"
                        " ORDER BY weight DESC LIMIT ?",
                        [scope.agent_id, project, channel, concept, floor, limit],
                    )
                    for other, weight in rows:
                        found[(concept, other)] = found.get((concept, other), 0.0) + weight
        if len(layers) > 1:
            found = self._summed(scope, list(found))
        ranked = sorted(
            ((src, other, w) for (src, other), w in found.items() if w >= min_weight),
            key=lambda row: (-row[2], row[0], row[1]),
        )
        return ranked[:limit]

    def _summed(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        ordered = [(min(s, o), max(s, o)) for s, o in pairs]
        sums = self.links_between(scope, ordered)
        return {(s, o): sums.get((min(s, o), max(s, o)), 0.0) for s, o in pairs}

    @_translated
    def links_between(
        self, scope: Scope, pairs: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], float]:
        wanted = set(pairs)
        if not wanted:
            return {}
        where, params = _scope_sql(scope, "l")
        firsts = sorted({a for a, _ in wanted})
        seconds = sorted({b for _, b in wanted})
        rows = self._query(
            f"SELECT l.a, l.b, SUM(l.weight) FROM links l WHERE {where}"
            f" AND l.a IN ({_marks(len(firsts))}) AND l.b IN ({_marks(len(seconds))})"
            " GROUP BY l.a, l.b",
            [*params, *firsts, *seconds],
        )
        return {(a, b): float(w) for a, b, w in rows if (a, b) in wanted}

    @_translated
    def links_around(self, scope: Scope, concept_ids: Sequence[int], limit: int) -> list[LinkRow]:
        if not concept_ids:
            return []
        where, params = _scope_sql(scope, "l")
        marks = _marks(len(concept_ids))
        rows = self._query(
            "SELECT l.a, l.b, SUM(l.weight) AS w, SUM(l.count), SUM(l.outcome_sum),"
            " SUM(l.feedback_count), MAX(l.updated_at) FROM links l"
            f" WHERE {where} AND (l.a IN ({marks}) OR l.b IN ({marks}))"
            " GROUP BY l.a, l.b ORDER BY w DESC, l.a, l.b LIMIT ?",
            [*params, *concept_ids, *concept_ids, limit],
        )
        return [
            LinkRow(a, b, max(0.0, float(w)), int(c), float(o), int(f), u)
            for a, b, w, c, o, f, u in rows
        ]

    @_translated
    def memories_with_concepts(
        self,
        scope: Scope,
        concept_ids: Sequence[int],
        *,
        per_concept: int,
        without: Sequence[int] = (),
    ) -> list[tuple[int, int]]:
        where, params = _scope_sql(scope, "mc")
        exclude, exclude_params = "", []
        if without:
            exclude = (
                " AND NOT EXISTS (SELECT 1 FROM memory_concepts x WHERE x.agent_id = mc.agent_id"
                f" AND x.concept_id IN ({_marks(len(without))}) AND x.memory_seq = mc.memory_seq)"
            )
            exclude_params = list(without)
        found: list[tuple[int, int]] = []
        for concept in concept_ids:
            rows = self._query(
                "SELECT mc.memory_seq FROM memory_concepts mc"
                " JOIN memories m ON m.seq = mc.memory_seq AND m.status = 'active'"
                f" WHERE {where} AND mc.concept_id = ?{exclude}"
                " ORDER BY mc.memory_seq DESC LIMIT ?",
                [*params, concept, *exclude_params, per_concept],
            )
            found += [(seq, concept) for (seq,) in rows]
        return found

    @_translated
    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]:
        where, params = _scope_sql(scope, "m")
        seqs = [
            seq
            for (seq,) in self._query(
                f"SELECT m.seq FROM memories m WHERE {where} AND m.status = 'active'"
                " AND m.seq > ? ORDER BY m.seq LIMIT ?",
                [*params, after, limit],
            )
        ]
        found = self.records_by_seq(seqs)
        return [(seq, found[seq]) for seq in seqs]

    @_translated
    def stats(self, scope: Scope) -> Stats:
        where, params = _scope_sql(scope, "m")
        by_kind: dict[str, int] = {}
        by_status: dict[str, int] = {}
        for kind, status, n in self._query(
            f"SELECT m.kind, m.status, COUNT(*) FROM memories m WHERE {where}"
            " GROUP BY m.kind, m.status",
            params,
        ):
            by_kind[kind] = by_kind.get(kind, 0) + n
            by_status[status] = by_status.get(status, 0) + n
        link_where, _ = _scope_sql(scope, "l")
        (links,) = self._query(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM links l WHERE {link_where} GROUP BY l.a, l.b)",
            params,
        )[0]
        mc_where, _ = _scope_sql(scope, "mc")
        (concepts,) = self._query(
            f"SELECT COUNT(DISTINCT mc.concept_id) FROM memory_concepts mc WHERE {mc_where}",
            params,
        )[0]
        fb_where, _ = _scope_sql(scope, "f")
        (feedback,) = self._query(f"SELECT COUNT(*) FROM feedback f WHERE {fb_where}", params)[0]
        return Stats(
            memories=sum(by_kind.values()),
            concepts=concepts,
            links=links,
            feedback=feedback,
            by_kind=by_kind,
            by_status=by_status,
        )

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:  # pragma: no cover - close never fails in practice
                pass


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


def _record(row: Sequence[Any], concepts: list[tuple[str, str]]) -> Record:
    (
        _seq, id_, agent, project, channel, text, kind, tags, value, meta, source, observed,
        version, verified, vscope, recheck, confidence, access, key_s, key_r, derived, status,
        protected, valence, created,
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
    )
