"""The feedback log read back (seed 000): every call, newest first, paged and scoped like
every other read, on both backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem import FeedbackCall, InvalidInput, Memory, UnknownMemory
from tests.conftest import Target


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("log"), agent_id="ops", project_id="web") as memory:
        yield memory


def test_each_call_says_when_who_what_and_how_it_went(mem: Memory) -> None:
    backoff = mem.write("Backoff of two seconds fixed the flaky call.", concepts=["backoff"]).id
    cache = mem.write("Warming the cache fixed the slow start.", concepts=["cache"]).id
    assert backoff and cache
    read = mem.read(concepts=["timeout"])
    mem.feedback([backoff], 1.0, read=read.id)
    mem.feedback([cache, backoff], -0.5, query_concepts=["slow", "start"])
    log = mem.feedback_log()
    assert (log.total, log.limit, log.offset) == (2, 50, 0)
    newest, oldest = log.items
    assert isinstance(newest, FeedbackCall)
    assert newest.outcome == -0.5 and newest.query_concepts == ("slow", "start")
    assert newest.memory_ids == tuple(sorted((cache, backoff), key=[backoff, cache].index))
    assert oldest.outcome == 1.0 and oldest.query_concepts == ("timeout",)  # what the read asked
    assert oldest.memory_ids == (backoff,)
    assert (newest.agent_id, newest.project_id, newest.channel) == ("ops", "web", "")
    assert newest.id != oldest.id and newest.at >= oldest.at  # ids are opaque
    assert mem.stats().feedback == 2


def test_pages_and_the_calls_that_rated_one_memory(mem: Memory) -> None:
    ids = [mem.write(f"note {n}", concepts=[f"topic{n}"]).id for n in range(5)]
    for n, memory_id in enumerate(ids):
        assert memory_id
        mem.feedback([memory_id], 1.0, query_concepts=[f"question{n}"])
    pages = [mem.feedback_log(limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [len(p.items) for p in pages] == [2, 2, 1] and {p.total for p in pages} == {5}
    asked = [c.query_concepts[0] for p in pages for c in p.items]
    assert asked == [f"question{n}" for n in (4, 3, 2, 1, 0)]
    only = mem.feedback_log(memory_id=ids[1])
    assert only.total == 1 and only.items[0].memory_ids == (ids[1],)
    with pytest.raises(UnknownMemory):
        mem.feedback_log(memory_id="01NOTAMEMORYATALL000000000")
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"limit": "5"}):
        with pytest.raises(InvalidInput) as caught:
            mem.feedback_log(**bad)  # type: ignore[arg-type]
        assert caught.value.field == next(iter(bad))


def test_a_forgotten_memory_leaves_the_log_and_the_call_stays(mem: Memory) -> None:
    kept = mem.write("Kept note.", concepts=["kept"]).id
    gone = mem.write("Forgotten note.", concepts=["gone"]).id
    assert kept and gone
    mem.feedback([kept, gone], 1.0, query_concepts=["question"])
    mem.forget([gone])
    (call,) = mem.feedback_log().items
    assert call.memory_ids == (kept,)
    assert gone not in repr(mem.feedback_log())


def test_the_log_is_scoped_like_every_other_read(store_target: Target) -> None:
    target = store_target("scoped")
    with Memory(target, agent_id="ops", project_id="web") as ops, \
            Memory(target, agent_id="ops", project_id="billing") as billing, \
            Memory(target, agent_id="other") as other, \
            Memory(target, agent_id="ops", project_id="web", role="nurse") as nurse:  # fmt: skip
        shared = ops.write("Shared note.", concepts=["shared"]).id
        secret = nurse.write("Ward note.", concepts=["ward"], access=["nurse"]).id
        assert shared and secret
        nurse.feedback([shared, secret], 1.0, query_concepts=["ward"])
        other.feedback([other.write("Theirs.").id or ""], 1.0, query_concepts=["x"])
        assert [c.memory_ids for c in nurse.feedback_log().items] == [(shared, secret)]
        assert ops.feedback_log().total == 0  # given in the nurse's role, read in hers only
        ops.feedback([shared], 0.5, query_concepts=["shared"])
        assert [c.memory_ids for c in ops.feedback_log().items] == [(shared,)]
        assert billing.feedback_log().total == 0  # another project's call
        assert [c.query_concepts for c in other.feedback_log().items] == [("x",)]
        with pytest.raises(UnknownMemory):
            ops.feedback_log(memory_id=secret)
