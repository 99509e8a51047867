"""Attribution in SQL: the write-receipt chain, ratifications, the per-source CUSUM
state and its cases, and the per-source irreversible budget.

A mixin of `SQLStore`. Invariants: receipts, ratifications and budget charges are
only ever appended or increased (nothing here edits or deletes them); every
read-modify-write the trust room does on these tables runs inside the caller's
write transaction, which no other writer interleaves with, so two processes
append one chain, move one statistic, and cannot both spend a last unit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart
from assocmem.trust.attribution_rows import CaseRow, MonitorRow, ReceiptRow
from assocmem.types import Scope


class AttributionQueries(SQLStore):
    """The attribution tables of the SQL store (mixed into `SQLStore`)."""

    # -- receipts -------------------------------------------------------------

    @translated
    def receipt_head(self) -> tuple[int, str] | None:
        rows = self._query(
            "SELECT position, hash FROM trust_receipts ORDER BY position DESC LIMIT 1"
        )
        return (int(rows[0][0]), str(rows[0][1])) if rows else None

    @translated
    def append_receipt(self, receipt: ReceiptRow) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO trust_receipts (position, memory_id, text_sha256, sources,"
                " prev_hash, hash, public_key, signature, created_at)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    receipt.position, receipt.memory_id, receipt.text_sha256,
                    json.dumps(list(receipt.sources)), receipt.prev_hash, receipt.hash,
                    receipt.public_key, receipt.signature, receipt.created_at,
                ),
            )  # fmt: skip

    @translated
    def receipts_page(self, after: int, limit: int) -> list[ReceiptRow]:
        rows = self._query(
            "SELECT position, memory_id, text_sha256, sources, prev_hash, hash, public_key,"
            " signature, created_at FROM trust_receipts WHERE position > ?"
            " ORDER BY position LIMIT ?",
            [after, limit],
        )
        return [
            ReceiptRow(int(p), m, t, tuple(json.loads(s)), prev, h, k, sig, c)
            for p, m, t, s, prev, h, k, sig, c in rows
        ]

    @translated
    def attributed_rows(self, scope: Scope) -> list[tuple[int, str, str, str | None, str | None]]:
        """``(seq, id, text, source, source_canonical)`` of every active memory the
        scope reads, oldest first."""
        layers = self._layers(scope)
        if not layers:
            return []
        return [
            (int(seq), i, t, s, c)
            for seq, i, t, s, c in self._query(
                "SELECT seq, id, text, source, source_canonical FROM memories"
                f" WHERE {in_list('scope_id', layers)} AND status = 'active' ORDER BY seq",
                layers,
            )
        ]

    # -- ratifications ----------------------------------------------------------

    @translated
    def add_ratification(self, memory_id: str, kind: str, by_key: str, lens: str, now: str) -> bool:
        with self.transaction():
            rows = self._conn.execute(
                "INSERT INTO trust_ratifications (memory_id, kind, by_key, lens, created_at)"
                " VALUES (?,?,?,?,?) ON CONFLICT (memory_id, kind, by_key, lens) DO NOTHING"
                " RETURNING id",
                (memory_id, kind, by_key, lens, now),
            ).fetchall()
            return bool(rows)

    @translated
    def ratifications(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        found: dict[str, list[tuple[str, str, str]]] = {i: [] for i in ids}
        for memory_id, kind, by_key, lens in self._query_in(
            "SELECT memory_id, kind, by_key, lens FROM trust_ratifications"
            " WHERE memory_id IN (?*) ORDER BY id",
            list(ids),
        ):
            found[memory_id].append((kind, by_key, lens))
        return found

    def forget_attribution(self, seq: int, layer: int) -> None:
        """Delete a forgotten memory's ratifications (called inside its deletion). Its
        receipt stays: dropping a link would break the chain for every later write."""
        self._conn.execute(
            "DELETE FROM trust_ratifications WHERE memory_id IN"
            " (SELECT id FROM memories WHERE seq = ?)",
            [seq],
        )

    # -- the monitor ------------------------------------------------------------

    @translated
    def monitor_state(self, agent_id: str, sources: Sequence[str]) -> dict[str, MonitorRow]:
        return {
            s: MonitorRow(s, float(stat), int(n), int(bad), tuple(json.loads(e)))
            for s, stat, n, bad, e in self._query_in(
                "SELECT source, statistic, observations, bad, evidence FROM trust_monitor"
                " WHERE agent_id = ? AND source IN (?*)",
                list(sources),
                before=[agent_id],
            )
        }

    @translated
    def set_monitor_state(self, agent_id: str, states: Sequence[MonitorRow], now: str) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO trust_monitor (agent_id, source, statistic, observations, bad,"
                " evidence, updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT (agent_id, source)"
                " DO UPDATE SET statistic = excluded.statistic,"
                " observations = excluded.observations, bad = excluded.bad,"
                " evidence = excluded.evidence, updated_at = excluded.updated_at",
                [
                    (agent_id, r.source, r.statistic, r.observations, r.bad,
                     json.dumps(list(r.evidence)), now)
                    for r in states
                ],
            )  # fmt: skip

    @translated
    def raise_case(
        self, agent_id: str, source: str, statistic: float, evidence: Sequence[str], now: str
    ) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO trust_cases (agent_id, source, raised_at, statistic, evidence,"
                " status) VALUES (?,?,?,?,?,'open')",
                (agent_id, source, now, statistic, json.dumps(list(evidence))),
            )

    @translated
    def open_cases(self, agent_id: str) -> list[CaseRow]:
        return [
            CaseRow(int(i), s, r, float(stat), tuple(json.loads(e)), st)
            for i, s, r, stat, e, st in self._query(
                "SELECT id, source, raised_at, statistic, evidence, status FROM trust_cases"
                " WHERE agent_id = ? AND status = 'open' ORDER BY id",
                [agent_id],
            )
        ]

    # -- the irreversible budget ------------------------------------------------

    @translated
    def spent(self, agent_id: str, sources: Sequence[str]) -> dict[str, float]:
        return {
            s: float(v)
            for s, v in self._query_in(
                "SELECT source, spent FROM trust_budgets WHERE agent_id = ? AND source IN (?*)",
                list(sources),
                before=[agent_id],
            )
        }

    @translated
    def charge(self, agent_id: str, sources: Sequence[str], amount: float) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO trust_budgets (agent_id, source, spent) VALUES (?,?,?)"
                " ON CONFLICT (agent_id, source) DO UPDATE"
                " SET spent = trust_budgets.spent + excluded.spent",
                [(agent_id, s, amount) for s in sources],
            )

    part = StorePart("attribution", on_forget=forget_attribution)
