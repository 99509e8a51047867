"""The MCP server through a real MCP client session over stdio: real names, typed results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import assocmem  # noqa: E402
from assocmem.adapters.mcp import build_server  # noqa: E402
from assocmem.surface import operations  # noqa: E402
from tests.conftest import SEED_NOTES  # noqa: E402


def payload(result: Any) -> Any:
    """A tool's structured result, checked against the text form it also sends."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    if "result" not in result.structured_content:  # a list or a number arrives wrapped
        assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def session_story(db: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assocmem", "--db", db, "--agent", "ops", "mcp", "--tools", "all"],
        env=dict(os.environ),  # the SDK's default environment drops PYTHONPATH
    )
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        seen["tools"] = sorted(tools)
        seen["version"] = client.server_info.version
        seen["typed"] = all(t.output_schema for t in tools.values())
        seen["described"] = all(
            p.get("description") for t in tools.values()
            for p in t.input_schema.get("properties", {}).values()
        )  # fmt: skip
        seen["written"] = [
            payload(await client.call_tool("write", {"text": text, "concepts": concepts}))
            for text, concepts in SEED_NOTES[:4]
        ]
        asked = {"concepts": ["timeout"], "k": 500, "detail": True}
        recalled = payload(await client.call_tool("read", asked))
        seen["read"], seen["compact"] = recalled["detail"], recalled["items"]
        backoff = next(i for i in recalled["items"] if i["text"].startswith("Backoff"))
        rated = {"used": [backoff["id"]], "outcome": 1.0, "read": recalled["id"]}
        payload(await client.call_tool("feedback", rated))  # through the read's handle
        exported = payload(await client.call_tool("export", {}))
        seen["exported"] = len(exported["result"])
        edges = payload(await client.call_tool("graph", {"concepts": ["timeout"]}))["edges"]
        seen["edges"] = {(e["source"], e["target"]): e["weight"] for e in edges}
        failed = await client.call_tool("feedback", {"used": ["nope"], "outcome": 1.0,
                                                     "query_concepts": []})  # fmt: skip
        seen["error"] = (failed.is_error, failed.content[0].text)
        out_of_range = await client.call_tool("feedback", {
            "used": [backoff["id"]], "outcome": 5,
            "query_concepts": ["timeout"]})  # fmt: skip
        seen["range_error"] = (out_of_range.is_error, out_of_range.content[0].text)
        edges = payload(await client.call_tool("graph", {"concepts": ["timeout"]}))["edges"]
        seen["edges_after"] = {(e["source"], e["target"]): e["weight"] for e in edges}
    return seen


@pytest.mark.slow
def test_mcp_stdio_round_trip(tmp_path: Path) -> None:
    seen = anyio.run(session_story, str(tmp_path / "mcp.db"))
    assert seen["tools"] == sorted(operations())
    assert seen["version"] == assocmem.__version__
    assert seen["described"] and seen["typed"]
    assert seen["exported"] == 4
    # Concepts as written, never their stems ("retri").
    assert [w["concepts"] for w in seen["written"]][1] == ["timeout", "retry"]
    assert seen["read"]["expanded_concepts"] == {"retry": 2.0}
    read = seen["read"]["items"]
    backoff = next(i for i in read if i["record"]["text"].startswith("Backoff"))
    assert backoff["source"] == "hebbian_retrieval"
    assert backoff["via"][0]["concept"] == "retry"
    compact = next(i for i in seen["compact"] if i["text"].startswith("Backoff"))
    assert compact["source"] == "hebbian_retrieval"
    assert compact["why"] == "linked to the question's concepts by retry"
    assert seen["edges"][("timeout", "backoff")] == 1.0
    assert seen["error"][0] and "UnknownMemory" in seen["error"][1]
    assert seen["range_error"][0] and "outcome" in seen["range_error"][1]
    assert seen["edges_after"][("timeout", "backoff")] == 1.0  # the refused call moved nothing


