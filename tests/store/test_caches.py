"""What a connection caches between reads (the scope layers a reader sees, concept
ids by name, and on SQLite what its last read looked up) follows what it and other
connections commit, on both backends.

PostgreSQL reads check both in the round trip that opens their snapshot; these
tests hold whatever way a backend checks them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

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


def test_a_writer_drops_concept_ids_another_connection_forgot(
    store_target: Callable[..., str],
) -> None:
    target = store_target()
    with Memory(target, agent_id="ops") as writer, Memory(target, agent_id="ops") as other:
        old = writer.write("the canary flagged a slow start", concepts=["canary"])
        other.forget([old.id])  # deletes "canary"; its id may go to the next new name
        falcon = other.write("the falcon deploy stalled", concepts=["falcon"])
        new = writer.write("a second canary passed", concepts=["canary"])
        assert [i.id for i in writer.read(concepts=["canary"], k=5).items] == [new.id]
        assert [i.id for i in writer.read(concepts=["falcon"], k=5).items] == [falcon.id]
        (record,) = writer.get([new.id])
        assert record.concepts == ("canari",)  # "canary", folded to its stem


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


# A fixed moment for every read below: a read restarts the decay clock of what it
# returns (to this moment), so whichever connection reads first, the store's
# content is the same for every other, and their scores can be compared exactly.
AS_OF = (datetime.now(UTC) + timedelta(days=1)).isoformat()
QUESTIONS = ("why did the deploy time out?", "zebra crossing near the depot", "pool ran dry")


def _answers(mem: Memory) -> list[list[tuple[str, float, str]]]:
    return [
        [(i.id, i.score, i.source) for i in mem.read(q, k=5, as_of=AS_OF).items] for q in QUESTIONS
    ]


def _fresh(target: str) -> list[list[tuple[str, float, str]]]:
    with Memory(target, agent_id="ops") as mem:
        return _answers(mem)


def _written(mem: Memory) -> None:
    """Write the clocks ``mem``'s reads restarted: until its next write transaction
    they are its own, and another connection reads the clocks as stored."""
    mem._store.write_queued()  # type: ignore[attr-defined]


def test_what_a_reader_keeps_between_reads_answers_as_a_fresh_connection_does(
    store_target: Callable[..., str],
) -> None:
    """A connection may keep what its reads looked up (records, statistics, unknown
    words) from one read to the next while the store is unchanged; after every kind of
    change, by itself or another connection, it answers exactly as a new one does."""
    target = store_target()
    with Memory(target, agent_id="ops") as reader, Memory(target, agent_id="ops") as other:
        reader.write_many(
            [{"text": f"deploy {n} timed out on host h{n % 3}"} for n in range(12)]
            + [{"text": "the pool ran dry during the nightly batch"}]
        )

        def agree() -> None:
            _answers(reader)  # restarts the clocks of what it returns, and keeps its lookups
            kept = _answers(reader)
            _written(reader)
            assert kept == _fresh(target)

        agree()  # "zebra" is no concept yet: the reader remembers that
        other.write("a zebra crossing was painted near the depot")
        agree()
        assert _answers(reader)[1][0][0] == _fresh(target)[1][0][0]
        reader.write("the deploy timed out again, host h1 was full")
        agree()
        asked = reader.read("why did the deploy time out?", k=3, as_of=AS_OF)
        reader.feedback(read=asked.id, used=[asked.items[-1].id], outcome=1.0)
        agree()
        other.forget([asked.items[0].id])
        agree()
        reader.update(asked.items[1].id, value=3.0)
        agree()
        other.update(asked.items[2].id, tags=["postmortem"])
        agree()


def test_a_reader_that_kept_a_concepts_newest_carriers_reaches_past_them_when_asked_for_more(
    store_target: Callable[..., str],
) -> None:
    """A concept's newest carriers a read kept (as a question's concept) are too few for
    a later read that reaches it through a link and leaves out its own matches: that
    read looks further back, as a fresh connection does."""
    # Read ten years on: past every kind's window, so no read restarts a clock and
    # the store stays as written.
    later = (datetime.now(UTC) + timedelta(days=3650)).isoformat()
    target = store_target()
    with Memory(target, agent_id="ops") as reader:
        reader.write_many(
            [{"text": f"alpha note {n}", "concepts": ["alpha"]} for n in range(40)]
            + [{"text": f"alpha beta note {n}", "concepts": ["alpha", "beta"]} for n in range(40)]
        )
        reader.read(concepts=["alpha"], k=5, as_of=later)  # keeps alpha's newest: all with beta
        kept = reader.read(concepts=["beta"], k=60, as_of=later)
        with Memory(target, agent_id="ops") as fresh:
            anew = fresh.read(concepts=["beta"], k=60, as_of=later)
    assert [(i.id, i.score, i.source) for i in kept.items] == [
        (i.id, i.score, i.source) for i in anew.items
    ]
    assert any(i.source == "hebbian_retrieval" for i in kept.items)


def test_threads_sharing_a_reader_answer_as_a_fresh_connection_does(
    store_target: Callable[..., str],
) -> None:
    """Threads reading through one connection, each read restarting clocks and keeping
    its lookups, never see another's half-kept memo: every answer matches a fresh
    connection's once the clocks are restarted and written."""
    target = store_target()
    with Memory(target, agent_id="ops") as reader:
        reader.write_many([{"text": f"deploy {n} timed out on host h{n % 5}"} for n in range(60)])
        _answers(reader)  # the clocks of what these questions return, restarted
        answers: list[list[list[tuple[str, float, str]]]] = []
        failed: list[BaseException] = []

        def read_many() -> None:
            try:
                for _ in range(10):
                    answers.append(_answers(reader))
            except BaseException as exc:  # reported by the test thread
                failed.append(exc)

        threads = [threading.Thread(target=read_many) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failed
        _written(reader)
        expected = _fresh(target)
        assert all(answer == expected for answer in answers)


def test_a_reader_that_kept_a_concepts_strongest_links_reaches_past_them_when_asked_for_more(
    store_target: Callable[..., str],
) -> None:
    """A concept's strongest links a read kept are too few for a later read that
    walks more of them (it asks more concepts, so more per side): that read looks
    further, as a fresh connection does."""
    later = (datetime.now(UTC) + timedelta(days=3650)).isoformat()  # no clock restarts
    partners = [f"partner{n:02d}" for n in range(40)]
    target = store_target()
    with Memory(target, agent_id="ops") as reader:
        reader.write_many(
            [{"text": f"hub with {p}", "concepts": ["hub", p]} for p in partners for _ in (1, 2)]
            + [{"text": f"{p} alone", "concepts": [p, "other"]} for p in partners[:4]]
        )
        # A forget folds the pending link counts into the links table, where a side's
        # strongest rows are read (and kept).
        reader.forget([reader.write("a note to forget").id])
        reader.read(concepts=["hub"], k=5, as_of=later)  # keeps hub's strongest few
        asked = ["hub", "other", *partners[:3]]
        kept = reader.read(concepts=asked, k=60, as_of=later)
        with Memory(target, agent_id="ops") as fresh:
            anew = fresh.read(concepts=asked, k=60, as_of=later)
    assert kept.expanded_concepts == anew.expanded_concepts
    assert [(i.id, i.score, i.source) for i in kept.items] == [
        (i.id, i.score, i.source) for i in anew.items
    ]
