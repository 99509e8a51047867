"""What the server serves besides the API, on a real process on 127.0.0.1: ``/`` sends
a browser to the dashboard, the dashboard's files and the offline API docs, with no
external URL, no folder listing and no way out of the served folders."""

from __future__ import annotations

import re
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from assocmem.adapters.dashboard import STATIC_DIR  # noqa: E402
from assocmem.adapters.server import static  # noqa: E402
from tests.adapters.server_kit import running_server  # noqa: E402

SWAGGER = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def raw_get(url: str, path: str) -> tuple[int, bytes]:
    """GET ``path`` sent exactly as written (a client library would fold ``..`` away)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.partition(b"\r\n\r\n")[2]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(str(tmp_path_factory.mktemp("dash") / "d.db")) as served:
        yield served


def test_root_sends_a_browser_to_the_dashboard(url: str) -> None:
    status, headers, _ = fetch(f"{url}/")
    assert status == 307 and headers["location"] == "/dashboard/"


def test_the_docs_name_no_other_host_and_their_assets_answer(url: str) -> None:
    status, headers, body = fetch(f"{url}/docs")
    assert status == 200 and headers["content-type"].startswith("text/html")
    page = body.decode()
    assert not re.search(r"https?://", page), "the docs page must work offline"
    assets = re.findall(r'(?:href|src)="([^"]+)"', page)
    assert sorted(assets) == sorted(f"/static/swagger/{name}" for name in SWAGGER)
    types = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    for asset in assets:
        status, headers, body = fetch(f"{url}{asset}")
        assert status == 200 and body
        assert headers["content-type"].startswith(types[Path(asset).suffix])
        assert headers["x-content-type-options"] == "nosniff"
    assert fetch(f"{url}/openapi.json")[0] == 200
    assert fetch(f"{url}/redoc")[0] == 404  # one docs bundle ships, not two


@pytest.mark.parametrize(
    "path",
    [
        "/static/swagger/../../api.py",
        "/static/swagger/%2e%2e/%2e%2e/api.py",
        "/static/swagger/%2e%2e%2f%2e%2e%2fapi.py",
        "/static/swagger/..%2f..%2f..%2fdashboard%2f__init__.py",
        "/dashboard/../server/api.py",
        "/dashboard/%2e%2e/__init__.py",
        "/dashboard/%2e%2e%2f__init__.py",
        "/static/swagger/",
        "/static/swagger",
    ],
)
def test_no_path_leaves_the_served_folders_and_none_is_listed(url: str, path: str) -> None:
    status, body = raw_get(url, path)
    assert status in (404, 307), (path, status)
    assert b"create_app" not in body and b"STATIC_DIR" not in body and b"LICENSE" not in body


def test_every_shipped_dashboard_file_is_served_with_its_type(url: str) -> None:
    shipped = [p for p in STATIC_DIR.rglob("*") if p.is_file()] if STATIC_DIR.is_dir() else []
    for file in shipped:
        relative = file.relative_to(STATIC_DIR).as_posix()
        status, headers, body = fetch(f"{url}/dashboard/{relative}")
        assert status == 200 and body == file.read_bytes(), relative
        if file.suffix in static.CONTENT_TYPES:
            assert headers["content-type"].startswith(static.CONTENT_TYPES[file.suffix])
    expected = 200 if (STATIC_DIR / "index.html").is_file() else 404
    assert fetch(f"{url}/dashboard/")[0] == expected


def test_the_dashboard_mount_serves_its_folder_and_nothing_else(tmp_path: Path) -> None:
    # The mount itself, over a folder of this test's own (the page's files arrive
    # with the dashboard; this keeps the mount checked without them).
    site = tmp_path / "site"
    (site / "vendor").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>t</title>")
    (site / "app.js").write_text("console.log(1)")
    (site / "style.css").write_text("body{}")
    (site / "vendor" / "lib.js").write_text("var lib")
    (site / "empty").mkdir()
    (tmp_path / "secret.txt").write_text("do not serve")
    app = FastAPI(docs_url=None, redoc_url=None)
    static.mount(app, dashboard_dir=site)
    with TestClient(app, follow_redirects=False) as client:
        assert client.get("/").headers["location"] == "/dashboard/"
        index = client.get("/dashboard/")
        assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
        for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css"),
                           ("vendor/lib.js", "text/javascript")):  # fmt: skip
            answer = client.get(f"/dashboard/{name}")
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
        assert client.get("/dashboard/empty/").status_code == 404  # no listing
        assert client.get("/dashboard/vendor/").status_code == 404
        assert client.get("/dashboard/missing.js").status_code == 404
        assert client.post("/dashboard/app.js").status_code == 405
    # A folder absent is no mount (and no crash at start).
    bare = FastAPI(docs_url=None, redoc_url=None)
    static.mount(bare, dashboard_dir=tmp_path / "nowhere")
    with TestClient(bare) as client:
        assert client.get("/dashboard/").status_code == 404
