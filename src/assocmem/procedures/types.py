"""What procedures report: versions, graduations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assocmem.types import Plain


@dataclass(frozen=True)
class Procedure(Plain):
    """One version of a procedure and where it stands at the promotion gate.

    ``status`` is ``candidate`` (proposed; not readable as a procedure), ``rejected``
    (the gate refused it: ``reason``), ``promoted`` (``record_id`` is its
    ``procedural`` memory), ``superseded`` (a later version replaced it) or
    ``retired``. ``supporting`` are the successful episodes its preconditions cover,
    ``counterexamples`` the failed ones they cover, and ``check_results`` each check
    case with the response the procedure gave.
    """

    id: str
    name: str | None
    version: int
    status: str
    steps: tuple[Any, ...]
    preconditions: dict[str, Any]
    checks: tuple[dict[str, Any], ...]
    episodes: tuple[str, ...]
    supporting: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    check_results: tuple[dict[str, Any], ...] = ()
    reason: str | None = None
    record_id: str | None = None
    supersedes: str | None = None


@dataclass(frozen=True)
class Graduated(Plain):
    """A memory whose kind moved, and the evidence that moved it (``basis``: helpful
    feedback, a good credit, or corroborating origins)."""

    id: str
    from_kind: str
    to_kind: str
    basis: tuple[str, ...]
    evidence: dict[str, Any]


@dataclass(frozen=True)
class GraduationReport(Plain):
    """What a graduation pass looked at and what moved."""

    considered: int
    graduated: tuple[Graduated, ...]
