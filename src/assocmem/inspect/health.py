"""The store's health as the caller sees it: counts by kind and status (as `stats`),
sizes on disk, the embedder in use, vectors stored and still pending, and the latest
feedback.

Invariant: every count is of the caller's scope layers. The sizes on disk are the
whole store's, which every tenant's writes move, so only the operator reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.inspect.record import feedback_entries
from assocmem.inspect.types import Health
from assocmem.links.store_feedback import FeedbackRow
from assocmem.store import Store
from assocmem.types import Scope
from assocmem.vectors.space import VectorSpace

RECENT_FEEDBACK = 10


class Checked(Store, Protocol):
    """What health reads: the engine's counts and sizes, vector counts (the vectors
    part), the latest feedback (the feedback part) and how its concepts are spelled."""

    def storage(self) -> tuple[str, int, int | None]: ...

    def vector_counts(self, scope: Scope) -> tuple[int, int]: ...

    def feedback_calls(
        self, scope: Scope, *, seq: int | None = None, limit: int | None = None
    ) -> list[FeedbackRow]: ...

    def concept_forms(
        self, scope: Scope, concept_ids: Sequence[int], per_layer: int
    ) -> dict[int, dict[str, int]]: ...


def health(store: Checked, scope: Scope, space: VectorSpace | None, operator: bool) -> Health:
    """Counts, the embedder and recent feedback in ``scope``'s view; the store's sizes
    when the caller is the ``operator``."""
    with store.snapshot():
        stats = store.stats(scope)
        backend, store_bytes, wal_bytes = store.storage()
        with_vector, without = store.vector_counts(scope)
        recent = feedback_entries(store, scope, store.feedback_calls(scope, limit=RECENT_FEEDBACK))
    return Health(
        backend=backend,
        memories=stats.memories,
        by_kind=stats.by_kind,
        by_status=stats.by_status,
        concepts=stats.concepts,
        links=stats.links,
        feedback=stats.feedback,
        store_bytes=store_bytes if operator else None,
        wal_bytes=wal_bytes if operator else None,
        embedder=space.embedder.model_id if space is not None else None,
        vectors=with_vector,
        pending_vectors=without if space is not None else 0,
        recent_feedback=recent,
    )
