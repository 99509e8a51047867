"""The served HTTP server against hostile or careless clients, on real processes on
127.0.0.1: idle and trickling connections are closed on their bounds, a flood of idle
connections does not lock keyed callers out, a key is checked before a body is read,
generic clients read their 413, refusals write a bounded log, and a rebound name or a
foreign page is refused."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from assocmem_bench.hardening_server import closed_within, serving  # noqa: E402

from assocmem.adapters.server import limits, logs  # noqa: E402
from tests.adapters.server_kit import add_key  # noqa: E402

# Slack on every timed bound: a loaded machine answers late, never early.
SLACK = 3.0
# A body just under the limit, as a real batch of writes would send it.
NEAR_LIMIT = int(7.7 * 1024 * 1024)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def call(
    url: str, route: str, body: bytes = b"{}", headers: dict[str, str] | None = None,
    timeout: float = 15,
) -> tuple[int, dict[str, Any]]:  # fmt: skip
    """POST ``route`` over http.client with exactly these headers; status and JSON."""
    connection = http.client.HTTPConnection("127.0.0.1", port_of(url), timeout=timeout)
    try:
        sent = {"content-type": "application/json", **(headers or {})}
        connection.request("POST", route, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def urllib_post(url: str, body: bytes, route: str = "write") -> int | str:
    """POST ``route`` with urllib (which writes its whole body before reading); the
    status, or the name of the error that replaced it."""
    headers = {"content-type": "application/json"}
    request = urllib.request.Request(f"{url}/v1/{route}", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError) as exc:
        return type(getattr(exc, "reason", exc)).__name__


def closed_after(sock: socket.socket, limit: float, trickle: bytes = b"") -> float | None:
    """Seconds until the server closes ``sock`` (None: still open after ``limit``),
    writing ``trickle`` one byte every tenth of a second meanwhile."""
    started = time.monotonic()
    sock.settimeout(0.1)
    sent = 0
    while time.monotonic() - started < limit:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            pass
        except OSError:
            return time.monotonic() - started
        if sent < len(trickle):
            try:
                sock.sendall(trickle[sent : sent + 1])
            except OSError:
                return time.monotonic() - started
            sent += 1
    return None


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A keyless loopback server with every bound at its default."""
    with serving(tmp_path_factory.mktemp("keyless"), "k") as served:
        yield served.url


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A keyless server with short header and body bounds, to watch them act."""
    extra = ("--header-timeout", "2", "--body-timeout", "2", "--keep-alive-timeout", "1")
    with serving(tmp_path_factory.mktemp("quick"), "q", *extra) as served:
        yield served.url


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A keyed server logging every request (at info) to a file."""
    folder = tmp_path_factory.mktemp("keyed")
    keys = folder / "keys.json"
    secret = add_key(keys, "alice")
    with serving(folder, "s", "--keys", str(keys)) as served:
        yield {"url": served.url, "key": secret, "log": served.log}


# -- idle and slow connections


def test_idle_connections_are_closed_after_the_keep_alive_bound(keyless: str) -> None:
    with ExitStack() as stack:
        idle = [
            stack.enter_context(socket.create_connection(("127.0.0.1", port_of(keyless))))
            for _ in range(50)
        ]
        still, _ = closed_within(idle, limits.KEEP_ALIVE_TIMEOUT + SLACK)
    assert still == 0, f"{still} of 50 idle connections still open"


def test_a_trickled_request_head_is_closed_at_the_header_bound(quick: str) -> None:
    head = b"POST /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    with socket.create_connection(("127.0.0.1", port_of(quick))) as sock:
        waited = closed_after(sock, 2 + SLACK + 5, trickle=head)
    assert waited is not None and 1.5 <= waited <= 2 + SLACK, waited


def test_a_trickled_body_is_answered_408_at_the_body_bound(quick: str) -> None:
    head = (b"POST /v1/write HTTP/1.1\r\nHost: 127.0.0.1:%d\r\ncontent-type: application/json"
            b"\r\ncontent-length: 1000\r\n\r\n" % port_of(quick))  # fmt: skip
    with socket.create_connection(("127.0.0.1", port_of(quick))) as sock:
        sock.sendall(head + b'{"text": "')
        waited = closed_after(sock, 2 + SLACK + 5, trickle=b"a" * 200)
    assert waited is not None and waited <= 2 + SLACK, waited
    # closed_after read (and dropped) the answer; ask again and keep it this time
    with socket.create_connection(("127.0.0.1", port_of(quick)), timeout=10) as sock:
        sock.sendall(head + b'{"text": "')
        answer = sock.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["field"] == "body"


