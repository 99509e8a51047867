"""Stores written by earlier releases open with the current code and answer as they did.

Each folder of ``tests/fixtures/legacy`` holds a store a release wrote through its
public API with every table in use (``make.py``, run with that release's code): a
SQLite file and a PostgreSQL dump, with what that release answered on them. The
current code must open each, apply the migrations it knows beyond those the store
recorded exactly once, and answer every question of `answers` exactly as recorded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assocmem import Memory
from assocmem.testing import ToyEmbedder
from tests.conftest import fresh_database, raw_query
from tests.fixtures.legacy.answers import answers, executable

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy"
RELEASES = sorted(p.name for p in LEGACY.iterdir() if (p / "expected.json").is_file())


def _restored(release: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The target of a private copy of the release's store on ``backend``."""
    if backend == "sqlite":
        copy = tmp_path / "store.sqlite"
        shutil.copyfile(LEGACY / release / "store.sqlite", copy)
        return str(copy)
    target = fresh_database(request.getfixturevalue("postgres_server"))  # skips as the suite does
    import psycopg

    dump = (LEGACY / release / "postgres.sql").read_text(encoding="utf-8")
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(executable(dump))
    return target


def _recorded(target: str) -> dict[str, str]:
    """Each migration the store records, with when it was applied."""
    return dict(raw_query(target, "SELECT name, applied_at FROM schema_migrations"))


def test_releases_have_fixtures() -> None:
    assert RELEASES, f"no legacy store fixtures under {LEGACY}"


@pytest.mark.parametrize("release", RELEASES)
def test_a_legacy_store_opens_migrates_once_and_answers_as_it_did(
    release: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = _restored(release, backend, tmp_path, request)
    written = _recorded(target)
    assert written, "the fixture records the migrations its release applied"

    with Memory(target, agent_id="ops", embedder=ToyEmbedder()) as mem:
        answered = json.loads(json.dumps(answers(mem)))
    migrated = _recorded(target)
    # What the release applied stays recorded as it was: renamed or re-applied
    # migrations would show here; only the current code's newer ones are added.
    assert {n: migrated.get(n) for n in written} == written
    with Memory(target, agent_id="ops", embedder=ToyEmbedder()):
        pass
    assert _recorded(target) == migrated, "a second open applied migrations again"

    expected = json.loads((LEGACY / release / "expected.json").read_text(encoding="utf-8"))
    recorded = expected[backend]
    assert sorted(answered) == sorted(recorded)
    for question in recorded:
        assert answered[question] == recorded[question], question
