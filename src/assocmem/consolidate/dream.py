"""The dream pass: flag universal-matcher hubs, link near-duplicates, apply the
state-toggle guard, and archive the low-value surplus under a keep-budget; and the
same steps run only inside topics that have grown dense.

Invariants: raw text is never rewritten and nothing is merged or deleted: the pass
adds derived rows (hub flags, near-duplicate links), supersedes the older of two
opposite state statements (recorded, its text kept) and archives (`restore` brings
an archived memory back). A protected memory is never superseded or archived. A
second pass over an unchanged store adds nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from assocmem.consolidate import similar
from assocmem.consolidate.types import Cluster, ClusterConsolidation, Consolidation
from assocmem.recall.fusion import decay
from assocmem.store import View
from assocmem.text import times
from assocmem.types import KINDS, Record

# Memories one pass reads at most.
MAX_SCAN = 1_000_000
# Hubs. The probes are a deterministic sample of the store's own memories, each one
# standing for a query about it. A memory is a universal matcher when its
# distinctive concepts (each carried by under `COMMON_SHARE` of the probes: a
# common word matches everything for every memory carrying it, and says nothing
# about this one) together match at least `HUB_SHARE` of the probes. At a fifth,
# long chat turns made of everyday words passed (5 to 45 of ~600 LoCoMo turns per
# conversation); at a tenth none do, while a page listing every topic still does.
PROBES = 256
MIN_PROBES = 20
COMMON_SHARE = 0.1
HUB_SHARE = 0.5


class DreamStore(Protocol):
    """What the pass reads and writes: the lifecycle part's selection and status,
    memory rows, and the consolidation part's derived rows."""

    def select(self, view: View, limit: int) -> list[int]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...

    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None: ...

    def flag_hubs(self, shares: Sequence[tuple[int, float]]) -> list[int]: ...

    def link_near_duplicates(self, pairs: Sequence[tuple[int, int, float]]) -> int: ...

    def supersede_toggles(self, pairs: Sequence[tuple[int, int]]) -> list[int]: ...


@dataclass(frozen=True)
class Steps:
    """What one run of the duplicate, toggle and budget steps changed (store seqs)."""

    duplicate_links: int
    superseded: list[int]
    archived: list[int]


def consolidate(
    store: DreamStore, view: View, keep: int | None, now: datetime | None = None
) -> Consolidation:
    """The dream pass over the memories ``view`` sees (every kind), see the module."""
    start = time.perf_counter()
    moment = now or times.to_datetime(times.now())
    records = _active(store, view)
    hubs = store.flag_hubs(hub_shares(records))
    steps = _steps(store, records, keep, moment)
    after = len(records) - len(steps.superseded) - len(steps.archived)
    return Consolidation(
        hubs=tuple(records[s].id for s in hubs),
        duplicate_links=steps.duplicate_links,
        superseded=tuple(records[s].id for s in steps.superseded),
        archived=tuple(records[s].id for s in steps.archived),
        active_before=len(records),
        active_after=after,
        seconds=round(time.perf_counter() - start, 4),
    )


def consolidate_clusters(
    store: DreamStore, view: View, threshold: int, now: datetime | None = None
) -> ClusterConsolidation:
    """Group the active episodic memories into topics and run the duplicate, toggle
    and budget steps inside each topic of at least ``threshold`` memories, keeping its
    ``threshold`` most valuable active; sparser topics keep their raw episodes."""
    start = time.perf_counter()
    moment = now or times.to_datetime(times.now())
    records = _active(store, replace(view, kinds=("episodic",)))
    clusters = []
    for topic, members in topics(records):
        if len(members) < threshold:
            clusters.append(Cluster(topic, len(members), False))
            continue
        steps = _steps(store, {s: records[s] for s in members}, threshold, moment)
        clusters.append(Cluster(
            topic, len(members), True, steps.duplicate_links,
            tuple(records[s].id for s in steps.superseded),
            tuple(records[s].id for s in steps.archived),
        ))  # fmt: skip
    return ClusterConsolidation(threshold, tuple(clusters), round(time.perf_counter() - start, 4))


def _active(store: DreamStore, view: View) -> dict[int, Record]:
    wide = replace(view, statuses=("active",), kinds=view.kinds or KINDS)
    seqs = store.select(wide, MAX_SCAN)
    found = store.records_by_seq(seqs)
    return {s: found[s] for s in seqs if s in found}


