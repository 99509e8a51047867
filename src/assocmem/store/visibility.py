"""Reads of what a view may see, in SQL: visibility of sequence numbers, concept
postings, fingerprints, authors and thread neighbours.

A mixin of `SQLStore`. Invariant: every query applies the whole view (layers,
statuses, kinds, task, `where` conditions) in SQL, so nothing outside it is
ever returned, counted or ranked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import filterfalse, islice

from assocmem.schema import fingerprint_key
from assocmem.store.connection import SQLConnection
from assocmem.store.params import KEYED, in_list, translated
from assocmem.store.protocol import View
from assocmem.types import Scope

# Carriers read beyond those asked for, for the skipped memories among them: a read
# skips the memories its concept arm ranked, and few of those are among the newest
# carriers of another concept.
SKIP_SLACK = 8


class VisibilityQueries(SQLConnection):
    """The view-bounded reads of the SQL store (mixed into `SQLStore`)."""

    @translated
    def memories_with_concepts(
        self, view: View, concept_ids: Sequence[int], *, per_concept: int, skip: Sequence[int] = ()
    ) -> dict[int, list[int]]:
        # Each concept's newest visible carriers are remembered with the read memo
        # (`_kept_lists`): the next read that asks the same concept (a speaker's name, a
        # hub its expansion reaches) asks nothing. Few of the skipped memories are among
        # a concept's newest, so `SKIP_SLACK` more than asked are read first; only a
        # concept left short by the skipped ones is read again, as deep as they can
        # reach (one more per skipped memory), which keeps at least ``per_concept``
        # wherever that many exist.
        left_out = set(skip)
        concepts = list(dict.fromkeys(concept_ids))
        first = per_concept + min(SKIP_SLACK, len(left_out))
        carriers = self._carriers_besides(view, concepts, per_concept, left_out, first)
        short = [c for c, (_, cut) in carriers.items() if cut]
        if short:
            deepest = per_concept + len(left_out)
            carriers.update(self._carriers_besides(view, short, per_concept, left_out, deepest))
        return {c: seqs for c, (seqs, _) in carriers.items() if seqs}

    def _carriers_besides(
        self, view: View, concepts: list[int], per_concept: int, left_out: set[int], wanted: int
    ) -> dict[int, tuple[list[int], bool]]:
        """Each concept's ``per_concept`` newest visible carriers not in ``left_out``, from
        its ``wanted`` newest; and whether those were cut short by the ones left out (the
        concept has more carriers, and fewer than ``per_concept`` were kept)."""
        kept = self._kept_lists(
            ("carriers", view),
            [(c, wanted) for c in concepts],
            lambda missing: self._newest_carriers(view, [c for c, _ in missing], wanted),
        )
        found: dict[int, tuple[list[int], bool]] = {}
        for c, seqs in kept.items():
            besides = list(islice(filterfalse(left_out.__contains__, seqs), per_concept))
            found[c] = (besides, len(besides) < per_concept and len(seqs) >= wanted)
        return found

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
