"""What a request must pass before the application reads its body.

In order, before a byte of the body is read: its Host names this server and its Origin,
when it sends one, is this server's own (`Hosts`: a web page whose name was pointed at
127.0.0.1 by DNS rebinding would otherwise read and write a keyless store as its own
origin); an operation route is called with a valid key; a declared length fits
`MAX_BODY_BYTES`. The body is then read whole within the body timeout, its size checked
as it streams (a chunked body declares none), and handed on.

Invariant: a refusal is answered at once, complete and with ``connection: close``, and
the body the client may still be sending is then read and dropped, up to `DRAIN_BYTES`
and within the body timeout, before the connection closes: clients that write their
whole body before reading (urllib, http.client, requests) get a reset instead of the
answer when the server closes with bytes unread. Nothing of a refused body is parsed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers

from assocmem.adapters.server.keys import KeyRing
from assocmem.adapters.server.limits import BODY_TIMEOUT, DRAIN_BYTES, MAX_BODY_BYTES
from assocmem.errors import AuthenticationRequired

# The names a loopback server is reached by.
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}
# Where the gate leaves the key entry it identified, in the request's state.
KEY_ENTRY = "key_entry"


def error_body(error_type: str, message: str, field_name: str | None = None) -> dict[str, Any]:
    """The one shape every error response has."""
    return {"error": {"type": error_type, "message": message, "field": field_name}}


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or None."""
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _address(netloc: str, default_port: int | None = None) -> tuple[str, int | None] | None:
    """``host[:port]`` as a lowercase name (IPv6 unbracketed) and its port (else
    ``default_port``), or None when it is not one."""
    if not netloc or any(c in netloc for c in "@/?#\\ "):
        return None
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    return (parts.hostname, default_port if port is None else port) if parts.hostname else None


@dataclass(frozen=True)
class Hosts:
    """The names a request's Host and Origin may give for this server.

    Parameters:
        own: names this server answers to on its own port only, besides the loopback
            names and the address a request arrived at (the CLI adds ``--host``); a
            Host giving one of them without a port is taken to mean the served one,
            as non-browser clients write it (a browser writes the port unless it is 80).
        allowed: names (``name`` or ``name:port``) answered as given; one without a
            port on any port, since behind a proxy the public port is not the served one.
        check_host: False accepts any Host (a keyed server with no allowed names: its
            keys guard it, as a rebound page has none); an Origin must then name the
            request's own Host.
    """

    own: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    check_host: bool = True

    def refusal(self, scope: dict[str, Any], headers: Headers) -> tuple[str, str] | None:
        """The field (``host`` or ``origin``) and message refusing the request, or None."""
        host = headers.get("host", "")
        if self.check_host and not self._is_own(_address(host), scope):
            return "host", f"this server does not answer to the host {host[:100]!r}"
        origin = headers.get("origin")
        if origin is not None and not self._is_own_origin(origin, host, scope):
            return "origin", f"requests from the origin {origin[:100]!r} are refused"
        return None

    def _is_own(self, address: tuple[str, int | None] | None, scope: dict[str, Any]) -> bool:
        if address is None:
            return False
        name, port = address
        for entry in self.allowed:
            given = _address(entry)
            if given is not None and given[0] == name and given[1] in (None, port):
                return True
        served = scope.get("server") or (None, None)
        own = {*LOOPBACK, *(n.lower().strip("[]") for n in self.own), served[0]}
        return name in own and (port is None or served[1] is None or port == served[1])

    def _is_own_origin(self, origin: str, host: str, scope: dict[str, Any]) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in DEFAULT_PORTS or parts.path or parts.query:
            return False
        address = _address(parts.netloc, DEFAULT_PORTS[parts.scheme])
        if self.check_host:
            return self._is_own(address, scope)
        return address is not None and address == _address(host, DEFAULT_PORTS[parts.scheme])


class _Refused(Exception):
    """A request answered before its body reached the application; ``drain``: the rest
    of its body may still be on its way (``seen`` bytes of it were read)."""

    def __init__(self, status: int, body: dict[str, Any], *, drain: bool, seen: int = 0) -> None:
        super().__init__(status)
        self.status, self.body, self.drain, self.seen = status, body, drain, seen


