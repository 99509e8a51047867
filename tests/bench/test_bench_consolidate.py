"""The consolidation benchmark runs end to end at a tiny size (the full run is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

bench = pytest.importorskip("assocmem_bench.consolidate_bench")


def _tiny_locomo(path: Path) -> Path:
    """One short conversation in LoCoMo's format (our own text)."""
    topics = ["kayak trip", "pottery class", "job interview", "garden tomatoes"]
    talk: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben",
                            "session_1_date_time": "1:56 pm on 8 May, 2023"}  # fmt: skip
    talk["session_1"] = [
        {"speaker": "Ana" if n % 2 else "Ben", "dia_id": f"D1:{n}",
         "text": f"I talked about my {topic}."}
        for n, topic in enumerate(topics, start=1)
    ]  # fmt: skip
    qa = [
        {"question": f"What about the {topic}?", "category": 4, "evidence": [f"D1:{n}"]}
        for n, topic in enumerate(topics, start=1)
    ]
    path.write_text(json.dumps([{"sample_id": "tiny-1", "conversation": talk, "qa": qa}]))
    return path


def test_benchmark_runs_end_to_end_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "consolidate.json"
    report = bench.run(
        str(out), size=400, stream_size=300, locomo_path=str(_tiny_locomo(tmp_path / "t.json"))
    )
    assert json.loads(out.read_text()) == report
    budget = report["keep_budget"]["keep 30.0%"]
    # Ranking by value keeps the cold load-bearing facts that FIFO and the access clock lose.
    assert budget["value"]["cold_kept"] > budget["fifo"]["cold_kept"]
    assert budget["value"]["value_kept"] > budget["random"]["value_kept"]
    passes = report["dream_pass"]["passes"]
    assert passes["second"]["duplicate_links"] == passes["second"]["superseded"] == 0
    assert passes["keep_half"]["archived"] > 0
    locomo = report["locomo"]
    assert set(locomo["before"]) == set(locomo["after"]) and "tiny-1" in locomo["consolidate"]
