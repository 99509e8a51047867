"""`Client`: the `Memory` API over HTTP, same methods, arguments and result types.

Invariants: every method of `surface.REMOTE_METHODS` exists here with `Memory`'s
signature and docstring, sends only the arguments the caller gave (the server
applies the same defaults), and returns the same frozen types `Memory` returns;
a server error is raised as the same `AssocmemError` class. Standard library only.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from types import TracebackType, UnionType
from typing import Any

from assocmem import errors
from assocmem.errors import AssocmemError, InvalidInput, StoreUnavailable
from assocmem.memory import Memory
from assocmem.surface import REMOTE_METHODS

DEFAULT_TIMEOUT_S = 60.0


class Client:
    """A remote memory served by ``assocmem serve``.

    Parameters:
        url: the server's base URL, such as ``http://127.0.0.1:8765``.
        api_key: the key that names the agent (see ``assocmem keys add``).
        project_id, channel: the scope inside the key's agent.
        role: the role to read in (one of the key's roles; default its first).
        agent_id: only for a server running without keys.
        timeout: seconds to wait for each response.
    """

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
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise InvalidInput("url must start with http:// or https://", field="url")
        self.url = url.rstrip("/")
        self._key = api_key
        self._timeout = timeout
        scope = {"project_id": project_id, "channel": channel, "role": role, "agent_id": agent_id}
        self._scope = {k: v for k, v in scope.items() if v not in (None, "")}

    def close(self) -> None:
        """Nothing to release (each call is its own request); kept for parity with Memory."""

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """POST one method call; the decoded JSON result, or the server's error raised."""
        body = json.dumps({**self._scope, **arguments}, default=_json_default).encode()
        request = urllib.request.Request(
            f"{self.url}/v1/{name}", data=body, method="POST",
            headers={"content-type": "application/json",
                     **({"authorization": f"Bearer {self._key}"} if self._key else {})},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise _error_from(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            raise StoreUnavailable(f"cannot reach {self.url}: {exc}") from exc


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot send {type(value).__name__} as JSON")


def _error_from(exc: urllib.error.HTTPError) -> AssocmemError:
    try:
        detail = json.loads(exc.read())["error"]
    except (ValueError, KeyError, TypeError):
        return AssocmemError(f"server answered {exc.code} without an error body")
    cls = getattr(errors, str(detail.get("type")), None)
    message = str(detail.get("message", ""))
    if isinstance(cls, type) and issubclass(cls, AssocmemError):
        if issubclass(cls, InvalidInput):
            return cls(message, field=detail.get("field"))
        return cls(message)
    return AssocmemError(f"{detail.get('type')}: {message}")


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


def _remote(name: str) -> Callable[..., Any]:
    method = getattr(Memory, name)
    signature = inspect.signature(method)
    returns = typing.get_type_hints(method).get("return", Any)

    @functools.wraps(method)
    def call(self: Client, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        arguments = dict(bound.arguments)
        arguments.pop("self")
        result = from_plain(returns, self.call(name, arguments))
        return iter(result) if typing.get_origin(returns) is Iterator else result

    return call


for _name in REMOTE_METHODS:
    setattr(Client, _name, _remote(_name))
