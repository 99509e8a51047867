"""Pending link changes (SQLite): a write appends its pairs, feedback its weight
changes, and a later writer folds them into `links` in bulk. Whether changes wait
or are folded, and whenever the fold happens, every read gives the same answer."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.links import pending_links

VOCABULARY = [f"c{i}" for i in range(60)]
NEVER = 10**9


def _workload(seed: int) -> list[tuple[str, Any]]:
    """Writes (some batched) in a project and in the agent's global pool, with
    feedback between them; concepts Zipf-skewed so a few become hubs with more
    strong links than a read follows."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
    ops: list[tuple[str, Any]] = []
    for i in range(420):
        concepts = list(dict.fromkeys(rng.choices(VOCABULARY, weights, k=rng.randint(2, 6))))
        layer = "project" if rng.random() < 0.7 else "global"
        ops.append(("write", (layer, f"note {i} " + " ".join(concepts), concepts)))
        if i % 9 == 8:
            rated = rng.randrange(i + 1)
            outcome = rng.choice((1.0, -1.0, 0.5))
            ops.append(("feedback", (rated, outcome, rng.sample(VOCABULARY[:12], 2))))
    return ops


def _play(path: Path, ops: list[tuple[str, Any]], fold_at: int, mp: pytest.MonkeyPatch) -> None:
    mp.setattr(pending_links, "fold_at", lambda links: fold_at)
    with (
        Memory(str(path), agent_id="a", project_id="p") as project,
        Memory(str(path), agent_id="a") as pool,
    ):
        ids: list[str] = []
        batch: list[dict[str, Any]] = []
        for kind, args in ops:
            if kind == "write":
                layer, text, concepts = args
                mem = project if layer == "project" else pool
                if len(ids) % 5 == 4:  # every fifth write goes in a batch of its own layer
                    batch.append({"text": text, "concepts": concepts})
                    ids.append(mem.write_many(batch)[0].id or "")
                    batch.clear()
                else:
                    ids.append(mem.write(text, concepts=concepts).id or "")
            else:
                rated, outcome, query = args
                project.feedback([ids[rated]], outcome, query_concepts=query)


def _observed(path: Path) -> dict[str, Any]:
    """What reads in the project (two layers) and the pool (one layer) see."""
    seen: dict[str, Any] = {}
    for name, project in (("project", "p"), ("pool", "")):
        with Memory(str(path), agent_id="a", project_id=project) as mem:
            seen[name, "links"] = mem.stats().links
            for concept in VOCABULARY:
                graph = mem.graph([concept], depth=2)
                seen[name, "graph", concept] = (
                    graph.truncated,
                    [(e.source, e.target, round(e.weight, 9), e.count) for e in graph.edges],
                )
                for threshold, hops in ((2, 1), (1, 2), (3, 2)):
                    result = mem.read(concepts=[concept], k=200, hops=hops, threshold=threshold)
                    seen[name, "read", concept, threshold, hops] = (
                        {c: round(w, 9) for c, w in result.expanded_concepts.items()},
                        sorted((i.text, i.source) for i in result.items),
                        result.bounds,
                    )
    return seen


def test_reads_agree_whenever_counts_are_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = _workload(seed=11)
    every, some, never = tmp_path / "every.db", tmp_path / "some.db", tmp_path / "never.db"
    _play(every, ops, 1, monkeypatch)  # folded on every write: as if upserted directly
    _play(some, ops, 37, monkeypatch)
    _play(never, ops, NEVER, monkeypatch)

    with sqlite3.connect(every) as db:
        assert db.execute("SELECT COUNT(*) FROM pending_links").fetchone() == (0,)
    with sqlite3.connect(never) as db:
        assert db.execute("SELECT COUNT(*) FROM pending_pairs").fetchone()[0] > 1000
        assert db.execute("SELECT COUNT(*) FROM links").fetchone() == (0,)  # feedback waits too
    expected = _observed(every)
    assert expected["project", "links"] > expected["pool", "links"] > 0
    # the workload reaches the fan-out cap, so the bounded lookup of pending pairs runs
    assert any(v[2].get("expansion_capped") for k, v in expected.items() if k[1] == "read")
    assert _observed(some) == expected
    assert _observed(never) == expected


