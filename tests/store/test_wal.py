"""The WAL stays bounded (issue 17, item 6): a reader holding an old snapshot lets
it grow while it holds, and once the reader lets go the next commits checkpoint it
and truncate it back under `SQLiteStore.wal_limit_bytes`. Checkpoints of ordinary
writes run on a thread of their own (store/checkpoints.py), not in the commit.
However long a reader holds, the WAL stops at `SQLiteStore.wal_ceiling_bytes`
(issue 38, item 9): writes wait for the reader, then are refused until it ends."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.capabilities import SQLiteParts
from assocmem.errors import InvalidInput, StoreBusy
from assocmem.store.checkpoints import BACKSTOP_PAGES, PACE_S
from assocmem.store.sqlite import SQLiteStore
from assocmem.types import Scope

LIMIT = 256 * 1024
CEILING = 1024 * 1024
# What one batch of `_notes` adds to the WAL here is well under this: the most the
# WAL may pass the ceiling by is the one transaction that began under it.
ONE_BATCH = 256 * 1024


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
    store = SQLiteParts(path)
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
        store = SQLiteParts(str(path), read_only=True)
        try:
            assert not _checkpointers(path)
        finally:
            store.close()
    finally:
        os.chmod(path, 0o644)
    memory = SQLiteParts(":memory:")
    try:
        assert not _checkpointers(Path(":memory:"))
    finally:
        memory.close()


def _notes(n: int) -> list[dict[str, object]]:
    return [{"text": f"note {n}-{i} " + "padding words " * 20, "concepts": [f"c{n}", f"d{i}"]}
            for i in range(20)]  # fmt: skip


def test_a_reader_holding_its_snapshot_stops_the_wal_at_its_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SQLiteStore, "wal_wait_s", 0.1)
    path = tmp_path / "pinned.db"
    store = SQLiteParts(str(path), wal_ceiling_bytes=CEILING)
    mem = Memory.attached(store, Scope("w"))
    try:
        # A day old: a read of it restarts its decay clock, a write of the read's own.
        day_ago = datetime.now(UTC) - timedelta(days=1)
        mem.write("the first note", concepts=["first"], observed_at=day_ago)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        (seen,) = reader.execute("SELECT COUNT(*) FROM memories").fetchone()
        written = refused = peak = 0
        for n in range(40):  # writes go on, a bounded number of them
            try:
                mem.write_many(_notes(n))
                written += 1
            except StoreBusy:
                refused += 1
            peak = max(peak, _wal(path))
        assert refused and written, (written, refused)
        assert peak <= CEILING + ONE_BATCH, peak
        # Reads go on meanwhile (the decay clocks they would restart are left as they
        # are), and the reader is never cut off: it still sees the state it began in.
        assert [item.record.text for item in mem.read("the first note").items][:1] == [
            "the first note"
        ]
        assert reader.execute("SELECT COUNT(*) FROM memories").fetchone() == (seen,)
        reader.execute("COMMIT")
        reader.close()
        mem.write("after the reader", concepts=["after"])
        assert _wal(path) <= CEILING
        assert len(list(mem.export())) == 1 + 20 * written + 1
    finally:
        store.close()


@pytest.mark.parametrize("ceiling", [0, -1, 1.5, True, "1"])
def test_a_wal_ceiling_must_be_a_positive_number_of_bytes(tmp_path: Path, ceiling: object) -> None:
    with pytest.raises(InvalidInput) as refused:
        SQLiteParts(str(tmp_path / "c.db"), wal_ceiling_bytes=ceiling)  # type: ignore[arg-type]
    assert refused.value.field == "wal_ceiling_bytes"