def test_an_embedder_instance_is_attached_and_limits_are_memorys(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from assocmem.testing import ToyEmbedder

    toy = ToyEmbedder()

    async def story() -> tuple[Any, Any]:
        async with Client(build_server(str(tmp_path / "e.db"), embedder=toy)) as client:
            payload(await client.call_tool("write", {"text": "backoff fixed the flaky call"}))
            asked = {"query": "flaky call", "k": 1000, "detail": True}
            read = payload(await client.call_tool("read", asked))["detail"]
            return read, await client.call_tool("read", {"query": "flaky", "k": 1001})

    read, too_many = anyio.run(story)
    assert read["arms"]["semantic"] and toy.calls
    assert too_many.is_error and "InvalidInput" in too_many.content[0].text


# -- what a client may not say, and what the operator configures ------------------------


def _calls(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Each call's result through a real client session with ``server``, in order."""

    async def story() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(story)


def _refusal(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)


def test_every_tool_refuses_an_argument_it_does_not_take(tmp_path: Path) -> None:

    calls = [(name, {"no_such_argument": 1}) for name in operations()]
    results = _calls(build_server(str(tmp_path / "u.db"), tools=["all"]), *calls)
    for (name, _), result in zip(calls, results, strict=True):
        said = _refusal(result)
        assert said.startswith(f"InvalidInput: {name} takes no argument 'no_such_argument'"), said


def test_a_misspelt_argument_is_refused_naming_the_one_meant_and_nothing_is_stored(
    tmp_path: Path,
) -> None:

    misspelt, exported = _calls(
        build_server(str(tmp_path / "m.db"), tools=["core", "admin"]),
        ("write", {"text": "x", "concept": ["a"]}),
        ("export", {}),
    )
    said = _refusal(misspelt)
    assert "'concept' (did you mean 'concepts'?)" in said and "it takes text, " in said
    assert payload(exported)["result"] == []


def test_a_wrongly_typed_argument_is_refused_in_the_field_s_terms(tmp_path: Path) -> None:

    (result,) = _calls(build_server(str(tmp_path / "t.db")), ("read", {"query": "x", "k": "many"}))
    said = _refusal(result)
    assert said.startswith("InvalidInput: read: k: ") and "pydantic" not in said, said


def test_the_role_is_the_server_s_never_the_caller_s(tmp_path: Path) -> None:

    db = str(tmp_path / "r.db")
    with assocmem.Memory(db, agent_id="ops") as mem:
        mem.write("ward rota for the night shift", concepts=["rota"], access=["nurse"])
    asked = ("read", {"concepts": ["rota"], "role": "nurse"})
    plain = ("read", {"concepts": ["rota"]})
    refused, unroled = _calls(build_server(db, agent_id="ops"), asked, plain)
    assert "'role' (set by the server's configuration, not per call)" in _refusal(refused)
    assert payload(unroled)["items"] == []
    (nurse,) = _calls(build_server(db, agent_id="ops", role="nurse"), plain)
    assert [i["text"] for i in payload(nurse)["items"]] == ["ward rota for the night shift"]


def test_vault_tools_index_only_under_the_configured_roots(tmp_path: Path) -> None:

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Backoff\n\nRetry with backoff.\n", encoding="utf-8")
    call = ("vault_index", {"path": str(vault)})
    (unconfigured,) = _calls(build_server(str(tmp_path / "v.db"), tools=["vault"]), call)
    assert _refusal(unconfigured).startswith("PathRefused: ")
    assert "none are configured" in _refusal(unconfigured)
    other = [str(tmp_path / "other")]
    elsewhere = build_server(str(tmp_path / "v.db"), vault_roots=other, tools=["vault"])
    assert _refusal(_calls(elsewhere, call)[0]).startswith("PathRefused: ")
    roots = [str(vault)]
    (indexed,) = _calls(
        build_server(str(tmp_path / "v.db"), vault_roots=roots, tools=["vault"]), call
    )
    assert payload(indexed)["added"] == 1


def test_a_store_that_cannot_be_opened_is_a_typed_error_and_the_server_stays_up(
    tmp_path: Path,
) -> None:

    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database " * 64)

    async def story() -> tuple[list[str], list[str]]:
        async with Client(build_server(str(broken))) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            said = [
                _refusal(await client.call_tool(name, arguments))
                for name, arguments in (("write", {"text": "x"}), ("read", {"query": "x"}))
            ]
            return tools, said

    tools, said = anyio.run(story)
    assert "write" in tools
    assert all(s.startswith("StoreCorrupt: ") for s in said), said


@pytest.mark.slow
def test_the_mcp_command_takes_the_role_and_vault_roots_from_its_flags(tmp_path: Path) -> None:
    db, vault = str(tmp_path / "flags.db"), tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Rota\n\nNight shift rota.\n", encoding="utf-8")
    with assocmem.Memory(db, agent_id="ops") as mem:
        mem.write("ward rota for the night shift", concepts=["rota"], access=["nurse"])
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assocmem", "--db", db, "--agent", "ops", "mcp", "--role", "nurse",
              "--vault-root", str(vault), "--tools", "core,vault"],
        env=dict(os.environ),
    )  # fmt: skip

    async def story() -> tuple[Any, Any]:
        async with Client(params) as client:
            read = await client.call_tool("read", {"concepts": ["rota"]})
            return read, await client.call_tool("vault_index", {"path": str(vault)})

    read, indexed = anyio.run(story)
    assert [i["text"] for i in payload(read)["items"]] == ["ward rota for the night shift"]
    assert payload(indexed)["added"] == 1


# -- the tool list an agent pays for -----------------------------------------------------

# What the core tool list may cost in every prompt, every group's, and one tool's.
CORE_LIST_BUDGET = 12_000
ALL_LIST_BUDGET = 90_000
TOOL_BUDGET = 4_500


def _listed(server: Any) -> list[Any]:
    async def story() -> list[Any]:
        async with Client(server) as client:
            return list((await client.list_tools()).tools)

    return anyio.run(story)


def _size(tools: list[Any]) -> int:
    """The characters of a tools/list answer holding ``tools``, as a client receives it."""
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return len(json.dumps({"tools": listed}))