@pytest.mark.usefixtures("folds_in_the_writer")
def test_a_reader_follows_writes_and_folds_of_another_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_links, "fold_at", lambda links: 10)
    path = str(tmp_path / "m.db")
    with Memory(path, agent_id="a") as writer, Memory(path, agent_id="a") as reader:
        for i in range(3):  # 3 pairs each: nothing folded yet
            writer.write(f"note {i}", concepts=["retry", "backoff", "jitter"])
        assert reader.read(concepts=["retry"]).expanded_concepts == {"backoff": 3, "jitter": 3}
        for i in range(3, 7):  # the fourth write folds (12 pair changes); later ones wait
            writer.write(f"note {i}", concepts=["retry", "backoff", "jitter"])
        assert reader.read(concepts=["retry"]).expanded_concepts == {"backoff": 7, "jitter": 7}
        edges = {(e.source, e.target): (e.weight, e.count) for e in reader.graph(["retry"]).edges}
        assert edges == {("retry", "backoff"): (7, 7), ("retry", "jitter"): (7, 7)}
        assert reader.stats().links == 3
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT SUM(count) FROM links").fetchone() == (12,)  # 4 writes folded
        assert db.execute("SELECT SUM(count) FROM pending_pairs").fetchone() == (9,)


def test_a_pending_pair_is_weighed_wherever_it_could_reach_a_concepts_strongest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read looks a pending pair's folded weight up only where the pair could reach
    # the weight of the concept's limit-th strongest link (the bar). These two reach
    # it exactly: one whose row lies past the rows the read fetched, and one with no
    # row that a folded memory carries once.
    monkeypatch.setattr(pending_links, "fold_at", lambda links: NEVER)
    path = str(tmp_path / "m.db")
    with Memory(path, agent_id="a") as mem:
        notes = iter(range(10**6))

        def write(partner: str, times: int) -> None:
            for _ in range(times):
                mem.write(f"note {next(notes)}", concepts=["hub", partner])

        for i in range(27):  # weight 3 each, the lowest ids after the hub's
            write(f"a{i}", 3)
        write("stored", 3)  # weight 3 as well: past the rows a read fetches
        write("seen", 1)  # once-seen once folded: no row
        for i in range(25):  # weight 4: a read of the hub follows 25, so the bar is 4
            write(f"b{i}", 4)
        with mem._store.transaction():
            mem._store.fold_links()
        write("stored", 1)  # 3 + 1: reaches the bar
        write("seen", 3)  # 1 + 3: reaches it too

        def expanded(reader: Memory) -> list[dict[str, float]]:
            return [
                reader.read(concepts=["hub"], threshold=threshold, hops=1).expanded_concepts
                for threshold in (5, 1, 5)
            ]

        # A fresh connection reads at the bar first; another reads above it (neither
        # pair can reach 5) first, then at it: the second read looks for the carrier
        # of the pair the first found had no row.
        with Memory(path, agent_id="a") as first:
            waiting = [first.read(concepts=["hub"], threshold=1, hops=1).expanded_concepts]
        waiting += expanded(mem)
        with mem._store.transaction():
            mem._store.fold_links()
        folded = expanded(mem)
        assert [folded[1], *folded] == waiting
    assert waiting[1] == waiting[3] == {}
    # ties on weight go to the lower id: both come before every b
    at_the_bar = {"stored": 4, "seen": 4, **{f"b{i}": 4 for i in range(22)}}
    assert waiting[0] == waiting[2] == at_the_bar


def test_a_rolled_back_write_leaves_no_pending_count_behind(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "m.db"), agent_id="a") as mem:
        mem.write("first", concepts=["retry", "backoff"])
        store = mem._store
        with pytest.raises(RuntimeError), store.transaction():
            mem.write("second", concepts=["retry", "backoff"])
            # the open transaction's own pending count is read ...
            assert mem.read(concepts=["retry"], threshold=1).expanded_concepts == {"backoff": 2}
            raise RuntimeError("abandon the transaction")
        # ... and gone with it
        assert mem.read(concepts=["retry"], threshold=1).expanded_concepts == {"backoff": 1}


def test_pending_rows_number_on_across_connections_rollbacks_and_folds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row's id is the pair changes appended up to it (migration 0018): whichever
    # connection appended last, and whatever a rollback took back or a fold emptied.
    monkeypatch.setattr(pending_links, "fold_at", lambda links: NEVER)
    path = str(tmp_path / "m.db")
    with Memory(path, agent_id="a") as one, Memory(path, agent_id="a") as two:
        one.write("a", concepts=["c1", "c2", "c3"])  # 3 pairs: id 3
        two.write("b", concepts=["c1", "c2"])  # id 4
        one.write("c", concepts=["c1", "c2"])  # id 5, after two's row
        with pytest.raises(RuntimeError), one._store.transaction():
            one.write("d", concepts=["c1", "c2", "c3", "c4"])  # 6 pairs, taken back
            raise RuntimeError("abandon the transaction")
        one.write("e", concepts=["c1", "c3"])  # id 6
        two.write("f", concepts=["c2", "c3"])  # id 7
        with sqlite3.connect(path) as db:
            assert [r for (r,) in db.execute("SELECT id FROM pending_links ORDER BY id")] == [
                3, 4, 5, 6, 7
            ]  # fmt: skip
        with two._store.transaction():
            two._store.fold_links()
        one.write("g", concepts=["c1", "c4"])  # id 8, the first after the fold
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT id FROM pending_links").fetchall() == [(8,)]
            base = "SELECT value FROM store_info WHERE key = 'pending_links_base'"
            assert db.execute(base).fetchone() == ("7",)
        edges = {(e.source, e.target): e.count for e in one.graph(["c1"]).edges}
        assert edges == {("c1", "c2"): 3, ("c1", "c3"): 2, ("c1", "c4"): 1}


