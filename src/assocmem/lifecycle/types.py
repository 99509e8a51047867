"""What the lifecycle reports: contradictions and a key's history."""

from __future__ import annotations

from dataclasses import dataclass, field

from assocmem.types import Plain


@dataclass(frozen=True)
class Contradiction(Plain):
    """Two memories flagged for review (never edited): ``kind`` is ``"key"`` (one
    supersession key, different values), ``"polarity"`` (near-identical claims, one
    negated) or ``"slot"`` (one claim, word for word, with a different value in one
    place)."""

    kind: str
    first: str
    second: str
    detail: str


@dataclass(frozen=True)
class Lifecycle(Plain):
    """What a lifecycle call changed, and what it refused to touch and why."""

    changed: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)
