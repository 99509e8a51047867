"""Hostile input, one table, three surfaces: the Python API, HTTP (a real server) and MCP.

Invariant checked: each hostile call fails the same way everywhere, as a typed
`AssocmemError` naming the field (a 4xx over HTTP, a tool error over MCP), never a
500, a crash or an untyped exception; the API and HTTP are checked on both backends,
and NUL refusals hold on both alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assocmem import AssocmemError, InvalidInput, Memory
from assocmem.pool import MemoryPool
from assocmem.surface import operations
from tests.adapters.server_kit import post, running_server
from tests.conftest import BACKENDS, Target, fresh_database


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels):
        value = {"k": value}
    return value


TEXT = "the deploy failed on tuesday"

# (case, operation, arguments, error type, field)
CASES: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("surrogate text", "write", {"text": "bad \ud800 text"}, "InvalidInput", "text"),
    ("surrogate meta value", "write", {"text": TEXT, "meta": {"k": "\udfff"}}, "InvalidInput",
     "meta"),
    ("surrogate meta key", "write", {"text": TEXT, "meta": {"\ud800": 1}}, "InvalidInput", "meta"),
    ("surrogate query", "read", {"query": "deploy \ud800"}, "InvalidInput", "query"),
    ("surrogate entity", "traverse", {"entity": "\ud800"}, "InvalidInput", "entity"),
    ("surrogate delete_entity", "delete_entity", {"entity": "\ud800"}, "InvalidInput", "entity"),
    ("surrogate declared name", "declare", {"associations": {"entities": [{"name": "\ud800"}]}},
     "InvalidInput", "associations"),
    ("surrogate key", "history", {"key": ["\ud800", "is"]}, "InvalidInput", "key"),
    ("meta 40 deep", "write", {"text": TEXT, "meta": nested(40)}, "InvalidInput", "meta"),
    ("meta 300 deep", "write", {"text": TEXT, "meta": nested(300)}, "InvalidInput", "meta"),
    ("where int beyond 64 bits", "read", {"query": "deploy", "where": {"value": {"$gt": 2**64}}},
     "InvalidInput", "where"),
    ("forget where int beyond 64 bits", "forget", {"where": {"meta.n": -(2**64)}},
     "InvalidInput", "where"),
    ("relation id beyond 64 bits", "retract", {"relation_ids": [2**70]}, "InvalidInput",
     "relation_ids"),
    ("get nested ids", "get", {"ids": [[]]}, "InvalidInput", "ids"),
    ("feedback nested ids", "feedback", {"used": [[]], "outcome": 1.0}, "InvalidInput", "used"),
    ("forget nested ids", "forget", {"ids": [[]]}, "InvalidInput", "ids"),
    ("history int key", "history", {"key": 5}, "InvalidInput", "key"),
    ("history dict key", "history", {"key": {"a": "b", "c": "d"}}, "InvalidInput", "key"),
    ("NUL text", "write", {"text": "nul\x00byte"}, "InvalidInput", "text"),
    ("NUL source", "write", {"text": TEXT, "source": "a\x00b"}, "InvalidInput", "source"),
    ("NUL author", "write", {"text": TEXT, "author": "a\x00b"}, "InvalidInput", "author"),
    ("NUL tag", "write", {"text": TEXT, "tags": ["a\x00b"]}, "InvalidInput", "tags"),
    ("NUL meta", "write", {"text": TEXT, "meta": {"k": "a\x00b"}}, "InvalidInput", "meta"),
    ("NUL entity name", "declare", {"associations": {"entities": [{"name": "a\x00b"}]}},
     "InvalidInput", "associations"),
    ("NUL query", "read", {"query": "a\x00b"}, "InvalidInput", "query"),
    ("NUL where value", "read", {"query": "deploy", "where": {"meta.k": "a\x00b"}},
     "InvalidInput", "where"),
    ("where typo of a column", "read", {"query": "deploy", "where": {"knd": "semantic"}},
     "InvalidInput", "where"),
    ("number against a text column", "read", {"query": "deploy", "where": {"kind": 5}},
     "InvalidInput", "where"),
    ("string $gt a numeric column", "read",
     {"query": "deploy", "where": {"value": {"$gt": "high"}}}, "InvalidInput", "where"),
    ("boolean $gt on meta", "read", {"query": "deploy", "where": {"meta.n": {"$gt": True}}},
     "InvalidInput", "where"),
    ("forget on a bare unknown name", "forget", {"where": {"typo": None}}, "InvalidInput",
     "where"),
    ("archive on a bare meta key", "archive", {"where": {"team": "x"}}, "InvalidInput", "where"),
    ("observed_at past the year 9999 in UTC", "write",
     {"text": TEXT, "observed_at": "9999-12-31T23:59:59-05:00"}, "InvalidTime", "observed_at"),
    ("recheck_by before the year 1 in UTC", "write",
     {"text": TEXT, "recheck_by": "0001-01-01T00:00:00+01:00"}, "InvalidTime", "recheck_by"),
    ("as_of past the year 9999 in UTC", "read",
     {"query": "deploy", "as_of": "9999-12-31T23:59:59-05:00"}, "InvalidTime", "as_of"),
    ("kinds not a list", "read", {"query": "deploy", "kinds": False}, "InvalidInput", "kinds"),
    ("access role with a newline", "write", {"text": TEXT, "access": ["ops\nadmin"]},
     "InvalidInput", "access"),
]  # fmt: skip
IDS = [case[0] for case in CASES]
# The MCP SDK's own client fails to serialise these before anything is sent.
MCP_UNSENDABLE = {"surrogate meta key", "meta 300 deep"}


def seeded(target: str) -> Memory:
    mem = Memory(target, agent_id="tenant")
    mem.write(TEXT, meta={"n": 3, "team": "x"})
    return mem


@pytest.mark.parametrize(("case", "op", "args", "error", "field"), CASES, ids=IDS)
def test_the_python_api_refuses_it(
    case: str, op: str, args: dict[str, Any], error: str, field: str, store_target: Target
) -> None:
    with seeded(store_target("api")) as mem:
        before = mem.stats()
        with pytest.raises(AssocmemError) as refused:
            operations()[op].call(mem, args)
        assert type(refused.value).__name__ == error
        assert getattr(refused.value, "field", None) == field
        assert mem.stats() == before  # a refused call changed nothing


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[str]:
    if request.param == "postgres":
        db = fresh_database(request.getfixturevalue("postgres_server"))
    else:
        db = str(tmp_path_factory.mktemp("hostile") / "http.db")
    seeded(db).close()
    with running_server(db, agent="tenant") as url:
        yield url


@pytest.mark.parametrize(("case", "op", "args", "error", "field"), CASES, ids=IDS)
def test_http_refuses_it_with_a_4xx(
    case: str, op: str, args: dict[str, Any], error: str, field: str, server: str
) -> None:
    status, body = post(server, op, args)
    assert 400 <= status < 500, body
    assert body["error"]["type"] == error and body["error"]["field"] == field, body
    status, exported = post(server, "export", {})
    assert status == 200, exported  # nothing the call left behind breaks a read


@pytest.mark.parametrize(("case", "op", "args", "error", "field"), CASES, ids=IDS)
def test_mcp_refuses_it_with_a_tool_error(
    case: str, op: str, args: dict[str, Any], error: str, field: str, tmp_path: Path
) -> None:
    if case in MCP_UNSENDABLE:
        pytest.skip("the MCP SDK client cannot send this argument")
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client as McpClient

    from assocmem.adapters.mcp import build_server

    db = str(tmp_path / "mcp.db")
    seeded(db).close()

    async def call() -> Any:
        async with McpClient(build_server(db, agent_id="tenant", tools=["all"])) as client:
            return await client.call_tool(op, args)

    result = anyio.run(call)
    assert result.is_error, result.content
    said = result.content[0].text.removeprefix(f"Error executing tool {op}: ")
    # The SDK checks the tool's input schema first; its refusal still names the
    # field, and nothing ran.
    schema_refusal = said.startswith(f"InvalidInput: {op}: {field}")
    assert said.startswith(f"{error}: ") or schema_refusal, said


def test_a_nul_is_refused_alike_and_meta_filters_keep_working(store_target: Target) -> None:
    with Memory(store_target("nul"), agent_id="tenant") as mem:
        kept = mem.write(TEXT, meta={"team": "x", "n": 3})
        for fields in ({"meta": {"k": "a\x00"}}, {"source": "a\x00"}, {"thread": "a\x00"},
                       {"tags": ["a\x00"]}, {"version": "a\x00"}, {"task": "a\x00"}):  # fmt: skip
            extra = {"kind": "working"} if "task" in fields else {}
            with pytest.raises(InvalidInput) as refused:
                mem.write("another note", **fields, **extra)
            assert refused.value.field == next(iter(fields))
        with pytest.raises(InvalidInput):
            mem.declare({"entities": [{"name": "pg\x00"}]})
        assert [r.id for r in mem.read("deploy", where={"meta.team": "x"}).items] == [kept.id]
        assert [r.id for r in mem.read("deploy", where={"team": "x"}).items] == [kept.id]
        mem.write("keyed", meta={"key": [1.0, 0.0], "value": [2.0]})
        assert mem.soft_read([1.0, 0.0], where={"meta.value": {"$ne": None}}).weights


def test_a_batch_refuses_an_item_whose_declarations_hold_a_nul(store_target: Target) -> None:
    # The same check as a single write's: the bad item alone is refused, the rest stored.
    with Memory(store_target("batch"), agent_id="tenant") as mem:
        bad, good = mem.write_many([
            {"text": "patched the rig", "associations": {"entities": ["rig\x00x"]}},
            {"text": "the rig works", "associations": {"entities": ["rig"]}},
        ])  # fmt: skip
        assert (bad.stored, bad.error, bad.field) == (False, "InvalidInput", "associations")
        assert good.stored and good.associations is not None
        assert good.associations.entities == ("rig",)


def test_a_destructive_filter_spells_meta_keys_and_deletes_only_what_it_names(
    store_target: Target,
) -> None:
    with Memory(store_target("forget"), agent_id="tenant") as mem:
        tagged = mem.write("tagged note", meta={"team": "x"})
        plain = mem.write("plain note")
        with pytest.raises(InvalidInput, match="meta.typo"):
            mem.forget(where={"typo": None})
        assert mem.stats().memories == 2  # the refused filter deleted nothing
        assert mem.forget(where={"meta.team": "x"}) == 1
        assert [r.id for r in mem.export()] == [plain.id]
        assert tagged.id not in {r.id for r in mem.export()}


def test_a_bad_synchronous_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as refused:
        Memory(str(tmp_path / "s.db"), synchronous="fast")
    assert refused.value.field == "synchronous"


def test_a_pool_refuses_a_non_bool_setting_when_it_opens(tmp_path: Path) -> None:
    for name in ("strict_corroboration", "receipts"):
        with pytest.raises(InvalidInput) as caught:
            MemoryPool(str(tmp_path / "pool.db"), readers=1, **{name: "yes"})
        assert caught.value.field == name


def test_a_write_for_roles_the_writer_lacks_keeps_its_declarations(store_target: Target) -> None:
    with Memory(store_target("roles"), agent_id="tenant") as mem:
        result = mem.write("the ledger balanced", access=["auditor"],
                           associations={"entities": ["ledger"]})  # fmt: skip
        assert result.stored and result.associations is not None
        assert (result.associations.entities, result.associations.mentions) == (("ledger",), 1)
        assert mem.stats().memories == 0  # the writer's own role does not read it back
    with Memory(store_target("roles"), agent_id="tenant", role="auditor") as auditor:
        assert [r.id for r in auditor.read("ledger").items] == [result.id]
