"""Credit: the application's outcomes, appended to a per-memory log standing is earned from.

An outcome banks standing only when it is independent of the memory's writer: given
with the operator's authority (a library caller, a server without keys, a key holding
the operator role), which stands for the application that runs the agents and sees
how their work resolved. A served key without that role speaks as its agent, and an
agent reads only its own memories: every outcome it gives grades what it wrote
itself, so it is logged (for the audit and the monitor's statistic) and never
banked, however often it is repeated. The operator's outcomes each count: each is
the verdict on one piece of resolved work, and a memory earns standing by repeated
successful use.

Invariant: the log is append-only (the store refuses an edit); an outcome given
while a memory is slashed, or by a caller grading its own memory, is logged but
never banked; outcomes come from the application, never from recalled content
grading itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from assocmem.errors import InvalidInput
from assocmem.store import View
from assocmem.text import times
from assocmem.trust import stale
from assocmem.trust.store import TrustRow
from assocmem.types import Scope

GOOD = ("good", "+1", "1")
BAD = ("bad", "-1")


class Crediting(stale.Clearing, Protocol):
    """What recording an outcome asks of the store: the credit log to append to, the
    standing rows, and re-crediting demoted memories (`stale.Clearing`)."""

    def add_credits(
        self, agent_id: str, seqs: Sequence[int], good: bool, when: str, independent: bool
    ) -> int: ...

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...


def check_outcome(outcome: Any) -> bool:
    """``"good"``/``+1`` → True, ``"bad"``/``-1`` → False; anything else is refused."""
    if isinstance(outcome, str) and outcome.strip().lower() in GOOD + BAD:
        return outcome.strip().lower() in GOOD
    if isinstance(outcome, int | float) and not isinstance(outcome, bool) and outcome in (1, -1):
        return outcome == 1
    raise InvalidInput('outcome must be "good" or "bad" (or +1 / -1)', field="outcome")


def record(store: Crediting, scope: Scope, seqs: Sequence[int], good: bool, operator: bool) -> int:
    """Append one outcome per memory (by seq) as ``scope``'s agent, banked only when
    given with the ``operator``'s authority; how many were logged. A banked good
    outcome re-credits a memory demoted for a retracted ancestor (`stale`)."""
    logged = store.add_credits(scope.agent_id, list(seqs), good, times.now(), independent=operator)
    if good and operator:
        rows = store.trust_rows(list(seqs))
        banked = [s for s in seqs if s in rows and rows[s].derived and not rows[s].slashed]
        if banked:
            stale.clear(store, View(scope), banked)
    return logged
