"""The operator role on a real server process: with keys, declaring as the operator
and removing what it declared need a key holding ``"operator"`` (403 naming
``declared_by`` otherwise); without keys (the loopback dev server) both are allowed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from tests.adapters.server_kit import add_key, post, running_server  # noqa: E402

PLANT = {
    "entities": [{"name": "gateway"}, {"name": "billing"}],
    "relations": [{"subject": "gateway", "predicate": "calls", "object": "billing"}],
}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("operator")
    keys = folder / "keys.json"
    plain, operator = add_key(keys, "alice"), add_key(keys, "alice", "operator")
    with running_server(str(folder / "o.db"), "--keys", str(keys)) as url:
        yield {"url": url, "plain": plain, "operator": operator}


def _declare(url: str, key: str | None, declared_by: str) -> tuple[int, dict[str, Any]]:
    status, body = post(url, "write", {"text": "the gateway calls billing"}, key)
    assert status == 200
    anchor = f"mem:{body['id']}"
    return post(url, "declare", {"associations": PLANT, "anchor_ref": anchor,
                                 "declared_by": declared_by}, key)  # fmt: skip


def test_declaring_as_the_operator_needs_the_role(keyed: dict[str, Any]) -> None:
    url = keyed["url"]
    status, body = _declare(url, keyed["plain"], "operator")
    assert status == 403
    assert (body["error"]["type"], body["error"]["field"]) == ("OperatorRequired", "declared_by")
    assert post(url, "traverse", {"entity": "gateway"}, keyed["plain"])[0] == 404
    status, body = _declare(url, keyed["operator"], "operator")
    assert status == 200 and body["relations"]
    relation = body["relations"][0]
    # The same agent with a plain key sees the declaration but may not remove it.
    seen = post(url, "traverse", {"entity": "gateway"}, keyed["plain"])[1]
    assert [r["declared_by"] for r in seen["relations"]] == ["operator"]
    for route, arguments in (
        ("retract", {"relation_ids": [relation]}),
        ("delete_entity", {"entity": "billing"}),
    ):
        status, body = post(url, route, arguments, keyed["plain"])
        assert status == 403 and body["error"]["type"] == "OperatorRequired", route
    assert post(url, "retract", {"relation_ids": [relation]}, keyed["operator"])[1] == {
        "relations": 1, "mentions": 0}  # fmt: skip
    assert post(url, "delete_entity", {"entity": "billing"}, keyed["operator"])[1] == 1


def test_only_an_operator_key_reads_the_stores_sizes(keyed: dict[str, Any]) -> None:
    plain = post(keyed["url"], "health", {}, keyed["plain"])[1]
    operator = post(keyed["url"], "health", {}, keyed["operator"])[1]
    assert plain["store_bytes"] is None and operator["store_bytes"] > 0
    assert plain["memories"] == operator["memories"]


def test_without_keys_the_dev_server_may_declare_as_the_operator(tmp_path: Path) -> None:
    with running_server(str(tmp_path / "dev.db")) as url:
        status, body = _declare(url, None, "operator")
        assert status == 200 and body["relations"]
        assert post(url, "delete_entity", {"entity": "billing"})[1] == 1
