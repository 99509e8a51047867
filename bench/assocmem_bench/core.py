"""Core benchmark: write throughput and concept-arm read latency at scale.

For each size N: fill a fresh store to N memories with `write_many` (fill
writes/s), then twenty 1,000-memory `write_many` batches back to back (batched
writes/s at N), two 10,000-memory batches, and ten rounds of 1,000 single
`write` calls (single writes/s at N); rate some answers so learned links exist,
and time concept reads and question reads (no embedder).
Write rates are sustained: all memories written over all the time taken, so the
periodic folds of pending link counts (links/pending_links.py, ~every 6,000
memories) and WAL checkpoints are paid inside the figure; the median round is
reported beside it.
Concepts come from the Zipf-weighted synthetic vocabulary of `corpus`, so a few
concepts are in a large share of memories and the associative fan-out is
stressed the way real notes stress it.
"""

from __future__ import annotations

import itertools
import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import bar as progress_bar

from .corpus import Corpus
from .measure import environment, latency
from .stores import Stores, open_stores

BATCH = 1_000
# Rounds written on top of the filled store: enough memories (20,000 batched,
# 10,000 single) to span several folds and checkpoints, so their cost is counted.
ROUNDS = 20
SINGLE_ROUNDS = 10
SINGLE_WRITES = 1_000
READS = 1_000
FEEDBACKS = 300
# Single-id forgets timed last: forget erases bytes (index optimize, WAL truncation,
# VACUUM on PostgreSQL), so its cost grows with the store.
FORGETS = 20
SEED = 7


def written_on_top() -> int:
    """Memories each size gets on top of its fill: the batched, large and single rounds."""
    return ROUNDS * BATCH + 2 * 10 * BATCH + SINGLE_ROUNDS * SINGLE_WRITES


def steps(size: int) -> int:
    """The progress steps of one size: each memory written, then each read or rating
    call (the feedback reads and their ratings, three timed passes), then each forget."""
    return size + written_on_top() + 2 * FEEDBACKS + 3 * READS + FORGETS


# What `written_on_top` gives at the constants above (for help texts, read at import).
WRITTEN_ON_TOP = written_on_top()


def _timed_reads(mem: Memory, queries: list[list[str]], hops: int | None) -> dict[str, float]:
    """Concept reads (``hops`` given) or question reads (``hops`` None) of the queries."""
    latencies, returned = [], []
    for query in queries:
        start = time.perf_counter()
        if hops is None:
            result = mem.read("what about " + " and ".join(query) + "?", k=10)
        else:
            result = mem.read(concepts=query, k=10, hops=hops)
        latencies.append((time.perf_counter() - start) * 1000)
        returned.append(len(result.items))
    return {**latency(latencies), "mean_items": round(statistics.fmean(returned), 2)}


def _pending_copy(mem: Memory) -> dict[str, float] | None:
    """Pending link rows at the end of the run and the memory a connection's copy of
    them takes (traced while it is rebuilt); None where changes are not buffered."""
    store = mem._store  # the store's own copy: measured, not part of the public API
    if not getattr(store, "buffers_link_counts", False):
        return None
    store._pending_links.clear()
    tracemalloc.start()
    try:
        with store.snapshot():
            copy = store._pending()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    first, last = copy.first, copy.last
    rows = last - first + 1 if first is not None else 0
    return {"rows": rows, "mb": round(size / 2**20, 3)}


def run_size(size: int, stores: Stores) -> dict[str, Any]:
    """Fill a store to ``size`` memories and measure it."""
    with progress_bar(steps(size), desc=f"core {size} on {stores.backend}", unit="op") as bar:
        return _measure(size, stores, bar)


