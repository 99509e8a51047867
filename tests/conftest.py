"""Shared fixtures: real SQLite stores, in memory and as files in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assocmem import Memory


@pytest.fixture(params=["file", "memory"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A Memory for agent "ops" on a real SQLite store (file and :memory:)."""
    target = str(tmp_path / "notes.db") if request.param == "file" else ":memory:"
    with Memory(target, agent_id="ops") as memory:
        yield memory


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    """A path for a fresh store file."""
    return str(tmp_path / "store.db")


SEED_NOTES = (
    ("The deploy timed out after the release.", ["timeout", "deploy"]),
    ("Retried the request and it went through.", ["timeout", "retry"]),
    ("Timed out again, retried, fine.", ["timeout", "retry"]),
    ("Backoff of two seconds fixed the flaky call.", ["retry", "backoff"]),
    ("Jitter on the backoff spread the calls out.", ["backoff", "jitter"]),
    ("Cache warmed before the deploy.", ["cache", "deploy"]),
)


def write_seed(memory: Memory) -> dict[str, str]:
    """The six seed-000 notes; returns text → id."""
    results = memory.write_many([{"text": t, "concepts": c} for t, c in SEED_NOTES])
    return {t: r.id for (t, _), r in zip(SEED_NOTES, results, strict=True) if r.id}
