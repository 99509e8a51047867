"""A service key acting for many end users: each user a scope of its own, walked over
every core operation on HTTP (a real server, both backends) and on MCP (a server per
user over one store). One user never sees, changes or infers another's memories."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")

from assocmem import InvalidInput  # noqa: E402
from assocmem.adapters.server.keys import add_key as make_key  # noqa: E402
from assocmem.adapters.server.keys import read_keys  # noqa: E402
from tests.adapters.server_kit import Path, add_key, post, running_server  # noqa: E402
from tests.conftest import Target  # noqa: E402

NOTES = {
    "user-a": "Alice's gateway timed out after the certificate rotated.",
    "user-b": "Bob's cache warmed slowly after the gateway deploy.",
}
QUESTIONS = ("why did the gateway time out", "gateway cache deploy certificate")


def _as(url: str, key: str, agent: str) -> Any:
    def call(route: str, body: dict[str, Any]) -> tuple[int, Any]:
        return post(url, route, {**body, "agent_id": agent}, key)

    return call


def test_a_service_key_acts_for_its_grants_and_no_one_else(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    service = add_key(keys, "backend")
    _, granted = make_key(keys, "backend", (), ("user-*", "ops"))
    plain = add_key(keys, "user-a")
    assert read_keys(keys)[1].agents == ("user-*", "ops")
    with running_server(str(tmp_path / "s.db"), "--keys", str(keys)) as url:
        for agent, expected in (("user-a", 200), ("ops", 200), ("backend", 200),
                                ("user", 403), ("users-a", 403), ("opsx", 403)):  # fmt: skip
            assert post(url, "stats", {"agent_id": agent}, granted)[0] == expected, agent
        assert post(url, "stats", {"agent_id": "user-a"}, service)[0] == 403  # no grants
        assert post(url, "stats", {"agent_id": "user-b"}, plain)[0] == 403
        assert post(url, "stats", {}, granted)[0] == 200  # its own agent when none is named


@pytest.mark.parametrize("grant", ["*", "", "a*b*"])
def test_a_grant_must_name_an_id_or_a_prefix(tmp_path: Path, grant: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        make_key(tmp_path / "keys.json", "backend", (), (grant,))
    assert refused.value.field == "agents"


def test_end_users_of_one_service_key_are_isolated_over_http(
    store_target: Target, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    _, secret = make_key(keys, "backend", (), ("user-*",))
    with running_server(store_target("walk"), "--keys", str(keys)) as url:
        a, b = _as(url, secret, "user-a"), _as(url, secret, "user-b")
        b_id = b("write", {"text": NOTES["user-b"], "concepts": ["gateway", "cache"]})[1]["id"]
        before = [b("read", {"query": q})[1]["items"] for q in QUESTIONS]
        # user-a writes, reads, rates and updates its own memory ...
        a_id = a("write", {"text": NOTES["user-a"], "concepts": ["gateway", "timeout"]})[1]["id"]
        asked = a("read", {"query": QUESTIONS[0]})[1]
        assert [i["record"]["id"] for i in asked["items"]] == [a_id]
        assert a("feedback", {"used": [a_id], "outcome": 1.0, "read": asked["id"]})[0] == 200
        assert a("update", {"id": a_id, "tags": ["incident"]})[0] == 200
        # ... and none of it reaches user-b, who cannot reach it either.
        after = [b("read", {"query": q})[1]["items"] for q in QUESTIONS]
        assert _plain(after) == _plain(before)
        assert all(i["record"]["id"] == b_id for items in after for i in items)
        for route, body in (
            ("get", {"ids": [a_id]}),
            ("update", {"id": a_id, "tags": ["stolen"]}),
            ("forget", {"ids": [a_id]}),
            ("feedback", {"used": [a_id], "outcome": -1.0, "query_concepts": ["gateway"]}),
        ):
            status, body_ = b(route, body)
            assert (status, body_["error"]["type"]) == (404, "UnknownMemory"), route
        status, refused = b("feedback", {"used": [b_id], "outcome": 1.0, "read": asked["id"]})
        assert (status, refused["error"]["type"]) == (404, "UnknownRead")
        (record,) = a("get", {"ids": [a_id]})[1]
        assert record["tags"] == ["incident"]  # nothing user-b tried changed it
        assert a("forget", {"ids": [a_id]})[1] == 1
        assert [i["record"]["id"] for i in b("read", {"query": QUESTIONS[1]})[1]["items"]] == [b_id]


def _plain(reads: list[list[dict[str, Any]]]) -> list[list[tuple[str, str]]]:
    """Each read's ids and sources (scores also carry the time since each was read)."""
    return [[(i["record"]["id"], i["source"]) for i in items] for items in reads]


def test_end_users_are_isolated_over_mcp(store_target: Target) -> None:
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client

    from assocmem.adapters.mcp import build_server

    target = store_target("mcp-walk")

    async def story() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with (
            Client(build_server(target, agent_id="user-a")) as a,
            Client(build_server(target, agent_id="user-b")) as b,
        ):

            async def call(client: Any, name: str, arguments: dict[str, Any]) -> Any:
                result = await client.call_tool(name, arguments)
                return result.content[0].text if result.is_error else result.structured_content

            b_id = (await call(b, "write", {"text": NOTES["user-b"]}))["id"]
            seen["before"] = (await call(b, "read", {"query": QUESTIONS[1]}))["items"]
            a_id = (await call(a, "write", {"text": NOTES["user-a"]}))["id"]
            asked = await call(a, "read", {"query": QUESTIONS[0]})
            await call(a, "feedback", {"used": [a_id], "outcome": 1.0, "read": asked["id"]})
            seen["after"] = (await call(b, "read", {"query": QUESTIONS[1]}))["items"]
            seen["refused"] = [
                await call(b, "get", {"ids": [a_id]}),
                await call(b, "update", {"id": a_id, "tags": ["stolen"]}),
                await call(b, "forget", {"ids": [a_id]}),
                await call(b, "feedback", {"used": [b_id], "outcome": 1.0, "read": asked["id"]}),
            ]
            seen["kept"] = (await call(a, "get", {"ids": [a_id]}))["result"][0]["tags"]
            seen["b"] = b_id
        return seen

    seen = anyio.run(story)
    assert [i["id"] for i in seen["after"]] == [i["id"] for i in seen["before"]] == [seen["b"]]
    assert [s.split(":")[0] for s in seen["refused"]] == [
        "UnknownMemory", "UnknownMemory", "UnknownMemory", "UnknownRead",
    ]  # fmt: skip
    assert seen["kept"] == []


def test_keys_add_makes_a_service_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from assocmem.adapters import cli

    keys = str(tmp_path / "keys.json")
    code = cli.main(["--json", "keys", "--keys", keys, "add", "--key-agent", "backend",
                     "--agents", "user-*", "--agents", "ops"])  # fmt: skip
    assert code == 0
    made = json.loads(capsys.readouterr().out)
    assert made["agents"] == ["user-*", "ops"] and made["key"].startswith("am_")
    (entry,) = read_keys(keys)
    assert entry.speaks_for("user-9") and entry.speaks_for("backend") and not entry.speaks_for("x")
