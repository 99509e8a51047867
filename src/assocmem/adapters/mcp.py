"""The MCP server: `Memory` as tools for an MCP client, over stdio (the ``mcp`` extra).

Invariants: the store is opened once, in the server's lifespan, and every tool is a
typed function calling one `Memory` method; a memory error reaches the client as a
tool error (``is_error``) naming its type, never as a crash of the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from pydantic import Field

from assocmem.errors import AssocmemError, DependencyMissing
from assocmem.memory import Memory
from assocmem.types import ReadResult

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissing("the MCP server needs `pip install assocmem[mcp]`") from exc

INSTRUCTIONS = (
    "Long-term associative memory. `remember` what you saw and learned; `recall` returns "
    "memories with the path that found each (source, via). After answering, rate the "
    "memories the answer relied on with `feedback`: they are taught the question's "
    "concepts, so a later question carrying them finds them (source `learned`), and the "
    "links between the question's concepts and theirs move."
)

Text = Annotated[str, Field(description="The memory's text, as observed (kept verbatim).")]
Concepts = Annotated[
    list[str] | None,
    Field(description="Concepts it is about; extracted from the text when omitted."),
]
Ids = Annotated[list[str], Field(description="Memory ids, as returned by remember or recall.")]


T = TypeVar("T")


def _memory(ctx: Context) -> Memory:
    memory = ctx.request_context.lifespan_context
    assert isinstance(memory, Memory)
    return memory


def _guarded(call: Callable[[], T]) -> T:
    try:
        return call()
    except AssocmemError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc.message}") from exc


def _recall_view(result: ReadResult) -> dict[str, Any]:
    return {
        "query_concepts": list(result.query_concepts),
        "expanded_concepts": result.expanded_concepts,
        "items": [
            {
                "id": item.id,
                "text": item.text,
                "score": round(item.score, 6),
                "source": item.source,
                "sources": item.sources,
                "via": [v.to_dict() for v in item.via],
                "kind": item.record.kind,
                "observed_at": item.record.observed_at,
            }
            for item in result.items
        ],
        "arms": result.arms,
        "gates": result.gates,
    }


def build_server(
    db: str,
    *,
    agent_id: str = "default",
    project_id: str = "",
    channel: str = "",
    embedder: str | None = None,
) -> MCPServer[Memory]:
    """An MCP server over the store ``db``, speaking as one agent."""

    @asynccontextmanager
    async def lifespan(server: MCPServer[Memory]) -> AsyncIterator[Memory]:
        memory = Memory(db, agent_id=agent_id, project_id=project_id, channel=channel,
                        embedder=embedder)  # fmt: skip
        try:
            yield memory
        finally:
            memory.close()

    server: MCPServer[Memory] = MCPServer(
        "assocmem", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )

    @server.tool()
    def remember(
        text: Text,
        ctx: Context,
        concepts: Concepts = None,
        kind: Annotated[str, Field(description="working, episodic, semantic or procedural")] = (
            "episodic"
        ),
        tags: Annotated[list[str] | None, Field(description="Free labels.")] = None,
        source: Annotated[str | None, Field(description="Where it came from.")] = None,
        observed_at: Annotated[
            str | None, Field(description="When it was observed (ISO 8601 with timezone).")
        ] = None,
    ) -> dict[str, Any]:
        """Store a memory. Returns its id; a repeated observation is refused as a duplicate."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.write(
            text, concepts=concepts, kind=kind, tags=tags, source=source,
            observed_at=observed_at,
        ).to_dict())  # fmt: skip

    @server.tool()
    def recall(
        ctx: Context,
        query: Annotated[str | None, Field(description="A question or description.")] = None,
        concepts: Annotated[list[str] | None, Field(description="Concepts to start from.")] = None,
        k: Annotated[int, Field(description="How many memories to return.", ge=1, le=100)] = 10,
        hops: Annotated[int, Field(description="Learned-link hops to follow.", ge=0, le=3)] = 1,
        mode: Annotated[str, Field(description="recall, or evidence (verified facts only)")] = (
            "recall"
        ),
    ) -> dict[str, Any]:
        """Recall memories for a question; each item says which arm found it (source) and
        which learned links reached it (via)."""
        memory = _memory(ctx)
        return _guarded(lambda: _recall_view(
            memory.read(query, concepts=concepts, k=k, hops=hops, mode=mode)))  # fmt: skip

    @server.tool()
    def feedback(
        ids: Ids,
        outcome: Annotated[float, Field(description="How the answer went, -1 to 1.", ge=-1, le=1)],
        ctx: Context,
        query_concepts: Annotated[
            list[str] | None, Field(description="The concepts the question was about.")
        ] = None,
    ) -> dict[str, Any]:
        """Rate the memories an answer relied on: they are taught the question's concepts,
        and links from those concepts move."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.feedback(ids, outcome, query_concepts).to_dict())

    @server.tool()
    def graph(
        concepts: Annotated[list[str], Field(description="Concepts to look around.")],
        ctx: Context,
        depth: Annotated[int, Field(description="Hops out, 1 to 3.", ge=1, le=3)] = 1,
    ) -> dict[str, Any]:
        """The learned links around concepts, with weight, count and valence."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.graph(concepts, depth).to_dict())

    @server.tool()
    def get(ids: Ids, ctx: Context) -> list[dict[str, Any]]:
        """Memories by id, with every field."""
        memory = _memory(ctx)
        return _guarded(lambda: [r.to_dict() for r in memory.get(ids)])

    @server.tool()
    def stats(ctx: Context) -> dict[str, Any]:
        """Counts of memories, concepts, links and feedback."""
        return _guarded(lambda: _memory(ctx).stats().to_dict())

    @server.tool()
    def declare(
        associations: Annotated[
            dict[str, Any],
            Field(
                description='{"entities": [{"name", "aliases"}], "relations": [{"subject",'
                ' "predicate", "object"}]}; endpoints are entity names or mem:<id>'
            ),
        ],
        ctx: Context,
        anchor_ref: Annotated[str | None, Field(description="mem:<id> that evidences it")] = None,
    ) -> dict[str, Any]:
        """Declare entities, aliases and relations; malformed ones are dropped and reported."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.declare(associations, anchor_ref).to_dict())

    @server.tool()
    def traverse(
        entity: Annotated[str, Field(description="An entity name or alias.")],
        ctx: Context,
        max_hops: Annotated[int, Field(ge=1, le=5, description="Relation hops.")] = 1,
    ) -> dict[str, Any]:
        """An entity's declared neighbourhood: related entities and the records naming them."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.traverse(entity, max_hops=max_hops).to_dict())

    @server.tool()
    def reconstruct(
        query: Annotated[str, Field(description="A question.")],
        ctx: Context,
        count: Annotated[int, Field(ge=1, le=100, description="Items to return.")] = 10,
    ) -> dict[str, Any]:
        """Recall with evidence reached through declared relations inside each item."""
        memory = _memory(ctx)
        return _guarded(lambda: memory.reconstruct(query, count=count).to_dict())

    @server.tool()
    def forget(ids: Ids, ctx: Context) -> dict[str, int]:
        """Delete memories for good, with every index entry and pointer to them."""
        memory = _memory(ctx)
        return _guarded(lambda: {"forgotten": memory.forget(ids)})

    return server


def run_stdio(db: str, **options: Any) -> None:
    """Serve over stdio until the client closes the connection."""
    build_server(db, **options).run("stdio")
