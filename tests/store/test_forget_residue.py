"""Forgetting erases (issue 17, item 5): once `forget` returns, no byte of the
forgotten text, its author or its unique concepts is left in the store's files, on
both backends, while a remaining memory sharing its other words keeps working."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assocmem import Memory

# Unique, unstemmable markers: each must appear in no file once forgotten.
TEXT_MARKER = "qzvtextmarkerxj"
AUTHOR = "Wyxqauthorname"
CONCEPT = "qzvconceptmarkerxk"
MARKERS = (TEXT_MARKER, AUTHOR, CONCEPT)


def _files(mem: Memory, backend: str, target: str) -> Iterator[Path]:
    """Every file of the store: SQLite's db, -wal and -shm; PostgreSQL's relation
    files (heap, indexes, TOAST, free-space and visibility maps) of its database."""
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            if Path(target + suffix).exists():
                yield Path(target + suffix)
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # every dirty buffer written to the files
        (data_dir,) = conn.execute("SHOW data_directory").fetchone()  # type: ignore[misc]
        rows = conn.execute(
            "SELECT pg_relation_filepath(c.oid) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
            " AND pg_relation_filepath(c.oid) IS NOT NULL"
        ).fetchall()
    for (relative,) in rows:
        yield from Path(data_dir).glob(relative + "*")


def _residue(mem: Memory, backend: str, target: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _files(mem, backend, target):
        data = path.read_bytes().lower()
        for marker in MARKERS:
            if marker.lower().encode() in data:
                found.setdefault(marker, []).append(path.name)
    return found


@pytest.fixture
def checkpointed(backend: str, store_target: Callable[..., str]) -> str:
    return store_target("residue")


def test_forget_leaves_no_bytes_of_text_author_or_concepts(backend: str, checkpointed: str) -> None:
    target = checkpointed
    with Memory(target, agent_id="erin") as mem:
        keep = mem.write(
            "The deploy of the billing service timed out", concepts=["deploy", "billing"]
        )
        gone = mem.write(
            f"The deploy failed because {TEXT_MARKER} was leaked",
            concepts=["deploy", CONCEPT],
            author=AUTHOR,
        )
        assert gone.stored and keep.stored
        for _ in range(30):  # enough churn that the FTS index has several segments
            mem.write("filler note about deploy and billing queues")
        hits = mem.read(f"{TEXT_MARKER} {CONCEPT} said by {AUTHOR}")
        assert gone.id in [h.id for h in hits.items]
        # The log and what it taught name the concept too (a question may carry it).
        mem.feedback([gone.id], 1.0, query_concepts=[CONCEPT, "deploy"])
        mem.feedback([gone.id, keep.id], 0.5, query_concepts=["deploy", "billing"])
        assert _residue(mem, backend, target)  # the scan sees what is there

        assert mem.forget(ids=[gone.id]) == 1
        assert _residue(mem, backend, target) == {}

        # The remaining memory sharing its words still answers, by text and concept.
        assert keep.id in [h.id for h in mem.read("deploy billing", k=50).items]
        assert keep.id in [h.id for h in mem.read(concepts=["deploy"], k=50).items]
        assert gone.id not in [h.id for h in mem.read(TEXT_MARKER).items]
        # A forgotten concept interned again gets a working row of its own.
        again = mem.write(f"a new note on {CONCEPT}", concepts=[CONCEPT])
        assert again.id in [h.id for h in mem.read(concepts=[CONCEPT]).items]


def test_a_concept_forgotten_elsewhere_is_not_served_from_a_stale_cache(
    store_target: Callable[..., str],
) -> None:
    target = store_target("stale")
    with Memory(target, agent_id="a") as writer, Memory(target, agent_id="a") as other:
        first = writer.write("one note", concepts=[CONCEPT, "shared"])
        other.write("a second note", concepts=[CONCEPT, "shared"])  # caches the id
        other.forget(ids=[r.id for r in other.read(concepts=[CONCEPT]).items])
        assert first.id not in [r.id for r in writer.read(concepts=["shared"]).items]
        # The writer had CONCEPT cached under the deleted id: it must intern it anew.
        fresh = writer.write("a third note", concepts=[CONCEPT, "other"])
        record = other.get([fresh.id])[0]
        assert CONCEPT in record.concepts
        assert fresh.id in [r.id for r in other.read(concepts=[CONCEPT]).items]
