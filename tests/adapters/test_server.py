"""The HTTP server on 127.0.0.1: authentication, errors, limits, isolation, OpenAPI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from assocmem.adapters.server import create_app  # noqa: E402
from assocmem.adapters.server.keys import read_keys, revoke_key  # noqa: E402
from assocmem.lifecycle.retention import EXAMPLE_POLICY  # noqa: E402
from assocmem.surface import operations  # noqa: E402
from tests.adapters.server_kit import add_key, post, running_server  # noqa: E402

OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
SECRET_TOKEN = "zyxquartz"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("server")
    keys = folder / "keys.json"
    alice = add_key(keys, "alice")
    bob = add_key(keys, "bob", "maintainer")
    spare = add_key(keys, "alice")
    # -- the vault (vault/ room): a served folder alice indexes, bob must not see into
    vault = folder / "vault"
    vault.mkdir()
    (vault / "Secret.md").write_text(f"# Secret\n\n{SECRET_TOKEN} runbook for the gateway.\n")
    (vault / "Other.md").write_text("# Other\n\nSee [[Secret]] for the gateway.\n")
    extra = ("--keys", str(keys), "--vault-root", str(vault))
    with running_server(str(folder / "served.db"), *extra) as url:
        yield {"url": url, "alice": alice, "bob": bob, "spare": spare, "keys": keys,
               "vault": str(vault)}  # fmt: skip


def test_a_key_is_required_and_checked(served: dict[str, Any]) -> None:
    status, body = post(served["url"], "stats", {})
    assert status == 401 and body["error"]["type"] == "AuthenticationRequired"
    status, body = post(served["url"], "stats", {}, key="am_nope_nope")
    assert status == 401
    status, body = post(served["url"], "stats", {}, key=served["alice"])
    assert status == 200 and body["memories"] >= 0


def test_a_revoked_key_stops_working_without_a_restart(served: dict[str, Any]) -> None:
    assert post(served["url"], "stats", {}, key=served["spare"])[0] == 200
    key_id = served["spare"].split("_")[1]
    assert revoke_key(served["keys"], key_id)
    assert post(served["url"], "stats", {}, key=served["spare"])[0] == 401
    assert [e.revoked_at is not None for e in read_keys(served["keys"])] == [False, False, True]


def test_the_identity_comes_from_the_key(served: dict[str, Any]) -> None:
    status, body = post(served["url"], "read", {"query": "x", "agent_id": "bob"}, served["alice"])
    assert status == 403 and body["error"]["type"] == "AccessDenied"
    status, _ = post(served["url"], "read", {"query": "x", "agent_id": "alice"}, served["alice"])
    assert status == 200
    status, _ = post(served["url"], "read", {"query": "x", "role": "maintainer"}, served["alice"])
    assert status == 403


@pytest.mark.parametrize(
    ("route", "body", "status", "error"),
    [
        ("write", {"text": ""}, 422, "EmptyText"),
        ("write", {"text": "x", "kind": "dream"}, 422, "InvalidInput"),
        ("write", {"txt": "x"}, 422, "InvalidInput"),
        ("read", {"query": "x", "k": "many"}, 422, "InvalidInput"),
        ("feedback", {"used": ["nope"], "outcome": 1, "read": "01NOREAD"}, 404, "UnknownMemory"),
        ("feedback", {"used": ["nope"], "outcome": 7}, 422, "InvalidOutcome"),
        ("feedback", {"used": ["nope"], "outcome": 1}, 422, "InvalidInput"),
        ("traverse", {"entity": "nobody"}, 404, "UnknownEntity"),
        ("read", {"query": "x", "where": {"a": {"$regex": 1}}}, 422, "InvalidInput"),
    ],
)
def test_errors_have_one_stable_shape(
    served: dict[str, Any], route: str, body: dict[str, Any], status: int, error: str
) -> None:
    got, response = post(served["url"], route, body, served["alice"])
    assert got == status
    assert set(response) == {"error"} and set(response["error"]) == {"type", "message", "field"}
    assert response["error"]["type"] == error
    assert "Traceback" not in json.dumps(response)


def test_oversized_requests_are_refused(served: dict[str, Any]) -> None:
    import http.client
    from urllib.parse import urlsplit

    host = urlsplit(served["url"])
    connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=30)
    connection.putrequest("POST", "/v1/write")
    connection.putheader("content-type", "application/json")
    connection.putheader("authorization", f"Bearer {served['alice']}")
    connection.putheader("content-length", str(9 * 1024 * 1024))
    connection.endheaders()
    response = connection.getresponse()  # refused on the declared size, before any body
    assert response.status == 413
    assert json.loads(response.read())["error"]["type"] == "InvalidInput"
    connection.close()


def _chunked(url: str, key: str, chunks: Iterator[bytes]) -> tuple[int, dict[str, Any]]:
    """POST /v1/write with a chunked body (no content-length); the status and JSON."""
    import http.client
    from urllib.parse import urlsplit

    host = urlsplit(url)
    connection = http.client.HTTPConnection(host.hostname or "", host.port, timeout=60)
    try:
        connection.request(
            "POST", "/v1/write", body=chunks, encode_chunked=True,
            headers={"content-type": "application/json", "authorization": f"Bearer {key}"},
        )  # fmt: skip
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_an_oversized_chunked_body_is_refused_with_413(served: dict[str, Any]) -> None:
    megabyte = b" " * (1024 * 1024)
    body = iter([b'{"text": "', *[megabyte] * 9, b'"}'])
    status, answer = _chunked(served["url"], served["alice"], body)
    assert status == 413
    assert set(answer["error"]) == {"type", "message", "field"}
    assert (
        answer["error"]["type"] == "InvalidInput" and "8388608 bytes" in answer["error"]["message"]
    )


def test_a_chunked_body_within_the_limit_is_served(served: dict[str, Any]) -> None:
    body = iter([b'{"text": "chunked', b' but small"}'])
    status, answer = _chunked(served["url"], served["alice"], body)
    assert status == 200 and len(answer["id"]) == 26


@pytest.mark.parametrize(
    ("method", "route", "status", "error"),
    [
        ("POST", "/v1/no_such_operation", 404, "NotFound"),
        ("GET", "/nowhere", 404, "NotFound"),
        ("GET", "/v1/write", 405, "InvalidInput"),
        ("DELETE", "/healthz", 405, "InvalidInput"),
    ],
)
def test_framework_errors_have_the_error_shape(
    served: dict[str, Any], method: str, route: str, status: int, error: str
) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{served['url']}{route}", data=b"{}", method=method)
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=30)
    answer = json.loads(raised.value.read())
    assert raised.value.code == status
    assert set(answer) == {"error"} and set(answer["error"]) == {"type", "message", "field"}
    assert answer["error"]["type"] == error and route in answer["error"]["message"]
    if status == 405:
        assert raised.value.headers["allow"]


def test_health_and_readiness(served: dict[str, Any]) -> None:
    import urllib.request

    for route, expected in (("healthz", "ok"), ("readyz", "ready")):
        with urllib.request.urlopen(f"{served['url']}/{route}") as response:
            assert json.loads(response.read())["status"] == expected


def _agent_a_world(url: str, key: str, vault: str) -> dict[str, str]:
    ids = {}
    for label, text in (("note", f"{SECRET_TOKEN} runbook for the gateway"),
                        ("other", "gateway timeouts again")):  # fmt: skip
        _, result = post(url, "write", {
            "text": text, "concepts": ["gateway", SECRET_TOKEN],
            **({"key": ["gw", "state"]} if label == "note" else {}),
            "meta": {"key": [1.0], "value": [1.0]}, "kind": "semantic", "source": "runbook",
            "associations": {"entities": [f"{SECRET_TOKEN}-entity"], "relations": [
                {"subject": f"{SECRET_TOKEN}-entity", "predicate": "runs", "object": "Gateway"}]},
        }, key)  # fmt: skip
        ids[label] = result["id"]
    post(url, "feedback", {"used": [ids["note"]], "outcome": 1, "query_concepts": ["gateway"]}, key)
    post(url, "vault_index", {"path": vault}, key)
    # a candidate procedure of A's, resting on two of A's episodes
    runs = [
        post(
            url,
            "write",
            {"text": f"{SECRET_TOKEN} restart {n} worked", "meta": {"outcome": "success"}},
            key,
        )[1]["id"]
        for n in (1, 2)
    ]
    _, proposed = post(url, "propose_procedure", {"episodes": runs, "steps": ["restart"]}, key)
    ids["procedure"] = proposed["id"]
    return ids


def _isolation_calls(ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """A call per route aimed at agent A's data, as agent B would try it."""
    note, entity = ids["note"], f"{SECRET_TOKEN}-entity"
    return {
        "write": {"text": "bob's own note", "derived_from": [note]},
        "write_many": {"items": [{"text": "bob batch", "derived_from": [note]}]},
        "read": {"query": f"{SECRET_TOKEN} gateway runbook", "k": 50, "include_superseded": True},
        "get": {"ids": [note]},
        "export": {},
        "feedback": {"used": [note], "outcome": 1.0, "query_concepts": ["gateway"]},
        "graph": {"concepts": ["gateway", SECRET_TOKEN], "depth": 3},
        "stats": {},
        "soft_read": {"query_key": [1.0]},
        "declare": {"associations": {"entities": ["Gateway"]}, "anchor_ref": f"mem:{note}"},
        "retract": {"mentions": [["Gateway", f"mem:{note}"]]},
        "delete_entity": {"entity": entity},
        "traverse": {"entity": entity, "max_hops": 5},
        "reconstruct": {"query": f"{SECRET_TOKEN} gateway", "max_hops": 5},
        "resolve": {"entity": entity, "predicates": ["runs"]},
        "forget": {"ids": [note]},
        "archive": {"where": {"key_subject": "gw"}},
        "restore": {"ids": [note]},
        "protect": {"ids": [note]},
        "history": {"key": ["gw", "state"]},
        "contradictions": {},
        "end_task": {"task": "t"},
        "retain": {"policy": EXAMPLE_POLICY},
        # -- the vault (vault/ room): bob has indexed nothing; alice's notes stay hers
        "vault_index": {},
        "index_status": {},
        "relevant_notes": {"query": f"{SECRET_TOKEN} gateway runbook"},
        "coverage_gap": {"query": f"{SECRET_TOKEN} gateway runbook"},
        "find_gaps": {},
        "bridge_candidates": {"note": "Secret"},
        "extract_claims": {"note": "Secret"},
        "idea_methods": {},
        "maintenance_report": {},
        "apply_links": {"dry_run": False},
        # standing
        "credit": {"ids": [note], "outcome": "good"},
        "standing": {"ids": [note]},
        "influence_gate_report": {},
        "slash": {"ids": [note]},
        "stale_derived": {},
        "set_checked_sources": {"sources": ["bob.example"]},
        "checked_sources": {},
        # attribution
        "verify_attribution": {},
        "ratify": {"id": note, "kind": "audit", "by_key": "bob"},
        "grade": {"id": note},
        "spend_irreversible": {"ids": [note], "amount": 1, "budget": 5},
        "monitor": {"ids": [note], "outcome": "bad"},
        "cases": {},
        "convergence_report": {"id": note},
        # consolidation
        "consolidate": {"keep": 0},
        "consolidate_clusters": {"threshold": 2},
        "value_by_cohort": {"by": "tag"},
        # procedures and graduation
        "propose_procedure": {"episodes": [note], "steps": ["restart"]},
        "promote_procedure": {"id": ids["procedure"]},
        "revise_procedure": {"id": ids["procedure"], "steps": ["restart twice"]},
        "retire_procedure": {"id": ids["procedure"]},
        "graduate": {},
        "ungraduate": {"ids": [note]},
        # inspection
        "list_memories": {"limit": 500},
        "feedback_log": {"limit": 500},
        "inspect": {"id": note},
        "health": {},
        # comforts: update, export and import
        "update": {"id": note, "tags": ["bob"]},
        "export_all": {},
        "import_lines": {"lines": [{"id": note, "text": "bob's copy", "agent_id": "bob"}]},
    }