def test_forgetting_a_memory_takes_back_its_pending_pairs(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "m.db"), agent_id="a") as mem:
        kept = mem.write("kept", concepts=["retry", "backoff"])
        gone = mem.write("gone", concepts=["retry", "backoff", "jitter"])
        assert kept.id and gone.id
        mem.forget([gone.id])
        edges = {(e.source, e.target): e.count for e in mem.graph(["retry"]).edges}
        assert edges == {("retry", "backoff"): 1}
        assert mem.stats().links == 1


def test_the_fold_threshold_follows_the_links_table_within_bounds() -> None:
    assert pending_links.fold_at(0) == pending_links.FOLD_MIN
    assert pending_links.fold_at(200_000) == 200_000 // pending_links.FOLD_RATIO
    assert pending_links.fold_at(10**9) == pending_links.FOLD_MAX


@pytest.mark.usefixtures("folds_in_the_writer")
def test_a_fold_records_the_size_it_left_links_at(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path, agent_id="a") as mem:
        mem.write_many(
            [
                {"text": f"{word}{i}", "concepts": [f"c{i}", f"d{i}", "e"]}
                for i in range(2000)
                for word in ("n", "m")
            ]
        )  # 12,000 pair changes: past the minimum of a store whose links are still empty
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM pending_links").fetchone() == (0,)
        (links,) = db.execute("SELECT COUNT(*) FROM links").fetchone()
        assert links == 6_000  # each pair written twice: stored (`once_seen`)
        assert db.execute(
            "SELECT value FROM store_info WHERE key = 'links_at_fold'"
        ).fetchone() == (str(links),)


def _as_before_groups(path: Path, *, folded: bool) -> int:
    """Turn a store's pending rows back into one row per pair, as migration 0017 left
    them (``folded``: then delete them, as a fold does); the last id they took."""
    with sqlite3.connect(path) as db:
        db.executescript(f"""
            CREATE TABLE pairs AS SELECT * FROM pending_pairs ORDER BY id, a, b;
            DROP VIEW pending_pairs;
            DROP TABLE pending_links;
            CREATE TABLE pending_links (
                id INTEGER PRIMARY KEY AUTOINCREMENT, scope_id INTEGER NOT NULL,
                a INTEGER NOT NULL, b INTEGER NOT NULL, count INTEGER NOT NULL,
                at INTEGER NOT NULL, moved REAL, outcome REAL, CHECK (a < b));
            INSERT INTO pending_links (scope_id, a, b, count, at, moved, outcome)
            SELECT scope_id, a, b, count, at, moved, outcome FROM pairs;
            DROP TABLE pairs;
            DELETE FROM pending_links WHERE {int(folded)};
            DELETE FROM schema_migrations WHERE name LIKE '0018%';
            DELETE FROM store_info WHERE key = 'pending_links_base';
        """)
        (last,) = db.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'pending_links'"
        ).fetchone()
    return int(last)


def test_pending_pairs_of_an_older_store_read_the_same_once_grouped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting, folded = tmp_path / "waiting.db", tmp_path / "folded.db"
    for path in (waiting, folded):
        _play(path, _workload(seed=5), NEVER, monkeypatch)
    expected = _observed(waiting)
    last = _as_before_groups(waiting, folded=False)
    assert last > 1000
    assert _observed(waiting) == expected  # migrates first
    assert _as_before_groups(folded, folded=True) == last
    for path, rows in ((waiting, last), (folded, 0)):
        with Memory(str(path), agent_id="a") as mem:
            mem.write("one more", concepts=["c1", "c2", "c3"])
        with sqlite3.connect(path) as db:
            # ids go on from the last one ever taken, one per pair change
            assert db.execute("SELECT COUNT(*), MAX(id) FROM pending_links").fetchone() == (
                rows + 1,
                last + 3,
            )
