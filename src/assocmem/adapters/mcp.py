"""The MCP server: every `Memory` operation as a tool, over stdio (the ``mcp`` extra).

Invariants: one tool per operation of `surface.operations()`, under the operation's
own name, its parameters (types, defaults, descriptions) and its structured result
schema read from the registry, so no tool is written by hand and none is missing;
arguments are checked by `Memory`, not capped here. The store is opened once, in the
server's lifespan; a memory error reaches the client as a tool error (``is_error``)
naming its type, never as a crash of the server.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from assocmem import Embedder, __version__
from assocmem.errors import AssocmemError, DependencyMissing
from assocmem.memory import Memory
from assocmem.surface import Operation, operations

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissing("the MCP server needs `pip install assocmem[mcp]`") from exc

INSTRUCTIONS = (
    "Long-term associative memory. `write` what you saw and learned; `read` returns "
    "memories with the path that found each (source, via). After answering, rate the "
    "memories the answer relied on with `feedback`: they are taught the question's "
    "concepts, so a later question carrying them finds them (source `learned`), and the "
    "links between the question's concepts and theirs move. `declare` entities and "
    "relations, then `traverse`, `resolve` or `reconstruct` along them; `forget`, "
    "`archive` and `retain` manage what is kept."
)


def _memory(ctx: Context) -> Memory:
    memory = ctx.request_context.lifespan_context
    assert isinstance(memory, Memory)
    return memory


def _plain(value: Any) -> Any:
    """The JSON form of a result (`to_dict()` of each frozen record)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _tool(op: Operation) -> Callable[..., Any]:
    """A tool function for ``op``: its signature (what the SDK reads for the input and
    output schemas) is the operation's parameters, each described, plus the context."""

    # The structured result carries every field of the declared type (opt-in fields
    # that `to_dict` leaves out arrive as their defaults), and the text form sent beside
    # it is the same JSON.
    result_type = TypeAdapter(op.result_type)

    def tool(ctx: Context, **arguments: Any) -> Any:
        try:
            value = _plain(op.call(_memory(ctx), arguments))
        except AssocmemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc.message}") from exc
        return result_type.dump_python(result_type.validate_python(value), mode="json")

    parameters = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[p.json_type, Field(description=p.doc)],
            # A ``*args`` parameter is a list the caller must give, as over HTTP.
            default=inspect.Parameter.empty if p.required or p.variadic else p.default,
        )
        for p in op.parameters
    ]
    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    signature = inspect.Signature([*parameters, context], return_annotation=op.result_type)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {
        **{p.name: p.annotation for p in signature.parameters.values()},
        "return": op.result_type,
    }
    tool.__name__ = tool.__qualname__ = op.name
    tool.__doc__ = op.doc
    return tool


def build_server(
    db: str,
    *,
    agent_id: str = "default",
    project_id: str = "",
    channel: str = "",
    embedder: Embedder | str | None = None,
) -> MCPServer[Memory]:
    """An MCP server over the store ``db``, speaking as one agent; ``embedder`` is an
    `Embedder` or a registered embedder name (None: no vector arm)."""

    @asynccontextmanager
    async def lifespan(server: MCPServer[Memory]) -> AsyncIterator[Memory]:
        memory = Memory(db, agent_id=agent_id, project_id=project_id, channel=channel,
                        embedder=embedder)  # fmt: skip
        try:
            yield memory
        finally:
            memory.close()

    server: MCPServer[Memory] = MCPServer(
        "assocmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level="WARNING",
    )
    for op in operations().values():
        server.add_tool(_tool(op), name=op.name, description=op.doc, structured_output=True)
    return server


def run_stdio(db: str, **options: Any) -> None:
    """Serve over stdio until the client closes the connection."""
    build_server(db, **options).run("stdio")
