"""The scale benchmark runs end to end, shrunk, on both backends (the real run is a benchmark)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from assocmem.testing import ToyEmbedder

scale = pytest.importorskip("assocmem_bench.scale")
Corpus = pytest.importorskip("assocmem_bench.corpus").Corpus


def test_the_workload_is_eight_zipf_words_the_same_in_every_process() -> None:
    asked, texts = scale.workload(5)
    again, more = scale.workload(5)
    assert asked == again and next(texts) == next(more)
    words = [next(texts).split() for _ in range(200)]
    assert all(len(set(w)) == scale.WORDS for w in words)
    assert all(len(q.split()) == scale.QUERY_WORDS for q in asked)
    counts: dict[str, int] = {}
    for word in (w for memory in words for w in memory):
        counts[word] = counts.get(word, 0) + 1
    assert max(counts.values()) > 10 * sorted(counts.values())[len(counts) // 2]  # Zipf's head


def test_spread_questions_ask_words_across_the_frequency_ranks_evenly() -> None:
    asked = scale.spread_queries(400)
    words = Corpus(random.Random(scale.SEED), scale.VOCABULARY).words
    rank = {word: i + 1 for i, word in enumerate(words)}
    ranks = [rank[w] for q in asked for w in q.split()]
    assert all(len(set(q.split())) == scale.QUERY_WORDS for q in asked)
    low, high = scale.SPREAD
    assert low <= min(ranks) and max(ranks) <= high
    # Evenly: as many from the commoner half of the span as from the rarer half.
    middle = (low + high) / 2
    assert 0.4 < sum(r < middle for r in ranks) / len(ranks) < 0.6
    assert asked == scale.spread_queries(400)  # the same in every process


@pytest.mark.slow
def test_scale_benchmark_smoke(db: str, tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    scale.run([200], str(out), dbs=[db], embedder=ToyEmbedder, queries=20, singles=30)
    report = json.loads(out.read_text())
    (backend,) = report["runs"]
    assert backend == ("sqlite" if db == "sqlite" else "postgresql")
    size = report["runs"][backend]["200"]
    writes = size["writes"]
    assert writes["memories"] == 200 and writes["memories_after_singles"] == 230
    assert writes["batched_per_s"] > 0 and writes["single_per_s"] > 0
    assert writes["fill_rss_peak_mb"] > 0 and size["disk_mb"] > 0
    assert size["disk_bytes_per_memory"] > 0
    split = size["disk_by_object"]
    if split or db != "sqlite":  # SQLite splits only where it was built with dbstat
        assert split["links"] > 0 and split["memories"] > 0
        assert sum(split.values()) <= size["disk_bytes_per_memory"] * 200 * 1.01
    assert size["open"]["open_ms"] > 0 and size["open"]["rss_after_open_mb"] > 0
    reads_of = ("read_concepts", "read_text", "read_text_spread", "read_text_day_later")
    for reads in (*(size[kind] for kind in reads_of), size["vector"]["read"]):
        assert 0 < reads["p50_ms"] <= reads["p95_ms"]
        assert reads["mean_items"] > 0
    assert size["read_text_day_later"]["clocks_restarted"] == 1.0  # all a day old by then
    vector = size["vector"]
    assert vector["embedder"] == ToyEmbedder().model_id
    assert vector["vectors_per_s"] > 0 and vector["embed_query"]["p50_ms"] > 0
    assert vector["query_vectors_precomputed"] is True
    assert report["environment"]["backends"][backend]["backend"] == backend


def test_an_embedder_that_cannot_load_skips_the_vector_reads_with_the_reason(
    tmp_path: Path,
) -> None:
    out = tmp_path / "scale.json"
    scale.run([50], str(out), embedder="no-such-embedder", queries=3, singles=5)
    size = json.loads(out.read_text())["runs"]["sqlite"]["50"]
    assert "unknown embedder 'no-such-embedder'" in size["vector"]["skipped"]
    assert size["read_text"]["p50_ms"] > 0
