"""Lifecycle of memories: archive and restore, protection, supersession history,
contradictions flagged for review, and retention policies given as data.

Invariants: raw text never changes; archiving is reversible and never touches a
protected memory; contradictions are flagged, never resolved; a retention policy
is data (rules of filters and actions), so a new policy needs no new code path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from assocmem.errors import InvalidInput
from assocmem.recall import filters
from assocmem.store import Store, View
from assocmem.text import times
from assocmem.text.concepts import STOP_WORDS, tokenize
from assocmem.types import Contradiction, Lifecycle, Record

# The retention policy of seed 001's exercise, as data. New facts must say where
# they come from, which version they apply to and what was checked, and are
# rechecked after a week; failed calls are kept as protected episodes with their
# version; repeated successful workflows are proposed as procedures once two
# episodes support them, never promoted here.
EXAMPLE_POLICY: Mapping[str, Any] = {
    "rules": [
        {
            "name": "new fact",
            "match": {"kind": "semantic"},
            "require": ["source", "version", "verified_at", "verification_scope"],
            "recheck_after_days": 7,
        },
        {
            "name": "failed call",
            "match": {"kind": "episodic", "tags": {"$contains": "failed-call"}},
            "require": ["version"],
            "protect": True,
        },
        {
            "name": "repeated workflow",
            "match": {"kind": "episodic", "tags": {"$contains": "workflow"}},
            "propose_procedure": {"group_by": "workflow", "outcome": "success", "min_support": 2},
        },
    ]
}

RULE_KEYS = frozenset(
    {"name", "match", "require", "recheck_after_days", "protect", "archive_expired",
     "propose_procedure"}
)  # fmt: skip
MAX_SCAN = 100_000
MAX_FLAGS = 200
# Two claims are "the same claim" for a polarity check when this share of their
# content words agree (Jaccard): high, so paraphrases of different facts stay apart.
POLARITY_OVERLAP = 0.6
NEGATIONS = frozenset({"not", "no", "never", "cannot", "can't", "don't", "doesn't", "didn't",
                       "isn't", "aren't", "wasn't", "won't", "without", "nor"})  # fmt: skip


def archive(store: Store, seqs: Sequence[int]) -> Lifecycle:
    """Archive active memories; protected ones are skipped and named."""
    records = store.records_by_seq(list(seqs))
    skipped = {r.id: "protected" for r in records.values() if r.protected}
    chosen = [s for s, r in records.items() if not r.protected and r.status == "active"]
    store.set_lifecycle(chosen, status="archived")
    return Lifecycle(changed=tuple(records[s].id for s in chosen), skipped=skipped)


def restore(store: Store, seqs: Sequence[int]) -> Lifecycle:
    """Bring archived memories back, unchanged."""
    records = store.records_by_seq(list(seqs))
    chosen = [s for s, r in records.items() if r.status == "archived"]
    skipped = {r.id: r.status for r in records.values() if r.status != "archived"}
    store.set_lifecycle(chosen, status="active")
    return Lifecycle(changed=tuple(records[s].id for s in chosen), skipped=skipped)


def protect(store: Store, seqs: Sequence[int], protected: bool) -> Lifecycle:
    """Set or clear protection (it shields from archiving; it never renews validity)."""
    records = store.records_by_seq(list(seqs))
    store.set_lifecycle(list(records), protected=protected)
    return Lifecycle(changed=tuple(r.id for r in records.values()))


def history(store: Store, view: View, key: Sequence[str]) -> list[Record]:
    """Every value a supersession key held, oldest observation first, with status."""
    if isinstance(key, str) or len(key) != 2 or not all(isinstance(k, str) for k in key):
        raise InvalidInput("key must be a (subject, relation) pair", field="key")
    seqs = store.key_history(view.scope, key[0], key[1])
    found = store.records_by_seq(seqs)
    return [found[s] for s in seqs if s in found]


def contradictions(store: Store, view: View) -> list[Contradiction]:
    """Incompatible pairs for review: one key with different values, and near-identical
    claims of opposite polarity. Nothing is edited."""
    wide = replace(view, statuses=("active", "superseded"))
    seqs = store.select(wide, MAX_SCAN)
    records = store.records_by_seq(seqs)
    flags = _key_conflicts(records) + _polarity_clashes(store, view, records)
    return flags[:MAX_FLAGS]


def _key_conflicts(records: Mapping[int, Record]) -> list[Contradiction]:
    groups: dict[tuple[str, str], list[Record]] = {}
    for record in records.values():
        if record.key:
            groups.setdefault(record.key, []).append(record)
    flags = []
    for key, members in sorted(groups.items()):
        current = next((m for m in members if m.status == "active"), None)
        if current is None:
            continue
        for other in members:
            if other.id != current.id and _claim(other.text) != _claim(current.text):
                flags.append(Contradiction(
                    "key", current.id, other.id,
                    f"{key[0]} / {key[1]}: current value observed {current.observed_at}, "
                    f"other observed {other.observed_at}",
                ))  # fmt: skip
    return flags


def _polarity_clashes(
    store: Store, view: View, records: Mapping[int, Record]
) -> list[Contradiction]:
    flags, seen = [], set()
    active = {s: r for s, r in records.items() if r.status == "active"}
    for seq, record in sorted(active.items()):
        words = _claim(record.text)
        if not words & NEGATIONS:
            continue
        content = sorted(words - NEGATIONS)
        for other in store.lexical(view, content, 20):
            match = active.get(other[0])
            if match is None or other[0] == seq or (min(seq, other[0]), max(seq, other[0])) in seen:
                continue
            other_words = _claim(match.text)
            if other_words & NEGATIONS:
                continue
            overlap = len(set(content) & other_words) / max(1, len(set(content) | other_words))
            if overlap >= POLARITY_OVERLAP:
                seen.add((min(seq, other[0]), max(seq, other[0])))
                flags.append(Contradiction(
                    "polarity", record.id, match.id,
                    f"{overlap:.0%} of their words agree, one is negated",
                ))  # fmt: skip
    return flags


def _claim(text: str) -> set[str]:
    return {t for t in tokenize(text) if t in NEGATIONS or (t not in STOP_WORDS and len(t) > 1)}


# -- retention --------------------------------------------------------------------


@dataclass
class RuleReport:
    """What one retention rule found and did."""

    name: str
    matched: int = 0
    incomplete: dict[str, list[str]] = field(default_factory=dict)
    recheck_set: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)


def retain(store: Store, view: View, policy: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Apply a retention policy (rules as data) to the memories ``view`` sees."""
    rules = _check_policy(policy)
    reports = []
    for rule in rules:
        rule_view = replace(view, conditions=filters.parse_where(rule.get("match"), field="match"))
        seqs = store.select(rule_view, MAX_SCAN)
        records = store.records_by_seq(seqs)
        report = RuleReport(name=str(rule.get("name", "")), matched=len(records))
        _require(rule, records, report)
        _recheck(store, rule, records, report)
        if rule.get("protect"):
            store.set_lifecycle(list(records), protected=True)
            report.protected = [r.id for r in records.values()]
        if rule.get("archive_expired"):
            now = times.now()
            expired = [
                s for s, r in records.items()
                if r.recheck_by and r.recheck_by <= now and not r.protected
            ]  # fmt: skip
            store.set_lifecycle(expired, status="archived")
            report.archived = [records[s].id for s in expired]
        if rule.get("propose_procedure"):
            report.proposals = _proposals(rule["propose_procedure"], records)
        reports.append(report.__dict__)
    return reports


