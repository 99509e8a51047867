"""The gates a read passes through that trust keeps: the influence gate, the demotion
of stale derivations, and the standing marks on what a read returns.

A part of the store (see `store/parts.py`) so that the read reaches them through its
store's hooks and never imports trust: a read knows it may be gated, not by whom.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assocmem.store.parts import StorePart
from assocmem.store.rows import View
from assocmem.trust import stale, standing
from assocmem.trust.store import TrustQueries
from assocmem.types import Record, Scope


class StandingGates(TrustQueries):
    """Trust's standing, and the gates a read passes through (mixed into the store)."""

    def influence_gate(self, scope: Scope, seqs: Sequence[int], strict: bool) -> set[int]:
        """The memories among ``seqs`` that earned standing, counted among every memory
        of ``scope``."""
        return standing.earned(self, standing.counted_among(scope), seqs, strict)

    def stale_folds(self, view: View, derived: Mapping[int, Record]) -> dict[int, dict[str, float]]:
        """The derived memories a retracted or superseded parent demotes, and by how much."""
        return {seq: {"stale": stale.DEMOTED_FOLD} for seq in stale.demoted(self, view, derived)}

    def standing_marks(self, records: Mapping[int, Record]) -> dict[int, Record]:
        """The records with their standing marks (slashed, attested key) set."""
        return standing.marked(self, records)

    part = StorePart(
        "standing gates",
        influence=influence_gate,
        derived_folds=stale_folds,
        mark=standing_marks,
    )
