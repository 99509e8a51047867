"""The WAL stays bounded (issue 17, item 6): a reader holding an old snapshot lets
it grow while it holds, and once the reader lets go the next commits checkpoint it
and truncate it back under `SQLiteStore.wal_limit_bytes`. Checkpoints of ordinary
writes run on a thread of their own (store/checkpoints.py), not in the commit."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.store.checkpoints import BACKSTOP_PAGES, PACE_S
from assocmem.store.sqlite import SQLiteStore

LIMIT = 256 * 1024


def _wal(path: Path) -> int:
    wal = Path(str(path) + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_long_reader_grows_the_wal_only_until_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same mechanism at a small scale: a 64-page autocheckpoint, a 256 KiB limit.
    monkeypatch.setattr(SQLiteStore, "wal_pages", 64)
    monkeypatch.setattr(SQLiteStore, "wal_limit_bytes", LIMIT)
    monkeypatch.setattr(SQLiteStore, "wal_retry_s", 0.0)
    path = tmp_path / "wal.db"
    with Memory(str(path), agent_id="w") as mem:
        mem.write("the first note", concepts=["first"])
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM memories").fetchone()  # holds its snapshot
        for n in range(60):
            mem.write_many(
                [{"text": f"note {n}-{i} " + "padding words " * 20, "concepts": [f"c{n}", f"d{i}"]}
                 for i in range(20)]
            )  # fmt: skip
        grown = _wal(path)
        assert grown > LIMIT  # the reader's snapshot keeps every frame
        reader.execute("COMMIT")
        reader.close()
        for n in range(3):
            mem.write(f"after the reader {n}", concepts=["after"])
        assert _wal(path) <= LIMIT, (grown, _wal(path))
        assert len(list(mem.export())) == 1 + 60 * 20 + 3


def test_the_store_sets_its_wal_bounds_and_secure_delete(tmp_path: Path) -> None:
    path = str(tmp_path / "p.db")
    store = SQLiteStore(path)
    try:
        conn = store._conn
        assert conn.execute("PRAGMA journal_size_limit").fetchone()[0] == store.wal_limit_bytes
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == store.wal_pages
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    finally:
        store.close()
    assert os.path.exists(path)


def _checkpointers(path: Path) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == f"assocmem-checkpoint:{path}"]


def test_single_writes_are_checkpointed_off_the_writers_path(tmp_path: Path) -> None:
    # Sixty writes leave a few thousand WAL pages, far under the writer's own
    # checkpoint (the backstop): only the checkpointer thread copies them into the
    # file, while the writer is done with its commits.
    path = tmp_path / "bg.db"
    with Memory(str(path), agent_id="w") as mem:
        mem.write("the first note", concepts=["first"])
        time.sleep(3 * PACE_S)
        before = path.stat().st_size
        for n in range(60):
            mem.write(f"note {n} " + "padding words " * 40, concepts=[f"c{n}", "pad"])
        deadline = time.monotonic() + 5.0
        while path.stat().st_size == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.stat().st_size > before, "the WAL's new pages reached the file"
        assert SQLiteStore.wal_pages == BACKSTOP_PAGES > 60 * 40
        assert _checkpointers(path)
    assert not _checkpointers(path), "close stops the thread"


def test_a_read_only_or_in_memory_store_runs_no_checkpointer(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    with Memory(str(path), agent_id="w") as mem:
        mem.write("a note", concepts=["note"])
    os.chmod(path, 0o444)
    try:
        store = SQLiteStore(str(path), read_only=True)
        try:
            assert not _checkpointers(path)
        finally:
            store.close()
    finally:
        os.chmod(path, 0o644)
    memory = SQLiteStore(":memory:")
    try:
        assert not _checkpointers(Path(":memory:"))
    finally:
        memory.close()
