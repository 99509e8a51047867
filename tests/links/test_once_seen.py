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
from assocmem.links import once_seen, pending_links
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
@pytest.mark.parametrize("common", [3, once_seen.COMMON])
def test_sqlite_without_once_seen_rows_reads_as_postgresql_with_them(
    postgres_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    fold_every: int,
    common: int,
) -> None:
    reference = fresh_database(postgres_server)  # PostgreSQL keeps a row for every pair
    monkeypatch.setattr(pending_links, "FOLD_MIN", fold_every)
    monkeypatch.setattr(pending_links, "FOLD_MAX", fold_every)
    # Concepts marked common after a few memories: the walks bounded by their marks
    # and the rows given between them must leave everything as it was.
    monkeypatch.setattr(once_seen, "COMMON", common)
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


@pytest.mark.usefixtures("folds_in_the_writer")
def test_a_pair_of_common_concepts_is_stored_from_its_first_count_and_counted_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once both ends are common, a pair written once gets a row; one written once
    before they were marked and once after counts both, its first memory found by a
    walk that stops at their marks."""
    monkeypatch.setattr(pending_links, "FOLD_MIN", 1)
    monkeypatch.setattr(pending_links, "FOLD_MAX", 1)
    monkeypatch.setattr(once_seen, "COMMON", 3)
    path = str(tmp_path / "common.db")
    with Memory(path, agent_id="a") as mem:
        mem.write("early", concepts=["hub", "spoke", "early"])  # hub-spoke once-seen
        for n in range(3):
            mem.write(f"hub {n}", concepts=["hub", f"h{n}"])
            mem.write(f"spoke {n}", concepts=["spoke", f"s{n}"])
        mem.write("settle", concepts=["x", "y"])  # this fold marks hub and spoke
        assert _rows_between(path, "hub", "spoke") == []  # still once-seen: before the marks
        mem.write("later", concepts=["hub", "spoke"])
        mem.write("again", concepts=["hub", "h0"])
        mem.write("settle again", concepts=["x", "z"])
        assert _rows_between(path, "hub", "spoke") == [(2, 2.0)]  # both memories counted
        mem.write("new pair", concepts=["hub", "s1"])  # s1 is not common: once-seen
        for n in range(4):
            mem.write(f"rim {n}", concepts=["rim", f"r{n}"])
        mem.write("hub and rim", concepts=["hub", "rim"])  # both common: a row at once
        mem.write("settle once more", concepts=["y", "z"])
        assert _rows_between(path, "hub", "s1") == []
        assert _rows_between(path, "hub", "rim") == [(1, 1.0)]
        edges = {e.target: e.count for e in mem.graph(["hub"], depth=1).edges}
        assert (edges["spoke"], edges["s1"], edges["rim"]) == (2, 1, 1)
        assert mem.stats().links == 18  # every pair written, counted once, stored or not
    with sqlite3.connect(path) as db:
        marked = {name for (name,) in db.execute(
            "SELECT c.name FROM links_common m JOIN concepts c ON c.id = m.concept_id"
        )}  # fmt: skip
    assert {"hub", "spoke", "rim"} <= marked


def _rows_between(path: str, one: str, other: str) -> list[tuple[int, float]]:
    with sqlite3.connect(path) as db:
        return list(db.execute(
            "SELECT l.count, l.weight FROM links l JOIN concepts x ON x.id IN (l.a, l.b)"
            " JOIN concepts y ON y.id IN (l.a, l.b) WHERE x.name = ? AND y.name = ?",
            [one, other],
        ))  # fmt: skip


@pytest.mark.usefixtures("folds_in_the_writer")
def test_a_memory_moved_among_common_concepts_stores_its_pairs_for_later_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory moved into a layer after its concepts there were marked common gives
    their pair a row: a later walk for the pair stops at the marks, before it."""
    monkeypatch.setattr(pending_links, "FOLD_MIN", 1)
    monkeypatch.setattr(pending_links, "FOLD_MAX", 1)
    monkeypatch.setattr(once_seen, "COMMON", 3)
    path = str(tmp_path / "moved.db")
    with Memory(path, agent_id="a", role="ops") as mem:
        for n in range(4):
            mem.write(f"hub {n}", concepts=["hub", f"h{n}"])
            mem.write(f"spoke {n}", concepts=["spoke", f"s{n}"])
        moved = mem.write("restricted", concepts=["hub", "spoke"], access=["ops"]).id
        mem.write("settle", concepts=["x", "y"])
        mem.update(moved, access=[])  # into the public layer, where both are marked
        assert _rows_between(path, "hub", "spoke") == [(1, 1.0)]
        mem.write("public", concepts=["hub", "spoke"])
        mem.write("settle again", concepts=["x", "z"])
        (edge,) = [e for e in mem.graph(["hub"], depth=1).edges if e.target == "spoke"]
        assert edge.count == 2
        assert mem.stats().links == 11  # the moved pair counted once, as a row
    with Memory(path, agent_id="a") as public:  # one layer: its kept once-seen count
        assert public.stats().links == 11


@pytest.mark.usefixtures("folds_in_the_writer")
def test_forgetting_every_memory_of_a_common_concept_leaves_no_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_links, "FOLD_MIN", 1)
    monkeypatch.setattr(pending_links, "FOLD_MAX", 1)
    monkeypatch.setattr(once_seen, "COMMON", 3)
    path = str(tmp_path / "forgotten.db")
    with Memory(path, agent_id="a") as mem:
        ids = [mem.write(f"hub {n}", concepts=["hub", f"h{n}"]).id for n in range(5)]
        mem.write("settle", concepts=["x", "y"])
        assert _marks(path) == ["hub"]
        mem.forget(ids)
    assert _marks(path) == []  # not even an id whose name is gone


def _marks(path: str) -> list[str | None]:
    """Each mark's concept name (None where the concept itself is gone)."""
    with sqlite3.connect(path) as db:
        return [name for (name,) in db.execute(
            "SELECT c.name FROM links_common m LEFT JOIN concepts c ON c.id = m.concept_id"
        )]  # fmt: skip
