"""How `Client` and `AsyncClient` reach a server: one kept-alive connection reused across
calls, and a failed call tried again only where that cannot apply it twice.

A scripted HTTP/1.1 server on 127.0.0.1 (the standard library's) answers each request
as its script says, counting requests and connections; the clients' own behaviour
against `assocmem serve` is in test_client.py.
"""

from __future__ import annotations

import inspect
import json
import threading
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")
anyio = pytest.importorskip("anyio")

from assocmem import (  # noqa: E402
    AsyncClient,
    Client,
    DependencyMissing,
    InvalidInput,
    Memory,
    StoreBusy,
    StoreUnavailable,
)
from assocmem.adapters.client import wire  # noqa: E402
from assocmem.surface import operations  # noqa: E402

OK = (200, {"memories": 0}, {})
PLAIN_503 = (503, "Service Unavailable", {})  # uvicorn's concurrency bound
BUSY = (503, {"error": {"type": "StoreBusy", "message": "locked"}}, {})
DROP = "drop"  # read the request, then close without a byte


class Scripted:
    """What a scripted server saw: requests (operation names) and connections opened."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[str] = []
        self.connections = 0
        self.lock = threading.Lock()


@contextmanager
def scripted_server(script: list[Any]) -> Iterator[tuple[str, Scripted]]:
    """A server answering its n-th request with ``script[n]`` (the last one repeats)."""
    seen = Scripted(script)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with seen.lock:
                seen.connections += 1

        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            self.rfile.read(int(self.headers["content-length"]))
            with seen.lock:
                seen.requests.append(self.path.rsplit("/", 1)[-1])
                step = seen.script.pop(0) if len(seen.script) > 1 else seen.script[0]
            if step == DROP:
                self.close_connection = True
                return
            status, body, extra = step
            data = (json.dumps(body) if not isinstance(body, str) else body).encode()
            self.send_response(status)
            self.send_header("content-length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_calls_reuse_one_connection() -> None:
    with scripted_server([OK]) as (url, seen), Client(url) as client:
        for _ in range(20):
            assert client.call("stats", {}) == {"memories": 0}
    assert seen.requests == ["stats"] * 20 and seen.connections == 1


def test_concurrent_async_calls_share_a_bounded_pool() -> None:
    async def main(url: str) -> list[Any]:
        async with AsyncClient(url) as client:
            results = []
            for _ in range(3):  # rounds: connections opened in one are kept for the next
                async with anyio.create_task_group() as group:
                    for _ in range(8):
                        group.start_soon(lambda: _append(results, client.call("stats", {})))
            return results

    with scripted_server([OK]) as (url, seen):
        results = anyio.run(main, url)
    assert results == [{"memories": 0}] * 24
    assert seen.connections <= 8  # a round's calls at most, never one per call


async def _append(results: list[Any], call: typing.Awaitable[Any]) -> None:
    results.append(await call)


@pytest.mark.parametrize("refusal", [PLAIN_503, BUSY], ids=["concurrency-bound", "busy"])
def test_a_call_refused_unapplied_is_tried_again_even_a_write(refusal: Any) -> None:
    with scripted_server([refusal, refusal, OK]) as (url, seen), Client(url) as client:
        assert client.call("write", {"text": "x"}) == {"memories": 0}
    assert seen.requests == ["write"] * 3


def test_tries_are_bounded_and_the_last_refusal_is_raised() -> None:
    with scripted_server([BUSY]) as (url, seen), Client(url, retries=1) as client:
        with pytest.raises(StoreBusy, match="locked"):
            client.call("write", {"text": "x"})
    assert len(seen.requests) == 2


def test_a_refusal_that_is_not_transient_is_raised_at_once() -> None:
    missing = (503, {"error": {"type": "DependencyMissing", "message": "no numpy"}}, {})
    with scripted_server([missing]) as (url, seen), Client(url) as client:
        with pytest.raises(DependencyMissing, match="no numpy"):
            client.call("read", {"query": "x"})
    assert len(seen.requests) == 1


def test_retry_after_is_waited_or_when_too_long_not_at_all() -> None:
    soon = (503, "busy", {"retry-after": "0"})
    later = (503, "busy", {"retry-after": str(wire.MOST_WAIT_S + 1)})
    with scripted_server([soon, OK]) as (url, seen), Client(url) as client:
        assert client.call("write", {"text": "x"}) == {"memories": 0}
    assert len(seen.requests) == 2
    with scripted_server([later, OK]) as (url, seen), Client(url) as client:
        with pytest.raises(Exception, match="503"):
            client.call("write", {"text": "x"})
    assert len(seen.requests) == 1


def test_a_dropped_answer_is_tried_again_only_for_an_idempotent_operation() -> None:
    assert operations()["read"].idempotent and not operations()["write"].idempotent
    with scripted_server([DROP, OK]) as (url, seen), Client(url) as client:
        assert client.call("read", {"query": "x"}) == {"memories": 0}
    assert seen.requests == ["read", "read"]
    with scripted_server([DROP, OK]) as (url, seen), Client(url) as client:
        with pytest.raises(StoreUnavailable, match="may or may not have applied"):
            client.call("write", {"text": "x"})
    assert seen.requests == ["write"]


def test_the_async_client_follows_the_same_rules() -> None:
    async def call(url: str, name: str) -> Any:
        async with AsyncClient(url) as client:
            return await client.call(name, {})

    with scripted_server([BUSY, DROP, OK]) as (url, seen):
        assert anyio.run(call, url, "read") == {"memories": 0}
    assert seen.requests == ["read"] * 3
    with scripted_server([DROP, OK]) as (url, seen):
        with pytest.raises(StoreUnavailable, match="may or may not have applied"):
            anyio.run(call, url, "write")
    assert seen.requests == ["write"]


def test_an_unreachable_server_is_tried_then_a_store_error() -> None:
    with pytest.raises(StoreUnavailable, match="cannot reach"):
        Client("http://127.0.0.1:9", retries=1, timeout=2).call("write", {"text": "x"})


def test_retries_are_checked() -> None:
    for bad in (-1, 11, 1.5, True):
        with pytest.raises(InvalidInput) as caught:
            Client("http://127.0.0.1:9", retries=bad)  # type: ignore[arg-type]
        assert caught.value.field == "retries"


def test_kept_connections_are_dropped_before_the_server_drops_them() -> None:
    pytest.importorskip("fastapi")
    from assocmem.adapters.server import limits

    assert wire.KEEP_ALIVE_S < limits.KEEP_ALIVE_TIMEOUT


def test_the_async_client_has_memorys_signatures_as_coroutines() -> None:
    fix = '`python -c "from assocmem.adapters import client; client.regenerate()"`'
    for name in operations():
        ours, theirs = getattr(AsyncClient, name), getattr(Memory, name)
        stale = f"AsyncClient.{name} differs from Memory.{name}: run {fix}"
        assert inspect.iscoroutinefunction(ours), stale
        assert inspect.signature(ours) == inspect.signature(theirs), stale
        assert typing.get_type_hints(ours) == typing.get_type_hints(theirs), stale
        assert inspect.getdoc(ours) == inspect.getdoc(theirs), stale


def test_the_async_client_serves_the_memory(tmp_path: Path) -> None:
    """Against `assocmem serve`: the same answers as `Client`, errors as the same class."""
    pytest.importorskip("fastapi")
    from assocmem import UnknownMemory
    from tests.adapters.server_kit import running_server

    async def session(url: str) -> tuple[Any, Any, list[Any]]:
        async with AsyncClient(url, agent_id="ops") as mem:
            written = await mem.write("Backoff fixed the flaky call.", concepts=["retry"])
            read = await mem.read(concepts=["retry"])
            with pytest.raises(UnknownMemory):
                await mem.get(["nope"])
            return written, read, list(await mem.export())

    with running_server(str(tmp_path / "a.db")) as url:
        written, read, exported = anyio.run(session, url)
        with Client(url, agent_id="ops") as mem:
            again = mem.read(concepts=["retry"]).items  # a read advances the access clock
            assert [(i.id, i.source, i.why) for i in again] == [
                (i.id, i.source, i.why) for i in read.items
            ]
            assert [r.id for r in mem.export()] == [r.id for r in exported] == [written.id]
