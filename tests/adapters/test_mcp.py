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
        args=["-m", "assocmem", "--db", db, "--agent", "ops", "mcp"],
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
        for text, concepts in SEED_NOTES[:4]:
            payload(await client.call_tool("write", {"text": text, "concepts": concepts}))
        recalled = payload(await client.call_tool("read", {"concepts": ["timeout"], "k": 500}))
        seen["read"] = recalled
        backoff = next(i for i in recalled["items"] if i["record"]["text"].startswith("Backoff"))
        rated = {"used": [backoff["record"]["id"]], "outcome": 1.0, "read": recalled["id"]}
        payload(await client.call_tool("feedback", rated))  # through the read's handle
        exported = payload(await client.call_tool("export", {}))
        seen["exported"] = len(exported["result"])
        edges = payload(await client.call_tool("graph", {"concepts": ["timeout"]}))["edges"]
        seen["edges"] = {(e["source"], e["target"]): e["weight"] for e in edges}
        failed = await client.call_tool("feedback", {"used": ["nope"], "outcome": 1.0,
                                                     "query_concepts": []})  # fmt: skip
        seen["error"] = (failed.is_error, failed.content[0].text)
        out_of_range = await client.call_tool("feedback", {
            "used": [backoff["record"]["id"]], "outcome": 5,
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
    assert seen["read"]["expanded_concepts"] == {"retri": 2.0}
    read = seen["read"]["items"]
    backoff = next(i for i in read if i["record"]["text"].startswith("Backoff"))
    assert backoff["source"] == "hebbian_retrieval"
    assert backoff["via"][0]["concept"] == "retri"
    assert seen["edges"][("timeout", "backoff")] == 1.0
    assert seen["error"][0] and "UnknownMemory" in seen["error"][1]
    assert seen["range_error"][0] and "outcome" in seen["range_error"][1]
    assert seen["edges_after"][("timeout", "backoff")] == 1.0  # the refused call moved nothing


def test_an_embedder_instance_is_attached_and_limits_are_memorys(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from assocmem.adapters.mcp import build_server
    from assocmem.testing import ToyEmbedder

    toy = ToyEmbedder()

    async def story() -> tuple[Any, Any]:
        async with Client(build_server(str(tmp_path / "e.db"), embedder=toy)) as client:
            payload(await client.call_tool("write", {"text": "backoff fixed the flaky call"}))
            read = payload(await client.call_tool("read", {"query": "flaky call", "k": 1000}))
            return read, await client.call_tool("read", {"query": "flaky", "k": 1001})

    read, too_many = anyio.run(story)
    assert read["arms"]["semantic"] and toy.calls
    assert too_many.is_error and "InvalidInput" in too_many.content[0].text
