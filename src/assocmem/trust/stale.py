"""Stale derivations: memories whose ``derived_from`` ancestry holds a memory since
contradicted, superseded or slashed.

Invariant: flagging only — nothing is edited; every ancestor readable here is
walked (any status), each once, so a cycle or a shared parent cannot loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.lifecycle import contradictions as conflicts
from assocmem.store import Store, View
from assocmem.types import STATUSES, Record, StaleDerived

PAGE = 500


def stale_derived(store: Store, view: View) -> list[StaleDerived]:
    """Every active derived memory ``view`` sees with a troubled ancestor, oldest first."""
    derived = [record for record in _active(store, view) if record.derived_from]
    if not derived:
        return []
    contradicted = {i for c in conflicts.contradictions(store, view) for i in (c.first, c.second)}
    known: dict[str, tuple[Record, bool]] = {}  # id -> (record, slashed)
    found = []
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
            found.append(StaleDerived(id=record.id, reasons=tuple(reasons)))
    return found


def _active(store: Store, view: View) -> list[Record]:
    records, after = [], 0
    while page := store.scan(view.scope, after=after, limit=PAGE):
        records += [record for _, record in page]
        after = page[-1][0]
    return records


def _load(
    store: Store, view: View, ids: Sequence[str], known: dict[str, tuple[Record, bool]]
) -> None:
    if not ids:
        return
    seqs = store.visible_seqs(view.scope, list(ids), statuses=STATUSES)
    records = store.records_by_seq(list(seqs.values()))
    marks = store.trust_marks([record.id for record in records.values()])
    for record in records.values():
        known[record.id] = (record, marks.get(record.id, (False, None))[0])
