"""The evidence-grade ratchet: ratifications and the grade they earn a claim.

Invariants: a grade is a pure function of a claim's ratifications, its
corroboration and its author's identities, so nothing a writer puts in a write
can set it; ratifications are only appended, a claim's author cannot ratify it,
and a repeated ``(by_key, kind, lens)`` does not stack. The top grade needs a
reproduction and two distinct lenses, so one correlated auditor cannot reach it.

Honest limit: this bounds *who* may upgrade a claim (distinct identities), not
truth — a wrong claim with real reproductions still climbs — and ``by_key`` is a
string anyone can spell unless paired with attestation.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from assocmem.errors import InvalidInput, SelfRatification
from assocmem.text.clean import check_clean
from assocmem.trust.types import Grade

RATIFICATION_KINDS = ("independent_witness", "reproduction", "prior_art_empty", "audit")
GRADES = ("claimed", "corroborated", "verified", "settled")
MAX_KEY = 512


def check_ratification(kind: Any, by_key: Any, lens: Any) -> tuple[str, str, str]:
    """``(kind, by_key, lens)`` checked; a missing lens is stored as ``''``."""
    if kind not in RATIFICATION_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(RATIFICATION_KINDS)}", field="kind")
    for name, value in (("by_key", by_key), ("lens", lens)):
        if value is None and name == "lens":
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_KEY:
            raise InvalidInput(
                f"{name} must be a non-empty string of at most {MAX_KEY} chars", field=name
            )
        check_clean(value, name)
    return str(kind), str(by_key).strip(), (lens or "").strip()


def refuse_author(by_key: str, authors: Collection[str]) -> None:
    """Refuse a ratification by one of the claim's own identities."""
    if by_key in authors:
        raise SelfRatification("a claim's author cannot ratify it", field="by_key")


def grade(
    memory_id: str,
    ratifications: Sequence[tuple[str, str, str]],
    authors: Collection[str],
    corroborated: bool,
) -> Grade:
    """The grade ``ratifications`` (``(kind, by_key, lens)``) and corroboration earn.

    corroborated: corroboration by independent origins, or an independent witness;
    verified: a reproduction or audit by an identity other than the author;
    settled: verified, with a reproduction and two distinct lenses among the
    reproductions and audits. Novel only after an empty prior-art search.
    """
    others = [(k, b, lens) for k, b, lens in ratifications if b not in authors]
    kinds = {k for k, _, _ in others}
    why: list[str] = []
    rung = 0
    if corroborated or "independent_witness" in kinds:
        rung = 1
        why.append("corroborated" if corroborated else "independent_witness")
    checks = [(k, lens) for k, _, lens in others if k in ("reproduction", "audit")]
    if checks:
        rung = 2
        why.append("reproduction" if "reproduction" in kinds else "audit")
        lenses = {lens for _, lens in checks if lens}
        if "reproduction" in kinds and len(lenses) >= 2:
            rung = 3
            why.append(f"lenses:{','.join(sorted(lenses))}")
    novel = "prior_art_empty" in kinds
    if novel:
        why.append("prior_art_empty")
    return Grade(id=memory_id, grade=GRADES[rung], novel=novel, why=tuple(why))


def weakest(grades: Sequence[str]) -> str:
    """The lowest of these grades (``claimed`` for none)."""
    return min(grades, key=GRADES.index) if grades else GRADES[0]
