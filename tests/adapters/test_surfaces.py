"""Every public `Memory` method is declared and served on every surface.

Each surface is one column: a function listing the operations it serves, checked against
`Memory`'s public methods (not against the registry, so a new method no one declared
fails too). A CLI column is one more entry in `SURFACES`. The last tests prove the
checks can fail: an operation missing from a surface's list is reported.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from assocmem import Client, Memory
from assocmem.surface import DECLARED, operations, public_methods

SCOPE_FIELDS = {"agent_id", "project_id", "channel", "role"}


def missing(surface_names: set[str], public: Iterable[str] | None = None) -> list[str]:
    """Memory's public operations a surface lacks (all of them by default), sorted."""
    return sorted(set(public_methods() if public is None else public) - surface_names)


def declared() -> set[str]:
    return set(DECLARED)


def same_signature(cls: type, name: str) -> bool:
    """Whether ``cls.name`` has exactly `Memory.name`'s signature and resolved types."""
    ours, theirs = getattr(cls, name, None), getattr(Memory, name)
    return (
        callable(ours)
        and inspect.signature(ours) == inspect.signature(theirs)
        and typing.get_type_hints(ours) == typing.get_type_hints(theirs)
    )


def client_names(cls: type = Client) -> set[str]:
    """Operations the client has, each with `Memory`'s signature."""
    return {name for name in public_methods() if same_signature(cls, name)}


def http_names() -> set[str]:
    """Operations with a ``/v1/<name>`` route whose body takes exactly their parameters."""
    pytest.importorskip("fastapi")
    from assocmem.adapters.server import create_app

    schema = create_app(":memory:").openapi()  # the store opens in the lifespan, never run
    components = schema["components"]["schemas"]
    served = set()
    for path, route in schema["paths"].items():
        name = path.removeprefix("/v1/")
        if name == path or name not in operations():
            continue
        ref = route["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        fields = set(components[ref.rsplit("/", 1)[1]]["properties"])
        # `read`'s own ``role`` is the scope's role field, checked against the key.
        if fields - SCOPE_FIELDS == {p.name for p in operations()[name].parameters} - SCOPE_FIELDS:
            served.add(name)
    return served


def mcp_names(tmp: Path) -> set[str]:
    """Tools a real MCP server lists (in process, through the SDK's client session), each
    taking exactly its operation's parameters but the role, which the server's
    configuration sets."""
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    from mcp.client import Client as McpClient

    from assocmem.adapters.mcp import build_server

    async def listed() -> list[Any]:
        async with McpClient(build_server(str(tmp / "mcp.db"), tools=["all"])) as client:
            return list((await client.list_tools()).tools)

    ops = operations()
    return {
        tool.name
        for tool in anyio.run(listed)
        if tool.name in ops
        and set(tool.input_schema.get("properties", {}))
        - {"detail"}  # the compact tools' request for their full result
        == {p.name for p in ops[tool.name].parameters} - {"role"}
    }


SURFACES: dict[str, Callable[[Path], set[str]]] = {
    "registry": lambda _: declared(),
    "http": lambda _: http_names(),
    "client": lambda _: client_names(),
    "mcp": mcp_names,
}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_public_method_is_on_the_surface(surface: str, tmp_path: Path) -> None:
    assert missing(SURFACES[surface](tmp_path)) == [], f"missing from {surface}"


def test_there_are_public_methods_to_check() -> None:
    assert len(public_methods()) >= 23 and "write" in public_methods()


@pytest.mark.parametrize("surface", SURFACES)
def test_the_check_reports_an_operation_a_surface_lacks(surface: str, tmp_path: Path) -> None:
    names = SURFACES[surface](tmp_path)
    assert missing(names - {"read"}) == ["read"]
    # A new public method nobody added to the surface:
    assert missing(names, [*public_methods(), "summarize"]) == ["summarize"]


def test_a_client_method_with_another_signature_does_not_count() -> None:
    drifted = type("Drifted", (), {
        "write": Client.write,
        "read": lambda self, query: None,  # parameters lost
        "get": Client.get,
    })  # fmt: skip
    assert missing(client_names(drifted), ["write", "read", "get"]) == ["read"]


@pytest.mark.slow
def test_mypy_reads_the_clients_types(tmp_path: Path) -> None:
    """A user's script type-checks against `Client`'s declared methods."""
    pytest.importorskip("mypy")
    import assocmem

    good = tmp_path / "good.py"
    good.write_text(
        "from assocmem import Client, WriteResult\n\n"
        'c = Client("http://127.0.0.1:8765")\n'
        'result: WriteResult = c.write("x", tags=["a"])\n'
        "ids: list[str] = [r.id for r in c.get([result.id or ''])]\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.py"
    bad.write_text(
        'from assocmem import Client\n\nc = Client("http://127.0.0.1:8765")\nc.write(1)\n'
        'count: int = c.write("x")\n',
        encoding="utf-8",
    )
    source = Path(assocmem.__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--follow-imports=silent", good.name, bad.name],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={"MYPYPATH": str(source), "PATH": ""},
    )  # fmt: skip
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("bad.py:") for line in errors), done.stdout
    assert any(line.startswith("bad.py:4:") and "[arg-type]" in line for line in errors), errors
    assert any(line.startswith("bad.py:5:") and "[assignment]" in line for line in errors), errors