def test_another_agent_reaches_nothing_on_any_route(tmp_path: Path, served: dict[str, Any]) -> None:
    url, alice, bob = served["url"], served["alice"], served["bob"]
    ids = _agent_a_world(url, alice, served["vault"])
    calls = _isolation_calls(ids)
    assert set(calls) == set(operations()), "every route is walked"
    for route, body in calls.items():
        status, response = post(url, route, body, bob)
        assert status < 500, route
        if status >= 400:  # a refusal repeats only what bob asked
            # (a vault tool says bob has no vault, or no note of that name)
            assert response["error"]["type"] in (
                "UnknownMemory",
                "UnknownEntity",
                "NotFound",
                "InvalidInput",
                "OperatorRequired",  # bob's key holds no operator role
            ), route
            continue
        if isinstance(response, dict):
            for echo in ("query_concepts", "concepts"):  # bob's own words, echoed back
                response.pop(echo, None)
        if route == "coverage_gap":  # bob's question and its terms, none supported
            assert (response["notes"], response["completeness"]) == ([], 0.0)
            assert response.pop("missing") == response.pop("terms")
            response.pop("query")
        if route == "write_many":  # a refused item repeats the id bob sent, nothing more
            assert [(r["stored"], r["error"]) for r in response] == [(False, "UnknownMemory")]
            continue
        # none of A's text, concepts, entity names or record ids (routes that answer
        # with ids, weights or counts would leak those, not text)
        leaked = json.dumps(response)
        assert SECRET_TOKEN not in leaked, route
        assert ids["note"] not in leaked and ids["other"] not in leaked, route
    _, stats = post(url, "stats", {}, bob)
    assert (stats["memories"], stats["concepts"], stats["links"], stats["feedback"]) == (0, 0, 0, 0)
    _, graph = post(url, "graph", {"concepts": ["gateway"], "depth": 3}, bob)
    assert SECRET_TOKEN not in json.dumps(graph)
    _, mine = post(url, "get", {"ids": [ids["note"]]}, alice)
    assert mine[0]["text"].startswith(SECRET_TOKEN)  # still there: bob could not touch it
    _, status = post(url, "index_status", {}, alice)
    assert status["notes"] == 2 and status["dead_links"] == 0
    assert (mine[0]["status"], mine[0]["protected"]) == ("active", False)


