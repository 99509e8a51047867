"""Forgetting in SQL: memories deleted for good, with all that their writes added.

A mixin of `SQLStore`. Invariants: a deleted memory leaves nothing that would give
its text back: its concepts, lessons, the co-occurrence its write counted (what
feedback learned between surviving concepts stays), and every link or lesson of
a concept no remaining memory of the agent carries; the latest remaining value
of a key it held becomes current again; triggers remove its mentions, relations,
full-text and vector rows. It all happens in one write transaction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

from assocmem.store.connection import SQLConnection
from assocmem.store.params import in_list, translated
from assocmem.types import Scope


class ForgetQueries(SQLConnection):
    """Deletion of memories from the SQL store (mixed into `SQLStore`)."""

    _fold_links: Callable[[], None]

    @translated
    def delete_memories(self, scope: Scope, seqs: Sequence[int]) -> int:
        layers = self._layers(scope)
        if not layers or not seqs:
            return 0
        with self.transaction():
            # Taking a memory's pairs back needs them all in `links`, none pending.
            self._fold_links()
            found = self._query(
                f"SELECT seq, scope_id FROM memories WHERE {in_list('seq', list(seqs))}"
                f" AND {in_list('scope_id', layers)}",
                [*seqs, *layers],
            )
            for seq, layer in found:
                rows = self._query(
                    "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
                )
                concepts = [c for (c,) in rows]
                key = self._query(
                    # i17 tenancy: a key's current value is per layer (access class).
                    "SELECT scope_id, key_subject, key_relation FROM memories"
                    " WHERE seq = ? AND key_subject IS NOT NULL AND status = 'active'",
                    [seq],
                )
                self._uncount_cooccurrence(seq, layer)
                self._conn.execute("DELETE FROM memory_concepts WHERE memory_seq = ?", [seq])
                # What outcomes taught about this memory points at nothing once it is gone.
                self._conn.execute("DELETE FROM lessons WHERE memory_seq = ?", [seq])
                self._conn.execute("DELETE FROM memories WHERE seq = ?", [seq])
                if key:
                    self._reactivate(key[0])
                self._drop_orphan_links(scope.agent_id, concepts)
            return len(found)

    def _reactivate(self, key: Sequence[Any]) -> None:
        # The key's current value was forgotten: the latest remaining observation of
        # it is current again, as it would be had the forgotten one never been written.
        self._conn.execute(
            "UPDATE memories SET status = 'active' WHERE seq = (SELECT seq FROM memories"
            " WHERE scope_id = ? AND key_subject = ?"  # i17 tenancy: per layer
            " AND key_relation = ? AND status = 'superseded' ORDER BY observed_at DESC, seq DESC"
            " LIMIT 1)",
            list(key),
        )

    def _drop_orphan_links(self, agent_id: str, concepts: Sequence[int]) -> None:
        # A concept no memory of the agent carries any more must not survive as the
        # end of a link, learned or counted: it would give the forgotten text back.
        agent_layers = [r[0] for r in self._query("SELECT id FROM scopes WHERE agent_id = ?",
                                                   [agent_id])]  # fmt: skip
        for concept in concepts:
            carried = self._query(
                f"SELECT 1 FROM memory_concepts WHERE {in_list('scope_id', agent_layers)}"
                " AND concept_id = ? LIMIT 1",
                [*agent_layers, concept],
            )
            if not carried:
                self._conn.execute(
                    f"DELETE FROM links WHERE {in_list('scope_id', agent_layers)}"
                    " AND (a = ? OR b = ?)",
                    [*agent_layers, concept, concept],
                )
                for table in ("lessons", "lesson_concepts"):
                    self._conn.execute(
                        f"DELETE FROM {table} WHERE {in_list('scope_id', agent_layers)}"
                        " AND concept_id = ?",
                        [*agent_layers, concept],
                    )

    def _uncount_cooccurrence(self, seq: int, layer: int) -> None:
        # What a memory's write added to its layer's links (1 per pair, to count and
        # weight) is taken back; what feedback added stays: it was learned from answers.
        concepts = sorted(
            c for (c,) in self._query(
                "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
            )
        )  # fmt: skip
        pairs = Counter(combinations(concepts, 2))
        rows = [(n, n, layer, a, b) for (a, b), n in sorted(pairs.items())]
        self._conn.executemany(
            "UPDATE links SET count = count - ?, weight = weight - ? WHERE scope_id = ?"
            " AND a = ? AND b = ?",
            rows,
        )
        # A link nothing but this memory made leaves no row behind: its mere
        # existence would say the two concepts were once written together.
        self._conn.executemany(
            "DELETE FROM links WHERE scope_id = ? AND a = ? AND b = ? AND count <= 0"
            " AND feedback_count = 0",
            [(layer, a, b) for _, _, layer, a, b in rows],
        )
