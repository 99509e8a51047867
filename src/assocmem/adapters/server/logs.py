"""The server's log: one INFO line per request, one ERROR with its traceback per
unexpected failure, through the standard `logging` module.

Invariants: a request line holds the method, the path, the status, the time taken, the
caller's agent and (for a throttled line) the client's address, never a key, a header or
a body, so a log can be shared without leaking what callers sent or how they
authenticate. What anyone can ask for without a key (a refusal, any 4xx, a page, a
probe) is throttled: one line per client and status per `THROTTLE_INTERVAL`, at most
`THROTTLE_LINES` such lines per interval, the rest counted into lines written when the
interval is over, so a flood of refused requests costs a few lines, not one each. An
operation that ran (2xx) and every failure (5xx) is logged each time. Repeated records
of uvicorn and asyncio (a flood of malformed requests, an exhausted file limit) are
throttled alike.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Hashable
from typing import Any

from assocmem.errors import InvalidInput

log = logging.getLogger("assocmem.server")

# The key under the ASGI scope's state where a route records the caller's agent.
AGENT = "assocmem_agent"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# A flood is summed up every ten seconds: soon enough to watch it, rarely enough to be
# a few lines a minute.
THROTTLE_INTERVAL = 10.0
# Keys logged, and keys counted apart, per interval: enough to tell a handful of
# misbehaving clients apart; a flood from more addresses is counted as one.
THROTTLE_LINES = 20
# The key the events of keys beyond `THROTTLE_LINES` are counted under.
OTHERS = "others"


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


class Throttle:
    """Admits the first event of each key per interval, up to ``lines`` keys, and counts
    the rest (keys beyond ``lines`` together, under `OTHERS`); the counts of an interval
    are handed back, once, with the first event after it (`held_since` is when that
    interval began)."""

    def __init__(self, interval: float = THROTTLE_INTERVAL, lines: int = THROTTLE_LINES) -> None:
        self.interval, self.lines = interval, lines
        self.held_since = self._start = float("-inf")
        self._admitted: set[Hashable] = set()
        self._held: Counter[Hashable] = Counter()

    def admit(self, key: Hashable, now: float) -> tuple[bool, list[tuple[Hashable, int]]]:
        """Whether to log this event, and what the interval just over held back."""
        over: list[tuple[Hashable, int]] = []
        if now - self._start >= self.interval:
            over, self.held_since = self._held.most_common(), self._start
            self._start, self._admitted, self._held = now, set(), Counter()
        if key not in self._admitted and len(self._admitted) < self.lines:
            self._admitted.add(key)
            return True, over
        if key not in self._held and len(self._held) >= self.lines:
            key = OTHERS
        self._held[key] += 1
        return False, over


def _clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds))


class Repeats(logging.Filter):
    """A filter letting through one record per logger and message per interval; what it
    held back is counted in a line of our own once the interval is over."""

    def __init__(self) -> None:
        super().__init__()
        self.throttle = Throttle()
        self._lock = threading.Lock()  # records may come from any thread

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            admitted, over = self.throttle.admit((record.name, str(record.msg)), time.time())
        for key, count in over:
            name, message = key if isinstance(key, tuple) else ("other loggers", "")
            log.warning("%d more records like %r from %s were not logged in the %.0fs from %s",
                        count, str(message)[:80], name, self.throttle.interval,
                        _clock(self.throttle.held_since))  # fmt: skip
        return admitted


def throttle_repeats(*names: str) -> None:
    """Throttle the records of the loggers ``names`` with one shared `Repeats` (in place
    of any an earlier call added)."""
    repeats = Repeats()
    for name in names:
        logger = logging.getLogger(name)
        for earlier in [f for f in logger.filters if isinstance(f, Repeats)]:
            logger.removeFilter(earlier)
        logger.addFilter(repeats)


class RequestLog:
    """ASGI middleware logging each HTTP request once it is answered (or has failed),
    throttling what anyone may ask for without a key."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.throttle = Throttle()

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
            line = (scope["method"], scope["path"], status[0], elapsed, agent)
            if status[0] >= 500 or (agent != "-" and status[0] < 400):
                log.info("%s %s %d %.1fms agent=%s", *line)
            elif log.isEnabledFor(logging.INFO):
                self._throttled(line, (scope.get("client") or ("-",))[0])

    def _throttled(self, line: tuple[Any, ...], client: str) -> None:
        admitted, over = self.throttle.admit((client, line[2]), time.time())
        for key, count in over:
            held = f"{key[1]} answers to {key[0]}" if isinstance(key, tuple) else "other answers"
            log.info("%d more %s were not logged in the %.0fs from %s", count, held,
                     self.throttle.interval, _clock(self.throttle.held_since))  # fmt: skip
        if admitted:
            log.info("%s %s %d %.1fms agent=%s client=%s", *line, client)


def failed(method: str, path: str, exc: BaseException) -> None:
    """Log an unexpected error with its traceback (the caller gets the envelope only)."""
    log.error("%s %s failed", method, path, exc_info=(type(exc), exc, exc.__traceback__))
