"""A read's cost is its set-wise statements: counted on both backends, a text read takes a
bounded number, and asking more words or concepts adds none (each arm asks for all of
them at once). A batch write looks up what its items name (parents) once for the batch,
not once per item."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from assocmem import Memory
from tests.conftest import Target

WORDS = ("deploy time out host cache registry timeout retry backoff slow network disk "
         "queue worker lease shard replica index vacuum").split()  # fmt: skip
# Statements a default text read (no lessons, no embedder) takes at most, begin and
# commit included, by backend: on a store unchanged since the last read, and on one
# just written to (what a SQLite connection keeps between reads is dropped then).
TEXT_READ_MOST = {"sqlite": 20, "postgres": 20}
AFTER_A_WRITE_MOST = {"sqlite": 24, "postgres": 20}


@contextmanager
def counted(mem: Memory) -> Iterator[list[str]]:
    """The statements ``mem``'s connection runs inside the block."""
    sent: list[str] = []
    conn = mem._store._conn
    raw = getattr(conn, "raw", None)
    if raw is not None:  # PostgreSQL: every statement the driver sends
        execute = raw.execute

        def recording(query: str, *args: object, **kwargs: object) -> object:
            sent.append(" ".join(str(query).split()))
            return execute(query, *args, **kwargs)  # type: ignore[arg-type]

        raw.execute = recording
        try:
            yield sent
        finally:
            del raw.execute
        return
    sqlite = getattr(conn, "_conn", conn)  # SQLite: what the library runs, triggers aside
    sqlite.set_trace_callback(lambda s: None if s.lstrip().startswith("--") else sent.append(s))
    try:
        yield sent
    finally:
        sqlite.set_trace_callback(None)


def _store(mem: Memory) -> None:
    mem.write_many([
        {"text": " ".join(WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(8)) + f" note {n}"}
        for n in range(300)
    ])  # fmt: skip
    mem.read("warm the caches")


def _statements(mem: Memory, read: Callable[[], object]) -> int:
    """How many statements ``read`` runs."""
    with counted(mem) as sent:
        read()
    return len(sent)


def test_a_text_read_is_a_few_statements(store_target: Target, backend: str) -> None:
    with Memory(store_target(), agent_id="ops") as mem:
        _store(mem)
        asked = _statements(mem, lambda: mem.read("why did the deploy time out?"))
        assert asked <= TEXT_READ_MOST[backend]
        mem.write("one more note: the deploy timed out on the registry host")
        asked = _statements(mem, lambda: mem.read("why did the deploy time out?"))
        assert asked <= AFTER_A_WRITE_MOST[backend]


def test_more_words_and_concepts_add_no_statements(store_target: Target) -> None:
    """Each arm asks for all of a question's terms and concepts at once: twice the words
    (and twice the concepts, their links and their memories) cost no more statements."""
    with Memory(store_target(), agent_id="ops") as mem:
        _store(mem)
        few = _statements(mem, lambda: mem.read(" ".join(WORDS[:6])))
        many = _statements(mem, lambda: mem.read(" ".join(WORDS[:12])))
        assert many <= few
        by_concepts = [_statements(mem, lambda n=n: mem.read(concepts=WORDS[:n])) for n in (6, 12)]
        assert by_concepts[1] <= by_concepts[0]


def test_a_batch_looks_up_its_items_parents_once(store_target: Target) -> None:
    """write_many's statements besides its inserts do not grow with its derived items,
    and an item naming an unreadable parent is still refused alone, naming the parent."""
    with Memory(store_target(), agent_id="ops") as mem:
        parents = [mem.write(f"parent note {i}").id for i in range(3)]
        mem.write_many([{"text": "warm the caches", "derived_from": parents}])
        lookups, results = [], []
        for n in (4, 40):
            batch = [{"text": f"child{n} note {i}", "derived_from": [parents[i % 3]]}
                     for i in range(n)]  # fmt: skip
            batch.insert(1, {"text": f"orphan{n}", "derived_from": ["01NOSUCHMEMORY"]})
            with counted(mem) as sent:
                results.append(mem.write_many(batch))
            lookups.append(len([s for s in sent if not s.lstrip().upper().startswith("INSERT")]))
        assert lookups[1] == lookups[0]
        for n, stored in zip((4, 40), results, strict=True):
            assert [r.stored for r in stored] == [True, False] + [True] * (n - 1)
            assert stored[1].error == "UnknownMemory" and "01NOSUCHMEMORY" in (
                stored[1].reason or ""
            )
