"""Behaviour across real processes: the restart control and concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.links import pending_links
from tests.conftest import Target, raw_query


def run_step(step: str, db: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem.demo", step, db],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def texts_via(read: dict[str, Any]) -> dict[str, list[str]]:
    return {item["text"]: item["via"] for item in read["items"]}


def test_restart_control_across_three_processes(tmp_path: Path) -> None:
    db = str(tmp_path / "control.db")
    learned = run_step("learn", db)
    loaded = run_step("recall", db)
    rebuilt = run_step("rebuild", db)

    before, after = learned["before"], learned["after"]
    assert before["expanded_concepts"] == {"retry": 2}
    assert texts_via(before)["Backoff of two seconds fixed the flaky call."] == ["retry"]
    assert after["expanded_concepts"] == {"backoff": 2, "retry": 4}
    assert texts_via(after)["Jitter on the backoff spread the calls out."] == ["backoff"]

    assert loaded == after  # a fresh process reads exactly the taught path
    assert rebuilt == before  # links rebuilt from notes lose what the outcomes taught
    assert "Jitter on the backoff spread the calls out." not in texts_via(rebuilt)
    for read in (before, after, loaded, rebuilt):
        assert "Cache warmed before the deploy." not in texts_via(read)


WORKERS = 4
WRITES = 300
FEEDBACKS = 100
TOPICS = 10


def _worker(db: str, worker: int, barrier: Any) -> list[str]:
    """300 writes and 100 feedback calls, interleaved; returns acknowledged ids."""
    acknowledged: list[str] = []
    # Fold pending co-occurrence counts every few writes, so folds by one process
    # interleave with the others' appends and reads (SQLite; no-op on PostgreSQL).
    pending_links.fold_at = lambda links: 40
    with Memory(db, agent_id="team") as mem:
        barrier.wait()
        for i in range(WRITES):
            result = mem.write(
                f"worker {worker} note {i}",
                concepts=["common", f"w{worker}", f"topic{i % TOPICS}"],
            )
            assert result.stored
            acknowledged.append(result.id or "")
            if i % 3 == 2:
                outcome = 1.0 if (i // 3) % 2 == 0 else 0.5
                mem.feedback([acknowledged[-1]], outcome, query_concepts=["q"])
    return acknowledged


@pytest.mark.slow
def test_concurrent_processes_lose_nothing(store_target: Target) -> None:
    db = store_target("shared")
    Memory(db, agent_id="team").close()  # create the schema once, as a deployment would
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(WORKERS)
    with context.Pool(WORKERS) as pool:
        jobs = [pool.apply_async(_worker, (db, w, barrier)) for w in range(WORKERS)]
        acknowledged = [job.get(timeout=300) for job in jobs]

    with Memory(db, agent_id="team") as mem:
        all_ids = [i for ids in acknowledged for i in ids]
        assert len(set(all_ids)) == WORKERS * WRITES
        assert {r.id for r in mem.export()} == set(all_ids)
        stats = mem.stats()
        assert stats.memories == WORKERS * WRITES
        assert stats.feedback == WORKERS * FEEDBACKS

        # Every rating is in the log, in commit order, and each taught "q" to its note.
        log = raw_query(
            db,
            "SELECT f.outcome, m.text FROM feedback f JOIN feedback_items i"
            " ON i.feedback_id = f.id JOIN memories m ON m.seq = i.memory_seq ORDER BY f.id",
        )
        assert len(log) == WORKERS * FEEDBACKS
        per_worker_feedback = sum(1.0 if k % 2 == 0 else 0.5 for k in range(FEEDBACKS))
        (taught,) = raw_query(db, "SELECT SUM(taught) FROM lesson_concepts")[0]
        assert taught == pytest.approx(WORKERS * per_worker_feedback)
        lessons = raw_query(db, "SELECT SUM(weight), COUNT(*) FROM lessons")[0]
        assert lessons == (pytest.approx(WORKERS * per_worker_feedback), WORKERS * FEEDBACKS)
        # A call moves each link by its outcome times its note's share of what "q" was
        # taught so far; replaying the log in commit order gives every weight exactly.
        expected: dict[str, float] = {}
        so_far = 0.0
        for outcome, text in log:
            so_far += outcome
            _, worker, _, note = text.split()
            for concept in ("common", f"w{worker}", f"topic{int(note) % TOPICS}"):
                expected[concept] = expected.get(concept, 0.0) + outcome * outcome / so_far
        edges = {(e.source, e.target): e for e in mem.graph(["q"]).edges}
        for concept, weight in expected.items():
            assert edges[("q", concept)].weight == pytest.approx(weight)

        cooccurrence = {(e.source, e.target): e for e in mem.graph(["common"]).edges}
        for topic in range(TOPICS):
            edge = cooccurrence[("common", f"topic{topic}")]
            assert edge.count == WORKERS * WRITES // TOPICS
            assert edge.weight == edge.count
        for w in range(WORKERS):
            assert cooccurrence[("common", f"w{w}")].count == WRITES
