"""The storage seam: every SQL statement and transaction lives behind `Store`.

Engine modules (links, recall) and the `Memory` API call these methods and never
see a connection, a cursor or a backend exception. The double kept for tests is
not a mock: it is `SQLiteStore` on ``:memory:``, the real engine.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TypeVar

from assocmem.errors import InvalidInput
from assocmem.store.core import SQLStore
from assocmem.store.protocol import (
    ConceptLessons,
    EntityRow,
    LinkRow,
    RankFields,
    RelationRow,
    Store,
    VectorRows,
    View,
)
from assocmem.store.sqlite import SQLiteStore

E = TypeVar("E", bound=SQLStore)

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SUPPORTED = "a SQLite file path, ':memory:', or a postgresql:// URL"

log = logging.getLogger(__name__)


def _shown(target: str) -> str:
    """A store target fit for a log: a URL keeps its host and database, never its
    user or password."""
    if target.startswith(POSTGRES_SCHEMES):
        scheme, _, rest = target.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"
    return target


def open_store(
    target: str,
    *,
    parts: type[SQLStore] | None = None,
    synchronous: str = "normal",
    read_only: bool | None = None,
) -> SQLStore:
    """Open the store named by ``target``: a ``postgresql://`` URL for PostgreSQL (the
    ``postgres`` extra), else a SQLite file path (``~`` expanded) or ``:memory:``.

    ``parts``: a class whose bases are the capabilities' parts to mix into the engine
    (`assocmem.capabilities`); without it, the bare engine. ``read_only`` (SQLite)
    opens for reads only; None does so when the file is not writable. Any other URL
    scheme is `InvalidInput`.
    """
    log.info("opening store %s", _shown(target))
    if target.startswith(POSTGRES_SCHEMES):
        from assocmem.store.postgres import (
            PostgresStore,  # an optional extra: imported only when asked
        )

        postgres: type[PostgresStore] = assembled(PostgresStore, parts)
        return postgres(target)
    scheme, found, _ = target.partition("://")
    if found and len(scheme) > 1 and scheme.replace("+", "").isalnum():  # not C://
        raise InvalidInput(
            f"unsupported store URL scheme {scheme + '://'!r}; a store is {SUPPORTED}",
            field="target",
        )
    if target.startswith("~"):
        target = os.path.expanduser(target)
    sqlite: type[SQLiteStore] = assembled(SQLiteStore, parts)
    return sqlite(target, synchronous=synchronous, read_only=read_only)


@functools.cache
def assembled(engine: type[E], parts: type[SQLStore] | None) -> type[E]:
    """The backend's engine with ``parts`` mixed in; the engine comes first, so where
    a dialect answers a part's query its own way, its answer is the one used."""
    if parts is None:
        return engine
    return type(engine.__name__, (engine, parts), {"__module__": engine.__module__})


__all__ = [
    "ConceptLessons",
    "EntityRow",
    "LinkRow",
    "RankFields",
    "RelationRow",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "VectorRows",
    "View",
    "assembled",
    "open_store",
]
