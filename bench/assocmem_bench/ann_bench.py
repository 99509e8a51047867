"""The vector arm at scale: exact scans against HNSW graphs, and the libraries compared.

For each size N, memories are generated as `core.Corpus` writes them (so the
vectors are those `bench core` and `bench scale` stores hold) and embedded by a
local form (``minilm-static`` by default: fast enough for a million; its vectors
are crowded, mean pairwise cosine ~0.69, which makes neighbours hard to tell apart);
queries are the question reads' "what about X and Y?".

- ``libraries``: each installed ANN library (faiss, usearch, hnswlib) builds a graph
  over the N vectors with the same degree and build breadth (`ann.GRAPH_DEGREE`,
  `ann.BUILD_BREADTH`) on every core, then answers each query alone on one
  thread at several search breadths: build seconds, serialised size, p50/p95 and
  recall@10 against the exact top 10. The exact scan (numpy, one product over the
  matrix) is timed beside them.
- ``index`` (sizes up to ``index_max``): the real vector arm over a real SQLite store
  of N memories: `VectorSpace.search` p50/p95 scanning and with the layer's graph
  (built when due, timed), recall@10 of the graph arm against the scan, the index
  file's size, and the time a fresh process's index takes to load it.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.capabilities import open_store
from assocmem.memory import checked_scope
from assocmem.progress import track
from assocmem.store import View
from assocmem.vectors import ann
from assocmem.vectors.embedders import Embedder, load_embedder
from assocmem.vectors.index import IndexSettings
from assocmem.vectors.space import VectorSpace

from .core import Corpus, environment, percentile

QUERIES = 300
SEED = 7
BREADTHS = (128, 256, 512, 1024, 2048)
WRITE_BATCH = 1_000
K = 10
LIBRARIES = ("faiss", "usearch", "hnswlib")


def corpus(size: int, queries: int) -> tuple[list[str], list[str]]:
    """``size`` memory texts and ``queries`` questions, as the core benchmark makes them."""
    words = Corpus(random.Random(SEED))
    texts = [words.memory(i)["text"] for i in range(size)]
    asks = ["what about " + " and ".join(words.concepts(2)) + "?" for _ in range(queries)]
    return texts, asks


def exact_top(matrix: Any, queries: Any) -> tuple[Any, list[float]]:
    """The exact top ``K`` of each query, and each single scan's milliseconds."""
    import numpy

    tops, times = [], []
    for query in queries:
        start = time.perf_counter()
        scores = matrix @ query
        top = numpy.argpartition(-scores, K)[:K]
        times.append((time.perf_counter() - start) * 1000)
        tops.append(set(top.tolist()))
    return tops, times


def _summary(times: Sequence[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(times, 0.5), 3), "p95_ms": round(percentile(times, 0.95), 3)}


def _faiss(matrix: Any) -> tuple[Any, Callable[[Any, int], Any]]:
    faiss = ann.require_faiss()
    index = faiss.IndexHNSWFlat(matrix.shape[1], ann.GRAPH_DEGREE, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ann.BUILD_BREADTH
    index.add(matrix)

    def search(query: Any, breadth: int) -> Any:
        params = faiss.SearchParametersHNSW(efSearch=breadth)
        return index.search(query.reshape(1, -1), K, params=params)[1][0]

    return index, search


def _usearch(matrix: Any) -> tuple[Any, Callable[[Any, int], Any]]:
    from usearch.index import Index

    index = Index(
        ndim=matrix.shape[1],
        metric="ip",
        dtype="f32",
        connectivity=ann.GRAPH_DEGREE,
        expansion_add=ann.BUILD_BREADTH,
    )
    index.add(range(len(matrix)), matrix)

    def search(query: Any, breadth: int) -> Any:
        index.expansion_search = breadth
        return index.search(query, K, threads=1).keys

    return index, search


def _hnswlib(matrix: Any) -> tuple[Any, Callable[[Any, int], Any]]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=matrix.shape[1])
    index.init_index(len(matrix), ef_construction=ann.BUILD_BREADTH, M=ann.GRAPH_DEGREE)
    index.add_items(matrix, list(range(len(matrix))))
    index.set_num_threads(1)

    def search(query: Any, breadth: int) -> Any:
        index.set_ef(breadth)
        return index.knn_query(query, K)[0][0]

    return index, search


BUILDERS = {"faiss": _faiss, "usearch": _usearch, "hnswlib": _hnswlib}


def _saved_bytes(name: str, index: Any) -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "index")
        if name == "faiss":
            ann.require_faiss().write_index(index, path)
        elif name == "usearch":
            index.save(path)
        else:
            index.save_index(path)
        return os.path.getsize(path)


