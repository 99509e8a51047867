"""Slash and restore: forfeiting standing, reversibly.

Invariant: a slash deletes nothing and edits no record: its memories fail the
influence gate and are marked, and the standing each had when first slashed is
saved, so a second slash changes nothing a restore must undo and one restore
brings back the exact pre-slash standing. Scope ``"source"`` reaches every memory
whose own canonical source, or taint, is the origin of a named memory's source
(so a summary of a summary it fed is burnt too).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from assocmem.errors import InvalidInput
from assocmem.lifecycle.types import Lifecycle
from assocmem.store import View
from assocmem.text import times
from assocmem.text.sources import origins
from assocmem.trust.store import TrustQueries, TrustRow

SCOPES = ("memory", "source")


class Reaching(Protocol):
    """What finding a slash's reach reads: the named memories' sources, and the
    memories the view sees that share them."""

    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]: ...

    def view_sources(self, view: View) -> list[str]: ...

    def sharing_sources(self, view: View, sources: Sequence[str]) -> list[int]: ...


class Slashing(Reaching, Protocol):
    """`Reaching`, and marking what it reaches slashed in one transaction."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def slash_memories(self, seqs: Sequence[int], when: str) -> None: ...


def check_scope(scope: Any) -> str:
    """A slash scope: ``"memory"`` or ``"source"``."""
    if scope not in SCOPES:
        raise InvalidInput('scope must be "memory" or "source"', field="scope")
    return str(scope)


def reach(store: Reaching, view: View, seqs: Sequence[int], scope: str) -> list[int]:
    """The memories a slash (or restore) of ``seqs`` at ``scope`` applies to."""
    if scope == "memory":
        return sorted(set(seqs))
    named = {r.source for r in store.trust_rows(list(seqs)).values() if r.source}
    resolved = origins([*store.view_sources(view), *named])
    wanted = {resolved[s] for s in named}
    matched = sorted(s for s, origin in resolved.items() if origin in wanted)
    return sorted(set(seqs) | set(store.sharing_sources(view, matched)))


def slash(store: Slashing, view: View, seqs: Sequence[int], scope: str) -> Lifecycle:
    """Forfeit the standing of what ``seqs`` reach at ``scope``."""
    with store.transaction():
        reached = reach(store, view, seqs, scope)
        store.slash_memories(reached, times.now())
        return Lifecycle(changed=_ids(store, reached))


def lift(store: TrustQueries, view: View, seqs: Sequence[int], scope: str) -> Lifecycle:
    """Lift the slash of what ``seqs`` reach at ``scope``; unslashed ones are skipped."""
    with store.transaction():
        reached = reach(store, view, seqs, scope)
        rows = store.trust_rows(reached)  # ids and slashes in one read
        lifted = [s for s in reached if rows[s].slashed]
        store.unslash_memories(lifted)
        return Lifecycle(
            changed=tuple(rows[s].id for s in lifted),
            skipped={rows[s].id: "not slashed" for s in reached if s not in lifted},
        )


def _ids(store: Reaching, seqs: Sequence[int]) -> tuple[str, ...]:
    rows = store.trust_rows(list(seqs))
    return tuple(rows[s].id for s in seqs)
