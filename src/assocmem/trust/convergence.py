"""Convergence-backed versus adjudicated status, and grades loaded from the store.

Invariants: corroboration measures independence of origin, never correctness, so
agreement is reported as ``convergence-backed`` and only an out-of-band check (a
reproduction or audit ratified by an identity other than the author) makes a
claim ``adjudicated``; ``low_source_diversity`` flags at least two records stating
the claim that resolve to at most one origin (errors correlate when sources share
a substrate); a derived memory's ``lineage_grade`` is capped at its weakest
readable ancestor's grade, so trust taint propagates like source taint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from assocmem.store import Store, View
from assocmem.trust import corroboration, grades
from assocmem.trust.store import TrustQueries
from assocmem.trust.types import Grade
from assocmem.types import ConvergenceReport, ReadResult, Record

CHECKS = ("reproduction", "audit")
# How far up a derivation chain a lineage grade looks.
MAX_LINEAGE = 1000


class Grading(corroboration.Corroborating, Store, Protocol):
    """What grading a claim reads: the readable records and their ancestors, their
    corroboration (`corroboration.Corroborating`) and attribution's ratifications."""

    def ratifications(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]: ...


def authors(record: Record, attested_key: str | None = None) -> set[str]:
    """The identities a claim's author goes by: its ``author`` and attested key."""
    return {a for a in (record.author, attested_key) if a}


def _facts(
    store: Grading, view: View, records: Sequence[Record]
) -> dict[str, tuple[Grade, tuple[str, ...], int, tuple[str, ...]]]:
    """Per record id: its grade, corroborating origins, how many records state it,
    and the identities that adjudicated it."""
    seqs = store.visible_seqs(view.scope, [r.id for r in records], statuses=view.statuses)
    rows = store.trust_rows(list(seqs.values()))
    by_id = {rows[s].id: rows[s] for s in seqs.values() if s in rows}
    stating = corroboration.restating(store, view, list(by_id.values()))
    origins = corroboration.among(store, list(by_id.values()), stating, strict=False)
    ratified = store.ratifications([r.id for r in records])
    found = {}
    for record in records:
        row = by_id.get(record.id)
        who = authors(record, row.attested_key if row is not None else None)
        agreeing = origins.get(row.seq, ()) if row is not None else ()
        count = len(set(stating.get(row.fingerprint, [])) | {row.seq}) if row is not None else 1
        marks = ratified.get(record.id, [])
        graded = grades.grade(record.id, marks, who, len(agreeing) >= corroboration.MIN_ORIGINS)
        judges = tuple(sorted({b for k, b, _ in marks if k in CHECKS and b not in who}))
        found[record.id] = (graded, agreeing, count, judges)
    return found


def grade(store: Grading, view: View, record: Record) -> Grade:
    """The evidence grade of one readable record."""
    return _facts(store, view, [record])[record.id][0]


def _lineage(store: Grading, view: View, record: Record) -> list[Record]:
    """Every readable ancestor of ``record`` through ``derived_from``."""
    seen: dict[str, Record] = {}
    frontier = list(record.derived_from)
    while frontier and len(seen) < MAX_LINEAGE:
        parents = [p for p in dict.fromkeys(frontier) if p not in seen and p != record.id]
        loaded = store.records(view.scope, parents) if parents else []
        for parent in loaded:
            seen[parent.id] = parent
        frontier = [p for parent in loaded for p in parent.derived_from]
    return list(seen.values())


def report(store: Grading, view: View, record: Record) -> ConvergenceReport:
    """The convergence report of one readable record."""
    return reports(store, view, [record])[record.id]


def reports(store: Grading, view: View, records: Sequence[Record]) -> dict[str, ConvergenceReport]:
    """The convergence report of each readable record, by id: the facts of all of them
    and their ancestors are read together (a record's facts do not depend on which
    others are read with it)."""
    lineages = {r.id: _lineage(store, view, r) for r in records}
    everyone = {r.id: r for r in records}
    everyone |= {a.id: a for ancestors in lineages.values() for a in ancestors}
    facts = _facts(store, view, list(everyone.values()))
    return {r.id: _report(r, lineages[r.id], facts) for r in records}


def _report(
    record: Record,
    ancestors: Sequence[Record],
    facts: dict[str, tuple[Grade, tuple[str, ...], int, tuple[str, ...]]],
) -> ConvergenceReport:
    graded, agreeing, count, judges = facts[record.id]
    lineage = grades.weakest([facts[r.id][0].grade for r in (record, *ancestors)])
    if judges:
        status = "adjudicated"
    elif len(agreeing) >= corroboration.MIN_ORIGINS:
        status = "convergence-backed"
    else:
        status = "uncorroborated"
    return ConvergenceReport(
        id=record.id,
        status=status,
        grade=graded.grade,
        lineage_grade=lineage,
        origins=agreeing,
        corroborating=count,
        low_source_diversity=count >= 2 and len(agreeing) <= 1,
        adjudicated_by=judges,
    )


def with_status(store: Grading, view: View, result: ReadResult) -> ReadResult:
    """``result`` with each item's convergence report attached as its ``status``."""
    found = reports(store, view, [item.record for item in result.items])
    items = tuple(replace(item, status=found[item.record.id]) for item in result.items)
    return replace(result, items=items)


def claim_authors(store: TrustQueries, view: View, record: Record) -> set[str]:
    """The identities that may not ratify ``record``: its author and attested key."""
    seqs = store.visible_seqs(view.scope, [record.id], statuses=view.statuses)
    rows = store.trust_rows(list(seqs.values()))
    row = rows.get(seqs[record.id]) if record.id in seqs else None
    return authors(record, row.attested_key if row is not None else None)
