"""Inspection on both backends: pages of memories, one record opened whole, health,
and that nothing one tenant reads here depends on another tenant's data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem import InvalidInput, Memory, UnknownMemory, register_embedder, unregister_embedder
from assocmem.testing import ToyEmbedder
from tests.conftest import Target


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("inspect"), agent_id="ops") as memory:
        yield memory


def _texts(page: object) -> list[str]:
    return [r.text for r in page.items]  # type: ignore[attr-defined]


def test_a_page_is_newest_first_with_the_total(mem: Memory) -> None:
    for i in range(7):
        mem.write(f"note number {i}")
    first = mem.list_memories(limit=3)
    assert (first.total, first.limit, first.offset) == (7, 3, 0)
    assert _texts(first) == ["note number 6", "note number 5", "note number 4"]
    rest = mem.list_memories(limit=3, offset=3), mem.list_memories(limit=3, offset=6)
    assert _texts(rest[0]) + _texts(rest[1]) == [f"note number {i}" for i in (3, 2, 1, 0)]
    assert mem.list_memories(offset=7).items == () and mem.list_memories(offset=7).total == 7


def test_every_status_and_kind_is_listed_unless_one_is_asked(mem: Memory) -> None:
    old = mem.write("the flag is red", key=["flag", "colour"]).id
    mem.write("the flag is blue", key=["flag", "colour"])
    gone = mem.write("an old deploy note").id
    assert gone is not None and old is not None
    mem.archive([gone])
    mem.write("check the cache", kind="working", task="t1")
    mem.write("caches expire hourly", kind="semantic")
    assert mem.list_memories().total == 5
    assert _texts(mem.list_memories(status="superseded")) == ["the flag is red"]
    assert _texts(mem.list_memories(status="archived")) == ["an old deploy note"]
    assert mem.list_memories(status="active").total == 3
    assert _texts(mem.list_memories(kind="working")) == ["check the cache"]
    assert _texts(mem.list_memories(kind="semantic")) == ["caches expire hourly"]


def test_filters_by_tag_source_and_where(mem: Memory) -> None:
    mem.write("deploy on friday", tags=["ops", "deploy"], source="https://www.example.com/a")
    mem.write("lunch on friday", tags=["food"], source="alice", meta={"n": 2})
    mem.write("deploy on monday", tags=["ops"], meta={"n": 3})
    assert _texts(mem.list_memories(tag="ops")) == ["deploy on monday", "deploy on friday"]
    assert _texts(mem.list_memories(tag="op")) == []  # a tag matches whole
    assert _texts(mem.list_memories(source="example.com")) == ["deploy on friday"]
    assert _texts(mem.list_memories(source="https://www.example.com/a")) == ["deploy on friday"]
    assert _texts(mem.list_memories(source="alice")) == ["lunch on friday"]
    assert _texts(mem.list_memories(where={"n": {"$gte": 2}}, tag="ops")) == ["deploy on monday"]
    page = mem.list_memories(tag="ops", limit=1)
    assert page.total == 2 and _texts(page) == ["deploy on monday"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"limit": True}, "limit"),
        ({"offset": -1}, "offset"),
        ({"kind": "dream"}, "kind"),
        ({"status": "deleted"}, "status"),
        ({"tag": ""}, "tag"),
        ({"source": 3}, "source"),
        ({"where": {"a": {"$regex": 1}}}, "where"),
    ],
)
def test_bad_paging_and_filters_name_their_field(
    mem: Memory, arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        mem.list_memories(**arguments)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_a_restricted_record_is_listed_only_in_its_role(store_target: Target) -> None:
    target = store_target("roles")
    with Memory(target, agent_id="ops") as plain, Memory(target, agent_id="ops", role="sre") as sre:
        plain.write("open to all")
        secret = sre.write("pager rota", access=["sre"]).id
        assert secret is not None
        assert _texts(plain.list_memories()) == ["open to all"]
        assert _texts(sre.list_memories()) == ["pager rota", "open to all"]
        with pytest.raises(UnknownMemory):
            plain.inspect(secret)
        assert sre.inspect(secret).record.text == "pager rota"


def test_inspect_opens_a_record_whole(mem: Memory) -> None:
    old = mem.write("alice uses postgres", key=["alice", "db"]).id
    new = mem.write("alice uses sqlite", key=["alice", "db"]).id
    other = mem.write("sqlite is one file").id
    assert old and new and other
    rated = mem.feedback([new], 1.0, ["database"])
    mixed = mem.feedback([new, other], -0.5, query_concepts=[])
    mem.feedback([other], 1.0, query_concepts=[])
    declared = mem.declare(
        {"entities": [{"name": "Alice", "aliases": ["al"]}],
         "relations": [
             {"subject": "Alice", "predicate": "uses", "object": "SQLite"},
             {"subject": f"mem:{new}", "predicate": "explains", "object": f"mem:{other}"}]},
        anchor_ref=f"mem:{new}",
    )  # fmt: skip
    assert not declared.dropped
    seen = mem.inspect(new)
    assert seen.record.id == new and seen.record.status == "active"
    assert [r.text for r in seen.history] == ["alice uses postgres", "alice uses sqlite"]
    assert [(f.id, f.outcome) for f in seen.feedback] == [(rated.id, 1.0), (mixed.id, -0.5)]
    assert seen.feedback[0].query_concepts == ("databas",) and seen.feedback[1].query_concepts == ()
    assert seen.mentions == ("Alice",)  # a relation's endpoint is not a mention
    assert sorted((r.subject, r.predicate, r.object) for r in seen.relations) == sorted(
        [("Alice", "uses", "SQLite"), (f"mem:{new}", "explains", f"mem:{other}")]
    )
    assert all(r.anchor == f"mem:{new}" for r in seen.relations)
    # The other end of a record relation sees it too, but not the anchor's mentions.
    joined = mem.inspect(other)
    assert [r.predicate for r in joined.relations] == ["explains"] and joined.mentions == ()
    assert [f.outcome for f in joined.feedback] == [-0.5, 1.0]
    # A superseded record opens; a record with no key has no history.
    assert mem.inspect(old).record.status == "superseded" and joined.history == ()


@pytest.mark.parametrize("bad", ["nope", "", 7])
def test_inspect_of_an_unreadable_id_raises_what_get_raises(mem: Memory, bad: object) -> None:
    error = UnknownMemory if bad == "nope" else InvalidInput
    with pytest.raises(error):
        mem.inspect(bad)  # type: ignore[arg-type]
    if bad == "nope":
        with pytest.raises(UnknownMemory):
            mem.get([bad])  # type: ignore[list-item]


def test_health_counts_what_stats_counts(mem: Memory, backend: str) -> None:
    mem.write("deploy failed")
    done = mem.write("deploy fixed", kind="semantic").id
    assert done
    for outcome in (1.0, -1.0, 0.5):
        mem.feedback([done], outcome, query_concepts=[])
    health, stats = mem.health(), mem.stats()
    assert health.backend == backend
    assert (health.memories, health.concepts, health.links, health.feedback) == (
        stats.memories, stats.concepts, stats.links, stats.feedback)  # fmt: skip
    assert health.by_kind == {"episodic": 1, "semantic": 1} == stats.by_kind
    assert health.by_status == {"active": 2}
    assert [f.outcome for f in health.recent_feedback] == [0.5, -1.0, 1.0]  # newest first
    assert health.embedder is None and (health.vectors, health.pending_vectors) == (0, 0)
    assert health.store_bytes > 0
    assert (health.wal_bytes is None) == (backend == "postgres")


def test_health_keeps_only_the_last_ten_feedback_calls(mem: Memory) -> None:
    done = mem.write("deploy fixed").id
    assert done
    calls = [mem.feedback([done], i / 20, query_concepts=[]).id for i in range(12)]
    assert [f.id for f in mem.health().recent_feedback] == calls[::-1][:10]


def test_health_counts_vectors_and_the_backfill_still_pending(store_target: Target) -> None:
    target = store_target("vectors")
    with Memory(target, agent_id="ops") as plain:
        plain.write("written before any embedder")
    register_embedder("toy-inspect", ToyEmbedder)
    try:
        with Memory(target, agent_id="ops", embedder="toy-inspect") as embedded:
            embedded.write("written with an embedder")
            health = embedded.health()
            assert health.embedder == "toy-hash-64"
            assert health.vectors + health.pending_vectors == 2 and health.vectors >= 1
        with Memory(target, agent_id="ops") as plain:
            assert plain.health().pending_vectors == 0 and plain.health().embedder is None
    finally:
        unregister_embedder("toy-inspect")


def test_one_tenant_reads_nothing_of_another(store_target: Target) -> None:
    target = store_target("tenants")
    with Memory(target, agent_id="alice") as alice, Memory(target, agent_id="bob") as bob:
        bob.write("bob's first note", tags=["ops"])
        before = bob.health().to_dict(), bob.list_memories(tag="ops").to_dict()
        secret = alice.write("alice's secret deploy", tags=["ops"], key=["deploy", "day"]).id
        assert secret
        second = alice.write("alice's second deploy", tags=["ops"], key=["deploy", "day"]).id
        alice.feedback([second], 1.0, ["deploy"])
        alice.declare({"entities": [{"name": "Deploy"}]}, anchor_ref=f"mem:{second}")
        after = bob.health().to_dict(), bob.list_memories(tag="ops").to_dict()
        for health in (before[0], after[0]):  # the file's size is the store's, not a count
            health.pop("store_bytes"), health.pop("wal_bytes")
        assert after == before
        with pytest.raises(UnknownMemory):
            bob.inspect(secret)
        assert [f.outcome for f in alice.health().recent_feedback] == [1.0]
        assert alice.list_memories().total == 2
