"""The server's log: one INFO line per request, one ERROR with its traceback per
unexpected failure, through the standard `logging` module.

Invariant: a request line holds the method, the path, the status, the time taken and
the caller's agent, never a key, a header or a body, so a log can be shared without
leaking what callers sent or how they authenticate.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from assocmem.errors import InvalidInput

log = logging.getLogger("assocmem.server")

# The key under the ASGI scope's state where a route records the caller's agent.
AGENT = "assocmem_agent"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(level: str) -> None:
    """Send assocmem's log records at ``level`` and above to stderr (the CLI's choice;
    the library itself only emits records)."""
    chosen = logging.getLevelName(level.upper())
    if not isinstance(chosen, int):
        raise InvalidInput(f"unknown log level {level!r}", field="log_level")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    package = logging.getLogger("assocmem")
    package.handlers[:] = [handler]
    package.setLevel(chosen)


class RequestLog:
    """ASGI middleware logging each HTTP request once it is answered (or has failed)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]

        async def noted(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            agent = (scope.get("state") or {}).get(AGENT, "-")
            elapsed = (time.perf_counter() - started) * 1000
            log.info("%s %s %d %.1fms agent=%s", scope["method"], scope["path"], status[0],
                     elapsed, agent)  # fmt: skip


def failed(method: str, path: str, exc: BaseException) -> None:
    """Log an unexpected error with its traceback (the caller gets the envelope only)."""
    log.error("%s %s failed", method, path, exc_info=(type(exc), exc, exc.__traceback__))
