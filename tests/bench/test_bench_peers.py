"""The peers benchmark runs each installed peer beside assocmem, shrunk, on both corpora:
the syllable words and natural text from a LoCoMo-format file; every result names its
corpus and size, and a missing peer or file is skipped with the reason the report gives."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

peers = pytest.importorskip("assocmem_bench.peers")

from assocmem.adapters.cli import main  # noqa: E402

# A peer that cannot share this environment (cpersona pins mcp<2) is found through
# ASSOCMEM_PEER_PYTHONS="cpersona=/its/venv/bin/python", as `--peer-python` gives it.
PYTHONS = dict(
    pair.split("=", 1) for pair in os.environ.get("ASSOCMEM_PEER_PYTHONS", "").split(",") if pair
)


def _talk(tmp_path: Path) -> Path:
    """A LoCoMo-format file of two short conversations, 7 turns and 4 questions in all."""

    def turn(speaker: str, dia_id: str, text: str, **extra: str) -> dict[str, str]:
        return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}

    first = {
        "sample_id": "one",
        "conversation": {
            "speaker_a": "Ada", "speaker_b": "Ben",
            # sessions out of order in the file: read by number
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_2": [turn("Ben", "D2:1", "The garden needs water before the trip.")],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                turn("Ada", "D1:1", "I painted the fence blue yesterday."),
                turn("Ben", "D1:2", "Here is the dog at the beach.", blip_caption="a dog on sand"),
                turn("Ada", "D1:3", "We should plan the trip to the mountains."),
            ],
        },
        "qa": [
            {"question": "What colour is the fence?", "category": 4, "evidence": ["D1:1"]},
            {"question": "Where did the dog go?", "category": 4, "evidence": ["D1:2"]},
        ],
    }  # fmt: skip
    second = {
        "sample_id": "two",
        "conversation": {
            "speaker_a": "Cy", "speaker_b": "Di",
            "session_1_date_time": "9:00 am on 1 June, 2023",
            "session_1": [
                turn("Cy", "D1:1", "My new job starts on Monday."),
                turn("Di", "D1:2", "Congratulations, what will you do there?"),
                turn("Cy", "D1:3", "Mostly bookkeeping for a bakery."),
            ],
        },
        "qa": [
            {"question": "When does the job start?", "category": 2, "evidence": ["D1:1"]},
            {"question": "Who employs Cy?", "category": 1, "evidence": ["D1:3"]},
        ],
    }  # fmt: skip
    path = tmp_path / "talk.json"
    path.write_text(json.dumps([first, second]), encoding="utf-8")
    return path


def _named(result: dict[str, Any], corpus: str, memories: int) -> None:
    assert (result["corpus"], result["memories"]) == (corpus, memories)


def test_the_natural_corpus_is_the_files_turns_as_the_locomo_bench_writes_them(
    tmp_path: Path,
) -> None:
    talk = str(_talk(tmp_path))
    load = peers.natural_workload(talk, size=3, queries=10)
    assert load["texts"] == [
        "Ada: I painted the fence blue yesterday.",
        "Ben: Here is the dog at the beach. [shares a dog on sand]",
        "Ada: We should plan the trip to the mountains.",
    ]  # the first 3 turns, session 1 before session 2
    # only the questions of the conversations written from, all of them when fewer than asked
    assert sorted(load["queries"]) == ["What colour is the fence?", "Where did the dog go?"]
    whole = peers.natural_workload(talk, size=1_000, queries=3)
    assert len(whole["texts"]) == 7 and whole["texts"][3].startswith("Ben: The garden")
    assert whole == peers.natural_workload(talk, size=1_000, queries=3)  # the seed's sample
    assert len(whole["queries"]) == 3 and len(set(whole["queries"])) == 3


def test_a_file_with_fewer_turns_than_asked_is_written_whole_and_said_so(tmp_path: Path) -> None:
    loads = peers.corpus_loads(["natural"], 100, 5, str(_talk(tmp_path)))
    entry = loads["natural"]
    assert len(entry["load"]["texts"]) == 7  # nothing added
    assert "7 turns, fewer than the 100 asked for" in entry["about"]["short"]
    assert entry["about"]["data"] == "talk.json"  # the file's name, never its text


@pytest.mark.parametrize("text", ["not json", "[{}]", "[]"])
def test_a_file_that_is_not_locomo_is_refused_by_flag(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit, match=f"--text-data {bad}"):
        peers.natural_workload(str(bad), 10)


@pytest.mark.slow
@pytest.mark.parametrize("peer", list(peers.PEERS))
def test_each_installed_peer_runs_beside_assocmem_on_both_corpora(
    peer: str, tmp_path: Path
) -> None:
    out = tmp_path / "peers.json"
    report = peers.run(
        str(out), size=100, rounds=2, peers=[peer], pythons=PYTHONS, queries=10,
        text_data=str(_talk(tmp_path)),
    )  # fmt: skip
    assert json.loads(out.read_text()) == report
    assert list(report["corpora"]) == ["zipf-syllables", "natural"]
    for corpus, memories in (("zipf-syllables", 100), ("natural", 7)):
        section = report["corpora"][corpus]
        _named(section, corpus, memories)
        result = section["peers"][peer]
        _named(result, corpus, memories)
        if result.get("skipped", "").startswith("not installed"):
            pytest.skip(result["skipped"])
        assert "skipped" not in result, result.get("skipped")
        for side in ("assocmem", "peer"):
            runs = result[side]["rounds"]
            assert len(runs) == 2
            for run in runs:
                assert run["writes_per_s"] > 0 and 0 < run["p50_ms"] <= run["p95_ms"]
                assert run["disk_bytes_per_memory"] > 0 and run["mean_returned"] > 0
        assert result["peer"]["version"]
        # the order alternates, and each pair is named by its corpus and size
        assert [pair["first"] for pair in result["pairs"]] == ["assocmem", peer]
        for pair in result["pairs"]:
            _named(pair, corpus, memories)
        ratios = result["ratio_assocmem_over_peer"]
        assert set(ratios) == {"writes_per_s", "p50_ms", "p95_ms", "disk_bytes_per_memory"}
        assert all(ratio > 0 for ratio in ratios.values())
    assert "natural" in json.dumps(report) and "fence" not in out.read_text()
    rows = peers.lines(report)
    assert rows[1].startswith(f"zipf-syllables (100 memories) {peer}") and "x)" in rows[1]
    assert "fewer than the 100 asked for" in rows[2]
    assert rows[3].startswith(f"natural (7 memories) {peer}")


def test_a_peer_that_cannot_run_is_skipped_with_the_reason_on_each_corpus(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "no-such-python")
    report = peers.run(
        str(tmp_path / "p.json"), size=10, rounds=1, peers=["hebbmem"],
        pythons={"hebbmem": missing}, queries=2, text_data=str(_talk(tmp_path)),
    )  # fmt: skip
    for corpus, memories in (("zipf-syllables", 10), ("natural", 7)):
        result = report["corpora"][corpus]["peers"]["hebbmem"]
        _named(result, corpus, memories)
        assert missing in result["skipped"]
    assert sum("hebbmem" in row and "skipped" in row for row in peers.lines(report)) == 2


def test_without_a_text_file_the_natural_corpus_is_skipped_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    argv = ["bench", "peers", "--size", "10", "--rounds", "1", "--queries", "2",
            "--peers", "hebbmem", "--peer-python", f"hebbmem={tmp_path / 'none'}",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["corpora"]["natural"] == {
        "corpus": "natural",
        "memories": 0,
        "skipped": "no --text-data given (a LoCoMo-format JSON file)",
    }
    assert "natural (0 memories) skipped: no --text-data given" in capsys.readouterr().out
    command = report["run"]["command"]  # both corpora are the default
    assert "--corpora" not in command and "--text-data" not in command


def test_one_corpus_can_be_run_alone(tmp_path: Path) -> None:
    report = peers.run(
        str(tmp_path / "p.json"), size=10, rounds=1, peers=["hebbmem"],
        pythons={"hebbmem": str(tmp_path / "none")}, queries=2, corpora=["natural"],
        text_data=str(_talk(tmp_path)),
    )  # fmt: skip
    assert list(report["corpora"]) == ["natural"]


@pytest.mark.parametrize(
    ("options", "refusal"),
    [({"peers": ["nobody"]}, "unknown peers: nobody"),
     ({"corpora": ["poetry"]}, "unknown corpora: poetry")],
)  # fmt: skip
def test_an_unknown_peer_or_corpus_is_refused(
    tmp_path: Path, options: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(SystemExit, match=refusal):
        peers.run(str(tmp_path / "p.json"), size=10, **options)
