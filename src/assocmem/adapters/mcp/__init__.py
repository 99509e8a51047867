"""The MCP server: `Memory` operations as tools, over stdio or streamable HTTP (the
``mcp`` extra).

Invariants: each tool is one operation of `surface.operations()`, under the
operation's own name, its parameters (types, defaults, descriptions) and its result
schema read from the registry, so no tool is written by hand. A server lists the
groups of `surface.GROUPS` its operator names (``core`` by default: what an agent
needs every day), every tool annotated from the registry (read-only, destructive,
idempotent), its schemas and everyday results compact (`compact`). Arguments are
checked by `Memory`, not capped here. An argument a tool does not take is refused,
naming it, before the tool runs: a misspelt name dropped in silence would store or
read something other than what was asked. The role a server reads in, and the
folders its vault may index, are the operator's configuration, never a tool
argument (as over HTTP, where a key carries its roles). The store is opened once, in
the server's lifespan; a memory error, a store that cannot be opened included,
reaches the client as a tool error (``is_error``) naming its type, never as a crash
of the server.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from assocmem import Embedder, __version__
from assocmem.errors import AssocmemError, DependencyMissing, InvalidInput
from assocmem.memory import Memory
from assocmem.surface import GROUPS, Operation, operations

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.mcpserver.tools import Tool
    from mcp.types import ToolAnnotations
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissing("the MCP server needs `pip install assocmem[mcp]`") from exc

from assocmem.adapters.mcp import compact

INSTRUCTIONS = (
    "Long-term associative memory. `write` what you saw and learned; `read` returns "
    "memories with why each came back, and a read id. After answering, rate the "
    "memories the answer relied on with `feedback` (read=that id): a later question "
    "like it finds them. `get`, `update` and `forget` work by memory id."
)
# Tool groups a server lists unless told otherwise, and the name for all of them.
DEFAULT_TOOLS = ("core",)
ALL = "all"


# Operation parameters no tool offers: the server's configuration decides them.
CONFIGURED = frozenset({"role"})


class _Unavailable:
    """What the lifespan holds when the store cannot be opened: every call answers
    with the error that opening it raised, and the server stays up."""

    def __init__(self, error: AssocmemError) -> None:
        self.error = error


def _memory(ctx: Context) -> Memory:
    memory = ctx.request_context.lifespan_context
    if isinstance(memory, _Unavailable):
        raise ToolError(_message(memory.error))
    assert isinstance(memory, Memory)
    return memory


def _message(error: AssocmemError) -> str:
    return f"{type(error).__name__}: {error.message}"


def _plain(value: Any) -> Any:
    """The JSON form of a result (`to_dict()` of each frozen record)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _tool(op: Operation) -> Tool:
    """The tool for ``op``: its signature (what the SDK reads for the input and output
    schemas) is the operation's parameters, each described, plus ``detail`` where the
    result is compact, plus the context; its schemas are published lean."""
    shaped = compact.COMPACT.get(op.name)
    # The structured result carries every field of the declared type (opt-in fields
    # that `to_dict` leaves out arrive as their defaults), and the text form sent beside
    # it is the same JSON.
    returns = shaped[0] if shaped else op.result_type
    result_type = TypeAdapter(returns)

    def tool(ctx: Context, **arguments: Any) -> Any:
        detail = bool(arguments.pop("detail", False))
        try:
            value = op.call(_memory(ctx), arguments)
        except AssocmemError as exc:
            raise ToolError(_message(exc)) from exc
        value = shaped[1](value, detail) if shaped else _plain(value)
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
        if p.name not in CONFIGURED
    ]
    if shaped:
        described = Annotated[bool, Field(description=compact.DETAIL_DOC)]
        parameters.append(
            inspect.Parameter("detail", inspect.Parameter.KEYWORD_ONLY, annotation=described,
                              default=False)
        )  # fmt: skip
    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    signature = inspect.Signature([*parameters, context], return_annotation=returns)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {
        **{p.name: p.annotation for p in signature.parameters.values()},
        "return": returns,
    }
    tool.__name__ = tool.__qualname__ = op.name
    built = Tool.from_function(
        tool, name=op.name, description=_summary(op.doc), annotations=_annotations(op),
        structured_output=True,
    )  # fmt: skip
    built.parameters = compact.lean(built.parameters, optional_nulls=True)
    output = built.fn_metadata.output_schema
    built.fn_metadata.output_schema = compact.lean(output, optional_nulls=False)
    return built


def _summary(doc: str) -> str:
    """A tool's description: the first paragraph of its operation's documentation (the
    parameters describe themselves)."""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _annotations(op: Operation) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=not op.writes,
        destructive_hint=op.destructive if op.writes else None,
        idempotent_hint=op.idempotent if op.writes else None,
        # Only the vault's tools reach beyond the store: the files of a folder.
        open_world_hint=op.group == "vault",
    )


def tool_names(groups: Sequence[str] = DEFAULT_TOOLS) -> list[str]:
    """The operations a server with these tool groups lists, in registry order;
    ``all`` names every group. An unknown group is refused, naming the known ones."""
    chosen = set(GROUPS) if ALL in groups else set(groups)
    unknown = sorted(chosen - set(GROUPS))
    if unknown or not chosen:
        raise InvalidInput(
            f"unknown tool group {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"the groups are {', '.join(GROUPS)} or {ALL}",
            field="tools",
        )
    return [op.name for op in operations().values() if op.group in chosen]