def _check_policy(policy: Any) -> list[Mapping[str, Any]]:
    rules = policy.get("rules") if isinstance(policy, Mapping) else None
    if not isinstance(rules, list) or not rules:
        raise InvalidInput("a policy is {'rules': [...]}", field="policy")
    for rule in rules:
        if not isinstance(rule, Mapping) or set(rule) - RULE_KEYS or "match" not in rule:
            raise InvalidInput(
                f"each rule is a dict with 'match' and keys from {sorted(RULE_KEYS)}",
                field="policy",
            )
    return rules


def _require(rule: Mapping[str, Any], records: Mapping[int, Record], report: RuleReport) -> None:
    for name in rule.get("require", []):
        missing = [r.id for r in records.values() if getattr(r, name, None) in (None, "", ())]
        if missing:
            report.incomplete[name] = missing


def _recheck(
    store: Store, rule: Mapping[str, Any], records: Mapping[int, Record], report: RuleReport
) -> None:
    days = rule.get("recheck_after_days")
    if days is None:
        return
    if isinstance(days, bool) or not isinstance(days, int | float) or days <= 0:
        raise InvalidInput("recheck_after_days must be a positive number", field="policy")
    due: dict[str, list[int]] = {}  # one update per distinct date, not per record
    for seq, record in records.items():
        if record.recheck_by is None:
            start = times.to_datetime(record.verified_at or record.observed_at)
            due.setdefault(times.format_time(start + timedelta(days=days)), []).append(seq)
            report.recheck_set.append(record.id)
    for recheck_by, seqs in due.items():
        store.set_lifecycle(seqs, recheck_by=recheck_by)


def _proposals(spec: Mapping[str, Any], records: Mapping[int, Record]) -> list[dict[str, Any]]:
    """Workflows with enough successful episodes to propose a procedure (not promote it)."""
    group_by, outcome = spec.get("group_by"), spec.get("outcome")
    support = int(spec.get("min_support", 2))
    groups: dict[str, list[Record]] = {}
    for record in records.values():
        name = record.meta.get(group_by) if group_by else None
        if isinstance(name, str):
            groups.setdefault(name, []).append(record)
    proposals = []
    for name, members in sorted(groups.items()):
        wins = [m for m in members if outcome is None or m.meta.get("outcome") == outcome]
        counter = [m for m in members if m not in wins]
        if len(wins) >= support:
            proposals.append({
                "workflow": name,
                "supporting": [m.id for m in wins],
                "counterexamples": [m.id for m in counter],
            })  # fmt: skip
    return proposals
