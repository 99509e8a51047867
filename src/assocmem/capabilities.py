"""The capabilities a store is assembled from: each registers its part in one line.

A capability's part of the store (its SQL for both dialects, its migrations, the
hooks the shared engine calls: `assocmem.store.parts`) lives in its own folder.
`Parts` mixes every registered part over the engine; `open_store` puts a backend's
engine in front of it. What a capability adds to `Memory` is a group of operations
in `operations/`, composed by `Memory`'s bases.

Invariant: every store a `Memory`, a pool or a command opens has every part, so it
knows every migration any of them ever applied.
"""

from __future__ import annotations

import assocmem.store
import assocmem.store.migrations
from assocmem.consolidate.store import ConsolidationQueries
from assocmem.graph.store import GraphQueries
from assocmem.inspect.store import InspectionQueries
from assocmem.lifecycle.store import LifecycleQueries
from assocmem.links.store import LinkQueries
from assocmem.links.store_feedback import FeedbackQueries
from assocmem.links.store_lessons import LessonQueries
from assocmem.links.store_reads import ReadQueries
from assocmem.portable.store import PortableQueries
from assocmem.procedures.store import ProcedureQueries
from assocmem.recall.store import CheckedSourceQueries
from assocmem.store import assembled
from assocmem.store.core import SQLStore
from assocmem.store.sqlite import SQLiteStore
from assocmem.trust.gates import StandingGates
from assocmem.trust.store_attribution import AttributionQueries
from assocmem.vault.store import VaultQueries
from assocmem.vectors.store import VectorQueries


class Parts(
    LinkQueries,  # links: co-occurrence counted by writes and moved by feedback
    LessonQueries,  # links: what outcomes taught
    FeedbackQueries,  # links: the feedback log and valence
    ReadQueries,  # links: reads kept as handles
    VectorQueries,  # vectors
    CheckedSourceQueries,  # recall: the sources evidence mode counts as checked
    GraphQueries,  # graph: declared entities and relations
    LifecycleQueries,  # lifecycle
    VaultQueries,  # vault
    StandingGates,  # trust: standing, and the gates a read passes through
    AttributionQueries,  # trust: attribution
    ConsolidationQueries,  # consolidate: the dream pass's derived layer
    ProcedureQueries,  # procedures: procedures, graduation, earned reinforcement
    InspectionQueries,  # inspect: pages, feedback read back, sizes
    PortableQueries,  # portable: a whole store out and back in
    SQLStore,
):
    """Every capability's part of the store over the shared engine; a backend's engine
    is put in front of it when a store opens."""


# The SQLite engine with every part, for callers that open a SQLite file with options
# of its own (`SQLiteStore`'s WAL bounds); `open_store` is the way for everyone else.
SQLiteParts = assembled(SQLiteStore, Parts)


def open_store(target: str, *, synchronous: str = "normal", read_only: bool | None = None) -> Parts:
    """Open the store named by ``target`` with every capability's part (see
    `assocmem.store.open_store` for the targets and options)."""
    store = assocmem.store.open_store(
        target, parts=Parts, synchronous=synchronous, read_only=read_only
    )
    assert isinstance(store, Parts)  # the assembled class has Parts among its bases
    return store


def migrations(backend: str) -> list[tuple[str, str]]:
    """``(name, sql)`` of every migration a store of ``backend`` applies: the engine's and
    every registered part's, in the order they apply."""
    return assocmem.store.migrations.migrations(backend, Parts.migration_packages())
