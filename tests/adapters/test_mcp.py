"""The MCP server through a real MCP client session over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from tests.conftest import SEED_NOTES  # noqa: E402


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def session_story(db: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assocmem", "--db", db, "--agent", "ops", "mcp"],
    )
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        seen["tools"] = sorted(tools)
        seen["described"] = all(
            p.get("description") for t in tools.values()
            for p in t.input_schema.get("properties", {}).values()
        )  # fmt: skip
        for text, concepts in SEED_NOTES[:4]:
            payload(await client.call_tool("remember", {"text": text, "concepts": concepts}))
        recalled = payload(await client.call_tool("recall", {"concepts": ["timeout"]}))
        seen["recall"] = recalled
        backoff = next(i for i in recalled["items"] if i["text"].startswith("Backoff"))
        payload(await client.call_tool("feedback", {
            "ids": [backoff["id"]], "outcome": 1.0, "query_concepts": ["timeout"]}))  # fmt: skip
        edges = payload(await client.call_tool("graph", {"concepts": ["timeout"]}))["edges"]
        seen["edges"] = {(e["source"], e["target"]): e["weight"] for e in edges}
        failed = await client.call_tool("feedback", {"ids": ["nope"], "outcome": 1.0})
        seen["error"] = (failed.is_error, failed.content[0].text)
        out_of_range = await client.call_tool("feedback", {
            "ids": [backoff["id"]], "outcome": 5, "query_concepts": ["timeout"]})  # fmt: skip
        seen["range_error"] = (out_of_range.is_error, out_of_range.content[0].text)
        edges = payload(await client.call_tool("graph", {"concepts": ["timeout"]}))["edges"]
        seen["edges_after"] = {(e["source"], e["target"]): e["weight"] for e in edges}
    return seen


@pytest.mark.slow
def test_mcp_stdio_round_trip(tmp_path: Path) -> None:
    seen = anyio.run(session_story, str(tmp_path / "mcp.db"))
    assert {"remember", "recall", "feedback", "graph", "traverse", "reconstruct"} <= set(
        seen["tools"]
    )
    assert seen["described"]
    assert seen["recall"]["expanded_concepts"] == {"retri": 2.0}
    backoff = next(i for i in seen["recall"]["items"] if i["text"].startswith("Backoff"))
    assert backoff["source"] == "hebbian_retrieval"
    assert backoff["via"][0]["concept"] == "retri"
    assert seen["edges"][("timeout", "backoff")] == 1.0
    assert seen["error"][0] and "UnknownMemory" in seen["error"][1]
    assert seen["range_error"][0] and "outcome" in seen["range_error"][1]
    assert seen["edges_after"][("timeout", "backoff")] == 1.0  # the refused call moved nothing
