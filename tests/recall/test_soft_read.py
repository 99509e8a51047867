"""Soft reads: attention-style weights over keyed memories, returned as a mixture."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from assocmem import InvalidInput, Memory, SoftRead


def keyed(mem: Memory) -> dict[str, str]:
    ids = {}
    for name, key, value in (
        ("old guide", [2.0, 0.0], [0.0, 1.0]),
        ("current guide", [1.6, 0.8], [1.0, 2.0]),
    ):
        ids[name] = mem.write(name, meta={"key": key, "value": value}).id or ""
    mem.write("a note without keys")
    mem.write("a mismatched key", meta={"key": [1.0, 2.0, 3.0], "value": [1.0, 1.0]})
    return ids


def test_softmax_weights_and_mixture() -> None:
    with Memory(":memory:", agent_id="lab") as mem:
        ids = keyed(mem)
        result = mem.soft_read([1.0, 0.0], temperature=1.0)
        assert isinstance(result, SoftRead)
        w_old = math.exp(2.0) / (math.exp(2.0) + math.exp(1.6))
        assert result.weights[0] == (ids["old guide"], pytest.approx(w_old))
        assert result.mixture[1] == pytest.approx(w_old * 1.0 + (1 - w_old) * 2.0)
        assert 1.0 < result.mixture[1] < 2.0  # a blended version no record holds
        assert result.skipped == 1


def test_lower_temperature_concentrates_but_does_not_verify() -> None:
    with Memory(":memory:", agent_id="lab") as mem:
        ids = keyed(mem)
        sharp = mem.soft_read([1.0, 0.0], temperature=0.05)
        assert sharp.weights[0][0] == ids["old guide"] and sharp.weights[0][1] > 0.99
        leaning = mem.soft_read([1.0, 1.0], temperature=1.0)
        assert leaning.weights[0][0] == ids["current guide"]


@pytest.mark.parametrize(
    ("key", "temperature"),
    [([], 1.0), (["a"], 1.0), ([1.0, math.nan], 1.0), ([1.0], 0), ([1.0], -1)],
)
def test_bad_soft_read_arguments(key: list[object], temperature: float) -> None:
    with Memory(":memory:", agent_id="lab") as mem, pytest.raises(InvalidInput):
        mem.soft_read(key, temperature=temperature)  # type: ignore[arg-type]


def test_soft_read_sees_only_its_scope(tmp_path: Path) -> None:
    path = str(tmp_path / "soft.db")
    keyed = {"key": [1.0], "value": [1.0]}
    with Memory(path, agent_id="a") as mem:
        mine = mem.write("keyed", meta=keyed).id
        admins = mem.write("admins only", meta=keyed, access=["admin"]).id
        assert mem.soft_read([1.0], where={"kind": "semantic"}).weights == ()
        assert [w[0] for w in mem.soft_read([1.0]).weights] == [mine]
    with Memory(path, agent_id="a", role="admin") as admin:
        assert {w[0] for w in admin.soft_read([1.0]).weights} == {mine, admins}
    with Memory(path, agent_id="b") as other:
        assert other.soft_read([1.0]).weights == ()
