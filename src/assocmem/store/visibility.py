"""Reads of what a view may see, in SQL: visibility of sequence numbers, concept
postings, fingerprints, authors and thread neighbours.

A mixin of `SQLStore`. Invariant: every query applies the whole view (layers,
statuses, kinds, task, `where` conditions) in SQL, so nothing outside it is
ever returned, counted or ranked.
"""

from __future__ import annotations

import json
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
        self, view: View, concept_ids: Sequence[int], *, per_concept: int, skip: Sequence[int] = ()
    ) -> dict[int, list[int]]:
        # Each concept's newest visible carriers, as many as asked plus one per skipped
        # memory, are remembered with the read memo (`_memo`): the next read that asks
        # the same concept (a speaker's name, a hub its expansion reaches) asks nothing.
        # Leaving out the skipped ones afterwards keeps at least ``per_concept``
        # wherever that many exist.
        wanted = per_concept + len(skip)
        kept = self._kept_lists(
            ("carriers", view),
            [(c, wanted) for c in dict.fromkeys(concept_ids)],
            lambda missing: self._newest_carriers(view, [c for c, _ in missing], wanted),
        )
        left_out = set(skip)
        carriers = {
            c: [seq for seq in seqs if seq not in left_out][:per_concept]
            for c, seqs in kept.items()
        }
        return {c: seqs for c, seqs in carriers.items() if seqs}

    def _newest_carriers(
        self, view: View, concept_ids: Sequence[int], limit: int
    ) -> dict[int, list[int]]:
        """Each concept's ``limit`` newest carriers ``view`` admits, newest first."""
        # One statement: for each concept and layer, an ordered index scan cut by its
        # LIMIT, run as a correlated subquery over the bound lists (PostgreSQL runs
        # its own, a LATERAL join).
        layers = self._layers(view.scope)
        if not concept_ids or not layers:
            return {}
        visible, params = self._view_sql(view, layers, "m")
        rows = self._query(
            "SELECT c.value, (SELECT group_concat(seq) FROM (SELECT mc.memory_seq AS seq"
            f" FROM memory_concepts mc JOIN memories m ON m.seq = mc.memory_seq AND {visible}"
            " WHERE mc.scope_id = l.value AND mc.concept_id = c.value"
            " ORDER BY mc.memory_seq DESC LIMIT ?)) FROM json_each(?) c, json_each(?) l",
            [*params, limit, json.dumps(list(concept_ids)), json.dumps(layers)],
        )
        found: dict[int, list[int]] = {}
        for concept, seqs in rows:
            if seqs:
                found.setdefault(concept, []).extend(map(int, seqs.split(",")))
        # Each layer's newest, merged: the concept's newest in all of them.
        return {c: sorted(seqs, reverse=True)[:limit] for c, seqs in found.items()}

    @translated
    def visible(self, view: View, seqs: Sequence[int]) -> set[int]:
        return set(self._per_seq(("visible", view), seqs, lambda found: self._visible(view, found)))

    def _visible(self, view: View, seqs: Sequence[int]) -> dict[int, bool]:
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        rows = self._query_in(
            f"SELECT m.seq FROM memories m WHERE {where} AND m.seq IN (?*)", seqs, before=params
        )
        return {seq: True for (seq,) in rows}

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
        size: int = self._remembered(("size", tuple(layers)), lambda: self._layer_size(layers))
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
        return list(self._remembered(("authors", tuple(layers)), lambda: self._authors(layers)))

    def _authors(self, layers: Sequence[int]) -> tuple[str, ...]:
        rows = self._query(
            f"{KEYED}SELECT DISTINCT author FROM authors WHERE {in_list('scope_id', layers)}",
            layers,
        )
        return tuple(sorted(author for (author,) in rows))
