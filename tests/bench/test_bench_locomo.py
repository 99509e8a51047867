"""The LoCoMo benchmark runs end to end on one conversation (the full run is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assocmem.testing import ToyEmbedder
from assocmem.vectors.embedders import register_embedder, unregister_embedder

locomo = pytest.importorskip("assocmem_bench.locomo")
pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


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


def _tiny_locomo_file(path: Path) -> Path:
    """A small conversation in LoCoMo's format (our own text), so the whole benchmark
    runs wherever the suite runs, not only beside the licensed data."""
    topics = ["kayak trip", "pottery class", "job interview", "garden tomatoes", "chess club",
              "violin lesson", "marathon training", "bakery visit"]  # fmt: skip
    talk: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    qa = []
    for session in (1, 2):
        talk[f"session_{session}_date_time"] = f"1:56 pm on {session + 7} May, 2023"
        turns = []
        for n, topic in enumerate(topics, start=1):
            speaker = "Ana" if n % 2 else "Ben"
            turns.append(
                {
                    "speaker": speaker,
                    "dia_id": f"D{session}:{n}",
                    "text": f"In session {session} I talked about my {topic}.",
                }
            )
        talk[f"session_{session}"] = turns
    for n, topic in enumerate(topics, start=1):
        qa.append(
            {
                "question": f"What happened with the {topic}?",
                "category": 1 + n % 5,
                "answer": topic,
                "evidence": [f"D1:{n}", f"D2:{n}"],
            }
        )
    qa.append(
        {
            "question": "The kayak trip and the pottery class?",
            "category": 4,
            "evidence": ["D1:1 D1:02"],
        }
    )
    # sharing no content word with its evidence ("In session 1 I talked about my kayak trip.")
    qa.append({"question": "Paddling down a river?", "category": 4, "evidence": ["D1:1"]})
    qa.append({"question": "Nothing matches this", "category": 2, "evidence": ["D9:9"]})
    path.write_text(json.dumps([{"sample_id": "tiny-1", "conversation": talk, "qa": qa}]))
    return path


@pytest.mark.slow
def test_benchmark_runs_end_to_end_on_a_small_file(tmp_path: Path) -> None:
    register_embedder("toy", ToyEmbedder)
    try:
        out = tmp_path / "locomo.json"
        data = _tiny_locomo_file(tmp_path / "tiny.json")
        locomo.run(str(data), str(out), embedder_name="toy")
    finally:
        unregister_embedder("toy")
    report = json.loads(out.read_text())
    # "D1:1 D1:02": one entry split in two, one id with a zero-padded turn
    assert report["evidence"] == {
        "repaired_ids": 2, "unmatched_ids_dropped": 1, "questions_without_evidence_skipped": 1
    }  # fmt: skip
    assert set(report["profiles"]) == {"conversation", "general"}  # both by default
    for table in _tables(report):
        overall = table["overall(1-4)"]
        assert overall["n"] == 9  # 10 scored questions, one of them adversarial (category 5)
        assert 0.0 <= overall["recall@5"] <= overall["recall@10"] <= overall["recall@20"] <= 1.0
        assert table["no shared words"]["n"] == 1  # the river question, and only it
    # each other question names its topic, which two turns carry: words alone find them
    by_topic = ["1 multi-hop", "2 temporal", "3 open-domain"]
    assert all(report["bm25"][row]["recall@5"] == 1.0 for row in by_topic)
    assert report["bm25"]["no shared words"]["recall@20"] == 0.0
    for section in report["profiles"].values():
        assert all(section["assocmem"][row]["recall@5"] == 1.0 for row in by_topic)
        assert section["timings"]["query_p50_ms"] > 0


def _tables(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every system's table: assocmem's under each profile, then the baselines'."""
    ours = [section["assocmem"] for section in report["profiles"].values()]
    return ours + [report[name] for name in ("bm25", "dense", "hybrid")]


@pytest.mark.slow
def test_the_profiles_asked_for_are_the_ones_reported(tmp_path: Path) -> None:
    register_embedder("toy", ToyEmbedder)
    try:
        out = tmp_path / "locomo.json"
        data = _tiny_locomo_file(tmp_path / "tiny.json")
        locomo.run(str(data), str(out), embedder_name="toy", profiles=["general"],
                   baselines=False)  # fmt: skip
    finally:
        unregister_embedder("toy")
    report = json.loads(out.read_text())
    assert list(report["profiles"]) == ["general"]
    assert "bm25" not in report
    assert list(report["per_conversation"]["tiny-1"]["profiles"]) == ["general"]


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
    for table in _tables(report):
        overall = table["overall(1-4)"]
        assert overall["n"] > 100
        assert 0.0 <= overall["recall@5"] <= overall["recall@10"] <= overall["recall@20"] <= 1.0
    assert set(report["per_conversation"]) == {"conv-26"}
    assert report["profiles"]["conversation"]["timings"]["query_p50_ms"] > 0
    assert report["environment"]["embedder"] == "toy-hash-64"


@pytest.mark.parametrize(("setting", "drawn"), [("1", True), ("0", False)])
def test_the_run_draws_its_bar_on_stderr_only_when_asked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setting: str,
    drawn: bool,
) -> None:
    monkeypatch.setenv("ASSOCMEM_PROGRESS", setting)
    register_embedder("toy", ToyEmbedder)
    try:
        data = _tiny_locomo_file(tmp_path / "tiny.json")
        locomo.run(str(data), str(tmp_path / "out.json"), embedder_name="toy",
                   profiles=["general"], baselines=False)  # fmt: skip
    finally:
        unregister_embedder("toy")
    captured = capsys.readouterr()
    assert captured.out == ""  # the report goes to its file; stdout is the CLI's
    assert ("locomo" in captured.err and "10/10" in captured.err) is drawn
    assert (captured.err == "") is not drawn


MEANING = Path(locomo.__file__).parent / "data" / "meaning.json"


@pytest.mark.model
@pytest.mark.slow
def test_a_read_finds_by_meaning_at_least_as_well_as_meaning_alone(tmp_path: Path) -> None:
    """Remarks that share no content word with the turn they refer to (data/MEANING.md),
    read with the default embedder: the read is not worse than its own semantic arm
    alone, and far better than fusing words and meaning by rank, which the everyday
    words the remarks share with other turns drag down."""
    report = locomo.run(str(MEANING), str(tmp_path / "meaning.json"))
    dense = report["dense"]["no shared words"]
    hybrid = report["hybrid"]["no shared words"]
    assert dense["n"] == 142
    for section in report["profiles"].values():
        ours = section["assocmem"]["no shared words"]
        assert ours["recall@10"] >= dense["recall@10"]
        assert ours["recall@10"] >= 1.5 * hybrid["recall@10"]
