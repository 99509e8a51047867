"""The trust benchmark runs end to end at a tiny size and its figures hold together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

trust_bench = pytest.importorskip("assocmem_bench.trust_bench")


def test_trust_benchmark_tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trust_bench, "TARGETS", 10)
    monkeypatch.setattr(trust_bench, "HELD_OUT", 10)
    out = tmp_path / "trust.json"
    report = trust_bench.run(str(out), [400], seed=3)  # tinier: the fact outranks the poison
    assert json.loads(out.read_text()) == report
    for density in ("sparse", "dense"):
        row = report["runs"][f"400/{density}"]
        assert row["hijack_top1_influence_only"] == 0.0  # a fresh poison never earned standing
        assert row["hijack_top1_raw"] > 0.0  # the trigger does hijack an ungated read
        assert 0.0 <= row["legit_recall_top1_influence_only"] <= row["legit_recall_top1_raw"]
    sparse, dense = report["runs"]["400/sparse"], report["runs"]["400/dense"]
    assert dense["gate_would_block_frac"] < sparse["gate_would_block_frac"]
    assert report["runs"]["spoof"] == {
        "two_string_spoof_passes_default": True,
        "two_string_spoof_passes_strict": False,
        "one_key_two_strings_passes_strict": False,
        "two_distinct_keys_pass_strict": True,
    }
