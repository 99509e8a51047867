"""The served HTTP server against hostile or careless clients, on real processes on
127.0.0.1, each probe on a server of its own:

- idle: connections that never send a byte, closed after the keep-alive timeout;
- idle flood: more idle keyless connections than a keyed server's open-file limit
  allows, and whether keyed requests are still served meanwhile (and log bytes);
- refusal flood: unauthenticated requests as fast as a few clients can send them for
  a while: how many were refused, the log bytes they cost, keyed requests served;
- unauthenticated bodies: two bodies just under the size limit sent without a key,
  and how long their refusals take (they must not be read and parsed);
- oversized bodies: a generic client (urllib, which writes its whole body before
  reading) sending past the limit, and how many read the 413.

Traffic goes only to 127.0.0.1. Every loop is bounded by a count or a deadline.
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assocmem.adapters.server import limits
from assocmem.adapters.server.keys import add_key

from .measure import free_port

# Slack on every timed bound: a loaded machine answers late, never early.
SLACK_S = 3.0
# Idle connections of the first probe: over half the default connection bound
# (`limits.MAX_CONNECTIONS`), so closing them is what keeps room for the next ones.
IDLE_CONNECTIONS = 600
# Idle keyless connections against a server allowed `FLOOD_FILES` open files: more
# connections than it has files, the case that locked keyed callers out before.
FLOOD_CONNECTIONS = 1100
FLOOD_FILES = 1024
# Keyed calls made while those idle connections are held.
KEYED_CALLS = 6
# Clients sending unauthenticated requests back to back, and the pause between the
# keyed calls made meanwhile (one at a time, each on a fresh connection).
FLOOD_CLIENTS = 4
KEYED_PAUSE_S = 0.2
# Bodies just under the size limit, as a real batch of writes would send them.
NEAR_LIMIT_BYTES = int(7.7 * 1024 * 1024)
UNAUTHENTICATED_BODIES = 2
# Bodies over the limit, each from a fresh urllib client.
OVERSIZED_BYTES = 9 * 1024 * 1024
OVERSIZED_BODIES = 15
# How long a client waits for any one answer.
CALL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Served:
    """One ``assocmem serve`` process: its URL, port, process and log file."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def log_bytes(self) -> int:
        return self.log.stat().st_size

    def open_files(self) -> int | None:
        """The server's open file descriptors now (None where /proc cannot say)."""
        try:
            return len(os.listdir(f"/proc/{self.process.pid}/fd"))
        except OSError:
            return None


def _file_limit(files: tuple[int, int] | None) -> Callable[[], None] | None:
    """What the server's process runs before it starts: set its open-file limits."""
    if files is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, files)


