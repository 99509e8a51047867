"""The LangChain retriever against langchain-core's documented `BaseRetriever` contract:
``invoke`` and ``ainvoke`` return `Document`s, ``k`` set on the retriever or per call,
on both backends and through `Client` against a real server."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")
anyio = pytest.importorskip("anyio")

from langchain_core.documents import Document  # noqa: E402

from assocmem import Client, Memory  # noqa: E402
from assocmem.adapters.langchain import AssocmemRetriever  # noqa: E402
from tests.adapters.server_kit import running_server  # noqa: E402
from tests.conftest import SEED_NOTES, Target  # noqa: E402

QUERY = "why did the deploy time out"


def _seeded(mem: Any) -> dict[str, str]:
    return {text: str(mem.write(text, concepts=concepts).id) for text, concepts in SEED_NOTES}


def test_invoke_returns_the_read_s_memories_as_documents(store_target: Target) -> None:
    with Memory(store_target("lc"), agent_id="ops") as mem:
        ids = _seeded(mem)
        read = mem.read(QUERY, k=4)
        documents = AssocmemRetriever(memory=mem).invoke(QUERY)
    assert all(isinstance(d, Document) for d in documents)
    assert [d.id for d in documents] == [i.id for i in read.items]  # k = 4, LangChain's default
    assert [d.page_content for d in documents] == [i.text for i in read.items]
    first = documents[0].metadata
    assert first["id"] == documents[0].id and first["source"] == read.items[0].source
    assert first["why"] == read.items[0].why and first["kind"] == "episodic"
    assert ids[documents[0].page_content] == documents[0].id


def test_k_is_set_on_the_retriever_or_per_call(store_target: Target) -> None:
    with Memory(store_target("k"), agent_id="ops") as mem:
        _seeded(mem)
        assert len(AssocmemRetriever(memory=mem, k=3).invoke(QUERY)) == 3
        assert len(AssocmemRetriever(memory=mem, k=1).invoke(QUERY)) == 1
        retriever = AssocmemRetriever(memory=mem)
        assert len(retriever.invoke(QUERY, None, k=1)) == 1
        assert len(retriever.invoke(QUERY, None, k=3)) == 3
        found = anyio.run(retriever.ainvoke, QUERY)
        assert [d.id for d in found] == [d.id for d in retriever.invoke(QUERY)]


def test_where_filters_and_a_used_document_is_rated_through_its_read(
    store_target: Target,
) -> None:
    with Memory(store_target("rated"), agent_id="ops") as mem:
        ids = _seeded(mem)
        cache = ids["Cache warmed before the deploy."]
        mem.update(cache, tags=["infra"])
        only = AssocmemRetriever(memory=mem, where={"tags": {"$contains": "infra"}})
        assert [d.id for d in only.invoke("deploy")] == [cache]
        used = AssocmemRetriever(memory=mem, k=10).invoke("flaky call")
        backoff = next(d for d in used if d.page_content.startswith("Backoff"))
        taught = mem.feedback([backoff.id], 1.0, read=backoff.metadata["read_id"])
        assert taught.lessons_updated > 0


def test_a_client_of_a_real_server_serves_the_retriever(tmp_path: Any) -> None:
    with running_server(str(tmp_path / "served.db")) as url:
        client = Client(url)
        _seeded(client)
        documents = AssocmemRetriever(memory=client, k=2).invoke(QUERY)
        assert len(documents) == 2 and all(d.metadata["read_id"] for d in documents)
        assert [d.id for d in documents] == [i.id for i in client.read(QUERY, k=2).items]
