"""Scale benchmark: writes, reads, disk, memory and open time as a store grows.

The workload: memories of 8 words drawn from a Zipf-weighted 5,000-word
vocabulary (`corpus`), written as text alone, so assocmem extracts their concepts
itself; queries of 2 words drawn the same way. For each backend and size N, in a
fresh process each:

1. fill a fresh store to N with `write_many` batches (batched writes/s: the whole
   fill, and its last tenth, the rate at size N); no embedder;
2. open the store (open time, RSS after open, the first read's time), then time
   concept reads and text reads of the queries with no embedder attached, so no
   query is encoded; last, the text reads again as of a day later, when every
   memory a read returns has aged enough for the read to restart its decay clock
   (a fresh one has barely aged: `fusion.ACCESS_RESET_MIN`), as when an agent
   reads yesterday's notes;
3. open it with the embedder (its vectors embedded and stored: vectors/s), encode
   the queries (timed apart), then time reads that run the vector arm too, each
   query's vector already known, so again no read pays for encoding;
4. write ``SINGLE_WRITES`` more memories with single `write` calls, one
   transaction each, and no embedder (single writes/s at N).

RSS is the measuring process's: on PostgreSQL the server's own memory is not in it.
Disk is the SQLite file with its WAL, or the PostgreSQL database's size, after the fill;
also per memory, and split by table and index (`Stores.size_by_object`).
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.errors import AssocmemError
from assocmem.optional import require_numpy
from assocmem.progress import bar as progress_bar
from assocmem.vectors.embedders import Embedder, load_embedder

from .corpus import Corpus
from .measure import environment, latency, peak_rss_mb, rss_mb
from .stores import Stores, open_stores

# The workload: 8 words a memory from 5,000, asked about 2 words at a time.
VOCABULARY = 5_000
WORDS = 8
QUERY_WORDS = 2
QUERIES = 200
# The frequency ranks `spread_queries` draws its words from, commonest first.
SPREAD = (50, 2_000)
SEED = 22
BATCH = 1_000
# Single writes on top of the fill: enough to span one fold of pending link counts
# (~every 6,000 memories, links/pending_links.py), so the rate carries its cost.
SINGLE_WRITES = 6_000
AGENT = "bench"
DEFAULT_EMBEDDER = "minilm-static"

EmbedderFactory = Callable[[], Embedder]


def workload(queries: int = QUERIES) -> tuple[list[str], Iterator[str]]:
    """The queries, and an endless stream of memory texts after them: the same in every
    process, so a reader re-creates the queries without drawing a million texts."""
    corpus = Corpus(random.Random(SEED), VOCABULARY)
    asked = [" ".join(corpus.draw(QUERY_WORDS)) for _ in range(queries)]

    def texts() -> Iterator[str]:
        while True:
            yield " ".join(corpus.draw(WORDS))

    return asked, texts()


def spread_queries(queries: int = QUERIES) -> list[str]:
    """Two-word questions whose words are drawn evenly from the corpus's `SPREAD` ranks
    of frequency, not by frequency: a read's cost must not hinge on which words are
    asked, and Zipf-drawn questions ask mostly the commonest."""
    words = Corpus(random.Random(SEED), VOCABULARY).words[SPREAD[0] - 1 : SPREAD[1]]
    rng = random.Random(SEED + 1)
    return [" ".join(rng.sample(words, QUERY_WORDS)) for _ in range(queries)]


def run(
    sizes: Sequence[int],
    out: str,
    dbs: Sequence[str] = ("sqlite",),
    embedder: str | EmbedderFactory | None = DEFAULT_EMBEDDER,
    queries: int = QUERIES,
    singles: int = SINGLE_WRITES,
) -> dict[str, Any]:
    """Measure every size on every backend ``dbs`` names and write the JSON to ``out``.

    ``embedder`` is the vector reads' embedder: a registered name, a picklable factory
    (it is built in a fresh process), or None / ``"none"`` to skip them.
    """
    factory, skipped = _vector_embedder(embedder)
    runs: dict[str, dict[str, Any]] = {}
    described = {}
    with progress_bar(len(dbs) * len(sizes), desc="scale bench", unit="size") as bar:
        for db in dbs:
            with open_stores(db) as stores:
                described[stores.backend] = stores.describe()
                runs[stores.backend] = {}
                for size in sizes:
                    print(f"scale: {size:,} memories on {stores.backend}…", file=sys.stderr)
                    runs[stores.backend][str(size)] = _measure(
                        stores, size, factory or skipped, queries, singles
                    )
                    bar.update(1)
    report = {
        "benchmark": "scale",
        "environment": environment(backends=described),
        "workload": {
            "vocabulary": VOCABULARY,
            "words_per_memory": WORDS,
            "query_words": QUERY_WORDS,
            "queries": queries,
            "batch": BATCH,
            "single_writes": singles,
            "k": 10,
            "seed": SEED,
        },
        "runs": runs,
    }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def _vector_embedder(embedder: str | EmbedderFactory | None) -> tuple[EmbedderFactory | None, str]:
    """A factory for the vector reads' embedder, or why they are skipped. A named one is
    loaded here first, so a model that is not built is reported before any fill."""
    if embedder is None or embedder == "none":
        return None, "no embedder (--embedder none)"
    if not isinstance(embedder, str):
        return embedder, ""
    try:
        load_embedder(embedder)
    except AssocmemError as exc:
        return None, f"{embedder}: {exc}"
    return functools.partial(load_embedder, embedder), ""


def _measure(
    stores: Stores, size: int, embedder: EmbedderFactory | str, queries: int, singles: int
) -> dict[str, Any]:
    """The four steps on a fresh store of ``size`` memories, each in a fresh process;
    ``embedder`` is the vector reads' factory, or why they are skipped."""
    target = stores.new(f"scale-{size}")
    result = {"writes": _fresh(_fill, target, size)}
    result["disk_mb"] = round(stores.size_mb(target), 1)
    result["disk_bytes_per_memory"] = round(stores.size_mb(target) * 1e6 / size)
    result["disk_by_object"] = stores.size_by_object(target)
    result.update(_fresh(_read, target, queries))
    if isinstance(embedder, str):
        result["vector"] = {"skipped": embedder}
    else:
        result["vector"] = _fresh(_vector, target, embedder, queries)
        result["vector"]["disk_mb"] = round(stores.size_mb(target), 1)
    result["writes"].update(_fresh(_singles, target, size, singles))
    return result


