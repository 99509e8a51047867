"""An embedder that calls an OpenAI-compatible ``/embeddings`` endpoint, with the standard library.

The endpoint is a trust boundary: texts leave the process and vectors come
back from a server assocmem does not control. So the URL is checked when the
embedder is built (https, or plain http only to a loopback host; never a
link-local or cloud-metadata address), the address actually connected to is
checked again (a name that resolves to 169.254.169.254 is refused), redirects
and environment proxies are not followed, the response is size-capped and
validated item by item, and the API key never appears in an error message.

Invariant: every failure of the endpoint (network, HTTP status, JSON, shape)
surfaces as `EmbedderUnavailable` with the original exception as ``__cause__``;
a bad URL or option is `InvalidInput` at construction. Nothing touches the
network before the first `embed`.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assocmem.errors import EmbedderUnavailable, InvalidInput
from assocmem.optional import require_numpy
from assocmem.vectors.embedders import Embedder

if TYPE_CHECKING:
    import numpy as np

LOOPBACK_NAMES = frozenset({"localhost"})
# Link-local (169.254.0.0/16, fe80::/10) covers AWS, GCP and Azure's
# 169.254.169.254; these are the metadata services outside that range:
# AWS's IPv6 endpoint and Alibaba Cloud's.
METADATA_ADDRESSES = frozenset({"fd00:ec2::254", "100.100.100.200"})
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog"})
# A JSON float is at most 24 characters (repr of a float64) plus a separator
# and whitespace; the slack covers "object", "model", "usage" and indentation.
MAX_BYTES_PER_NUMBER = 32
RESPONSE_SLACK_BYTES = 1 << 20
# How much of an error body goes into the message: enough for a server's
# one-line reason, not a page of HTML.
ERROR_SNIPPET_CHARS = 200
ERROR_BODY_BYTES = 16_384
DEFAULT_TIMEOUT = 30.0
# OpenAI accepts up to 2,048 inputs per request; 64 keeps one request small
# enough that a slow self-hosted server answers inside the timeout.
DEFAULT_BATCH_SIZE = 64

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class HttpEmbedder(Embedder):
    """Vectors from an OpenAI-compatible embeddings endpoint.

    Parameters:

    - ``base_url``: the API root, e.g. ``https://api.openai.com/v1``; requests go
      to ``{base_url}/embeddings``. Plain ``http://`` only to 127.0.0.1, ::1 or
      localhost.
    - ``model``: the model name sent in each request.
    - ``dims``: the vector width the model returns; a response of another width
      is an error.
    - ``api_key``: sent as ``Authorization: Bearer ...`` when given.
    - ``timeout``: seconds per request.
    - ``batch_size``: texts per request.

    The model id is ``http:{model}``. Proxies from the environment are not used.
    """

    normalized = False

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dims: int,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        self.endpoint = endpoint_url(base_url)
        self.model = _require_text(model, "model")
        self.model_id = f"http:{self.model}"
        self.dims = _require_positive(dims, "dims")
        self.batch_size = _require_positive(batch_size, "batch_size")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidInput(
                f"timeout must be a positive number, got {timeout!r}", field="timeout"
            )
        self.timeout = float(timeout)
        self._api_key = _require_key(api_key)
        self._opener = _opener()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        raw = self._post(list(texts))
        rows = _parse_response(raw, len(texts), self.dims, self.endpoint)
        numpy = require_numpy()
        vectors: np.ndarray = numpy.asarray(rows, dtype=numpy.float32)
        return vectors

    def _post(self, texts: list[str]) -> bytes:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        limit = len(texts) * self.dims * MAX_BYTES_PER_NUMBER + RESPONSE_SLACK_BYTES
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw: bytes = response.read(limit + 1)
        except urllib.error.HTTPError as exc:
            # Redact before cutting, so no prefix of the key survives the cut.
            detail = self._redact(_error_body(exc))[:ERROR_SNIPPET_CHARS] or "(no body)"
            raise EmbedderUnavailable(
                f"{self.endpoint} answered HTTP {exc.code} {exc.reason}: {detail}"
            ) from exc
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise EmbedderUnavailable(f"cannot reach {self.endpoint}: {reason}") from exc
        if len(raw) > limit:
            raise EmbedderUnavailable(f"{self.endpoint} sent more than {limit} bytes for one batch")
        return raw

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "[api key]") if self._api_key else text


def endpoint_url(base_url: str) -> str:
    """``{base_url}/embeddings`` once ``base_url`` passes the trust-boundary policy.

    Raises `InvalidInput` (field ``base_url``) for anything that is not an
    absolute ASCII http(s) URL with a host, carries credentials, a query or a
    fragment, uses plain http to a non-loopback host, or names a link-local or
    cloud-metadata address.
    """
    if not isinstance(base_url, str):
        raise InvalidInput("base_url must be a string", field="base_url")
    base_url = base_url.strip()
    if not base_url.isascii() or any(ch <= " " or ch == "\x7f" for ch in base_url):
        # http.client refuses these later with a ValueError; say so now.
        raise _bad_url(base_url, "must be ASCII without spaces (write a host in punycode)")
    try:
        parts = urllib.parse.urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise InvalidInput(
            f"base_url {base_url!r} is not a valid URL: {exc}", field="base_url"
        ) from exc
    if parts.scheme not in ("http", "https") or not host:
        raise _bad_url(base_url, "needs an http:// or https:// scheme and a host")
    if parts.username is not None or parts.password is not None:
        raise _bad_url(base_url, "must not carry credentials; pass api_key instead")
    if parts.query or parts.fragment:
        raise _bad_url(base_url, "must not have a query or fragment")
    _check_host(base_url, host, parts.scheme)
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/embeddings"


def _check_host(base_url: str, host: str, scheme: str) -> None:
    address = _literal_address(host)
    if host.lower().rstrip(".") in METADATA_NAMES or (address and forbidden_address(address)):
        raise _bad_url(base_url, "points at a link-local or cloud-metadata address")
    if address is not None and address.is_unspecified:
        raise _bad_url(base_url, "names the unspecified address")
    loopback = host.lower() in LOOPBACK_NAMES or bool(address and address.is_loopback)
    if scheme == "http" and not loopback:
        raise _bad_url(base_url, "uses plain http to a host that is not loopback; use https")


def _bad_url(base_url: str, why: str) -> InvalidInput:
    return InvalidInput(f"base_url {base_url!r} {why}", field="base_url")


def _literal_address(host: str) -> Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def forbidden_address(address: Address) -> bool:
    """True for addresses no embedder request may reach: link-local and cloud metadata."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_link_local or str(address) in METADATA_ADDRESSES


