"""Real server processes on 127.0.0.1 for the server, client and reliability tests."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    db: str, *extra: str, port: int | None = None, agent: str = "default"
) -> Iterator[str]:
    """``assocmem serve`` in a subprocess; yields its base URL once /healthz answers."""
    port = port or free_port()
    # Nobody reads the piped stderr while the server runs: a request log at info would
    # fill the pipe and stall the server, so the kit serves at warning unless told.
    quiet = () if "--log-level" in extra else ("--log-level", "warning")
    process = subprocess.Popen(
        [sys.executable, "-m", "assocmem", "--db", db, "--agent", agent, "serve", "--port",
         str(port), *quiet, *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"server exited: {process.stderr.read().decode() if process.stderr else ''}"
            )
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if json.loads(response.read())["status"] == "ok":
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not become healthy")


def post(url: str, route: str, body: dict[str, object], key: str | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    request = urllib.request.Request(
        f"{url}/v1/{route}", data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json",
                 **({"authorization": f"Bearer {key}"} if key else {})},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def add_key(keys: Path, agent: str, *roles: str) -> str:
    from assocmem.adapters.server.keys import add_key as make

    _, secret = make(keys, agent, roles)
    return secret


__all__ = ["Path", "add_key", "free_port", "post", "running_server", "wait_healthy"]
