"""Retention policies given as data: rules of ``match`` filters and actions (required
fields, recheck dates, protection, archiving expired memories, procedure proposals).

Invariants: a policy is data, so a new policy needs no new code path; a repeated
workflow is only proposed as a procedure (a candidate, through the proposal path the
caller passes, the procedures room's own, once per workflow and set of episodes),
never promoted; protected memories are never archived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from assocmem.errors import InvalidInput
from assocmem.lifecycle.store import LifecycleQueries
from assocmem.recall import filters
from assocmem.store import View
from assocmem.text import times
from assocmem.types import Record

# An example of a policy, as data; `Memory.retain` never applies it unasked (it has no
# default policy). New facts must say where they come from, which version they apply
# to and what was checked, and are rechecked after a week; failed calls are kept as
# protected episodes with their version; repeated successful workflows are proposed as
# procedures once two episodes support them, never promoted here.
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
# Memories one rule reads at most.
MAX_SCAN = 100_000


class Candidate(Protocol):
    """What a rule reports of a proposed procedure."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...


class ProposeWorkflow(Protocol):
    """How a rule proposes a workflow's candidate procedure: the candidate already
    resting on these episodes, else a new one (never promoted)."""

    def __call__(
        self, name: str, episodes: Sequence[str], steps: Any, preconditions: Any, checks: Any
    ) -> Candidate: ...


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


def retain(
    store: LifecycleQueries, view: View, policy: Mapping[str, Any], propose: ProposeWorkflow
) -> list[dict[str, Any]]:
    """Apply a retention policy (rules as data) to the memories ``view`` sees; a rule's
    repeated workflows are proposed through ``propose``."""
    rules = _check_policy(policy)
    reports = []
    for rule in rules:
        rule_view = replace(view, conditions=filters.parse_where(rule.get("match"), field="match"))
        filters.check_fields(store, rule_view)
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
            report.proposals = _proposals(rule["propose_procedure"], records, propose)
        reports.append(report.__dict__)
    return reports


def _check_policy(policy: Any) -> list[Mapping[str, Any]]:
    rules = policy.get("rules") if isinstance(policy, Mapping) else None
    if not isinstance(rules, list) or not rules:
        raise InvalidInput(
            "a policy is {'rules': [rule, ...]}, at least one rule, each a dict with 'match'"
            f" (a where filter) and keys from {sorted(RULE_KEYS)}",
            field="policy",
        )
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
    store: LifecycleQueries,
    rule: Mapping[str, Any],
    records: Mapping[int, Record],
    report: RuleReport,
) -> None:
    days = rule.get("recheck_after_days")
    if days is None:
        return
    if isinstance(days, bool) or not isinstance(days, int | float) or not days > 0:  # NaN too
        raise InvalidInput("recheck_after_days must be a positive number", field="policy")
    due: dict[str, list[int]] = {}  # one update per distinct date, not per record
    for seq, record in records.items():
        if record.recheck_by is None:
            due_at = times.add_days(record.verified_at or record.observed_at, days)
            due.setdefault(due_at, []).append(seq)
            report.recheck_set.append(record.id)
    for recheck_by, seqs in due.items():
        store.set_lifecycle(seqs, recheck_by=recheck_by)


def _proposals(
    spec: Mapping[str, Any], records: Mapping[int, Record], propose: ProposeWorkflow
) -> list[dict[str, Any]]:
    """Workflows with enough successful episodes, each proposed as a candidate
    procedure (never promoted) scoped to its workflow."""
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
            candidate = _candidate(spec, str(group_by), name, wins, propose)
            proposals.append({
                "workflow": name,
                "supporting": [m.id for m in wins],
                "counterexamples": [m.id for m in counter],
                "procedure": candidate.id,
                "status": candidate.status,
            })  # fmt: skip
    return proposals


def _candidate(
    spec: Mapping[str, Any],
    group_by: str,
    name: str,
    wins: list[Record],
    propose: ProposeWorkflow,
) -> Candidate:
    """The workflow's candidate. Its steps are the spec's, else the first supporting
    episode's ``meta.steps``; it covers the workflow's cases unless the spec says
    otherwise."""
    said = next((m.meta["steps"] for m in wins if isinstance(m.meta.get("steps"), list)), None)
    steps = spec.get("steps") or said or [f"repeat the {name} workflow as its episodes did"]
    preconditions = spec.get("preconditions") or {group_by: name}
    return propose(name, [m.id for m in wins], steps, preconditions, spec.get("checks"))
