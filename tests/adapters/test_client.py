"""`Client` and `Memory` give equal results on the same script, method by method."""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from assocmem import AssocmemError, Client, InvalidInput, Memory, UnknownMemory  # noqa: E402
from assocmem.lifecycle.retention import EXAMPLE_POLICY  # noqa: E402
from assocmem.surface import operations  # noqa: E402
from tests.adapters.server_kit import running_server  # noqa: E402
from tests.conftest import fresh_database  # noqa: E402

OLD = "2001-01-01T00:00:00Z"
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
NOW = re.compile(r"20[2-9]\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def script(m: Any, vault: str) -> dict[str, Any]:
    """Every remote method, called the same way on either target (``vault``: a folder
    of notes both may index)."""
    out: dict[str, Any] = {}
    first = m.write(
        "Backoff of two seconds fixed the flaky call.", concepts=["retry", "backoff"],
        observed_at=OLD, key=("svc", "fix"), meta={"key": [1.0, 0.0], "value": [1.0]},
    )  # fmt: skip
    out["write"] = first
    out["write_many"] = m.write_many([
        {"text": "Retried the request and it went through.", "concepts": ["timeout", "retry"],
         "observed_at": OLD},
        {"text": "Timed out again, retried, fine.", "concepts": ["timeout", "retry"],
         "observed_at": OLD},
        {"text": ""},
    ])  # fmt: skip
    out["read"] = m.read(concepts=["timeout"])
    out["feedback"] = m.feedback([first.id], 1.0, query_concepts=["timeout"])
    out["graph"] = m.graph(["timeout"], depth=2)
    out["get"] = m.get([first.id])
    out["export"] = list(m.export())
    out["stats"] = m.stats()
    out["soft_read"] = m.soft_read([1.0, 0.0], temperature=0.5)
    out["declare"] = m.declare({"entities": ["Gateway"], "relations": [
        {"subject": "Gateway", "predicate": "runs on", "object": "Cluster A"}]},
        anchor_ref=f"mem:{first.id}")  # fmt: skip
    out["traverse"] = m.traverse("gateway", max_hops=2)
    out["reconstruct"] = m.reconstruct("what fixed the flaky call?", count=3)
    out["resolve"] = m.resolve("Gateway", "runs on")
    out["retract"] = m.retract(relation_ids=list(out["declare"].relations))
    out["history"] = m.history(("svc", "fix"))
    out["contradictions"] = m.contradictions()
    out["retain"] = m.retain(EXAMPLE_POLICY)
    out["protect"] = m.protect([first.id])
    out["archive"] = m.archive(where={"kind": "episodic"})
    out["restore"] = m.restore([r.id for r in out["write_many"] if r.id])
    # standing
    out["credit"] = m.credit([first.id], "good")
    out["standing"] = m.standing([first.id])
    out["influence_gate_report"] = m.influence_gate_report()
    out["slash"] = m.slash([first.id], scope="memory")
    out["stale_derived"] = m.stale_derived()
    # attribution
    out["verify_attribution"] = m.verify_attribution()
    out["ratify"] = m.ratify(first.id, "audit", "peer", lens="review")
    out["grade"] = m.grade(first.id)
    out["convergence_report"] = m.convergence_report(first.id)
    out["monitor"] = m.monitor([first.id], "bad", h=0.5)
    out["cases"] = m.cases()
    out["spend_irreversible"] = m.spend_irreversible([first.id], 1, budget=2)
    # procedures and graduation
    runs = [
        m.write(
            f"Wrapped the id, run {n}: it worked.",
            observed_at=OLD,
            meta={"error": "argument-type", "outcome": "success"},
        ).id
        for n in (1, 2)
    ]
    checks = [{"case": {"error": "argument-type"}, "expect": "apply"}]
    out["propose_procedure"] = m.propose_procedure(
        runs, ["wrap the id"], {"error": "argument-type"}, checks, name="wrap"
    )
    out["promote_procedure"] = m.promote_procedure(out["propose_procedure"].id)
    out["revise_procedure"] = m.revise_procedure(out["propose_procedure"].id,
                                                 steps=["wrap the id", "retry"])  # fmt: skip
    out["retire_procedure"] = m.retire_procedure(out["revise_procedure"].id)
    m.credit([runs[0]], "good")
    out["graduate"] = m.graduate()
    out["ungraduate"] = m.ungraduate([runs[0]])
    out["end_task"] = m.end_task("none")
    out["delete_entity"] = m.delete_entity("Cluster A")
    # consolidation (its clock reading differs by target, so it is zeroed)
    out["consolidate"] = dataclasses.replace(m.consolidate(keep=10), seconds=0.0)
    clusters = m.consolidate_clusters(threshold=2)
    out["consolidate_clusters"] = dataclasses.replace(clusters, seconds=0.0)
    out["value_by_cohort"] = m.value_by_cohort(by="month")
    out["forget"] = m.forget([out["write_many"][0].id])
    # -- the vault (vault/ room); seconds are the clock's, masked like times
    out["vault_index"] = dataclasses.replace(m.vault_index(vault), seconds=0.0)
    out["index_status"] = m.index_status()
    out["relevant_notes"] = m.relevant_notes("feedback latency", k=3)
    out["coverage_gap"] = m.coverage_gap("feedback and sleep")
    out["find_gaps"] = m.find_gaps()
    out["bridge_candidates"] = m.bridge_candidates("Deliberate Practice", k=2)
    out["extract_claims"] = m.extract_claims("Habit Loops")
    out["idea_methods"] = m.idea_methods()
    out["maintenance_report"] = m.maintenance_report(stale_days=100_000 // 10)
    out["apply_links"] = m.apply_links()
    # -- inspection; sizes on disk and the backend's name are the target's, masked
    out["list_memories"] = m.list_memories(limit=5, offset=1, status="active")
    out["inspect"] = m.inspect(first.id)
    out["feedback_log"] = m.feedback_log(limit=5, memory_id=first.id)
    out["health"] = dataclasses.replace(m.health(), backend="-", store_bytes=0, wal_bytes=0)
    out["set_checked_sources"] = m.set_checked_sources(["https://docs.example.com/v2", "manual"])
    out["checked_sources"] = m.checked_sources()
    # comforts: update, export and import
    out["update"] = m.update(runs[1], tags=["wrapped"], value=2.0)
    out["export_all"] = list(m.export_all())
    out["import_lines"] = m.import_lines([*out["export_all"][:3], {"text": ""}])
    try:
        m.get(["no-such-id"])
    except AssocmemError as exc:
        out["error"] = (type(exc).__name__, exc.message)
    return out


def normalized(value: Any) -> Any:
    """The value as plain data with ids renamed in order of appearance and clock times masked."""
    names: dict[str, str] = {}

    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {"__type__": type(v).__name__, **{f.name: plain(getattr(v, f.name))
                                                     for f in dataclasses.fields(v)}}  # fmt: skip
        if isinstance(v, dict):
            return {plain(k): plain(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        if isinstance(v, str):
            v = ULID.sub(lambda m: names.setdefault(m.group(), f"<id{len(names)}>"), v)
            return NOW.sub("<now>", v)
        if isinstance(v, int) and not isinstance(v, bool) and v > 2**32:
            return f"<n{names.setdefault(str(v), str(len(names)))}>"  # a random public id
        if isinstance(v, float):
            return round(v, 9)
        return v

    return plain(value)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A copy of the sample vault every run of the script indexes (only dry runs write)."""
    copy = tmp_path_factory.mktemp("parity-vault") / "vault"
    shutil.copytree(Path(__file__).resolve().parents[2] / "src/assocmem/vault/sample", copy)
    return str(copy)


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, vault: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = tmp_path_factory.mktemp("parity")
    with Memory(str(folder / "local.db"), agent_id="ops") as memory:
        local = script(memory, vault)
    with running_server(str(folder / "remote.db"), "--vault-root", vault, agent="ops") as url:
        remote = script(Client(url), vault)
    return local, remote


@pytest.fixture(scope="module")
def on_postgres(
    both: tuple[dict[str, Any], dict[str, Any]], postgres_server: str, vault: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The script on PostgreSQL, directly and through a server."""
    with Memory(fresh_database(postgres_server), agent_id="ops") as memory:
        local = script(memory, vault)
    with running_server(fresh_database(postgres_server), "--vault-root", vault, agent="ops") as url:
        remote = script(Client(url), vault)
    return local, remote


def test_the_script_covers_every_method(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    local, _ = both
    assert set(operations()) <= set(local)


@pytest.mark.parametrize("method", [*operations(), "error"])
def test_memory_and_client_agree(method: str, both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    local, remote = both
    assert type(local[method]) is type(remote[method])
    assert normalized(local[method]) == normalized(remote[method])


@pytest.mark.parametrize("method", [*operations(), "error"])
def test_postgresql_and_sqlite_agree(
    method: str,
    both: tuple[dict[str, Any], dict[str, Any]],
    on_postgres: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    sqlite_local, _ = both
    for result in on_postgres:
        if method in POOLED:
            # Candidates come from a lexical pool each backend ranks its own way, so
            # which notes fill the last places may differ; how many there are may not.
            mine, theirs = normalized(result[method]), normalized(sqlite_local[method])
            assert mine and len(mine) == len(theirs)
            assert all(b["folder"] != "learning" for b in mine + theirs)  # other folders only
        elif method in LEXICALLY_SCORED:
            assert unscored(normalized(result[method])) == unscored(
                normalized(sqlite_local[method])
            )
        else:
            assert normalized(result[method]) == normalized(sqlite_local[method])


# Vault tools whose scores come from the text arm, whose BM25 each backend computes
# its own way (FTS5, tsvector): the backends agree on what is found, not on the score
# (nor the order of near ties).
LEXICALLY_SCORED = {"relevant_notes", "coverage_gap"}
# Tools whose candidates are a lexical pool cut to k.
POOLED = {"bridge_candidates"}


def unscored(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: unscored(v) for k, v in value.items() if k not in ("score", "relevance")}
    if isinstance(value, list):
        return sorted((unscored(v) for v in value), key=repr)
    return value


def test_the_client_has_memorys_signatures_and_docs() -> None:
    import inspect
    import typing

    fix = '`python -c "from assocmem.adapters import client; client.regenerate()"`'
    for name in operations():
        ours, theirs = getattr(Client, name), getattr(Memory, name)
        stale = f"Client.{name} differs from Memory.{name}: run {fix}"
        assert inspect.signature(ours) == inspect.signature(theirs), stale
        assert typing.get_type_hints(ours) == typing.get_type_hints(theirs), stale
        assert inspect.getdoc(ours) == inspect.getdoc(theirs), stale


def test_the_client_sends_only_what_was_given(tmp_path: Path) -> None:
    with running_server(str(tmp_path / "g.db")) as url:
        client = Client(url)
        sent: list[dict[str, Any]] = []
        call = client.call

        def recording(name: str, arguments: dict[str, Any]) -> Any:
            sent.append(arguments)
            return call(name, arguments)

        client.call = recording  # type: ignore[method-assign]
        client.read("x", k=3)
        assert sent == [{"query": "x", "k": 3}]
        assert isinstance(client.export(), Iterator)


def test_an_unreachable_server_is_a_store_error() -> None:
    from assocmem import StoreUnavailable

    with pytest.raises(StoreUnavailable):
        Client("http://127.0.0.1:9", timeout=2).stats()


def test_errors_arrive_as_the_same_class(tmp_path: Path) -> None:
    with running_server(str(tmp_path / "e.db")) as url:
        client: Callable[..., Any] = Client(url).feedback
        with pytest.raises(UnknownMemory, match="no memory 'x'"):
            client(["x"], 1.0, query_concepts=[])


def test_a_body_over_the_servers_limit_is_refused_naming_it(tmp_path: Path) -> None:
    from assocmem.adapters import client as client_module
    from assocmem.adapters.server import api

    assert client_module.MAX_BODY_BYTES == api.MAX_BODY_BYTES
    items = [{"text": f"note {n} " + "x" * 60_000} for n in range(150)]  # about 9 MB
    with running_server(str(tmp_path / "big.db")) as url:
        client = Client(url)
        with pytest.raises(InvalidInput, match="over the server's limit of 8388608 bytes"):
            client.write_many(items)
        assert client.stats().memories == 0
        assert len(client.write_many(items[:60])) == 60  # within the limit it is served


def test_an_answer_cut_off_mid_body_is_a_typed_store_unavailable() -> None:
    """A server that dies after its status line (killed mid-answer) leaves the client
    with half a response: a typed `StoreUnavailable`, never http.client's own error."""
    import socket
    import threading

    from assocmem import StoreUnavailable

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_half() -> None:
        conn, _ = listener.accept()
        with conn:
            # Read the whole request first: closing with unread bytes resets the
            # connection, and the client would see a reset rather than half an answer.
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))  # fmt: skip
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: 162\r\n\r\n{\"id\"")  # fmt: skip

    server = threading.Thread(target=answer_half)
    server.start()
    try:
        with pytest.raises(StoreUnavailable, match="no whole answer to write"):
            Client(f"http://127.0.0.1:{port}").write("a note")
    finally:
        server.join(10)
        listener.close()
