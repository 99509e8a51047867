"""The vault over the surfaces: a served vault is bounded by the operator's roots; the
MCP tools, the client and the ``assocmem vault`` group reach the same operations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assocmem import Client, Memory, PathRefused
from assocmem.adapters import cli
from assocmem.vault import notes
from tests.adapters.server_kit import post, running_server


def test_a_served_vault_is_refused_without_roots_and_outside_them(
    vault: Path, tmp_path: Path
) -> None:
    db = str(tmp_path / "served.db")
    with running_server(db) as url:
        status, body = post(url, "vault_index", {"path": str(vault)})
        assert status == 403
        assert body["error"]["type"] == "PathRefused" and body["error"]["field"] == "path"
        assert post(url, "index_status", {})[1]["notes"] == 0
    other = tmp_path / "other"
    other.mkdir()
    with running_server(db, "--vault-root", str(other), "--vault-root", str(vault)) as url:
        status, body = post(url, "vault_index", {"path": str(tmp_path)})  # above a root
        assert (status, body["error"]["field"]) == (403, "path")
        status, body = post(url, "vault_index", {"path": str(vault / ".." / "vault" / "..")})
        assert status == 403
        status, body = post(url, "vault_index", {"path": str(vault / "learning")})
        assert (status, body["notes"]) == (200, 5)
        client = Client(url)
        report = client.vault_index(str(vault))  # the same folder, typed through the client
        assert report.notes == 18 and report.removed == 5
        hits = client.relevant_notes("feedback latency", k=2)
        assert hits[0].note in {"learning/Deliberate Practice.md", "habits/Habit Loops.md"}
        assert client.maintenance_report().dead_links[0].target == "Opportunity Cost"
        assert client.apply_links().dry_run is True


def test_a_skipped_note_and_its_reason_reach_every_surface(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vault / "learning" / "Binary.md").write_bytes(b"# Binary\n\nbefore\x00after\n")
    skipped = {"learning/Binary.md": notes.HAS_NUL}
    with running_server(str(tmp_path / "served.db"), "--vault-root", str(vault)) as url:
        status, body = post(url, "vault_index", {"path": str(vault)})
        assert (status, body["skipped"], body["notes"]) == (200, skipped, 18)
        assert Client(url).vault_index(str(vault)).skipped == skipped
    assert cli.main(["--db", str(tmp_path / "cli.db"), "--json", "vault", "index", str(vault)]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == skipped
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client as McpClient

    from assocmem.adapters.mcp import build_server

    async def index() -> Any:
        served = build_server(str(tmp_path / "mcp.db"), vault_roots=[str(vault)], tools=["vault"])
        async with McpClient(served) as client:
            return (await client.call_tool("vault_index", {"path": str(vault)})).structured_content

    assert anyio.run(index)["skipped"] == skipped


def test_a_memory_with_roots_refuses_other_folders(vault: Path, tmp_path: Path) -> None:
    with Memory(str(tmp_path / "m.db"), vault_roots=[str(vault / "habits")]) as memory:
        with pytest.raises(PathRefused) as refused:
            memory.vault_index(str(vault))
        assert refused.value.field == "path"
        assert memory.vault_index(str(vault / "habits")).notes == 4


def test_the_vault_tools_are_mcp_tools(vault: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client as McpClient

    from assocmem.adapters.mcp import build_server

    async def session() -> tuple[set[str], Any]:
        served = build_server(str(tmp_path / "mcp.db"), vault_roots=[str(vault)], tools=["vault"])
        async with McpClient(served) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            await client.call_tool("vault_index", {"path": str(vault)})
            found = await client.call_tool("relevant_notes", {"query": "habit reward", "k": 1})
            return names, found.structured_content

    names, found = anyio.run(session)
    assert {"vault_index", "index_status", "relevant_notes", "coverage_gap", "find_gaps",
            "bridge_candidates", "extract_claims", "idea_methods", "maintenance_report",
            "apply_links"} == names  # fmt: skip
    assert found["result"][0]["note"] == "habits/Habit Loops.md"


def test_the_vault_cli_group(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(tmp_path / "cli.db"), "--json"]
    assert cli.main([*db, "vault", "index", str(vault)]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == 18
    assert cli.main([*db, "vault", "claims", "Habit Loops"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["line"] == 7  # the file's own line
    assert cli.main([*db, "vault", "apply"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0
    assert cli.main([*db, "vault", "apply", "--no-dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 2
    assert cli.main([*db, "vault", "maintain"]) == 0
    assert json.loads(capsys.readouterr().out)["health"] == 1.0


def test_the_vault_demo_runs_on_a_copy(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.vault.conftest import SAMPLE, files

    before = files(SAMPLE)
    assert cli.main(["vault", "demo"]) == 0
    out = capsys.readouterr().out
    assert "Habit Loops" in out and "again -> wrote 0 (idempotent)" in out
    assert files(SAMPLE) == before


def test_served_roots_come_from_the_flag_then_the_environment() -> None:
    from assocmem.config import Config

    environ = {"ASSOCMEM_VAULT_ROOTS": "/srv/a:/srv/b", "ASSOCMEM_DB": ":memory:"}
    assert Config.load({}, environ).vault_roots == ("/srv/a", "/srv/b")
    assert Config.load({"vault_roots": ["/srv/c"]}, environ).vault_roots == ("/srv/c",)
    assert Config.load({}, {"ASSOCMEM_DB": ":memory:"}).vault_roots == ()
