"""The attribution benchmark runs end to end, shrunk, and reports what it measured."""

from __future__ import annotations

import json
from pathlib import Path

from assocmem.adapters.cli import main


def test_the_attribution_bench_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "trust-attr.json"
    argv = ["bench", "trust-attribution", "--horizons", "20,60", "--reversible", "30",
            "--budget", "5", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(out.read_text())
    floor = report["attribution_floor"]
    assert floor["clean_before"] and not floor["slash_false_alarm"]
    assert floor["relabel_detected"] and floor["taint_strip_detected"]
    assert not floor["chain_intact_after_receipt_edit"] and floor["broken_at"] == 2
    budget = report["lifetime_budget"]
    assert [r["irreversible_spent"] for r in budget["drip"]] == [5, 5]
    assert [r["irreversible_unbudgeted"] for r in budget["drip"]] == [20, 60]
    assert budget["blast_capped"] and budget["good_source"]["reversible_uses"] == 30