def test_refuses_to_serve_openly_without_keys(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", "--db", str(tmp_path / "x.db"), "serve",
         "--host", "0.0.0.0", "--port", "1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 6 and "no API keys configured" in done.stderr


def test_the_committed_openapi_schema_is_current(tmp_path: Path) -> None:
    schema = create_app(str(tmp_path / "schema.db")).openapi()
    assert set(schema["paths"]) == {f"/v1/{m}" for m in operations()} | {"/healthz", "/readyz"}
    committed = json.loads(OPENAPI.read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(schema)), (
        "docs/openapi.json is stale: run "
        "`python -m assocmem.adapters.server.openapi docs/openapi.json`"
    )


def test_the_schema_documents_each_operation(tmp_path: Path) -> None:
    schema = create_app(str(tmp_path / "schema.db")).openapi()
    components = schema["components"]["schemas"]
    for op in operations().values():
        route = schema["paths"][f"/v1/{op.name}"]["post"]
        request = route["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        fields = components[request.rsplit("/", 1)[1]]["properties"]
        for parameter in op.parameters:
            assert fields[parameter.name]["description"] == parameter.doc, (op.name, parameter)
        answer = route["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer, op.name  # typed from the result, not an untyped object
    read = schema["paths"]["/v1/read"]["post"]["responses"]["200"]["content"]
    assert read["application/json"]["schema"]["$ref"].endswith("/ReadResult")


def test_the_server_package_imports_without_fastapi() -> None:
    probe = (
        "import sys; sys.modules['fastapi'] = None\n"
        "import assocmem.adapters.server as s, assocmem.adapters.server.keys\n"
        "from assocmem import DependencyMissing\n"
        "try:\n    s.create_app\nexcept DependencyMissing:\n    print('missing')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "missing"


def test_keys_cli(tmp_path: Path) -> None:
    keys = str(tmp_path / "k.json")
    base = [sys.executable, "-m", "assocmem", "--json"]
    added = subprocess.run([*base, "keys", "add", "--keys", keys, "--key-agent", "ops",
                            "--role", "admin"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    entry = json.loads(added.stdout)
    assert entry["key"].startswith("am_") and entry["roles"] == ["admin"]
    listed = subprocess.run([*base, "keys", "list", "--keys", keys], capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert "key" not in json.loads(listed.stdout)[0] and "hash" not in json.loads(listed.stdout)[0]
    assert entry["key"] not in Path(keys).read_text()
    revoked = subprocess.run([*base, "keys", "revoke", entry["id"], "--keys", keys],
                             capture_output=True, text=True)  # fmt: skip
    assert revoked.returncode == 0


def test_an_embedder_instance_is_attached(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    from fastapi.testclient import TestClient

    from assocmem.testing import ToyEmbedder

    toy = ToyEmbedder()
    with TestClient(create_app(str(tmp_path / "e.db"), embedder=toy)) as client:
        assert client.post("/v1/write", json={"text": "backoff fixed the flaky call"}).is_success
        read = client.post("/v1/read", json={"query": "flaky call"}).json()
    assert read["arms"]["semantic"] and toy.calls


def test_a_served_read_hands_back_a_handle_its_feedback_names(tmp_path: Path) -> None:
    # Reads run on the server's reader connections; their handles are kept by the writer.
    with running_server(str(tmp_path / "handles.db")) as url:
        _, written = post(url, "write", {"text": "Backoff fixed the flaky deploy."})
        _, read = post(url, "read", {"query": "why does the gateway time out", "k": 3})
        assert read["id"]
        status, rated = post(url, "feedback", {"used": [written["id"]], "outcome": 1,
                                              "read": read["id"]})  # fmt: skip
        assert status == 200 and rated["lessons_updated"] == len(read["query_concepts"])
        _, again = post(url, "read", {"query": "why does the gateway time out", "k": 3})
        assert again["items"][0]["record"]["id"] == written["id"]
        assert again["items"][0]["source"] == "learned"
        status, unknown = post(url, "feedback", {"used": [written["id"]], "outcome": 1,
                                                 "read": "01NOSUCHREAD"})  # fmt: skip
        assert status == 404 and unknown["error"]["type"] == "UnknownRead"
