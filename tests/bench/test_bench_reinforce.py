"""The reinforcement benchmark runs end to end and reports what the README quotes."""

from __future__ import annotations

import json
from pathlib import Path

from assocmem_bench import reinforce_bench


def test_reinforce_benchmark_smoke(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    report = reinforce_bench.run(str(out), trials=2)
    assert json.loads(out.read_text()) == report
    on, off = report["runs"]
    assert on["reinforce"] and not off["reinforce"]
    assert on["target_top1"] == 1.0 and on["weak_returned"] == 1.0
    assert on["weak_median_rank"] >= 3
    assert 0 < on["weak_mean_gain"] < on["target_mean_gain"] / 10
    assert off["value_drift"] == 0.0 and off["repeated_reads_identical"]
