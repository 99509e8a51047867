"""Stored vectors in SQL: the portable float32 blob of each memory's embedding, and
on PostgreSQL with pgvector its ``embedding`` column, HNSW index and searches.

A mixin of `SQLStore`. Invariants: a memory has at most one vector row, replaced
in place, in the layer of its memory; a backend with a native index (pgvector)
keeps the blob beside it, so every backend reads vectors back the same way.
Every change to a vector row (written, replaced, moved to another layer, deleted)
takes a new number in ``vector_changes`` (triggers, in the change's own
transaction), so a search index kept outside the database catches up with every
process's writes by reading the changes after the last it applied.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assocmem.optional import require_numpy
from assocmem.store.core import SQLStore
from assocmem.store.params import in_list, translated
from assocmem.store.parts import StorePart, Written
from assocmem.store.protocol import VectorRows, View
from assocmem.types import Scope

if TYPE_CHECKING:
    import numpy as np


class VectorQueries(SQLStore):
    """The vectors of the SQL store (mixed into `SQLStore`)."""

    # Whether the backend searches vectors itself (`vector_search`); otherwise the
    # engine keeps them in its own numpy index.
    native_vectors: bool = False

    @translated
    def vector_search(
        self, view: View, vector: Sequence[float], limit: int
    ) -> list[tuple[int, float]]:
        """``(seq, cosine)`` of the visible memories nearest ``vector`` (pgvector HNSW)."""
        if not self.native_vectors:
            raise NotImplementedError("this backend has no native vector search")
        dims = len(vector)
        where, params = self._view_sql(view, self._layers(view.scope), "m")
        probe = _vector_text(vector)
        rows = self._query(
            f"SELECT v.memory_seq, 1 - (v.embedding::vector({dims}) <=> ?::vector({dims}))"
            " FROM vectors v JOIN memories m ON m.seq = v.memory_seq"
            f" WHERE v.embedding IS NOT NULL AND {where}"
            f" ORDER BY v.embedding::vector({dims}) <=> ?::vector({dims}), v.memory_seq LIMIT ?",
            [probe, *params, probe, limit],
        )
        return [(seq, float(score)) for seq, score in rows]

    @translated
    def vector_similarities(self, vector: Sequence[float], seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of ``vector`` to each of these memories (pgvector)."""
        if not self.native_vectors:
            raise NotImplementedError("this backend has no native vector search")
        if not seqs:
            return {}
        dims, probe = len(vector), _vector_text(vector)
        rows = self._query(
            f"SELECT memory_seq, 1 - (embedding::vector({dims}) <=> ?::vector({dims}))"
            f" FROM vectors WHERE embedding IS NOT NULL AND {in_list('memory_seq', list(seqs))}",
            [probe, *seqs],
        )
        return {seq: float(score) for seq, score in rows}

    def vector_index_path(self) -> str | None:
        """Where a search index of this store's vectors may be kept on disk (a
        folder beside the store's file); None where there is no such place."""
        # The vector arm's index files live beside a SQLite store's own (vectors/index.py).
        if self.dialect != "sqlite" or self.path == ":memory:":
            return None
        return self.path + ".vec-index"

    @translated
    def vector_counts(self, scope: Scope) -> tuple[int, int]:
        """How many of the memories ``scope`` reads have a vector, and how many not."""
        layers = self._layers(scope)
        if not layers:
            return 0, 0
        rows = self._query(
            "SELECT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_seq = m.seq), COUNT(*)"
            f" FROM memories m WHERE {in_list('m.scope_id', layers)} GROUP BY 1",
            layers,
        )
        counts = {bool(has): int(n) for has, n in rows}
        return counts.get(True, 0), counts.get(False, 0)

    def add_embedding_column(self, extension: str) -> None:
        """pgvector's hook: its column beside the portable blob (`_put_vectors`)."""
        if extension == "vector":
            self._conn.execute("ALTER TABLE vectors ADD COLUMN IF NOT EXISTS embedding vector")

    def index_embeddings(self, key: str, value: str) -> None:
        """A store_info hook: once the embedder's dimensions are known, pgvector's
        HNSW index over embeddings of that size."""
        if key == "embedder_dims" and self.native_vectors and value.isdigit():
            dims = int(value)  # an integer from our own store_info, not caller text
            self._conn.execute(
                "CREATE INDEX IF NOT EXISTS vectors_hnsw ON vectors USING hnsw"
                f" ((embedding::vector({dims})) vector_cosine_ops)"
            )

    @translated
    def vector_changes(self, after: int) -> VectorRows:
        with self.snapshot():
            # The common case, once per search: nothing changed (remembered for the
            # snapshot, and kept as long as the read memo is).
            unchanged = self._memo(("no vector changes after",))
            rows = (
                []
                if unchanged is not None and after in unchanged
                else self._query(
                    "SELECT c.id, c.memory_seq, v.scope_id, v.vector FROM vector_changes c"
                    " LEFT JOIN vectors v ON v.memory_seq = c.memory_seq"
                    " WHERE c.id > ? ORDER BY c.id",
                    [after],
                )
            )
            if not rows:
                if unchanged is not None:
                    unchanged[after] = True
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
        return self._per_seq("vectors", seqs, self._vectors_of)

    def _vectors_of(self, seqs: Sequence[int]) -> dict[int, bytes]:
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
        if self.native_vectors:
            # The portable blob stays beside the pgvector column: the Rocchio probe
            # reads stored vectors back (`vectors_of`) the same way on both backends.
            self._conn.executemany(
                "INSERT INTO vectors (memory_seq, scope_id, vector, embedding)"
                " VALUES (?,?,?,?::vector)"
                " ON CONFLICT (memory_seq) DO UPDATE SET vector = excluded.vector,"
                " scope_id = excluded.scope_id, embedding = excluded.embedding",
                [(seq, layer, v.tobytes(), _vector_text(v.tolist())) for seq, layer, v in rows],
            )
            return
        self._conn.executemany(
            "INSERT INTO vectors (memory_seq, scope_id, vector) VALUES (?,?,?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vector = excluded.vector,"
            " scope_id = excluded.scope_id",
            [(seq, layer, vector.tobytes()) for seq, layer, vector in rows],
        )

    part = StorePart(
        "vectors",
        migrations="assocmem.vectors",
        tables=("vectors",),  # created with the engine's first tables
        on_write=put_written,
        on_move=move_vector,
        on_info=index_embeddings,
        on_extension=add_embedding_column,
        forget_tables=("vectors",),
        grown_tables=("vectors",),
    )


def _vector_text(vector: Sequence[float]) -> str:
    """A vector as pgvector reads it from text."""
    return json.dumps([float(v) for v in vector])
