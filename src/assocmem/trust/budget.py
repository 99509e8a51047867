"""The per-source lifetime budget on irreversible influence.

Invariants: a spend is charged to every source contributing to the memories it
used (own source and taint), all or nothing: if any would pass its budget the
spend is denied and nothing is charged (the tightest source binds). Charges are
never refunded (`restore` lifts a slash, not a spend). The read of what was spent
and the charge run in one write transaction, so two processes cannot both spend
a last unit.

Honest limits: the budget is per source, so an attacker minting fresh identities
gets a fresh budget each; ``amount`` and irreversibility are the caller's labels,
and charging through the taint lets a rival exhaust a source by getting its
records tainted into bad spends.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.trust.attributed import UNATTRIBUTED
from assocmem.trust.store_attribution import AttributionQueries
from assocmem.trust.types import SourceBudget, SpendResult
from assocmem.types import Scope


def spend(
    store: AttributionQueries, scope: Scope, sources: Sequence[str], amount: float, budget: float
) -> SpendResult:
    """Charge ``amount`` to every source in ``sources`` unless any would exceed ``budget``."""
    charged = sorted(set(sources)) or [UNATTRIBUTED]
    with store.transaction():
        spent = store.spent(scope.agent_id, charged)
        binding = tuple(s for s in charged if spent.get(s, 0.0) + amount > budget)
        allowed = not binding
        if allowed:
            store.charge(scope.agent_id, charged, amount)
    after = {s: spent.get(s, 0.0) + (amount if allowed else 0.0) for s in charged}
    return SpendResult(
        allowed=allowed,
        amount=amount,
        budget=budget,
        sources=tuple(SourceBudget(s, after[s], max(0.0, budget - after[s])) for s in charged),
        binding=binding,
    )
