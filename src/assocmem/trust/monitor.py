"""The cumulative trigger: a one-sided CUSUM per attributed source, raising cases.

Invariants: each outcome moves the statistic of every source the rated memories
are attributed to (own source and inherited taint), ``S = max(0, S + x - k)`` with
``x = 1`` for a bad outcome and 0 for a good one; the statistic lives in the store,
read and written in the same write transaction as the credit it rides on, so no
session, process or restart resets it. A source reaching ``h`` gets one open case
(not one per outcome); slashing it is left to a person unless ``auto_slash``.

Honest limits: it is CUSUM-type (a mean shift of ``x - k``), not the exact
Bernoulli likelihood-ratio form; ``k`` is a tolerated bad rate, not a wall — a
source holding its bad rate at or below ``k`` drifts the statistic to zero and is
undetectable, netting a ``k × exposure`` residual (bound it with
`spend_irreversible`); ``h`` trades false alarms (run length ~ exp(h)) against
detection delay (~ h / (rate - k)). Auto-slashing on a breach turns anyone who
can feed bad outcomes against a rival into a framing weapon, hence off by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.store import View
from assocmem.text import times
from assocmem.trust import credit, slash
from assocmem.trust.attributed import Attributing, charged
from assocmem.trust.attribution_rows import CaseRow, MonitorRow
from assocmem.trust.store_attribution import AttributionQueries
from assocmem.trust.types import Case, MonitorResult, SourceStatistic

# The latest bad outcomes kept as a source's evidence.
MAX_EVIDENCE = 50


class Monitoring(credit.Crediting, Attributing, slash.Slashing, Protocol):
    """What one monitored outcome asks of the store: crediting (`credit.Crediting`),
    the sources it is charged to (`Attributing`), a breach's slash
    (`slash.Slashing`), and attribution's CUSUM state and cases."""

    def monitor_state(self, agent_id: str, sources: Sequence[str]) -> dict[str, MonitorRow]: ...

    def set_monitor_state(self, agent_id: str, states: Sequence[MonitorRow], now: str) -> None: ...

    def raise_case(
        self, agent_id: str, source: str, statistic: float, evidence: Sequence[str], now: str
    ) -> None: ...

    def open_cases(self, agent_id: str) -> list[CaseRow]: ...


def step(state: MonitorRow, bad: bool, k: float, evidence: Sequence[str]) -> MonitorRow:
    """One CUSUM step of a source's state on one outcome."""
    kept = (*state.evidence, *evidence)[-MAX_EVIDENCE:] if bad else state.evidence
    return MonitorRow(
        source=state.source,
        statistic=max(0.0, state.statistic + (1.0 if bad else 0.0) - k),
        observations=state.observations + 1,
        bad=state.bad + int(bad),
        evidence=kept,
    )


def monitor(
    store: Monitoring,
    view: View,
    seqs: dict[str, int],
    good: bool,
    k: float,
    h: float,
    auto_slash: bool,
    operator: bool,
) -> MonitorResult:
    """Credit ``seqs`` (id → seq) with the outcome (banked only with the ``operator``'s
    authority, as `credit.record`), step every attributed source's CUSUM once, and
    raise a case where one reaches ``h``."""
    agent = view.scope.agent_id
    now = times.now()
    with store.transaction():
        credit.record(store, view.scope, list(seqs.values()), good, operator)
        attributed = charged(store, list(seqs.values()))
        fed: dict[str, list[str]] = {}
        for memory_id, seq in seqs.items():
            for source in attributed[seq]:
                fed.setdefault(source, []).append(memory_id)
        before = store.monitor_state(agent, list(fed))
        open_now = {c.source for c in store.open_cases(agent)}
        after, slashed = [], []
        for source, ids in sorted(fed.items()):
            state = before.get(source, MonitorRow(source, 0.0, 0, 0, ()))
            state = step(state, not good, k, ids)
            after.append(state)
            if state.statistic >= h and source not in open_now:
                store.raise_case(agent, source, state.statistic, state.evidence, now)
                reached = store.sharing_sources(view, [source]) if auto_slash else []
                if reached:
                    slash.slash(store, view, reached, "memory")
                    slashed.append(source)
        store.set_monitor_state(agent, after, now)
        raised = [c for c in store.open_cases(agent) if c.source not in open_now]
    return MonitorResult(
        credited=tuple(seqs),
        sources=tuple(SourceStatistic(s.source, s.statistic, s.observations, s.bad) for s in after),
        raised=tuple(_case(c) for c in raised),
        slashed=tuple(slashed),
    )


def cases(store: AttributionQueries, view: View) -> list[Case]:
    """The open cases of this agent, oldest first."""
    return [_case(c) for c in store.open_cases(view.scope.agent_id)]


def _case(row: CaseRow) -> Case:
    return Case(row.id, row.source, row.raised_at, row.statistic, row.evidence, row.status)
