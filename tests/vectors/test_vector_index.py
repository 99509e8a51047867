"""The vector index: exact scans and HNSW graphs agree, graphs persist beside the store,
and neither ever returns what a reader may not see or what was forgotten.

The graph threshold is lowered to a few hundred vectors so the real graph code runs
in seconds; graph work runs in the search that makes it due (``background=False``).
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.capabilities import open_store
from assocmem.memory import checked_scope
from assocmem.store import Store, View
from assocmem.testing import ToyEmbedder
from assocmem.vectors import ann
from assocmem.vectors.index import GRAPH_SHARE, OVERFETCH, IndexSettings
from assocmem.vectors.space import VectorSpace

pytest.importorskip("numpy")
pytest.importorskip("faiss")

THRESHOLD = 200
GRAPHS = IndexSettings(threshold=THRESHOLD, background=False)
EXACT = IndexSettings(ann=False)
WORDS = [f"w{i}" for i in range(400)]


def texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 6)) for _ in range(count)]


def fill(target: str, agent: str, count: int, seed: int = 0, **fields: object) -> list[str]:
    with Memory(target, agent_id=agent, embedder=ToyEmbedder()) as memory:
        results = memory.write_many([{"text": t, **fields} for t in texts(count, seed)])
    return [r.id for r in results]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    return str(tmp_path / "vectors.db")


@pytest.fixture
def opened() -> Iterator[Callable[[str], Store]]:
    stores: list[Store] = []

    def open_one(target: str) -> Store:
        stores.append(open_store(target))
        return stores[-1]

    yield open_one
    for store in stores:
        store.close()


def space_over(store: Store, settings: IndexSettings = GRAPHS) -> VectorSpace:
    return VectorSpace.checked(store, ToyEmbedder(), settings=settings)


def nearest(space: VectorSpace, store: Store, agent: str, text: str, k: int = 10) -> list[int]:
    view = View(scope=checked_scope(agent))
    return [seq for seq, _ in space.search(store, view, space.embed_query(text), k)]


def seq_of(store: Store, agent: str, id: str) -> int:
    return store.visible_seqs(checked_scope(agent), [id])[id]


def graph_rows(space: VectorSpace) -> int:
    return sum(rows for _, rows in space.index.layer_sizes().values())


def test_graph_search_agrees_with_the_exact_scan(sqlite_db: str, opened: Callable) -> None:
    fill(sqlite_db, "a", 1000)
    assert 10 * OVERFETCH * GRAPH_SHARE <= 1000  # so the graph, not a scan, answers
    store = opened(sqlite_db)
    graph, exact = space_over(store), space_over(store, EXACT)
    queries = texts(30, seed=99)
    agreement = [
        len(set(nearest(graph, store, "a", q)) & set(nearest(exact, store, "a", q))) / 10
        for q in queries
    ]
    assert graph_rows(graph) == 1000 and graph_rows(exact) == 0
    assert sum(agreement) / len(agreement) >= 0.95


def test_a_graph_is_saved_beside_the_store_and_reused(
    sqlite_db: str, opened: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    fill(sqlite_db, "a", 300)
    first = space_over(opened(sqlite_db))
    before = nearest(first, first_store := opened(sqlite_db), "a", "w1 w2 w3")
    files = list(ann.layer_files(Path(sqlite_db + ".vec-index")))
    assert len(files) == 1 and before
    caplog.set_level("INFO", logger="assocmem.vectors.index")
    again = space_over(opened(sqlite_db))
    assert nearest(again, first_store, "a", "w1 w2 w3") == before
    assert graph_rows(again) == 300
    assert not [r for r in caplog.records if "has an HNSW graph" in r.getMessage()]


WRITER = """
import sys
from assocmem import Memory
from assocmem.testing import ToyEmbedder
with Memory(sys.argv[1], agent_id="a", embedder=ToyEmbedder()) as memory:
    print(memory.write("zebra quokka narwhal").id)