def _fresh(task: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """``task(*args)`` in a new process: its open is cold and its peak memory its own."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(task, *args).result()


def _fill(target: str, size: int) -> dict[str, Any]:
    _, texts = workload()
    batches: list[tuple[int, float]] = []  # (memories, seconds)
    with Memory(target, agent_id=AGENT) as mem:
        with progress_bar(size, desc=f"fill {size:,}", unit="memory") as bar:
            for first in range(0, size, BATCH):
                batch = [{"text": t} for t in islice(texts, min(BATCH, size - first))]
                start = time.perf_counter()
                mem.write_many(batch)
                batches.append((len(batch), time.perf_counter() - start))
                bar.update(len(batch))
        stats = mem.stats()
    return {
        "memories": stats.memories,
        "concepts": stats.concepts,
        "batched_per_s": _rate(batches),
        "batched_per_s_last_tenth": _rate(batches[-max(1, len(batches) // 10) :]),
        "fill_rss_peak_mb": peak_rss_mb(),
    }


def _singles(target: str, size: int, singles: int) -> dict[str, Any]:
    _, texts = workload()
    seconds = []
    with Memory(target, agent_id=AGENT) as mem:
        for text in islice(texts, size, size + singles):  # new texts, after the fill's
            start = time.perf_counter()
            mem.write(text)
            seconds.append(time.perf_counter() - start)
        stats = mem.stats()
    return {
        "single_per_s": round(len(seconds) / sum(seconds)),
        "single_max_ms": round(max(seconds) * 1000, 1),
        "memories_after_singles": stats.memories,
    }


def _rate(batches: Sequence[tuple[int, float]]) -> int:
    return round(sum(n for n, _ in batches) / sum(s for _, s in batches))


def _read(target: str, queries: int) -> dict[str, Any]:
    asked, _ = workload(queries)
    start = time.perf_counter()
    with Memory(target, agent_id=AGENT) as mem:
        opened = time.perf_counter() - start
        after_open = rss_mb()
        first = _timed(lambda q: mem.read(q, k=10), asked[:1])[0][0]
        concepts = _reads(lambda q: mem.read(concepts=q.split(), k=10), asked)
        text = _reads(lambda q: mem.read(q, k=10), asked)
        spread = _reads(lambda q: mem.read(q, k=10), spread_queries(queries))
        tomorrow = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        latencies, results = _timed(lambda q: mem.read(q, k=10, as_of=tomorrow), asked)
        returned = sorted({item.id for result in results for item in result.items})
        restarted = sum(record.accessed_at is not None for record in mem.get(returned))
        day_later = {
            **_summary(latencies, results),
            "clocks_restarted": round(restarted / max(1, len(returned)), 3),
        }
    return {
        "open": {
            "open_ms": round(opened * 1000, 1),
            "rss_after_open_mb": after_open,
            "first_read_ms": round(first, 1),
        },
        "read_concepts": concepts,
        "read_text": text,
        "read_text_spread": spread,
        "read_text_day_later": day_later,
        "read_rss_peak_mb": peak_rss_mb(),
    }


def _vector(target: str, factory: EmbedderFactory, queries: int) -> dict[str, Any]:
    asked, _ = workload(queries)
    embedder = Precomputed(factory())
    start = time.perf_counter()
    with Memory(target, agent_id=AGENT, embedder=embedder) as mem:
        embedded = mem.stats().memories
        backfill = time.perf_counter() - start  # embedding every stored memory
        encode = embedder.learn(asked)
        misses = embedder.misses
        first = _timed(lambda q: mem.read(q, k=10), asked[:1])[0][0]
        reads = _reads(lambda q: mem.read(q, k=10), asked)
    return {
        "embedder": embedder.model_id,
        "vectors_per_s": round(embedded / backfill),
        "embed_query": latency(encode),
        "first_read_ms": round(first, 1),
        "read": reads,
        "query_vectors_precomputed": embedder.misses == misses,
        "rss_peak_mb": peak_rss_mb(),
    }


def _timed(call: Callable[[str], Any], asked: Sequence[str]) -> tuple[list[float], list[Any]]:
    latencies, answers = [], []
    for query in asked:
        start = time.perf_counter()
        answers.append(call(query))
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies, answers


def _reads(call: Callable[[str], Any], asked: Sequence[str]) -> dict[str, float]:
    return _summary(*_timed(call, asked))


def _summary(latencies: Sequence[float], results: Sequence[Any]) -> dict[str, float]:
    returned = [len(result.items) for result in results]
    return {**latency(latencies), "mean_items": round(statistics.fmean(returned), 2)}


class Precomputed(Embedder):
    """``inner`` with the vectors of known texts worked out beforehand (`learn`), so a
    timed read never pays for encoding its question; other texts go to ``inner``,
    counted in ``misses``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dims = inner.model_id, inner.dims
        self.batch_size, self.normalized = inner.batch_size, inner.normalized
        self.known: dict[str, Any] = {}
        self.misses = 0

    def learn(self, texts: Sequence[str]) -> list[float]:
        """Encode and keep ``texts``; each one's encoding time in milliseconds."""
        latencies = []
        for text in texts:
            start = time.perf_counter()
            self.known[text] = self.inner.embed_batch([text])[0]
            latencies.append((time.perf_counter() - start) * 1000)
        return latencies

    def embed_batch(self, texts: Sequence[str]) -> Any:
        if all(text in self.known for text in texts):
            return require_numpy().stack([self.known[text] for text in texts])
        self.misses += len(texts)
        return self.inner.embed_batch(texts)