# The forms `tool_schemas` gives tools in.
FORMATS = ("mcp", "openai", "anthropic")


def tool_schemas(groups: Sequence[str] = DEFAULT_TOOLS, form: str = "mcp") -> list[dict[str, Any]]:
    """The tools of these groups as a model is given them: as MCP lists them, or as
    function-calling tools for OpenAI's or Anthropic's APIs. A function call is then
    ``getattr(memory, name)(**arguments)``, which answers in full, so those forms leave
    out the MCP-only ``detail``."""
    if form not in FORMATS:
        raise InvalidInput(f"unknown format {form!r}: {', '.join(FORMATS)}", field="format")
    schemas = []
    for op in (operations()[name] for name in tool_names(groups)):
        tool = _tool(op)
        if form == "mcp":
            hints = _annotations(op).model_dump(mode="json", by_alias=True, exclude_none=True)
            schemas.append({
                "name": tool.name, "description": tool.description,
                "inputSchema": tool.parameters, "outputSchema": tool.output_schema,
                "annotations": hints,
            })  # fmt: skip
            continue
        properties = {k: v for k, v in tool.parameters["properties"].items() if k != "detail"}
        parameters = {**tool.parameters, "properties": properties}
        if form == "openai":
            function = {"name": tool.name, "description": tool.description}
            schemas.append({"type": "function", "function": {**function, "parameters": parameters}})
        else:
            schemas.append(
                {"name": tool.name, "description": tool.description, "input_schema": parameters}
            )
    return schemas


class _Server(MCPServer[Any]):
    """The SDK's server, refusing arguments a tool does not take before it runs, and
    answering every refusal as ``Type: what was wrong``, an argument's in its field's
    terms."""

    def __init__(self, *, tools: list[Tool], **options: Any) -> None:
        super().__init__(tools=tools, **options)
        # What each tool takes is what its published input schema names.
        self._taken = {tool.name: tuple(tool.parameters.get("properties", {})) for tool in tools}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        if name in self._taken:
            _refuse_unknown(name, self._taken[name], arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_invalid(name, exc.__cause__)) from exc.__cause__
            if isinstance(exc, UnexpectedToolError):
                raise
            # An anticipated refusal reads as every other: its type, then what was wrong.
            said = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(said) from exc.__cause__


def _refuse_unknown(name: str, taken: Sequence[str], arguments: dict[str, Any]) -> None:
    """Refuse every argument ``name`` does not take, with the nearest it does."""
    unknown = [argument for argument in arguments if argument not in taken]
    if not unknown:
        return
    parts = []
    for argument in unknown:
        if argument in CONFIGURED:
            parts.append(f"{argument!r} (set by the server's configuration, not per call)")
            continue
        near = difflib.get_close_matches(argument, taken, n=1)
        parts.append(f"{argument!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    raise ToolError(
        f"InvalidInput: {name} takes no argument {', '.join(parts)}; "
        f"it takes {', '.join(taken) or 'none'}"
    )


def _invalid(name: str, error: ValidationError) -> str:
    """A refused argument in the field's terms, without the validator's internals."""
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in error.errors(include_url=False)
    ]
    return f"InvalidInput: {name}: {'; '.join(problems)}"


def build_server(
    db: str,
    *,
    agent_id: str = "default",
    project_id: str = "",
    channel: str = "",
    role: str | None = None,
    embedder: Embedder | str | None = None,
    vault_roots: Sequence[str] = (),
    tools: Sequence[str] = DEFAULT_TOOLS,
) -> MCPServer[Any]:
    """An MCP server over the store ``db``, speaking as one agent in ``role`` (None:
    no role), listing the tool groups ``tools`` (`surface.GROUPS`, or ``all``);
    ``embedder`` is an `Embedder` or a registered embedder name (None: no vector arm);
    ``vault_roots`` are the folders its vault tools may index (none: every vault index
    is refused)."""
    listed = [operations()[name] for name in tool_names(tools)]

    @asynccontextmanager
    async def lifespan(server: MCPServer[Any]) -> AsyncIterator[Memory | _Unavailable]:
        try:
            memory = Memory(db, agent_id=agent_id, project_id=project_id, channel=channel,
                            role=role, embedder=embedder, vault_roots=vault_roots)  # fmt: skip
        except AssocmemError as exc:
            yield _Unavailable(exc)
            return
        try:
            yield memory
        finally:
            memory.close()

    return _Server(
        name="assocmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level="WARNING",
        tools=[_tool(op) for op in listed],
    )


def run(db: str, *, transport: str = "stdio", port: int = 8766, **options: Any) -> None:
    """Serve over stdio until the client closes the connection, or over streamable HTTP
    on 127.0.0.1:``port`` (path ``/mcp``) until stopped."""
    server = build_server(db, **options)
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        raise InvalidInput(f"unknown transport {transport!r}: stdio or http", field="transport")
