"""Inspection in SQL: pages of memories, and the store's sizes on disk. (The feedback
log as read back is the feedback part's, the relations of a memory and who declared
what the graph's, vector counts the vectors'.)

A mixin of `SQLStore`. Invariant: every query reads only the reader's scope layers
(pages apply the whole view), so nothing one tenant reads here depends on another
tenant's rows; nothing here writes. The store's sizes on disk are the backend's
(`storage`).
"""

from __future__ import annotations

from assocmem.store.core import SQLStore
from assocmem.store.params import translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import View


class InspectionQueries(SQLStore):
    """The inspection reads of the SQL store (mixed into `SQLStore`)."""

    @translated
    def memory_page(
        self, view: View, source: str | None, limit: int, offset: int
    ) -> tuple[list[int], int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        if source is not None:
            where += " AND (m.source = ? OR m.source_canonical = ?)"
            params += [source, source]
        with self.snapshot():  # the page and its total from one state
            (total,) = self._query(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)[0]
            rows = self._query(
                f"SELECT m.seq FROM memories m WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
        return [seq for (seq,) in rows], int(total)

    def storage(self) -> tuple[str, int, int | None]:
        """The backend's name, the store's size in bytes and its WAL's (None: not a file)."""
        raise NotImplementedError

    part = StorePart("inspection")
