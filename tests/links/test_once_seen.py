"""A SQLite store keeps no row for a pair written together once and never rated: it
reads it from the memory that carries it (`links/once_seen.py`). PostgreSQL keeps a
row for every pair. The same operations on both must leave the same links, graph,
stats and associative reads, whatever was folded when.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assocmem import Memory
from assocmem.links import pending_links
from tests.conftest import fresh_database

VOCABULARY = [f"w{n}" for n in range(14)]
AS_OF = "2030-01-01T00:00:00Z"


def _links(mem: Memory) -> list[tuple[Any, ...]]:
    """Every pair's learned state the export carries, times aside (a store's own), its
    ends in name order (an export names them in its store's id order)."""
    return sorted(
        (tuple(line["access"]), *sorted((line["a"], line["b"])), round(line["weight"], 9),
         line["count"], round(line["outcome_sum"], 9), line["feedback_count"])
        for line in mem.export_all()
        if line.get("line") == "link"
    )  # fmt: skip


def _reads(mem: Memory) -> list[Any]:
    found = []
    for word in VOCABULARY[:8]:
        for threshold in (1.0, 2.0):
            result = mem.read(
                concepts=[word], k=8, hops=2, threshold=threshold, explain=False, as_of=AS_OF
            )
            found.append([(i.text, round(i.score, 9), i.source) for i in result.items])
    return found


def _graph(mem: Memory) -> list[Any]:
    shown = mem.graph(VOCABULARY[:4], depth=2)
    edges = [(e.source, e.target, round(e.weight, 9), e.count) for e in shown.edges]
    return [shown.concepts, edges, shown.truncated]


def _replay(mem: Memory, seed: int) -> None:
    """Writes (two access classes), feedback, moves and forgets, from ``seed``."""
    rng = random.Random(seed)
    written: list[str] = []
    for step in range(70):
        roll = rng.random()
        if roll < 0.6 or len(written) < 5:
            words = rng.sample(VOCABULARY, rng.randint(2, 5))
            access = ["ops"] if rng.random() < 0.3 else None
            written.append(
                mem.write(f"note {step}: {' '.join(words)}", concepts=words, access=access).id
            )
        elif roll < 0.75:
            result = mem.read(concepts=rng.sample(VOCABULARY, 2), k=3)
            if result.items:
                mem.feedback(
                    read=result.id, used=[result.items[0].id], outcome=rng.choice([1.0, -1.0])
                )
        elif roll < 0.88:
            mem.update(rng.choice(written), access=rng.choice([["ops"], []]))
        else:
            gone = written.pop(rng.randrange(len(written)))
            mem.forget([gone])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("fold_every", [1, 7, 10_000])
def test_sqlite_without_once_seen_rows_reads_as_postgresql_with_them(
    postgres_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    fold_every: int,
) -> None:
    reference = fresh_database(postgres_server)  # PostgreSQL keeps a row for every pair
    monkeypatch.setattr(pending_links, "FOLD_MIN", fold_every)
    monkeypatch.setattr(pending_links, "FOLD_MAX", fold_every)
    path = str(tmp_path / "lean.db")
    with (
        Memory(reference, agent_id="a", role="ops") as full,
        Memory(path, agent_id="a", role="ops") as lean,
    ):
        _replay(full, seed)
        _replay(lean, seed)
        assert _links(lean) == _links(full)
        assert _graph(lean) == _graph(full)
        assert _reads(lean) == _reads(full)
        linked = lean.stats().links
        assert linked == full.stats().links
        lines = list(lean.export_all())
    # A reader of one layer counts its once-seen pairs from the kept count.
    with Memory(reference, agent_id="a") as full, Memory(path, agent_id="a") as lean:
        public = lean.stats().links
        assert public == full.stats().links
        assert _links(lean) == _links(full)
    # An export of the lean store, imported into another, reads the same again.
    with Memory(str(tmp_path / "copy.db"), agent_id="a", role="ops") as copy:
        assert not copy.import_lines(lines).errors
        copied = _links(copy)
        assert copied == _links_of(path)
        assert copy.stats().links == linked
    with Memory(str(tmp_path / "copy.db"), agent_id="a") as copy:
        assert copy.stats().links == public
    if fold_every == 1:  # all folded: the import stored no row the original lacks
        assert _rows(str(tmp_path / "copy.db")) <= _rows(path)
    if fold_every == 1:
        with sqlite3.connect(path) as db:
            (rows,) = db.execute("SELECT COUNT(*) FROM links").fetchone()
        assert rows < len(_links_of(path))  # the once-seen pairs have no row


def _rows(path: str) -> int:
    with sqlite3.connect(path) as db:
        (rows,) = db.execute("SELECT COUNT(*) FROM links").fetchone()
    return int(rows)


def _links_of(path: str) -> list[tuple[Any, ...]]:
    with Memory(path, agent_id="a", role="ops") as mem:
        return _links(mem)


def test_a_pending_count_adds_to_the_once_seen_pair_it_repeats(
    store_target: Callable[..., str],
) -> None:
    with Memory(store_target(), agent_id="a") as mem:
        mem.write("the canary deploy stalled", concepts=["canary", "stall"])
        gone = mem.write("an unrelated note", concepts=["tea", "cup"]).id
        mem.forget([gone])  # settles: the first pair is folded, once-seen on SQLite
        mem.write("the canary stalled again", concepts=["canary", "stall"])  # pending
        found = mem.read(concepts=["canary"], k=5, threshold=2.0)
        assert "stall" in found.expanded_concepts  # 1 folded + 1 pending reach 2
        (edge,) = mem.graph(["canary"]).edges
        assert (edge.target, edge.weight, edge.count) == ("stall", 2.0, 2)
        assert mem.stats().links == 1
