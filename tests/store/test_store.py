"""The SQLite store: migrations, error translation, durability settings."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from assocmem import (
    AssocmemError,
    InvalidInput,
    Memory,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from assocmem.capabilities import migrations
from assocmem.store import sqlite as sqlite_store
from assocmem.store.params import KEYED


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    """A SQLite file (this module is about the SQLite store; see test_postgres.py)."""
    return str(tmp_path / "store.db")


def test_a_new_file_gets_every_migration_once(db_path: str) -> None:
    Memory(db_path).close()
    Memory(db_path).close()
    conn = sqlite3.connect(db_path)
    names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [name for name, _ in migrations("sqlite")]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_a_store_from_a_newer_version_is_refused(db_path: str) -> None:
    Memory(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', '2030-01-01')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew, match="9999_future"):
        Memory(db_path)


def test_a_file_that_is_not_a_database_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 200)
    with pytest.raises(StoreCorrupt):
        Memory(str(path))


def test_an_unopenable_path_is_reported(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable):
        Memory(str(tmp_path / "missing-dir" / "x.db"))


def test_a_writer_locked_out_gets_store_busy(db_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_S", 0.2)
    mem = Memory(db_path)
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy):
            mem.write("blocked", concepts=["x"])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert mem.write("now it goes through", concepts=["x"]).stored
    mem.close()


@pytest.mark.parametrize(
    "error",
    [cls("boom") for cls in (
        sqlite3.Error, sqlite3.DatabaseError, sqlite3.OperationalError, sqlite3.IntegrityError,
        sqlite3.ProgrammingError, sqlite3.InterfaceError, sqlite3.DataError,
        sqlite3.NotSupportedError, sqlite3.InternalError,
    )]
    + [sqlite3.OperationalError("database is locked"),
       sqlite3.DatabaseError("file is not a database")],
)  # fmt: skip
def test_every_sqlite_error_is_translated(error: sqlite3.Error) -> None:
    translated = sqlite_store.translate(error)
    assert isinstance(translated, StoreError) and isinstance(translated, AssocmemError)


def test_full_durability_is_selectable(db_path: str) -> None:
    with Memory(db_path, synchronous="full") as mem:
        assert mem.write("durable", concepts=["x"]).stored
    with pytest.raises(InvalidInput) as refused:
        Memory(db_path, synchronous="sometimes")
    assert refused.value.field == "synchronous"


def test_migration_splitter_keeps_trigger_bodies_whole() -> None:
    script = "CREATE TABLE t (x);\nCREATE TRIGGER g BEFORE UPDATE ON t\nBEGIN\n SELECT 1;\nEND;\n"
    assert len(list(sqlite_store._statements(script))) == 2


def _plans(mem: Memory, run: Callable[[], object], only: str = "") -> str:
    """The query plans of every statement ``run`` sends to the store (of those holding
    ``only``), in one string."""
    conn = mem._store._conn  # the store's own connection: its SQL is what is checked
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        run()
    finally:
        conn.set_trace_callback(None)
    plans = []
    for sql in statements:
        if only not in sql:
            continue
        if sql.removeprefix(KEYED).lstrip().upper().startswith(("SELECT", "INSERT", "WITH")):
            plans += [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    return "\n".join(plans)


def test_exact_text_and_duplicate_checks_use_their_indexes(db_path: str) -> None:
    with Memory(db_path, agent_id="a") as mem:
        noon = "2024-05-01T12:00:00Z"
        mem.write("The deploy timed out at noon.", observed_at=noon)
        plans = _plans(mem, lambda: mem.read("The deploy timed out at noon."))
        assert "USING INDEX memories_by_fingerprint" in plans
        retry = partial(mem.write, "The deploy timed out at noon.", observed_at=noon)
        assert "USING INDEX memories_dedupe" in _plans(mem, retry)


def test_the_link_walk_reads_each_side_in_its_index_order(db_path: str) -> None:
    """A side's strongest links come from an index ordered as the walk asks (weight
    descending, then the other end): its scan stops at the LIMIT, with no sort of each
    run of equal weights."""
    with Memory(db_path, agent_id="a") as mem:
        mem.write_many(
            [{"text": f"hub with {p}", "concepts": ["hub", p]} for p in "abcdef" for _ in (1, 2)]
        )
        mem.forget([mem.write("a note to forget").id])  # folds the pending counts into links
        plans = _plans(mem, lambda: mem.read(concepts=["hub"], k=5), "ORDER BY weight DESC")
    assert "USING COVERING INDEX links_by_" in plans
    assert "TEMP B-TREE" not in plans


def test_a_read_weighs_pending_pairs_by_key_lookups_alone(db_path: str) -> None:
    """The folded weight of a pending pair a read meets is its row or a walk of one
    end's memories, each found by key: no table of the pairs' ends is built and
    searched through an index made for the statement."""
    with Memory(db_path, agent_id="a") as mem:
        mem.write_many([{"text": f"hub with {p}", "concepts": ["hub", p]} for p in "abcdef"])
        mem.forget([mem.write("a note to forget").id])  # folds: each pair once-seen
        mem.write("hub again with a", concepts=["hub", "a"])  # pending, and seen before
        plans = _plans(mem, lambda: mem.read(concepts=["hub"], k=5), "links_common")
    assert "SEARCH l USING PRIMARY KEY" in plans
    assert "AUTOMATIC" not in plans
    assert "MATERIALIZE" not in plans


def test_records_from_before_the_time_local_indexes_keep_their_duplicates(db_path: str) -> None:
    with Memory(db_path, agent_id="a") as mem:
        first = mem.write("Rotated the signing key.", observed_at="2024-05-01T12:00:00Z")
    conn = sqlite3.connect(db_path)  # put the store back as it was before 0006
    conn.executescript(
        "DROP INDEX memories_dedupe;"
        " CREATE UNIQUE INDEX memories_dedupe ON memories (scope_id, dedupe_key);"
        " DROP INDEX memories_by_fingerprint;"
        " ALTER TABLE memories DROP COLUMN fingerprint_key;"
        " CREATE INDEX memories_by_fingerprint ON memories (scope_id, fingerprint);"
        " DELETE FROM schema_migrations WHERE name = '0006_time_local_indexes';"
    )
    conn.close()
    with Memory(db_path, agent_id="a") as mem:
        again = mem.write("Rotated the signing key.", observed_at="2024-05-01T12:00:00Z")
        assert (again.stored, again.reason, again.id) == (False, "duplicate", first.id)
        later = mem.write("Rotated the signing key.", observed_at="2024-06-01T12:00:00Z")
        assert later.stored
        items = mem.read("rotated the  SIGNING key.").items
        assert {i.id for i in items if "episodic" in i.sources} == {later.id, first.id}


def test_link_times_move_to_microseconds_with_what_was_pending(db_path: str) -> None:
    conn = sqlite3.connect(db_path)  # a store as 0006 left it, links and pending rows in it
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, sql in migrations("sqlite"):
        if name >= "0007":
            break
        conn.executescript(sql)
        conn.execute("INSERT INTO schema_migrations VALUES (?, '2026-01-01')", (name,))
    conn.execute("INSERT INTO scopes (agent_id, project_id, channel) VALUES ('a', '', '')")
    conn.executemany(
        "INSERT INTO concepts (id, name) VALUES (?, ?)",
        [(1, "retry"), (2, "backoff"), (3, "jitter")],
    )
    conn.execute(
        "INSERT INTO links VALUES (1, 1, 2, 3.0, 3, 0.0, 0, '2024-05-01T12:00:00.000001Z')"
    )
    conn.executemany(
        "INSERT INTO pending_links (scope_id, a, b, weight, count, outcome_sum, feedback_count,"
        " updated_at) VALUES (?,?,?,?,?,?,?,?)",
        [
            (1, 1, 2, 1.0, 0, 1.0, 1, "2024-05-02T00:00:00.000000Z"),  # helpful feedback
            (1, 2, 3, 2.0, 2, 0.0, 0, "2024-05-03T00:00:00.500000Z"),  # a pair not yet folded
        ],
    )
    conn.commit()
    conn.close()
    with Memory(db_path, agent_id="a") as mem:
        edges = {
            frozenset((e.source, e.target)): (e.weight, e.count, e.valence, e.updated_at)
            for e in mem.graph(["backoff"], depth=1).edges
        }
        assert edges == {
            frozenset(("retri", "backoff")): (4.0, 3, 1.0, "2024-05-02T00:00:00.000000Z"),
            frozenset(("backoff", "jitter")): (2.0, 2, 0.0, "2024-05-03T00:00:00.500000Z"),
        }
        mem.write("Jitter spreads the retries.", concepts=["jitter", "backoff"])
        again = {frozenset((e.source, e.target)): e.count for e in mem.graph(["jitter"]).edges}
        assert again == {frozenset(("backoff", "jitter")): 3}
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT typeof(updated_at) FROM links").fetchall() == [("integer",)] * 2
    conn.close()