@contextmanager
def serving(
    folder: Path, name: str, *extra: str, files: tuple[int, int] | None = None
) -> Iterator[Served]:
    """``assocmem serve`` on 127.0.0.1 logging every request (at info) to a file in
    ``folder``, with these open-file limits (soft, hard) when given; stopped after."""
    port, log = free_port(), folder / f"{name}.log"
    with open(log, "ab") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "assocmem", "--db", str(folder / f"{name}.db"), "serve",
             "--port", str(port), "--log-level", "info", *extra],
            stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=_file_limit(files),
        )  # fmt: skip
    served = Served(f"http://127.0.0.1:{port}", port, process, log)
    try:
        _wait_healthy(served)
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(served: Served, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise RuntimeError(f"the server exited; its log is {served.log}")
        try:
            with urllib.request.urlopen(f"{served.url}/healthz", timeout=1) as response:
                if json.loads(response.read())["status"] == "ok":
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not become healthy")


def _keyed(folder: Path, name: str) -> tuple[Path, str]:
    """A key file in ``folder`` holding one key, and that key's secret."""
    keys = folder / f"{name}-keys.json"
    _, secret = add_key(keys, "alice")
    return keys, secret


def _stats(served: Served, key: str | None) -> int | str:
    """POST /v1/stats on a fresh connection: the status, or the error that replaced it."""
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=CALL_TIMEOUT_S)
    try:
        connection.request("POST", "/v1/stats", body=b"{}", headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError as exc:
        return type(exc).__name__
    finally:
        connection.close()


def _urllib_post(served: Served, route: str, body: bytes) -> int | str:
    """POST with urllib and no key: the status, or the name of the error instead."""
    request = urllib.request.Request(
        f"{served.url}/v1/{route}", data=body, method="POST",
        headers={"content-type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=CALL_TIMEOUT_S) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError) as exc:
        return type(getattr(exc, "reason", exc)).__name__


def _tally(statuses: list[int | str]) -> dict[str, int]:
    return {str(status): n for status, n in sorted(Counter(map(str, statuses)).items())}


def _allow_files(needed: int) -> None:
    """Raise this process's soft open-file limit to hold ``needed`` client sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed + 256  # the interpreter's own files besides
    if soft != resource.RLIM_INFINITY and soft < wanted:
        top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))


def closed_within(socks: list[socket.socket], seconds: float) -> tuple[int, float]:
    """Wait up to ``seconds`` for the server to close every one of ``socks`` (whatever it
    sends meanwhile is read and dropped): how many are still open, and when the last
    one closed, in seconds from the call."""
    started = time.monotonic()
    deadline, last = started + seconds, 0.0
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(remaining):
                ready = key.fileobj
                assert isinstance(ready, socket.socket)
                try:
                    if ready.recv(65536):
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                selector.unregister(ready)
                last = time.monotonic() - started
        return len(selector.get_map()), last


def idle_connections(folder: Path) -> dict[str, Any]:
    """Connections that never send a byte must be closed after the keep-alive timeout."""
    bound = limits.KEEP_ALIVE_TIMEOUT + SLACK_S
    _allow_files(IDLE_CONNECTIONS)
    with serving(folder, "idle") as served, ExitStack() as stack:
        socks = [
            stack.enter_context(socket.create_connection(("127.0.0.1", served.port)))
            for _ in range(IDLE_CONNECTIONS)
        ]
        still_open, last = closed_within(socks, bound)
        files = served.open_files()
    return {
        "measured": "idle connections (no byte sent) still open after the keep-alive"
        " timeout plus slack, and when the last one was closed",
        "connections": IDLE_CONNECTIONS,
        "keep_alive_timeout_s": limits.KEEP_ALIVE_TIMEOUT,
        "waited_up_to_s": bound,
        "still_open": still_open,
        "last_closed_after_s": round(last, 2),
        "server_open_files_after": files,
    }


def idle_flood(folder: Path, seconds: float) -> dict[str, Any]:
    """Keyed calls to a server held below ``FLOOD_FILES`` files while more idle keyless
    connections than that are open, and the log bytes written in ``seconds``."""
    keys, secret = _keyed(folder, "idle-flood")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = FLOOD_FILES if hard == resource.RLIM_INFINITY else min(FLOOD_FILES, hard)
    _allow_files(FLOOD_CONNECTIONS)
    with (
        serving(folder, "idle-flood", "--keys", str(keys), files=(files, files)) as served,
        ExitStack() as stack,
    ):
        started, before = time.monotonic(), served.log_bytes()
        for _ in range(FLOOD_CONNECTIONS):
            sock = stack.enter_context(socket.socket())
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", served.port))
        time.sleep(1.0)  # the connections reach the server before the keyed calls
        statuses = [_stats(served, secret) for _ in range(KEYED_CALLS)]
        time.sleep(max(0.0, started + seconds - time.monotonic()))
        written, held = served.log_bytes() - before, served.open_files()
    return {
        "measured": "keyed calls served while more idle keyless connections than the"
        " server's open-file limit are held, and the log bytes written meanwhile",
        "idle_connections": FLOOD_CONNECTIONS,
        "server_file_limit": files,
        "keyed_calls": KEYED_CALLS,
        "keyed_served": statuses.count(200),
        "keyed_statuses": _tally(statuses),
        "log_window_s": seconds,
        "log_bytes": written,
        "server_open_files_at_end": held,
    }


def _hammer(served: Served, deadline: float, statuses: list[int | str]) -> None:
    """Unauthenticated POSTs back to back on one kept-alive connection until ``deadline``
    (a new connection whenever the server closes it)."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=CALL_TIMEOUT_S)
    while time.monotonic() < deadline:
        try:
            connection.request("POST", "/v1/stats", body=b"{}")
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        except (OSError, http.client.HTTPException) as exc:
            statuses.append(type(exc).__name__)
            connection.close()
    connection.close()


def _keyed_calls(served: Served, key: str, deadline: float, statuses: list[int | str]) -> None:
    while time.monotonic() < deadline:
        statuses.append(_stats(served, key))
        time.sleep(KEYED_PAUSE_S)


def refusal_flood(folder: Path, seconds: float) -> dict[str, Any]:
    """``FLOOD_CLIENTS`` clients sending unauthenticated requests for ``seconds`` while a
    keyed client keeps calling: refusals, keyed calls served, log bytes written."""
    keys, secret = _keyed(folder, "refusal-flood")
    with serving(folder, "refusal-flood", "--keys", str(keys)) as served:
        before, deadline = served.log_bytes(), time.monotonic() + seconds
        refused: list[list[int | str]] = [[] for _ in range(FLOOD_CLIENTS)]
        keyed: list[int | str] = []
        threads = [
            threading.Thread(target=_hammer, args=(served, deadline, out)) for out in refused
        ]
        threads.append(
            threading.Thread(target=_keyed_calls, args=(served, secret, deadline, keyed))
        )
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(0.5)  # the server's last log lines reach the file
        written = served.log_bytes() - before
    unauthenticated = [status for out in refused for status in out]
    return {
        "measured": "unauthenticated requests refused in a flood, the log bytes they"
        " cost, and keyed calls served meanwhile",
        "seconds": seconds,
        "flood_clients": FLOOD_CLIENTS,
        "unauthenticated_sent": len(unauthenticated),
        "refused_401": unauthenticated.count(401),
        "unauthenticated_statuses": _tally(unauthenticated),
        "keyed_calls": len(keyed),
        "keyed_served": keyed.count(200),
        "log_bytes": written,
        "log_bytes_per_refusal": round(written / max(1, unauthenticated.count(401)), 3),
    }


def unauthenticated_bodies(folder: Path) -> dict[str, Any]:
    """Bodies just under the limit sent without a key: refused before they are parsed."""
    item = {"text": "a b", "tags": ["t"]}  # many small items: costly to parse and validate
    count = NEAR_LIMIT_BYTES // len(json.dumps(item) + ", ")
    body = json.dumps({"items": [item] * count}).encode()
    keys, _ = _keyed(folder, "unauthenticated")
    with serving(folder, "unauthenticated", "--keys", str(keys)) as served:
        started = time.monotonic()
        statuses = [_urllib_post(served, "write_many", body) for _ in range(UNAUTHENTICATED_BODIES)]
        elapsed = time.monotonic() - started
    return {
        "measured": "seconds to refuse unauthenticated write_many bodies just under the"
        " size limit, sent one after another by urllib",
        "bodies": UNAUTHENTICATED_BODIES,
        "body_bytes": len(body),
        "body_mib": round(len(body) / 2**20, 2),
        "statuses": _tally(statuses),
        "seconds": round(elapsed, 3),
    }


def oversized_bodies(folder: Path) -> dict[str, Any]:
    """Generic clients sending past the size limit must read a 413, not a reset."""
    body = b"x" * OVERSIZED_BYTES
    with serving(folder, "oversized") as served:
        statuses = [_urllib_post(served, "write", body) for _ in range(OVERSIZED_BODIES)]
    return {
        "measured": "urllib clients that read a 413 after sending a body over the limit",
        "body_bytes": OVERSIZED_BYTES,
        "limit_bytes": limits.MAX_BODY_BYTES,
        "sent": OVERSIZED_BODIES,
        "answered_413": statuses.count(413),
        "statuses": _tally(statuses),
    }


PROBES = ("idle_connections", "idle_flood", "refusal_flood", "unauthenticated_bodies",
          "oversized_bodies")  # fmt: skip


def run_probes(folder: Path, seconds: float, done: Callable[[str], object]) -> dict[str, Any]:
    """Every probe in turn, on servers in ``folder``; ``done(name)`` after each."""
    probes: dict[str, Callable[[], dict[str, Any]]] = {
        "idle_connections": lambda: idle_connections(folder),
        "idle_flood": lambda: idle_flood(folder, seconds),
        "refusal_flood": lambda: refusal_flood(folder, seconds),
        "unauthenticated_bodies": lambda: unauthenticated_bodies(folder),
        "oversized_bodies": lambda: oversized_bodies(folder),
    }
    results = {}
    for name in PROBES:
        results[name] = probes[name]()
        done(name)
    return results
