"""The SQL store both backends share, composed from one mixin per concern.

Invariants: many processes may write one store at once and no write, link
increment or feedback is lost, because every read-modify-write runs inside a
write transaction no other writer can interleave with (`connection.py`) and
increments are single upsert statements. Every value is a bound parameter;
identifiers come only from constants in this package. Backend exceptions are
translated to the `AssocmemError` tree before they leave (`translated`).

Where each concern lives: `connection` (transactions, savepoints, snapshots,
layers, chunked statements), `records` (the write and hydration), `visibility`
(view-bounded reads), `lexical` (match counts, the bounds of full-text
search), `links` (co-occurrence), `vectors`, `lifecycle`,
`feedback`, `lessons`, `graph` (declarations), `forget` (deletion), `vault` (indexed
notes), `trust` (standing), `trust_attribution` (receipts, ratifications, monitor,
budgets), `consolidation` (the dream pass's derived layer) and `procedures`
(procedures, graduation, reinforcement), `inspection` (what the dashboard reads),
`updates` (in-place updates) and `portable` (export and import of a whole store).
"""

from __future__ import annotations

from assocmem.store.consolidation import ConsolidationQueries
from assocmem.store.evidence import EvidenceQueries
from assocmem.store.feedback import FeedbackQueries
from assocmem.store.forget import ForgetQueries
from assocmem.store.graph import GraphQueries
from assocmem.store.inspection import InspectionQueries
from assocmem.store.lessons import LessonQueries
from assocmem.store.lexical import LexicalBounds
from assocmem.store.lifecycle import LifecycleQueries
from assocmem.store.links import LinkQueries
from assocmem.store.portable import PortableQueries
from assocmem.store.procedures import ProcedureQueries
from assocmem.store.protocol import Store
from assocmem.store.reads import ReadQueries
from assocmem.store.records import MemoryRecords
from assocmem.store.trust import TrustQueries
from assocmem.store.trust_attribution import AttributionQueries
from assocmem.store.updates import UpdateQueries
from assocmem.store.vault import VaultQueries
from assocmem.store.vectors import VectorQueries
from assocmem.store.visibility import VisibilityQueries


class SQLStore(
    MemoryRecords,
    VisibilityQueries,
    LexicalBounds,  # match counts and the recent window of full-text search
    LinkQueries,
    VectorQueries,
    LifecycleQueries,
    FeedbackQueries,
    LessonQueries,
    ReadQueries,  # reads kept as handles, and what outcomes taught them
    GraphQueries,
    ForgetQueries,
    VaultQueries,
    TrustQueries,  # standing
    AttributionQueries,  # trust: attribution
    ConsolidationQueries,  # the dream pass's derived layer
    ProcedureQueries,  # procedures, graduation, earned reinforcement
    InspectionQueries,  # inspection: pages, feedback read back, sizes
    EvidenceQueries,  # the sources evidence mode counts as checked
    UpdateQueries,  # in-place updates
    PortableQueries,  # a whole store out and back in
    Store,
):
    """The SQL both backends share; a subclass opens the connection and supplies the
    dialect (see `SQLConnection`)."""
