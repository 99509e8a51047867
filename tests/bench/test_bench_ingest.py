"""The ingest benchmark runs end to end, shrunk, and its raw side stores what write_many stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ingest = pytest.importorskip("assocmem_bench.ingest")


def test_the_report_times_both_sides_and_profiles_write_many(tmp_path: Path) -> None:
    out = tmp_path / "ingest.json"
    ingest.run(str(out), memories=120, batch=40, rounds=2)
    report = json.loads(out.read_text())
    assert (report["memories"], report["batch"], report["rounds"]) == (120, 40, 2)
    for side in ("write_many", "raw"):
        assert report[side]["per_s"] > 0 and len(report[side]["seconds"]) == 2
        assert len(report[side]["cpu_seconds"]) == 2
    assert report["ratio"] == pytest.approx(
        report["write_many"]["per_s"] / report["raw"]["per_s"], abs=0.01
    )
    assert report["cpu_ratio"] > 0
    rows = report["raw"]["rows"]
    assert rows["memories"]["inserted"] == 120 and rows["scopes"]["inserted"] == 1
    assert rows["memory_concepts"]["inserted"] >= 120 and rows["concepts"]["inserted"] > 8
    assert report["raw_rows_differing"] == {}
    profile = report["write_many_profile"]
    assert 0 < len(profile) <= ingest.TOP_FUNCTIONS
    assert any("write/validate.py" in row["function"] for row in profile)
    assert all(row["calls"] > 0 and row["own_s"] >= 0 for row in profile)
    assert report["environment"]["connection"]["synchronous"] in (0, 1, 2, 3)


def test_the_raw_store_holds_the_same_rows_and_a_missing_row_shows(tmp_path: Path) -> None:
    written = ingest.items(90)
    changes, pragmas = ingest.capture(tmp_path / "captured.db", written, 30)
    assert len(changes) == 3 and all("memories" in batch for batch in changes)
    ingest.replay(tmp_path / "raw.db", changes, pragmas)
    assert ingest.differences(tmp_path / "captured.db", tmp_path / "raw.db", changes) == {}

    changes[1]["memories"].inserted.pop()  # one memory short: its row and its text's index
    ingest.replay(tmp_path / "short.db", changes, pragmas)
    differing = ingest.differences(tmp_path / "captured.db", tmp_path / "short.db", changes)
    assert differing["memories"] == 1 and "memories_fts" in differing
    assert "lexical_layers" in differing  # the trigger counted one memory less
