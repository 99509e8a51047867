"""Value reported by cohort: per tag or per time block, never per memory, since one
memory's outcomes are too few to say anything about it.

Invariant: nothing here writes, and no result names a memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from assocmem.consolidate.types import Cohort, CohortValue
from assocmem.errors import InvalidInput
from assocmem.store import View
from assocmem.text import times
from assocmem.types import Record

COHORTS = ("tag", "month", "week")
# Memories one report reads at most.
MAX_SCAN = 1_000_000
# The cohort of a memory without tags, when cohorts are tags.
UNTAGGED = "(untagged)"


class CohortReads(Protocol):
    """What a cohort report reads: the lifecycle part's selection, memory rows and the
    feedback outcomes each memory was rated with."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...

    def outcomes_of(self, seqs: Sequence[int]) -> dict[int, list[float]]: ...


def check_by(by: object) -> str:
    if not isinstance(by, str) or by not in COHORTS:
        raise InvalidInput(f"by must be one of {', '.join(COHORTS)}", field="by")
    return by


def value_by_cohort(store: CohortReads, view: View, by: str) -> CohortValue:
    """Counts, mean value and feedback outcomes of each cohort of the active memories
    ``view`` sees, cohorts in name order."""
    seqs = store.select(view, MAX_SCAN)
    records = store.records_by_seq(seqs)
    outcomes = store.outcomes_of(seqs)
    members: dict[str, list[int]] = {}
    for seq, record in records.items():
        for cohort in cohorts_of(record, by):
            members.setdefault(cohort, []).append(seq)
    report = []
    for cohort, group in sorted(members.items()):
        rated = [o for s in group for o in outcomes.get(s, ())]
        report.append(Cohort(
            cohort=cohort,
            memories=len(group),
            mean_value=round(sum(records[s].value for s in group) / len(group), 6),
            ratings=len(rated),
            helpful=sum(o > 0 for o in rated),
            harmful=sum(o < 0 for o in rated),
            mean_outcome=round(sum(rated) / len(rated), 6) if rated else None,
        ))  # fmt: skip
    return CohortValue(by, tuple(report))


def cohorts_of(record: Record, by: str) -> list[str]:
    """The cohorts a memory belongs to: each of its tags, or its month or ISO week."""
    if by == "tag":
        return list(dict.fromkeys(record.tags)) or [UNTAGGED]
    moment: datetime = times.to_datetime(record.observed_at)
    if by == "month":
        return [f"{moment.year:04d}-{moment.month:02d}"]
    year, week, _ = moment.isocalendar()
    return [f"{year:04d}-W{week:02d}"]
