"""The LoCoMo benchmark runs end to end on one conversation (the full run is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assocmem.embedders import register_embedder, unregister_embedder
from assocmem.testing import ToyEmbedder

locomo = pytest.importorskip("assocmem_bench.locomo")
pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"


@pytest.mark.parametrize(
    ("raw", "ids", "repaired"),
    [
        (["D1:3"], ["D1:3"], 0),
        (["D8:6; D9:17"], ["D8:6", "D9:17"], 1),
        (["D1:3 D1:4"], ["D1:3", "D1:4"], 1),
        (["D:11:26"], ["D11:26"], 1),
        (["D30:05"], ["D30:5"], 1),
    ],
)
def test_evidence_ids_are_repaired_as_documented(
    raw: list[str], ids: list[str], repaired: int
) -> None:
    assert locomo.repair_evidence(raw) == (ids, repaired)


def test_session_dates_parse() -> None:
    assert (
        locomo.parse_session_date("1:56 pm on 8 May, 2023").isoformat()
        == "2023-05-08T13:56:00+00:00"
    )


@pytest.mark.slow
@pytest.mark.skipif(not DATA.exists(), reason="LoCoMo data is provided in ../shared only")
def test_benchmark_smoke_on_one_conversation(tmp_path: Path) -> None:
    register_embedder("toy", ToyEmbedder)
    try:
        out = tmp_path / "locomo.json"
        locomo.run(str(DATA), str(out), conversations=["conv-26"], embedder_name="toy")
    finally:
        unregister_embedder("toy")
    report = json.loads(out.read_text())
    for system in ("assocmem", "bm25", "dense", "hybrid"):
        overall = report[system]["overall(1-4)"]
        assert overall["n"] > 100
        assert 0.0 <= overall["recall@5"] <= overall["recall@10"] <= overall["recall@20"] <= 1.0
    assert set(report["per_conversation"]) == {"conv-26"}
    assert report["timings"]["query_p50_ms"] > 0
    assert report["environment"]["embedder"] == "toy-hash-64"
