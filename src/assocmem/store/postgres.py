"""PostgreSQL backend (the ``postgres`` extra): the shared SQL on psycopg 3.

Invariants: a write transaction first takes a database-wide advisory lock, so
writers on any connection, in any process, on any machine, run one at a time
exactly as SQLite's BEGIN IMMEDIATE makes them: every read-modify-write of the
shared SQL (feedback's clamp, supersession, deduplication) is safe, and
increments stay single upserts. Migrations are applied under a session advisory
lock, so two servers starting together migrate once. Full text is a generated
``tsvector`` with a GIN index; vectors use pgvector's HNSW index when the
extension can be created, and the portable numpy index otherwise.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from assocmem.errors import (
    AssocmemError,
    DependencyMissing,
    SchemaTooNew,
    StoreBusy,
    StoreError,
    StoreUnavailable,
)
from assocmem.schema import Condition
from assocmem.store import lexical
from assocmem.store.connection import snapshot_checks
from assocmem.store.core import SQLStore
from assocmem.store.lexical import common_terms
from assocmem.store.migrations import migrations
from assocmem.store.params import KEYED, id_array, padded, translated
from assocmem.store.parts import tables
from assocmem.store.protocol import View
from assocmem.store.records import MEMORY_COLUMNS, record_from_row
from assocmem.store.refold import is_current, refold_once
from assocmem.store.rows import read_form
from assocmem.store.vacuums import Vacuumer
from assocmem.store.where_postgres import condition_sql
from assocmem.text import times
from assocmem.types import Record, WriteResult

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import numpy as np

try:
    import psycopg
    from psycopg import errors
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissing("the PostgreSQL store needs `pip install assocmem[postgres]`") from exc

# Advisory lock keys (arbitrary, fixed): one for writers, one for migrations.
WRITE_LOCK = 7_340_001
MIGRATION_LOCK = 7_340_002
# How long a statement may wait for a lock before StoreBusy, like SQLite's busy timeout.
LOCK_TIMEOUT = "30s"
TEXT_SEARCH_CONFIG = "english"
# The writer refreshes planner statistics itself once a table has doubled since they
# were taken (and has 50 rows, autovacuum's own threshold): autovacuum runs on a timer,
# and until it does a freshly filled table is planned as if empty (nested loops over
# whole tables, tens of times slower reads). Plan choices flip at order-of-magnitude
# changes in row counts; doubling keeps the ANALYZEs of a growing store logarithmic in
# its size, and autovacuum still refines in between.
ANALYZE_GROWTH = 1.0
ANALYZE_MIN_ROWS = 50
# The engine's tables a forget deletes rows from, and those every write grows (the
# parts add theirs: `forget_tables`, `grown_tables`).
FORGET_TABLES = ("memories", "memory_concepts", "concepts", "authors", "lexical_layers",
                 "lexical_terms")  # fmt: skip
GROWN_TABLES = ("memories", "memory_concepts")


class _Connection:
    """A psycopg connection speaking the shared SQL's ``?`` placeholders, reopened
    when the server drops it (a restart, a failover, an idle timeout).

    A dropped connection is replaced only between transactions: a statement inside
    a transaction whose connection died fails (the transaction is gone), and the
    ``BEGIN`` of the next transaction, which has no effect to repeat, is retried
    once on a fresh connection.
    """

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]]) -> None:
        self._connect = connect
        self.raw = connect()
        self._in_transaction = False
        # Inside a read snapshot: statements not marked KEYED are planned per call.
        self.plan_per_call = False

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        begins = sql.startswith("BEGIN")
        if self.raw.closed:
            if sql == "ROLLBACK":
                self._in_transaction = False
                return self.raw  # nothing to undo: the server already discarded it
            if self._in_transaction and not begins:
                raise psycopg.OperationalError("the connection was lost mid-transaction")
            self.raw = self._connect()
        try:
            cursor = self._run(sql, params)
        except psycopg.OperationalError:
            if not (begins and self.raw.closed):
                raise
            self.raw = self._connect()
            cursor = self._run(sql, params)
        if begins:
            self._in_transaction = True
        elif sql in ("COMMIT", "ROLLBACK"):
            self._in_transaction = False
        return cursor

    def _run(self, sql: str, params: Sequence[Any]) -> Any:
        if not params:
            return self.raw.execute(sql)
        # An unnamed statement is planned for the values bound to it; a prepared one
        # (psycopg prepares a statement once it has run a few times) may settle on
        # one generic plan for all values.
        prepare = False if self.plan_per_call and not sql.startswith(KEYED) else None
        return self.raw.execute(_placeholders(sql), list(params), prepare=prepare)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        rows = list(rows)
        cursor = self.raw.cursor()
        if rows:
            cursor.executemany(_placeholders(sql), rows)
        return cursor

    def close(self) -> None:
        self.raw.close()


def _placeholders(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresStore(SQLStore):
    """A store in a PostgreSQL database.

    Parameters:
        url: a ``postgresql://`` connection URL.
    """

    dialect = "postgres"
    driver_errors = (psycopg.Error,)
    # Reads plan each statement for its own parameters (see `_Connection._run`):
    # concept and term frequencies are Zipf-skewed, and one generic prepared plan
    # cannot serve a hub concept and a rare one (measured: a generic anti-join plan
    # read a hub's 67k rows per candidate). Statements marked KEYED keep prepared
    # plans, as writes do: those that find rows by unique keys, and the concept and
    # neighbour walks, whose plan has one shape for every value. Replanning each of
    # them cost more than running it.
    # JIT is off for reads: their statements run in milliseconds, and compiling one
    # (jit_above_cost is reached by planner estimates, not run time) costs tens.
    snapshot_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ; SET LOCAL jit = off"

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        outermost = not self._depth
        with super().snapshot():
            if outermost:
                self._conn.plan_per_call = True
            try:
                yield
            finally:
                if outermost:
                    self._conn.plan_per_call = False

    def __init__(self, url: str) -> None:
        self.path = url
        self._init_state()
        parts = self.parts()
        self._forget_tables = (*FORGET_TABLES, *tables(parts, "forget_tables"))
        self._grown_tables = (*GROWN_TABLES, *tables(parts, "grown_tables"))
        # What every read checks first, sent with its BEGIN: a round trip each would
        # cost as much as running them. Scopes are only ever inserted, by one writer at
        # a time (the advisory lock), so the newest id names the scope rows a snapshot
        # sees. Tables that many stores never fill (no feedback taught, no trust marks,
        # no authors named) are checked for a first row, so a read of such a store
        # skips asking them.
        self._snapshot_checks = snapshot_checks(
            "(SELECT max(id) FROM scopes)", self._skipped_when_empty
        )
        self.native_vectors = False
        self._written_since_analyze = 0
        self._analyzed_rows = 0  # until the planner is asked, once migrated
        self._unsettled = 0  # rows written, not yet counted at a commit
        self._vacuumer: Vacuumer | None = None
        try:
            self._conn = _Connection(self._connect)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot connect to PostgreSQL: {_redact(exc)}") from exc
        try:
            self._migrate()
            self._refold()
            self.native_vectors = self._enable_pgvector()
            if self.native_vectors:  # settings of the connection already open
                self._conn.raw.execute("SET hnsw.iterative_scan = relaxed_order")
            self._analyzed_rows = self._planned_rows()
        except psycopg.Error as exc:
            self._conn.close()
            raise self.translate(exc) from exc
        except AssocmemError:
            self._conn.close()
            raise
        # Its connections need none of this store's session settings, and holding
        # none of its methods, it lets a store dropped without close be collected
        # (and then stops its thread).
        self._vacuumer = Vacuumer(
            partial(psycopg.connect, url, autocommit=True), self._analyzed_rows
        )
        weakref.finalize(self, self._vacuumer.close)

    def close(self) -> None:
        self._close_parts()
        if self._vacuumer is not None:
            self._vacuumer.close()
        super().close()

    def _connect(self) -> psycopg.Connection[Any]:
        """A new autocommit connection with this store's session settings."""
        raw = psycopg.connect(self.path, autocommit=True)
        raw.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        if self.native_vectors:
            # pgvector 0.8: keep scanning the index until enough rows pass the filters.
            raw.execute("SET hnsw.iterative_scan = relaxed_order")
        return raw

    def _migrate(self) -> None:
        raw = self._conn.raw
        raw.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
        try:
            raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {r[0] for r in raw.execute("SELECT name FROM schema_migrations")}
            known = migrations("postgres", self.migration_packages())
            unknown = applied - {name for name, _ in known}
            if unknown:
                raise SchemaTooNew(
                    f"this database has migrations this assocmem does not know "
                    f"({', '.join(sorted(unknown))}); upgrade assocmem to open it"
                )
            for name, sql in known:
                if name not in applied:
                    with raw.transaction():
                        raw.execute(sql)
                        raw.execute(
                            "INSERT INTO schema_migrations (name, applied_at) VALUES (%s, %s)",
                            [name, times.now()],
                        )
                    log.info("store (PostgreSQL): applied migration %s", name)
        finally:
            raw.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])

    def _refold(self) -> None:
        """Concept names to this assocmem's folding (refold.py), under the migration lock."""
        if is_current(self) and self._parts_current():
            return  # the one lookup of an open with nothing to do, and no lock taken
        raw = self._conn.raw
        raw.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
        try:
            refold_once(self)
            self._open_parts()
        finally:
            raw.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])

    def _enable_pgvector(self) -> bool:
        """Whether vectors get pgvector's HNSW search (False: the numpy index)."""
        raw = self._conn.raw
        available = raw.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        if not available:
            return False
        raw.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
        try:
            installed = raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            if not installed.fetchone():
                try:
                    raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
                except errors.InsufficientPrivilege:
                    return False  # a role that may not install it: the numpy index serves
            for on_extension in self.hooks("on_extension"):
                on_extension(self, "vector")
        finally:
            raw.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
        return True

    def translate(self, exc: BaseException) -> AssocmemError:
        if isinstance(exc, errors.LockNotAvailable | errors.DeadlockDetected):
            return StoreBusy(f"the store stayed locked by another writer: {_redact(exc)}")
        if isinstance(exc, errors.SerializationFailure | errors.QueryCanceled):
            return StoreBusy(f"the database asked to retry: {_redact(exc)}")
        if isinstance(exc, psycopg.OperationalError):
            return StoreUnavailable(f"the database is unreachable: {_redact(exc)}")
        return StoreError(f"storage error: {_redact(exc)}")

    def _begin(self) -> None:
        self._conn.execute("BEGIN")
        self._conn.execute("SELECT pg_advisory_xact_lock(?)", [WRITE_LOCK])

    def _open_snapshot(self) -> None:
        # Statements without parameters go as one simple query, one round trip; the
        # cursor is left on the first statement's result.
        self._forget_memo()
        cursor = self._conn.execute(f"{self.snapshot_begin}; {self._snapshot_checks}")
        while cursor.description is None and cursor.nextset():
            pass
        newest_scope, epoch, *empty = cursor.fetchone()
        self._version_in = (self._transactions, ("scopes", newest_scope))
        self._note_concepts_epoch(epoch, self._transactions)
        self._empty_in_snapshot = self._empty_tables(empty)

    def _data_version(self) -> Any:
        # Inside a write transaction no one else writes (the advisory lock): the scope
        # layers read once hold until it ends. A snapshot is versioned by its newest
        # scope instead (`_open_snapshot`). Between transactions: re-read every time.
        return self._transactions if self._depth else None

    def _condition_sql(self, condition: Condition, alias: str) -> tuple[str, list[Any]]:
        return condition_sql(condition, alias)

    # -- full text and JSON ------------------------------------------------------

    @translated
    def lexical(self, view: View, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        if not terms:
            return []
        layers = self._layers(view.scope)
        where, params = self._view_sql(view, layers, "m")
        common = common_terms(terms, self._frequencies(view.scope, terms))
        # Each term becomes its own plain query, OR-ed: no caller text is read as syntax.
        # Ranked by term frequency (ts_rank): cover density (ts_rank_cd) costs many times
        # more a matched row, most of a common term's search, and did not raise LoCoMo's
        # recall@10 on PostgreSQL (`assocmem bench locomo` measures it).
        full = _tsquery(len(terms))
        if not common:
            rows = self._query(
                f"WITH q AS (SELECT ({full}) AS query)"
                " SELECT m.seq, ts_rank(m.fts, q.query) AS score FROM memories m, q"
                f" WHERE m.fts @@ q.query AND {where} ORDER BY score DESC, m.seq LIMIT ?",
                [*terms, *params, limit],
            )
            return [(seq, float(score)) for seq, score in rows]
        # A common term is ranked where a rare one matched too, and among the newest
        # memories (lexical.py), each row against the whole query. The queries are
        # written out, not named in a CTE, so the planner sees how common each is and
        # reads the window by its seq range rather than the term's whole posting list.
        rare = [term for term in terms if term not in common]
        start, _ = self._window(layers)
        ranked = f"SELECT m.seq, ts_rank(m.fts, {full}) AS score FROM memories m WHERE "
        branches = [f"{ranked}m.seq > ? AND m.fts @@ ({full}) AND {where}"]
        values = [*terms, start, *terms, *params]
        if rare:
            branches.append(f"{ranked}m.fts @@ ({_tsquery(len(rare))}) AND {where}")
            values += [*terms, *rare, *params]
        rows = self._query(
            f"SELECT DISTINCT seq, score FROM ({' UNION ALL '.join(branches)}) AS hits"
            " ORDER BY score DESC, seq LIMIT ?",
            [*values, limit],
        )
        return [(seq, float(score)) for seq, score in rows]

    def _exact_counts(self, layers: Sequence[int], terms: Sequence[str]) -> dict[str, int]:
        # A term of one lexeme (nearly all) is counted by the write's own triggers
        # (lexical_terms, 0016), so its whole frequency is one lookup: no bounded count
        # and no window estimate; one the parser finds no lexeme in matches nothing.
        rows = self._query(
            "SELECT t.term, CASE cardinality(l.lexemes) WHEN 0 THEN 0"
            " ELSE (SELECT COALESCE(SUM(c.docs), 0) FROM lexical_terms c"
            "  WHERE c.scope_id = ANY(?::bigint[]) AND c.lexeme = l.lexemes[1]) END"
            " FROM unnest(?::text[]) AS t(term), LATERAL (SELECT"
            f" tsvector_to_array(to_tsvector('{TEXT_SEARCH_CONFIG}', t.term)) AS lexemes) AS l"
            " WHERE cardinality(l.lexemes) <= 1",
            [list(layers), list(terms)],
        )
        return {term: int(found) for term, found in rows}

    def _count_matches(
        self, layers: Sequence[int], terms: Sequence[str], cap: int, after: int = 0
    ) -> dict[str, int]:
        if not terms:
            return {}
        if after:
            return self._count_window(layers, terms, cap, after)
        # Terms the parser splits into several lexemes (the rest are `_exact_counts`).
        rows = self._query(
            "SELECT t.term, (SELECT COUNT(*) FROM (SELECT 1 FROM memories m"
            f"  WHERE m.fts @@ plainto_tsquery('{TEXT_SEARCH_CONFIG}', t.term)"
            "  AND m.scope_id = ANY(?::bigint[]) LIMIT ?) AS found)"
            " FROM unnest(?::text[]) AS t(term)",
            [list(layers), cap, list(terms)],
        )
        return {term: min(int(found), cap) for term, found in rows}

    def _count_window(
        self, layers: Sequence[int], terms: Sequence[str], cap: int, after: int
    ) -> dict[str, int]:
        """Each term's matches among the memories after ``after``: one pass over them
        for every term (the window is bounded; its rows are read once, not per term)."""
        match = f"COUNT(*) FILTER (WHERE fts @@ plainto_tsquery('{TEXT_SEARCH_CONFIG}', ?))"
        (row,) = self._query(
            f"SELECT {', '.join([match] * len(terms))} FROM memories"
            " WHERE scope_id = ANY(?::bigint[]) AND seq > ?",
            [*terms, list(layers), after],
        )
        return {term: min(int(found), cap) for term, found in zip(terms, row, strict=True)}

    def _find_window(self, layers: Sequence[int]) -> tuple[int, int]:
        # In one statement: each round trip of a read costs a wake of the server.
        window = lexical.LEXICAL_WINDOW
        if len(layers) == 1:
            # One layer's window holds exactly its newest LEXICAL_WINDOW memories (seqs
            # are unique), or all of them (lexical_layers): counting them would visit
            # each row's heap tuple.
            ((start, docs),) = self._query(
                "SELECT (SELECT seq FROM memories WHERE scope_id = ?"
                "  ORDER BY seq DESC LIMIT 1 OFFSET ?),"
                " (SELECT COALESCE(SUM(docs), 0) FROM lexical_layers WHERE scope_id = ?)",
                [layers[0], window, layers[0]],
            )
            return (int(start), window) if start is not None else (0, int(docs))
        ((start, inside),) = self._query(
            "WITH start AS (SELECT COALESCE(MAX((SELECT seq FROM memories"
            "  WHERE scope_id = l.layer ORDER BY seq DESC LIMIT 1 OFFSET ?)), 0) AS seq"
            "  FROM unnest(?::bigint[]) AS l(layer))"
            " SELECT start.seq, (SELECT COUNT(*) FROM memories"
            "  WHERE scope_id = ANY(?::bigint[]) AND seq > start.seq) FROM start",
            [window, list(layers), list(layers)],
        )
        return int(start), int(inside)

    def _layer_size(self, layers: Sequence[int]) -> int:
        # Kept by the write's triggers (lexical_layers): COUNT(*) visits every row.
        rows = self._query(
            KEYED + "SELECT COALESCE(SUM(docs), 0) FROM lexical_layers"
            " WHERE scope_id = ANY(?::bigint[])",
            [list(layers)],
        )
        return int(rows[0][0])

    def _move_lexical_counts(self, seq: int, old: int, new: int) -> None:
        self._conn.execute("UPDATE lexical_layers SET docs = docs - 1 WHERE scope_id = ?", [old])
        self._conn.execute(
            "INSERT INTO lexical_layers (scope_id, docs) VALUES (?, 1)"
            " ON CONFLICT (scope_id) DO UPDATE SET docs = lexical_layers.docs + 1",
            [new],
        )
        lexemes = "SELECT unnest(tsvector_to_array(fts)) FROM memories WHERE seq = ?"
        self._conn.execute(
            "UPDATE lexical_terms SET docs = docs - 1"
            f" WHERE scope_id = ? AND lexeme IN ({lexemes})",
            [old, seq],
        )
        self._conn.execute(
            f"DELETE FROM lexical_terms WHERE scope_id = ? AND docs <= 0 AND lexeme IN ({lexemes})",
            [old, seq],
        )
        self._conn.execute(
            f"INSERT INTO lexical_terms (scope_id, lexeme, docs) SELECT ?, lexeme, 1"
            f" FROM ({lexemes}) AS own(lexeme)"
            " ON CONFLICT (scope_id, lexeme) DO UPDATE SET docs = lexical_terms.docs + 1",
            [new, seq],
        )

    def _records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]:
        # As the shared SQL does, but each record's concepts come in the same
        # statement, as an array of (name, form) pairs in position order: a read asks
        # for its results' records once, and a second round trip cost as much again.
        rows = self._query_in(
            f"{KEYED}SELECT {MEMORY_COLUMNS}, ARRAY(SELECT ARRAY["
            " (SELECT c.name FROM concepts c WHERE c.id = mc.concept_id), mc.form]"
            " FROM memory_concepts mc WHERE mc.memory_seq = memories.seq ORDER BY mc.position)"
            " FROM memories WHERE seq IN (?*)",
            seqs,
        )
        return {
            row[0]: record_from_row(row[:-1], [(name, read_form(name, f)) for name, f in row[-1]])
            for row in rows
        }

    @translated
    def memories_with_concepts(
        self, view: View, concept_ids: Sequence[int], *, per_concept: int, skip: Sequence[int] = ()
    ) -> dict[int, list[int]]:
        # As the shared SQL does (each concept's newest in each layer, merged), in one
        # statement: planning one per concept and layer took longer than running them.
        # Under a view without conditions the plan is one for every concept (a nested
        # loop of ordered index scans, each cut by LIMIT), so it is kept; conditions
        # (a time window, a `where`) may be selective enough to start from memories,
        # and are planned for their values. The skip list is a hashed subplan: `<> ALL`
        # over a bound array compares each row with every entry.
        layers = self._layers(view.scope)
        if not concept_ids or not layers:
            return {}
        visible, params = self._view_sql(view, layers, "m")
        exclude = " AND mc.memory_seq NOT IN (SELECT unnest(?::bigint[]))" if skip else ""
        concepts = list(dict.fromkeys(concept_ids))
        rows = self._query(
            ("" if view.conditions else KEYED) + "SELECT c.concept, newest.memory_seq"
            f" FROM unnest({id_array(concepts)}) AS c(concept),"
            f" unnest({id_array(layers)}) AS l(layer),"
            " LATERAL (SELECT mc.memory_seq FROM memory_concepts mc"
            f"  JOIN memories m ON m.seq = mc.memory_seq AND {visible}"
            f"  WHERE mc.scope_id = l.layer AND mc.concept_id = c.concept{exclude}"
            "  ORDER BY mc.memory_seq DESC LIMIT ?) AS newest",
            [
                *padded(concepts),
                *padded(layers),
                *params,
                *([list(skip)] if skip else []),
                per_concept,
            ],
        )
        found: dict[int, list[int]] = {}
        for concept, seq in rows:
            found.setdefault(concept, []).append(seq)
        return {c: sorted(seqs, reverse=True)[:per_concept] for c, seqs in found.items()}

    def _meta_is_array(self, alias: str, key: str) -> str:
        return f"jsonb_typeof(({alias}.meta)::jsonb -> '{key}') = 'array'"

    # -- pgvector ------------------------------------------------------------------

    @translated
    def write(
        self, scope: Any, memories: Sequence[Any], vectors: np.ndarray | None = None
    ) -> list[WriteResult]:
        results = super().write(scope, memories, vectors)
        with self._lock:  # the count is shared by every thread writing through this store
            self._unsettled += sum(r.stored for r in results)
            if not self._depth:  # committed in its own transaction, before this count
                self._after_commit()
        return results

    def _next_seqs(self, count: int) -> list[int]:
        # Taken from the identity's sequence, so a later default insert never collides.
        rows = self._conn.execute(
            "SELECT nextval(pg_get_serial_sequence('memories', 'seq')) FROM generate_series(1, ?)",
            [count],
        ).fetchall()
        return sorted(int(seq) for (seq,) in rows)

    def _after_commit(self) -> None:
        # The rows written since the last commit (a write nested in a caller's
        # transaction counts at that commit) go to ANALYZE's count and the vacuumer's.
        written, self._unsettled = self._unsettled, 0
        self._written_since_analyze += written
        self._refresh_statistics()
        if written and self._vacuumer is not None:
            self._vacuumer.added(written)

    # -- erasure -------------------------------------------------------------

    def _scrub_files(self) -> None:
        # A delete only marks tuples dead, and a plain VACUUM prunes them but leaves
        # their bytes in the pages' free space (measured: text and author found in
        # the heap and an index after it). VACUUM FULL writes each table and its
        # indexes into new files and unlinks the old ones. It holds an exclusive lock
        # on each table while it copies it (readers wait; cost grows with the store)
        # and cannot run in a transaction: this connection is autocommit between them.
        with self._lock:
            # Every table a forget deletes rows from: their dead tuples keep the bytes.
            self._conn.execute("VACUUM FULL " + ", ".join(self._forget_tables))

    # -- inspection: sizes on disk (inspect/store.py); the WAL is the server's --
    @translated
    def storage(self) -> tuple[str, int, int | None]:
        (size,) = self._query("SELECT pg_database_size(current_database())")[0]
        return "postgres", int(size), None

    def _planned_rows(self) -> int:
        """How many memories the planner believes there are (0 before any ANALYZE)."""
        row = self._conn.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass"
        ).fetchone()
        return max(0, int(row[0])) if row else 0

    def _refresh_statistics(self) -> None:
        """ANALYZE the hot tables once this writer has grown them enough (see
        `ANALYZE_GROWTH`); only between transactions, so no write waits on it."""
        with self._lock:
            grown = self._written_since_analyze
            if self._depth or grown < max(ANALYZE_MIN_ROWS, ANALYZE_GROWTH * self._analyzed_rows):
                return
            try:
                self._conn.execute("ANALYZE " + ", ".join(self._grown_tables))
                self._analyzed_rows = self._planned_rows()
            except psycopg.Error:
                return  # the write is committed; statistics wait for the next one
            self._written_since_analyze = 0


def _tsquery(terms: int) -> str:
    """One plain query per term, OR-ed (empty for none)."""
    return " || ".join(f"plainto_tsquery('{TEXT_SEARCH_CONFIG}', ?)" for _ in range(terms))


def _redact(exc: BaseException) -> str:
    """An error's first line, without connection details that may hold a password."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