class Gate:
    """ASGI middleware passing a request on only once it has cleared the checks in the
    module's order; its body is handed on whole, in one message.

    Parameters:
        hosts: the names to answer to; None checks neither Host nor Origin (an
            application embedded behind checks of its own, a test client).
        keys: the keys the ``guarded`` routes need; None needs none.
        guarded: the paths whose POST needs a key (the operation routes).
        body_timeout: seconds the whole body has to arrive in.
    """

    def __init__(
        self,
        app: Any,
        *,
        hosts: Hosts | None = None,
        keys: KeyRing | None = None,
        guarded: Collection[str] = (),
        body_timeout: float = BODY_TIMEOUT,
    ) -> None:
        self.app, self.hosts, self.keys = app, hosts, keys
        self.guarded, self.body_timeout = frozenset(guarded), body_timeout

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        deadline = asyncio.get_running_loop().time() + self.body_timeout
        try:
            self._check_head(scope, headers)
            message = await self._body(receive, deadline)
        except _Refused as refused:
            await _answer(refused, headers, receive, send, deadline)
            return
        replayed = [message]

        async def replay() -> dict[str, Any]:
            return replayed.pop() if replayed else await receive()

        await self.app(scope, replay, send)

    def _check_head(self, scope: dict[str, Any], headers: Headers) -> None:
        refusal = self.hosts.refusal(scope, headers) if self.hosts else None
        if refusal is not None:
            field, message = refusal
            raise _Refused(403, error_body("AccessDenied", message, field), drain=True)
        if self.keys is not None and scope["method"] == "POST" and scope["path"] in self.guarded:
            try:
                entry = self.keys.identify(bearer(headers.get("authorization")))
            except AuthenticationRequired as exc:
                body = error_body("AuthenticationRequired", exc.message)
                raise _Refused(401, body, drain=True) from exc
            scope.setdefault("state", {})[KEY_ENTRY] = entry  # the route reads it, once checked
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise _Refused(413, _too_large(), drain=True)

    async def _body(self, receive: Any, deadline: float) -> dict[str, Any]:
        """The whole body as one message (or the disconnect that cut it short)."""
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout_at(deadline):
                while True:
                    message: dict[str, Any] = await receive()
                    if message["type"] != "http.request":
                        return message  # the client went away; the app sees that
                    chunks.append(message.get("body", b""))
                    seen += len(chunks[-1])
                    if seen > MAX_BODY_BYTES:
                        more = bool(message.get("more_body"))
                        raise _Refused(413, _too_large(), drain=more, seen=seen)
                    if not message.get("more_body"):
                        return {"type": "http.request", "body": b"".join(chunks)}
        except TimeoutError as exc:
            body = error_body(
                "InvalidInput", f"the request body did not arrive within {self.body_timeout:g}s",
                "body",
            )  # fmt: skip
            raise _Refused(408, body, drain=False) from exc


def _too_large() -> dict[str, Any]:
    return error_body("InvalidInput", f"request body is larger than {MAX_BODY_BYTES} bytes")


async def _answer(
    refused: _Refused, headers: Headers, receive: Any, send: Any, deadline: float
) -> None:
    """Send the whole refusal at once, then drop what the client still sends of its
    body (see the module's invariant) before the connection closes."""
    content = json.dumps(refused.body).encode()
    declared = headers.get("content-length", "")
    # A client that waits for 100-continue sends no body once it reads a final answer;
    # a body declared past `DRAIN_BYTES` would be cut off anyway.
    drain = refused.drain and headers.get("expect", "").lower() != "100-continue"
    drain = drain and not (declared.isdigit() and int(declared) > DRAIN_BYTES)
    await send({"type": "http.response.start", "status": refused.status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(content)).encode()),
        (b"connection", b"close")]})  # fmt: skip
    await send({"type": "http.response.body", "body": content, "more_body": drain})
    if not drain:
        return
    seen = refused.seen
    try:
        async with asyncio.timeout_at(deadline):
            while seen <= DRAIN_BYTES:
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
                seen += len(message.get("body", b""))
    except TimeoutError:
        pass  # a client still sending at the deadline is cut off
    await send({"type": "http.response.body", "body": b"", "more_body": False})
