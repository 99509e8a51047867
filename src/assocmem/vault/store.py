"""SQL of a vault of Markdown notes: its root, its indexed notes and their links.

A mixin of `SQLStore`. Invariants: every row is keyed by the exact layer of the
vault's scope (never a layer it merely reads), so two scopes' vaults never mix;
`save_vault` changes notes, links and the root in one transaction, so a crashed
re-index leaves the previous index whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.store.core import SQLStore
from assocmem.store.params import translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import NoteLink, NoteRow
from assocmem.text import times
from assocmem.types import Scope

NOTE_COLUMNS = "path, hash, size, mtime_ns, title, aliases, tags, dated, folder, memory_ids, words"


def _note(row: Sequence[Any]) -> NoteRow:
    path, hash_, size, mtime, title, aliases, tags, dated, folder, ids, words = row
    return NoteRow(
        path=path, hash=hash_, size=int(size), mtime_ns=int(mtime), title=title,
        aliases=tuple(json.loads(aliases)), tags=tuple(json.loads(tags)), dated=dated,
        folder=folder, memory_ids=tuple(json.loads(ids)), words=int(words),
    )  # fmt: skip


class VaultQueries(SQLStore):
    """The vault half of the SQL store (mixed into `SQLStore`)."""

    def _vault_layer(self, scope: Scope) -> int | None:
        """The scope's own layer, if it was ever written (reads never create one)."""
        rows = self._query(
            "SELECT id FROM scopes WHERE agent_id = ? AND project_id = ? AND channel = ?"
            " AND access = ''",
            [scope.agent_id, scope.project_id, scope.channel],
        )
        return int(rows[0][0]) if rows else None

    @translated
    def vault_root(self, scope: Scope) -> str | None:
        layer = self._vault_layer(scope)
        if layer is None:
            return None
        rows = self._query("SELECT root FROM vault_roots WHERE scope_id = ?", [layer])
        return str(rows[0][0]) if rows else None

    @translated
    def vault_notes(self, scope: Scope) -> list[NoteRow]:
        layer = self._vault_layer(scope)
        if layer is None:
            return []
        return [
            _note(row)
            for row in self._query(
                f"SELECT {NOTE_COLUMNS} FROM vault_notes WHERE scope_id = ? ORDER BY path",
                [layer],
            )
        ]

    @translated
    def vault_links(self, scope: Scope) -> list[NoteLink]:
        layer = self._vault_layer(scope)
        if layer is None:
            return []
        return [
            NoteLink(source=s, target=t, resolved=r, line=int(line))
            for s, t, r, line in self._query(
                "SELECT source, target, resolved, line FROM vault_links WHERE scope_id = ?"
                " ORDER BY source, target",
                [layer],
            )
        ]

    @translated
    def save_vault(
        self,
        scope: Scope,
        root: str,
        notes: Sequence[NoteRow],
        links: Mapping[str, Sequence[NoteLink]],
        removed: Sequence[str],
    ) -> None:
        with self.transaction():
            layer = self._own_layer(scope)
            self._conn.execute(
                "INSERT INTO vault_roots (scope_id, root, indexed_at) VALUES (?,?,?)"
                " ON CONFLICT (scope_id) DO UPDATE SET root = excluded.root,"
                " indexed_at = excluded.indexed_at",
                [layer, root, times.to_micros(times.now())],
            )
            sources = sorted(set(removed) | set(links))
            self._execute_in("DELETE FROM vault_links WHERE scope_id = ? AND source IN (?*)",
                             sources, before=[layer])  # fmt: skip
            paths = sorted(set(removed) | {n.path for n in notes})
            self._execute_in("DELETE FROM vault_notes WHERE scope_id = ? AND path IN (?*)",
                             paths, before=[layer])  # fmt: skip
            self._conn.executemany(
                f"INSERT INTO vault_notes (scope_id, {NOTE_COLUMNS})"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (layer, n.path, n.hash, n.size, n.mtime_ns, n.title,
                     json.dumps(list(n.aliases), ensure_ascii=False),
                     json.dumps(list(n.tags), ensure_ascii=False), n.dated, n.folder,
                     json.dumps(list(n.memory_ids)), n.words)
                    for n in notes
                ],
            )  # fmt: skip
            self._conn.executemany(
                "INSERT INTO vault_links (scope_id, source, target, resolved, line)"
                " VALUES (?,?,?,?,?) ON CONFLICT (scope_id, source, target) DO NOTHING",
                [
                    (layer, k.source, k.target, k.resolved, k.line)
                    for ks in links.values()
                    for k in ks
                ],
            )

    part = StorePart("vault", migrations="assocmem.vault")
