"""The server's log: a line per request at info, an error with its traceback, no secrets."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assocmem.adapters.server import create_app
from tests.adapters.server_kit import add_key, free_port, post, wait_healthy


def test_a_real_server_logs_each_request_without_key_or_body(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    secret = add_key(keys, "alice")
    port, log = free_port(), tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "assocmem", "--db", str(tmp_path / "s.db"), "serve",
             "--port", str(port), "--keys", str(keys), "--log-level", "info"],
            stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process)
            assert post(url, "write", {"text": "a private note about kiwis"}, secret)[0] == 200
            assert post(url, "get", {"ids": ["nope"]}, secret)[0] == 404
        finally:
            process.terminate()
            process.wait(timeout=10)
    text = log.read_text(encoding="utf-8")
    assert "applied migration 0001_core" in text  # the store's own records, at info
    lines = [line for line in text.splitlines() if "assocmem.server" in line]
    assert any("POST /v1/write 200" in line and "agent=alice" in line for line in lines)
    assert any("POST /v1/get 404" in line for line in lines)
    assert secret not in text and "kiwis" not in text


def _call(app: Any, path: str) -> int:
    """One POST through the whole ASGI app, in process; the status it answered."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"content-type", b"application/json")], "scheme": "http",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}  # fmt: skip
    try:
        asyncio.run(app(scope, receive, send))
    except RuntimeError:
        pass  # Starlette re-raises an unexpected error once it has answered
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def test_an_unexpected_error_is_logged_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(str(tmp_path / "e.db"))

    @app.post("/v1/explode")
    def explode() -> None:
        raise RuntimeError("the disk caught fire")

    with caplog.at_level(logging.INFO, logger="assocmem"):
        assert _call(app, "/v1/explode") == 500
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert failed and failed[0].exc_info is not None
    assert "the disk caught fire" in str(failed[0].exc_info[1])
    answered = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(m.startswith("POST /v1/explode 500 ") for m in answered)


def test_an_unknown_level_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", "--db", str(tmp_path / "x.db"), "serve",
         "--port", str(free_port()), "--log-level", "chatty"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "log level" in done.stderr
