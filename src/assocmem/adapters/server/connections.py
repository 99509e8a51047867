"""The connections `serve` holds: uvicorn, run with its HTTP/1.1 protocol (h11) bounded.

uvicorn closes an idle connection only once it has answered a request on it, and no
timer covers a request head sent a byte at a time, so a client that connects and
waits, or trickles, holds a file descriptor for ever; enough of them exhaust the
process's open-file limit and lock every caller out. Here:

- a connection with no request in flight is closed after the keep-alive timeout without
  a byte, from the moment it opens (uvicorn arms its own timer only after an answer);
- its whole request head must arrive within the header timeout of the connection
  opening or of its last answer, however the bytes are spaced;
- at most ``max_connections`` are served at once (uvicorn's ``limit_concurrency``, a 503
  beyond it), held below the open-file limit, which is first raised to its hard
  ceiling; a connection arriving at the bound sheds the one that has waited longest for
  a request head, so idle clients cannot keep working ones out.

Invariant: no connection waits for a request head past the header timeout, and those
waiting are shed oldest first. A body that trickles is the gate's (`gate.Gate`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import resource
import weakref
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from assocmem.adapters.server import logs
from assocmem.adapters.server.limits import HEADER_TIMEOUT, KEEP_ALIVE_TIMEOUT, MAX_CONNECTIONS

# Connections waiting to be accepted, and the most accepted in one go before any can be
# shed (asyncio's default is 100, uvicorn's 2048): a burst of accepts stays well below the
# open-file limit, and a loop iteration drains it long before a client retries.
BACKLOG = 128
# Connections take at most 1/this of the open-file limit: the rest holds the store's
# files and a burst of accepts made before any is shed.
FILES_PER_CONNECTION = 2
# The soft limit asked for where the hard one is unlimited (macOS's OPEN_MAX).
UNLIMITED_FILES = 10240

log = logging.getLogger("assocmem.server")


# One server's connections waiting for a request head, oldest first.
_WAITING: weakref.WeakKeyDictionary[ServerState, dict[BoundedH11Protocol, None]] = (
    weakref.WeakKeyDictionary()
)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request head, the keep-alive timer
    armed from the start, and the connection waiting longest shed at the bound."""

    header_timeout: float = HEADER_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None
    _awaited: object = None  # the request cycle in force when the deadline was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting = _WAITING.setdefault(self.server_state, {})
        self._shed_the_longest_waiting()
        self._await_head()
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._deadline is not None and self.cycle is not self._awaited:
            self._head_arrived()  # a new request began: its head is whole

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # (uvicorn may have begun a pipelined request already: its head is whole)
        if not self.transport.is_closing() and self.cycle.response_complete:
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._head_arrived()
        self._awaited = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout, self._close_waiting)
        self._waiting[self] = None

    def _head_arrived(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._waiting.pop(self, None)

    def _close_waiting(self) -> None:
        self._head_arrived()
        if not self.transport.is_closing():
            # Out of the server's count at once, not when the loop later reports it lost:
            # uvicorn answers 503 while the count is at the bound, so a connection shed
            # to make room must not still fill it (uvicorn's own removal is a discard).
            self.connections.discard(self)
            self.transport.close()

    def _shed_the_longest_waiting(self) -> None:
        limit = self.limit_concurrency
        if limit is None:
            return
        # One slot stays free: uvicorn answers 503 once the open connections reach it.
        excess = len(self.connections) - limit + 1
        for connection in list(itertools.islice(self._waiting, max(excess, 0))):
            connection._close_waiting()


def protocol(header_timeout: float = HEADER_TIMEOUT) -> type[BoundedH11Protocol]:
    """The protocol class uvicorn builds each connection with, for this header timeout."""
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"header_timeout": header_timeout})


def raise_file_limit() -> int:
    """Raise this process's soft open-file limit to its hard one; the soft limit then
    in force (unchanged where the system refuses)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_FILES if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY:
        return wanted
    if soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            return soft
        return wanted
    return soft


def connection_bound(requested: int, files: int) -> int:
    """The connections to serve at once: ``requested``, at most a share of ``files`` (the
    open-file limit, see `FILES_PER_CONNECTION`)."""
    return max(1, min(requested, files // FILES_PER_CONNECTION))


def serve(
    app: Any,
    *,
    host: str,
    port: int,
    log_level: str,
    keep_alive_timeout: int = KEEP_ALIVE_TIMEOUT,
    header_timeout: float = HEADER_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> None:
    """Serve ``app`` on ``host:port`` with uvicorn until interrupted, bounded as the
    module says; repeated records of uvicorn and asyncio are throttled (`logs.Repeats`)."""
    files = raise_file_limit()
    limit = connection_bound(max_connections, files)
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level,
        access_log=False,  # our request lines replace uvicorn's (they name the agent)
        http=protocol(header_timeout), timeout_keep_alive=keep_alive_timeout,
        limit_concurrency=limit, backlog=BACKLOG,
    )  # fmt: skip
    logs.throttle_repeats("uvicorn.error", "asyncio")  # after uvicorn set its logging up
    if limit < max_connections:
        log.warning("serving at most %d connections: the open-file limit is %d", limit, files)
    uvicorn.Server(config).run()
