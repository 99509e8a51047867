"""Procedures, graduation and earned reinforcement in SQL.

A mixin of `SQLStore`. Invariants: a procedure version is inserted once and only its
status, gate, reason and record change after; a value reinforcement is one atomic
increment per memory that never lifts a value past its cap (nor lowers one above
it), so concurrent reads never lose a gain; a graduation row is written in the same
transaction as the kind it changed, and reverting it restores that kind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.store.protocol import new_id
from assocmem.types import Scope

PROCEDURE_COLUMNS = (
    "seq, id, name, version, status, steps, preconditions, checks, episodes, gate, reason,"
    " memory_seq, supersedes, created_at"
)
JSON_FIELDS = ("steps", "preconditions", "checks", "episodes", "gate")


@dataclass(frozen=True)
class ProcedureRow:
    """One stored procedure version, JSON fields decoded."""

    seq: int
    id: str
    name: str | None
    version: int
    status: str
    steps: list[Any]
    preconditions: dict[str, Any]
    checks: list[Any]
    episodes: list[str]
    gate: dict[str, Any]
    reason: str | None
    memory_seq: int | None
    supersedes: str | None
    created_at: str


def _row(values: Sequence[Any]) -> ProcedureRow:
    names = [n.strip() for n in PROCEDURE_COLUMNS.split(",")]
    fields = dict(zip(names, values, strict=True))
    for name in JSON_FIELDS:
        fields[name] = json.loads(fields[name])
    return ProcedureRow(**fields)


class ProcedureQueries(SQLStore):
    """Procedure versions, graduations and reinforcement (mixed into `SQLStore`)."""

    # -- procedures -------------------------------------------------------------

    @translated
    def add_procedure(self, scope: Scope, fields: dict[str, Any], when: str) -> str:
        with self.transaction():
            layer, row = self._own_layer(scope), None
            while row is None:  # a clash of random ids is retried, never surfaced
                public_id = new_id()
                row = self._conn.execute(
                    "INSERT INTO procedures (id, scope_id, name, version, status, steps,"
                    " preconditions, checks, episodes, gate, reason, supersedes, created_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING RETURNING id",
                    [public_id, layer, fields.get("name"), fields["version"], fields["status"],
                     *(json.dumps(fields.get(n, {} if n == "gate" else [])) for n in
                       ("steps", "preconditions", "checks", "episodes", "gate")),
                     fields.get("reason"), fields.get("supersedes"), when],
                ).fetchone()  # fmt: skip
            return str(row[0])

    @translated
    def procedures(self, scope: Scope, ids: Sequence[str]) -> dict[str, ProcedureRow]:
        layers = self._layers(replace_role(scope))
        if not layers or not ids:
            return {}
        rows = self._query_in(
            f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE {in_list('scope_id', layers)}"
            " AND id IN (?*)",
            list(ids),
            before=layers,
        )
        return {r.id: r for r in map(_row, rows)}

    @translated
    def procedures_named(self, scope: Scope, name: str) -> list[ProcedureRow]:
        layers = self._layers(replace_role(scope))
        if not layers:
            return []
        rows = self._query(
            f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE {in_list('scope_id', layers)}"
            " AND name = ? ORDER BY version, seq",
            [*layers, name],
        )
        return [_row(r) for r in rows]

    @translated
    def set_procedure(
        self,
        seq: int,
        *,
        status: str,
        gate: dict[str, Any] | None = None,
        reason: str | None = None,
        memory_seq: int | None = None,
    ) -> None:
        with self.transaction():
            self._conn.execute(
                "UPDATE procedures SET status = ?, gate = COALESCE(?, gate), reason = ?,"
                " memory_seq = COALESCE(?, memory_seq) WHERE seq = ?",
                [status, None if gate is None else json.dumps(gate), reason, memory_seq, seq],
            )

    # -- graduation -------------------------------------------------------------

    @translated
    def graduate_memories(
        self, rows: Sequence[tuple[int, str, str, dict[str, Any]]], when: str
    ) -> None:
        """Set each ``(seq, from_kind, to_kind, evidence)`` memory's kind, recording why."""
        with self.transaction():
            for seq, before, after, evidence in rows:
                self._conn.execute(
                    "UPDATE memories SET kind = ? WHERE seq = ? AND kind = ?", [after, seq, before]
                )
                self._conn.execute(
                    "INSERT INTO graduations (memory_seq, from_kind, to_kind, evidence,"
                    " graduated_at) VALUES (?,?,?,?,?)",
                    [seq, before, after, json.dumps(evidence, sort_keys=True), when],
                )

    @translated
    def graduations(self, seqs: Sequence[int]) -> dict[int, tuple[int, str, str, dict[str, Any]]]:
        """Each memory's standing graduation: ``(row id, from_kind, to_kind, evidence)``."""
        rows = self._query_in(
            "SELECT memory_seq, id, from_kind, to_kind, evidence FROM graduations"
            " WHERE reverted_at IS NULL AND memory_seq IN (?*) ORDER BY id",
            list(seqs),
        )
        return {int(s): (int(i), a, b, json.loads(e)) for s, i, a, b, e in rows}

    @translated
    def revert_graduations(self, rows: Sequence[tuple[int, int, str, str]], when: str) -> None:
        """Take back each ``(seq, graduation id, from_kind, to_kind)``."""
        with self.transaction():
            for seq, row_id, before, after in rows:
                self._conn.execute(
                    "UPDATE memories SET kind = ? WHERE seq = ? AND kind = ?", [before, seq, after]
                )
                self._conn.execute(
                    "UPDATE graduations SET reverted_at = ? WHERE id = ?", [when, row_id]
                )

    def forget_procedures(self, seq: int, layer: int) -> None:
        """Called inside a memory's deletion: its graduation rows go, a procedure version
        it recorded goes (its steps are the record's text), and its id leaves every
        procedure's episodes (a procedure that rested on it rests on fewer)."""
        self._conn.execute("DELETE FROM graduations WHERE memory_seq = ?", [seq])
        self._conn.execute("DELETE FROM procedures WHERE memory_seq = ?", [seq])
        found = self._query("SELECT id FROM memories WHERE seq = ?", [seq])
        if not found:
            return
        gone = str(found[0][0])
        # Episodes hold public ids (ULIDs: no LIKE wildcards in them), stored as JSON.
        for version, episodes in self._query(
            "SELECT seq, episodes FROM procedures WHERE episodes LIKE ?", [f'%"{gone}"%']
        ):
            kept = [e for e in json.loads(episodes) if e != gone]
            self._conn.execute(
                "UPDATE procedures SET episodes = ? WHERE seq = ?", [json.dumps(kept), version]
            )

    # -- earned reinforcement ---------------------------------------------------

    @translated
    def reinforce(self, gains: Sequence[tuple[int, float]], cap: float) -> None:
        """Move each ``(seq, fraction)`` memory's value that fraction of the way to
        ``cap`` in one statement; a value at or past the cap is left as it is."""
        if not gains:
            return
        with self.transaction():
            self._conn.executemany(
                "UPDATE memories SET value = value + ? * (? - value) WHERE seq = ? AND value < ?",
                [(fraction, cap, seq, cap) for seq, fraction in gains],
            )

    part = StorePart("procedures", migrations="assocmem.procedures", on_forget=forget_procedures)


def replace_role(scope: Scope) -> Scope:
    """Procedures live in the unrestricted layer: any role of the agent sees them."""
    return Scope(scope.agent_id, scope.project_id, scope.channel, None)
