"""The vector arm's index: every stored vector of one database, grouped by scope layer.

Invariants: the index mirrors the store's vector table as of the last vector
change it applied (`VectorQueries.vector_changes`: every process's writes, moves between
layers and deletions), caught up inside the snapshot of the read that searches,
so it never returns a memory that read cannot see: candidates come only from the
reader's own layers, and the read's visibility check (scope, access, status,
conditions) runs on them before they are ranked. A search copies no stored vector:
each layer keeps its rows in one contiguous, append-only block (capacity doubles;
a removed row is zeroed in place and skipped), and a scan is a product over that
block.

A layer of `IndexSettings.threshold` vectors or more also gets an HNSW graph
(`ann.Graph`, faiss), built off the read path; until it is ready, and for rows
written since (the block's tail, folded into the graph in the background), the
layer is searched exactly. Where the store lives in a file, each graph is saved
beside it (`VectorQueries.vector_index_path`) with the last change it covers, loaded by
the next process and caught up from there; a file that is unreadable, from
another embedder, ahead of the store, or whose rows disagree with the store's is
set aside and its layer rebuilt. A forgotten memory's row is zeroed at once, in
memory, and the layer's file is rewritten without it at the next save, which a
deletion schedules.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from assocmem.optional import require_numpy
from assocmem.store import Store, View
from assocmem.vectors import ann

if TYPE_CHECKING:
    import numpy as np

    from assocmem.store.rows import VectorRows

logger = logging.getLogger(__name__)


class IndexedVectors(Store, Protocol):
    """What the index reads of a store: its vector rows and changes (`VectorQueries`)
    and, for a search, the reader's layers and visibility."""

    def vector_index_path(self) -> str | None: ...

    def vector_changes(self, after: int) -> VectorRows: ...

    def vector_layers(self) -> tuple[int, dict[int, int]]: ...

    def vector_layer_rows(self, layers: Sequence[int]) -> VectorRows: ...

    def vectors_of(self, seqs: Sequence[int]) -> dict[int, bytes]: ...


# Candidates fetched per requested result before the view's conditions filter
# them: generous, so a selective `where` still leaves enough to rank.
OVERFETCH = 4
# Exact search up to this many vectors in a layer: at 50k x 384 a scan takes a few
# milliseconds and the HNSW search a fraction of one; below it a graph costs build time
# and memory for little.
ANN_THRESHOLD = 50_000
# A graph serves a search while it asks for at most this share of the layer; past it a
# scan costs less than a search that wide (HNSW time grows with its breadth).
GRAPH_SHARE = 16
# Rows written since a graph was built are scanned exactly until this many gather,
# then added to the graph in chunks of FOLD_CHUNK, each under the index lock: a chunk's
# insertion is the longest a search waits on it.
FOLD_AT = 1_024
FOLD_CHUNK = 256
# A layer's file is rewritten after this many changes (or any deletion): at worst the
# next process re-adds that many rows from the store.
SAVE_AFTER = 10_000
# A block whose removed rows outnumber its live ones is compacted (and its graph rebuilt).
COMPACT_MIN_ROWS = 1_024
# A scan multiplies this many rows at a time. OpenBLAS splits a larger matrix-vector
# product over every core, and when other processes hold cores those threads wait on
# each other, one product taking tens of times longer than the same rows in pieces;
# pieces this small stay on the caller's thread, and numpy's
# process-wide thread setting stays whatever the application made it.
SCAN_ROWS = 1_024
# Spot checks of a loaded file's vectors against the store's.
FILE_SAMPLES = 8
FIRST_CAPACITY = 64


@dataclass(frozen=True)
class IndexSettings:
    """How a `VectorIndex` searches and keeps its graphs.

    Parameters:
        threshold: a layer's vector count from which it gets an HNSW graph.
        background: build, fold and save graphs on a thread of their own (False:
            at the end of the search that made them due, as tests and benchmarks want).
        ann: use graphs at all (True needs faiss; without it every layer is scanned).
    """

    threshold: int = ANN_THRESHOLD
    background: bool = True
    ann: bool = True


DEFAULT_SETTINGS = IndexSettings()