def _steps(
    store: DreamStore, records: Mapping[int, Record], keep: int | None, now: datetime
) -> Steps:
    seqs = list(records)
    texts = [records[s].text for s in seqs]
    linked = store.link_near_duplicates(
        [(seqs[i], seqs[j], score) for i, j, score in similar.near_duplicates(texts)]
    )
    superseded = store.supersede_toggles(toggles(records))
    archived: list[int] = []
    if keep is not None:
        retired = set(superseded)
        left = {s: r for s, r in records.items() if s not in retired}
        archived = surplus(left, keep, now)
        store.set_lifecycle(archived, status="archived")
    return Steps(linked, superseded, archived)


def hub_shares(records: Mapping[int, Record]) -> list[tuple[int, float]]:
    """``(seq, share)`` of each universal matcher: the share of probes its distinctive
    concepts match (see `HUB_SHARE`), itself left out when it is a probe."""
    seqs = list(records)
    if len(seqs) < MIN_PROBES:
        return []
    stride = max(1, len(seqs) // PROBES)
    probes = seqs[::stride][:PROBES]
    masks: dict[str, int] = {}
    for bit, seq in enumerate(probes):
        for concept in records[seq].concepts:
            masks[concept] = masks.get(concept, 0) | (1 << bit)
    common = COMMON_SHARE * len(probes)
    distinctive = {c: m for c, m in masks.items() if m.bit_count() < common}
    position = {seq: bit for bit, seq in enumerate(probes)}
    hubs = []
    for seq in seqs:
        covered = 0
        for concept in records[seq].concepts:
            covered |= distinctive.get(concept, 0)
        own = position.get(seq)
        if own is not None:
            covered &= ~(1 << own)
        share = covered.bit_count() / (len(probes) - (own is not None))
        if share >= HUB_SHARE:
            hubs.append((seq, round(share, 4)))
    return hubs


def toggles(records: Mapping[int, Record]) -> list[tuple[int, int]]:
    """``(older, newer)`` pairs: the newest statement of a subject's state, in one scope
    layer, retires every older unprotected one stating the opposite."""
    groups: dict[tuple[object, ...], list[tuple[str, int, bool]]] = {}
    for seq, record in records.items():
        claim = similar.state_claim(record.text)
        if claim is None:
            continue
        layer = (record.project_id, record.channel, record.access, record.task)
        groups.setdefault((layer, claim.subject), []).append(
            (record.observed_at, seq, claim.polarity)
        )
    pairs = []
    for members in groups.values():
        members.sort()
        _, newest, polarity = members[-1]
        pairs += [
            (seq, newest)
            for _, seq, said in members[:-1]
            if said != polarity and not records[seq].protected
        ]
    return sorted(pairs)


def retention_score(record: Record, now: datetime) -> float:
    """What keeping a memory is worth: value × its kind's half-life decay since it was
    observed or (within its kind's window, see recall) last read."""
    last = max(record.observed_at, record.accessed_at or record.observed_at)
    age_days = (now - times.to_datetime(last)).total_seconds() / 86_400
    return max(0.0, record.value) * decay(record.kind, age_days)


def surplus(records: Mapping[int, Record], keep: int, now: datetime) -> list[int]:
    """The unprotected memories to archive so at most ``keep`` stay active, lowest
    retention score first (ties: the older observation goes first)."""
    excess = len(records) - keep
    if excess <= 0:
        return []
    candidates = sorted(
        (s for s, r in records.items() if not r.protected),
        key=lambda s: (retention_score(records[s], now), records[s].observed_at, s),
    )
    return sorted(candidates[:excess])


def topics(records: Mapping[int, Record]) -> list[tuple[str, list[int]]]:
    """Memories grouped by topic, largest first: a memory's topic is the concept it
    carries that the most other memories carry, short of concepts carried by more
    than half of them (those are the store's vocabulary, not a topic). A memory
    sharing no concept forms its own topic, named by its id. A topic is named in the
    spelling its first memory gave the concept."""
    frequency: dict[str, int] = {}
    for record in records.values():
        for concept in set(record.concepts):
            frequency[concept] = frequency.get(concept, 0) + 1
    ceiling = len(records) / 2
    groups: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    for seq, record in sorted(records.items()):
        shared = [c for c in set(record.concepts) if 2 <= frequency[c] <= ceiling]
        topic = min(shared, key=lambda c: (-frequency[c], c)) if shared else f"mem:{record.id}"
        if topic not in names:
            forms = dict(zip(record.concepts, record.concept_forms, strict=False))
            names[topic] = forms.get(topic, topic)
        groups.setdefault(topic, []).append(seq)
    return sorted(
        ((names[t], members) for t, members in groups.items()),
        key=lambda item: (-len(item[1]), item[0]),
    )
