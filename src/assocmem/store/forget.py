"""Forgetting in SQL: memories deleted for good, with all that their writes added.

A mixin of `SQLStore`. Invariants: a deleted memory leaves nothing that would give
its text back: its concepts, lessons, the co-occurrence its write counted (what
feedback learned between surviving concepts stays), and every link or lesson of
a concept no remaining memory of the agent carries; the latest remaining value
of a key it held becomes current again; triggers remove its mentions, relations,
full-text and vector rows. It all happens in one write transaction.

Erasure (SPEC C12): once `delete_memories` returns, the bytes of the forgotten text,
of an author no remaining memory of the layer names, and of a concept name nothing
remaining carries are gone from the store's files too: the name rows are deleted,
feedback log rows that rated only forgotten memories or named a forgotten concept
are deleted, the backend purges its text index in the transaction
(`_purge_text_index`) and, once committed, rewrites what still holds dead bytes
(`_scrub_files`: SQLite's WAL, PostgreSQL's dead tuples).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

from assocmem.store.connection import CONCEPTS_EPOCH, SQLConnection
from assocmem.store.params import in_list, translated
from assocmem.types import Scope


class ForgetQueries(SQLConnection):
    """Deletion of memories from the SQL store (mixed into `SQLStore`)."""

    _fold_links: Callable[[], None]
    _forget_standing: Callable[[int], None]  # trust.py
    _forget_attribution: Callable[[int], None]  # trust_attribution.py
    _forget_procedures: Callable[[int], None]  # procedures.py
    _forget_reads: Callable[[int], None]  # reads.py

    @translated
    def delete_memories(self, scope: Scope, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        with self.transaction():
            # Read inside the transaction: an update committed since the caller chose
            # ``seqs`` may have moved one into a layer new to this connection.
            layers = self._layers(scope)
            if not layers:
                return 0
            # Taking a memory's pairs back needs them all in `links`, none pending.
            self._fold_links()
            found = self._query(
                f"SELECT seq, scope_id FROM memories WHERE {in_list('seq', list(seqs))}"
                f" AND {in_list('scope_id', layers)}",
                [*seqs, *layers],
            )
            seqs = [seq for seq, _ in found]
            authors = self._query_in(
                "SELECT DISTINCT scope_id, author FROM memories WHERE author IS NOT NULL"
                " AND seq IN (?*)",
                seqs,
            )
            rated = [f for (f,) in self._query_in(
                "SELECT DISTINCT feedback_id FROM feedback_items WHERE memory_seq IN (?*)", seqs
            )]  # fmt: skip
            touched: set[int] = set()
            for seq, layer in found:
                rows = self._query(
                    "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
                )
                concepts = [c for (c,) in rows]
                touched.update(concepts)
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
                self._forget_standing(seq)  # its credits, taint, slash, attestation
                self._forget_attribution(seq)  # its ratifications
                self._forget_procedures(seq)  # its graduation record
                self._forget_reads(seq)  # the reads it answered
                self._conn.execute("DELETE FROM memories WHERE seq = ?", [seq])
                if key:
                    self._reactivate(key[0])
                self._drop_orphan_links(scope.agent_id, concepts)
            if found:
                self._drop_orphan_authors(authors)
                self._drop_orphan_feedback(rated, self._drop_orphan_concepts(sorted(touched)),
                                           scope.agent_id)  # fmt: skip
                self._purge_text_index()
        if found and not self._depth:
            self._scrub_files()
        return len(found)

    def _purge_text_index(self) -> None:
        """Rewrite the full-text index so no deleted row's terms survive in it
        (inside the forget's transaction); nothing where deletes leave no segments."""

    def _scrub_files(self) -> None:
        """After a forget commits: rewrite what still holds the deleted bytes."""

    def _drop_orphan_authors(self, authors: Sequence[tuple[int, str]]) -> None:
        # A layer's author list is a cue readers match questions against: a name
        # no remaining memory of the layer carries would give the forgotten one back.
        self._conn.executemany(
            "DELETE FROM authors WHERE scope_id = ? AND author = ? AND NOT EXISTS"
            " (SELECT 1 FROM memories WHERE scope_id = ? AND author = ?)",
            [(layer, name, layer, name) for layer, name in authors],
        )

    def _drop_orphan_concepts(self, concepts: Sequence[int]) -> list[str]:
        """Delete the names of ``concepts`` nothing remaining refers to (any agent's
        memory, link, lesson or pending count); the names deleted."""
        if not concepts:
            return []
        self._fold_links()  # a write since this transaction's fold cannot have run
        orphans = self._query_in(
            "SELECT id, name FROM concepts c WHERE id IN (?*)"
            " AND NOT EXISTS (SELECT 1 FROM memory_concepts WHERE concept_id = c.id)"
            " AND NOT EXISTS (SELECT 1 FROM links WHERE a = c.id)"
            " AND NOT EXISTS (SELECT 1 FROM links WHERE b = c.id)"
            " AND NOT EXISTS (SELECT 1 FROM lessons WHERE concept_id = c.id)"
            " AND NOT EXISTS (SELECT 1 FROM lesson_concepts WHERE concept_id = c.id)",
            concepts,
        )
        if not orphans:
            return []
        self._execute_in("DELETE FROM concepts WHERE id IN (?*)", [i for i, _ in orphans])
        # Every connection's cached name -> id map may hold these: bump the epoch
        # that tells them to drop it, and drop ours.
        self._conn.execute(
            "INSERT INTO store_info (key, value) VALUES (?, '1') ON CONFLICT (key)"
            " DO UPDATE SET value = CAST(CAST(store_info.value AS INTEGER) + 1 AS TEXT)",
            [CONCEPTS_EPOCH],
        )
        self._drop_concept_caches()
        self._concepts_epoch = None
        return [name for _, name in orphans]

    def _drop_orphan_feedback(self, rated: Sequence[int], names: Sequence[str],
                              agent_id: str) -> None:  # fmt: skip
        # A logged call that rated nothing but forgotten memories, or whose question
        # named a concept now forgotten, would keep their trace: it goes whole (the
        # log is append-only, never edited; what it taught is in links and lessons).
        if rated:
            self._execute_in(
                "DELETE FROM feedback WHERE id IN (?*) AND NOT EXISTS"
                " (SELECT 1 FROM feedback_items i WHERE i.feedback_id = feedback.id)",
                rated,
            )
        if not names:
            return
        layers = [r[0] for r in self._query("SELECT id FROM scopes WHERE agent_id = ?",
                                            [agent_id])]  # fmt: skip
        doomed: set[int] = set()
        for name in names:
            pattern = "%" + _like_escaped(json.dumps(name)) + "%"  # as log_feedback wrote it
            for fid, logged in self._query(
                f"SELECT id, query_concepts FROM feedback WHERE {in_list('scope_id', layers)}"
                " AND query_concepts LIKE ? ESCAPE '\\'",
                [*layers, pattern],
            ):
                if name in json.loads(logged):
                    doomed.add(int(fid))
        if doomed:
            self._execute_in("DELETE FROM feedback_items WHERE feedback_id IN (?*)", sorted(doomed))
            self._execute_in("DELETE FROM feedback WHERE id IN (?*)", sorted(doomed))

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


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
