"""Standing in SQL: the credit log, derived-from taint, slashes, attestations, and
the one-time re-canonicalisation of stored sources.

A mixin of `SQLStore`. Invariants: credit rows are only ever inserted (a trigger
refuses an update), and banked (``counted``) only when independent of the memory's
writer and given while it is not slashed; a slash row keeps the standing its memory
had when first slashed, however often it is slashed again, until a restore deletes
it; a store's ``source_canonical`` column is made by the rule `store_info` names
(`SOURCE_CANON`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from assocmem.store.core import SQLStore
from assocmem.store.params import KEYED, translated
from assocmem.store.parts import StorePart
from assocmem.store.rows import View
from assocmem.text.sources import SOURCE_CANON, canonical_source

CANON_KEY = "source_canon"


@dataclass(frozen=True)
class TrustRow:
    """What standing is computed from, for one memory."""

    seq: int
    id: str
    source: str | None  # canonical
    fingerprint: str
    good: int = 0  # banked outcomes: independent ones recorded while not slashed
    bad: int = 0
    slashed: bool = False
    pre_slash: tuple[int, int] | None = None  # (good, bad) when first slashed
    taint: frozenset[str] = field(default_factory=frozenset)
    attested_key: str | None = None
    derived: bool = False  # has derived_from parents


class TrustQueries(SQLStore):
    """The standing tables of the SQL store (mixed into `SQLStore`)."""

    @translated
    def add_credits(
        self, agent_id: str, seqs: Sequence[int], good: bool, when: str, independent: bool
    ) -> int:
        with self.transaction():
            for seq in seqs:
                self._conn.execute(
                    "INSERT INTO trust_credits (memory_seq, agent_id, good, counted, created_at)"
                    " SELECT ?, ?, ?, CASE WHEN ? = 0 OR EXISTS (SELECT 1 FROM trust_slashes"
                    "  WHERE memory_seq = ?) THEN 0 ELSE 1 END, ?",
                    [seq, agent_id, int(good), int(independent), seq, when],
                )
        return len(seqs)

    @translated
    def credit_log(self, seqs: Sequence[int]) -> list[tuple[int, str, bool, bool, str]]:
        """``(seq, agent, good, counted, when)`` of every credit of these memories, in order."""
        rows = self._query_in(
            "SELECT memory_seq, agent_id, good, counted, created_at, id FROM trust_credits"
            " WHERE memory_seq IN (?*)",
            seqs,
        )
        rows.sort(key=lambda r: r[5])
        return [(s, a, bool(g), bool(c), w) for s, a, g, c, w, _ in rows]

    @translated
    def trust_rows(self, seqs: Sequence[int]) -> dict[int, TrustRow]:
        if not seqs:
            return {}
        base = self._query_in(
            "SELECT seq, id, source_canonical, fingerprint, derived_from != '[]' FROM memories"
            " WHERE seq IN (?*)",
            seqs,
        )
        counts: dict[int, list[int]] = {}
        for seq, good, n in self._query_in(
            "SELECT memory_seq, good, COUNT(*) FROM trust_credits WHERE counted = 1"
            " AND memory_seq IN (?*) GROUP BY memory_seq, good",
            seqs,
        ):
            counts.setdefault(seq, [0, 0])[0 if good else 1] += int(n)
        slashes = {
            seq: (int(g), int(b))
            for seq, g, b in self._query_in(
                "SELECT memory_seq, good, bad FROM trust_slashes WHERE memory_seq IN (?*)", seqs
            )
        }
        taint: dict[int, set[str]] = {}
        for seq, source in self._query_in(
            "SELECT memory_seq, source FROM trust_taint WHERE memory_seq IN (?*)", seqs
        ):
            taint.setdefault(seq, set()).add(source)
        keys = dict(
            self._query_in(
                "SELECT memory_seq, public_key FROM trust_attestations WHERE memory_seq IN (?*)",
                seqs,
            )
        )
        return {
            seq: TrustRow(
                seq=seq,
                id=id_,
                source=source,
                fingerprint=fingerprint,
                good=counts.get(seq, [0, 0])[0],
                bad=counts.get(seq, [0, 0])[1],
                slashed=seq in slashes,
                pre_slash=slashes.get(seq),
                taint=frozenset(taint.get(seq, ())),
                attested_key=keys.get(seq),
                derived=bool(derived),
            )
            for seq, id_, source, fingerprint, derived in base
        }

    @translated
    def trust_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, str | None]]:
        """``(slashed, attested key)`` of those of ``ids`` that carry either mark (one
        statement, keyed by the records' own ids: a read or a get pays one lookup for
        its marks and none to find their seqs)."""
        if not ids or (self._empty("trust_slashes") and self._empty("trust_attestations")):
            return {}
        rows = self._query_in(
            KEYED + "SELECT m.id, CASE WHEN s.memory_seq IS NULL THEN 0 ELSE 1 END, a.public_key"
            " FROM memories m LEFT JOIN trust_slashes s ON s.memory_seq = m.seq"
            " LEFT JOIN trust_attestations a ON a.memory_seq = m.seq"
            " WHERE m.id IN (?*) AND (s.memory_seq IS NOT NULL OR a.memory_seq IS NOT NULL)",
            ids,
        )
        return {id_: (bool(slashed), key) for id_, slashed, key in rows}

    @translated
    def restating(self, view: View, fingerprints: Sequence[str]) -> dict[str, list[int]]:
        """The memories ``view`` sees with each of these text fingerprints."""
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        found: dict[str, list[int]] = {}
        for fingerprint, seq in self._query_in(
            f"SELECT m.fingerprint, m.seq FROM memories m WHERE {where} AND m.fingerprint IN (?*)",
            sorted(set(fingerprints)),
            before=params,
        ):
            found.setdefault(fingerprint, []).append(seq)
        return found

    @translated
    def sharing_sources(self, view: View, sources: Sequence[str]) -> list[int]:
        """The memories ``view`` sees whose own canonical source, or taint, is one of these."""
        if not sources:
            return []
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        own = self._query_in(
            f"SELECT m.seq FROM memories m WHERE {where} AND m.source_canonical IN (?*)",
            sources,
            before=params,
        )
        tainted = self._query_in(
            f"SELECT m.seq FROM memories m WHERE {where} AND m.seq IN"
            " (SELECT t.memory_seq FROM trust_taint t WHERE t.source IN (?*))",
            sources,
            before=params,
        )
        return sorted({seq for (seq,) in own + tainted})

    @translated
    def view_sources(self, view: View) -> list[str]:
        """Every canonical source (own or taint) of the memories ``view`` sees."""
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        own = self._query(
            f"SELECT DISTINCT m.source_canonical FROM memories m WHERE {where}"
            " AND m.source_canonical IS NOT NULL",
            params,
        )
        tainted = self._query(
            f"SELECT DISTINCT t.source FROM trust_taint t JOIN memories m ON m.seq = t.memory_seq"
            f" WHERE {where}",
            params,
        )
        return sorted({s for (s,) in own + tainted})

    @translated
    def add_taint(self, rows: Sequence[tuple[int, str]]) -> None:
        if rows:
            self._conn.executemany(
                "INSERT INTO trust_taint (memory_seq, source) VALUES (?, ?)"
                " ON CONFLICT (memory_seq, source) DO NOTHING",
                list(rows),
            )

    @translated
    def add_attestation(self, seq: int, public_key: str, signature: str) -> None:
        self._conn.execute(
            "INSERT INTO trust_attestations (memory_seq, public_key, signature) VALUES (?, ?, ?)"
            " ON CONFLICT (memory_seq) DO NOTHING",
            [seq, public_key, signature],
        )

    @translated
    def slash_memories(self, seqs: Sequence[int], when: str) -> None:
        # The first slash saves the standing; a second only counts itself.
        with self.transaction():
            for seq in seqs:
                self._conn.execute(
                    "INSERT INTO trust_slashes (memory_seq, good, bad, slashes, slashed_at)"
                    " SELECT ?, COALESCE(SUM(good), 0), COALESCE(SUM(1 - good), 0), 1, ?"
                    " FROM trust_credits WHERE memory_seq = ? AND counted = 1"
                    " ON CONFLICT (memory_seq) DO UPDATE"
                    " SET slashes = trust_slashes.slashes + 1",
                    [seq, when, seq],
                )

    @translated
    def unslash_memories(self, seqs: Sequence[int]) -> int:
        with self.transaction():
            return self._execute_in("DELETE FROM trust_slashes WHERE memory_seq IN (?*)", seqs)

    @translated
    def stale_cleared(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        if not seqs or self._empty("trust_stale_cleared"):
            return {}
        rows = self._query_in(
            "SELECT memory_seq, reasons FROM trust_stale_cleared WHERE memory_seq IN (?*)", seqs
        )
        return {int(seq): set(json.loads(reasons)) for seq, reasons in rows}

    @translated
    def clear_stale(self, seq: int, reasons: Sequence[str]) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO trust_stale_cleared (memory_seq, reasons) VALUES (?, ?)"
                " ON CONFLICT (memory_seq) DO UPDATE SET reasons = excluded.reasons",
                [seq, json.dumps(list(reasons))],
            )

    def forget_standing(self, seq: int, layer: int) -> None:
        """Delete a forgotten memory's standing rows (called inside its deletion)."""
        for table in ("trust_credits", "trust_taint", "trust_slashes", "trust_attestations",
                      "trust_stale_cleared"):  # fmt: skip
            self._conn.execute(f"DELETE FROM {table} WHERE memory_seq = ?", [seq])

    def recanonicalise_once(self) -> bool:
        """Remake every ``source_canonical`` by this rule unless the store already has
        it (one lookup); whether it did. Call on open, after the migrations, under
        the lock that serialises them."""
        if self.canon_current():
            return False
        with self.transaction():
            if self.canon_current():
                return False
            for (source,) in self._query(
                "SELECT DISTINCT source FROM memories WHERE source IS NOT NULL"
            ):
                self._conn.execute(
                    "UPDATE memories SET source_canonical = ? WHERE source = ?",
                    [canonical_source(source), source],
                )
            self._conn.execute(
                "INSERT INTO store_info (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [CANON_KEY, SOURCE_CANON],
            )
        return True

    def canon_current(self) -> bool:
        rows = self._query("SELECT value FROM store_info WHERE key = ?", [CANON_KEY])
        return bool(rows) and rows[0][0] == SOURCE_CANON

    part = StorePart(
        "trust",
        migrations="assocmem.trust",
        on_forget=forget_standing,
        on_open=recanonicalise_once,
        is_current=canon_current,
        empty_checked=("trust_slashes", "trust_attestations"),
    )