def library(name: str, matrix: Any, queries: Any, truth: list[set[int]]) -> dict[str, Any]:
    """Build ``name``'s graph over ``matrix`` and sweep its search breadth."""
    try:
        start = time.perf_counter()
        index, search = BUILDERS[name](matrix)
        built = time.perf_counter() - start
    except ImportError as exc:
        return {"skipped": f"not installed ({exc})"}
    report: dict[str, Any] = {"build_s": round(built, 1)}
    report["file_mb"] = round(_saved_bytes(name, index) / 2**20, 1)
    for breadth in BREADTHS:
        times, hits = [], 0
        for query, expected in zip(queries, truth, strict=True):
            start = time.perf_counter()
            found = search(query, breadth)
            times.append((time.perf_counter() - start) * 1000)
            hits += len(expected & {int(x) for x in found})
        report[f"ef{breadth}"] = {"recall@10": round(hits / (K * len(truth)), 4), **_summary(times)}
    return report


def _filled_store(folder: Path, texts: list[str], embedder: Embedder) -> str:
    target = str(folder / "ann-bench.db")
    with Memory(target, agent_id="bench", embedder=embedder) as memory:
        batches = range(0, len(texts), WRITE_BATCH)
        for start in track(batches, desc=f"writing {len(texts):,} memories", unit="batch"):
            memory.write_many([{"text": t} for t in texts[start : start + WRITE_BATCH]])
    return target


def _timed_search(
    space: VectorSpace, store: Any, vectors: Any
) -> tuple[list[list[int]], list[float]]:
    view = View(scope=checked_scope("bench"))
    found, times = [], []
    for query in vectors:
        start = time.perf_counter()
        found.append([seq for seq, _ in space.search(store, view, query, K)])
        times.append((time.perf_counter() - start) * 1000)
    return found, times


def index(texts: list[str], queries: Any, embedder: Embedder) -> dict[str, Any]:
    """The real vector arm over a real store of these memories, scanned and with a graph."""
    with tempfile.TemporaryDirectory() as folder:
        target = _filled_store(Path(folder), texts, embedder)
        store = open_store(target)
        try:
            exact = VectorSpace.checked(store, embedder, settings=IndexSettings(ann=False))
            truth, scan_times = _timed_search(exact, store, queries)
            settings = IndexSettings(threshold=min(len(texts), 50_000), background=False)
            start = time.perf_counter()
            graph = VectorSpace.checked(store, embedder, settings=settings)
            graph.index.refresh(store)  # builds the graph and saves it
            built = time.perf_counter() - start
            found, graph_times = _timed_search(graph, store, queries)
            start = time.perf_counter()
            VectorSpace.checked(store, embedder, settings=settings).index.refresh(store)
            reopened = time.perf_counter() - start
            files = list(ann.layer_files(Path(target + ".vec-index")))
        finally:
            store.close()
        hits = sum(len(set(a) & set(b)) for a, b in zip(found, truth, strict=True))
        return {
            "exact": _summary(scan_times),
            "graph": {**_summary(graph_times), "recall@10": round(hits / (K * len(truth)), 4)},
            "graph_build_s": round(built, 1),
            "file_mb": round(sum(p.stat().st_size for _, p in files) / 2**20, 1),
            "load_from_file_s": round(reopened, 2),
        }


def run(
    out: str,
    sizes: Sequence[int],
    *,
    embedder_name: str = "minilm-static",
    libraries: Sequence[str] = LIBRARIES,
    index_max: int = 100_000,
    queries: int = QUERIES,
) -> dict[str, Any]:
    """Measure every size and write the JSON report to ``out``."""
    import json

    embedder = load_embedder(embedder_name)
    report: dict[str, Any] = {
        "benchmark": "ann",
        "environment": environment(embedder=embedder.model_id, load=os.getloadavg()),
        "graph": {"M": ann.GRAPH_DEGREE, "efConstruction": ann.BUILD_BREADTH},
        "sizes": {},
    }
    for size in sizes:
        texts, asks = corpus(size, queries)
        matrix = embedder.embed(texts)
        vectors = embedder.embed(asks)
        truth, scan_times = exact_top(matrix, vectors)
        sample = matrix[: min(size, 2_000)]
        figures: dict[str, Any] = {
            "mean_pairwise_cosine": round(float((sample @ sample.T).mean()), 3),
            "exact_scan": _summary(scan_times),
            "libraries": {name: library(name, matrix, vectors, truth) for name in libraries},
        }
        if size <= index_max:
            figures["index"] = index(texts, vectors, embedder)
        report["sizes"][str(size)] = figures
        Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    report["environment"]["load_after"] = os.getloadavg()
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
