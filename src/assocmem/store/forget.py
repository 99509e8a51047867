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

from collections.abc import Sequence
from typing import Any

from assocmem.store.connection import CONCEPTS_EPOCH, SQLConnection
from assocmem.store.params import in_list, translated
from assocmem.types import Scope


class ForgetQueries(SQLConnection):
    """Deletion of memories from the SQL store (mixed into `SQLStore`)."""

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
            self.settle()
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
            touched: set[int] = set()
            for seq, layer in found:
                rows = self._query(
                    "SELECT concept_id FROM memory_concepts WHERE memory_seq = ?", [seq]
                )
                touched.update(c for (c,) in rows)
                key = self._query(
                    # i17 tenancy: a key's current value is per layer (access class).
                    "SELECT scope_id, key_subject, key_relation FROM memories"
                    " WHERE seq = ? AND key_subject IS NOT NULL AND status = 'active'",
                    [seq],
                )
                for on_forget in self.hooks("on_forget"):
                    on_forget(self, seq, layer)
                self._conn.execute("DELETE FROM memory_concepts WHERE memory_seq = ?", [seq])
                self._conn.execute("DELETE FROM memories WHERE seq = ?", [seq])
                if key:
                    self._reactivate(key[0])
            if found:
                # Worked out once for every part: the agent's layers, and which of the
                # forgotten memories' concepts no memory of the agent carries any more.
                agent = self._agent_layers(scope.agent_id)
                gone = self._uncarried(agent, sorted(touched))
                for after_forget in self.hooks("after_forget"):
                    after_forget(self, agent, gone)
                self.drop_orphan_authors(authors)
                erased = self._drop_orphan_concepts(sorted(touched))
                for on_erase in self.hooks("on_erase"):
                    on_erase(self, agent, erased)
                self._purge_text_index()
                # What reads kept of them goes now, not when the next read finds the
                # store changed.
                self._forget_memo()
        if found and not self._depth:
            self._scrub_files()
        return len(found)

    def _purge_text_index(self) -> None:
        """Rewrite the full-text index so no deleted row's terms survive in it
        (inside the forget's transaction); nothing where deletes leave no segments."""

    def _scrub_files(self) -> None:
        """After a forget commits: rewrite what still holds the deleted bytes."""

    def _uncarried(self, layers: Sequence[int], concepts: Sequence[int]) -> list[int]:
        """Which of ``concepts`` no memory in ``layers`` (an agent's) carries."""
        if not concepts:
            return []
        return [
            concept
            for concept in concepts
            if not self._query(
                f"SELECT 1 FROM memory_concepts WHERE {in_list('scope_id', layers)}"
                " AND concept_id = ? LIMIT 1",
                [*layers, concept],
            )
        ]

    def _agent_layers(self, agent_id: str) -> list[int]:
        """Every layer (scope row) of the agent, whoever may read it."""
        return [r[0] for r in self._query("SELECT id FROM scopes WHERE agent_id = ?", [agent_id])]

    def drop_orphan_authors(self, authors: Sequence[tuple[int, str]]) -> None:
        """Delete the ``(layer, author)`` names no remaining memory of the layer carries."""
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
        self.settle()  # a write since this transaction's settle cannot have run
        refs = "".join(
            f" AND NOT EXISTS (SELECT 1 FROM {table} WHERE {column} = c.id)"
            for part in self.parts()
            for table, column in part.concept_refs
        )
        orphans = self._query_in(
            "SELECT id, name FROM concepts c WHERE id IN (?*)"
            " AND NOT EXISTS (SELECT 1 FROM memory_concepts WHERE concept_id = c.id)" + refs,
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