def _measure(size: int, stores: Stores, bar: Any) -> dict[str, Any]:
    """`run_size`'s work, advancing ``bar`` by `steps`; timed spans never include it
    (its update is a counter, drawn at most twice a second)."""
    rng = random.Random(SEED)
    corpus = Corpus(rng)
    target = stores.new(f"core-{size}")
    with Memory(target, agent_id="bench") as mem:
        start = time.perf_counter()
        for first in range(0, size, BATCH):
            batch = [corpus.memory(i) for i in range(first, min(size, first + BATCH))]
            mem.write_many(batch)
            bar.update(len(batch))
        fill = size / (time.perf_counter() - start)

        batched, single, index = [], [], size
        for _ in range(ROUNDS):  # sustained batched ingest: batches back to back
            batch = [corpus.memory(index + i) for i in range(BATCH)]
            index += BATCH
            start = time.perf_counter()
            mem.write_many(batch)
            batched.append(time.perf_counter() - start)
            bar.update(BATCH)
        large = []
        for _ in range(2):  # and batches ten times larger: fewer, larger commits
            batch = [corpus.memory(index + i) for i in range(10 * BATCH)]
            index += 10 * BATCH
            start = time.perf_counter()
            mem.write_many(batch)
            large.append(10 * BATCH / (time.perf_counter() - start))
            bar.update(10 * BATCH)
        slowest = 0.0  # the single write that paid a fold, if one fell in these rounds
        for _ in range(SINGLE_ROUNDS):  # then single writes, one transaction each
            singles = [corpus.memory(index + i) for i in range(SINGLE_WRITES)]
            index += SINGLE_WRITES
            start = time.perf_counter()
            for item in singles:
                began = time.perf_counter()
                mem.write(item["text"], concepts=item["concepts"])
                slowest = max(slowest, time.perf_counter() - began)
            single.append(time.perf_counter() - start)
            bar.update(SINGLE_WRITES)

        queries = [corpus.draw(rng.choice((1, 1, 2))) for _ in range(READS)]
        for query in queries[:FEEDBACKS]:  # teach some links, as agents would
            items = mem.read(concepts=query, k=3).items
            if items:
                mem.feedback([items[0].id], 1.0, query_concepts=query)
            bar.update(2)
        reads = {}
        for hops in (1, 2):
            reads[f"hops_{hops}"] = _timed_reads(mem, queries, hops)
            bar.update(READS)
        text_reads = _timed_reads(mem, queries, None)
        bar.update(READS)
        stats = mem.stats()
        pending = _pending_copy(mem)
        forgets = []
        for record in list(itertools.islice(mem.export(), FORGETS)):
            start = time.perf_counter()
            mem.forget([record.id])
            forgets.append((time.perf_counter() - start) * 1000)
            bar.update(1)
    return {
        "memories": stats.memories,
        "concepts": stats.concepts,
        "links": stats.links,
        "writes_per_s_fill": round(fill),
        "writes_per_s_batched": round(ROUNDS * BATCH / sum(batched)),
        "writes_per_s_batched_median_round": round(BATCH / statistics.median(batched)),
        "writes_per_s_batched_10000": round(statistics.mean(large)),
        "writes_per_s_single": round(SINGLE_ROUNDS * SINGLE_WRITES / sum(single)),
        "writes_per_s_single_median_round": round(SINGLE_WRITES / statistics.median(single)),
        "write_single_max_ms": round(slowest * 1000, 1),
        "pending_links_copy": pending,
        "read_concepts": reads,
        "read_text_no_embedder": text_reads,
        "store_mb": round(stores.size_mb(target), 1),
        "forget_one_ms": {
            "p50": round(statistics.median(forgets), 2) if forgets else None,
            "max": round(max(forgets), 2) if forgets else None,
        },
    }


def run(sizes: Sequence[int], out: str, db: str = "sqlite") -> dict[str, Any]:
    """Measure every size on the backend ``db`` names (see `stores`) and write the JSON
    report to ``out``."""
    with open_stores(db) as stores:
        results = {}
        for size in sizes:  # one bar per size, over what it writes and reads
            print(
                f"core benchmark: {size:,} memories on {stores.backend}, then "
                f"{written_on_top():,} more written on top…",
                file=sys.stderr,
            )
            results[str(size)] = run_size(size, stores)
        report = {
            "benchmark": "core",
            "environment": environment(**stores.describe()),
            "sizes": results,
        }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
