"""The LangGraph store against LangGraph's `BaseStore` contract, on both backends.

The contract tests are ported from LangGraph's own store tests (``libs/checkpoint``,
``libs/checkpoint-sqlite`` and ``libs/checkpoint-postgres``): batch order, get, put and
delete, search by prefix, filter, offset and limit, the namespace listings and the
namespace rules, sync and async. Then what assocmem adds: a real graph reading and
writing through the store, each end user a scope of their own, items that outlive the
process, and deletes that leave nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph.store.base")
anyio = pytest.importorskip("anyio")

from langgraph.config import get_store  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from langgraph.store.base import (  # noqa: E402
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from assocmem import InvalidInput, Memory  # noqa: E402
from assocmem.adapters.langgraph import AssocmemStore, RecalledItem  # noqa: E402
from assocmem.pool import MemoryPool  # noqa: E402
from tests.conftest import Target  # noqa: E402


@pytest.fixture
def store(store_target: Target) -> Iterator[AssocmemStore]:
    with AssocmemStore(store_target("lg")) as opened:
        yield opened


def _keys(found: list[SearchItem]) -> list[str]:
    return [item.key for item in found]


def _value(store: AssocmemStore, namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    item = store.get(namespace, key)
    assert item is not None
    return item.value


def _namespaces(found: list[SearchItem]) -> set[tuple[str, ...]]:
    return {item.namespace for item in found}


def test_batch_runs_ops_in_order_and_answers_each(store: AssocmemStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(limit=10),
            GetOp(("test",), "key3"),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test",), "key3"),  # sees the put before it
            PutOp(("test",), "key3", None),
            SearchOp(("test",), limit=10),
        ]
    )
    first = results[0]
    assert isinstance(first, Item) and first.value == {"data": "value1"}
    assert (first.key, first.namespace) == ("key1", ("test", "foo"))
    assert results[1] is None and results[4] is None and results[7] is None
    assert _keys(results[2]) == ["key1"]  # type: ignore[arg-type]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[5] is None
    third = results[6]
    assert isinstance(third, Item) and third.value == {"data": "value3"}
    assert sorted(_keys(results[8])) == ["key1", "key2"]  # type: ignore[arg-type]


def test_put_get_update_and_delete(store: AssocmemStore) -> None:
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None and item.namespace == namespace and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, "doc1", updated)
    again = store.get(namespace, "doc1")
    assert again is not None and again.value == updated
    assert again.created_at == item.created_at and again.updated_at > item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    assert store.get(("test",), "doc1") is None  # a namespace is exact for get
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "never-there")  # deleting nothing is no error
    nested: dict[str, Any] = {
        "n": 1,
        "f": 2.5,
        "ok": True,
        "none": None,
        "list": [1, "a"],
        "obj": {"x": {}},
    }
    store.put(namespace, "doc2", nested)
    assert _value(store, namespace, "doc2") == nested


def test_search_by_prefix_with_offset_and_limit(store: AssocmemStore) -> None:
    data = [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice"}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob"}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice"}),
    ]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    assert _keys(store.search(("test",))) == ["img1", "doc2", "doc1"]  # newest first
    assert _namespaces(store.search(("test", "docs"))) == {("test", "docs")}
    alice = store.search(("test",), filter={"author": "Alice"})
    assert sorted(_keys(alice)) == ["doc1", "img1"]
    assert _keys(store.search(("test",), limit=2)) == ["img1", "doc2"]
    assert _keys(store.search(("test",), offset=2)) == ["doc1"]
    assert _keys(store.search(("test",), limit=1, offset=1)) == ["doc2"]
    assert store.search(("test",), limit=0) == [] and store.search(("nothing",)) == []
    store.put(("test", "docs"), "doc1", {"title": "First Doc, again", "author": "Alice"})
    assert _keys(store.search(("test",))) == ["doc1", "img1", "doc2"]  # updated moves up
    assert all(item.score is None for item in store.search(("test",)))


def test_prefixes_stop_at_label_boundaries(store: AssocmemStore) -> None:
    for namespace in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",),
                      ("foobar", "baz"), ("foo2",), ("user_1",), ("userX1",), ("a%b",),
                      ("axxb",), ("star*",), ("starX",), ("Foo",)]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})

    def under(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return _namespaces(store.search(prefix, limit=100))

    assert under(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert under(("foo", "child")) == {("foo", "child"), ("foo", "child", "deep")}
    assert under(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert under(("fo",)) == set() and under(("Foo",)) == {("Foo",)}
    assert under(("user_1",)) == {("user_1",)} and under(("a%b",)) == {("a%b",)}
    assert under(("star*",)) == {("star*",)}
    assert len(under(())) == 13  # an empty prefix constrains nothing


def test_filters_compare_in_the_store_and_beyond_it(store: AssocmemStore) -> None:
    store.put(("items",), "item1", {"price": 10, "color": "red", "active": True, "tags": ["a"]})
    store.put(("items",), "item2", {"price": 20, "color": "blue", "active": False,
                                    "user": {"access-level": "nested"}})  # fmt: skip
    store.put(("items",), "item3", {"price": 30.5, "color": "red", "123abc": "ok",
                                    "access-level": "public", 'say "hi"': "quoted"})  # fmt: skip

    def keys(condition: dict[str, Any]) -> list[str]:
        return sorted(_keys(store.search(("items",), filter=condition)))

    assert keys({"price": {"$gt": 15}}) == ["item2", "item3"]
    assert keys({"price": {"$gte": 10, "$lt": 30}}) == ["item1", "item2"]
    assert keys({"price": {"$lte": 10}}) == ["item1"]
    assert keys({"price": {"$ne": 20}}) == ["item1", "item3"]
    assert keys({"price": {"$eq": 30.5}, "color": "red"}) == ["item3"]
    assert keys({"color": "red", "active": True}) == ["item1"]
    assert keys({"active": False}) == ["item2"]
    assert keys({"color": {"$gt": "blue"}}) == ["item1", "item3"]  # strings order as strings
    assert keys({"missing": None}) == ["item1", "item2", "item3"]
    assert keys({"access-level": "public"}) == ["item3"] and keys({"123abc": "ok"}) == ["item3"]
    assert keys({"color": "red' OR '1'='1"}) == [] and keys({"color": "''''"}) == []
    assert keys({"color": "red\x00' OR '1'='1"}) == []  # bound, never spliced
    # Conditions `read` cannot carry are checked after it, as InMemoryStore checks them.
    assert keys({"tags": ["a"]}) == ["item1"] and keys({"tags": ["a", "b"]}) == []
    assert keys({"user": {"access-level": "nested"}}) == ["item2"]
    assert keys({"price": {"$lt": float("inf")}}) == ["item1", "item2", "item3"]
    assert keys({"price": {"$eq": float("nan")}}) == []
    assert keys({'say "hi"': "quoted"}) == ["item3"]
    assert _keys(store.search(("items",), filter={"tags": ["a"]}, limit=1, offset=0)) == ["item1"]
    with pytest.raises(InvalidInput) as refused:
        store.search(("items",), filter={"price": {"$regex": "1"}})
    assert refused.value.field == "filter"


def test_a_query_ranks_what_it_finds_best_first(store: AssocmemStore) -> None:
    docs = {
        "doc1": {"text": "red apple from the orchard", "color": "red", "score": 4.5},
        "doc2": {"text": "red car in the garage", "color": "red", "score": 3.0},
        "doc3": {"text": "green apple pie recipe", "color": "green", "score": 4.0},
        "doc4": {"text": "blue car with a flat tyre", "color": "blue", "score": 3.5},
    }
    for key, value in docs.items():
        store.put(("test",), key, value)
    found = store.search(("test",), query="apple")
    assert sorted(_keys(found)) == ["doc1", "doc3"]  # what the read finds, not everything
    assert all(isinstance(i, RecalledItem) and i.score and i.why for i in found)
    assert found[0].score >= found[1].score  # type: ignore[operator]
    assert _keys(store.search(("test",), query="apple", filter={"color": "red"})) == ["doc1"]
    assert _keys(store.search(("test",), query="car", filter={"score": {"$gt": 3.2}})) == ["doc4"]
    both = store.search(("test",), query="red apple", limit=10)
    assert both[0].key == "doc1" and {"doc2", "doc3"} <= set(_keys(both))
    pages = [store.search(("test",), query="red apple", limit=1, offset=n) for n in range(3)]
    assert [page[0].key for page in pages] == _keys(both)[:3]
    assert store.search(("test",), query="tyre")[0].value == docs["doc4"]
    assert len(store.search(("test",), query="")) == 4  # an empty query is no query
    assert store.search(("test",), query="zeppelin") == []


def test_index_paths_and_index_false(store_target: Target) -> None:
    with AssocmemStore(store_target("paths"), fields=["title", "notes[*].text"]) as store:
        store.put(("d",), "a", {"title": "lighthouse keeper", "body": "zebra crossing"})
        store.put(("d",), "b", {"title": "harbour", "notes": [{"text": "foghorn at dawn"}]})
        store.put(("d",), "c", {"title": "cellar", "body": "zebra stripes"}, index=["body"])
        store.put(("d",), "hidden", {"title": "lighthouse lamp"}, index=False)
        store.put(("d",), "none", {"title": "lighthouse"}, index=["absent"])
        assert _keys(store.search(("d",), query="lighthouse")) == ["a"]
        assert _keys(store.search(("d",), query="foghorn")) == ["b"]
        assert _keys(store.search(("d",), query="zebra")) == ["c"]  # a's body is not indexed
        assert len(store.search(("d",))) == 5  # without a query every item comes back
        assert _value(store, ("d",), "hidden") == {"title": "lighthouse lamp"}
        store.put(("d",), "hidden", {"title": "lighthouse lamp"})  # indexed now
        assert sorted(_keys(store.search(("d",), query="lamp"))) == ["hidden"]


def test_list_namespaces_prefix_suffix_wildcards_depth_and_pages(store: AssocmemStore) -> None:
    assert store.list_namespaces() == []
    namespaces = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
                  ("a", "c", "f"), ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"),
                  ("admin", "users", "789"), ("users", "alice"), ("users", "alice\n"),
                  ("uid", "users", "malice")]  # fmt: skip
    for n, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{n}", {"data": f"value_{n:02d}"})
    store.put(("a", "b", "c"), "second", {"data": "same namespace"})
    assert store.list_namespaces(limit=100) == sorted(namespaces)
    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")
    ]  # fmt: skip
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"), ("users", "456", "settings"), ("users", "alice"), ("users", "alice\n")
    ]  # fmt: skip
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert store.list_namespaces(suffix=("alice",)) == [("users", "alice")]  # not "malice"
    assert store.list_namespaces(prefix=("users", "alice")) == [("users", "alice")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(max_depth=1, limit=3) == [("a",), ("admin",), ("b",)]
    batched = store.batch([
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("settings",)),)),
        ListNamespacesOp(max_depth=2, limit=2, offset=6),
    ])  # fmt: skip
    assert batched == [[("users", "456", "settings")], [("users", "456"), ("users", "alice")]]


def test_namespace_rules(store: AssocmemStore) -> None:
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            anyio.run(store.aput, bad, "foo", doc)
    with pytest.raises(InvalidNamespaceError):  # a batch op is checked too
        store.batch([GetOp(("a.b",), "foo")])
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp((), "foo", doc)])
    with pytest.raises(NotImplementedError):  # no TTL
        store.put(("ttl",), "foo", doc, ttl=5)
    with pytest.raises(NotImplementedError):  # nor through a batch's PutOp
        store.batch([PutOp(("ttl",), "foo", doc, ttl=5)])
    assert store.get(("ttl",), "foo") is None
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert _value(store, ("foo", "langgraph", "foo"), "bar") == doc
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public put
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None
    with pytest.raises(InvalidInput) as refused:
        store.search(("foo",), limit=-1)
    assert refused.value.field == "limit"


def test_the_async_methods_match_the_sync_ones(store: AssocmemStore) -> None:
    async def story() -> dict[str, Any]:
        await store.aput(("test", "foo"), "key1", {"data": "value1 swallow"})
        await store.aput(("test", "bar"), "key2", {"data": "value2 heron"})
        seen = {
            "get": await store.aget(("test", "foo"), "key1"),
            "search": await store.asearch(("test",), filter={"data": "value2 heron"}),
            "query": await store.asearch(("test",), query="swallow"),
            "list": await store.alist_namespaces(prefix=("test",)),
            "batch": await store.abatch(
                [
                    GetOp(("test", "bar"), "key2"),
                    PutOp(("test",), "key3", {"data": "v3"}),
                    GetOp(("test",), "key3"),
                    SearchOp(("test",), limit=1),
                ]
            ),
        }
        await store.adelete(("test", "foo"), "key1")
        seen["deleted"] = await store.aget(("test", "foo"), "key1")
        return seen

    seen = anyio.run(story)
    assert seen["get"].value == {"data": "value1 swallow"}
    assert _keys(seen["search"]) == ["key2"] and _keys(seen["query"]) == ["key1"]
    assert seen["list"] == [("test", "bar"), ("test", "foo")]
    got, put, third, newest = seen["batch"]
    assert got.key == "key2" and put is None and third.value == {"data": "v3"}
    assert _keys(newest) == ["key3"]
    assert seen["deleted"] is None


class Turn(TypedDict, total=False):
    user: str
    said: str
    recalled: list[str]


def _remember(state: Turn, runtime: Runtime[None]) -> Turn:
    assert runtime.store is not None
    namespace = (state["user"], "memories")
    count = len(runtime.store.search(namespace, limit=100))
    runtime.store.put(namespace, f"m{count}", {"memory": state["said"]})
    return {}


def _recall(state: Turn) -> Turn:
    found = get_store().search((state["user"], "memories"), query=state["said"], limit=3)
    return {"recalled": [item.value["memory"] for item in found]}


def test_a_graph_remembers_through_the_store_each_user_apart(store_target: Target) -> None:
    builder = StateGraph(Turn)
    builder.add_node("remember", _remember)
    builder.add_node("recall", _recall)
    builder.add_edge(START, "recall")  # what was said before, then this
    builder.add_edge("recall", "remember")
    builder.add_edge("remember", END)
    with AssocmemStore(store_target("graph"), scope_depth=1) as store:
        graph = builder.compile(store=store)
        assert graph.invoke({"user": "alice", "said": "I am allergic to peanuts"})["recalled"] == []
        graph.invoke({"user": "bob", "said": "I love peanuts in curry"})
        out = graph.invoke({"user": "alice", "said": "peanuts"})
        assert out["recalled"] == ["I am allergic to peanuts"]
        later = anyio.run(graph.ainvoke, {"user": "bob", "said": "curry with peanuts"})
        assert later["recalled"] == ["I love peanuts in curry"]
        assert sorted(_keys(store.search(("alice",)))) == ["m0", "m1"]


def test_scope_depth_keeps_each_user_apart(store_target: Target) -> None:
    target = store_target("users")
    with AssocmemStore(target, scope_depth=1) as store:
        store.put(("alice", "memories"), "food", {"memory": "Alice is vegetarian"})
        store.put(("bob", "memories"), "food", {"memory": "Bob eats shellfish daily"})
        store.put(("bob", "notes", "work"), "desk", {"memory": "Bob sits by the window"})
        assert _value(store, ("alice", "memories"), "food") == {"memory": "Alice is vegetarian"}
        assert _keys(store.search(("alice",))) == ["food"]
        assert store.search(("alice",), query="shellfish") == []
        assert _keys(store.search(("bob",), query="shellfish")) == ["food"]
        assert store.list_namespaces(prefix=("alice",)) == [("alice", "memories")]
        assert store.list_namespaces(prefix=("bob",), max_depth=2) == [
            ("bob", "memories"), ("bob", "notes")
        ]  # fmt: skip
        store.delete(("alice", "memories"), "food")
        assert store.get(("bob", "memories"), "food") is not None
        with pytest.raises(InvalidInput) as refused:  # it would span every user's scope
            store.search((), query="shellfish")
        assert refused.value.field == "namespace_prefix"
        for prefix in [(), ("*", "memories")]:
            with pytest.raises(InvalidInput) as refused:
                store.list_namespaces(prefix=prefix)
            assert refused.value.field == "prefix"
        with pytest.raises(InvalidInput) as refused:
            store.get((), "food")
        assert refused.value.field == "namespace"
    with Memory(target, agent_id="bob") as bob:  # the user's scope, as assocmem sees it
        assert sorted(r.meta["key"] for r in bob.export()) == ["desk", "food"]
    with Memory(target, agent_id="alice") as alice:
        assert list(alice.export()) == []


def test_items_outlive_the_store_and_a_pool_stays_its_owner_s(store_target: Target) -> None:
    target = store_target("kept")
    with AssocmemStore(target) as store:
        store.put(("docs",), "a", {"text": "kept across restarts"})
    pool = MemoryPool(target)
    try:
        with AssocmemStore(pool) as store:
            assert _value(store, ("docs",), "a") == {"text": "kept across restarts"}
            assert _keys(store.search(("docs",), query="restarts")) == ["a"]
        pool.check()  # still open
    finally:
        pool.close()
    with pytest.raises(InvalidInput):
        AssocmemStore(target, scope_depth=-1)


def test_delete_leaves_no_trace(store_target: Target) -> None:
    target = store_target("gone")
    with AssocmemStore(target) as store:
        store.put(("docs",), "a", {"text": "first draft about submarines"})
        store.put(("docs",), "a", {"text": "second draft about submarines"})
        store.put(("docs",), "b", {"text": "a note that stays"})
        store.delete(("docs",), "a")
        assert store.search(("docs",), query="submarines") == []
    with Memory(target, agent_id="langgraph") as mem:
        every = mem.list_memories(limit=50)  # every status, superseded included
        assert [r.meta["key"] for r in every.items] == ["b"]
        assert mem.read("submarines", include_superseded=True).items == ()
