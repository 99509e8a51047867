"""The status of memories: archive and restore, protection, and supersession history.

Invariants: raw text never changes; archiving is reversible and never touches a
protected memory; protection shields from archiving and never renews validity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assocmem.errors import InvalidInput
from assocmem.lifecycle.store import LifecycleQueries
from assocmem.lifecycle.types import Lifecycle
from assocmem.store import View
from assocmem.types import Record, Scope


class Restorable(Protocol):
    """What restoring reads and writes: memory rows, the lifecycle part's status, and
    the dream pass's record of the toggles it superseded (the consolidation part)."""

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...

    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None: ...

    def revert_toggles(self, seqs: Sequence[int]) -> list[int]: ...


class KeyHistory(Protocol):
    """What a key's history reads (a Protocol: the record view of inspection reads it
    through a store typed for its own needs)."""

    def key_history(self, scope: Scope, subject: str, relation: str) -> list[int]: ...

    def records_by_seq(self, seqs: Sequence[int]) -> dict[int, Record]: ...


def archive(store: LifecycleQueries, seqs: Sequence[int]) -> Lifecycle:
    """Archive active memories; protected ones are skipped and named."""
    records = store.records_by_seq(list(seqs))
    skipped = {r.id: "protected" for r in records.values() if r.protected}
    chosen = [s for s, r in records.items() if not r.protected and r.status == "active"]
    store.set_lifecycle(chosen, status="archived")
    return Lifecycle(changed=tuple(records[s].id for s in chosen), skipped=skipped)


def restore(store: Restorable, seqs: Sequence[int]) -> Lifecycle:
    """Bring archived memories back, unchanged, and statements the dream pass's toggle
    guard superseded (a value a newer one of its key retired stays retired)."""
    records = store.records_by_seq(list(seqs))
    chosen = [s for s, r in records.items() if r.status == "archived"]
    store.set_lifecycle(chosen, status="active")
    toggled = store.revert_toggles([s for s, r in records.items() if r.status == "superseded"])
    back = set(chosen) | set(toggled)
    skipped = {r.id: r.status for s, r in records.items() if s not in back}
    return Lifecycle(changed=tuple(records[s].id for s in records if s in back), skipped=skipped)


def protect(store: LifecycleQueries, seqs: Sequence[int], protected: bool) -> Lifecycle:
    """Set or clear protection (it shields from archiving; it never renews validity)."""
    records = store.records_by_seq(list(seqs))
    store.set_lifecycle(list(records), protected=protected)
    return Lifecycle(changed=tuple(r.id for r in records.values()))


def history(store: KeyHistory, view: View, key: Sequence[str]) -> list[Record]:
    """Every value a supersession key held, oldest observation first, with status."""
    if isinstance(key, str) or len(key) != 2 or not all(isinstance(k, str) for k in key):
        raise InvalidInput("key must be a (subject, relation) pair", field="key")
    seqs = store.key_history(view.scope, key[0], key[1])
    found = store.records_by_seq(seqs)
    return [found[s] for s in seqs if s in found]
