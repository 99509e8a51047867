"""The SQLite store: migrations, error translation, durability settings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assocmem import (
    AssocmemError,
    Memory,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from assocmem.store import sqlite as sqlite_store
from assocmem.store.migrations import migrations


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
    with pytest.raises(StoreError):
        Memory(db_path, synchronous="sometimes")


def test_migration_splitter_keeps_trigger_bodies_whole() -> None:
    script = "CREATE TABLE t (x);\nCREATE TRIGGER g BEFORE UPDATE ON t\nBEGIN\n SELECT 1;\nEND;\n"
    assert len(list(sqlite_store._statements(script))) == 2
