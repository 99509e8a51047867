"""An approximate nearest-neighbour graph over one layer's vectors, and its file.

The graph is faiss's HNSW over inner products of unit vectors (cosine). Position
``i`` of the graph is row ``i`` of its layer (`index.LayerVectors`): rows are only
ever appended, so the two never drift apart, and a removed row is zeroed in place
(`erase`), so its bytes leave memory at once and the file at its next save.

faiss was chosen by measurement (`assocmem bench ann` on 10k-100k MiniLM-static
vectors): at equal graph settings faiss, usearch and
hnswlib found the same neighbours (recall@10 within 0.005), and faiss built
1.5-2.4x faster than usearch and answered 3-5x sooner; hnswlib, as fast as faiss,
ships no wheel for current Pythons (it compiles at install). usearch also keeps a
removed vector's bytes in its saved file, which `forget` cannot allow; faiss's
storage can be zeroed in place.

A file (`save`, `load`) is a header naming the store state it covers (the last
vector change it applied, the embedder, the row count), the row-to-memory table,
then faiss's own serialisation. It is written aside and renamed into place, so a
crash leaves the old file or the new one, never a torn one; anything unreadable
or inconsistent is refused (`IndexFileError`) and the layer is rebuilt from the
stored vectors.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from assocmem.errors import DependencyMissing

if TYPE_CHECKING:
    import numpy as np

ANN_EXTRA = "assocmem[embed]"
MAGIC = b"assocmem-ann\n"
FORMAT = 1
HEADER_LENGTH = struct.Struct("<I")
SUFFIX = ".ann"

# Graph degree and build breadth. On 100k MiniLM-static vectors (mean pairwise
# cosine 0.69: a hard, crowded set) M=32 with efConstruction=200 reached recall@10
# 0.93 at efSearch 128 and 0.98 at 512; faiss's default efConstruction (40) left
# 0.937 at efSearch 128 in the run. Larger M costs build time linearly.
GRAPH_DEGREE = 32
BUILD_BREADTH = 200
# The search breadth that held recall@10 >= 0.98 on those crowded vectors grew 4x from
# 100k rows (512: 0.981; in the vector arm 0.989) to 1M (2048: 0.981; 1024 gave 0.967).
# Between and beyond it follows that slope, 512 * 4 ** log10(rows / 100k), never below
# 512; a read asking for more candidates searches wider still.
SEARCH_BREADTH = 512
BREADTH_ROWS = 100_000
BREADTH_GROWTH = 4


class IndexFileError(Exception):
    """An index file that cannot be used as it is (internal: its layer is rebuilt from
    the store, so it never reaches a caller)."""


@dataclass(frozen=True)
class Header:
    """What an index file covers: ``layer``'s ``rows`` rows as of vector change
    ``last``, embedded by ``model`` in ``dims`` dimensions."""

    layer: int
    last: int
    rows: int
    model: str
    dims: int


def require_faiss() -> Any:
    """The faiss module, or `DependencyMissing` naming the extra."""
    try:
        import faiss
    except ImportError as exc:
        raise DependencyMissing(
            f"the approximate vector index needs faiss-cpu: install `{ANN_EXTRA}`"
        ) from exc
    return faiss


def available() -> bool:
    """Whether faiss is installed (without it every layer is searched exactly)."""
    try:
        require_faiss()
    except DependencyMissing:
        return False
    return True


class Graph:
    """An HNSW graph over rows ``0 .. size-1`` of one layer (inner product)."""

    def __init__(self, index: Any) -> None:
        self._faiss = require_faiss()
        self._index = index

    @classmethod
    def build(cls, matrix: np.ndarray) -> Graph:
        """A graph over every row of ``matrix`` (unit float32 rows)."""
        faiss = require_faiss()
        index = faiss.IndexHNSWFlat(matrix.shape[1], GRAPH_DEGREE, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = BUILD_BREADTH
        graph = cls(index)
        graph.add(matrix)
        return graph

    @property
    def size(self) -> int:
        """How many rows the graph holds."""
        return int(self._index.ntotal)

    def add(self, matrix: np.ndarray) -> None:
        """Append rows (they take the next positions)."""
        if len(matrix):
            self._index.add(matrix)

    def vectors(self) -> np.ndarray:
        """The graph's own copy of its rows, as a writable view (no copy): valid until
        the next `add`, which may move it."""
        import numpy

        storage = self._faiss.downcast_index(self._index.storage)
        if self.size == 0:
            return numpy.zeros((0, self._index.d), dtype=numpy.float32)
        raw = self._faiss.rev_swig_ptr(storage.codes.data(), storage.codes.size())
        vectors: np.ndarray = raw.view(numpy.float32).reshape(self.size, self._index.d)
        return vectors

    def erase(self, row: int) -> None:
        """Zero a removed row's vector: its bytes are gone; its node still routes."""
        self.vectors()[row] = 0

    def search(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, scores)`` of up to ``count`` rows nearest ``query``, best first."""
        breadth = max(search_breadth(self.size), count)
        params = self._faiss.SearchParametersHNSW(efSearch=breadth)
        scores, positions = self._index.search(query.reshape(1, -1), count, params=params)
        keep = positions[0] >= 0
        return positions[0][keep], scores[0][keep]

    # -- the file --------------------------------------------------------------------

    def save(self, folder: Path, header: Header, seqs: np.ndarray) -> Path:
        """Write the graph with its row-to-memory table as ``folder``'s file for its
        layer, atomically; returns the file."""
        folder.mkdir(parents=True, exist_ok=True)
        _clear_abandoned(folder)
        target = layer_file(folder, header.layer)
        meta = json.dumps({"format": FORMAT, **header.__dict__}).encode()
        with _written_aside(target) as handle:
            handle.write(MAGIC + HEADER_LENGTH.pack(len(meta)) + meta)
            handle.write(seqs[: header.rows].astype("<i8").tobytes())
            writer = self._faiss.PyCallbackIOWriter(handle.write)
            self._faiss.write_index(self._index, writer)
            del writer  # flushes faiss's buffer into the file
        return target

    @classmethod
    def load(cls, path: Path) -> tuple[Header, np.ndarray, Graph]:
        """The header, the row-to-memory table and the graph of an index file;
        `IndexFileError` for anything else."""
        import numpy

        faiss = require_faiss()
        try:
            with open(path, "rb") as handle:
                header = read_header(handle)
                table = handle.read(8 * header.rows)
                if len(table) != 8 * header.rows:
                    raise IndexFileError(f"{path} is cut short")
                reader = faiss.PyCallbackIOReader(handle.read)
                index = faiss.read_index(reader)
        except (OSError, RuntimeError, ValueError) as exc:
            raise IndexFileError(f"{path} cannot be read: {exc}") from exc
        graph = cls(index)
        if graph.size != header.rows or index.d != header.dims:
            raise IndexFileError(f"{path} does not hold the rows its header names")
        seqs = numpy.frombuffer(table, dtype="<i8").astype(numpy.int64)
        return header, seqs, graph


def search_breadth(rows: int) -> int:
    """The HNSW search breadth for a graph of ``rows`` rows (see `SEARCH_BREADTH`)."""
    if rows <= BREADTH_ROWS:
        return SEARCH_BREADTH
    return round(SEARCH_BREADTH * float(BREADTH_GROWTH ** math.log10(rows / BREADTH_ROWS)))


def read_header(handle: IO[bytes]) -> Header:
    """The header at the start of an index file; `IndexFileError` when it is not one."""
    if handle.read(len(MAGIC)) != MAGIC:
        raise IndexFileError("not an assocmem index file")
    try:
        (length,) = HEADER_LENGTH.unpack(handle.read(HEADER_LENGTH.size))
        fields = json.loads(handle.read(length))
        if fields.pop("format") != FORMAT:
            raise IndexFileError("an index file of another format")
        return Header(**fields)
    except (struct.error, ValueError, TypeError, KeyError) as exc:
        raise IndexFileError(f"a damaged index file header: {exc}") from exc


def layer_file(folder: Path, layer: int) -> Path:
    """The index file of ``layer`` in ``folder``."""
    return folder / f"layer-{layer}{SUFFIX}"


def layer_files(folder: Path) -> Iterator[tuple[int, Path]]:
    """``(layer, file)`` of every index file in ``folder``."""
    if not folder.is_dir():
        return
    for path in folder.glob(f"layer-*{SUFFIX}"):
        number = path.name.removeprefix("layer-").removesuffix(SUFFIX)
        if number.isdigit():
            yield int(number), path


def remove_file(folder: Path, layer: int) -> None:
    """Delete ``layer``'s index file, if any (its layer is gone or below the threshold)."""
    with contextlib.suppress(OSError):
        layer_file(folder, layer).unlink()


@contextlib.contextmanager
def _written_aside(target: Path) -> Iterator[IO[bytes]]:
    """A file written beside ``target``, flushed to disk and renamed over it on
    success; removed on failure, leaving ``target`` as it was."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    _sync_folder(target.parent)


# A file written aside this long ago belongs to a save that died (a crash, a kill):
# no save of a layer lasts this long.
ABANDONED_AFTER_S = 3_600


def _clear_abandoned(folder: Path) -> None:
    """Delete files that saves which died left behind (another process may be writing a
    newer one right now, so only old ones)."""
    for path in folder.glob(f".layer-*{SUFFIX}.*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - path.stat().st_mtime > ABANDONED_AFTER_S:
                path.unlink()


def _sync_folder(folder: Path) -> None:
    """Make a rename durable (POSIX); elsewhere the rename alone is what there is."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
