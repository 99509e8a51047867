"""The storage seam: every SQL statement and transaction lives behind `Store`.

Engine modules (links, recall) and the `Memory` API call these methods and never
see a connection, a cursor or a backend exception. The double kept for tests is
not a mock: it is `SQLiteStore` on ``:memory:``, the real engine.
"""

from __future__ import annotations

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

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(target: str, *, synchronous: str = "normal") -> Store:
    """Open the store named by ``target``: a ``postgresql://`` URL for PostgreSQL (the
    ``postgres`` extra), else a SQLite file path or ``:memory:``."""
    if target.startswith(POSTGRES_SCHEMES):
        from assocmem.store.postgres import (
            PostgresStore,  # an optional extra: imported only when asked
        )

        return PostgresStore(target)
    return SQLiteStore(target, synchronous=synchronous)


__all__ = [
    "ConceptLessons",
    "EntityRow",
    "LinkRow",
    "RankFields",
    "RelationRow",
    "SQLiteStore",
    "Store",
    "VectorRows",
    "View",
    "open_store",
]
