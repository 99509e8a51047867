"""Stored vectors in SQL: the portable float32 blob of each memory's embedding.

A mixin of `SQLStore`. Invariant: a memory has at most one vector row, replaced
in place, in the layer of its memory; a backend with a native index (pgvector)
keeps the blob beside it, so every backend reads vectors back the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assocmem.optional import require_numpy
from assocmem.store.connection import SQLConnection
from assocmem.store.params import translated
from assocmem.store.protocol import VectorRows

if TYPE_CHECKING:
    import numpy as np


class VectorQueries(SQLConnection):
    """The vectors of the SQL store (mixed into `SQLStore`)."""

    @translated
    def vector_rows(self, after: int) -> VectorRows:
        numpy = require_numpy()
        rows = self._query(
            "SELECT memory_seq, scope_id, vector FROM vectors WHERE memory_seq > ?"
            " ORDER BY memory_seq",
            [after],
        )
        dims = int(self.info("embedder_dims") or 0)
        matrix = numpy.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=numpy.float32)
        return VectorRows(
            seqs=[r[0] for r in rows],
            layers=[r[1] for r in rows],
            matrix=matrix.reshape(len(rows), dims) if dims else matrix.reshape(len(rows), -1),
        )

    @translated
    def vectors_of(self, seqs: Sequence[int]) -> dict[int, bytes]:
        rows = self._query_in(
            "SELECT memory_seq, vector FROM vectors WHERE memory_seq IN (?*)", seqs
        )
        return {seq: bytes(vector) for seq, vector in rows}

    @translated
    def missing_vectors(self, limit: int) -> list[tuple[int, int, str, str | None]]:
        rows = self._query(
            "SELECT m.seq, m.scope_id, m.text, m.author FROM memories m"
            " WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_seq = m.seq)"
            " ORDER BY m.seq LIMIT ?",
            [limit],
        )
        return [(seq, layer, text, author) for seq, layer, text, author in rows]

    # -- embed: the backfill's count, for its progress bar
    @translated
    def count_missing_vectors(self) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM memories m"
            " WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_seq = m.seq)",
            [],
        )
        return int(rows[0][0])

    @translated
    def add_vectors(self, rows: Sequence[tuple[int, int]], matrix: np.ndarray) -> None:
        with self.transaction():
            self._put_vectors([(seq, layer, matrix[i]) for i, (seq, layer) in enumerate(rows)])

    def _put_vectors(self, rows: Sequence[tuple[int, int, np.ndarray]]) -> None:
        """Store each ``(seq, layer, vector)``, replacing a memory's earlier vector
        (inside the caller's transaction)."""
        self._conn.executemany(
            "INSERT INTO vectors (memory_seq, scope_id, vector) VALUES (?,?,?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vector = excluded.vector,"
            " scope_id = excluded.scope_id",
            [(seq, layer, vector.tobytes()) for seq, layer, vector in rows],
        )
