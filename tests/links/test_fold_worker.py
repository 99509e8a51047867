"""The fold worker (SQLite): a process that plans folds beside the writer and applies
them when the writer hands it the lock. Whatever it plans, drops or never gets to
apply, the store reads as if every fold had run in the writer."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.links import folding, pending_links
from assocmem.links.store import LinkQueries
from tests.links.test_pending_links import NEVER, _observed, _play, _workload


def _sync_folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the folds the writer runs in its own transaction."""
    calls: list[int] = []
    real = LinkQueries.fold_links

    def counted(store: LinkQueries) -> None:
        calls.append(1)
        real(store)

    monkeypatch.setattr(LinkQueries, "fold_links", counted)
    return calls


def _pending(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM pending_pairs").fetchone()[0])


def test_folds_the_worker_applies_read_as_folds_in_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = _workload(seed=3)
    worked, written = tmp_path / "worked.db", tmp_path / "written.db"
    in_writer = _sync_folds(monkeypatch)
    _play(worked, ops, 37, monkeypatch)
    by_writer = len(in_writer)
    monkeypatch.setattr(LinkQueries, "folds_in_background", False)
    _play(written, ops, 37, monkeypatch)
    assert len(in_writer) - by_writer > 20  # the writer folded at every due write
    assert by_writer < len(in_writer) - by_writer  # the worker took some of them
    with sqlite3.connect(worked) as db:
        (folded,) = db.execute("SELECT value FROM store_info WHERE key = 'links_folded_seq'")
        assert int(folded[0]) > 300
    assert _observed(worked) == _observed(written)


def _unfolded(target: Path, texts: list[str]) -> None:
    with Memory(str(target), agent_id="a") as mem:
        for i, text in enumerate(texts):
            mem.write(text, concepts=["retry", "backoff", f"c{i % 4}"])


def test_a_plan_no_longer_holding_is_dropped_and_one_holding_is_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: NEVER)
    path, reference = tmp_path / "m.db", tmp_path / "reference.db"
    for target in (path, reference):
        _unfolded(target, [f"note {i}" for i in range(30)])
    with Memory(str(path), agent_id="a") as mem:
        settings = mem._store.fold_worker_settings()
    assert settings is not None
    worker = folding.FoldWorker(*settings)
    try:
        # Planned, then folded by the writer (as a forget's settle does): dropped.
        worker.request(0)
        assert worker.ready(wait=True)
        with Memory(str(path), agent_id="a") as mem, mem._store.transaction():
            mem._store.fold_links()
        worker.hand_over(wait=False)
        worker.wait()
        assert _pending(path) == 0
        assert _observed(path) == _observed(reference)
        # Planned, then more written: applied, and what came after stays pending.
        _unfolded(path, ["more"])
        worker.request(0)
        assert worker.ready(wait=True)
        _unfolded(path, ["later"])
        worker.hand_over(wait=False)
        worker.wait()
        assert _pending(path) == 3  # the pairs of the write after the plan's snapshot
        # Planned, never handed over, the worker closed: the counts stay pending.
        worker.request(0)
        assert worker.ready(wait=True)
    finally:
        worker.close()
    assert _pending(path) == 3
    for text in ("more", "later"):
        _unfolded(reference, [text])
    assert _observed(path) == _observed(reference)


def test_a_killed_worker_leaves_the_writer_folding_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: 40)
    path, reference = tmp_path / "m.db", tmp_path / "reference.db"
    ops = _workload(seed=8)
    writes = [args for kind, args in ops if kind == "write"]
    with Memory(str(path), agent_id="a") as mem:
        for _, text, concepts in writes[:150]:
            mem.write(text, concepts=concepts)
        worker = mem._store._worker
        assert worker is not None and worker.alive
        os.kill(worker._process.pid, signal.SIGKILL)
        for _, text, concepts in writes[150:]:
            mem.write(text, concepts=concepts)
        assert mem._store._worker is None and not worker.alive
    monkeypatch.setattr(LinkQueries, "folds_in_background", False)
    with Memory(str(reference), agent_id="a") as mem:
        for _, text, concepts in writes:
            mem.write(text, concepts=concepts)
    assert _observed(path) == _observed(reference)


def test_a_closing_store_ends_its_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: 40)
    path, reference = tmp_path / "m.db", tmp_path / "reference.db"
    writes = [args for kind, args in _workload(seed=9) if kind == "write"][:60]
    with Memory(str(path), agent_id="a") as mem:
        for _, text, concepts in writes:
            mem.write(text, concepts=concepts)
        worker = mem._store._worker
        assert worker is not None
    assert not worker.alive and worker._process.returncode == 0
    monkeypatch.setattr(LinkQueries, "folds_in_background", False)
    with Memory(str(reference), agent_id="a") as mem:
        for _, text, concepts in writes:
            mem.write(text, concepts=concepts)
    assert _observed(path) == _observed(reference)


def test_a_store_with_no_file_of_its_own_folds_in_the_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: 10)
    with Memory(":memory:", agent_id="a") as mem:
        for i in range(10):
            mem.write(f"note {i}", concepts=["retry", "backoff", "jitter"])
        assert mem._store._worker is None
        assert mem.graph(["retry"]).edges[0].count == 10


def test_finishing_folds_applies_the_fold_asked_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: 40)
    path = tmp_path / "m.db"
    writes = [args for kind, args in _workload(seed=4) if kind == "write"][:120]
    with Memory(str(path), agent_id="a") as mem:
        for _, text, concepts in writes:
            mem.write(text, concepts=concepts)
            if _pending(path) >= 40:  # right after the commit that asked for a fold
                break
        worker = mem._store._worker
        assert worker is not None and worker._asked
        mem._store.finish_folds()
        assert not worker._asked and not worker._planned
        assert _pending(path) < 40