class ForbiddenPeer(OSError):
    """The connected socket's peer is a forbidden address (the name resolved there)."""


def _check_peer(sock: Any) -> None:
    peer = _literal_address(str(sock.getpeername()[0]).split("%", 1)[0])
    if peer is not None and forbidden_address(peer):
        sock.close()
        raise ForbiddenPeer(f"refused to talk to {peer}: a link-local or cloud-metadata address")


class _CheckedHTTPConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _check_peer(self.sock)


class _CheckedHTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _check_peer(self.sock)


class _CheckedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_CheckedHTTPConnection, req)


class _CheckedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__(context=context)
        self._checked_context = context

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_CheckedHTTPSConnection, req, context=self._checked_context)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect would carry the Authorization header to a URL nobody checked."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        _NoRedirects(),
        _CheckedHTTPHandler(),
        _CheckedHTTPSHandler(ssl.create_default_context()),
    )


def _error_body(error: urllib.error.HTTPError) -> str:
    """The start of an error response's body, whitespace collapsed."""
    try:
        text = error.read(ERROR_BODY_BYTES).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""
    return " ".join(text.split())


def _parse_response(raw: bytes, count: int, dims: int, source: str) -> list[list[float]]:
    """The ``count`` vectors of an embeddings response, in input order (by ``index``)."""
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EmbedderUnavailable(f"{source} sent invalid JSON: {exc}") from exc
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else "no data list"
        raise EmbedderUnavailable(f"{source} sent {got} items for {count} inputs")
    rows: list[list[float] | None] = [None] * count
    for item in data:
        index, vector = _parse_item(item, count, dims, source)
        if rows[index] is not None:
            raise EmbedderUnavailable(f"{source} sent index {index} twice")
        rows[index] = vector
    return [row for row in rows if row is not None]


def _parse_item(item: Any, count: int, dims: int, source: str) -> tuple[int, list[float]]:
    if not isinstance(item, dict):
        raise EmbedderUnavailable(f"{source} sent an item that is not an object")
    index, vector = item.get("index"), item.get("embedding")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise EmbedderUnavailable(f"{source} sent index {index!r}, not 0..{count - 1}")
    if not isinstance(vector, list) or len(vector) != dims:
        width = len(vector) if isinstance(vector, list) else type(vector).__name__
        raise EmbedderUnavailable(
            f"{source} sent {width} values for input {index}, expected {dims}"
        )
    if not all(type(x) in (int, float) and math.isfinite(x) for x in vector):
        raise EmbedderUnavailable(
            f"{source} sent a value that is not a finite number for input {index}"
        )
    if not any(vector):
        raise EmbedderUnavailable(f"{source} sent an all-zero vector for input {index}")
    return index, vector


def _require_text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string", field=field)
    return value


def _require_key(api_key: Any) -> str | None:
    # The message never repeats the value: it is a secret even when malformed.
    if api_key is None:
        return None
    if not isinstance(api_key, str) or not api_key.isascii() or not api_key.isprintable():
        raise InvalidInput("api_key must be printable ASCII", field="api_key")
    if not api_key or any(ch.isspace() for ch in api_key):
        raise InvalidInput("api_key must be non-empty and without spaces", field="api_key")
    return api_key


def _require_positive(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{field} must be a positive integer, got {value!r}", field=field)
    return value
