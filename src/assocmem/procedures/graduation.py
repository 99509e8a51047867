"""Graduation: an episodic memory becomes semantic only once it is corroborated.

Invariants: the evidence is what others did with the memory — a helpful outcome
(its feedback sums above zero, or its banked credits are net good) or ≥ 2 distinct
canonical origins stating it (`trust.corroboration`); its own ``kind``,
``confidence``, ``value`` or ``meta`` never count, and a slashed memory never
graduates. Every move is recorded with its evidence in the same transaction, so it
can be explained and taken back (`revert`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from assocmem.lifecycle.types import Lifecycle
from assocmem.procedures import gate
from assocmem.procedures.store import ProcedureQueries
from assocmem.procedures.types import Graduated, GraduationReport
from assocmem.store import Store, View
from assocmem.text import times
from assocmem.trust import corroboration, standing
from assocmem.trust.store import TrustRow

FROM_KIND, TO_KIND = "episodic", "semantic"
# Episodes one pass reads at most.
MAX_SCAN = 100_000


class GraduationStore(gate.Ratings, Store, Protocol):
    """What a graduation pass reads and writes: the lifecycle part's selection, the
    procedures part's graduations, rated outcomes, and what standing reads (the trust
    part's rows, restatements, slash marks and cleared troubles; memory rows)."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def graduate_memories(
        self, rows: Sequence[tuple[int, str, str, dict[str, Any]]], when: str
    ) -> None: ...

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...

    def restating(self, view: View, fingerprints: Sequence[str]) -> dict[str, list[int]]: ...

    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]: ...

    def stale_cleared(self, seqs: Sequence[int]) -> dict[int, set[str]]: ...


def graduate(store: GraduationStore, view: View, strict: bool = False) -> GraduationReport:
    """Graduate every corroborated active episode ``view`` sees; report what moved."""
    episodes = replace(view, kinds=(FROM_KIND,), statuses=("active",))
    seqs = store.select(episodes, MAX_SCAN)
    found = standing.standing_by_seq(store, replace(view, statuses=("active",)), seqs, strict)
    rated = gate.feedback_sums(store, seqs)
    moved: list[tuple[int, Graduated]] = []
    for seq in seqs:
        s = found.get(seq)
        if s is None or s.slashed:
            continue
        basis = _basis(rated.get(seq, 0.0), s.good, s.bad, s.origins)
        if basis:
            evidence: dict[str, Any] = {
                "feedback": round(rated.get(seq, 0.0), 6),
                "credits": {"good": s.good, "bad": s.bad},
                "origins": list(s.origins),
            }
            moved.append((seq, Graduated(s.id, FROM_KIND, TO_KIND, basis, evidence)))
    store.graduate_memories(
        [(seq, g.from_kind, g.to_kind, {"basis": list(g.basis), **g.evidence}) for seq, g in moved],
        times.now(),
    )
    return GraduationReport(considered=len(seqs), graduated=tuple(g for _, g in moved))


def _basis(feedback: float, good: int, bad: int, origins: Sequence[str]) -> tuple[str, ...]:
    basis = []
    if feedback > 0:
        basis.append("helpful_feedback")
    if good > bad:
        basis.append("credited")
    if len(origins) >= corroboration.MIN_ORIGINS:
        basis.append("corroborated")
    return tuple(basis)


def revert(store: ProcedureQueries, seqs: dict[str, int]) -> Lifecycle:
    """Take back the graduation in force of each memory (by id → seq)."""
    found = store.graduations(list(seqs.values()))
    rows = [(seq, *found[seq][:3]) for seq in seqs.values() if seq in found]
    store.revert_graduations(rows, times.now())
    return Lifecycle(
        changed=tuple(i for i, s in seqs.items() if s in found),
        skipped={i: "never graduated" for i, s in seqs.items() if s not in found},
    )
