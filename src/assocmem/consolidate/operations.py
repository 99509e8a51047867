"""What consolidation adds to `Memory`: the dream pass, cluster-triggered consolidation
and value by cohort (the consolidate/ room).

Invariant: these operations only add a derived layer; raw text is never rewritten.
"""

from __future__ import annotations

from typing import ClassVar

from assocmem.consolidate import cohorts, dream
from assocmem.consolidate.types import ClusterConsolidation, CohortValue, Consolidation
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments
from assocmem.recall import request
from assocmem.store import View


class ConsolidationOperations(MemoryBase):
    """Consolidation's operations: the dream pass, clusters, value by cohort (mixed into
    `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # consolidation
        "consolidate": Declaration(True),
        "consolidate_clusters": Declaration(True),
        "value_by_cohort": Declaration(False),
    }

    @checked_arguments()
    def consolidate(self, keep: int | None = None) -> Consolidation:
        """The dream pass: flag hubs, link near-duplicates, supersede toggled states, keep a budget.

        It only adds a derived layer and never rewrites raw text: memories matching
        nearly every query are flagged as hubs; near-duplicates are linked, never
        merged; of two opposite statements of one subject's state ("the flag is on" /
        "the flag is off") the newer supersedes the older (`restore` brings it back).
        With ``keep``, at most that many memories stay active: the unprotected surplus
        with the lowest value × per-kind half-life decay is archived (reversibly:
        `restore`). A second pass over an unchanged store adds nothing.
        """
        if keep is not None:
            request.check_int(keep, "keep", 0, 2**62)
        return dream.consolidate(self._store, View(self.scope), keep)

    @checked_arguments()
    def consolidate_clusters(self, threshold: int = 15) -> ClusterConsolidation:
        """Consolidate each topic of episodic memories only once it has grown dense.

        Active episodic memories are grouped into topics by shared concepts; a topic
        of at least ``threshold`` memories gets the dream pass's duplicate, toggle and
        budget steps (its ``threshold`` most valuable stay active, the rest are
        archived, reversibly); sparser topics keep their raw episodes.
        """
        request.check_int(threshold, "threshold", 2, 1_000_000)
        return dream.consolidate_clusters(self._store, View(self.scope), threshold)

    @checked_arguments()
    def value_by_cohort(self, by: str = "tag") -> CohortValue:
        """Value reported per tag or per time block, never per memory.

        ``by`` is ``"tag"`` (default), ``"month"`` or ``"week"``; each cohort has its
        count of active memories, their mean value and the feedback outcomes they got.
        """
        return cohorts.value_by_cohort(self._store, View(self.scope), cohorts.check_by(by))
