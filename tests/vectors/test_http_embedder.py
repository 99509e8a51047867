"""HttpEmbedder against a real HTTP server on 127.0.0.1 that serves hashed vectors."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.error
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from assocmem import Memory
from assocmem.errors import EmbedderUnavailable, InvalidInput
from assocmem.vectors.embedders import load_embedder, register_embedder, unregister_embedder
from assocmem.vectors.http import HttpEmbedder, endpoint_url

DIMS = 8
KEY = "sk-test-secret-0123456789"


def hashed_vector(text: str, dims: int = DIMS) -> list[float]:
    """A deterministic, non-normalised vector for ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [digest[i] / 255.0 - 0.5 for i in range(dims)]


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append({"path": self.path, "headers": dict(self.headers), **body})
        status, payload = self.server.answer(self.path, body, dict(self.headers))
        self.send_response(status)
        if status in (301, 302, 307):
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/other")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class EmbeddingServer(ThreadingHTTPServer):
    """Answers ``/v1/embeddings`` like OpenAI, or with the fault a test asks for."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen: list[dict[str, Any]] = []
        self.fault: str | int | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that stops reading (the size cap, the timeout) is expected here

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"

    def answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
        if isinstance(self.fault, int):
            # Echo the key, as a careless server might.
            echo = f"invalid credentials: {headers.get('Authorization')}"
            return self.fault, json.dumps({"error": echo}).encode()
        if self.fault == "bad-json":
            return 200, b'{"data": [ oops'
        if self.fault == "slow":
            time.sleep(1.0)
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_vector(text)}
            for i, text in enumerate(body["input"])
        ]
        data = self._spoil(data)
        payload = {"object": "list", "data": data, "model": body["model"]}
        if self.fault == "huge":
            payload["padding"] = "x" * (2 << 20)
        return 200, json.dumps(payload).encode()

    def _spoil(self, data: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.fault == "reversed":
            return data[::-1]
        if self.fault == "wrong-dims":
            return [{**d, "embedding": d["embedding"][:-1]} for d in data]
        if self.fault == "missing-item":
            return data[:-1]
        if self.fault == "duplicate-index":
            return [{**d, "index": 0} for d in data]
        if self.fault == "no-index":
            return [{"embedding": d["embedding"]} for d in data]
        if self.fault == "strings":
            return [{**d, "embedding": [str(x) for x in d["embedding"]]} for d in data]
        if self.fault == "zeros":
            return [{**d, "embedding": [0.0] * DIMS} for d in data]
        return data


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingServer]:
    srv = EmbeddingServer()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def numpy() -> ModuleType:
    """numpy, which every embed needs (the vectors are arrays); skips without the extra."""
    module: ModuleType = pytest.importorskip("numpy")
    return module


@pytest.fixture
def endpoint(server: EmbeddingServer, numpy: ModuleType) -> Iterator[EmbeddingServer]:
    """The shared server, with its record cleared and no fault."""
    server.seen.clear()
    server.fault = None
    yield server
    server.fault = None


def make(server: EmbeddingServer, **options: Any) -> HttpEmbedder:
    settings: dict[str, Any] = {"base_url": server.base_url, "model": "toy", "dims": DIMS}
    return HttpEmbedder(**(settings | options))


def expected(numpy: ModuleType, texts: list[str]) -> Any:
    rows = numpy.asarray([hashed_vector(t) for t in texts], dtype=numpy.float32)
    return rows / numpy.linalg.norm(rows, axis=1, keepdims=True)


def test_round_trip_gives_unit_vectors_in_input_order(
    endpoint: EmbeddingServer, numpy: ModuleType
) -> None:
    texts = ["the cat sat", "quarterly revenue", "the cat sat", "ünïcödé ✓"]
    vectors = make(endpoint).embed(texts)
    assert vectors.dtype == numpy.float32 and vectors.shape == (4, DIMS)
    assert numpy.allclose(vectors, expected(numpy, texts), atol=1e-6)
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    [request] = endpoint.seen
    assert request["path"] == "/v1/embeddings"
    assert request["model"] == "toy" and request["input"] == texts


def test_requests_carry_at_most_batch_size_inputs(endpoint: EmbeddingServer) -> None:
    texts = [f"text {i}" for i in range(10)]
    make(endpoint, batch_size=3).embed(texts)
    assert [len(r["input"]) for r in endpoint.seen] == [3, 3, 3, 1]
    assert [t for r in endpoint.seen for t in r["input"]] == texts


def test_items_are_placed_by_index_not_position(
    endpoint: EmbeddingServer, numpy: ModuleType
) -> None:
    endpoint.fault = "reversed"
    texts = ["first", "second", "third"]
    assert numpy.allclose(make(endpoint).embed(texts), expected(numpy, texts), atol=1e-6)


def test_api_key_is_sent_as_bearer_token(endpoint: EmbeddingServer) -> None:
    make(endpoint, api_key=KEY).embed_one("hello")
    make(endpoint).embed_one("hello")
    with_key, without_key = endpoint.seen
    assert with_key["headers"]["Authorization"] == f"Bearer {KEY}"
    assert "Authorization" not in without_key["headers"]


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 503])
def test_error_status_is_unavailable_and_never_shows_the_key(
    endpoint: EmbeddingServer, status: int
) -> None:
    endpoint.fault = status
    with pytest.raises(EmbedderUnavailable, match=f"HTTP {status}") as caught:
        make(endpoint, api_key=KEY).embed_one("hello")
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert KEY not in str(caught.value)
    assert "[api key]" in str(caught.value)  # the server echoed it; we redacted it


def test_redirects_are_not_followed(endpoint: EmbeddingServer) -> None:
    endpoint.fault = 302
    with pytest.raises(EmbedderUnavailable, match="HTTP 302"):
        make(endpoint, api_key=KEY).embed_one("hello")
    assert [r["path"] for r in endpoint.seen] == ["/v1/embeddings"]


def test_invalid_json_is_unavailable(endpoint: EmbeddingServer) -> None:
    endpoint.fault = "bad-json"
    with pytest.raises(EmbedderUnavailable, match="invalid JSON") as caught:
        make(endpoint).embed_one("hello")
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("wrong-dims", "sent 7 values for input 0, expected 8"),
        ("missing-item", "sent 1 items for 2 inputs"),
        ("duplicate-index", "index 0 twice"),
        ("no-index", "index None"),
        ("strings", "not a finite number"),
        ("zeros", "all-zero vector"),
        ("huge", "more than"),
    ],
)
def test_malformed_responses_are_unavailable(
    endpoint: EmbeddingServer, fault: str, message: str
) -> None:
    endpoint.fault = fault
    with pytest.raises(EmbedderUnavailable, match=message):
        make(endpoint).embed(["one", "two"])


def test_timeout_is_unavailable(endpoint: EmbeddingServer) -> None:
    endpoint.fault = "slow"
    with pytest.raises(EmbedderUnavailable, match="cannot reach") as caught:
        make(endpoint, timeout=0.2).embed_one("hello")
    assert caught.value.__cause__ is not None


def test_closed_port_is_unavailable(numpy: ModuleType) -> None:
    with EmbeddingServer() as closed:
        base_url = closed.base_url
    with pytest.raises(EmbedderUnavailable, match="cannot reach") as caught:
        HttpEmbedder(base_url=base_url, model="toy", dims=DIMS).embed_one("hello")
    assert isinstance(caught.value.__cause__, urllib.error.URLError)


def test_loads_through_the_registry(endpoint: EmbeddingServer, numpy: ModuleType) -> None:
    register_embedder("openai-test", HttpEmbedder)
    try:
        embedder = load_embedder("openai-test", base_url=endpoint.base_url, model="m", dims=DIMS)
    finally:
        unregister_embedder("openai-test")
    assert embedder.model_id == "http:m" and embedder.dims == DIMS
    assert embedder.embed([]).shape == (0, DIMS)
    assert endpoint.seen == []


@pytest.mark.parametrize(
    ("base_url", "endpoint_"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1/embeddings"),
        ("https://api.example.com/v1/", "https://api.example.com/v1/embeddings"),
        ("https://10.1.2.3:8443", "https://10.1.2.3:8443/embeddings"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/embeddings"),
        ("http://localhost:11434/v1", "http://localhost:11434/v1/embeddings"),
        ("http://[::1]:8080", "http://[::1]:8080/embeddings"),
    ],
)
def test_allowed_urls(base_url: str, endpoint_: str) -> None:
    assert endpoint_url(base_url) == endpoint_
    assert HttpEmbedder(base_url=base_url, model="m", dims=4).endpoint == endpoint_


@pytest.mark.parametrize(
    ("base_url", "why"),
    [
        ("http://api.example.com/v1", "plain http"),
        ("http://10.0.0.5:8000", "plain http"),
        ("http://169.254.169.254/latest", "link-local"),
        ("https://169.254.169.254/", "link-local"),
        ("https://169.254.10.1/", "link-local"),
        ("https://[fe80::1]/", "link-local"),
        ("https://[::ffff:169.254.169.254]/", "link-local"),
        ("https://[fd00:ec2::254]/", "cloud-metadata"),
        ("https://metadata.google.internal/", "cloud-metadata"),
        ("http://0.0.0.0:8000", "unspecified"),
        ("ftp://files.example.com", "scheme"),
        ("api.openai.com/v1", "scheme"),
        ("", "scheme"),
        ("https://user:pw@api.example.com/v1", "credentials"),
        ("https://api.example.com/v1?key=x", "query"),
        ("https://api.example.com:99999", "not a valid URL"),
        ("https://api.example.com/v 1", "without spaces"),
        ("https://bücher.example/v1", "punycode"),
    ],
)
def test_refused_urls(base_url: str, why: str) -> None:
    with pytest.raises(InvalidInput, match=why) as caught:
        HttpEmbedder(base_url=base_url, model="m", dims=4)
    assert caught.value.field == "base_url"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"dims": 0}, "dims"),
        ({"dims": True}, "dims"),
        ({"batch_size": 0}, "batch_size"),
        ({"model": " "}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"api_key": "sk-abc\r\nX-Injected: 1"}, "api_key"),
        ({"api_key": ""}, "api_key"),
    ],
)
def test_bad_options(options: dict[str, Any], field: str) -> None:
    settings: dict[str, Any] = {"base_url": "https://api.example.com", "model": "m", "dims": 4}
    with pytest.raises(InvalidInput) as caught:
        HttpEmbedder(**(settings | options))
    assert caught.value.field == field
    assert "sk-abc" not in str(caught.value)


def test_the_http_embedder_by_name_without_its_settings_names_what_is_missing(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidInput) as caught:
        Memory(str(tmp_path / "notes.db"), embedder="openai")
    assert caught.value.field == "embedder"
    for option in ("base_url", "model", "dims", "ASSOCMEM_EMBEDDER_URL"):
        assert option in str(caught.value)
    with pytest.raises(InvalidInput, match=r"needs dims"):
        load_embedder("openai", base_url="http://127.0.0.1:9/v1", model="m")
