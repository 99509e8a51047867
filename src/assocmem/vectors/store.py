"""Stored vectors in SQL: the portable float32 blob of each memory's embedding.

A mixin of `SQLStore`. Invariants: a memory has at most one vector row, replaced
in place, in the layer of its memory; a backend with a native index (pgvector)
keeps the blob beside it, so every backend reads vectors back the same way.
Every change to a vector row (written, replaced, moved to another layer, deleted)
takes a new number in ``vector_changes`` (triggers, in the change's own
transaction), so a search index kept outside the database catches up with every
process's writes by reading the changes after the last it applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assocmem.optional import require_numpy
from assocmem.store.core import SQLStore
from assocmem.store.params import translated
from assocmem.store.parts import StorePart, Written
from assocmem.store.protocol import VectorRows, View

if TYPE_CHECKING:
    import numpy as np


class VectorQueries(SQLStore):
    """The vectors of the SQL store (mixed into `SQLStore`)."""

    # Whether the backend searches vectors itself (`vector_search`); otherwise the
    # engine keeps them in its own numpy index.
    native_vectors: bool = False

    def vector_search(
        self, view: View, vector: Sequence[float], limit: int
    ) -> list[tuple[int, float]]:
        """``(seq, cosine)`` of the visible memories nearest ``vector`` (native backends)."""
        raise NotImplementedError("this backend has no native vector search")

    def vector_similarities(self, vector: Sequence[float], seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of ``vector`` to each of these memories (native backends)."""
        raise NotImplementedError("this backend has no native vector search")

    def vector_index_path(self) -> str | None:
        """Where a search index of this store's vectors may be kept on disk (a
        folder beside the store's file); None where there is no such place."""
        return None

    @translated
    def vector_changes(self, after: int) -> VectorRows:
        with self.snapshot():
            rows = self._query(
                "SELECT c.id, c.memory_seq, v.scope_id, v.vector FROM vector_changes c"
                " LEFT JOIN vectors v ON v.memory_seq = c.memory_seq"
                " WHERE c.id > ? ORDER BY c.id",
                [after],
            )
            if not rows:  # the common case, once per search: no further query
                return VectorRows([], [], require_numpy().zeros((0, 0), dtype="float32"), after)
        present = [(seq, layer, vector) for _, seq, layer, vector in rows if vector is not None]
        found = self._vector_rows(present, rows[-1][0])
        removed = [seq for _, seq, _, vector in rows if vector is None]
        return VectorRows(found.seqs, found.layers, found.matrix, found.last, removed)

    @translated
    def vector_layers(self) -> tuple[int, dict[int, int]]:
        with self.snapshot():
            counts = self._query("SELECT scope_id, COUNT(*) FROM vectors GROUP BY scope_id")
            return self._last_vector_change(), {layer: count for layer, count in counts}

    @translated
    def vector_layer_rows(self, layers: Sequence[int]) -> VectorRows:
        with self.snapshot():
            last = self._last_vector_change()
            if not layers:
                return self._vector_rows([], last)
            rows = self._query_in(
                "SELECT memory_seq, scope_id, vector FROM vectors WHERE scope_id IN (?*)", layers
            )
        return self._vector_rows(rows, last)

    def _last_vector_change(self) -> int:
        rows = self._query("SELECT MAX(id) FROM vector_changes")
        return int(rows[0][0] or 0)

    def _vector_rows(self, rows: Sequence[tuple[int, int, Any]], last: int) -> VectorRows:
        numpy = require_numpy()
        dims = int(self.info("embedder_dims") or 0)
        matrix = numpy.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype=numpy.float32)
        return VectorRows(
            seqs=[r[0] for r in rows],
            layers=[r[1] for r in rows],
            matrix=matrix.reshape(len(rows), dims) if dims else matrix.reshape(len(rows), -1),
            last=last,
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

    def put_written(self, written: Sequence[Written], at: int) -> None:
        """A write's hook: the vectors the write carried."""
        self._put_vectors([(w.seq, w.layer, w.vector) for w in written if w.vector is not None])

    def move_vector(self, seq: int, old: int, new: int) -> None:
        """An update's hook: a memory's vector moves layers with it."""
        self._conn.execute("UPDATE vectors SET scope_id = ? WHERE memory_seq = ?", [new, seq])

    def _put_vectors(self, rows: Sequence[tuple[int, int, np.ndarray]]) -> None:
        """Store each ``(seq, layer, vector)``, replacing a memory's earlier vector
        (inside the caller's transaction)."""
        self._conn.executemany(
            "INSERT INTO vectors (memory_seq, scope_id, vector) VALUES (?,?,?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vector = excluded.vector,"
            " scope_id = excluded.scope_id",
            [(seq, layer, vector.tobytes()) for seq, layer, vector in rows],
        )

    part = StorePart(
        "vectors", migrations="assocmem.vectors", on_write=put_written, on_move=move_vector
    )