def test_the_core_tools_are_the_everyday_ones_and_fit_their_budget(tmp_path: Path) -> None:
    from assocmem.surface import GROUPS

    core = _listed(build_server(str(tmp_path / "c.db")))
    assert sorted(t.name for t in core) == sorted(GROUPS["core"]) and len(core) <= 8
    assert _size(core) < CORE_LIST_BUDGET, _size(core)


def test_every_tool_fits_its_budget_and_is_annotated_from_the_registry(tmp_path: Path) -> None:
    every = _listed(build_server(str(tmp_path / "a.db"), tools=["all"]))
    assert sorted(t.name for t in every) == sorted(operations())
    assert _size(every) < ALL_LIST_BUDGET, _size(every)
    ops = operations()
    for tool in every:
        op, hints = ops[tool.name], tool.annotations
        assert _size([tool]) < TOOL_BUDGET, (tool.name, _size([tool]))
        assert hints.read_only_hint is (not op.writes), tool.name
        if op.writes:
            assert hints.destructive_hint is op.destructive, tool.name
            assert hints.idempotent_hint is op.idempotent, tool.name
        assert hints.open_world_hint is (op.group == "vault"), tool.name
    hints = {t.name: t.annotations for t in every}
    assert hints["forget"].destructive_hint and not hints["write"].destructive_hint
    assert hints["read"].read_only_hint and not hints["feedback"].idempotent_hint


def test_groups_are_listed_by_name_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    from assocmem.adapters.mcp import tool_names
    from assocmem.surface import GROUPS

    listed = _listed(build_server(str(tmp_path / "g.db"), tools=["core", "graph"]))
    assert {t.name for t in listed} == {*GROUPS["core"], *GROUPS["graph"]}
    with pytest.raises(assocmem.InvalidInput) as refused:
        tool_names(["core", "grpah"])
    assert refused.value.field == "tools" and "'grpah'" in refused.value.message


def test_a_read_answers_compactly_unless_asked_for_detail(tmp_path: Path) -> None:
    server = build_server(str(tmp_path / "r.db"), tools=["core", "admin"])
    notes = [{"text": text, "concepts": concepts} for text, concepts in SEED_NOTES[:5]]
    asked = {"concepts": ["timeout", "retry", "backoff", "deploy"], "k": 5}
    _, compact, detailed = _calls(
        server,
        ("write_many", {"items": notes}),
        ("read", asked),
        ("read", {**asked, "detail": True}),
    )
    read = payload(compact)
    assert len(read["items"]) == 5 and "detail" not in read
    assert all(set(item) == {"id", "text", "source", "why"} for item in read["items"])
    stored = sum(len(item["text"]) for item in read["items"])
    # Its memories' text and a little on each; the full result is several times larger.
    assert len(compact.content[0].text) < stored + 5 * 200, len(compact.content[0].text)
    full = payload(detailed)
    assert [i["record"]["id"] for i in full["detail"]["items"]] == [i["id"] for i in read["items"]]
    assert len(detailed.content[0].text) > 3 * len(compact.content[0].text)


@pytest.mark.slow
def test_the_mcp_command_serves_streamable_http(tmp_path: Path) -> None:
    import socket
    import subprocess
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "assocmem", "--db", str(tmp_path / "h.db"), "mcp",
               "--transport", "http", "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, "it never listened"
            time.sleep(0.1)

        async def story() -> tuple[list[str], Any]:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                payload(await client.call_tool("write", {"text": "backoff fixed the flaky call"}))
                return names, payload(await client.call_tool("read", {"query": "flaky call"}))

        names, read = anyio.run(story)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert sorted(names) == ["feedback", "forget", "get", "read", "update", "write"]
    assert [i["text"] for i in read["items"]] == ["backoff fixed the flaky call"]


def test_the_tools_command_prints_what_a_model_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assocmem.adapters import cli
    from assocmem.surface import GROUPS

    def printed(*args: str) -> Any:
        assert cli.main(["--db", str(tmp_path / "t.db"), "tools", *args]) == 0
        return json.loads(capsys.readouterr().out)

    listed = [
        t.model_dump(mode="json", by_alias=True, exclude_none=True)
        for t in _listed(build_server(str(tmp_path / "s.db")))
    ]
    assert printed() == listed  # as the server lists them
    openai = printed("--format", "openai")
    assert [t["function"]["name"] for t in openai] == [t["name"] for t in listed]
    assert all(t["type"] == "function" for t in openai)
    read = next(t["function"] for t in openai if t["function"]["name"] == "read")
    # A function call answers in full: the MCP-only request for it is left out.
    properties = read["parameters"]["properties"]
    assert "detail" not in properties and "query" in properties
    anthropic = printed("--format", "anthropic", "--tools", "core,trust")
    assert {t["name"] for t in anthropic} == {*GROUPS["core"], *GROUPS["trust"]}
    assert all(set(t) == {"name", "description", "input_schema"} for t in anthropic)
