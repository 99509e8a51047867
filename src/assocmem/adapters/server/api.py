"""The HTTP server: one route per operation of the registry, the caller named by its key.

Invariants: a caller's agent comes from its API key only (a request naming another
agent is refused) and it may read only in its key's roles; every route is a thin
call of one `Memory` method with the request's JSON as keyword arguments, its request
model (fields documented) and response model (the result type, answered in its
``to_dict()`` form) generated from `surface.operations()`; one
connection writes to the store, a small pool reads; errors leave as
``{"error": {"type", "message", "field"}}`` with the status of their class, never a
stack trace, and bad input is never a 500. A request reaches a route only through the
gate (`gate.Gate`), which checks its host, key and size before its body is read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, ValidationError, create_model
from starlette.exceptions import HTTPException

from assocmem import Embedder, __version__
from assocmem.adapters.server import logs, static
from assocmem.adapters.server.gate import KEY_ENTRY, Gate, Hosts, bearer, error_body
from assocmem.adapters.server.keys import KeyEntry, KeyRing
from assocmem.adapters.server.limits import BODY_TIMEOUT
from assocmem.adapters.server.limits import MAX_BODY_BYTES as MAX_BODY_BYTES  # the client's too
from assocmem.errors import (
    AccessDenied,
    AssocmemError,
    AuthenticationRequired,
    DependencyMissing,
    EmbedderError,
    EmbedderMismatch,
    InvalidInput,
    NotFound,
    StoreBusy,
    StoreUnavailable,
)
from assocmem.pool import READERS, MemoryPool
from assocmem.surface import Operation, operations
from assocmem.types import Scope

# The error type of a framework-level refusal (no route, wrong method), by status.
HTTP_ERROR_TYPES = {401: "AuthenticationRequired", 403: "AccessDenied", 404: "NotFound"}

# Status of each error class, most specific first.
STATUS: tuple[tuple[type[AssocmemError], int], ...] = (
    (AuthenticationRequired, 401),
    (AccessDenied, 403),
    (NotFound, 404),
    (EmbedderMismatch, 409),
    (InvalidInput, 422),
    (StoreBusy, 503),
    (StoreUnavailable, 503),
    (DependencyMissing, 503),
    (EmbedderError, 503),
    (AssocmemError, 500),
)


def create_app(
    db: str,
    *,
    keys: KeyRing | None = None,
    default_agent: str = "default",
    embedder: Embedder | str | None = None,
    readers: int = READERS,
    vault_roots: Sequence[str] = (),
    strict_corroboration: bool = False,
    receipts: bool = False,
    receipt_key: str | None = None,
    hosts: Hosts | None = None,
    body_timeout: float = BODY_TIMEOUT,
) -> FastAPI:
    """The application serving the store ``db``.

    Parameters:
        db: the store path.
        keys: the accepted API keys; None serves without authentication, every caller
            speaking as ``default_agent`` (the CLI allows that on loopback only).
        embedder: an `Embedder` or a registered embedder name to attach (its vectors are
            shared by all callers).
        readers: reader connections in the pool.
        vault_roots: the only folders a client may index as a vault (none: vault_index
            is refused), so no client reads or writes other server folders.
        strict_corroboration, receipts, receipt_key: as for `Memory` (the key as hex):
            every caller's origins count as verified keys; every write appends a receipt.
        hosts: the names a request's Host and Origin may give (`gate.Hosts`); None
            checks neither (an application embedded behind checks of its own).
        body_timeout: seconds a request's whole body has to arrive in.
    """
    state: dict[str, MemoryPool] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = MemoryPool(
            db,
            readers=readers,
            embedder=embedder,
            vault_roots=vault_roots,
            strict_corroboration=strict_corroboration,
            receipts=receipts,
            receipt_key=receipt_key,
        )
        state["pool"] = app.state.pool = pool
        yield
        pool.close()

    app = FastAPI(
        title="assocmem",
        version=__version__,
        description="Long-term associative memory for AI agents, over HTTP.",
        lifespan=lifespan,
        # -- the dashboard and offline docs (static.py): /docs is built there on the
        # vendored Swagger UI; ReDoc would be a second bundle to ship.
        docs_url=None,
        redoc_url=None,
    )
    static.mount(app)
    ops = operations()
    guarded = [f"/v1/{name}" for name in ops]
    # -- hosts, key and size are checked before a body is read (gate.py)
    app.add_middleware(Gate, hosts=hosts, keys=keys, guarded=guarded, body_timeout=body_timeout)
    app.add_middleware(logs.RequestLog)  # outermost of ours: it sees every answer
    _errors(app)

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["service"])
    def readyz() -> dict[str, Any]:
        """Readiness: the store answers a query."""
        state["pool"].check()
        return {"status": "ready"}

    for op in ops.values():
        _route(app, op, state, keys, default_agent)
    return app


def _errors(app: FastAPI) -> None:
    @app.exception_handler(AssocmemError)
    async def assocmem_error(request: Request, exc: AssocmemError) -> JSONResponse:
        status = next(code for cls, code in STATUS if isinstance(exc, cls))
        body = error_body(type(exc).__name__, exc.message, getattr(exc, "field", None))
        return JSONResponse(body, status_code=status)

    @app.exception_handler(HTTPException)
    async def framework_error(request: Request, exc: HTTPException) -> JSONResponse:
        # Raised by the router itself (an unknown route, a wrong method): the same
        # envelope as ours, keeping its status and headers (405's Allow).
        error_type = HTTP_ERROR_TYPES.get(exc.status_code, "InvalidInput")
        if exc.status_code >= 500:
            error_type = "InternalError"
        message = f"{request.method} {request.url.path}: {exc.detail}"
        return JSONResponse(
            error_body(error_type, message), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        location = [str(p) for p in first.get("loc", ()) if p != "body"]
        message = f"{'.'.join(location) or 'body'}: {first.get('msg', 'invalid request')}"
        return JSONResponse(
            error_body("InvalidInput", message, location[0] if location else None),
            status_code=422,
        )

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        logs.failed(request.method, request.url.path, exc)
        return JSONResponse(
            error_body("InternalError", "the server failed; nothing was reported to the caller"),
            status_code=500,
        )


def _route(
    app: FastAPI,
    op: Operation,
    state: dict[str, MemoryPool],
    keys: KeyRing | None,
    default_agent: str,
) -> None:
    body_model = _body_model(op)

    def handler(request: Request, body: body_model) -> Any:  # type: ignore[valid-type]
        arguments = body.model_dump(exclude_unset=True)  # type: ignore[attr-defined]
        scope, operator = _caller_scope(request, arguments, keys, default_agent)
        request.scope.setdefault("state", {})[logs.AGENT] = scope.agent_id  # for the log
        pool = state["pool"]
        try:
            with (
                pool.writer(scope, operator=operator)
                if op.writes
                else pool.reader(scope, operator=operator)
            ) as memory:
                return op.call(memory, arguments)
        except ValidationError as exc:  # a lazily validated argument failed inside the call
            raise InvalidInput(f"invalid argument: {exc.errors()[0].get('msg', exc)}") from exc

    handler.__name__ = op.name
    # Annotations are strings under `from __future__ import annotations`; FastAPI
    # must see the model class itself.
    handler.__annotations__ = {"request": Request, "body": body_model, "return": op.result_type}
    app.add_api_route(
        f"/v1/{op.name}",
        handler,
        methods=["POST"],
        response_model=op.result_type,
        summary=op.summary,
        description=op.doc,
        tags=["memory"],
    )


def _caller_scope(
    request: Request, arguments: dict[str, Any], keys: KeyRing | None, default_agent: str
) -> tuple[Scope, bool]:
    """The scope a call runs in (agent from the key, or one its grants allow named in
    the body; project/channel/role from the body) and whether it may act as the
    operator: always without keys (the loopback dev server), else only with a key
    holding `OPERATOR_ROLE`. The key is checked once."""
    asked_agent = arguments.pop("agent_id", None)
    project, channel = arguments.pop("project_id", ""), arguments.pop("channel", "")
    role = arguments.pop("role", None)
    if keys is None:
        return MemoryPool.scope(asked_agent or default_agent, project, channel, role), True
    # The gate identified the key before the body was read; a path it does not
    # guard (a prefix a proxy adds) is identified here.
    entry = request.scope.get("state", {}).get(KEY_ENTRY) or keys.identify(
        bearer(request.headers.get("authorization"))
    )
    agent = entry.agent_id if asked_agent is None else asked_agent
    if not isinstance(agent, str) or not entry.speaks_for(agent):
        raise AccessDenied("this key may not act for that agent_id")
    scope = MemoryPool.scope(agent, project, channel, _role(entry, role))
    return scope, OPERATOR_ROLE in entry.roles


# A key speaks as the operator (declares as it, removes what it declared) only with this role.
OPERATOR_ROLE = "operator"


def _role(entry: KeyEntry, asked: Any) -> str | None:
    if asked is None:
        return entry.roles[0] if entry.roles else None
    if asked not in entry.roles:
        raise AccessDenied("this key may not read in that role")
    return str(asked)


def _body_model(op: Operation) -> type:
    """A request model from the operation's parameters, plus the scope fields."""
    fields: dict[str, Any] = {
        "agent_id": (str | None, None),
        "project_id": (str, ""),
        "channel": (str, ""),
        "role": (str | None, None),
    }
    for parameter in op.parameters:
        # A ``*args`` parameter is a required list, as it always was on this route.
        default = ... if parameter.required or parameter.variadic else parameter.default
        fields[parameter.name] = (
            parameter.json_type,
            Field(default, description=parameter.doc),
        )
    model: type = create_model(
        "".join(part.title() for part in op.name.split("_")) + "Request",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **fields,
    )
    return model
