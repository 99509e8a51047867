"""What a connection caches between reads (the scope layers a reader sees, concept
ids by name) follows what other connections commit, on both backends.

PostgreSQL reads check both in the round trip that opens their snapshot; these
tests hold whatever way a backend checks them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assocmem import Memory
from assocmem.store.params import KEYED


def test_a_reader_sees_a_layer_another_connection_makes_after_its_first_read(
    store_target: Callable[..., str],
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops", project_id="web") as reader:
        reader.write("the web deploy uses the blue pool", concepts=["deploy"])
        assert [i.text for i in reader.read(concepts=["deploy"], k=5).items] == [
            "the web deploy uses the blue pool"
        ]  # the reader's layers are cached now: only ("web", "") exists
        with Memory(target, agent_id="ops") as writer:  # project "": a new layer
            writer.write("every deploy drains the old pool first", concepts=["deploy"])
        found = {i.text for i in reader.read(concepts=["deploy"], k=5).items}
        assert "every deploy drains the old pool first" in found
        found = {i.text for i in reader.read("drains the old pool", k=5).items}
        assert "every deploy drains the old pool first" in found


def test_a_reader_drops_concept_ids_another_connection_forgot(
    store_target: Callable[..., str],
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as reader, Memory(target, agent_id="ops") as other:
        old = other.write("the canary flagged a slow start", concepts=["canary"])
        assert [i.id for i in reader.read(concepts=["canary"], k=5).items] == [old.id]
        # Forgetting the only memory with "canary" deletes the concept; writing it
        # again makes a new id, which the reader must look up afresh.
        other.forget([old.id])
        new = other.write("a second canary passed", concepts=["canary"])
        assert [i.id for i in reader.read(concepts=["canary"], k=5).items] == [new.id]


def test_a_postgres_read_checks_its_caches_in_the_round_trip_that_begins_it(
    store_target: Callable[..., str], backend: str
) -> None:
    if backend != "postgres":
        pytest.skip("a SQLite read makes no round trips")
    with Memory(store_target(), agent_id="ops") as mem:
        mem.write_many(
            [{"text": f"deploy {n} timed out", "concepts": ["deploy"]} for n in range(5)]
        )
        mem.read(concepts=["deploy"], k=3)
        raw = mem._store._conn.raw
        sent: list[str] = []
        execute = raw.execute

        def recording(query: str, *args: object, **kwargs: object) -> object:
            sent.append(" ".join(str(query).split()))
            return execute(query, *args, **kwargs)  # type: ignore[arg-type]

        raw.execute = recording  # type: ignore[method-assign]
        try:
            assert mem.read(concepts=["deploy"], k=3).items
            assert mem.read("deploy timed out", k=3).items
        finally:
            del raw.execute
    begins = [i for i, s in enumerate(sent) if s.startswith("BEGIN")]
    assert len(begins) == 2 and begins[0] == 0, sent  # one snapshot per read
    assert all("FROM scopes" in sent[i] for i in begins), sent
    rest = [s for i, s in enumerate(sent) if i not in begins]
    assert not [s for s in rest if "FROM scopes" in s or "FROM store_info" in s], sent
    # Nothing was taught, marked or authored: those tables are not asked.
    asked = ("lesson_concepts", "trust_slashes", "trust_attestations", "FROM authors")
    assert not [s for s in rest if any(table in s for table in asked)], sent
    # A read's records come with their concepts: one statement for both.
    records = [s for s in sent if "FROM memories WHERE seq IN" in s and "mc.form" in s]
    assert records and not [s for s in sent if s.startswith(KEYED.strip() + " SELECT mc.")]


def test_a_reader_names_concepts_by_what_they_are_now_called(
    store_target: Callable[..., str],
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as reader, Memory(target, agent_id="ops") as other:
        first = other.write("the canary deploy passed", concepts=["deploy", "canary"])
        assert [edge.target for edge in reader.graph(["deploy"]).edges] == ["canary"]
        # The forget deletes both concepts; SQLite may hand their ids to new names.
        other.forget([first.id])
        other.write("the falcon deploy stalled", concepts=["deploy", "falcon"])
        assert [edge.target for edge in reader.graph(["deploy"]).edges] == ["falcon"]


def test_a_reader_uses_lessons_marks_and_authors_another_connection_added_after_its_first_read(
    store_target: Callable[..., str],
) -> None:
    # PostgreSQL skips asking tables its snapshot found empty; the next snapshot
    # must find them filled.
    target = store_target()
    notes = ["The pool ran dry during the nightly batch.", "Rotate the keyring first."]
    with Memory(target, agent_id="ops") as reader, Memory(target, agent_id="ops") as other:
        dry, fix = (r.id for r in other.write_many([{"text": t} for t in notes]))
        held_out = "What helped when the pool was dry?"
        first = reader.read(held_out, k=1).items
        assert [i.id for i in first] == [dry] and not first[0].record.slashed
        taught = other.read("How do I fix the pool running dry again?", k=2)
        other.feedback([fix], outcome=1.0, query_concepts=taught.query_concepts)
        other.slash([fix], scope="memory")  # type: ignore[list-item]
        items = reader.read(held_out, k=1).items
        assert [(i.id, i.source, i.record.slashed) for i in items] == [(fix, "learned", True)]
        # The first authors named: the reader's next question naming one prefers her notes.
        other.write("Bob: the garden needs water", author="Bob")
        other.write("Alice: the garden needs water too", author="Alice")
        named = reader.read("What did Bob say about the garden?", k=1).items
        assert named[0].record.author == "Bob" and named[0].parts["prefer"] > 1
