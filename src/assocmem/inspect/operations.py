"""What inspection adds to `Memory`: browsing pages of memories, opening one record
whole, and the store's health (the inspect/ room), for the dashboard and operators.

Invariant: these operations only read, and only the caller's scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assocmem.inspect import browse, health, record
from assocmem.inspect.types import Health, Inspection, MemoryPage
from assocmem.links.types import FeedbackLog
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments


class InspectionOperations(MemoryBase):
    """What an operator and the dashboard look at (mixed into `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # -- inspection (the inspect/ room; what the dashboard reads) --
        "list_memories": Declaration(False),
        "feedback_log": Declaration(False),
        "inspect": Declaration(False, ("id",)),
        "health": Declaration(False),
    }

    @checked_arguments()
    def list_memories(
        self,
        limit: int = 50,
        offset: int = 0,
        kind: str | None = None,
        tag: str | None = None,
        status: str | None = None,
        source: str | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> MemoryPage:
        """A page of memories, newest first, with the total that match (for paging).

        Every status and kind is listed unless ``kind`` or ``status`` names one;
        ``tag`` keeps memories carrying it, ``source`` those from that source (as
        written or canonical) and ``where`` is the filter grammar of `read`.
        ``limit`` is 1 to 500 and ``offset`` counts from the newest.
        """
        return browse.page(
            self._store, self.scope, limit=limit, offset=offset, kind=kind, tag=tag,
            status=status, source=source, where=where,
        )  # fmt: skip

    @checked_arguments()
    def feedback_log(
        self, limit: int = 50, offset: int = 0, memory_id: str | None = None
    ) -> FeedbackLog:
        """A page of the feedback log, newest call first, with the total (for paging).

        Each call says when it was given, in which scope, its outcome, the concepts its
        question was about and the memories it rated that are still readable here.
        ``memory_id`` keeps the calls that rated that memory (not readable here:
        `UnknownMemory`). ``limit`` is 1 to 500 and ``offset`` counts from the newest.
        """
        return browse.feedback_page(
            self._store, self.scope, limit=limit, offset=offset, memory_id=memory_id
        )

    @checked_arguments()
    def inspect(self, id: str) -> Inspection:
        """One record with its key's history, the feedback that rated it, the entities
        it mentions and the declared relations it anchors or joins.

        Any status opens; an id not readable here raises `UnknownMemory`.
        """
        return record.inspection(self._store, self.scope, id)

    def health(self) -> Health:
        """The store's health: counts by kind and status, sizes on disk, the embedder,
        vectors stored and pending, and the last feedback, in this scope's view.

        The sizes are the whole store's: a served key without the operator role gets
        None for them, since other tenants' writes move them.
        """
        return health.health(self._store, self.scope, self._space, self._operator)
