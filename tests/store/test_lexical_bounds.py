"""The full-text search's bounds (store/lexical.py) and the batched write, on both
backends: a common term is ranked beside rare ones and in the recent window, its
frequency is estimated from the window (PostgreSQL counts it exactly), and a batch
stores what one-by-one would."""

from __future__ import annotations

import random

import pytest

from assocmem import Memory, Scope
from assocmem.store import View, lexical
from tests.conftest import Target, raw_query

FILLER = 100  # every fourth of them holds the common word


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds small enough for a store of a hundred memories."""
    monkeypatch.setattr(lexical, "COMMON_POSTINGS", 10)
    monkeypatch.setattr(lexical, "LEXICAL_WINDOW", 20)


def _store(mem: Memory) -> dict[str, int]:
    """Oldest first: one memory with the rare word and the common one, then filler,
    every fourth holding the common word; the seq of each text."""
    mem.write("zebra common oldest")
    mem.write_many(
        [{"text": f"{'common' if i % 4 == 0 else 'plain'} filler {i}"} for i in range(FILLER)]
    )
    return _store_seqs(mem)


def _store_seqs(mem: Memory) -> dict[str, int]:
    ids = {r.id: r.text for r in mem.export()}
    return {ids[i]: seq for i, seq in raw_query(mem._store.path, "SELECT id, seq FROM memories")}


def test_a_common_term_ranks_beside_a_rare_one_and_in_the_window(
    store_target: Target, bounded: None
) -> None:
    with Memory(store_target("bounds"), agent_id="ops") as mem:
        seqs = _store(mem)
        store = mem._store
        window = sorted(seqs.values())[-lexical.LEXICAL_WINDOW :]
        recent = {seq for text, seq in seqs.items() if "common" in text and seq in window}
        with store.snapshot():
            found = store.lexical(View(mem.scope), ["zebra", "common"], 30)
        # The old memory is found by its rare word; the rest are the window's only.
        assert found[0][0] == seqs["zebra common oldest"]
        assert {seq for seq, _ in found[1:]} == recent
        with store.snapshot():
            only_common = store.lexical(View(mem.scope), ["common"], 30)
        assert {seq for seq, _ in only_common} == recent


def test_the_rare_memory_scores_as_the_whole_query_ranks_it(
    store_target: Target, bounded: None
) -> None:
    """Beside a rare term a common one adds its own share: the old memory holding
    both outranks one holding only the rare word."""
    with Memory(store_target("both"), agent_id="ops") as mem:
        _store(mem)
        mem.write("zebra alone today")
        seqs = _store_seqs(mem)
        with mem._store.snapshot():
            found = dict(mem._store.lexical(View(mem.scope), ["zebra", "common"], 30))
        assert found[seqs["zebra common oldest"]] > found[seqs["zebra alone today"]] > 0


def test_a_common_terms_frequency_is_its_share_of_the_window(
    store_target: Target, bounded: None
) -> None:
    with Memory(store_target("counts"), agent_id="ops") as mem:
        _store(mem)
        store = mem._store
        # 5 of the window's 20 memories hold "common": a quarter of 101 (26 are).
        # PostgreSQL keeps each lexeme's memories counted, so its count is exact.
        whole = 26 if type(store).__name__ == "PostgresStore" else 25
        with store.snapshot():
            assert store.match_counts(mem.scope, ["common", "zebra"], 10_000) == {
                "common": whole,
                "zebra": 1,
            }
            assert store.match_counts(mem.scope, ["common"], 20) == {"common": 20}


def test_a_batch_stores_what_one_by_one_writes_would(store_target: Target) -> None:
    with Memory(store_target("batch"), agent_id="ops") as mem:
        first = mem.write("already here", observed_at="2024-01-01T00:00:00Z")
        one = {"text": "one", "observed_at": "2024-01-02T00:00:00Z", "concepts": ["alpha", "beta"]}
        results = mem.write_many(
            [
                one,
                {"text": "already here", "observed_at": "2024-01-01T00:00:00Z"},
                {"text": "two", "observed_at": "2024-01-03T00:00:00Z"},
                dict(one),  # a repeat within the batch
            ]
        )
        assert [r.stored for r in results] == [True, False, True, False]
        assert results[1].id == first.id and results[1].reason == "duplicate"
        assert results[3].id == results[0].id and results[3].reason == "duplicate"
        assert results[0].concepts == ("alpha", "beta")
        (record,) = mem.get([results[0].id])
        assert record.concepts == ("alpha", "beta") and record.text == "one"
        later = mem.write("three")  # numbered after the batch, by the store itself
        order = [r.id for r in sorted(mem.export(), key=lambda r: r.created_at)]
        assert order.index(later.id) == len(order) - 1
        seqs = dict(raw_query(store_target("batch"), "SELECT id, seq FROM memories"))
        assert seqs[first.id] < seqs[results[0].id] < seqs[results[2].id] < seqs[later.id]
        assert mem.read("one").items[0].id == results[0].id


def test_a_terms_count_follows_writes_moves_and_forgets_in_the_readers_layers(
    store_target: Target,
) -> None:
    """Counted from what the reader's layers hold now: a memory moved out of the
    reader's reach, or forgotten, no longer counts; another agent's never does."""
    target = store_target("term-counts")
    with Memory(target, agent_id="ops") as mem, Memory(target, agent_id="other") as other:
        written = mem.write_many([{"text": f"zebra sighting {i}"} for i in range(3)])
        mem.write("quagga alone")
        other.write("zebra elsewhere")
        admin = Memory.attached(mem._store, Scope("ops", role="admin"))

        def counts(reader: Memory) -> dict[str, int]:
            with reader._store.snapshot():
                return reader._store.match_counts(reader.scope, ["zebra", "quagga", "the"], 100)

        assert counts(mem) == {"zebra": 3, "quagga": 1, "the": 0}
        assert counts(other) == {"zebra": 1, "quagga": 0, "the": 0}
        first, second = (r.id for r in written[:2])
        assert first is not None and second is not None
        mem.update(first, access=["admin"])
        assert counts(mem)["zebra"] == 2 and counts(admin)["zebra"] == 3
        admin.update(first, access=[])
        assert counts(mem)["zebra"] == 3
        mem.forget(ids=[second])
        mem.forget(ids=[m.id for m in mem.export() if m.text == "quagga alone"])
        assert counts(mem) == {"zebra": 2, "quagga": 0, "the": 0}
        assert counts(other) == {"zebra": 1, "quagga": 0, "the": 0}


def test_a_search_again_with_added_words_ranks_as_the_whole_search_does(
    store_target: Target,
) -> None:
    """A read that searches again with words added (lexical expansion) reuses its first
    ranking on SQLite: every cut, score and tie is the whole search's."""
    words = ["kettle", "fuse", "garden", "water", "deploy", "gate", "pool", "dry", "host"]
    rng = random.Random(7)
    texts = [" ".join(rng.choices(words, k=rng.randint(2, 6))) for _ in range(300)]
    texts += texts[:40]  # repeats: memories that tie on every score
    with Memory(store_target("added"), agent_id="ops") as mem:
        mem.write_many([{"text": text} for text in texts])
        store, view = mem._store, View(mem.scope)
        traced = type(store).__name__ == "SQLiteStore"  # PostgreSQL searches whole
        statements: list[str] = []
        for cut, terms, limit in [
            (2, ["kettle", "fuse", "garden", "water"], 10),
            (1, ["pool", "dry", "host"], 25),
            (3, ["deploy", "gate", "kettle", "fuse"], 5),
            (2, ["water", "fuse", "gate"], 400),
        ]:
            whole = store.lexical(view, terms, limit)  # outside a snapshot: nothing kept
            with store.snapshot():
                store.lexical(view, terms[:cut], limit)
                if traced:
                    store._conn.set_trace_callback(statements.append)
                again = store.lexical(view, terms, limit)
                if traced:
                    store._conn.set_trace_callback(None)
            assert again == whole and 0 < len(whole) <= limit
        if traced:  # the kept ranking was used
            assert sum(") AND (" in s for s in statements) == 4
