"""Provenance and evidence: canonical sources and the gates evidence mode applies.

Invariants: variants of one origin (a full URL, its domain, the site's name) get
one canonical form, so counting sources cannot be inflated by spelling; an
evidence gate admits a memory only for what it can check: a semantic record,
from a named source, verified, and not yet due for a recheck at the moment
asked about. Confidence is never evidence on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from .concepts import normalize_text
from .filters import Condition

# Two-label public suffixes common enough to matter; a full public-suffix list is
# not worth a dependency here, and an unknown suffix only leaves two variants apart.
_TWO_LABEL_SUFFIXES = frozenset(
    {"co.uk", "org.uk", "ac.uk", "gov.uk", "com.au", "net.au", "org.au", "co.jp", "ne.jp",
     "or.jp", "co.nz", "com.br", "com.cn", "co.in", "co.kr", "com.mx", "co.za"}
)  # fmt: skip
_DOMAIN = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$")
_SKIP_LABELS = ("www", "m", "en", "mobile")


def canonical_source(source: str | None) -> str | None:
    """One name per origin: ``https://en.wikipedia.org/wiki/X``, ``wikipedia.org`` and
    ``Wikipedia`` all give ``wikipedia``; other names are normalized text."""
    if source is None:
        return None
    text = source.strip()
    host = urlsplit(text).hostname if "://" in text else None
    candidate = (host or text).lower().rstrip(".")
    if _DOMAIN.match(candidate):
        return _site(candidate)
    return normalize_text(text)


def _site(host: str) -> str:
    labels = [label for label in host.split(".") if label]
    while len(labels) > 2 and labels[0] in _SKIP_LABELS:
        labels = labels[1:]
    suffix = 2 if ".".join(labels[-2:]) in _TWO_LABEL_SUFFIXES else 1
    return labels[-suffix - 1] if len(labels) > suffix else labels[0]


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
