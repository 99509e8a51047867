"""Tenant isolation of what a read computes: another agent's writes and forgets in
the same store never change an agent's read (its items, their order, their scores).

The lexical arm's statistics (BM25's memory count, average length and document
frequencies, the match counts and size that drop over-common terms) are counted
over the reader's own layers, on both backends.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.store import View

QUESTIONS = (
    "why did the deploy fail",
    "deploy rollback after the timeout",
    "certificate expired on the gateway",
    "which cache warmed slowly",
    "gateway timeout during the rollback",
)

OWN = (
    "deploy failed after the certificate expired on the gateway",
    "the rollback finished once the cache warmed",
    "gateway timeout during the nightly deploy",
    "certificate renewed, deploy retried and passed",
    "cache warmed slowly after the rollback",
    "timeout raised to thirty seconds for the gateway",
    "the deploy pipeline waits for the cache",
    "rollback plan reviewed with the gateway team",
)


def _reads(mem: Memory) -> list[list[tuple[str, dict[str, int]]]]:
    """Each question's items in order, with their rank in every arm that found them
    (scores also carry the time since each memory was last read, so not them)."""
    return [
        [(item.id, item.sources) for item in mem.read(question, k=8).items]
        for question in QUESTIONS
    ]


def _foreign(count: int, seed: int) -> list[dict[str, str]]:
    """Notes that share the reader's words, "deploy" above all, so that store-wide
    statistics would make it common and reweigh everything else."""
    rng = random.Random(seed)
    words = ["deploy", "gateway", "cache", "timeout", "rollback", "certificate", "failed"]
    filler = [f"filler{i}" for i in range(40)]
    notes = []
    for i in range(count):
        picked = ["deploy", *rng.sample(words[1:], 2), *rng.sample(filler, 5), f"note{i}"]
        rng.shuffle(picked)
        notes.append({"text": " ".join(picked)})
    return notes


def test_foreign_notes_change_nothing_in_a_read(store_target: Callable[..., str]) -> None:
    target = store_target()
    reader = Memory(target, agent_id="b")
    other = Memory(target, agent_id="a")
    try:
        reader.write_many([{"text": text} for text in OWN])
        before = _reads(reader)
        assert all(before), "every question finds some of the reader's notes"
        other.write_many(_foreign(40, seed=1))
        assert _reads(reader) == before
        other.write_many(_foreign(2100, seed=2))
        assert _reads(reader) == before
        other.forget(where={"kind": "episodic"})
        assert _reads(reader) == before
    finally:
        reader.close()
        other.close()


def test_foreign_notes_cannot_hide_the_readers_memory(store_target: Callable[..., str]) -> None:
    """A word in half of a large store is dropped from the lexical query: counted
    store-wide, 2,100 foreign notes saying "deploy" dropped it from the reader's
    question, and the reader's only note saying it lost its place to notes saying
    "rollback"."""
    target = store_target()
    reader = Memory(target, agent_id="b")
    other = Memory(target, agent_id="a")
    try:
        (own,) = reader.write_many([{"text": "deploy failed on friday"}])
        reader.write_many([{"text": f"rollback plan {i} for the database"} for i in range(12)])
        assert own.id in [i.id for i in reader.read("deploy rollback", k=5).items]
        other.write_many(_foreign(2100, seed=3))
        assert own.id in [i.id for i in reader.read("deploy rollback", k=5).items]
    finally:
        reader.close()
        other.close()


def test_a_large_own_store_still_drops_its_common_words(store_target: Callable[..., str]) -> None:
    """The reader's own over-common word is still left out (the rule holds, counted
    over what the reader reads): its note saying only that word is not found."""
    target = store_target()
    reader = Memory(target, agent_id="b")
    try:
        (own,) = reader.write_many([{"text": "deploy failed on friday"}])
        reader.write_many([{"text": f"rollback plan {i} for the database"} for i in range(12)])
        reader.write_many(_foreign(2100, seed=4))
        found = [i.id for i in reader.read("deploy rollback", k=5).items]
        assert own.id not in found
    finally:
        reader.close()


def test_bm25_per_reader_is_fts5_bm25_over_the_readers_memories(tmp_path: Path) -> None:
    """Counted per layer, BM25 is still FTS5's: a reader sharing a store with another
    tenant gets exactly the ranking and scores FTS5's bm25() gives the same reader
    alone in a store of its own."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(50)] + ["deploy", "deploys", "running", "runs"]
    notes = [{"text": " ".join(rng.choices(words, k=rng.randint(1, 25)))} for _ in range(300)]
    alone, shared = str(tmp_path / "alone.db"), str(tmp_path / "shared.db")
    with Memory(alone, agent_id="b") as mem, Memory(shared, agent_id="b") as mine:
        mem.write_many(notes)
        mine.write_many(notes)
        with Memory(shared, agent_id="a") as other:
            other.write_many([{"text": " ".join(rng.choices(words[40:], k=9))} for _ in range(500)])
        for terms in (["deploy"], ["w1", "w2", "running"], ["runs", "w3", "w3"]):
            with closing(sqlite3.connect(alone)) as conn:
                fts5 = conn.execute(
                    "SELECT rowid, -rank FROM memories_fts WHERE memories_fts MATCH ?"
                    " ORDER BY rank, rowid LIMIT 20",
                    [" OR ".join(f'"{term}"' for term in terms)],
                ).fetchall()
            # the stores' own lexical rankings, compared with FTS5's
            for ours in (
                mem._store.lexical(View(mem.scope), terms, 20),
                mine._store.lexical(View(mine.scope), terms, 20),
            ):
                assert [seq for seq, _ in ours] == [seq for seq, _ in fts5]
                assert [score for _, score in ours] == pytest.approx([s for _, s in fts5])
