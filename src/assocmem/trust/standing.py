"""Standing: what a memory earned (credited outcomes, corroborating origins) and the
influence gate that admits only what earned it.

Invariant: a memory passes the gate (``earned``) when it is neither slashed nor
demoted for a retracted ancestor (`stale`) and either its banked outcomes are net good
(good > bad) or at least two distinct origins corroborate it (`corroboration`);
nothing a writer sets on the record counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from assocmem.store import View
from assocmem.trust import corroboration, stale
from assocmem.trust.store import TrustQueries, TrustRow
from assocmem.trust.types import GateReport, Standing
from assocmem.types import KINDS, STATUSES, Record, Scope

K = TypeVar("K")

BASES = ("credited", "corroborated", "slashed", "stale", "neither")


class Standings(corroboration.Corroborating, stale.Demotions, Protocol):
    """What weighing standing reads: the standing rows, corroboration
    (`corroboration.Corroborating`) and demotions (`stale.Demotions`)."""


class ActiveStandings(Standings, Protocol):
    """`Standings`, and the active memories a view sees (the gate's cost on them)."""

    def select(self, view: View, limit: int) -> list[int]: ...


class Marking(Protocol):
    """What marking records reads: whether each is slashed, and its attested key."""

    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]: ...


def counted_among(scope: Scope) -> View:
    """What standing and slashes are counted among: every memory of ``scope``, any
    status, any kind."""
    return View(scope, statuses=STATUSES, kinds=KINDS)


def basis(row: TrustRow, origins: Sequence[str], demoted: bool = False) -> str:
    """Why a memory passes the gate (``credited``, ``corroborated``), or why not
    (``slashed``; ``stale``: demoted for a retracted ancestor, `stale`; ``neither``)."""
    if row.slashed:
        return "slashed"
    if demoted:
        return "stale"
    if row.good > row.bad:
        return "credited"
    if len(origins) >= corroboration.MIN_ORIGINS:
        return "corroborated"
    return "neither"


def standing_by_seq(
    store: Standings, view: View, seqs: Sequence[int], strict: bool = False
) -> dict[int, Standing]:
    """The standing of each memory (by seq), corroboration counted among what
    ``view`` sees."""
    rows = store.trust_rows(list(seqs))
    ordered = [rows[s] for s in seqs if s in rows]
    witnesses = corroboration.origins(store, view, ordered, strict)
    derived = [row.seq for row in ordered if row.derived]
    demotions = stale.demoted(store, view, store.records_by_seq(derived)) if derived else {}
    result = {}
    for row in ordered:
        found = witnesses[row.seq]
        why = basis(row, found, row.seq in demotions)
        result[row.seq] = Standing(
            id=row.id,
            good=row.good,
            bad=row.bad,
            source=row.source,
            taint=tuple(sorted(row.taint)),
            origins=found,
            slashed=row.slashed,
            earned=why in ("credited", "corroborated"),
            basis=why,
            pre_slash=row.pre_slash,
            attested_key=row.attested_key,
        )
    return result


def standing(
    store: TrustQueries, view: View, ids: Sequence[str], strict: bool = False
) -> dict[str, Standing]:
    """The standing of each memory readable in ``view``, by id."""
    seqs = store.visible_seqs(view.scope, list(ids), statuses=view.statuses)
    by_seq = standing_by_seq(store, view, [seqs[i] for i in ids if i in seqs], strict)
    return {s.id: s for s in by_seq.values()}


def earned(store: Standings, view: View, seqs: Sequence[int], strict: bool = False) -> set[int]:
    """The memories among ``seqs`` that pass the influence gate."""
    return {seq for seq, s in standing_by_seq(store, view, seqs, strict).items() if s.earned}


def gate_report(store: ActiveStandings, view: View, strict: bool = False) -> GateReport:
    """The gate's cost on every active memory ``view`` sees, with advice."""
    seqs = store.select(view, 10_000_000)
    found = standing_by_seq(store, view, seqs, strict)
    breakdown = dict.fromkeys(BASES, 0)
    for s in found.values():
        breakdown[s.basis] += 1
    blocked = breakdown["slashed"] + breakdown["stale"] + breakdown["neither"]
    frac = blocked / len(found) if found else 0.0
    return GateReport(
        active=len(found),
        would_block=blocked,
        would_block_frac=round(frac, 6),
        breakdown=breakdown,
        strict=strict,
        advice=_advice(frac, len(found)),
    )


def _advice(frac: float, active: int) -> str:
    if active == 0:
        return "The store is empty: the gate has nothing to admit yet."
    if frac > 0.5:
        return (
            f"The gate would block {frac:.0%} of active memories: most have neither a good "
            "outcome nor two independent origins. Credit memories that answered real, resolved "
            "work (from the application, never from recalled content) before relying on it, or "
            "gate only what drives an irreversible action."
        )
    if frac > 0.1:
        return (
            f"The gate would block {frac:.0%} of active memories; rare but true ones among them "
            "are filtered too. Gate what drives an action; read plainly for context."
        )
    return f"The gate would block {frac:.0%} of active memories: it is affordable on this store."


def marked(store: Marking, records: Mapping[K, Record]) -> dict[K, Record]:
    """The records (under their keys) with their standing marks (slashed, attested
    key) set."""
    rows = store.trust_marks([record.id for record in records.values()])
    return {
        key: replace(record, slashed=rows[record.id][0], attested_key=rows[record.id][1])
        if record.id in rows
        else record
        for key, record in records.items()
    }
