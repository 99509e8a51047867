"""The store's data path, traced on real connections: one transaction per write, a
duplicate that writes nothing, one data-version check per read, readers that never
write. Each trace is `sqlite3`'s own statement callback on a real file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.errors import StoreError

JAN, FEB, LAST_YEAR = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2023-01-01T00:00:00Z"
ASSOCIATIONS = {
    "entities": [{"name": "Alice"}, {"name": "Bob"}],
    "relations": [{"subject": "Alice", "predicate": "met", "object": "Bob"}],
}
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "BEGIN IMMEDIATE", "SAVEPOINT")


def traced(memory: Memory) -> list[str]:
    """Every statement the memory's connection runs from now on (not the ones
    SQLite runs inside triggers and virtual tables, which it marks ``--``)."""
    log: list[str] = []
    memory._store._conn.set_trace_callback(  # type: ignore[attr-defined]
        lambda sql: None if sql.startswith("--") else log.append(sql)
    )
    return log


def count(rows: Any) -> int:
    return int(rows.fetchone()[0])


def test_a_write_and_its_declarations_are_one_transaction(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "one.db")) as memory:
        memory.write("a first note makes the layer", concepts=["first"])
        log = traced(memory)
        result = memory.write("Alice met Bob at the lab", associations=ASSOCIATIONS)
    assert result.stored and result.associations is not None
    assert sorted(result.associations.entities) == ["Alice", "Bob"]
    assert len(result.associations.relations) == 1
    assert [s for s in log if s.startswith("BEGIN")] == ["BEGIN IMMEDIATE"]
    assert log[0] == "BEGIN IMMEDIATE" and log[-1] == "COMMIT"
    assert log.count("COMMIT") == 1
    # 88 statements in 4 transactions before the store joined them; 62 in one now.
    assert len(log) <= 64, log


def test_a_dropped_declaration_keeps_the_memory_and_the_others(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "drop.db")) as memory:
        memory.write("Robert is called Bob", associations={
            "entities": [{"name": "Robert", "aliases": ["Bob"]}]})  # fmt: skip
        log = traced(memory)
        result = memory.write("Carol met Bob", associations={
            "entities": [{"name": "Carol", "aliases": ["Bob"]}, {"name": "Dave"}]})  # fmt: skip
        assert result.stored and result.associations is not None
        assert [d.reason for d in result.associations.dropped if "Bob" in d.reason]
        assert result.associations.entities == ("Dave",)
        assert [s for s in log if s.startswith("BEGIN")] == ["BEGIN IMMEDIATE"]
        assert memory.get([result.id])[0].text == "Carol met Bob"
        # The dropped declaration took back all it wrote, its entity too.
        assert memory._store.find_entities(memory.scope, "carol") == []
        assert [e.name for e in memory._store.find_entities(memory.scope, "dave")] == ["Dave"]


def _refuse_relations(backend: str, target: str) -> None:
    """Make the database itself refuse every relation row (a real failure midway
    through a write: after the memory and its entities, before its relation)."""
    if backend == "sqlite":
        with sqlite3.connect(target) as conn:
            conn.execute(
                "CREATE TRIGGER refuse_relations BEFORE INSERT ON relations"
                " BEGIN SELECT RAISE(ABORT, 'relations refused'); END"
            )
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'relations refused'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse_relations BEFORE INSERT ON relations"
            " FOR EACH ROW EXECUTE FUNCTION refuse()"
        )


def test_a_failure_midway_takes_back_the_memory_with_its_declarations(
    backend: str, store_target: Callable[..., str]
) -> None:
    target = store_target()
    Memory(target).close()  # the schema, before the database is told to refuse
    _refuse_relations(backend, target)
    with Memory(target) as memory:
        with pytest.raises(StoreError):
            memory.write("Alice met Bob at the lab", associations=ASSOCIATIONS)
        assert memory.stats().memories == 0
        assert memory._store.find_entities(memory.scope, "alice") == []
        assert memory.write("a later write still works").stored


CRASH = """
import os, sys
from assocmem import Memory
memory = Memory(sys.argv[1])
memory._store._conn.set_trace_callback(
    lambda sql: os._exit(3) if sql.startswith("INSERT INTO relations") else None)
