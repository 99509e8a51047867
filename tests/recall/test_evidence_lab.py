"""Seed 001's notebook, end to end: the example script's scenario, step by step."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import BACKENDS, fresh_database

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "evidence_lab.py"


@pytest.fixture(scope="module")
def lab() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evidence_lab", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=BACKENDS)
def steps(
    lab: ModuleType, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> dict[str, object]:
    if request.param == "postgres":
        target = fresh_database(request.getfixturevalue("postgres_server"))
    else:
        target = str(tmp_path_factory.mktemp("lab") / "lab.db")
    result: dict[str, object] = lab.scenario(target)
    return result


def test_the_graph_gives_the_exact_version(steps: dict[str, object]) -> None:
    assert steps["major version (graph)"] == ["2"]


def test_similarity_alone_ranks_the_old_guide_first(steps: dict[str, object]) -> None:
    weights = steps["similarity only (soft read)"]
    assert [name for name, _ in weights] == ["old guide", "current guide", "failed call"]  # type: ignore[attr-defined]
    mixture = steps["soft read mixture"]
    assert 1 < mixture[1] < 2  # type: ignore[index]  # a blended "version 1.4": not evidence


def test_evidence_mode_returns_the_current_guide_and_says_why_not_the_rest(
    steps: dict[str, object],
) -> None:
    day1 = steps["evidence, day 1"]
    assert day1["items"] == ["current guide"]  # type: ignore[index]
    assert day1["gates"] == {"not_semantic": ["failed call"], "unverified": ["forum tip"]}  # type: ignore[index]


def test_after_day_seven_evidence_mode_correctly_returns_nothing(steps: dict[str, object]) -> None:
    day8 = steps["evidence, day 8 (verification expired)"]
    assert day8["items"] == []  # type: ignore[index]
    assert day8["gates"]["expired"] == ["current guide"]  # type: ignore[index]
    archive = steps["archive expired on day 8"]
    assert archive == {"archived": [], "skipped": {"current guide": "protected"}}


def test_a_schema_inspection_adds_a_fresh_fact(steps: dict[str, object]) -> None:
    assert steps["evidence, day 8 after inspection"]["items"] == ["schema inspection"]  # type: ignore[index]


def test_the_restricted_record_exists_only_for_its_role(steps: dict[str, object]) -> None:
    assert "restricted" not in steps["plain read (student)"]  # type: ignore[operator]
    for key, outcome in steps.items():
        if "maintainer" not in key:
            assert "restricted" not in str(outcome)
    assert "restricted" in steps["plain read (maintainer)"]  # type: ignore[operator]
