"""The shared engine both backends build on: the memory rows and what every read and
write of them needs.

Invariants: many processes may write one store at once and no write, link
increment or feedback is lost, because every read-modify-write runs inside a
write transaction no other writer can interleave with (`connection.py`) and
increments are single upsert statements. Every value is a bound parameter;
identifiers come only from constants in this package and in the parts' modules.
Backend exceptions are translated to the `AssocmemError` tree before they leave
(`translated`).

Where each concern lives: `connection` (transactions, savepoints, snapshots,
layers, chunked statements), `records` (the write and hydration), `visibility`
(view-bounded reads), `lexical` (match counts, the bounds of full-text search),
`forget` (deletion) and `updates` (in-place updates). Every capability's part of
the store (its SQL, its migrations, its hooks: `parts.py`) lives in the
capability's folder and is mixed in on top (`assocmem.capabilities`).
"""

from __future__ import annotations

from assocmem.store.forget import ForgetQueries
from assocmem.store.lexical import LexicalBounds
from assocmem.store.protocol import Store
from assocmem.store.records import MemoryRecords
from assocmem.store.updates import UpdateQueries
from assocmem.store.visibility import VisibilityQueries


class SQLStore(
    MemoryRecords,
    VisibilityQueries,
    LexicalBounds,  # match counts and the recent window of full-text search
    ForgetQueries,
    UpdateQueries,  # in-place updates
    Store,
):
    """The SQL both backends share; a subclass opens the connection and supplies the
    dialect (see `SQLConnection`)."""
