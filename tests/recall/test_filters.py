"""Filters that could never match are refused: a name that is neither a column nor a
meta key a readable memory carries, a top-level operator, an unknown operator. Every
surface (Python, HTTP, CLI, MCP) reports the same typed error. On both backends."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from assocmem import InvalidInput, Memory
from assocmem.adapters import cli
from assocmem.recall.filters import OPERATORS
from tests.adapters.server_kit import post, running_server
from tests.conftest import Target

AGENT = "default"
TEXT = "deploy the release on friday"


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("filters"), agent_id=AGENT) as memory:
        memory.write(TEXT, meta={"team": "x"})
        yield memory


def _read(where: Any) -> Callable[[Memory], object]:
    return lambda m: m.read("deploy release", where=where)


# Every operation that takes a filter, with the argument it names in a refusal.
OPERATIONS: dict[str, tuple[str, Callable[[Any], Callable[[Memory], object]]]] = {
    "read": ("where", _read),
    "prefer": ("prefer", lambda w: lambda m: m.read("deploy release", prefer=w)),
    "soft_read": ("where", lambda w: lambda m: m.soft_read([1.0], where=w)),
    "list_memories": ("where", lambda w: lambda m: m.list_memories(where=w)),
    "retain": ("match", lambda w: lambda m: m.retain({"rules": [{"name": "r", "match": w}]})),
}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize(
    ("where", "named"),
    [
        ({"knid": "semantic"}, "'kind'"),  # the docs' own example of a refused typo
        ({"no_such_field": 1}, "Valid fields: access, author"),
        ({"no_such_field": {"$ne": 1}}, "meta.<key>"),  # negated it would match everything
        ({"kind": "semantic", "tem": {"$in": ["x"]}}, "'tem'"),
        ({"x') OR 1=1 --": 1}, "Valid fields"),  # the presence probe binds the key too
    ],
)
def test_a_bare_name_no_readable_memory_carries_is_refused(
    mem: Memory, operation: str, where: dict[str, Any], named: str
) -> None:
    field, call = OPERATIONS[operation]
    with pytest.raises(InvalidInput) as refused:
        call(where)(mem)
    assert refused.value.field == field
    assert named in refused.value.message
    assert repr(next(k for k in where if k != "kind")) in refused.value.message


def test_a_key_only_a_restricted_memory_carries_is_unknown_to_other_readers(
    store_target: Target,
) -> None:
    target = store_target("filters")
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        shared = plain.write(TEXT, meta={"team": "x"})
        secret = ops.write("deploy the vault release", access=["ops"], meta={"vault_team": "y"})
        with pytest.raises(InvalidInput) as hidden:
            plain.read("deploy release", where={"vault_team": "y"})
        with pytest.raises(InvalidInput) as never:
            plain.read("deploy release", where={"vault_tean": "y"})
        assert hidden.value.message.replace("vault_team", "NAME") == never.value.message.replace(
            "vault_tean", "NAME"
        )
        assert [i.id for i in ops.read("deploy release", where={"vault_team": "y"}).items] == [
            secret.id
        ]
        # A carried bare key and any meta.<key> stay open, the latter matching nothing.
        assert [i.id for i in plain.read("deploy release", where={"team": "x"}).items] == [
            shared.id
        ]
        assert plain.read("deploy release", where={"meta.vault_team": "y"}).items == ()
        assert plain.read("deploy release", where={"meta.not_yet": 1}).items == ()


@pytest.mark.parametrize("operator", ["$or", "$and", "$not"])
def test_a_top_level_operator_is_refused_as_unsupported(mem: Memory, operator: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        mem.read("deploy", where={operator: [{"kind": "semantic"}, {"kind": "episodic"}]})
    said = refused.value.message
    assert refused.value.field == "where"
    assert f"{operator!r} is not supported" in said and "AND-ed" in said and "$in" in said


@pytest.mark.parametrize("spec", [{"$regex": "x"}, {"$or": ["a"]}, {}])
def test_an_unknown_operator_is_refused_naming_the_valid_ones(
    mem: Memory, spec: dict[str, Any]
) -> None:
    with pytest.raises(InvalidInput) as refused:
        mem.read("deploy", where={"kind": spec})
    assert refused.value.field == "where"
    assert refused.value.message.endswith("the operators are " + " ".join(OPERATORS))


SURFACE_CASES = [{"knid": "semantic"}, {"no_such_field": 1}, {"$or": []}, {"kind": {"$re": 1}}]


def test_every_surface_reports_the_same_refusal(
    mem: Memory, store_target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client as McpClient

    from assocmem.adapters.mcp import build_server

    target = store_target("filters")
    expected = []
    for where in SURFACE_CASES:
        with pytest.raises(InvalidInput) as refused:
            mem.read("deploy", where=where)
        expected.append(refused.value.message)
    mem.close()

    said_cli = []
    for where in SURFACE_CASES:
        code = cli.main(["--db", target, "--agent", AGENT, "read", "deploy",
                         "--where", json.dumps(where)])  # fmt: skip
        said_cli.append((code, capsys.readouterr().err.strip()))
    assert said_cli == [(2, f"error: {m}") for m in expected]

    async def mcp_calls() -> list[tuple[bool, str]]:
        async with McpClient(build_server(target, agent_id=AGENT)) as client:
            results = [
                await client.call_tool("read", {"query": "deploy", "where": where})
                for where in SURFACE_CASES
            ]
        return [(r.is_error, r.content[0].text) for r in results]

    said_mcp = [(failed, text.removeprefix("Error executing tool read: "))
                for failed, text in anyio.run(mcp_calls)]  # fmt: skip
    assert said_mcp == [(True, f"InvalidInput: {m}") for m in expected]

    with running_server(target, agent=AGENT) as url:
        said_http = [post(url, "read", {"query": "deploy", "where": w}) for w in SURFACE_CASES]
    assert said_http == [
        (422, {"error": {"type": "InvalidInput", "field": "where", "message": m}}) for m in expected
    ]


@pytest.mark.parametrize(
    ("where", "found"),
    [
        ({"observed_at": {"$gte": "2024-05-01T02:00:00+02:00"}}, True),  # 00:00Z, before it
        ({"observed_at": {"$lt": "2024-05-01T03:00:00+02:00"}}, True),  # 01:00Z, after it
        ({"observed_at": {"$gt": "2024-05-01T03:00:00+02:00"}}, False),
        ({"observed_at": "2024-05-01T02:30:00+02:00"}, True),  # the same instant
        ({"observed_at": {"$gte": "2024-05"}}, True),  # a prefix compares as given
        ({"observed_at": {"$lt": "2024-05-02"}}, True),
        ({"observed_at": {"$lt": "0999-01-01T00:00:00+00:00"}}, False),
    ],
)
def test_a_time_filter_compares_instants_whatever_offset_it_is_written_in(
    store_target: Target, where: dict[str, Any], found: bool
) -> None:
    with Memory(store_target("times"), agent_id=AGENT) as memory:
        memory.write(TEXT, observed_at="2024-05-01T00:30:00Z")
        assert bool(memory.list_memories(where=where).items) is found
