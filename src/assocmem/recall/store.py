"""Checked sources in SQL: the sources an operator names as checked, per scope, the
only ones evidence mode counts.

A part of the store (`store/parts.py`). Invariant: a reader's checked sources are those
named for the scopes it reads (its own project and channel, and the shared ones), never another
agent's.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.types import Scope


class CheckedSourceQueries(SQLStore):
    """The checked-source lists of the SQL store (mixed into `SQLStore`)."""

    @translated
    def checked_sources(self, scope: Scope) -> list[str]:
        projects, channels = scope.readable_projects, scope.readable_channels
        rows = self._query(
            "SELECT DISTINCT source FROM checked_sources WHERE agent_id = ?"
            f" AND {in_list('project_id', projects)} AND {in_list('channel', channels)}"
            " ORDER BY source",
            [scope.agent_id, *projects, *channels],
        )
        return [source for (source,) in rows]

    @translated
    def name_checked_sources(self, scope: Scope, sources: Sequence[str]) -> None:
        where = [scope.agent_id, scope.project_id, scope.channel]
        with self.transaction():
            self._conn.execute(
                "DELETE FROM checked_sources WHERE agent_id = ? AND project_id = ? AND channel = ?",
                where,
            )
            for source in sources:
                self._conn.execute(
                    "INSERT INTO checked_sources (agent_id, project_id, channel, source)"
                    " VALUES (?, ?, ?, ?)",
                    [*where, source],
                )

    part = StorePart("checked sources", migrations="assocmem.recall")
