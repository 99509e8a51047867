"""What `Client` and `AsyncClient` share: the request a call sends, the error an answer
raises, the typed value rebuilt from the JSON, and when a failed call is tried again.

Invariants: a call is retried only where trying it again cannot apply it twice: the
connection never opened, the server refused it before running it (its concurrency
bound, or the store locked past its busy timeout, which rolls the call back), or the
operation is idempotent (`surface.Operation.idempotent`). Any other failure after the
request went out is `StoreUnavailable` saying the call may or may not have applied.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import random
import typing
from collections.abc import Callable, Iterator
from datetime import datetime
from types import UnionType
from typing import TYPE_CHECKING, Any

from assocmem import errors
from assocmem.errors import AssocmemError, InvalidInput, StoreUnavailable
from assocmem.optional import require_httpx
from assocmem.surface import operations

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT_S = 60.0
# Tries after the first; the waits between them double from the first.
DEFAULT_RETRIES = 2
FIRST_WAIT_S = 0.1
# The longest wait a server's Retry-After may ask for before the call gives up instead.
MOST_WAIT_S = 5.0
# The server's request body limit (``server.api.MAX_BODY_BYTES``; a test keeps them
# equal). A larger body is refused here: the server answers 413 as soon as it sees
# the declared length and closes the connection, so a sender still writing the body
# would see only a broken pipe.
MAX_BODY_BYTES = 8 * 1024 * 1024
# How long an idle pooled connection is reused: below the server's keep-alive timeout
# (``server.limits.KEEP_ALIVE_TIMEOUT``; a test keeps it below), so a call is never sent
# on a connection the server is closing.
KEEP_ALIVE_S = 4.0
# Errors a server answers with 503 that mean the call was refused and rolled back.
REFUSED_UNAPPLIED = frozenset({"StoreBusy"})


def request_body(name: str, scope: dict[str, Any], arguments: dict[str, Any]) -> bytes:
    """The JSON body of a call, or `InvalidInput` where it is over the server's limit."""
    body = json.dumps({**scope, **arguments}, default=_json_default).encode()
    if len(body) > MAX_BODY_BYTES:
        raise InvalidInput(
            f"the {name} request is {len(body)} bytes, over the server's limit of"
            f" {MAX_BODY_BYTES} bytes (8 MiB); send it in smaller calls"
        )
    return body


def headers(api_key: str | None) -> dict[str, str]:
    return {
        "content-type": "application/json",
        **({"authorization": f"Bearer {api_key}"} if api_key else {}),
    }


def given_arguments(method: Callable[..., Any], given: dict[str, Any]) -> dict[str, Any]:
    """A method's ``locals()`` less ``self`` and the arguments still at their default
    (the server applies the same defaults)."""
    parameters = _shape(method)[0].parameters
    return {
        key: value for key, value in given.items()
        if key != "self" and value is not parameters[key].default
    }  # fmt: skip


def result(method: Callable[..., Any], data: Any) -> Any:
    """The JSON a server answered, rebuilt as ``method``'s return type."""
    returns = _shape(method)[1]
    value = from_plain(returns, data)
    return iter(value) if typing.get_origin(returns) is Iterator else value


def error_from(status: int, body: bytes) -> AssocmemError:
    """The `AssocmemError` a server's error answer names, as the same class."""
    try:
        detail = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return AssocmemError(f"server answered {status} without an error body")
    cls = getattr(errors, str(detail.get("type")), None)
    message = str(detail.get("message", ""))
    if isinstance(cls, type) and issubclass(cls, AssocmemError):
        if issubclass(cls, InvalidInput):
            return cls(message, field=detail.get("field"))
        return cls(message)
    return AssocmemError(f"{detail.get('type')}: {message}")


class Remote:
    """What both clients hold: the server, the scope each call sends, how often a call
    is retried, and one httpx client (``HTTP`` names its class) keeping connections alive.

    Parameters:
        url: the server's base URL, such as ``http://127.0.0.1:8765``.
        api_key: the key that names the agent (see ``assocmem keys add``).
        project_id, channel: the scope inside the key's agent.
        role: the role to read in (one of the key's roles; default its first).
        agent_id: the agent to act as: on a server without keys, or one a service
            key was granted (``assocmem keys add --agents``); by default the key's own.
        timeout: seconds to wait for each response.
        retries: how many more times a call is tried where trying again cannot apply
            it twice: the server could not be reached, refused the call unapplied
            (busy), or the operation is idempotent; waits double from 0.1 s.
    """

    HTTP = "Client"

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        project_id: str = "",
        channel: str = "",
        role: str | None = None,
        agent_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise InvalidInput("url must start with http:// or https://", field="url")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise InvalidInput(f"retries must be an integer from 0 to 10, not {retries!r}",
                               field="retries")  # fmt: skip
        self.url = url.rstrip("/")
        scope = {"project_id": project_id, "channel": channel, "role": role, "agent_id": agent_id}
        self._scope = {k: v for k, v in scope.items() if v not in (None, "")}
        self._retries = retries
        self._httpx = require_httpx()
        self._http = getattr(self._httpx, self.HTTP)(
            base_url=self.url,
            headers=headers(api_key),
            timeout=timeout,
            limits=self._httpx.Limits(keepalive_expiry=KEEP_ALIVE_S),
        )


