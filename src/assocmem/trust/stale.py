"""Stale derivations: memories whose ``derived_from`` ancestry holds a memory since
contradicted, superseded or slashed, and their provenance demotion.

A derived memory whose ancestry holds a superseded or slashed memory is *demoted*: it
loses its standing (it cannot pass the influence gate) and a read folds its score by
`DEMOTED_FOLD`, until it is re-derived (a new memory derived from sound parents) or
re-credited (a good outcome banked while it is demoted clears the troubles known
then; a later trouble demotes it again). A contradiction found by review (polarity or
slot) is flagged by `stale_derived` and demotes nothing: finding one reads the whole
store, which no read or gate can afford, and a flag is for review, not a verdict.

Invariant: nothing here edits a memory; every ancestor readable here is walked (any
status), each once, so a cycle or a shared parent cannot loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from assocmem.lifecycle import contradictions
from assocmem.store import Store, View
from assocmem.trust.types import StaleDerived
from assocmem.types import STATUSES, Record, Scope

PAGE = 500
# The fold of a demoted memory's read score: a derivation from a retracted parent
# keeps half its rank, so it yields to a sound memory of similar relevance but is
# still found when nothing else answers.
DEMOTED_FOLD = 0.5
# The troubles that demote; "contradicted" only flags.
DEMOTING = ("superseded", "slashed")


class Demotions(Store, Protocol):
    """What finding demotions reads: readable records by id and by seq, whether each is
    slashed, and the troubles re-credits have cleared."""

    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]: ...

    def stale_cleared(self, seqs: Sequence[int]) -> dict[int, set[str]]: ...


class Clearing(Demotions, Protocol):
    """`Demotions`, and recording a re-credit's clearance."""

    def clear_stale(self, seq: int, reasons: Sequence[str]) -> None: ...


class Derivations(Demotions, contradictions.ContradictionReads, Protocol):
    """What listing stale derivations reads: demotions, contradictions, and every
    memory of a scope page by page."""

    def scan(self, scope: Scope, *, after: int, limit: int) -> list[tuple[int, Record]]: ...


def stale_derived(store: Derivations, view: View) -> list[StaleDerived]:
    """Every active derived memory ``view`` sees with a troubled ancestor, oldest first,
    with whether it is demoted now."""
    derived = [record for record in _active(store, view) if record.derived_from]
    if not derived:
        return []
    contradicted = {
        i for c in contradictions.contradictions(store, view) for i in (c.first, c.second)
    }
    found = []
    troubled = _troubles(store, view, derived, contradicted)
    pairs = _seqs(store, view, derived)
    demotions = demoted(store, view, dict(pairs))
    demoted_ids = {record.id for seq, record in pairs if seq in demotions}
    for record in derived:
        if record.id in troubled:
            found.append(StaleDerived(id=record.id, reasons=troubled[record.id],
                                      demoted=record.id in demoted_ids))  # fmt: skip
    return found


def demoted(
    store: Demotions, view: View, records: Mapping[int, Record]
) -> dict[int, tuple[str, ...]]:
    """Those of ``records`` (by seq) demoted now, with the troubles that demote them:
    a superseded or slashed ancestor that no re-credit has cleared."""
    derived = {seq: r for seq, r in records.items() if r.derived_from}
    if not derived:
        return {}
    troubled = _troubles(store, view, list(derived.values()), frozenset())
    if not troubled:
        return {}
    cleared = store.stale_cleared([seq for seq, r in derived.items() if r.id in troubled])
    return {
        seq: troubled[record.id]
        for seq, record in derived.items()
        if record.id in troubled and not set(troubled[record.id]) <= cleared.get(seq, set())
    }


def clear(store: Clearing, view: View, seqs: Sequence[int]) -> None:
    """Record a re-credit of these memories: the troubles demoting each now no longer do."""
    demotions = demoted(store, view, store.records_by_seq(list(seqs)))
    cleared = store.stale_cleared(list(demotions)) if demotions else {}
    for seq, reasons in demotions.items():
        store.clear_stale(seq, sorted({*reasons, *cleared.get(seq, ())}))


def _troubles(
    store: Demotions, view: View, derived: Sequence[Record], contradicted: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """``"<ancestor id>: <what>"`` for each of ``derived`` with a troubled ancestor."""
    contradicted = set(contradicted)
    known: dict[str, tuple[Record, bool]] = {}  # id -> (record, slashed)
    found = {}
    for record in derived:
        reasons = []
        seen: set[str] = set()
        frontier = list(record.derived_from)
        while frontier:
            _load(store, view, [i for i in frontier if i not in known], known)
            nxt = []
            for ancestor in frontier:
                if ancestor in seen or ancestor not in known:
                    continue
                seen.add(ancestor)
                parent, slashed = known[ancestor]
                reasons += [
                    f"{ancestor}: {what}"
                    for what, hit in (
                        ("contradicted", ancestor in contradicted),
                        ("superseded", parent.status == "superseded"),
                        ("slashed", slashed),
                    )
                    if hit
                ]
                nxt += [p for p in parent.derived_from if p not in seen]
            frontier = nxt
        if reasons:
            found[record.id] = tuple(reasons)
    return found


def _active(store: Derivations, view: View) -> list[Record]:
    records, after = [], 0
    while page := store.scan(view.scope, after=after, limit=PAGE):
        records += [record for _, record in page]
        after = page[-1][0]
    return records


def _seqs(store: Demotions, view: View, records: Sequence[Record]) -> list[tuple[int, Record]]:
    seqs = store.visible_seqs(view.scope, [r.id for r in records], statuses=STATUSES)
    return [(seqs[r.id], r) for r in records if r.id in seqs]


def _load(
    store: Demotions, view: View, ids: Sequence[str], known: dict[str, tuple[Record, bool]]
) -> None:
    if not ids:
        return
    seqs = store.visible_seqs(view.scope, list(ids), statuses=STATUSES)
    records = store.records_by_seq(list(seqs.values()))
    marks = store.trust_marks([record.id for record in records.values()])
    for record in records.values():
        known[record.id] = (record, marks.get(record.id, (False, None))[0])