memory.write("Alice met Bob at the lab", associations={ASSOCIATIONS!r})
"""


def test_a_process_dying_midway_leaves_neither_memory_nor_declarations(tmp_path: Path) -> None:
    db = str(tmp_path / "crash.db")
    script = textwrap.dedent(CRASH).replace("{ASSOCIATIONS!r}", repr(ASSOCIATIONS))
    done = subprocess.run([sys.executable, "-c", script, db], capture_output=True, timeout=60)
    assert done.returncode == 3, done.stderr.decode()
    with sqlite3.connect(db) as conn:
        assert count(conn.execute("SELECT COUNT(*) FROM memories")) == 0
        assert count(conn.execute("SELECT COUNT(*) FROM entities")) == 0
        assert count(conn.execute("SELECT COUNT(*) FROM entity_mentions")) == 0


def test_a_duplicate_of_a_new_value_leaves_the_current_one_untouched(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "key.db")) as memory:
        old = memory.write("the port is 80", key=["web", "port"], observed_at=JAN)
        new = memory.write("the port is 8080", key=["web", "port"], observed_at=FEB)
        assert new.superseded == (old.id,)
        log = traced(memory)
        again = memory.write("the port is 8080", key=["web", "port"], observed_at=FEB)
        assert not again.stored and again.reason == "duplicate" and again.id == new.id
        assert not [s for s in log if s.startswith(("UPDATE", "DELETE"))], log
        assert [r.status for r in memory.history(["web", "port"])] == ["superseded", "active"]
        assert memory.get([new.id])[0].status == "active"


def test_a_new_value_retires_the_current_one_on_both_backends(db_path: str) -> None:
    with Memory(db_path) as memory:
        old = memory.write("the port is 80", key=["web", "port"], observed_at=JAN)
        new = memory.write("the port is 8080", key=["web", "port"], observed_at=FEB)
        older = memory.write("the port was 21", key=["web", "port"], observed_at=LAST_YEAR)
        dup = memory.write("the port is 8080", key=["web", "port"], observed_at=FEB)
        assert new.superseded == (old.id,) and older.stored and not older.superseded
        assert not dup.stored
        statuses = {r.id: r.status for r in memory.history(["web", "port"])}
        assert statuses == {older.id: "superseded", old.id: "superseded", new.id: "active"}


def test_a_read_checks_the_data_version_once(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "read.db")) as memory:
        memory.write_many(
            [{"text": f"note {i} on topic {i % 37} and item {i % 11}"} for i in range(1000)]
        )
        memory.read("topic 5 and item 3")
        log = traced(memory)
        memory.read("note on topic 5 and item 3")
        read = list(log)  # not the close, which writes the reads it queued
    # 12 checks in this read before (one per statement that looked up the layers).
    assert read.count("PRAGMA data_version") == 1, read
    assert not [s for s in read if s.startswith(WRITES)], read


@pytest.fixture
def served_app(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """The real application in a uvicorn server on 127.0.0.1 (a thread of this
    process, so its connections can be traced); yields its URL and the app."""
    uvicorn = pytest.importorskip("uvicorn")
    from assocmem.adapters.server import create_app
    from tests.adapters.server_kit import free_port

    app = create_app(str(tmp_path / "served.db"), readers=2)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", app
    server.should_exit = True
    thread.join(timeout=10)


def test_a_read_request_writes_nothing_and_still_moves_the_clock(
    served_app: tuple[str, Any],
) -> None:
    """A read waits for no writer: it writes nothing on its reader connection nor on the
    writer. The clocks it restarted wait in the writer, are read at once by every
    connection of the process, and are written by the next write."""
    from tests.adapters.server_kit import post

    url, app = served_app
    observed = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    status, written = post(url, "write", {"text": "the deploy timed out", "observed_at": observed})
    assert status == 200
    pool = app.state.pool
    readers = list(pool._readers.queue)
    reader_log: list[str] = []
    writer_log: list[str] = []
    for reader in readers:
        reader._conn.set_trace_callback(reader_log.append)
    pool._writer._conn.set_trace_callback(writer_log.append)
    status, read = post(url, "read", {"query": "deploy timed out"})
    assert status == 200 and [i["record"]["id"] for i in read["items"]] == [written["id"]]
    assert reader_log and not [s for s in reader_log if s.startswith(WRITES)], reader_log
    assert not [s for s in writer_log if s.startswith(WRITES)], writer_log
    status, got = post(url, "get", {"ids": [written["id"]]})
    assert status == 200 and got[0]["accessed_at"] is not None
    status, _ = post(url, "write", {"text": "the deploy passed on retry"})
    assert status == 200
    for reader in readers:
        reader._conn.set_trace_callback(None)
    pool._writer._conn.set_trace_callback(None)
    assert [s for s in writer_log if s.startswith("UPDATE memories SET accessed_at")]
    with sqlite3.connect(pool._writer.path) as stored:
        (clock,) = stored.execute(
            "SELECT accessed_at FROM memories WHERE id = ?", [written["id"]]
        ).fetchone()
    assert clock is not None  # none before the read: written by the write after it


def test_a_plain_memory_still_records_access(tmp_path: Path) -> None:
    observed = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    with Memory(str(tmp_path / "plain.db")) as memory:
        written = memory.write("the deploy timed out", observed_at=observed)
        assert memory.get([written.id])[0].accessed_at is None
        memory.read("deploy timed out")
        assert memory.get([written.id])[0].accessed_at is not None