def test_many_idle_connections_do_not_lock_keyed_callers_out(tmp_path: Path) -> None:
    # The server may hold 256 files; a client with no key opens more connections than
    # that and sends nothing.
    keys = tmp_path / "keys.json"
    secret = add_key(keys, "alice")
    extra = ("--keys", str(keys))
    with (
        serving(tmp_path, "m", *extra, files=(128, 256)) as server,
        ExitStack() as stack,
    ):
        for _ in range(400):
            sock = stack.enter_context(socket.socket())
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", server.port))
        time.sleep(1)
        served = [call(server.url, "/v1/stats", headers={"authorization": f"Bearer {secret}"},
                       timeout=10)[0] for _ in range(6)]  # fmt: skip
        held = Path(f"/proc/{server.process.pid}/limits").read_text()
    assert served == [200] * 6
    files = next(line for line in held.splitlines() if line.startswith("Max open files"))
    assert files.split()[3:5] == ["256", "256"], files  # the soft limit was raised


# -- authentication before the body, and 413 that generic clients read


def test_a_key_is_checked_before_the_body_is_read(keyed: dict[str, Any]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port_of(keyed["url"]), timeout=5)
    connection.putrequest("POST", "/v1/write")
    connection.putheader("content-type", "application/json")
    connection.putheader("content-length", str(NEAR_LIMIT))
    connection.endheaders()  # and no body: the answer must not wait for one
    response = connection.getresponse()
    assert response.status == 401
    assert json.loads(response.read())["error"]["type"] == "AuthenticationRequired"
    connection.close()


