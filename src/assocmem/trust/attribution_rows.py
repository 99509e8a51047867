"""The rows the attribution tables hand the trust room (see `trust_attribution.py`).

Invariant: every one is frozen, and holds only what the query that made it read.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReceiptRow:
    """One link of the write-receipt chain, as stored."""

    position: int
    memory_id: str
    text_sha256: str
    sources: tuple[str, ...]
    prev_hash: str
    hash: str
    public_key: str | None
    signature: str | None
    created_at: str


@dataclass(frozen=True)
class CaseRow:
    """A case the monitor raised against a source."""

    id: int
    source: str
    raised_at: str
    statistic: float
    evidence: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class MonitorRow:
    """One source's CUSUM state: the statistic, how many outcomes and how many bad it
    saw, and the ids of its latest bad outcomes."""

    source: str
    statistic: float
    observations: int
    bad: int
    evidence: tuple[str, ...]