"""


def test_another_process_writes_are_found(sqlite_db: str, opened: Callable) -> None:
    fill(sqlite_db, "a", 300)
    store = opened(sqlite_db)
    space = space_over(store)
    assert nearest(space, store, "a", "w1") and graph_rows(space) == 300
    written = subprocess.run(
        [sys.executable, "-c", WRITER, sqlite_db], check=True, capture_output=True, text=True
    ).stdout.strip()
    seq = seq_of(store, "a", written)
    assert nearest(space, store, "a", "zebra quokka narwhal", k=1) == [seq]


def test_a_forgotten_memory_is_never_returned_and_leaves_the_file(
    sqlite_db: str, opened: Callable
) -> None:
    ids = fill(sqlite_db, "a", 300)
    store = opened(sqlite_db)
    space, target, seq = space_over(store), texts(300, 0)[7], seq_of(store, "a", ids[7])
    memory = Memory.attached(store, checked_scope("a"), space)
    assert memory.read(target, k=1).items[0].id == ids[7]
    vector = space.embed_query(target).tobytes()
    memory.forget([ids[7]])
    assert ids[7] not in [item.id for item in memory.read(target, k=20).items]
    assert seq not in nearest(space, store, "a", target, k=300)
    (_, path), *_ = ann.layer_files(Path(sqlite_db + ".vec-index"))
    assert vector not in path.read_bytes()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_readers_see_only_their_own_layers(store_target: Callable, opened: Callable) -> None:
    target = store_target()
    fill(target, "a", 250, seed=1)
    fill(target, "b", 250, seed=1)  # the same texts, another tenant
    fill(target, "a", 250, seed=2, access=["admin"])  # a role the reader lacks
    store = opened(target)
    space = space_over(store)
    view = View(scope=checked_scope("a"))
    for query in texts(10, seed=1):
        found = [seq for seq, _ in space.search(store, view, space.embed_query(query), 50)]
        assert len(found) == 50
        assert set(found) == store.visible(view, found)


def test_a_selective_filter_still_fills_k(sqlite_db: str, opened: Callable) -> None:
    fill(sqlite_db, "a", 1000)  # the first, graph search finds too few; a scan follows
    rare = fill(sqlite_db, "a", 12, seed=5, tags=["rare"])
    store = opened(sqlite_db)
    space = space_over(store)
    memory = Memory.attached(store, checked_scope("a"), space)
    items = memory.read("w1 w2 w3", k=10, where={"tags": {"$contains": "rare"}}).items
    assert graph_rows(space) == 1012
    assert len(items) == 10 and {item.id for item in items} <= set(rare)
    assert all("semantic" in item.sources for item in items)


@pytest.mark.parametrize("damage", ["garbage", "cut", "deleted", "foreign"])
def test_a_damaged_or_foreign_file_is_rebuilt(
    sqlite_db: str, tmp_path: Path, opened: Callable, damage: str
) -> None:
    fill(sqlite_db, "a", 300)
    store = opened(sqlite_db)
    expected = nearest(space_over(store, EXACT), store, "a", "w5 w6 w7")
    space_over(store).index.refresh(store)  # builds and saves the graph
    (_, path), *_ = ann.layer_files(Path(sqlite_db + ".vec-index"))
    if damage == "garbage":
        path.write_bytes(b"\0" * 4096)
    elif damage == "cut":
        path.write_bytes(path.read_bytes()[:5000])
    elif damage == "deleted":
        path.unlink()
    else:  # a file left by another store at the same place
        other = str(tmp_path / "other.db")
        fill(other, "a", 300, seed=3)
        space_over(opened(other)).index.refresh(opened(other))
        (_, foreign), *_ = ann.layer_files(Path(other + ".vec-index"))
        path.write_bytes(foreign.read_bytes())
    rebuilt = space_over(store)
    assert nearest(rebuilt, store, "a", "w5 w6 w7") == expected
    assert graph_rows(rebuilt) == 300


def test_a_stale_file_catches_up_with_the_store(sqlite_db: str, opened: Callable) -> None:
    ids = fill(sqlite_db, "a", 300)
    store = opened(sqlite_db)
    space_over(store).index.refresh(store)
    (_, path), *_ = ann.layer_files(Path(sqlite_db + ".vec-index"))
    old = path.read_bytes()
    fill(sqlite_db, "a", 50, seed=8)
    with Memory(sqlite_db, agent_id="a", embedder=ToyEmbedder()) as memory:
        memory.forget(ids[:20])
    path.write_bytes(old)  # as if the last saves never happened
    caught_up = space_over(store)
    exact = space_over(store, EXACT)
    for query in texts(10, seed=8):
        assert nearest(caught_up, store, "a", query) == nearest(exact, store, "a", query)
    live, _ = next(iter(caught_up.index.layer_sizes().values()))
    assert live == 330


def test_a_memory_moved_to_another_access_class_moves_in_the_index(
    sqlite_db: str, opened: Callable
) -> None:
    ids = fill(sqlite_db, "a", 300)
    store = opened(sqlite_db)
    space, target, seq = space_over(store), texts(300, 0)[3], seq_of(store, "a", ids[3])
    assert nearest(space, store, "a", target, k=1) == [seq]
    with Memory(sqlite_db, agent_id="a") as other:  # another connection, no embedder
        other.update(ids[3], access=["admin"])
    assert seq not in nearest(space, store, "a", target, k=300)
    admin = View(scope=checked_scope("a", role="admin"))
    found = space.search(store, admin, space.embed_query(target), 1)
    assert [s for s, _ in found] == [seq]
