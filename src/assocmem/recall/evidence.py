"""Provenance and evidence: canonical sources and the gates evidence mode applies.

Invariants: variants of one origin (a full URL, its domain, the site's name) get
one canonical form, so counting sources cannot be inflated by spelling; an
evidence gate admits a memory only for what it can check: a semantic record,
from a named source, verified, and not yet due for a recheck at the moment
asked about. Confidence is never evidence on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.schema import Condition

# Evidence mode's gates, in the order they are applied and reported.
GATES: tuple[str, ...] = ("not_semantic", "unchecked_source", "unverified", "expired")


def evidence_conditions(as_of: str) -> tuple[Condition, ...]:
    """The gates as hard conditions: semantic, sourced, verified by ``as_of``, and
    not past ``recheck_by`` at ``as_of`` (a record without one never expires)."""
    return (
        Condition("kind", "$eq", "semantic", False),
        Condition("source", "$ne", None, False),
        Condition("verified_at", "$lte", as_of, False),
        Condition("recheck_by", "$unset_or_gt", as_of, False),
    )


def failed_gate(
    kind: str, source: str | None, verified_at: str | None, recheck_by: str | None, as_of: str
) -> str | None:
    """The first gate a memory fails at ``as_of``, or None when it is evidence."""
    if kind != "semantic":
        return "not_semantic"
    if not source:
        return "unchecked_source"
    if verified_at is None or verified_at > as_of:
        return "unverified"
    if recheck_by is not None and recheck_by <= as_of:
        return "expired"
    return None


def expired(recheck_by: str | None, as_of: str) -> bool:
    """Whether a memory is past its recheck date (it stays; evidence mode skips it)."""
    return recheck_by is not None and recheck_by <= as_of


def gate_report(dropped: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """``{gate: [memory ids]}`` in gate order, for the memories each gate dropped."""
    report: dict[str, list[str]] = {gate: [] for gate in GATES}
    for memory_id, gate in dropped:
        report[gate].append(memory_id)
    return {gate: ids for gate, ids in report.items() if ids}
