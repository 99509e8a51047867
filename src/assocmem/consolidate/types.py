"""What consolidation reports: the dream pass, clusters and value by cohort."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.types import Plain


@dataclass(frozen=True)
class Consolidation(Plain):
    """What a dream pass added to the derived layer (raw text is never rewritten):
    memories newly flagged as universal-matcher ``hubs``, near-duplicate links added,
    older state statements a newer opposite one ``superseded`` (the toggle guard), the
    ids ``archived`` under the keep-budget (`restore` brings them back), the active
    count before and after, and the ``seconds`` it took."""

    hubs: tuple[str, ...]
    duplicate_links: int
    superseded: tuple[str, ...]
    archived: tuple[str, ...]
    active_before: int
    active_after: int
    seconds: float


@dataclass(frozen=True)
class Cluster(Plain):
    """One topic of episodic memories: its ``topic`` concept, its ``size``, and
    whether it was dense enough to be ``consolidated`` (then what that did)."""

    topic: str
    size: int
    consolidated: bool
    duplicate_links: int = 0
    superseded: tuple[str, ...] = ()
    archived: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterConsolidation(Plain):
    """Cluster-triggered consolidation: every topic found, densest first, and the
    ``threshold`` a topic needed to be consolidated."""

    threshold: int
    clusters: tuple[Cluster, ...]
    seconds: float


@dataclass(frozen=True)
class Cohort(Plain):
    """Value in one cohort (a tag or a time block), never per memory: how many
    memories, their mean value, and the feedback outcomes they received
    (``helpful`` > 0, ``harmful`` < 0)."""

    cohort: str
    memories: int
    mean_value: float
    ratings: int
    helpful: int
    harmful: int
    mean_outcome: float | None


@dataclass(frozen=True)
class CohortValue(Plain):
    """Value by cohort: ``by`` is ``"tag"``, ``"month"`` or ``"week"``."""

    by: str
    cohorts: tuple[Cohort, ...]