class LayerVectors:
    """One layer's vectors: rows appended in order, row ``i`` being memory ``seqs[i]``.

    Rows below ``graph.size`` live in the graph's own storage (one copy, no more);
    the rest in ``tail``. A removed row keeps its place, its seq set to -1 and its
    vector to zeros, so positions in the graph never shift.
    """

    def __init__(self, dims: int, graph: ann.Graph | None = None, seqs: Any = None) -> None:
        numpy = require_numpy()
        self.graph = graph
        self.seqs = numpy.zeros(FIRST_CAPACITY, dtype=numpy.int64)
        self.rows = self.live = 0
        if seqs is not None:
            self.seqs, self.rows = seqs.copy(), len(seqs)
            self.live = int((seqs >= 0).sum())
        self.tail = numpy.zeros((FIRST_CAPACITY, dims), dtype=numpy.float32)
        self.unsaved = 0
        self.erased = self.building = False

    @property
    def head(self) -> int:
        """Rows held by the graph."""
        return self.graph.size if self.graph is not None else 0

    def append(self, seqs: Any, matrix: np.ndarray) -> int:
        """Add rows; returns the first one's number."""
        numpy = require_numpy()
        start, count = self.rows, len(seqs)
        self.tail = _fit(self.tail, start - self.head + count)
        self.seqs = _fit(self.seqs, start + count)
        self.tail[start - self.head : start - self.head + count] = matrix
        self.seqs[start : start + count] = numpy.asarray(seqs, dtype=numpy.int64)
        self.rows += count
        self.live += count
        self.unsaved += count
        return start

    def vector(self, row: int) -> Any:
        if row < self.head:
            assert self.graph is not None
            return self.graph.vectors()[row]
        return self.tail[row - self.head]

    def remove(self, row: int) -> None:
        """Zero a row and forget its memory."""
        if row < self.head:
            assert self.graph is not None
            self.graph.erase(row)
        else:
            self.tail[row - self.head] = 0
        self.seqs[row] = -1
        self.live -= 1
        self.unsaved += 1

    def matrix(self) -> Any:
        """Every row, as one new matrix (a compaction's copy; searches never make one)."""
        numpy = require_numpy()
        tail = self.tail[: self.rows - self.head]
        return (
            tail.copy() if self.graph is None else numpy.concatenate([self.graph.vectors(), tail])
        )

    def scores(self, query: np.ndarray) -> Any:
        """Cosine of ``query`` to every row (removed rows score 0), no vector copied."""
        numpy = require_numpy()
        tail = _product(self.tail[: self.rows - self.head], query)
        if self.graph is None:
            return tail
        return numpy.concatenate([_product(self.graph.vectors(), query), tail])

    def nearest(self, query: np.ndarray, fetch: int) -> list[tuple[int, float]]:
        """Up to ``fetch`` ``(seq, cosine)`` of this layer nearest ``query``."""
        numpy = require_numpy()
        if self.graph is None or fetch * GRAPH_SHARE > self.live:
            scores = self.scores(query)
            rows = numpy.arange(len(scores))
        else:
            positions, found = self.graph.search(query, fetch)
            tail = _product(self.tail[: self.rows - self.head], query)
            rows = numpy.concatenate([positions, numpy.arange(len(tail)) + self.head])
            scores = numpy.concatenate([found, tail])
        if len(rows) > fetch:
            top = numpy.argpartition(-scores, fetch - 1)[:fetch]
            rows, scores = rows[top], scores[top]
        seqs = self.seqs[rows]
        keep = seqs >= 0
        return list(zip(seqs[keep].tolist(), scores[keep].tolist(), strict=True))

    def fold(self, limit: int) -> int:
        """Move up to ``limit`` tail rows into the graph; how many moved."""
        assert self.graph is not None
        waiting = self.rows - self.head
        count = min(limit, waiting)
        if count:
            self.graph.add(self.tail[:count])
            self.tail[: waiting - count] = self.tail[count:waiting]
        return count


def _product(matrix: Any, query: np.ndarray) -> Any:
    """``matrix @ query``, in pieces of `SCAN_ROWS` rows."""
    numpy = require_numpy()
    query = numpy.asarray(query, dtype=numpy.float32)
    out = numpy.empty(len(matrix), dtype=numpy.float32)
    for start in range(0, len(matrix), SCAN_ROWS):
        numpy.dot(matrix[start : start + SCAN_ROWS], query, out=out[start : start + SCAN_ROWS])
    return out


