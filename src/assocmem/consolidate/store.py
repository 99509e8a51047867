"""Consolidation in SQL: the dream pass's derived layer (hub flags, near-duplicate
links, state-toggle supersessions) and the feedback outcomes a cohort received.

A mixin of `SQLStore`. Invariants: raw memories are never rewritten: the derived
rows only point at them, a toggle changes only the older memory's status and
`superseded_by`, and adding a row that exists already adds nothing (so a second
pass reports nothing new). Every read is bounded by the reader's layers.
"""

from __future__ import annotations

from collections.abc import Sequence

from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.text import times
from assocmem.types import Scope


class ConsolidationQueries(SQLStore):
    """The dream pass's derived layer of the SQL store (mixed into `SQLStore`)."""

    @translated
    def flag_hubs(self, shares: Sequence[tuple[int, float]]) -> list[int]:
        """Flag memories as universal-matcher hubs; returns the seqs newly flagged."""
        if not shares:
            return []
        at = times.now()
        with self.transaction():
            known = {
                seq
                for (seq,) in self._query_in(
                    "SELECT memory_seq FROM consolidation_hubs WHERE memory_seq IN (?*)",
                    [seq for seq, _ in shares],
                )
            }
            fresh = [(seq, share) for seq, share in shares if seq not in known]
            for seq, share in fresh:
                self._conn.execute(
                    "INSERT INTO consolidation_hubs (memory_seq, share, flagged_at) VALUES (?,?,?)",
                    [seq, share, at],
                )
        return [seq for seq, _ in fresh]

    @translated
    def link_near_duplicates(self, pairs: Sequence[tuple[int, int, float]]) -> int:
        """Link near-duplicate pairs ``(a, b, similarity)``; returns how many were new."""
        at, added = times.now(), 0
        with self.transaction():
            for a, b, similarity in pairs:
                low, high = min(a, b), max(a, b)
                if self._query("SELECT 1 FROM near_duplicates WHERE a = ? AND b = ?", [low, high]):
                    continue
                self._conn.execute(
                    "INSERT INTO near_duplicates (a, b, similarity, linked_at) VALUES (?,?,?,?)",
                    [low, high, similarity, at],
                )
                added += 1
        return added

    @translated
    def supersede_toggles(self, pairs: Sequence[tuple[int, int]]) -> list[int]:
        """Retire each ``older`` memory still active in favour of ``newer``, recording
        the pair; returns the seqs retired."""
        at, retired = times.now(), []
        with self.transaction():
            for older, newer in pairs:
                if self._query(
                    "SELECT 1 FROM state_toggles WHERE older = ? AND newer = ?"
                    " AND reverted_at IS NOT NULL",
                    [older, newer],
                ):
                    continue  # a restore undid this pair: the caller's word stands
                changed = self._execute_in(
                    "UPDATE memories SET status = 'superseded', superseded_by = ?"
                    " WHERE status = 'active' AND seq IN (?*)",
                    [older],
                    before=[newer],
                )
                if not changed:
                    continue
                self._execute_in("DELETE FROM state_toggles WHERE older IN (?*)", [older])
                self._conn.execute(
                    "INSERT INTO state_toggles (older, newer, superseded_at) VALUES (?,?,?)",
                    [older, newer, at],
                )
                retired.append(older)
        return retired

    @translated
    def revert_toggles(self, seqs: Sequence[int]) -> list[int]:
        """Bring back each of ``seqs`` the toggle guard superseded (and nothing newer
        has superseded since), marking its pair reverted; returns the seqs restored."""
        at, restored = times.now(), []
        with self.transaction():
            for seq in seqs:
                pair = self._query(
                    "SELECT t.newer FROM state_toggles t JOIN memories m ON m.seq = t.older"
                    " WHERE t.older = ? AND t.reverted_at IS NULL AND m.status = 'superseded'"
                    " AND m.superseded_by = t.newer AND m.key_subject IS NULL",
                    [seq],
                )
                if not pair:
                    continue
                self._conn.execute(
                    "UPDATE memories SET status = 'active', superseded_by = NULL WHERE seq = ?",
                    [seq],
                )
                self._conn.execute(
                    "UPDATE state_toggles SET reverted_at = ? WHERE older = ?", [at, seq]
                )
                restored.append(seq)
        return restored

    @translated
    def derived_layer(self, scope: Scope) -> dict[str, int]:
        """How many hub flags, near-duplicate links and toggles the reader's layers hold."""
        layers = self._layers(scope)
        if not layers:
            return {"hubs": 0, "near_duplicates": 0, "toggles": 0}
        mine = f"SELECT seq FROM memories WHERE {in_list('scope_id', layers)}"
        counts = {}
        for name, sql in (
            ("hubs", f"SELECT COUNT(*) FROM consolidation_hubs WHERE memory_seq IN ({mine})"),
            ("near_duplicates", f"SELECT COUNT(*) FROM near_duplicates WHERE a IN ({mine})"),
            ("toggles", f"SELECT COUNT(*) FROM state_toggles WHERE older IN ({mine})"),
        ):
            counts[name] = int(self._query(sql, layers)[0][0])
        return counts

    part = StorePart("consolidation", migrations="assocmem.consolidate")
