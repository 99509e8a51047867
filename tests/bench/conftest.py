"""The backend a shrunk benchmark runs on: SQLite files, or the suite's PostgreSQL server."""

from __future__ import annotations

import pytest

from tests.conftest import BACKENDS


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest) -> str:
    """A benchmark's ``--backend``: ``sqlite``, or the URL of the suite's PostgreSQL server."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_server"))
    return "sqlite"
