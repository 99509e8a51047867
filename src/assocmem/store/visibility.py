"""Reads of what a view may see, in SQL: visibility of sequence numbers, concept
postings, fingerprints, authors and thread neighbours.

A mixin of `SQLStore`. Invariant: every query applies the whole view (layers,
statuses, kinds, task, `where` conditions) in SQL, so nothing outside it is
ever returned, counted or ranked.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.schema import fingerprint_key
from assocmem.store.connection import SQLConnection
from assocmem.store.params import KEYED, in_list, translated
from assocmem.store.protocol import View
from assocmem.types import Scope


class VisibilityQueries(SQLConnection):
    """The view-bounded reads of the SQL store (mixed into `SQLStore`)."""

    @translated
    def memories_with_concepts(
        self,
        view: View,
        concept_ids: Sequence[int],
        *,
        per_concept: int,
        skip: Sequence[int] = (),
    ) -> list[tuple[int, int]]:
        # One statement per concept and layer, each an ordered index scan cut by its
        # LIMIT: SQLite pays no round trip per statement, and one compound statement
        # of them all measured slower than these (PostgreSQL runs one, its own).
        exclude = f" AND NOT {in_list('mc.memory_seq', skip)}" if skip else ""
        visible, params = self._view_sql(view, self._layers(view.scope), "m")
        found: list[tuple[int, int]] = []
        for concept in concept_ids:
            newest: list[int] = []
            for layer in self._layers(view.scope):
                newest += [
                    seq
                    for (seq,) in self._query(
                        "SELECT mc.memory_seq FROM memory_concepts mc"
                        f" JOIN memories m ON m.seq = mc.memory_seq AND {visible}"
                        f" WHERE mc.scope_id = ? AND mc.concept_id = ?{exclude}"
                        " ORDER BY mc.memory_seq DESC LIMIT ?",
                        [*params, layer, concept, *skip, per_concept],
                    )
                ]
            found += [(seq, concept) for seq in sorted(newest, reverse=True)[:per_concept]]
        return found

    @translated
    def visible(self, view: View, seqs: Sequence[int]) -> set[int]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query_in(
            f"SELECT m.seq FROM memories m WHERE {where} AND m.seq IN (?*)", seqs, before=params
        )
        return {seq for (seq,) in rows}

    @translated
    def thread_adjacency(
        self, view: View, seqs: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        return self._per_seq(("adjacency", view), seqs, lambda found: self._adjacency(view, found))

    def _adjacency(
        self, view: View, seqs: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        layers = self._layers(view.scope)
        near, params = self._view_sql(view, layers, "n")
        rows = self._query_in(
            KEYED + "SELECT m.seq,"
            f" (SELECT MAX(n.seq) FROM memories n WHERE n.scope_id = m.scope_id"
            f"  AND n.thread = m.thread AND n.seq < m.seq AND {near}),"
            f" (SELECT MIN(n.seq) FROM memories n WHERE n.scope_id = m.scope_id"
            f"  AND n.thread = m.thread AND n.seq > m.seq AND {near})"
            " FROM memories m WHERE m.thread IS NOT NULL AND m.seq IN (?*)",
            seqs,
            before=[*params, *params],
        )
        return {seq: (before, after) for seq, before, after in rows}

    @translated
    def size(self, scope: Scope | None = None) -> int:
        if scope is None:
            return int(self._query("SELECT COALESCE(MAX(seq), 0) FROM memories")[0][0])
        layers = self._layers(scope)
        if not layers:
            return 0
        memo = self._memo(("size", tuple(layers)))  # a read asks more than once
        if memo is not None and "size" in memo:
            return int(memo["size"])
        size = self._layer_size(layers)
        if memo is not None:
            memo["size"] = size
        return size

    def _layer_size(self, layers: Sequence[int]) -> int:
        """How many memories ``layers`` hold (any status)."""
        (size,) = self._query(
            f"SELECT COUNT(*) FROM memories WHERE {in_list('scope_id', layers)}", layers
        )[0]
        return int(size)

    @translated
    def fingerprint_matches(self, view: View, fingerprint: str, limit: int) -> list[int]:
        layers = self._layers(view.scope)
        where, params = self._view_sql(view, layers, "m")
        rows = self._query(
            f"{KEYED}SELECT m.seq FROM memories m WHERE m.fingerprint_key = ? AND m.fingerprint = ?"
            f" AND {where} ORDER BY m.seq DESC LIMIT ?",
            [fingerprint_key(fingerprint), fingerprint, *params, limit],
        )
        return [seq for (seq,) in rows]

    @translated
    def authors(self, scope: Scope) -> list[str]:
        layers = self._layers(scope)
        if not layers or self._empty("authors"):
            return []
        rows = self._query(
            f"{KEYED}SELECT DISTINCT author FROM authors WHERE {in_list('scope_id', layers)}",
            layers,
        )
        return sorted(author for (author,) in rows)
