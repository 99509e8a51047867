"""Lifecycle in SQL: selection by view, status, protection and recheck dates, and
the history of a supersession key.

A mixin of `SQLStore`. Invariant: only allow-listed columns are ever assigned,
each change in one write transaction; a key's history is every record that held
it in the reader's layers, oldest observation first.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import View
from assocmem.types import Scope


class LifecycleQueries(SQLStore):
    """The lifecycle of the SQL store (mixed into `SQLStore`)."""

    @translated
    def select(self, view: View, limit: int) -> list[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query(
            f"SELECT m.seq FROM memories m WHERE {where} ORDER BY m.seq LIMIT ?", [*params, limit]
        )
        return [seq for (seq,) in rows]

    @translated
    def set_lifecycle(
        self,
        seqs: Sequence[int],
        *,
        status: str | None = None,
        protected: bool | None = None,
        recheck_by: str | None = None,
    ) -> None:
        changes = [
            (column, value)
            for column, value in (
                ("status", status),
                ("protected", protected),
                ("recheck_by", recheck_by),
            )  # fmt: skip
            if value is not None
        ]
        if not changes:
            return
        assignments = ", ".join(f"{column} = ?" for column, _ in changes)  # allow-listed names
        with self.transaction():
            self._execute_in(
                f"UPDATE memories SET {assignments} WHERE seq IN (?*)",
                seqs,
                before=[int(v) if isinstance(v, bool) else v for _, v in changes],
            )

    @translated
    def key_history(self, scope: Scope, subject: str, relation: str) -> list[int]:
        layers = self._layers(scope)
        if not layers:
            return []
        rows = self._query(
            f"SELECT seq FROM memories WHERE {in_list('scope_id', layers)} AND key_subject = ?"
            " AND key_relation = ? ORDER BY observed_at, seq",
            [*layers, subject, relation],
        )
        return [seq for (seq,) in rows]

    part = StorePart("lifecycle")