def _fit(array: Any, needed: int, fill: int = 0) -> Any:
    """``array``, or a copy with its capacity doubled until ``needed`` rows fit (new
    entries ``fill``)."""
    if needed <= len(array):
        return array
    numpy = require_numpy()
    capacity = max(len(array), FIRST_CAPACITY)
    while capacity < needed:
        capacity *= 2
    grown = numpy.full((capacity, *array.shape[1:]), fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


class VectorIndex:
    """All stored vectors of one database, refreshed from whichever of its
    connections a search reads through.

    Parameters:
        dims: the embedder's dimension.
        model: the embedder's model id, recorded in (and checked against) index files.
        settings: an `IndexSettings`.
    """

    def __init__(self, dims: int, model: str = "", settings: IndexSettings = DEFAULT_SETTINGS):
        self._np: Any = require_numpy()
        self.dims, self.model, self.settings = dims, model, settings
        self._graphs = settings.ann and ann.available()
        self._lock = threading.RLock()
        self._layers: dict[int, LayerVectors] = {}
        self._layer_of: np.ndarray = self._np.full(FIRST_CAPACITY, -1, dtype=self._np.int64)
        self._row_of: np.ndarray = self._np.full(FIRST_CAPACITY, -1, dtype=self._np.int64)
        self._last = 0
        self._loaded = False
        self._folder: Path | None = None
        self._worker: threading.Thread | None = None
        self._due: set[int] = set()  # layers changed since graph work last looked at them

    # -- keeping up with the store -----------------------------------------------------

    def refresh(self, store: IndexedVectors) -> None:
        """Apply the vector changes ``store`` shows beyond the last applied (any process's)."""
        with store.snapshot(), self._lock:
            if not self._loaded:
                self._load(store)
            else:
                self._apply(store.vector_changes(self._last))
        self._maintain()

    def _load(self, store: IndexedVectors) -> None:
        """Fill the index: saved graphs first, the other layers from the store."""
        last, counts = store.vector_layers()
        path = store.vector_index_path()
        self._folder = Path(path) if path and self._graphs else None
        files = self._files(last, counts)
        rows = store.vector_layer_rows([layer for layer in counts if layer not in files])
        for layer, (_, seqs, graph) in files.items():
            self._install(layer, LayerVectors(self.dims, graph, seqs))
        self._add_rows(rows)
        self._last = min([rows.last, *(header.last for header, _, _ in files.values())])
        self._apply(store.vector_changes(self._last))
        for layer in files:
            self._check_file(store, layer, counts.get(layer, 0))
        self._loaded = True

    def _files(self, last: int, counts: dict[int, int]) -> dict[int, Any]:
        """The usable saved graphs, by layer."""
        found: dict[int, Any] = {}
        if self._folder is None:
            return found
        for layer, path in ann.layer_files(self._folder):
            try:
                header, seqs, graph = ann.Graph.load(path)
            except ann.IndexFileError as exc:
                logger.warning("vector index file set aside, its layer is rebuilt: %s", exc)
                continue
            fits = (header.layer, header.model, header.dims) == (layer, self.model, self.dims)
            if fits and header.last <= last and layer in counts:
                found[layer] = (header, seqs, graph)
            else:
                logger.info("vector index file %s does not describe this store; rebuilt", path)
        return found

    def _check_file(self, store: IndexedVectors, layer: int, stored: int) -> None:
        """Rebuild ``layer`` from the store unless its loaded file agrees with it: the
        same number of vectors, and the same vectors for a sample of them."""
        numpy = self._np
        vectors = self._layers[layer]
        live = numpy.flatnonzero(vectors.seqs[: vectors.rows] >= 0)
        sample = [int(vectors.seqs[r]) for r in live[:: max(1, len(live) // FILE_SAMPLES)]]
        truth = store.vectors_of(sample)
        same = vectors.live == stored and all(
            seq in truth
            and numpy.array_equal(
                numpy.frombuffer(truth[seq], dtype=numpy.float32), self._vector(seq)
            )
            for seq in sample
        )
        if not same:
            logger.warning("vector index file of layer %d disagrees with the store; rebuilt", layer)
            self._drop_layer(layer)
            self._add_rows(store.vector_layer_rows([layer]))

    def _apply(self, changes: VectorRows) -> None:
        """Apply a catch-up: removals, then written, replaced and moved vectors."""
        for seq in changes.removed:
            self._remove(seq, erase=True)
        if changes.seqs:
            numpy = self._np
            fresh = [i for i, seq in enumerate(changes.seqs) if not self._holds(seq, changes, i)]
            if fresh:
                index = numpy.asarray(fresh)
                self._add_rows(changes, index)
        self._last = max(self._last, changes.last)
        if changes.removed or changes.seqs:
            self._compact()

    def _holds(self, seq: int, changes: VectorRows, i: int) -> bool:
        """Whether the index already has this vector of ``seq`` in that layer (a change
        applied twice); otherwise its old row, if any, is removed."""
        if self._located(seq) < 0:
            return False
        layer = int(self._layer_of[seq])
        if layer == changes.layers[i] and self._np.array_equal(
            self._vector(seq), changes.matrix[i]
        ):
            return True
        self._remove(seq, erase=False)
        return False

    def _add_rows(self, rows: VectorRows, pick: Any = None) -> None:
        """Append ``rows`` (those at positions ``pick``, default all) to their layers."""
        numpy = self._np
        seqs = numpy.asarray(rows.seqs, dtype=numpy.int64)
        layers = numpy.asarray(rows.layers, dtype=numpy.int64)
        matrix = rows.matrix
        if pick is not None:
            seqs, layers, matrix = seqs[pick], layers[pick], matrix[pick]
        if not len(seqs):
            return
        self._layer_of = _fit(self._layer_of, int(seqs.max()) + 1, -1)
        self._row_of = _fit(self._row_of, int(seqs.max()) + 1, -1)
        order = numpy.argsort(layers, kind="stable")  # grouped by layer, in one pass
        bounds = numpy.flatnonzero(numpy.diff(layers[order])) + 1
        for mine in numpy.split(order, bounds):
            layer = int(layers[mine[0]])
            vectors = self._layers.setdefault(layer, LayerVectors(self.dims))
            start = vectors.append(seqs[mine], matrix[mine])
            self._due.add(layer)
            self._layer_of[seqs[mine]] = layer
            self._row_of[seqs[mine]] = numpy.arange(start, start + len(mine))

    def _install(self, layer: int, vectors: LayerVectors) -> None:
        seqs = vectors.seqs[: vectors.rows]
        rows = self._np.flatnonzero(seqs >= 0)
        if len(rows):
            self._layer_of = _fit(self._layer_of, int(seqs.max()) + 1, -1)
            self._row_of = _fit(self._row_of, int(seqs.max()) + 1, -1)
            self._layer_of[seqs[rows]] = layer
            self._row_of[seqs[rows]] = rows
        vectors.unsaved = 0
        self._layers[layer] = vectors
        self._due.add(layer)

    def _located(self, seq: int) -> int:
        """``seq``'s row, or -1 where the index holds no vector of it."""
        if seq >= len(self._row_of):
            return -1
        return int(self._row_of[seq])

    def _vector(self, seq: int) -> Any:
        return self._layers[int(self._layer_of[seq])].vector(int(self._row_of[seq]))

    def _remove(self, seq: int, *, erase: bool) -> None:
        row = self._located(seq)
        if row < 0:
            return
        layer = int(self._layer_of[seq])
        vectors = self._layers[layer]
        vectors.remove(row)
        vectors.erased = vectors.erased or erase
        self._due.add(layer)
        self._layer_of[seq] = self._row_of[seq] = -1

    def _drop_layer(self, layer: int) -> None:
        """Forget a layer's block, and its file, which may hold removed vectors."""
        vectors = self._layers.pop(layer)
        seqs = vectors.seqs[: vectors.rows]
        seqs = seqs[seqs >= 0]
        self._layer_of[seqs] = self._row_of[seqs] = -1
        if self._folder is not None:
            ann.remove_file(self._folder, layer)

    def _compact(self) -> None:
        """Rewrite blocks mostly made of removed rows as blocks of their live rows."""
        for layer, vectors in list(self._layers.items()):
            dead = vectors.rows - vectors.live
            if vectors.rows >= COMPACT_MIN_ROWS and dead > vectors.live:
                rows = self._np.flatnonzero(vectors.seqs[: vectors.rows] >= 0)
                seqs, matrix = vectors.seqs[rows], vectors.matrix()[rows]
                self._drop_layer(layer)
                fresh = LayerVectors(self.dims)
                fresh.append(seqs, matrix)
                fresh.erased = True  # the old file still holds the removed rows
                self._install(layer, fresh)
                fresh.unsaved = len(seqs)

    def layer_sizes(self) -> dict[int, tuple[int, int]]:
        """Each loaded layer's live vectors and the rows its graph holds (0: scanned)."""
        with self._lock:
            return {layer: (v.live, v.head) for layer, v in self._layers.items()}

    # -- searching ---------------------------------------------------------------------

    def similarities(self, query: np.ndarray, seqs: list[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of these (already visible) memories."""
        with self._lock:
            held = [s for s in seqs if self._located(s) >= 0]
            if not held:
                return {}
            matrix = self._np.stack([self._vector(s) for s in held])
        return {s: float(v) for s, v in zip(held, matrix @ query, strict=True)}

    def search(
        self, store: IndexedVectors, view: View, query: np.ndarray, limit: int
    ) -> list[tuple[int, float]]:
        """``(seq, cosine)`` of the memories ``view`` sees in ``store`` most similar to
        ``query``, best first (ties by sequence number)."""
        self.refresh(store)
        layers = store.layers(view.scope)  # scope before similarity
        with self._lock:
            total = sum(self._layers[x].live for x in layers if x in self._layers)
        fetch = min(total, limit * OVERFETCH)
        while fetch > 0:
            with self._lock:
                candidates = self._nearest(layers, query, fetch)
            allowed = store.visible(view, [seq for seq, _ in candidates])
            found = [(seq, score) for seq, score in candidates if seq in allowed]
            if len(found) >= limit or fetch >= total:
                return found[:limit]
            fetch = min(total, fetch * 4)
        return []

    def _nearest(self, layers: Iterable[int], query: np.ndarray, fetch: int) -> list[Any]:
        found = [
            hit
            for layer in layers
            if layer in self._layers
            for hit in self._layers[layer].nearest(query, fetch)
        ]
        found.sort(key=lambda hit: (-hit[1], hit[0]))
        return found[:fetch]

    # -- graphs: built, folded and saved off the read path -----------------------------

    def settle(self) -> None:
        """Wait until no graph work is running (tests, benchmarks, a clean close)."""
        worker = self._worker
        if worker is not None:
            worker.join()

    def _maintain(self) -> None:
        """Run the graph work now due: on a thread of its own, or here."""
        if not self._graphs:
            return
        if not self.settings.background:
            self._work()
            return
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            if self._next_job() is None:
                return
            self._worker = threading.Thread(target=self._work, name="assocmem-ann", daemon=True)
            self._worker.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                job = self._next_job()
            if job is None:
                return
            kind, layer = job
            try:
                getattr(self, f"_{kind}")(layer)
            except Exception:  # a failed build or save leaves exact search, which is correct
                logger.exception("vector index %s of layer %d failed", kind, layer)
                with self._lock:
                    self._layers.get(layer, LayerVectors(self.dims)).building = True
                return

    def _next_job(self) -> tuple[str, int] | None:
        for layer in list(self._due):
            job = self._job_of(self._layers.get(layer))
            if job is not None:
                return job, layer
            self._due.discard(layer)  # nothing due until it changes again
        return None

    def _job_of(self, vectors: LayerVectors | None) -> str | None:
        if vectors is None or vectors.building:
            return None
        if vectors.graph is None:
            return "build" if vectors.live >= self.settings.threshold else None
        if vectors.rows - vectors.head >= FOLD_AT:
            return "fold"
        if self._folder is not None and (vectors.erased or vectors.unsaved >= SAVE_AFTER):
            return "save"
        return None

    def _build(self, layer: int) -> None:
        with self._lock:
            vectors = self._layers[layer]
            vectors.building = True
            count = vectors.rows
            rows = vectors.tail[:count]  # appends go to later rows; removals are redone below
        graph = ann.Graph.build(rows)
        with self._lock:
            if self._layers.get(layer) is not vectors:
                return  # compacted or dropped meanwhile: its successor gets its own
            for row in self._np.flatnonzero(vectors.seqs[:count] < 0).tolist():
                graph.erase(row)
            vectors.tail = vectors.tail[count : vectors.rows].copy()
            vectors.graph = graph
            vectors.building = False
            vectors.erased = True  # nothing saved yet
            self._due.add(layer)
        logger.info("vector index: layer %d has an HNSW graph of %d rows", layer, count)

    def _fold(self, layer: int) -> None:
        with self._lock:
            vectors = self._layers[layer]
            vectors.fold(FOLD_CHUNK)

    def _save(self, layer: int) -> None:
        with self._lock:
            vectors = self._layers[layer]
            assert vectors.graph is not None and self._folder is not None
            while vectors.fold(FOLD_CHUNK):
                pass
            header = ann.Header(layer, self._last, vectors.rows, self.model, self.dims)
            vectors.erased, vectors.unsaved = False, 0
            try:
                vectors.graph.save(self._folder, header, vectors.seqs)
            except OSError as exc:  # a read-only folder: the graphs serve this process only
                logger.warning("vector index not saved, nor tried again: %s", exc)
                self._folder = None