class Retries:
    """How many tries a call has left, and how long to wait before the next (one per call)."""

    def __init__(self, name: str, retries: int) -> None:
        self.idempotent = name in operations() and operations()[name].idempotent
        self._left = retries
        self._wait = FIRST_WAIT_S

    def next_wait(self, asked: float | None = None) -> float | None:
        """Seconds before the next try (``asked``: the server's Retry-After), or None
        when no try is left or the server asks for longer than the call will wait."""
        if not self._left or (asked is not None and asked > MOST_WAIT_S):
            return None
        self._left -= 1
        wait, self._wait = self._wait, self._wait * 2
        # Jitter keeps many clients refused together from coming back together.
        return asked if asked is not None else wait * random.uniform(0.5, 1.0)


def wait_after_answer(retries: Retries, response: httpx.Response) -> float | None:
    """None for a successful answer; the seconds before trying again for a refusal
    that left the call unapplied; otherwise the server's error, raised."""
    if response.is_success:
        return None
    if response.status_code == 503:
        try:
            kind = json.loads(response.content)["error"]["type"]
        except (ValueError, KeyError, TypeError):
            kind = None  # the server's own concurrency bound answers plain text
        if kind is None or kind in REFUSED_UNAPPLIED:
            wait = retries.next_wait(_seconds(response.headers.get("retry-after")))
            if wait is not None:
                return wait
    raise error_from(response.status_code, response.content)


def wait_after_failure(retries: Retries, exc: Exception, url: str, name: str) -> float:
    """The seconds before trying again after the connection failed, or a typed
    `StoreUnavailable` raised: a call that went out is tried again only if idempotent."""
    import httpx

    sent = not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
    wait = None if sent and not retries.idempotent else retries.next_wait()
    if wait is not None:
        return wait
    if not sent:
        raise StoreUnavailable(f"cannot reach {url}: {exc}") from exc
    raise StoreUnavailable(
        f"{url} gave no whole answer to {name} ({exc!r}); it may or may not have applied"
    ) from exc


def decoded(response: httpx.Response) -> Any:
    return json.loads(response.content)


def _seconds(retry_after: str | None) -> float | None:
    try:
        return max(0.0, float(retry_after)) if retry_after else None
    except ValueError:
        return None  # an HTTP date: back off as for no header


@functools.cache
def _shape(method: Callable[..., Any]) -> tuple[inspect.Signature, Any]:
    """A method's signature and resolved return type (resolving is slow; both are fixed)."""
    return inspect.signature(method), typing.get_type_hints(method).get("return", Any)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot send {type(value).__name__} as JSON")


@functools.cache
def _type_hints(kind: type) -> dict[str, Any]:
    """A dataclass's resolved field types; resolving them is slow, and the set is fixed."""
    return typing.get_type_hints(kind)


def from_plain(kind: Any, data: Any) -> Any:
    """Rebuild a value of type ``kind`` (a frozen dataclass, a container of them, or a
    plain type) from the JSON the server sent."""
    if data is None:
        return None
    origin = typing.get_origin(kind)
    arguments = typing.get_args(kind)
    if origin in (typing.Union, UnionType):
        options = [a for a in arguments if a is not type(None)]
        return from_plain(options[0], data) if len(options) == 1 else data
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = _type_hints(kind)
        return kind(**{
            f.name: from_plain(hints[f.name], data[f.name])
            for f in dataclasses.fields(kind) if f.name in data
        })  # fmt: skip
    if origin is tuple:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(from_plain(arguments[0], v) for v in data)
        return tuple(from_plain(a, v) for a, v in zip(arguments, data, strict=False))
    if origin in (list, Iterator, typing.Iterator) or (
        origin is not None and origin.__name__ in ("Iterator", "Sequence", "list")
    ):
        return [from_plain(arguments[0], v) for v in data] if arguments else list(data)
    if origin is dict:
        return {k: from_plain(arguments[1], v) for k, v in data.items()}
    return data
