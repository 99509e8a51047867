"""What the trust layer adds to `Memory`: standing earned from outcomes and independent
sources, and the attribution that keeps it honest (the trust/ room).

Invariant: all of it is opt-in; a memory that uses none of it reads exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from assocmem.errors import InvalidInput, OperatorRequired
from assocmem.lifecycle.types import Lifecycle
from assocmem.operations.base import Declaration, MemoryBase, checked_arguments
from assocmem.recall import provenance
from assocmem.schema import NewMemory
from assocmem.store import View
from assocmem.text import times
from assocmem.trust import (
    attest,
    attributed,
    convergence,
    credit,
    grades,
    monitor,
    receipts,
    slash,
    stale,
    standing,
    taint,
)
from assocmem.trust.budget import spend
from assocmem.trust.types import (
    AttributionReport,
    Case,
    GateReport,
    Grade,
    MonitorResult,
    Ratified,
    SpendResult,
    StaleDerived,
    Standing,
)
from assocmem.types import STATUSES, ConvergenceReport, WriteResult
from assocmem.write import validate


class TrustOperations(MemoryBase):
    """Trust's operations: standing, slashing, checked sources and attribution (mixed
    into `Memory`)."""

    # The registry's facts of this group's operations (`surface.py`).
    declared: ClassVar[dict[str, Declaration]] = {
        # standing (the trust room)
        "credit": Declaration(True, ("ids", "outcome")),
        "standing": Declaration(False, ("ids",)),
        "influence_gate_report": Declaration(False),
        "slash": Declaration(True, ("ids",)),
        "stale_derived": Declaration(False),
        "set_checked_sources": Declaration(True, ("sources",)),
        "checked_sources": Declaration(False),
        # -- trust: attribution
        "verify_attribution": Declaration(False),
        "ratify": Declaration(True, ("id", "kind", "by_key")),
        "grade": Declaration(False, ("id",)),
        "spend_irreversible": Declaration(True, ("ids",)),
        "monitor": Declaration(True, ("ids", "outcome")),
        "cases": Declaration(False),
        "convergence_report": Declaration(False, ("id",)),
    }

    @checked_arguments()
    def credit(self, ids: Sequence[str], outcome: str | int) -> int:
        """Log the outcome these memories drove, ``"good"`` or ``"bad"`` (or +1 / -1).

        The log is append-only and is what standing is earned from: give outcomes from
        the application, on real resolved work, never from recalled content grading
        itself. Only an independent outcome is banked: one given as the operator (a
        library caller, or a served key with the operator role). A served key without
        that role grades its own agent's memories, so its outcomes, however often
        repeated, are logged and not banked; so is one given while a memory is
        slashed. Returns how many outcomes were logged.
        """
        good = credit.check_outcome(outcome)
        # Chosen and logged in one write transaction: a forget cannot fall between
        # and leave an outcome naming a memory that is gone.
        with self._store.transaction():
            seqs = self._select(ids, None, statuses=STATUSES)
            return credit.record(self._store, self.scope, seqs, good, self._operator)

    @checked_arguments()
    def standing(self, ids: Sequence[str]) -> list[Standing]:
        """The standing of these memories: outcomes, sources, taint, slash and whether
        each passes the influence gate (``earned``), in order."""
        # Chosen and read in one snapshot: a forget cannot fall between them.
        with self._store.snapshot():
            seqs = self._select(ids, None, statuses=STATUSES)
            view = self._standing_view()
            found = standing.standing_by_seq(self._store, view, seqs, self._strict)
        return [found[seq] for seq in seqs]

    def influence_gate_report(self) -> GateReport:
        """What ``read(..., influence_only=True)`` would cost here: the fraction of
        active memories it would block, the breakdown of why, and advice."""
        return standing.gate_report(self._store, View(self.scope), self._strict)

    @checked_arguments()
    def slash(self, ids: Sequence[str], scope: str = "source") -> Lifecycle:
        """Forfeit standing: of these memories (``scope="memory"``) or of every memory
        sharing their canonical source or carrying it as taint (``"source"``). They
        fail the influence gate and are marked ``slashed``, stay readable, and
        ``restore(ids, scope=...)`` brings back their exact pre-slash standing."""
        chosen = slash.check_scope(scope)
        with self._store.transaction():  # chosen and slashed as one, as for `credit`
            seqs = self._select(ids, None, statuses=STATUSES)
            return slash.slash(self._store, self._standing_view(), seqs, chosen)

    def stale_derived(self) -> list[StaleDerived]:
        """Memories whose derived_from ancestry holds one since contradicted,
        superseded or slashed. One with a superseded or slashed ancestor is
        ``demoted``: it has no standing and a read halves its score until it is
        re-derived (written anew from sound parents) or re-credited (a banked good
        `credit`, which clears the troubles known then). Nothing here changes."""
        return stale.stale_derived(self._store, View(self.scope))

    @checked_arguments()
    def set_checked_sources(self, sources: Sequence[str]) -> list[str]:
        """Name the sources evidence mode counts as checked for this scope's project and
        channel, replacing what was named there; returns them as counted (canonical:
        ``https://docs.example.com/x`` counts as ``example.com``). A read in evidence
        mode then admits a fact only from one of the sources named for the scopes it
        reads; with none named (``[]`` clears them), any named source counts. The
        operator's: a served key without that role gets `OperatorRequired`."""
        if not self._operator:
            raise OperatorRequired(
                "naming checked sources needs the operator role: it decides what evidence"
                " mode admits",
                field="sources",
            )
        named = provenance.checked_names(sources)
        self._store.name_checked_sources(self.scope, named)
        return named

    @checked_arguments()
    def checked_sources(self) -> list[str]:
        """The sources evidence mode counts as checked for this scope's reads (canonical,
        sorted); empty when none is named, and then any named source counts."""
        return self._store.checked_sources(self.scope)

    def _standing_view(self) -> View:
        return standing.counted_among(self.scope)

    def _attested(
        self, memories: Sequence[NewMemory], attestations_: Sequence[Any]
    ) -> list[tuple[str, str] | None]:
        return [
            None if a is None else attest.verify(m.text, m.source, a)
            for m, a in zip(memories, attestations_, strict=True)
        ]

    def _standing_on_write(
        self,
        memories: Sequence[NewMemory],
        results: Sequence[WriteResult],
        signed: Sequence[tuple[str, str] | None],
    ) -> list[frozenset[str]]:
        """Inside the write: record derived memories' taint and verified attestations.
        Returns each memory's taint, in order, so its receipt commits what was stored."""
        taints = [frozenset[str]()] * len(memories)
        wanted = [
            (i, r.id, signed[i] if i < len(signed) else None)
            for i, r in enumerate(results)
            if r.stored and r.id is not None
        ]
        wanted = [(i, id_, a) for i, id_, a in wanted if memories[i].derived_from or a is not None]
        if not wanted:
            return taints
        names = [id_ for _, id_, _ in wanted] + [
            p for i, _, _ in wanted for p in memories[i].derived_from
        ]
        seqs = self._store.visible_seqs(self.scope, names, statuses=STATUSES)
        derived = [(i, id_) for i, id_, _ in wanted if memories[i].derived_from]
        inherited = taint.inherit(
            self._store,
            [(seqs[id_], [seqs[p] for p in memories[i].derived_from if p in seqs])
             for i, id_ in derived],
        )  # fmt: skip
        for (i, _), found in zip(derived, inherited, strict=True):
            taints[i] = found
        for _, id_, a in wanted:
            if a is not None:
                self._store.add_attestation(seqs[id_], *a)
        return taints

    @checked_arguments()
    def verify_attribution(self, public_key: str | None = None) -> AttributionReport:
        """Check the write-receipt chain and every active memory's sources against it.

        The chain is intact unless a receipt was edited, dropped or re-linked
        (``broken_at`` names the first). A mismatch is an active memory whose current
        canonical sources (own source and inherited taint) differ from what its
        receipt committed: a relabel or a stripped taint. ``public_key`` (hex; default:
        this memory's ``receipt_key``'s) makes every receipt need a valid signature by
        it. Unsigned, the chain proves nothing against whoever can rewrite the store
        (they can recompute it); signed or not, it never proves a source was right.
        """
        expected = public_key
        if expected is None and self._receipt_key is not None:
            expected = receipts.public_hex(self._receipt_key)
        if expected is not None and not isinstance(expected, str):
            raise InvalidInput("public_key must be a hex string", field="public_key")
        return receipts.verify(self._store, self.scope, expected)

    @checked_arguments()
    def ratify(self, id: str, kind: str, by_key: str, lens: str | None = None) -> Ratified:
        """Record an external event on a claim: independent_witness, reproduction,
        prior_art_empty or audit, by the identity ``by_key`` through ``lens``.

        The claim's author cannot ratify it (`SelfRatification`); a repeated
        (by_key, kind, lens) is not stored again (``stored`` False) and adds nothing.
        """
        kind, by_key, lens_name = grades.check_ratification(kind, by_key, lens)
        view = View(self.scope, statuses=STATUSES)
        with self._store.transaction():  # found and ratified as one, as for `credit`
            (record,) = self.get([id])
            authors = convergence.claim_authors(self._store, view, record)
            grades.refuse_author(by_key, authors)
            stored = self._store.add_ratification(record.id, kind, by_key, lens_name, times.now())
        return Ratified(id=record.id, kind=kind, by_key=by_key, lens=lens, stored=stored)

    @checked_arguments()
    def grade(self, id: str) -> Grade:
        """A claim's evidence grade (claimed, corroborated, verified, settled) and novelty.

        A pure function of its ratifications and corroboration: it moves only on
        events from parties other than the author, never on anything written.
        """
        (record,) = self.get([id])
        return convergence.grade(self._store, View(self.scope, statuses=STATUSES), record)

    @checked_arguments()
    def spend_irreversible(self, ids: Sequence[str], amount: float, budget: float) -> SpendResult:
        """Charge an irreversible action that used these memories to the lifetime
        budget of every source they carry (own and inherited); denied, charging
        nothing, if any source would pass ``budget``. Never refunded by `restore`."""
        wanted = validate.check_ids(ids)
        cost = validate.check_number(amount, "amount", positive=True)
        cap = validate.check_number(budget, "budget", positive=False)
        with self._store.transaction():  # chosen and charged as one, as for `credit`
            seqs = self._select(wanted, None, statuses=STATUSES)
            charged = attributed.charged(self._store, seqs)
            sources = [s for found in charged.values() for s in found]
            return spend(self._store, self.scope, sources, cost, cap)

    @checked_arguments()
    def monitor(
        self,
        ids: Sequence[str],
        outcome: str | int,
        k: float = 0.1,
        h: float = 4.0,
        auto_slash: bool = False,
    ) -> MonitorResult:
        """Credit an outcome (as `credit` does) and run a one-sided CUSUM per source.

        Every source the memories are attributed to (own and inherited) moves
        ``S = max(0, S + x - k)``, x = 1 for bad and 0 for good; at ``S >= h`` a case
        is raised for it (see `cases`). The statistic is kept in the store, so no
        session resets it. A source holding its bad rate at or below ``k`` is never
        caught (bound it with `spend_irreversible`). ``auto_slash`` (off by default)
        slashes a source on its case; keep it for an oracle nobody can feed.
        """
        wanted = validate.check_ids(ids)
        good = credit.check_outcome(outcome)
        reference = validate.check_number(k, "k", positive=False)
        threshold = validate.check_number(h, "h", positive=True)
        if not isinstance(auto_slash, bool):
            raise InvalidInput("auto_slash must be true or false", field="auto_slash")
        view = View(self.scope, statuses=STATUSES)
        with self._store.transaction():  # chosen and credited as one, as for `credit`
            seqs = dict(zip(wanted, self._select(wanted, None, statuses=STATUSES), strict=True))
            return monitor.monitor(
                self._store, view, seqs, good, reference, threshold, auto_slash, self._operator
            )

    def cases(self) -> list[Case]:
        """The open cases `monitor` raised against sources, oldest first."""
        return monitor.cases(self._store, View(self.scope))

    @checked_arguments()
    def convergence_report(self, id: str) -> ConvergenceReport:
        """Whether a claim is convergence-backed (independent origins agree, which is
        not truth) or adjudicated (a reproduction or audit by another identity), with
        ``low_source_diversity`` and a lineage grade capped at its weakest ancestor."""
        (record,) = self.get([id])
        return convergence.report(self._store, View(self.scope, statuses=STATUSES), record)