def test_unauthenticated_bodies_near_the_limit_are_refused_quickly(keyed: dict[str, Any]) -> None:
    # many small items: costly to parse and validate, which a refusal must not do
    item = {"text": "a b", "tags": ["t"]}
    body = json.dumps({"items": [item] * (NEAR_LIMIT // len(json.dumps(item) + ", "))}).encode()
    assert len(body) < limits.MAX_BODY_BYTES
    started = time.monotonic()
    statuses = [urllib_post(keyed["url"], body, "write_many") for _ in range(2)]
    elapsed = time.monotonic() - started
    assert statuses == [401, 401]
    assert elapsed < 1.5, f"two refused {len(body)}-byte bodies took {elapsed:.2f}s"


def test_generic_clients_read_their_413(keyless: str) -> None:
    body = b"x" * (9 * 1024 * 1024)
    statuses = [urllib_post(keyless, body) for _ in range(15)]
    assert statuses == [413] * 15
    requests = pytest.importorskip("requests")
    for _ in range(5):
        assert requests.post(f"{keyless}/v1/write", data=body, timeout=30).status_code == 413


@pytest.mark.parametrize(
    "extra",
    [
        b"content-length: %d\r\n" % (limits.DRAIN_BYTES + 1),
        b"content-length: %d\r\nexpect: 100-continue\r\n" % (9 * 1024 * 1024),
    ],
    ids=["declared-past-the-drain-bound", "expecting-100-continue"],
)
def test_a_body_that_will_not_be_read_is_answered_and_the_connection_closed(
    keyless: str, extra: bytes
) -> None:
    head = b"POST /v1/write HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (port_of(keyless), extra)
    with socket.create_connection(("127.0.0.1", port_of(keyless)), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(head)  # and no body
        answer = sock.makefile("rb").read()  # to the server's close
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:80]
    assert b"100 Continue" not in answer
    assert waited < limits.KEEP_ALIVE_TIMEOUT / 2, f"closed after {waited:.1f}s, not at once"


# -- the log under a flood of refusals


def test_a_flood_of_refused_requests_writes_a_bounded_log(keyed: dict[str, Any]) -> None:
    url, log = keyed["url"], keyed["log"]
    before = log.stat().st_size
    refused: list[int] = []

    def flood() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port_of(url), timeout=15)
        for _ in range(500):
            connection.request("POST", "/v1/stats", body=b"{}")
            response = connection.getresponse()
            response.read()
            refused.append(response.status)
        connection.close()

    flooders = [threading.Thread(target=flood) for _ in range(4)]
    for thread in flooders:
        thread.start()
    served = [call(url, "/v1/stats", headers={"authorization": f"Bearer {keyed['key']}"})[0]
              for _ in range(20)]  # fmt: skip
    for thread in flooders:
        thread.join(timeout=120)
    time.sleep(0.5)
    written = log.read_bytes()[before:].decode()
    assert served == [200] * 20 and refused == [401] * 2000
    assert written.count(" 200 ") >= 20  # every served call is still logged
    # each refused request would be a line of about 60 bytes
    assert len(written) < 60 * 100, f"{len(written)} bytes for 2,000 refusals"


def test_the_throttle_logs_one_line_per_key_and_interval_and_counts_the_rest() -> None:
    throttle = logs.Throttle(interval=10.0, lines=1)
    admitted = [throttle.admit(key, now)[0] for key, now in
                [("a", 0.0), ("a", 1.0), ("b", 2.0), ("c", 3.0), ("a", 4.0)]]  # fmt: skip
    assert admitted == [True, False, False, False, False]
    logged, held = throttle.admit("a", 10.0)  # a new interval: what the last one held back
    assert logged and dict(held) == {"a": 2, logs.OTHERS: 2}
    assert throttle.admit("a", 11.0) == (False, [])


# -- DNS rebinding: a Host or Origin that is not the server's own


def _rebinding_cases(port: int) -> list[tuple[str, str | None, int]]:
    own = f"127.0.0.1:{port}"
    return [
        ("evil.example", None, 403),
        (f"evil.example:{port}", None, 403),
        (f"localhost:{port + 1}", None, 403),
        (own, "http://evil.example", 403),
        (own, f"http://evil.example:{port}", 403),
        (own, "null", 403),
        (own, None, 200),
        ("127.0.0.1", None, 200),  # no port: the served one, as non-browser clients write it
        (f"localhost:{port}", None, 200),
        (f"[::1]:{port}", None, 200),
        (own, f"http://{own}", 200),
        (own, f"http://localhost:{port}", 200),
    ]


def test_the_keyless_server_answers_only_its_own_hosts_and_origins(keyless: str) -> None:
    for host, origin, expected in _rebinding_cases(port_of(keyless)):
        headers = {"Host": host, **({"Origin": origin} if origin else {})}
        status, body = call(keyless, "/v1/stats", headers=headers)
        assert status == expected, (host, origin, status, body)
        if expected == 403:
            assert body["error"]["type"] == "AccessDenied", body
            assert body["error"]["field"] == ("origin" if origin else "host"), body


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/healthz"])
def test_the_pages_refuse_a_rebound_host_too(keyless: str, path: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port_of(keyless), timeout=10)
    for host, expected in (("evil.example", 403), ("localhost", 200)):
        connection.request("GET", path, headers={"Host": f"{host}:{port_of(keyless)}"})
        response = connection.getresponse()
        response.read()
        assert response.status == expected, host
    connection.close()


def test_a_keyed_server_refuses_foreign_origins_and_lets_keys_guard_hosts(
    keyed: dict[str, Any],
) -> None:
    url, key = keyed["url"], {"authorization": f"Bearer {keyed['key']}"}
    assert call(url, "/v1/stats", headers={**key, "Origin": "http://evil.example"})[0] == 403
    # Without --allowed-host a keyed server takes any Host: a rebound page has no key.
    assert call(url, "/v1/stats", headers={**key, "Host": "mem.example"})[0] == 200
    assert call(url, "/v1/stats", headers={"Host": "mem.example"})[0] == 401


def test_allowed_hosts_name_the_public_host_of_a_keyed_server(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = {"authorization": f"Bearer {add_key(keys, 'alice')}"}
    extra = ("--keys", str(keys), "--allowed-host", "mem.example")
    with serving(tmp_path, "a", *extra) as served:
        url, port = served.url, served.port
        assert call(url, "/v1/stats", headers={**key, "Host": "mem.example"})[0] == 200
        assert call(url, "/v1/stats", headers={**key, "Host": f"127.0.0.1:{port}"})[0] == 200
        origin = {"Host": "mem.example", "Origin": "https://mem.example"}
        assert call(url, "/v1/stats", headers={**key, **origin})[0] == 200
        status, body = call(url, "/v1/stats", headers={**key, "Host": "evil.example"})
        assert status == 403 and body["error"]["field"] == "host"
